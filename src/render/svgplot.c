/* svgplot.c - axes, ticks and legend shared by the timeline and lifetimes charts */
#include "svgplot.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "format.h"

#define TICKS 6        /* about this many ticks per axis */
#define LEGEND_ROW 16  /* pixels per legend line */

/* Unit of an axis: ms or s for times, B/KiB/MiB/GiB for bytes, picked from the largest value shown. */
static double unit_of(enum hs_svgplot_unit u, double max, const char **name)
{
	static const char *bytes[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double div = 1;
	int i = 0;

	if (u == HS_UNIT_NS) {
		if (max >= 1e9) {
			*name = "s";
			return 1e9;
		}
		if (max >= 1e6) {
			*name = "ms";
			return 1e6;
		}
		*name = "us";
		return 1e3;
	}
	while (max / div >= 1024 && i < 4) {
		div *= 1024;
		i++;
	}
	*name = bytes[i];
	return div;
}

/* 1, 2 or 5 times a power of ten, in the axis unit: ticks land on round numbers. */
static double nice_step(double range)
{
	double raw = range / TICKS, mag, r;

	if (raw <= 0)
		return 1;
	mag = pow(10, floor(log10(raw)));
	r = raw / mag;
	return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
}

const char *hs_svgplot_fmt(enum hs_svgplot_unit u, double v, char *buf, size_t n)
{
	const char *name;
	double div = unit_of(u, fabs(v), &name);

	snprintf(buf, n, "%.*f %s", fabs(v / div) < 10 && v != 0 ? 2 : 1, v / div, name);
	return buf;
}

double hs_svgplot_x(const struct hs_svgplot *p, double v)
{
	return p->left + (p->xmax > 0 ? v / p->xmax : 0) * p->w;
}

double hs_svgplot_y(const struct hs_svgplot *p, double v)
{
	return p->top + p->h - (p->ymax > 0 ? v / p->ymax : 0) * p->h;
}

/* Rounds the axis up to a whole tick and draws its grid lines and labels. */
static void axis(struct hs_svgplot *p, int vertical)
{
	enum hs_svgplot_unit u = vertical ? p->yunit : p->xunit;
	double *max = vertical ? &p->ymax : &p->xmax, div, step;
	const char *name;

	div = unit_of(u, *max, &name);
	step = nice_step(*max / div);
	*max = ceil(*max / div / step - 1e-9) * step * div;
	if (*max <= 0)
		*max = step * div;
	for (double v = 0; v <= *max / div + step / 2; v += step) {
		double pos = vertical ? hs_svgplot_y(p, v * div) : hs_svgplot_x(p, v * div);
		int dec = step < 1 ? (int)ceil(-log10(step) - 1e-9) : 0;
		if (vertical)
			fprintf(p->f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
				      "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.*f %s</text>\n",
				p->left, pos, p->left + p->w, pos, p->left - 6, pos + 4, dec, v, name);
		else
			fprintf(p->f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
				      "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.*f %s</text>\n",
				pos, p->top, pos, p->top + p->h, pos, p->top + p->h + 16, dec, v, name);
	}
}

void hs_svgplot_begin(struct hs_svgplot *p, FILE *f, int width, int height, int legend_rows, const char *title,
		      const char *subtitle, const char *xlabel, const char *ylabel)
{
	p->f = f;
	p->width = width;
	p->height = height + legend_rows * LEGEND_ROW;
	p->left = 90;
	p->top = 60;
	p->w = width - p->left - 30;
	p->h = height - p->top - 50;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		   "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" font-family=\"Verdana, sans-serif\" font-size=\"12\">\n"
		   "<style>.grid{stroke:#e4e4e4;stroke-width:1} .tick{fill:#555;font-size:11px} "
		   ".axis{stroke:#333;stroke-width:1;fill:none} .series{fill:none;stroke-width:1.5} "
		   ".marker{stroke:#b03030;stroke-width:1;stroke-dasharray:4,3} .mlabel{fill:#b03030;font-size:11px}</style>\n"
		   "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n<text x=\"%d\" y=\"22\" "
		   "text-anchor=\"middle\" font-size=\"16\">",
		width, p->height, width, p->height, width, p->height, width / 2);
	hs_xml_text(f, title);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"40\" text-anchor=\"middle\" fill=\"#555\">", width / 2);
	hs_xml_text(f, subtitle);
	fprintf(f, "</text>\n");
	axis(p, 0);
	axis(p, 1);
	fprintf(f, "<rect class=\"axis\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n", p->left, p->top, p->w, p->h);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", p->left + p->w / 2, p->top + p->h + 36);
	hs_xml_text(f, xlabel);
	fprintf(f, "</text>\n<text transform=\"translate(18,%.1f) rotate(-90)\" text-anchor=\"middle\">", p->top + p->h / 2);
	hs_xml_text(f, ylabel);
	fprintf(f, "</text>\n");
}

void hs_svgplot_legend(const struct hs_svgplot *p, int row, const char *colour, const char *dash, const char *text)
{
	double y = p->top + p->h + 56 + row * LEGEND_ROW;

	fprintf(p->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"%s%s%s/>"
		      "<text x=\"%.1f\" y=\"%.1f\">",
		p->left, y - 4, p->left + 24, y - 4, colour, dash ? " stroke-dasharray=\"" : "", dash ? dash : "",
		dash ? "\"" : "", p->left + 32, y);
	hs_xml_text(p->f, text);
	fprintf(p->f, "</text>\n");
}

int hs_svgplot_end(struct hs_svgplot *p)
{
	fprintf(p->f, "</svg>\n");
	return ferror(p->f) ? -EIO : 0;
}
