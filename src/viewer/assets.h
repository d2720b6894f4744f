/* assets.h - the page's files (web/), embedded at build time by build-aux/embed.sh into build/gen/assets.c */
#ifndef HS_VIEWER_ASSETS_H
#define HS_VIEWER_ASSETS_H

#include <stddef.h>

struct hs_asset {
	const char *name;            /* file name under web/, e.g. "app.js" */
	const unsigned char *data;
	size_t size;
};

extern const struct hs_asset hs_assets[];
extern const size_t hs_nassets;

#endif
