/* test_ehframe.c - the in-place .eh_frame reader against libdw, row by row over real libraries, and on corrupt tables */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <libelf.h>
#include <link.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "common/ehframe.h"

/* libdw's answer in the reader's terms (the tracer's compute() read libdw this way) */
static int cfa_offset_of(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	int64_t v = 0;

	if (n < 1 || ops[0].atom != DW_OP_call_frame_cfa)
		return -1;
	for (size_t i = 1; i < n; i++) {
		if (ops[i].atom == DW_OP_plus_uconst)
			v += (int64_t)ops[i].number;
		else if (ops[i].atom == DW_OP_consts && i + 1 < n && ops[i + 1].atom == DW_OP_plus)
			v += (int64_t)ops[i++].number;
		else
			return -1;
	}
	*off = v;
	return 0;
}

static void dw_reg(Dwarf_Frame *fr, int regno, struct hs_eh_reg *r)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	r->off = 0;
	if (dwarf_frame_register(fr, regno, mem, &ops, &n) != 0)
		r->rule = HS_EH_OTHER;
	else if (n == 0)
		r->rule = ops == mem ? HS_EH_UNDEF : HS_EH_SAME;
	else if (cfa_offset_of(ops, n, &r->off) == 0)
		r->rule = HS_EH_OFFSET;
	else
		r->rule = HS_EH_OTHER;
}

/* 1 and *row, 0 when no FDE covers pc */
static int dw_row(Dwarf_CFI *cfi, uintptr_t pc, struct hs_eh_row *row)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_Op *ops;
	size_t n;

	memset(row, 0, sizeof(*row));
	if (dwarf_cfi_addrframe(cfi, pc, &fr) != 0)
		return 0;
	if (dwarf_frame_cfa(fr, &ops, &n) == 0 && n == 1 && ops[0].atom == DW_OP_bregx) {
		row->cfa_reg = (unsigned)ops[0].number;
		row->cfa_off = (int64_t)ops[0].number2;
	} else if (dwarf_frame_cfa(fr, &ops, &n) == 0 && n == 1 && ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		row->cfa_reg = ops[0].atom - DW_OP_breg0;
		row->cfa_off = (int64_t)ops[0].number;
	} else {
		row->cfa_expr = 1;
	}
	dw_reg(fr, HS_EH_REG_RA, &row->ra);
	dw_reg(fr, HS_EH_REG_BP, &row->bp);
	free(fr);
	return 1;
}

/* What the tracer keeps of a row: rules it can follow, and which ones it leaves to libunwind */
static int same_row(const struct hs_eh_row *a, const struct hs_eh_row *b)
{
	if (a->cfa_expr != b->cfa_expr || (!a->cfa_expr && (a->cfa_reg != b->cfa_reg || a->cfa_off != b->cfa_off)))
		return 0;
	if (a->ra.rule != b->ra.rule || (a->ra.rule == HS_EH_OFFSET && a->ra.off != b->ra.off))
		return 0;
	return a->bp.rule == b->bp.rule && (a->bp.rule != HS_EH_OFFSET || a->bp.off == b->bp.off);
}

struct tally {
	const char *want;      /* a module's path must contain it; NULL: any */
	size_t modules, fdes, pcs, differ, ours_bad;
	char first[256];
	double ours_s, dw_s;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int per_module(struct dl_phdr_info *info, size_t size, void *data)
{
	struct tally *t = data;
	struct hs_eh_frame f;
	const int32_t *tab;
	Dwarf_CFI *cfi;
	Elf *elf;
	size_t stride;
	int fd;

	(void)size;
	if (!info->dlpi_name || info->dlpi_name[0] != '/' || (t->want && !strstr(info->dlpi_name, t->want)))
		return 0;
	if (hs_eh_frame_of(info->dlpi_phdr, info->dlpi_phnum, info->dlpi_addr, &f) < 0 || hs_eh_frame_open(&f) < 0)
		return 0;
	fd = open(info->dlpi_name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
	if (!cfi)
		goto out;
	t->modules++;
	tab = (const int32_t *)f.table;
	/* every FDE of a library up to 5,000 of them; a larger one's evenly spread */
	stride = f.count > 5000 ? f.count / 5000 : 1;
	for (size_t i = 0; i < f.count; i += stride) {
		uintptr_t start = f.hdr + (uintptr_t)(intptr_t)tab[2 * i];
		uintptr_t end = i + 1 < f.count ? f.hdr + (uintptr_t)(intptr_t)tab[2 * i + 2] : start + 256;
		static struct hs_eh_row a[512], b[512];
		static int ra[512], rb[512];
		uintptr_t pcs[512];
		size_t n = 0;
		double t0, t1, t2;

		t->fdes++;
		/* every byte of its first 96, then every 11th: the rows change at the prologue's and the epilogues' pushes and pops */
		for (uintptr_t pc = start; pc < end && n < 512; pc += pc < start + 96 ? 1 : 11)
			pcs[n++] = pc;
		t0 = now();
		for (size_t k = 0; k < n; k++)
			ra[k] = hs_eh_row_at(&f, pcs[k], &a[k]);
		t1 = now();
		for (size_t k = 0; k < n; k++)
			rb[k] = dw_row(cfi, pcs[k] - info->dlpi_addr, &b[k]);
		t2 = now();
		t->ours_s += t1 - t0;
		t->dw_s += t2 - t1;
		t->pcs += n;
		for (size_t k = 0; k < n; k++) {
			t->ours_bad += ra[k] < 0;
			if (ra[k] == rb[k] && (ra[k] != 1 || same_row(&a[k], &b[k])))
				continue;
			if (!t->differ++)
				snprintf(t->first, sizeof(t->first),
					 "%s+0x%lx: ours %d cfa %s%u%+ld ra %d%+ld bp %d%+ld, libdw %d cfa %s%u%+ld ra %d%+ld bp %d%+ld",
					 info->dlpi_name, (unsigned long)(pcs[k] - info->dlpi_addr), ra[k],
					 a[k].cfa_expr ? "expr " : "r", a[k].cfa_reg, (long)a[k].cfa_off, a[k].ra.rule,
					 (long)a[k].ra.off, a[k].bp.rule, (long)a[k].bp.off, rb[k], b[k].cfa_expr ? "expr " : "r",
					 b[k].cfa_reg, (long)b[k].cfa_off, b[k].ra.rule, (long)b[k].ra.off, b[k].bp.rule,
					 (long)b[k].bp.off);
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return 0;
}

/* A table built here: .eh_frame_hdr, then .eh_frame, in one buffer that stands for a loaded segment */
struct img {
	uint8_t b[1024];
	size_t n;
};

static void put(struct img *m, const void *p, size_t n)
{
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void put32(struct img *m, uint32_t v)
{
	put(m, &v, 4);
}

static void put8(struct img *m, uint8_t v)
{
	put(m, &v, 1);
}

/*
 * A made-up module's tables, as a linker lays them out but with the
 * header first: .eh_frame_hdr and its one-entry search table, then
 * .eh_frame's CIE (like gcc's), one FDE of insns and the terminator. The
 * code is at [CODE, CODE + 0x100), 64 KiB past the buffer's start (all
 * offsets are 32-bit and relative: a copy elsewhere has its code as far
 * from it). *fde_end: where the FDE ends.
 */
#define CODE_AT 0x10000

static void build(struct img *m, const uint8_t *insns, size_t len, size_t *fde_end)
{
	size_t cie, fde;
	uintptr_t base = (uintptr_t)m->b;
	static const uint8_t cie_body[] = {
		1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, /* version, "zR", code 1, data -8, ra 16, pcrel sdata4 */
		0x0c, 7, 8, 0x90, 1,                    /* def_cfa rsp+8; ra at cfa-8 */
	};
	static const uint8_t h[] = { 1, 0x1b, 0x03, 0x3b };

	memset(m, 0, sizeof(*m));
	put(m, h, 4);
	put32(m, 20 - 4);                       /* eh_frame_ptr, pc-relative: .eh_frame after the table */
	put32(m, 1);
	put32(m, (uint32_t)CODE_AT);            /* the entry: the code's start, from the header */
	put32(m, 0);                            /* and its FDE's, below */
	cie = m->n;
	put32(m, 4 + sizeof(cie_body));
	put32(m, 0);
	put(m, cie_body, sizeof(cie_body));
	fde = m->n;
	put32(m, 0);                            /* its length, below */
	put32(m, (uint32_t)(m->n - cie));
	put32(m, (uint32_t)(base + CODE_AT - (base + m->n))); /* pc_begin, pc-relative */
	put32(m, 0x100);
	put8(m, 0);                             /* augmentation data: none */
	put(m, insns, len);
	*fde_end = m->n;
	{
		uint32_t l = (uint32_t)(m->n - fde - 4), at = (uint32_t)fde;
		memcpy(m->b + fde, &l, 4);
		memcpy(m->b + 16, &at, 4);
	}
	put32(m, 0);                            /* terminator */
}

/* The tables of n bytes, copied to end where an unreadable page starts: a read past them faults. */
static uint8_t *at_guard(const uint8_t *b, size_t n, struct hs_eh_frame *f)
{
	uint8_t *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ElfW(Phdr) ph[2];

	if (page == MAP_FAILED)
		return NULL;
	mprotect(page + 4096, 4096, PROT_NONE);
	memcpy(page + 4096 - n, b, n);
	memset(ph, 0, sizeof(ph));
	ph[0].p_type = PT_LOAD;
	ph[0].p_flags = PF_R;
	ph[0].p_filesz = ph[0].p_memsz = n;
	ph[1].p_type = PT_GNU_EH_FRAME;
	if (hs_eh_frame_of(ph, 2, (uintptr_t)page + 4096 - n, f) < 0 || hs_eh_frame_open(f) < 0)
		memset(f, 0, sizeof(*f));
	return page;
}

/* The rows at the code's first 0x20 bytes (rc[k] and row[k] for pc = code + k) */
static void rows(const struct hs_eh_frame *f, uintptr_t code, int *rc, struct hs_eh_row *row)
{
	for (int k = 0; k < 0x20; k++)
		rc[k] = f->count ? hs_eh_row_at(f, code + (uintptr_t)k, &row[k]) : -1;
}

static void made_up_tables(void)
{
	struct img m;
	struct hs_eh_frame f;
	struct hs_eh_row r;
	uintptr_t code;
	size_t fde_end;
	/* push rbp; mov rbp, rsp; ... remember; def_cfa rsp+8; (ret) restore; ...; undefined ra */
	static const uint8_t prologue[] = {
		0x41, 0x0e, 16, 0x86, 2,  /* +1: cfa rsp+16, rbp at cfa-16 */
		0x43, 0x0d, 6,            /* +3: cfa from rbp */
		0x50, 0x0a, 0x0c, 7, 8,   /* +16: remember; cfa rsp+8 */
		0x41, 0x0b,               /* +1: restore: rbp+16 again */
		0x4a, 0x07, 16,           /* +10: ra undefined */
		0x0f, 2, 0x77, 0,         /* ... at the same place: cfa from an expression */
	};

	build(&m, prologue, sizeof(prologue), &fde_end);
	f = (struct hs_eh_frame){ .hdr = (uintptr_t)m.b, .lo = (uintptr_t)m.b, .hi = (uintptr_t)m.b + m.n };
	CHECK("ehframe/made-up-open", hs_eh_frame_open(&f) == 0 && f.count == 1);
	code = (uintptr_t)m.b + CODE_AT;
	CHECK("ehframe/made-up-entry", hs_eh_row_at(&f, code, &r) == 1 && !r.cfa_expr && r.cfa_reg == 7 &&
					       r.cfa_off == 8 && r.ra.rule == HS_EH_OFFSET && r.ra.off == -8 &&
					       r.bp.rule == HS_EH_SAME);
	CHECK("ehframe/made-up-push", hs_eh_row_at(&f, code + 1, &r) == 1 && r.cfa_off == 16 &&
					      r.bp.rule == HS_EH_OFFSET && r.bp.off == -16);
	CHECK("ehframe/made-up-frame-pointer", hs_eh_row_at(&f, code + 4, &r) == 1 && r.cfa_reg == 6 && r.cfa_off == 16);
	CHECK("ehframe/made-up-remembered", hs_eh_row_at(&f, code + 0x14, &r) == 1 && r.cfa_reg == 7 && r.cfa_off == 8);
	CHECK("ehframe/made-up-restored", hs_eh_row_at(&f, code + 0x15, &r) == 1 && r.cfa_reg == 6 && r.cfa_off == 16 &&
						  r.bp.rule == HS_EH_OFFSET);
	CHECK("ehframe/made-up-undefined-ra", hs_eh_row_at(&f, code + 0x1f, &r) == 1 && r.ra.rule == HS_EH_UNDEF &&
						      r.cfa_expr);
	CHECK("ehframe/made-up-before-code", hs_eh_row_at(&f, code - 1, &r) == 0);
	CHECK("ehframe/made-up-after-code", hs_eh_row_at(&f, code + 0x100, &r) == 0);

	/*
	 * Each truncation, the bytes ending at an unreadable page: an error while
	 * the CIE or the FDE is cut, the same rows once the FDE is whole (only
	 * the terminator cut), and never a read past the end (a fault here).
	 */
	{
		int rc0[0x20], rc[0x20];
		struct hs_eh_row row0[0x20], row[0x20];
		size_t wrong = 0, cuts = 0;
		uint64_t seed = 0x5eed;
		size_t changed = 0, same = 0;

		rows(&f, code, rc0, row0);
		for (size_t cut = 20; cut < m.n; cut++, cuts++) {
			struct hs_eh_frame g;
			uint8_t *page = at_guard(m.b, cut, &g);
			if (!page)
				break;
			rows(&g, g.lo + CODE_AT, rc, row);
			for (int k = 0; k < 0x20; k++)
				if (cut < fde_end ? rc[k] != -1 : rc[k] != rc0[k] || (rc[k] == 1 && !same_row(&row[k], &row0[k])))
					wrong++;
			munmap(page, 8192);
		}
		check_report(cuts == m.n - 20 && wrong == 0, "ehframe/made-up-truncated", "%zu cuts of %zu, %zu rows wrong",
			     cuts, m.n - 20, wrong);
		/* each flipped byte: some flips change the rows (or fail them), some (the terminator's) do not */
		for (int k = 0; k < 5000; k++) {
			struct img bad = m;
			struct hs_eh_frame g;
			uint8_t *page;
			int differ = 0;
			bad.b[check_rand(&seed) % m.n] ^= (uint8_t)(1 + check_rand(&seed) % 255);
			if (!(page = at_guard(bad.b, m.n, &g)))
				break;
			rows(&g, g.lo + CODE_AT, rc, row);
			for (int j = 0; j < 0x20; j++)
				differ |= rc[j] != rc0[j] || (rc[j] == 1 && !same_row(&row[j], &row0[j]));
			changed += differ;
			same += !differ;
			munmap(page, 8192);
		}
		check_report(changed > 0 && same > 0 && changed + same == 5000, "ehframe/made-up-flipped",
			     "%zu flips changed the rows, %zu did not", changed, same);
	}
}

int main(void)
{
	/* libraries with many FDEs of many compilers' styles, when installed: C++, Python's interpreter, LLVM */
	static const char *const more[] = { "libstdc++.so.6", "libsqlite3.so.0", "libpython3.11.so.1.0", "libLLVM-14.so.1" };
	struct tally all = { 0 };

	elf_version(EV_CURRENT);
	made_up_tables();
	for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
		dlopen(more[i], RTLD_LAZY | RTLD_LOCAL);
	dl_iterate_phdr(per_module, &all);
	printf("# %zu modules, %zu FDEs, %zu addresses: %zu differ, %zu unsupported; ours %.0f ns an address, libdw's %.0f\n",
	       all.modules, all.fdes, all.pcs, all.differ, all.ours_bad, all.ours_s / (double)all.pcs * 1e9,
	       all.dw_s / (double)all.pcs * 1e9);
	check_report(all.modules >= 5 && all.pcs >= 100000, "ehframe/libraries-read", "%zu modules, %zu addresses",
		     all.modules, all.pcs);
	check_report(all.differ == 0, "ehframe/rows-as-libdw", "%zu of %zu differ, first %s", all.differ, all.pcs,
		     all.first);
	check_report(all.ours_bad == 0, "ehframe/every-row-read", "%zu of %zu", all.ours_bad, all.pcs);
	{
		/* the C library's own, by name: every one of its FDEs */
		struct tally libc = { .want = "/libc.so.6" };
		dl_iterate_phdr(per_module, &libc);
		check_report(libc.modules == 1 && libc.fdes > 1000 && libc.differ == 0, "ehframe/libc-as-libdw",
			     "%zu modules, %zu FDEs, %zu differ: %s", libc.modules, libc.fdes, libc.differ, libc.first);
	}
	return check_failures != 0;
}
