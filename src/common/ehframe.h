/* ehframe.h - the unwind row of an address, read in place from a loaded module's .eh_frame through its .eh_frame_hdr */
#ifndef HS_COMMON_EHFRAME_H
#define HS_COMMON_EHFRAME_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A module's tables as the loader mapped them: no file is opened, nothing
 * is allocated, and no read leaves [lo, hi), the loaded segment that holds
 * .eh_frame_hdr (and, as linkers lay them out, .eh_frame): corrupt tables
 * give an error, never a fault.
 */
struct hs_eh_frame {
	uintptr_t hdr;       /* .eh_frame_hdr */
	uintptr_t table;     /* its search table: count pairs of int32 (start, FDE), from hdr */
	size_t count;
	uintptr_t lo, hi;
};

/* Register numbers are DWARF's for x86-64: the rows keep rbp's rule and the return address's. */
#define HS_EH_REG_BP 6
#define HS_EH_REG_SP 7
#define HS_EH_REG_RA 16

enum hs_eh_rule {
	HS_EH_SAME = 0,    /* unchanged: the caller's value is the callee's (rbp unmentioned, as the ABI has it) */
	HS_EH_UNDEF = 1,   /* no value: for the return address, the outermost frame */
	HS_EH_OFFSET = 2,  /* saved at CFA + off */
	HS_EH_OTHER = 3,   /* anything else: in a register, an expression, a value rule */
	HS_EH_UNSPEC = 4,  /* the return address's rule never given */
};

struct hs_eh_reg {
	int rule;
	int64_t off;
};

/* The row of the CFI table at an address: how to find the caller's frame. */
struct hs_eh_row {
	int cfa_expr;        /* the CFA is a DWARF expression: cfa_reg and cfa_off mean nothing */
	unsigned cfa_reg;
	int64_t cfa_off;
	struct hs_eh_reg ra, bp;
	int signal_frame;    /* the CIE says 'S': the frame of a signal handler's return */
};

/*
 * Where the tables of the module whose program headers are ph[0..phnum)
 * (loaded at bias) are, from the headers alone (no read of the tables, so
 * no page of them touched): 0, or -1 (and lo 0) when it has no
 * .eh_frame_hdr in a loaded segment. count stays 0 until hs_eh_frame_open.
 */
int hs_eh_frame_of(const ElfW(Phdr) *ph, size_t phnum, uintptr_t bias, struct hs_eh_frame *out);

/* Reads the header's search table: 0, or -1 when it has none that this reader takes. */
int hs_eh_frame_open(struct hs_eh_frame *f);

/*
 * The row at pc (a return address minus one, inside the call): 1 and *row;
 * 0 when no FDE covers pc; -1 when the tables are corrupt or use what this
 * reader does not (an encoding, a CFA instruction, a CIE augmentation).
 */
int hs_eh_row_at(const struct hs_eh_frame *f, uintptr_t pc, struct hs_eh_row *row);

#endif
