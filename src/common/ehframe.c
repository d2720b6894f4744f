/* ehframe.c - CFI rows from .eh_frame in place (bounded reads, no allocation): the tracer's unwind rules */
#include <stdint.h>
#include <string.h>

#include "ehframe.h"
#include "varint.h"

/*
 * Why not libdw, which the tracer used: dwarf_cfi_addrframe interns every
 * FDE and CIE it meets with malloc and tsearch, in the traced program's
 * heap. A sampled clang (824 samples, each through ~36 new return
 * addresses) called malloc 300,000 times from inside the tracer, and its
 * heap grew to 29.2 MB against 16.2 MB untraced. Reading the loaded tables in place
 * is what libgcc's and libunwind's own unwinders do; this one also checks
 * every read against the segment's bounds.
 */

/* DWARF pointer encodings (DW_EH_PE_*) */
enum {
	PE_ABSPTR = 0x00, PE_ULEB128 = 0x01, PE_UDATA2 = 0x02, PE_UDATA4 = 0x03, PE_UDATA8 = 0x04,
	PE_SLEB128 = 0x09, PE_SDATA2 = 0x0a, PE_SDATA4 = 0x0b, PE_SDATA8 = 0x0c,
	PE_PCREL = 0x10, PE_DATAREL = 0x30, PE_INDIRECT = 0x80, PE_OMIT = 0xff,
};

/* Call frame instructions (DW_CFA_*) */
enum {
	CFA_ADVANCE_LOC = 0x40, CFA_OFFSET = 0x80, CFA_RESTORE = 0xc0,
	CFA_NOP = 0x00, CFA_SET_LOC = 0x01, CFA_ADVANCE_LOC1 = 0x02, CFA_ADVANCE_LOC2 = 0x03,
	CFA_ADVANCE_LOC4 = 0x04, CFA_OFFSET_EXTENDED = 0x05, CFA_RESTORE_EXTENDED = 0x06,
	CFA_UNDEFINED = 0x07, CFA_SAME_VALUE = 0x08, CFA_REGISTER = 0x09, CFA_REMEMBER_STATE = 0x0a,
	CFA_RESTORE_STATE = 0x0b, CFA_DEF_CFA = 0x0c, CFA_DEF_CFA_REGISTER = 0x0d, CFA_DEF_CFA_OFFSET = 0x0e,
	CFA_DEF_CFA_EXPRESSION = 0x0f, CFA_EXPRESSION = 0x10, CFA_OFFSET_EXTENDED_SF = 0x11,
	CFA_DEF_CFA_SF = 0x12, CFA_DEF_CFA_OFFSET_SF = 0x13, CFA_VAL_OFFSET = 0x14,
	CFA_VAL_OFFSET_SF = 0x15, CFA_VAL_EXPRESSION = 0x16, CFA_GNU_ARGS_SIZE = 0x2e,
	CFA_GNU_NEGATIVE_OFFSET_EXTENDED = 0x2f,
};

/* remember_state nesting kept; gcc's code nests one or two */
#define STATES 16

struct cur {
	uintptr_t p, end;
};

static int get(struct cur *c, void *out, size_t n)
{
	if (c->p > c->end || c->end - c->p < n)
		return -1;
	memcpy(out, (const void *)c->p, n);
	c->p += n;
	return 0;
}

static int u8(struct cur *c, uint8_t *v)
{
	return get(c, v, 1);
}

/* An unsigned LEB128 number: the trace format's varint */
static int uleb(struct cur *c, uint64_t *v)
{
	const uint8_t *p = (const uint8_t *)c->p;

	if (c->p > c->end || hs_varint_get(&p, (const uint8_t *)c->end, v) < 0)
		return -1;
	c->p = (uintptr_t)p;
	return 0;
}

/* A signed LEB128 number, sign-extended from its last byte's bit 6 */
static int sleb(struct cur *c, int64_t *v)
{
	uint64_t r = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (u8(c, &b) < 0 || shift > 63)
			return -1;
		r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		r |= ~(uint64_t)0 << shift;
	*v = (int64_t)r;
	return 0;
}

/* n little-endian bytes (1, 2, 4 or 8); signed, sign-extended */
static int fixed(struct cur *c, unsigned n, int is_signed, uint64_t *v)
{
	uint64_t x = 0;

	if (get(c, &x, n) < 0)
		return -1;
	if (is_signed && n < 8 && (x >> (8 * n - 1) & 1))
		x |= ~(uint64_t)0 << (8 * n);
	*v = x;
	return 0;
}

/* A value of encoding enc; datarel from data. The indirect bit is left to the caller (only skipped values have it). */
static int encoded(struct cur *c, uint8_t enc, uintptr_t data, uint64_t *v)
{
	uintptr_t at = c->p;
	uint64_t x = 0;
	int rc;

	switch (enc & 0x0f) {
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SDATA8:
		rc = fixed(c, 8, 0, &x);
		break;
	case PE_ULEB128:
		rc = uleb(c, &x);
		break;
	case PE_SLEB128: {
		int64_t sx;
		rc = sleb(c, &sx);
		x = (uint64_t)sx;
		break;
	}
	case PE_UDATA2:
	case PE_SDATA2:
		rc = fixed(c, 2, (enc & 0x0f) == PE_SDATA2, &x);
		break;
	case PE_UDATA4:
	case PE_SDATA4:
		rc = fixed(c, 4, (enc & 0x0f) == PE_SDATA4, &x);
		break;
	default:
		return -1;
	}
	if (rc < 0)
		return -1;
	switch (enc & 0x70) {
	case 0:
		break;
	case PE_PCREL:
		x += at;
		break;
	case PE_DATAREL:
		x += data;
		break;
	default:
		return -1; /* textrel, funcrel, aligned: not in x86-64 .eh_frame */
	}
	*v = x;
	return 0;
}

int hs_eh_frame_of(const ElfW(Phdr) *ph, size_t phnum, uintptr_t bias, struct hs_eh_frame *out)
{
	const ElfW(Phdr) *eh = NULL;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_GNU_EH_FRAME)
			eh = &ph[i];
	if (!eh)
		return -1;
	out->hdr = bias + eh->p_vaddr;
	for (size_t i = 0; i < phnum; i++) {
		uintptr_t lo = bias + ph[i].p_vaddr;
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_R) && out->hdr >= lo && out->hdr - lo < ph[i].p_filesz) {
			out->lo = lo;
			out->hi = lo + ph[i].p_filesz;
		}
	}
	return out->lo ? 0 : -1;
}

int hs_eh_frame_open(struct hs_eh_frame *f)
{
	struct cur c = { f->hdr, f->hi };
	uint8_t hdr[4];
	uint64_t frame, count;

	f->count = 0;
	/* version 1; the table sorted, of (start, FDE) as int32s from the header: what every linker writes */
	if (!f->lo || get(&c, hdr, 4) < 0 || hdr[0] != 1 || hdr[3] != (PE_DATAREL | PE_SDATA4) || hdr[2] == PE_OMIT ||
	    encoded(&c, hdr[1], f->hdr, &frame) < 0 || encoded(&c, hdr[2], f->hdr, &count) < 0 ||
	    count > (f->hi - c.p) / 8)
		return -1;
	f->table = c.p;
	f->count = (size_t)count;
	return 0;
}

/* What a CIE says, for its FDEs */
struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;
	int has_z, signal;
	uintptr_t insns, insns_end;
};

/*
 * The entry (CIE or FDE) at p: where its id field is, where its body goes
 * on after that field, where it ends, and the id (0 for a CIE; for an FDE,
 * how far back from the id field its CIE is).
 */
static int entry(uintptr_t p, const struct hs_eh_frame *f, uintptr_t *id_at, struct cur *body, uint64_t *id)
{
	struct cur c = { p, f->hi };
	uint32_t len32, id32;
	uint64_t len;

	if (p < f->lo || get(&c, &len32, 4) < 0 || len32 == 0)
		return -1;
	if (len32 == 0xffffffffu) {
		/* 64-bit DWARF: an 8-byte length and id */
		if (get(&c, &len, 8) < 0 || len > f->hi - c.p)
			return -1;
		*id_at = c.p;
		c.end = c.p + len;
		if (get(&c, id, 8) < 0)
			return -1;
	} else {
		if (len32 > f->hi - c.p)
			return -1;
		*id_at = c.p;
		c.end = c.p + len32;
		if (get(&c, &id32, 4) < 0)
			return -1;
		*id = id32;
	}
	*body = c;
	return 0;
}

/* A factored offset, within bounds that no real table comes near (so that nothing overflows) */
static int factor(int64_t v, int64_t align, int64_t *out)
{
	if (v > ((int64_t)1 << 40) || v < -((int64_t)1 << 40))
		return -1;
	*out = v * align;
	return 0;
}

static int parse_cie(uintptr_t p, const struct hs_eh_frame *f, struct cie *cie)
{
	uintptr_t id_at;
	uint64_t id, ra;
	struct cur c;
	char aug[16];
	size_t n = 0;
	uint8_t version, b;

	if (entry(p, f, &id_at, &c, &id) < 0 || id != 0)
		return -1;
	if (u8(&c, &version) < 0 || (version != 1 && version != 3 && version != 4))
		return -1;
	do {
		if (u8(&c, &b) < 0 || n == sizeof(aug))
			return -1;
		aug[n++] = (char)b;
	} while (b);
	if (version == 4 && (u8(&c, &b) < 0 || b != 8 || u8(&c, &b) < 0 || b != 0))
		return -1; /* address size 8, no segment selector */
	if (uleb(&c, &cie->code_align) < 0 || sleb(&c, &cie->data_align) < 0 || cie->code_align == 0 ||
	    cie->code_align > 256 || cie->data_align > 256 || cie->data_align < -256)
		return -1;
	if (version == 1) {
		if (u8(&c, &b) < 0)
			return -1;
		ra = b;
	} else if (uleb(&c, &ra) < 0) {
		return -1;
	}
	(void)ra; /* the rows keep register 16's rule, x86-64's return address, whatever the CIE names */
	cie->fde_enc = PE_ABSPTR;
	cie->has_z = aug[0] == 'z';
	cie->signal = 0;
	if (cie->has_z) {
		uint64_t len, skip;
		uintptr_t data_end;
		if (uleb(&c, &len) < 0 || len > c.end - c.p)
			return -1;
		data_end = c.p + len;
		for (const char *a = aug + 1; *a; a++) {
			if (*a == 'R') {
				if (u8(&c, &cie->fde_enc) < 0)
					return -1;
			} else if (*a == 'P') {
				uint8_t enc;
				if (u8(&c, &enc) < 0 || encoded(&c, enc & 0x7f, 0, &skip) < 0)
					return -1;
			} else if (*a == 'L') {
				if (u8(&c, &b) < 0)
					return -1;
			} else if (*a == 'S') {
				cie->signal = 1;
			} else if (*a != 'B' && *a != 'G') {
				return -1; /* its data's size unknown: an 'R' after it could not be found */
			}
		}
		if (c.p > data_end)
			return -1;
		c.p = data_end;
	} else if (aug[0]) {
		return -1; /* "eh" and other pre-'z' augmentations: gcc 2's */
	}
	cie->insns = c.p;
	cie->insns_end = c.end;
	return 0;
}

/* The state the instructions change is a row (its signal_frame is the CIE's, set at the end) */
static struct hs_eh_reg *tracked(struct hs_eh_row *s, uint64_t reg)
{
	if (reg == HS_EH_REG_RA)
		return &s->ra;
	if (reg == HS_EH_REG_BP)
		return &s->bp;
	return NULL;
}

/* DW_CFA_restore: reg's rule back to what the CIE's instructions left (initial NULL: in the CIE, an error) */
static int restore(struct hs_eh_row *s, const struct hs_eh_row *initial, uint64_t reg)
{
	if (!initial)
		return -1;
	if (reg == HS_EH_REG_RA)
		s->ra = initial->ra;
	else if (reg == HS_EH_REG_BP)
		s->bp = initial->bp;
	return 0;
}

static void set_rule(struct hs_eh_row *s, uint64_t reg, int rule, int64_t off)
{
	struct hs_eh_reg *r = tracked(s, reg);

	if (r) {
		r->rule = rule;
		r->off = off;
	}
}

/*
 * Runs the instructions [c) from location loc up to the row of pc (all of
 * them when pc is ~0: a CIE's). 0, or -1: corrupt or unsupported.
 */
static int run(struct cur *c, const struct cie *cie, const struct hs_eh_frame *f, uintptr_t loc, uintptr_t pc,
	       struct hs_eh_row *s, const struct hs_eh_row *initial)
{
	struct hs_eh_row saved[STATES];
	int nsaved = 0;
	uint64_t reg, u, delta;
	int64_t off;
	uint8_t op;

	while (c->p < c->end) {
		if (u8(c, &op) < 0)
			return -1;
		delta = 0;
		switch (op & 0xc0) {
		case CFA_ADVANCE_LOC:
			delta = op & 0x3f;
			goto advance;
		case CFA_OFFSET:
			if (uleb(c, &u) < 0 || u > INT64_MAX || factor((int64_t)u, cie->data_align, &off) < 0)
				return -1;
			set_rule(s, op & 0x3f, HS_EH_OFFSET, off);
			continue;
		case CFA_RESTORE:
			if (restore(s, initial, op & 0x3f) < 0)
				return -1;
			continue;
		}
		switch (op) {
		case CFA_NOP:
		case CFA_GNU_ARGS_SIZE:
			if (op == CFA_GNU_ARGS_SIZE && uleb(c, &u) < 0)
				return -1;
			break;
		case CFA_SET_LOC: {
			uint64_t to;
			if (!initial || encoded(c, cie->fde_enc, f->hdr, &to) < 0)
				return -1;
			if (to > pc)
				return 0;
			loc = (uintptr_t)to;
			break;
		}
		case CFA_ADVANCE_LOC1:
		case CFA_ADVANCE_LOC2:
		case CFA_ADVANCE_LOC4:
			/* a delta of 1, 2 or 4 bytes */
			if (fixed(c, 1u << (op - CFA_ADVANCE_LOC1), 0, &u) < 0)
				return -1;
			delta = u;
			goto advance;
		case CFA_OFFSET_EXTENDED:
			if (uleb(c, &reg) < 0 || uleb(c, &u) < 0 || u > INT64_MAX || factor((int64_t)u, cie->data_align, &off) < 0)
				return -1;
			set_rule(s, reg, HS_EH_OFFSET, off);
			break;
		case CFA_OFFSET_EXTENDED_SF:
			if (uleb(c, &reg) < 0 || sleb(c, &off) < 0 || factor(off, cie->data_align, &off) < 0)
				return -1;
			set_rule(s, reg, HS_EH_OFFSET, off);
			break;
		case CFA_GNU_NEGATIVE_OFFSET_EXTENDED:
			if (uleb(c, &reg) < 0 || uleb(c, &u) < 0 || u > INT64_MAX || factor(-(int64_t)u, cie->data_align, &off) < 0)
				return -1;
			set_rule(s, reg, HS_EH_OFFSET, off);
			break;
		case CFA_RESTORE_EXTENDED:
			if (uleb(c, &reg) < 0 || restore(s, initial, reg) < 0)
				return -1;
			break;
		case CFA_UNDEFINED:
		case CFA_SAME_VALUE:
			if (uleb(c, &reg) < 0)
				return -1;
			set_rule(s, reg, op == CFA_UNDEFINED ? HS_EH_UNDEF : HS_EH_SAME, 0);
			break;
		case CFA_REGISTER:
		case CFA_VAL_OFFSET:
			if (uleb(c, &reg) < 0 || uleb(c, &u) < 0)
				return -1;
			set_rule(s, reg, HS_EH_OTHER, 0);
			break;
		case CFA_VAL_OFFSET_SF:
			if (uleb(c, &reg) < 0 || sleb(c, &off) < 0)
				return -1;
			set_rule(s, reg, HS_EH_OTHER, 0);
			break;
		case CFA_EXPRESSION:
		case CFA_VAL_EXPRESSION:
			if (uleb(c, &reg) < 0 || uleb(c, &u) < 0 || u > c->end - c->p)
				return -1;
			c->p += u;
			set_rule(s, reg, HS_EH_OTHER, 0);
			break;
		case CFA_REMEMBER_STATE:
			if (nsaved == STATES)
				return -1;
			saved[nsaved++] = *s;
			break;
		case CFA_RESTORE_STATE:
			/* the CFA's rule too, as libgcc, libunwind and libdw have it: gcc's ".cfi_remember_state; .cfi_def_cfa 7, 8; ret; .cfi_restore_state" needs it */
			if (nsaved == 0)
				return -1;
			*s = saved[--nsaved];
			break;
		case CFA_DEF_CFA:
			if (uleb(c, &reg) < 0 || uleb(c, &u) < 0 || u > INT64_MAX)
				return -1;
			s->cfa_expr = 0;
			s->cfa_reg = (unsigned)reg;
			s->cfa_off = (int64_t)u;
			break;
		case CFA_DEF_CFA_SF:
			if (uleb(c, &reg) < 0 || sleb(c, &off) < 0)
				return -1;
			s->cfa_expr = 0;
			s->cfa_reg = (unsigned)reg;
			if (factor(off, cie->data_align, &s->cfa_off) < 0)
				return -1;
			break;
		case CFA_DEF_CFA_REGISTER:
			if (uleb(c, &reg) < 0)
				return -1;
			s->cfa_expr = 0;
			s->cfa_reg = (unsigned)reg;
			break;
		case CFA_DEF_CFA_OFFSET:
			if (uleb(c, &u) < 0 || u > INT64_MAX)
				return -1;
			s->cfa_off = (int64_t)u;
			break;
		case CFA_DEF_CFA_OFFSET_SF:
			if (sleb(c, &off) < 0 || factor(off, cie->data_align, &s->cfa_off) < 0)
				return -1;
			break;
		case CFA_DEF_CFA_EXPRESSION:
			if (uleb(c, &u) < 0 || u > c->end - c->p)
				return -1;
			c->p += u;
			s->cfa_expr = 1;
			break;
		default:
			return -1; /* vendor instructions of other machines */
		}
		continue;
advance:
		if (!initial)
			return -1; /* a CIE's instructions have no locations */
		if (delta * cie->code_align > pc - loc)
			return 0; /* the next row starts past pc */
		loc += delta * cie->code_align;
	}
	return 0;
}

int hs_eh_row_at(const struct hs_eh_frame *f, uintptr_t pc, struct hs_eh_row *row)
{
	const int32_t *tab = (const int32_t *)f->table;
	size_t lo = 0, hi = f->count;
	int64_t rel = (int64_t)(pc - f->hdr);
	uintptr_t fde, id_at;
	uint64_t id, start, range;
	struct hs_eh_row initial, s;
	struct cie cie;
	struct cur c;
	int32_t e[2];

	if (!f->count)
		return -1;
	/* the last entry that starts at or before pc */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		memcpy(e, tab + 2 * mid, sizeof(e));
		if (e[0] <= rel)
			lo = mid;
		else
			hi = mid;
	}
	memcpy(e, tab + 2 * lo, sizeof(e));
	if (e[0] > rel)
		return 0;
	fde = f->hdr + (uintptr_t)(intptr_t)e[1];
	if (entry(fde, f, &id_at, &c, &id) < 0 || id == 0 || id > id_at || parse_cie(id_at - id, f, &cie) < 0)
		return -1;
	if ((cie.fde_enc & PE_INDIRECT) || encoded(&c, cie.fde_enc, f->hdr, &start) < 0 ||
	    encoded(&c, cie.fde_enc & 0x0f, 0, &range) < 0)
		return -1;
	if (pc < start || pc - start >= range)
		return 0;
	if (cie.has_z) {
		uint64_t len;
		if (uleb(&c, &len) < 0 || len > c.end - c.p)
			return -1;
		c.p += len;
	}
	memset(&initial, 0, sizeof(initial));
	initial.ra.rule = HS_EH_UNSPEC;
	initial.bp.rule = HS_EH_SAME;
	{
		struct cur ci = { cie.insns, cie.insns_end };
		if (run(&ci, &cie, f, 0, ~(uintptr_t)0, &initial, NULL) < 0)
			return -1;
	}
	s = initial;
	if (run(&c, &cie, f, (uintptr_t)start, pc, &s, &initial) < 0)
		return -1;
	*row = s;
	row->signal_frame = cie.signal;
	return 1;
}
