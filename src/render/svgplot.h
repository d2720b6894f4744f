/* svgplot.h - the frame of a self-contained SVG chart: title, plot area, axes with ticks in human units (s/ms, KiB/MiB) */
#ifndef HS_RENDER_SVGPLOT_H
#define HS_RENDER_SVGPLOT_H

#include <stdio.h>

enum hs_svgplot_unit { HS_UNIT_NS, HS_UNIT_BYTES };

struct hs_svgplot {
	FILE *f;
	int width, height;            /* of the whole image */
	double left, top, w, h;       /* the plot area, in pixels */
	double xmax, ymax;            /* data at the right and top edges; the origin is 0, 0 */
	enum hs_svgplot_unit xunit, yunit;
};

/*
 * Writes the XML prolog, the <svg> element, a white background, the title
 * and subtitle, and the axes (rounded up to a tick) with their labels.
 * The caller draws inside the plot area, then calls hs_svgplot_end.
 */
void hs_svgplot_begin(struct hs_svgplot *p, FILE *f, int width, int height, int legend_rows, const char *title,
		      const char *subtitle, const char *xlabel, const char *ylabel);
double hs_svgplot_x(const struct hs_svgplot *p, double v);
double hs_svgplot_y(const struct hs_svgplot *p, double v);
/* A data value as the axes show it: "1.50 s", "12.0 MiB". */
const char *hs_svgplot_fmt(enum hs_svgplot_unit u, double v, char *buf, size_t n);
/* One legend entry under the plot (row from 0): a swatch in `colour` and the text. */
void hs_svgplot_legend(const struct hs_svgplot *p, int row, const char *colour, const char *dash, const char *text);
/* Closes the document; 0, or -EIO when writing failed. */
int hs_svgplot_end(struct hs_svgplot *p);

#endif
