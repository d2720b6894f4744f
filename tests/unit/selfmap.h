/* selfmap.h - the test binary's own load bias and loadable segments, as the tracer records a module's */
#ifndef HS_TEST_SELFMAP_H
#define HS_TEST_SELFMAP_H

#include <link.h>

#include "tracebuild.h"

struct self {
	uint64_t base;
	struct tb_seg segs[16];
	size_t nseg;
};

static int find_self_phdr(struct dl_phdr_info *info, size_t size, void *data)
{
	struct self *s = data;

	(void)size;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0;
	s->base = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum && s->nseg < 16; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD)
			s->segs[s->nseg++] = (struct tb_seg){ ph->p_vaddr, ph->p_memsz, ph->p_flags, ph->p_offset };
	}
	return 1;
}

/* 0, or -1 when the main program's segments cannot be found. */
static inline int find_self(struct self *s)
{
	memset(s, 0, sizeof(*s));
	return dl_iterate_phdr(find_self_phdr, s) && s->nseg ? 0 : -1;
}

#endif
