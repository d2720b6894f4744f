/* debuginfo.h - the symbolizer's way to a module's separate debug file (a libdwfl find_debuginfo callback) */
#ifndef HS_FORMAT_DEBUGINFO_H
#define HS_FORMAT_DEBUGINFO_H

#include <elfutils/libdwfl.h>

/*
 * dwfl_standard_find_debuginfo's search, with compressed debug files taken
 * from an inflated copy kept by build-id ($HEAPSCOPE_CACHE_DIR, else
 * $XDG_CACHE_HOME/heapscope, else ~/.cache/heapscope; "off" keeps none),
 * and debuginfod asked only when DEBUGINFOD_URLS names a server.
 */
int hs_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base, const char *file_name,
		      const char *debuglink_file, GElf_Word debuglink_crc, char **debuginfo_file_name);

#endif
