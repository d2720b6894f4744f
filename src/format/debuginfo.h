/* debuginfo.h - the symbolizer's way to a module's separate debug file (a libdwfl find_debuginfo callback) */
#ifndef HS_FORMAT_DEBUGINFO_H
#define HS_FORMAT_DEBUGINFO_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

/*
 * dwfl_standard_find_debuginfo's search, with compressed debug files taken
 * from an inflated copy kept by build-id ($HEAPSCOPE_CACHE_DIR, else
 * $XDG_CACHE_HOME/heapscope, else ~/.cache/heapscope; "off" keeps none),
 * and debuginfod asked only when DEBUGINFOD_URLS names a server. The
 * cache stays under hs_debug_cache_max() bytes: the files used least
 * lately go first.
 */
int hs_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base, const char *file_name,
		      const char *debuglink_file, GElf_Word debuglink_crc, char **debuginfo_file_name);

/* HEAPSCOPE_CACHE_MAX ("500M", "4G"; 0 keeps nothing), else 2 GiB; -EINVAL when it is malformed. */
int hs_debug_cache_max(uint64_t *bytes);

#endif
