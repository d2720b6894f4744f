/* reader.h - public API to read heapscope traces: events in order, stacks, symbols */
#ifndef HEAPSCOPE_READER_H
#define HEAPSCOPE_READER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* struct hs_event's unnamed members are C11; GCC and Clang accept them quietly in C99 and C++ -pedantic too */
#if defined(__GNUC__) || defined(__clang__)
#define HS_UNNAMED __extension__
#else
#define HS_UNNAMED
#endif

/*
 * Usage:
 *	struct hs_reader *r;
 *	struct hs_event ev;
 *	if (hs_reader_open(&r, "x.hst") < 0) { puts(hs_reader_error(r)); ... }
 *	while ((rc = hs_reader_next(r, &ev)) > 0) { ... }
 *	if (rc < 0) puts(hs_reader_error(r));
 *	hs_reader_close(r);
 *
 * Functions return 0 (or 1 for "got one"), or a negative errno-style code;
 * then hs_reader_error() tells what went wrong and at which file offset.
 * Running out of memory is such an error (-ENOMEM), never an abort: when
 * even the reader could not be allocated, hs_reader_open() leaves *out NULL,
 * which hs_reader_error() and hs_reader_close() accept. The symbolizer
 * degrades instead: a name it has no memory for is left out.
 *
 * A reader is used by one thread at a time. Once events were asked for, a
 * second thread of its own may be decoding ahead (hs_reader_next_block):
 * a child made by fork() then cannot use the reader (the thread is not
 * copied); it opens the trace again.
 */
struct hs_reader;

/* Entry points, as recorded; the numbering is part of the file format. */
enum hs_fn {
	HS_FN_MALLOC,
	HS_FN_CALLOC,
	HS_FN_REALLOC,
	HS_FN_REALLOCARRAY,
	HS_FN_POSIX_MEMALIGN,
	HS_FN_ALIGNED_ALLOC,
	HS_FN_MEMALIGN,
	HS_FN_VALLOC,
	HS_FN_PVALLOC,
	HS_FN_FREE,
	HS_FN_MALLOC_USABLE_SIZE,
	HS_FN_MMAP,
	HS_FN_MUNMAP,
	HS_FN_MREMAP,
	HS_FN_BRK,
	HS_FN_SBRK,
	HS_FN_COUNT
};

/* Name of an entry point ("malloc", "posix_memalign", ...), or "?" */
const char *hs_fn_name(int fn);

enum hs_event_kind {
	HS_EVENT_ALLOC,         /* ptr, size, stack, fn; realloc: old_ptr (already freed by a FREE event just before) */
	HS_EVENT_FREE,          /* ptr, fn: free, or realloc/reallocarray when the block moved or was freed by it */
	HS_EVENT_MMAP,          /* addr, len, prot, flags, stack */
	HS_EVENT_MUNMAP,        /* addr, len */
	HS_EVENT_MREMAP,        /* addr, len (old), new_addr, new_len, stack */
	HS_EVENT_BRK,           /* addr (old break), new_addr (new break), fn (brk or sbrk), stack */
	HS_EVENT_RSS,           /* rss in bytes */
	HS_EVENT_MARKER,        /* label, label_len */
	HS_EVENT_MODULE,        /* module */
	HS_EVENT_MODULE_UNLOAD, /* addr: load bias of the module */
	HS_EVENT_TOTALS,        /* calls[], bytes[]: exact running totals per entry point, even when sampled */
	HS_EVENT_END,           /* the process image ended cleanly: flags holds enum hs_end_reason */
	HS_EVENT_SIGNAL,        /* (2.1) a signal is ending the process: flags holds its number; no END follows */
	HS_EVENT_DISABLED,      /* (4.1) label, label_len: why the tracer stopped itself mid-run; an END (stop) follows */
	HS_EVENT_CHILDREN,      /* (4.2) len: children the process forked that are not traced (no follow-fork); before its END */
};

enum hs_end_reason {
	HS_END_EXIT,            /* exit() or return from main: destructors ran */
	HS_END_UNDERSCORE_EXIT, /* _exit() or _Exit() */
	HS_END_EXEC,            /* the process exec'd another program */
	HS_END_STOP,            /* hs_stop() */
};

struct hs_module {
	uint64_t base;          /* load bias */
	uint64_t lo, hi;        /* address range of its loadable segments */
	const char *path;
	const uint8_t *build_id;
	size_t build_id_len;
	uint64_t load_time_ns;
};

/*
 * One event: read only the fields its kind lists (enum hs_event_kind).
 * The kinds' fields share their bytes, so that an event is one 64-byte
 * cache line: analyses move tens of millions of them from the decoding
 * thread's core to their own, and at 152 bytes that traffic was most of
 * a flame graph's time.
 */
struct hs_event {
	enum hs_event_kind kind;
	uint32_t tid;
	uint64_t time_ns;        /* since the start of tracing, monotonic */
	int fn;                  /* enum hs_fn */
	uint32_t stack;          /* 0: no backtrace */
	HS_UNNAMED union {
		HS_UNNAMED struct {      /* ALLOC, FREE */
			uint64_t ptr, size, old_ptr;
		};
		HS_UNNAMED struct {      /* MMAP, MUNMAP, MREMAP, BRK, MODULE_UNLOAD, END, SIGNAL, CHILDREN */
			uint64_t addr, len, new_addr, new_len;
			uint32_t prot, flags;
		};
		uint64_t rss;            /* RSS */
		HS_UNNAMED struct {      /* MARKER, DISABLED */
			const char *label;
			size_t label_len;
		};
		const struct hs_module *module;  /* MODULE */
		HS_UNNAMED struct {      /* TOTALS: HS_FN_COUNT entries each */
			const uint64_t *calls, *bytes;
		};
	};
};

struct hs_trace_info {
	unsigned version_major, version_minor;
	uint32_t pid, ppid;
	uint64_t sample_bytes;  /* 0: every call recorded */
	uint32_t time_resolution_ns; /* event times are multiples of this */
	uint64_t start_realtime_ns;
	const char *exe;
	int argc;
	char **argv;
	/*
	 * 1 when, at open, the tracer still had the file open for writing (its
	 * process runs): the trace has no END yet and may grow past what this
	 * reader reads. 0 once it closed it, as at exit or when killed.
	 */
	int being_written;
};

int hs_reader_open(struct hs_reader **out, const char *path);
void hs_reader_close(struct hs_reader *r);

/* Trace-wide facts, complete after open (the tracer writes the process record first). */
const struct hs_trace_info *hs_reader_info(struct hs_reader *r);

/*
 * What one recorded allocation of size bytes stands for in a trace sampled
 * every sample_bytes (hs_trace_info): the inverse of its chance to be
 * sampled, to multiply counts (and size for bytes) by for unbiased
 * estimates; 1 when sample_bytes is 0. docs/FORMAT.md, "Sampling".
 */
double hs_sample_weight(uint64_t sample_bytes, uint64_t size);

/*
 * 1: *ev filled; 0: end of trace; <0: error. Pointers in *ev live until the
 * next call. Only the fields listed for the event's kind (and kind,
 * time_ns, tid) are meaningful; the others hold no particular value.
 */
int hs_reader_next(struct hs_reader *r, struct hs_event *ev);

/*
 * Up to n events at once into ev[0..]: the same events as n calls of
 * hs_reader_next, for less per event. Returns how many (>0), 0 at the end
 * of the trace, <0 on an error (after the events before it were returned by
 * earlier calls). Pointers in the events live until the next call.
 */
int hs_reader_next_batch(struct hs_reader *r, struct hs_event *ev, int n);

/*
 * The next events in place, without a copy: *ev points at them, and they
 * and their pointers live until the next call. Returns how many (>0), 0 at
 * the end, <0 on an error, as hs_reader_next_batch. On a machine with more
 * than one core, a second thread decodes ahead of any of the three calls;
 * HEAPSCOPE_READER_THREADS=0 keeps decoding in the calling thread.
 */
int hs_reader_next_block(struct hs_reader *r, const struct hs_event **ev);

/*
 * Before the first event is read: allocations and frees come without their
 * addresses (ptr and old_ptr 0), for passes that need none (bytes or calls
 * by backtrace); decoding skips the addresses' stream and predictions.
 * -EBUSY once events were read.
 */
int hs_reader_skip_addresses(struct hs_reader *r);

/*
 * The latest event time in the file's last complete chunk, read alone:
 * what a pass over the whole trace will almost surely find as its end,
 * for analyses that need the end before their pass. Almost: an event can
 * come late, so check against the pass. 0 or <0 (the file cannot be read).
 */
int hs_reader_end_hint(const char *path, uint64_t *end_ns);

/* What the same read of the last chunk tells of how the process ended. */
struct hs_end_info {
	uint64_t end_ns;              /* as hs_reader_end_hint */
	uint64_t untraced_children;   /* (4.2) children started without tracing them; 0 when none or older */
	int end;                      /* enum hs_end_reason of its END, -1 without one (killed, a signal, still running) */
};
int hs_reader_end_info(const char *path, struct hs_end_info *info);

/* Message for the last error, or the last warning (e.g. truncation) when there was no error; "" if none. */
const char *hs_reader_error(struct hs_reader *r);
const char *hs_reader_warning(struct hs_reader *r);

/* Byte offset in the file of the chunk being read. */
uint64_t hs_reader_offset(struct hs_reader *r);

/*
 * The return addresses of a stack, innermost first (the caller of malloc,
 * then its caller, ...). Returns how many were written (at most max), or <0.
 */
int hs_reader_stack(struct hs_reader *r, uint32_t stack, uint64_t *ips, int max);

/* Parent of a stack node (the same backtrace without its innermost frame) and its address. */
int hs_reader_stack_node(struct hs_reader *r, uint32_t stack, uint32_t *parent, uint64_t *ip);
uint32_t hs_reader_stack_count(struct hs_reader *r);

/* Modules seen so far. */
size_t hs_reader_module_count(struct hs_reader *r);
const struct hs_module *hs_reader_module(struct hs_reader *r, size_t i);

struct hs_frame {
	uint64_t address;
	const char *function;   /* demangled; NULL if unknown */
	const char *file;       /* NULL if unknown */
	int line;               /* 0 if unknown */
	const char *module;     /* path of the module, NULL if outside any */
	int inlined;            /* 1: this frame was inlined into the next one */
	uint64_t module_address; /* address less the module's load bias: the same in every run, what
				    'addr2line -e MODULE' takes; 0 outside any module */
};

/*
 * The frame's function, or for a function without a symbol its module and
 * address there ("libsqlite3.so.0+0x2d504"), which stay the same from run
 * to run; the address alone outside any module. Returns buf or the frame's
 * own string.
 */
const char *hs_frame_name(const struct hs_frame *fr, char *buf, size_t n);

/*
 * Symbolizes one return address into up to max frames (more than one when
 * inlined calls are involved, innermost first). Strings live as long as the
 * reader. Returns the number of frames written (at least 1 when max > 0).
 * The outermost frame of a backtrace deeper than the tracer keeps (128
 * frames) has address 1 and the function "[truncated]".
 */
int hs_reader_symbolize(struct hs_reader *r, uint64_t return_address, struct hs_frame *frames, int max);

/*
 * Where else to look for the traced binaries (a trace from another machine,
 * or a program rebuilt since it was recorded): directories separated by
 * ':'. A module's file is taken from its recorded path, else from that path
 * under each directory (a sysroot), else by its name in each, else from any
 * file below them (four levels deep) with its build-id; a file with another
 * build-id than the recorded one is never taken. Call before the first
 * hs_reader_symbolize. Returns 0, -EBUSY after symbolizing began, or
 * -ENOMEM.
 */
int hs_reader_set_binary_dirs(struct hs_reader *r, const char *dirs);

/* Why frames of a module were left unnamed (shown by module and offset). */
enum hs_module_problem {
	HS_MODULE_MISSING = 1,     /* no file at its path, nor in the binary directories */
	HS_MODULE_OTHER_BUILD,     /* files there, but none with the recorded build-id (rebuilt since) */
	HS_MODULE_UNREADABLE,      /* a file there that cannot be read, or is no ELF file */
};

/*
 * The i-th module (from 0) that frames symbolized so far fell in and could
 * not be named by: its path as recorded, why, and how many distinct
 * addresses it left unnamed. Returns 1, or 0 past the last.
 */
int hs_reader_unnamed_module(struct hs_reader *r, size_t i, const char **path, enum hs_module_problem *why,
			     uint64_t *addresses);

#ifdef __cplusplus
}
#endif

#endif
