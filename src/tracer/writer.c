/* writer.c - the writer thread: merges thread rings in time order, encodes, compresses, appends chunks */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../common/varint.h"
#include "../format/builder.h"
#include "../format/encoder.h"
#include "tracer.h"

/*
 * Raw bytes that make a chunk worth compressing. 2 MiB rather than 1: a
 * third fewer zstd frames and tables made python3's trace 3.4% and
 * sqlite3's 1.1% smaller, at no cost measured in churning programs.
 */
#define HS_CHUNK_TARGET (2u << 20)
/*
 * A chunk is compressed after the pass that filled it, once the rings'
 * tails have moved: compressing 1 MiB takes about as long as the program
 * takes to fill a ring, so compressing in the middle of a pass stalled it.
 * Within a pass, only at this size (the rings of many threads at once),
 * which must stay at most a stream's room in the builder (half of
 * HS_CHUNK_MAX_RAW): a type byte comes with every event and no field
 * takes more than 10 bytes, so no stream then holds more than 10/11 of
 * the chunk.
 */
#define HS_CHUNK_IN_PASS (2 * HS_CHUNK_TARGET)
_Static_assert(HS_CHUNK_IN_PASS <= HS_CHUNK_MAX_RAW / 2, "a pass's chunk must fit the builder's streams");
/*
 * A pass asks the chunk's size (a sum over its streams) every this many
 * events: it then passes HS_CHUNK_IN_PASS by at most 64 events of under
 * 100 bytes each, far within a stream's room.
 */
#define SIZE_EVERY 64
#define HS_FLUSH_NS (100ull * 1000 * 1000)  /* a partial chunk is written at least this often */
#define HS_TICK_NS (10ull * 1000 * 1000)    /* rss sampling period */
#define HS_HOLD_NS (200ull * 1000)          /* events younger than this may still be overtaken */

static struct hs_encoder *enc;
static struct hs_builder *chunk;
static uint64_t chunk_since;    /* when the chunk being built was last empty */
static int fd = -1, statm_fd = -1;
static dev_t file_dev;
static ino_t file_ino;
static dev_t statm_dev;
static ino_t statm_ino;
static char file_path[4096];
/* The tracer stopped itself (hs_disable): why, for the writer's last records (write_last). */
static _Atomic(const char *) disabled_why;
static int disabled_done;
static int write_errno;         /* why write_all failed */
#define HS_RSS_HEARTBEAT_NS (1000ull * 1000 * 1000)
static uint64_t rss_last = UINT64_MAX, rss_last_ns; /* the RSS last written, and when (emit_rss) */
static int write_failed;        /* a chunk was lost: nothing but the last records may follow (take_meta) */
static int chunks_since_totals;

static uint64_t hold_ticks;

/*
 * While the trace is written, an exclusive flock on it tells readers that
 * its process runs (hs_file_being_written): else a trace without its END
 * yet would read as one of a killed process. Advisory, on our own
 * descriptor: the program never sees it. It goes with the last descriptor
 * of the file, at exit or exec.
 */
static void mark_writing(int f)
{
	int e = errno;

	/* a pipe or a file system without locks refuses: the trace then reads as before, without the mark */
	syscall(SYS_flock, f, LOCK_EX | LOCK_NB);
	errno = e;
}

/* The trace's descriptor, reopened by path if the program took its number; *st is the file's. */
static int ensure_fd(struct stat *st)
{
	if (fd >= 0 && fstat(fd, st) == 0 && st->st_dev == file_dev && st->st_ino == file_ino)
		return 0;
	fd = (int)syscall(SYS_openat, AT_FDCWD, file_path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -1;
	fd = hs_fd_move_high(fd);
	mark_writing(fd);
	return fstat(fd, st);
}

/*
 * Appends n bytes whole, or leaves the file as it was. A write that starts
 * at the file size limit (ulimit -f, systemd's LimitFSIZE) raises SIGXFSZ
 * at the writing thread, which kills the program: we never make one, and stop
 * tracing instead. A chunk cut short by a full disk is cut off again, so
 * the trace still ends at a whole chunk and its last records can follow.
 */
static int write_all(const void *p, size_t n)
{
	const uint8_t *b = p;
	struct rlimit rl;
	struct stat st;
	off_t start;
	int rc = 0;
	uint64_t pipe_sig = 1ull << (SIGPIPE - 1), old_mask = 0, pending = 0;

	if (ensure_fd(&st) < 0) {
		write_errno = errno;
		return -1;
	}
	start = S_ISREG(st.st_mode) ? st.st_size : -1;
	/* deleted while we write: no one can read what follows, and the program would pay for it all the same */
	if (start >= 0 && st.st_nlink == 0) {
		write_errno = EIDRM;
		return -1;
	}
	if (start >= 0 && getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (uint64_t)start + n > (uint64_t)rl.rlim_cur) {
		write_errno = EFBIG;
		return -1;
	}
	/*
	 * Into a pipe or a socket whose reader went away, a write raises
	 * SIGPIPE at the writing thread: at exit that was the program's, and
	 * it died of it (exit 141). Blocked for the write, and taken back if
	 * the write raised it (raw calls: sigtimedwait is a cancellation point).
	 */
	if (start < 0) {
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, &pipe_sig, &old_mask, sizeof(pipe_sig));
		syscall(SYS_rt_sigpending, &pending, sizeof(pending));
	}
	while (n) {
		ssize_t w = syscall(SYS_write, fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			write_errno = w < 0 ? errno : ENOSPC;
			/* the offset too: a later write at the old one would leave a hole of zeros */
			if (start >= 0 && syscall(SYS_ftruncate, fd, start) == 0)
				syscall(SYS_lseek, fd, start, SEEK_SET);
			rc = -1;
			break;
		}
		b += w;
		n -= (size_t)w;
	}
	if (start < 0) {
		struct timespec none = { 0, 0 };
		if (rc < 0 && write_errno == EPIPE && !(pending & pipe_sig))
			syscall(SYS_rt_sigtimedwait, &pipe_sig, NULL, &none, sizeof(pipe_sig));
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old_mask, NULL, sizeof(pipe_sig));
	}
	return rc;
}

/* Why the trace could not be written, as hs_disable says it (and the trace's DISABLED record). */
static const char *write_failure(void)
{
	switch (write_errno) {
	case ENOSPC:
	case EDQUOT:
		return "the disk that holds the trace is full; tracing stopped (the trace reads up to here)";
	case EFBIG:
		return "the trace reached the file size limit (ulimit -f); tracing stopped (the trace reads up to here)";
	case EIDRM:
		return "the trace file was deleted; tracing stopped";
	case EPIPE:
		return "the reader of the trace's pipe went away; tracing stopped";
	default:
		return "cannot write the trace file; tracing stopped (the trace reads up to here)";
	}
}

static void take_meta(void);

/* Between two pieces of a chunk's compression, as a pass would: the threads' runs of stamps stay short. */
static void end_epoch(void *arg)
{
	(void)arg;
	hs_stamp_epoch_end(1);
}

/* Compresses and appends the chunk; when that fails, tracing stops (write_last still tries its last records). */
static void put_chunk(void)
{
	const void *c;
	size_t n;
	int rc, runs = atomic_load_explicit(&hs_g.stamp_epoch, memory_order_relaxed) & 1;

	/*
	 * Compressing takes milliseconds, when no pass ends the epoch: it ends
	 * one between every 128 KiB of input. Without runs meanwhile, every
	 * stamp was fresh: 0.77M of the 20M events of 10M pairs churned in
	 * one thread came while the writer compressed. Writing may block: no
	 * runs then.
	 */
	hs_stamp_epoch_end(runs);
	hs_encoder_set_pause(enc, runs ? end_epoch : NULL, NULL);
	rc = hs_builder_flush(chunk, enc, &c, &n);
	hs_stamp_epoch_end(0);
	if (rc < 0) {
		hs_disable("cannot compress a chunk of the trace; tracing stopped");
	} else if (write_all(c, n) < 0) {
		write_failed = 1;
		hs_disable(write_failure());
	}
	chunks_since_totals++;
	if (runs)
		hs_stamp_epoch_end(1);
}

static void write_chunk(void)
{
	if (!hs_builder_size(chunk))
		return;
	/* once a chunk was lost, later ones could name its stacks: only the last records follow it */
	if (write_failed)
		hs_builder_clear(chunk);
	else
		put_chunk();
}

static void expand_path(char *out, size_t cap, const char *tmpl, pid_t pid)
{
	char exe[4096], num[24];
	long n = syscall(SYS_readlink, "/proc/self/exe", exe, sizeof(exe) - 1);
	const char *base = exe, *s;
	size_t o = 0;

	exe[n > 0 ? n : 0] = 0;
	for (s = exe; *s; s++)
		if (*s == '/')
			base = s + 1;
	hs_u64_to_str(num, (uint64_t)pid);
	for (s = tmpl; *s && o < cap - 1; s++) {
		const char *ins = NULL;
		if (s[0] == '%' && s[1] == 'p')
			ins = num;
		else if (s[0] == '%' && s[1] == 'e')
			ins = base;
		if (ins) {
			while (*ins && o < cap - 1)
				out[o++] = *ins++;
			s++;
		} else {
			out[o++] = *s;
		}
	}
	out[o] = 0;
}

static void emit_process(void)
{
	static uint8_t rec[65536];
	char buf[32768], exe[4096];
	uint8_t *p = rec;
	long n;
	int cfd, argc = 0;

	n = syscall(SYS_readlink, "/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	cfd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	n = cfd >= 0 ? syscall(SYS_read, cfd, buf, sizeof(buf)) : 0;
	if (cfd >= 0)
		syscall(SYS_close, cfd);
	if (n < 0)
		n = 0;
	*p++ = HS_REC_PROCESS;
	p = hs_varint_put(p, (uint64_t)hs_g.pid);
	p = hs_varint_put(p, (uint64_t)getppid());
	p = hs_varint_put(p, strlen(exe));
	memcpy(p, exe, strlen(exe));
	p += strlen(exe);
	for (long i = 0; i < n; i++)
		argc += buf[i] == 0;
	p = hs_varint_put(p, (uint64_t)argc);
	for (long i = 0; i < n;) {
		size_t l = strlen(buf + i);
		p = hs_varint_put(p, l);
		memcpy(p, buf + i, l);
		p += l;
		i += (long)l + 1;
	}
	hs_meta_append(rec, (size_t)(p - rec));
}

int hs_writer_open(void)
{
	uint8_t hdr[HS_FILE_HEADER_SIZE];
	struct timespec rt;
	struct stat st;
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_TRUNC;

	expand_path(file_path, sizeof(file_path), hs_g.cfg.output, hs_g.pid);
	if (hs_g.cfg.is_child) {
		/* children never overwrite the root's trace, nor an earlier image of the same pid */
		char base[4096], num[24];
		memcpy(base, file_path, sizeof(base));
		if (!strstr(hs_g.cfg.output, "%p")) {
			hs_u64_to_str(num, (uint64_t)hs_g.pid);
			hs_strlcat(base, ".", sizeof(base));
			hs_strlcat(base, num, sizeof(base));
		}
		memcpy(file_path, base, sizeof(base));
		flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_EXCL;
		for (unsigned k = 1; k < 1000; k++) {
			fd = (int)syscall(SYS_openat, AT_FDCWD, file_path, flags, 0644);
			if (fd >= 0 || errno != EEXIST)
				break;
			memcpy(file_path, base, sizeof(base));
			hs_u64_to_str(num, k);
			hs_strlcat(file_path, ".", sizeof(file_path));
			hs_strlcat(file_path, num, sizeof(file_path));
		}
	} else {
		fd = (int)syscall(SYS_openat, AT_FDCWD, file_path, flags, 0644);
	}
	if (fd < 0) {
		char then[160] = "";
		hs_strlcat(then, hs_errno_text(errno), sizeof(then));
		hs_strlcat(then, "; set HEAPSCOPE_OUTPUT to a path this process can write to; tracing disabled", sizeof(then));
		hs_log("cannot create the trace file", file_path, then);
		return -1;
	}
	fd = hs_fd_move_high(fd);
	mark_writing(fd);
	if (fstat(fd, &st) == 0) {
		file_dev = st.st_dev;
		file_ino = st.st_ino;
	}
	atomic_store(&disabled_why, NULL);
	disabled_done = 0;
	rss_last = UINT64_MAX;
	/* the file exists by now: say why it stays empty (start() then gives the memory back: hs_writer_release) */
	if (!enc && hs_encoder_new(&enc) < 0) {
		hs_log("out of memory for the trace's compressor; tracing disabled, nothing written to", file_path, NULL);
		return -1;
	}
	if (chunk)
		hs_builder_free(chunk);
	if (hs_builder_new(&chunk, hs_g.cfg.time_resolution_ns) < 0) {
		chunk = NULL;
		hs_log("out of memory for the trace's chunk buffers; tracing disabled, nothing written to", file_path, NULL);
		return -1;
	}
	clock_gettime(CLOCK_REALTIME, &rt);
	hs_header_encode(hdr, hs_g.cfg.sample_bytes ? HS_FLAG_SAMPLED : 0, hs_g.cfg.sample_bytes,
			 (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec, (uint32_t)hs_g.pid,
			 hs_g.cfg.time_resolution_ns);
	write_failed = 0;
	if (write_all(hdr, sizeof(hdr)) < 0) {
		hs_log(write_errno == EFBIG ? "the file size limit (ulimit -f) leaves no room for the trace"
		       : write_errno == ENOSPC || write_errno == EDQUOT ? "the disk is full: nothing written to the trace"
									: "cannot write the header of the trace",
		       file_path, "; tracing disabled");
		return -1;
	}
	/* in a chunk of its own: a trace whose next chunk finds the disk full still names its program */
	emit_process();
	take_meta();
	write_chunk();
	return 0;
}

/* Tracing could not start: the program gets the buffers' memory back. */
void hs_writer_release(void)
{
	hs_builder_free(chunk);
	chunk = NULL;
	if (enc)
		hs_encoder_free(enc);
	enc = NULL;
}

/*
 * RSS is read every tick (10 ms) but written only when it changed, or a
 * second after the last one written: readers hold each value until the
 * next (the timeline is a step function), so nothing is lost. Written at
 * every tick, an idle service's trace grew by 110 MB a day (a record per
 * tick, and so a chunk per 100 ms), 12.7 KB in 10 s of sleep.
 */
static void emit_rss(int always)
{
	char buf[128];
	ssize_t n;
	uint64_t pages = 0, bytes, now;
	uint8_t rec[1 + 2 * HS_VARINT_MAX], *p = rec;
	const char *s;
	struct stat st;

	if (statm_fd < 0) {
		statm_fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/statm", O_RDONLY | O_CLOEXEC);
		if (statm_fd < 0)
			return;
		statm_fd = hs_fd_move_high(statm_fd);
		if (fstat(statm_fd, &st) == 0) {
			statm_dev = st.st_dev;
			statm_ino = st.st_ino;
		}
	}
	n = pread(statm_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0) {
		syscall(SYS_close, statm_fd);
		statm_fd = -1;
		return;
	}
	buf[n] = 0;
	for (s = buf; *s && *s != ' '; s++)
		;
	for (s += *s == ' '; *s >= '0' && *s <= '9'; s++)
		pages = pages * 10 + (uint64_t)(*s - '0');
	bytes = pages * (uint64_t)sysconf(_SC_PAGESIZE);
	now = hs_now_ns();
	if (!always && bytes == rss_last && now - rss_last_ns < HS_RSS_HEARTBEAT_NS)
		return;
	rss_last = bytes;
	rss_last_ns = now;
	*p++ = HS_REC_RSS;
	p = hs_varint_put(p, now);
	p = hs_varint_put(p, bytes);
	hs_meta_append(rec, (size_t)(p - rec));
}

void hs_writer_rss_now(void)
{
	hs_lock_take(&hs_g.writer_lock);
	emit_rss(1);
	hs_lock_release(&hs_g.writer_lock);
}

static void emit_totals(void)
{
	uint8_t rec[1 + 2 * HS_VARINT_MAX + 2 * HS_FN_COUNT * HS_VARINT_MAX], *p = rec;
	uint64_t calls[HS_FN_COUNT], bytes[HS_FN_COUNT];

	for (int i = 0; i < HS_FN_COUNT; i++) {
		calls[i] = atomic_load_explicit(&hs_g.folded_calls[i], memory_order_relaxed);
		bytes[i] = atomic_load_explicit(&hs_g.folded_bytes[i], memory_order_relaxed);
	}
	hs_lock_take(&hs_g.threads_lock);
	for (struct hs_thread *t = hs_g.threads; t; t = t->next)
		for (int i = 0; i < HS_FN_COUNT; i++) {
			calls[i] += __atomic_load_n(&t->calls[i], __ATOMIC_RELAXED) - __atomic_load_n(&t->calls_base[i], __ATOMIC_RELAXED);
			bytes[i] += __atomic_load_n(&t->bytes[i], __ATOMIC_RELAXED) - __atomic_load_n(&t->bytes_base[i], __ATOMIC_RELAXED);
		}
	hs_lock_release(&hs_g.threads_lock);
	*p++ = HS_REC_TOTALS;
	p = hs_varint_put(p, hs_now_ns());
	p = hs_varint_put(p, HS_FN_COUNT);
	for (int i = 0; i < HS_FN_COUNT; i++) {
		p = hs_varint_put(p, calls[i]);
		p = hs_varint_put(p, bytes[i]);
	}
	hs_meta_append(rec, (size_t)(p - rec));
}

/* Records that name no stack nor module, and so may follow a lost chunk. */
static int survives_loss(uint8_t type)
{
	return type == HS_REC_RSS || type == HS_REC_MARKER || type == HS_REC_TOTALS || type == HS_REC_PROCESS ||
	       type == HS_REC_SIGNAL || type == HS_REC_DISABLED || type == HS_REC_CHILDREN || type == HS_REC_END;
}

/* Meta records come length-prefixed from hs_meta_take, whole records only. */
static void take_meta(void)
{
	static uint8_t buf[HS_CHUNK_MAX_RAW / 4];
	int more = 1;

	while (more) {
		size_t n = hs_meta_take(buf, sizeof(buf), &more);
		const uint8_t *p = buf, *end = buf + n;

		while (p < end) {
			uint64_t len;
			if (hs_varint_get(&p, end, &len) || len > (uint64_t)(end - p))
				break;
			if (write_failed && !survives_loss(p[0])) {
				p += len;
				continue;
			}
			if (!hs_builder_fits(chunk, (size_t)len))
				write_chunk();
			hs_builder_record(chunk, p, (size_t)len);
			p += len;
		}
		if (hs_builder_size(chunk) >= HS_CHUNK_TARGET)
			write_chunk();
		if (more && n == 0)
			break; /* a record larger than the buffer cannot be: never spin */
	}
}

/* e, whose stamp falls in the unit of time that starts at unit_ns (drain has it already), into the chunk. */
static void encode_event(const struct hs_thread *t, const struct hs_ev *e, uint64_t unit_ns)
{
	const struct hs_ev_ext *x = (const struct hs_ev_ext *)&t->ring[((size_t)(e - t->ring) + 1) & (HS_RING_EVENTS - 1)];
	struct hs_event ev;

	/* hs_builder_event reads only the fields of the event's kind (these three zeroed: the compiler cannot see that) */
	ev.ptr = ev.size = ev.old_ptr = 0;
	ev.time_ns = unit_ns;
	ev.tid = t->tid;
	ev.fn = e->fn;
	ev.stack = e->stack;
	switch (e->type & ~HS_EV_OWN) {
	case HS_EV_ALLOC:
		ev.kind = HS_EVENT_ALLOC;
		ev.ptr = e->a;
		ev.size = e->b;
		ev.old_ptr = e->ext ? x->c : 0;
		break;
	case HS_EV_FREE:
		ev.kind = HS_EVENT_FREE;
		ev.ptr = e->a;
		break;
	case HS_EV_MMAP:
		ev.kind = HS_EVENT_MMAP;
		ev.addr = e->a;
		ev.len = e->b;
		ev.prot = (uint32_t)(x->c >> 32);
		ev.flags = (uint32_t)x->c;
		break;
	case HS_EV_MUNMAP:
		ev.kind = HS_EVENT_MUNMAP;
		ev.addr = e->a;
		ev.len = e->b;
		break;
	case HS_EV_MREMAP:
		ev.kind = HS_EVENT_MREMAP;
		ev.addr = e->a;
		ev.len = e->b;
		ev.new_addr = x->c;
		ev.new_len = x->d;
		break;
	case HS_EV_BRK:
		ev.kind = HS_EVENT_BRK;
		ev.addr = e->a;
		ev.new_addr = e->b;
		break;
	default:
		return;
	}
	hs_builder_event(chunk, &ev);
}

/* The ticks [lo, hi) fall in the unit of time (the trace's resolution) that starts at ns. */
struct unit {
	uint64_t lo, hi, ns;
};

/* The start, in ns, of the unit of res ns that holds tick t. */
static inline uint64_t unit_of(struct unit *u, uint64_t t, uint64_t res)
{
	if (t - u->lo < u->hi - u->lo)
		return u->ns;
	u->lo = t;
	u->ns = hs_ticks_to_unit(t, res, &u->hi);
	return u->ns;
}

/* Events the writer took from the rings since its last pass: many, and it keeps the stamp epochs short. */
static uint64_t drained;

/* The rings' tails move to pos, and threads asleep for room wake up (wait_for_room in hooks.c). */
static void give_room(struct hs_thread *const *ts, const uint64_t *pos, int k)
{
	for (int i = 0; i < k; i++) {
		drained += pos[i] - atomic_load_explicit(&ts[i]->tail, memory_order_relaxed);
		atomic_store_explicit(&ts[i]->tail, pos[i], memory_order_release);
	}
	/* the tails' stores before the waiters' count is read, as the waiters count before they read the tails */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&hs_g.room_waiters)) {
		atomic_fetch_add(&hs_g.room, 1);
		syscall(SYS_futex, &hs_g.room, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
	}
}

/* A thread whose ring is full sleeps until the writer frees room (room then differs from seen), 2 ms at most. */
void hs_writer_wait_room(uint32_t seen)
{
	struct timespec to = { 0, 2 * 1000 * 1000 };

	syscall(SYS_futex, &hs_g.room, FUTEX_WAIT_PRIVATE, seen, &to, NULL, 0);
}

/*
 * One pass: events of every thread older than the watermark, merged by time.
 * Each ring is already in time order, so a k-way merge gives a globally
 * ordered stream except for an event whose thread was preempted between
 * taking its timestamp and publishing it for longer than the hold time; the
 * reader matches frees to allocations by time, so such a late event is safe.
 */
/* Under writer_lock: drain's threads, their positions and ends, in one mapping of snap_cap of each. */
static struct hs_thread **snap_t;
static uint64_t *snap_pos, *snap_end;
static size_t snap_cap;

static size_t snap_bytes(size_t cap)
{
	return cap * (sizeof(*snap_t) + sizeof(*snap_pos) + sizeof(*snap_end));
}

/* Room for twice as many threads in drain's arrays; under writer_lock. -1: no memory. */
static int snap_grow(void)
{
	size_t cap = snap_cap ? 2 * snap_cap : 256;
	struct hs_thread **t = hs_map(snap_bytes(cap));
	uint64_t *p, *e;

	if (!t)
		return -1;
	p = (uint64_t *)(t + cap);
	e = p + cap;
	if (snap_cap) {
		memcpy(t, snap_t, snap_cap * sizeof(*t));
		memcpy(p, snap_pos, snap_cap * sizeof(*p));
		memcpy(e, snap_end, snap_cap * sizeof(*e));
		hs_unmap(snap_t, snap_bytes(snap_cap));
	}
	snap_t = t;
	snap_pos = p;
	snap_end = e;
	snap_cap = cap;
	return 0;
}

/*
 * Every thread with events takes part in one merge: when more threads than
 * a fixed 256 had events, the ones left for a second pass had their events
 * written after later ones of the first (4,115 frees of 105,004 came before
 * their allocations, with 70,000 threads started 8 at a time).
 */
static uint64_t drain(int force)
{
	struct hs_thread **ts;
	uint64_t *pos, *end;
	int k = 0, more_threads = 0;
	uint64_t backlog = 0, encoded = 0;
	uint64_t watermark = force ? UINT64_MAX : hs_ticks() - hold_ticks;
	uint64_t res = hs_g.cfg.time_resolution_ns ? hs_g.cfg.time_resolution_ns : 1;
	struct unit ue = { 0, 0, 0 }, un = { 0, 0, 0 }; /* the events', the next thread's */

	hs_lock_take(&hs_g.threads_lock);
	for (struct hs_thread *t = hs_g.threads; t; t = t->next) {
		uint64_t h = atomic_load_explicit(&t->head, memory_order_acquire);
		uint64_t tl = atomic_load_explicit(&t->tail, memory_order_relaxed);
		/* a handler interrupting its thread's publication can leave head a step behind for a moment */
		if (h == tl || h - tl > HS_RING_EVENTS)
			continue;
		if ((size_t)k == snap_cap && snap_grow() < 0) {
			/* no memory for more: the rest in a later pass, maybe out of order */
			more_threads = 1;
			break;
		}
		snap_t[k] = t;
		snap_pos[k] = tl;
		snap_end[k] = h;
		k++;
	}
	hs_lock_release(&hs_g.threads_lock);
	ts = snap_t;
	pos = snap_pos;
	end = snap_end;

	/* stacks and modules the events refer to were published before the events */
	take_meta();
	for (;;) {
		int best = -1;
		uint64_t bt = watermark, next = watermark;
		for (int i = 0; i < k; i++) {
			if (pos[i] == end[i])
				continue;
			uint64_t t = ts[i]->ring[pos[i] & (HS_RING_EVENTS - 1)].ts;
			if (t < bt || (force && best < 0)) {
				if (best >= 0 && bt < next)
					next = bt;
				bt = t;
				best = i;
			} else if (t < next) {
				next = t;
			}
		}
		if (best < 0)
			break;
		/*
		 * The best thread's run up to the next thread's oldest event (one
		 * scan of the threads per run), and on over its HS_EV_OWN events
		 * of that event's unit of time: no other thread's event on their
		 * blocks can come between, and times stay in order. Threads that
		 * run at once interleave every event or two; a THREAD record
		 * before each made 4 churning threads' traces 11% larger and
		 * their decoding a third slower.
		 */
		uint64_t unit_end = next < watermark ? unit_of(&un, next, res) + res : 0;
		/* the run's thread and place in locals: after each of the encoder's byte stores, pos[] would be loaded again */
		const struct hs_thread *rt = ts[best];
		uint64_t p = pos[best], pe = end[best];
		const struct hs_ev *e = &rt->ring[p & (HS_RING_EVENTS - 1)];
		uint64_t ns = unit_of(&ue, e->ts, res);
		for (;;) {
			encode_event(rt, e, ns);
			p += 1u + e->ext;
			if ((++encoded & (SIZE_EVERY - 1)) == 0 && hs_builder_size(chunk) >= HS_CHUNK_IN_PASS) {
				pos[best] = p;
				write_chunk();
				give_room(ts, pos, k);
			}
			if (p == pe)
				break;
			e = &rt->ring[p & (HS_RING_EVENTS - 1)];
			ns = unit_of(&ue, e->ts, res);
			if (e->ts < next)
				continue;
			if (!unit_end || !(e->type & HS_EV_OWN) || e->ts >= watermark || ns >= unit_end)
				break;
		}
		pos[best] = p;
	}
	give_room(ts, pos, k);
	for (int i = 0; i < k; i++)
		if (end[i] - pos[i] > backlog)
			backlog = end[i] - pos[i];
	/* the threads left out wait for the next pass: call again soon */
	if (more_threads && backlog < HS_RING_EVENTS)
		backlog = HS_RING_EVENTS;
	return backlog;
}

/* Whether t's thread has exited; a thread that took its number since keeps t a while longer. */
static int thread_gone(const struct hs_thread *t)
{
	return syscall(SYS_tgkill, hs_g.pid, t->tid, 0) < 0 && errno == ESRCH;
}

/*
 * Reclaims the rings of threads that have exited once they are empty. Under
 * writer_lock: a drain (another thread's flush too) holds states it found.
 * Without the orphans, each thread that ended left one behind (libc frees
 * its cache after our destructor ran), on the list for good: 70,000 threads
 * left 50 MB and a list every drain walked.
 */
static void reap(void)
{
	int waiting = 0;

	hs_lock_take(&hs_g.writer_lock);
	hs_lock_take(&hs_g.threads_lock);
	for (struct hs_thread **pp = &hs_g.threads; *pp;) {
		struct hs_thread *t = *pp;
		int ended = atomic_load(&t->dead) || (t->orphan && thread_gone(t));
		if (ended && atomic_load(&t->head) == atomic_load(&t->tail)) {
			for (int i = 0; i < HS_FN_COUNT; i++) {
				atomic_fetch_add(&hs_g.folded_calls[i], t->calls[i] - t->calls_base[i]);
				atomic_fetch_add(&hs_g.folded_bytes[i], t->bytes[i] - t->bytes_base[i]);
			}
			*pp = t->next;
			hs_thread_retire(t);
			continue;
		}
		waiting += ended || t->orphan;
		pp = &t->next;
	}
	hs_thread_spares_trim();
	/* a thread ending meanwhile is reaped at the next tick */
	atomic_store(&hs_g.to_reap, waiting);
	hs_lock_release(&hs_g.threads_lock);
	hs_lock_release(&hs_g.writer_lock);
}

uint64_t hs_writer_flush(int force)
{
	uint64_t backlog = 0;

	hs_lock_take(&hs_g.writer_lock);
	if (atomic_load(&hs_g.state) == HS_ACTIVE) {
		backlog = drain(force);
		if (force || hs_builder_size(chunk) >= HS_CHUNK_TARGET ||
		    (hs_builder_size(chunk) && hs_now_ns() - chunk_since >= HS_FLUSH_NS))
			write_chunk();
		if (hs_builder_size(chunk) == 0)
			chunk_since = hs_now_ns();
	}
	hs_lock_release(&hs_g.writer_lock);
	return backlog;
}

void hs_writer_wake(void)
{
	if (atomic_exchange(&hs_g.wake, 1) == 0)
		syscall(SYS_futex, &hs_g.wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* A signal is ending the process: set by its handler, on a program thread; the writer answers in crash_done. */
static _Atomic int crash_sig;
static _Atomic uint32_t crash_done;

/* One of the last records, stamped now: type with value, or with text (tlen bytes); all but END have their length first. */
static void append_last(uint8_t type, uint64_t value, const char *text, size_t tlen)
{
	uint8_t rec[1 + 4 * HS_VARINT_MAX + 160], body[3 * HS_VARINT_MAX + 160], *p = rec, *q = body;

	q = hs_varint_put(q, hs_now_ns());
	if (text) {
		if (tlen > 160)
			tlen = 160;
		q = hs_varint_put(q, tlen);
		memcpy(q, text, tlen);
		q += tlen;
	} else {
		q = hs_varint_put(q, value);
	}
	*p++ = type;
	if (type != HS_REC_END)
		p = hs_varint_put(p, (uint64_t)(q - body));
	memcpy(p, body, (size_t)(q - body));
	p += q - body;
	hs_meta_append(rec, (size_t)(p - rec));
}

/*
 * The last records of a trace: its events, then in a chunk of their own the
 * totals, DISABLED (why) when the tracer stopped itself (4.1), and type,
 * END or SIGNAL (2.1), with value. Whatever the state: a tracer that
 * stopped itself is inert, and before DISABLED its trace kept only the
 * header. The events go first on their own so that, when the disk fills or
 * the file size limit comes, the small last chunk may still fit where they
 * did not; a stop for that reason is said once, by whoever meets it first.
 */
static void write_last(uint8_t type, uint64_t value)
{
	const char *why;

	hs_lock_take(&hs_g.writer_lock);
	drain(1);
	write_chunk();
	why = atomic_load(&disabled_why);
	if (why && disabled_done)
		goto out;
	disabled_done = why != NULL;
	emit_rss(1);
	emit_totals();
	if (why)
		append_last(HS_REC_DISABLED, 0, why, strlen(why));
	if (atomic_load(&hs_g.untraced_children))
		append_last(HS_REC_CHILDREN, atomic_load(&hs_g.untraced_children), NULL, 0);
	append_last(type, value, NULL, 0);
	if (write_failed) {
		/* no events: they could name stacks that were lost */
		take_meta();
		put_chunk();
	} else {
		drain(1);
		write_chunk();
	}
out:
	hs_lock_release(&hs_g.writer_lock);
}

/*
 * From the handler of a signal that ends the process: the writer flushes
 * while this thread waits, 2 s at most (a thread that died holding one of
 * our locks must not hang the process). The first signal names the end.
 */
void hs_writer_crash(int sig)
{
	struct timespec to = { 0, 50 * 1000 * 1000 };
	int expected = 0;

	if (!hs_g.writer_running)
		return;
	atomic_compare_exchange_strong(&crash_sig, &expected, sig);
	hs_writer_wake();
	for (int i = 0; i < 40 && !atomic_load(&crash_done); i++)
		syscall(SYS_futex, &crash_done, FUTEX_WAIT_PRIVATE, 0, &to, NULL, 0);
}

/* hs_disable: the writer writes what was recorded, then why. */
void hs_writer_disabled(const char *why)
{
	const char *none = NULL;

	if (atomic_compare_exchange_strong(&disabled_why, &none, why))
		hs_writer_wake();
}

/* 1 once the writer has its thread state: its set-up allocates (pthread_getattr_np), the rest of it never does */
static _Atomic int writer_up;

static void *writer_main(void *arg)
{
	struct hs_thread *self = hs_thread_get();
	uint64_t next_tick = 0, last_pass = hs_now_ns();

	(void)arg;
	if (self) {
		self->internal++;
		hs_tls_hook = NULL;
	}
	/* the default 50 us of slack on each sleep would make stamp epochs half as long again (hooks.c unfenced) */
	prctl(PR_SET_TIMERSLACK, 1000ul, 0, 0, 0);
	atomic_store(&writer_up, 1);
	syscall(SYS_futex, &writer_up, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
	while (!atomic_load(&hs_g.writer_stop)) {
		struct timespec to = { 0, 0 };
		uint64_t now = hs_now_ns(), backlog;
		int runs;

		if (atomic_load(&disabled_why) && !disabled_done) {
			write_last(HS_REC_END, HS_END_STOP);
		}
		if (atomic_load(&crash_sig) && !atomic_load(&crash_done)) {
			write_last(HS_REC_SIGNAL, (uint64_t)atomic_load(&crash_sig));
			atomic_store(&crash_done, 1);
			syscall(SYS_futex, &crash_done, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
		}

		if (now >= next_tick) {
			hs_lock_take(&hs_g.writer_lock);
			hs_clock_refine();
			hold_ticks = hs_ns_to_ticks(HS_HOLD_NS);
			atomic_store_explicit(&hs_g.ask_ticks, hs_ns_to_ticks(HS_STAMP_ASK * HS_STAMP_RUN_GAP_NS),
					      memory_order_relaxed);
			emit_rss(0);
			if (chunks_since_totals >= 10) {
				emit_totals();
				chunks_since_totals = 0;
			}
			hs_lock_release(&hs_g.writer_lock);
			/* the loader's lock is a pthread mutex: not while glibc takes it with a plain store (single.c) */
			if (!hs_single_kept())
				hs_modules_poll();
			else
				atomic_store_explicit(&hs_g.poll_modules, 1, memory_order_relaxed);
			reap();
			next_tick = now + HS_TICK_NS;
		}
		backlog = atomic_load_explicit(&hs_g.test_stall, memory_order_relaxed) ? 0 : hs_writer_flush(0);
		/* states of exited threads back to the spares at once, for the threads a program starts next */
		if (atomic_load(&hs_g.to_reap))
			reap();
		/* events held back for ordering are due soon: come back for them rather than at the next tick */
		if (backlog > HS_RING_EVENTS / 8)
			to.tv_nsec = (long)(HS_HOLD_NS / 2);
		else
			to.tv_nsec = (long)(next_tick > now ? next_tick - now : 1000);
		/*
		 * Events are coming fast (this pass drained them, or a thread
		 * saw them and asked): the threads may share stamps within the
		 * epoch this pass starts (hooks.c unfenced), and the writer is
		 * back within a tick to end it. Before a longer sleep, the new
		 * epoch lets no run start.
		 */
		now = hs_now_ns();
		runs = atomic_exchange(&hs_g.runs_asked, 0);
		runs = (runs || (drained && drained * HS_STAMP_RUN_GAP_NS >= now - last_pass)) &&
		       hs_g.cfg.time_resolution_ns >= HS_STAMP_TICK_NS;
		if (runs && to.tv_nsec > (long)HS_STAMP_TICK_NS)
			to.tv_nsec = (long)HS_STAMP_TICK_NS;
		hs_stamp_epoch_end(runs);
		drained = 0;
		last_pass = now;
		if (!atomic_exchange(&hs_g.wake, 0))
			syscall(SYS_futex, &hs_g.wake, FUTEX_WAIT_PRIVATE, 0, &to, NULL, 0);
		atomic_store(&hs_g.wake, 0);
	}
	return NULL;
}

int hs_writer_start(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	int rc;

	if (hs_g.writer_running)
		return 0;
	atomic_store(&hs_g.writer_stop, 0);
	atomic_store(&writer_up, 0);
	/* the writer must never run the program's signal handlers */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* a small stack: glibc caches exited threads' stacks up to 40 MiB and evicts the program's beyond */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 512u << 10);
	rc = pthread_create(&hs_g.writer, &attr, writer_main, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -1;
	hs_g.writer_running = 1;
	return 0;
}

int hs_writer_up(void)
{
	struct timespec to = { 0, 10 * 1000 * 1000 };
	int e = errno;

	/* a second at most: a writer that cannot start its state leaves the program to glibc's threaded paths */
	for (int i = 0; i < 100 && !atomic_load(&writer_up); i++)
		syscall(SYS_futex, &writer_up, FUTEX_WAIT_PRIVATE, 0, &to, NULL, 0);
	errno = e;
	return atomic_load(&writer_up);
}

void hs_writer_stop(void)
{
	if (!hs_g.writer_running)
		return;
	atomic_store(&hs_g.writer_stop, 1);
	hs_writer_wake();
	pthread_join(hs_g.writer, NULL);
	hs_g.writer_running = 0;
	/* no writer to end epochs: every stamp fresh */
	hs_stamp_epoch_end(0);
}

/* Final flush: everything pending, the exact totals and the end record with why it ended. */
void hs_writer_finish(int reason)
{
	write_last(HS_REC_END, (uint64_t)reason);
	reap();
}

/* The process image ends while a stop of the tracer (hs_disable) waits for the writer thread: said now. */
void hs_writer_finish_disabled(void)
{
	if (chunk && enc && atomic_load(&disabled_why) && !disabled_done)
		write_last(HS_REC_END, HS_END_STOP);
}

/* The child inherited our descriptors: drop them (if the program has not reused the numbers). */
void hs_writer_after_fork_child(void)
{
	struct stat st;

	hs_lock_reset(&hs_g.writer_lock);
	hs_g.writer_running = 0;
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == file_dev && st.st_ino == file_ino)
		syscall(SYS_close, fd);
	if (statm_fd >= 0 && fstat(statm_fd, &st) == 0 && st.st_dev == statm_dev && st.st_ino == statm_ino)
		syscall(SYS_close, statm_fd);
	fd = -1;
	statm_fd = -1;
}

