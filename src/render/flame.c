/* flame.c - flame graphs as SVG (with a small script for details, zoom and search) and as folded text */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "flame.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "../common/decimal.h"

#define WIDTH 1200
#define PAD 10
#define ROW 16
#define TOP 56
#define BOTTOM 34
#define CHAR_PX 7.0   /* average glyph advance of 12px monospace, for truncating labels */
#define MIN_PX 0.1    /* frames narrower than this are left out, and so are their subtrees */

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p;
}

/*
 * The folded lines as lists of interned frame names, not as text: a large
 * C++ program's 31,000 lines were 87 MB of text, a block each grown by
 * reallocation (340 MB allocated), and most of the command's time went to
 * malloc and to faulting those pages in. The names (12,600 of them there)
 * are kept once, in a table of names, and each line is their ids, named
 * by hs_flame_line (each step of the folded tree once).
 */
struct folded {
	struct hs_names names;
	struct hs_flame_steps *steps;
	uint32_t *ids;           /* every line's name ids, root first */
	size_t nids, ids_cap;
	size_t *start;           /* weight index k -> its line's first id in ids */
	uint32_t *count;         /* ... and how many */
};

static const double *rem_w;   /* qsort has no context argument in C11 */
static const struct folded *line_of;

/* Backtrace k's line as name ids, outermost frame first (its innermost HS_STACKS_MAX_FRAMES); -ENOMEM. */
static int folded_line(struct folded *fo, struct hs_stacks *st, uint32_t k)
{
	struct hs_flame_frame fr[HS_STACKS_MAX_FRAMES];
	int n = hs_flame_line(&fo->names, &fo->steps, st, k, fr);

	if (n < 0)
		return n;
	if (fo->nids + (size_t)n > fo->ids_cap) {
		size_t cap = fo->ids_cap ? fo->ids_cap : 4096;
		uint32_t *v;
		while (cap < fo->nids + (size_t)n)
			cap *= 2;
		if (!(v = realloc(fo->ids, cap * sizeof(*v))))
			return -ENOMEM;
		fo->ids = v;
		fo->ids_cap = cap;
	}
	fo->start[k] = fo->nids;
	while (n > 0)
		fo->ids[fo->nids++] = fr[--n].name;
	fo->count[k] = (uint32_t)(fo->nids - fo->start[k]);
	return 0;
}

/* strcmp() of lines x and y as written, names joined by ';', without writing them. */
static int line_cmp(const struct folded *fo, uint32_t x, uint32_t y)
{
	const uint32_t *a = fo->ids + fo->start[x], *b = fo->ids + fo->start[y];
	uint32_t na = fo->count[x], nb = fo->count[y], i;

	for (i = 0; i < na && i < nb && a[i] == b[i]; i++)
		;
	if (i == na || i == nb) {
		/* one line is the other's first names: the shorter ends where the longer has a ';' */
		return na == nb ? 0 : i == na ? -1 : 1;
	}
	{
		const unsigned char *s = (const unsigned char *)hs_names_str(&fo->names, a[i]);
		const unsigned char *t = (const unsigned char *)hs_names_str(&fo->names, b[i]);
		size_t j;
		int cs, ct;

		for (j = 0; s[j] && s[j] == t[j]; j++)
			;
		/* past a name's end comes ';' if its line goes on, else the end of the line */
		cs = s[j] ? s[j] : i + 1 < na ? ';' : 0;
		ct = t[j] ? t[j] : i + 1 < nb ? ';' : 0;
		return cs - ct;
	}
}

/* larger fractional part first; ties by the line, so output is the same whatever the ids */
static int cmp_remainder(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	double rx = rem_w[x] - floor(rem_w[x]), ry = rem_w[y] - floor(rem_w[y]);

	if (rx != ry)
		return rx < ry ? 1 : -1;
	return line_cmp(line_of, x, y);
}

/*
 * The lines in line_cmp's order: each name becomes its rank in text
 * order, then hs_flame_sort_lines sorts the lines of ranks (qsort with
 * line_cmp compared the long shared runs of callers of a large program's
 * lines again and again: a ninth of clang's folded stacks).
 *
 * A line's key at depth d is its name there and whether the line goes
 * on, since the text after a name is ';' or its end: "f" ending a line
 * sorts before "f::g", and "f;..." after it (':' < ';').
 */
struct name_keys {
	const struct hs_names *names;
	const uint32_t *len;     /* name id -> strlen */
};

static const struct name_keys *key_of;   /* qsort has no context argument in C11 */

/* Keys (name id * 2 + the line goes on) in text order: the name, then ';' or its end. */
static int cmp_name_key(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const unsigned char *s = (const unsigned char *)hs_names_str(key_of->names, x / 2);
	const unsigned char *t = (const unsigned char *)hs_names_str(key_of->names, y / 2);
	uint32_t ls = key_of->len[x / 2], lt = key_of->len[y / 2], m = ls < lt ? ls : lt;
	int c = memcmp(s, t, m), cs, ct;

	if (c)
		return c;
	cs = m < ls ? s[m] : x & 1 ? ';' : 0;
	ct = m < lt ? t[m] : y & 1 ? ';' : 0;
	return cs - ct;
}

/* order[0 .. n) as line_cmp orders them; -ENOMEM. */
static int sort_folded(const struct folded *fo, uint32_t *order, uint32_t n)
{
	size_t names = fo->names.n;
	uint32_t *keys = malloc(names * 2 * sizeof(*keys) + 1), *len = malloc(names * sizeof(*len) + 1);
	uint32_t *rank = malloc(names * 2 * sizeof(*rank) + 1), *line = malloc(fo->nids * sizeof(*line) + 1);
	struct name_keys nk = { .names = &fo->names, .len = len };
	int rc = 0;

	if (!keys || !len || !rank || !line) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t id = 0; id < names; id++) {
		len[id] = (uint32_t)strlen(hs_names_str(&fo->names, (uint32_t)id));
		keys[2 * id] = (uint32_t)(2 * id);
		keys[2 * id + 1] = (uint32_t)(2 * id + 1);
	}
	key_of = &nk;
	qsort(keys, names * 2, sizeof(*keys), cmp_name_key);
	for (size_t i = 0; i < names * 2; i++)
		rank[keys[i]] = (uint32_t)i;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = order[i], c = fo->count[k];
		for (uint32_t d = 0; d < c; d++)
			line[fo->start[k] + d] = rank[fo->ids[fo->start[k] + d] * 2 + (d + 1 < c)];
	}
	hs_flame_sort_lines(line, fo->start, fo->count, order, n);
out:
	free(keys);
	free(len);
	free(rank);
	free(line);
	return rc;
}

/* line_cmp(x, y) == 0, by their names' ids: a name has one id */
static int same_line(const struct folded *fo, uint32_t x, uint32_t y)
{
	return fo->count[x] == fo->count[y] &&
	       !memcmp(fo->ids + fo->start[x], fo->ids + fo->start[y], fo->count[x] * sizeof(*fo->ids));
}

/* A line of text being built, grown as needed. */
struct text {
	char *s;
	size_t n, cap;
	int err;   /* -ENOMEM once an append failed: the later ones do nothing, and the caller asks once */
};

/* Room for n more bytes, or t->err set */
static int text_reserve(struct text *t, size_t n)
{
	if (!t->err && t->n + n > t->cap) {
		size_t cap = t->cap ? t->cap : 4096;
		char *p;
		while (cap < t->n + n)
			cap *= 2;
		if (!(p = realloc(t->s, cap)))
			t->err = -ENOMEM;
		else {
			t->s = p;
			t->cap = cap;
		}
	}
	return t->err == 0;
}

static void text_add(struct text *t, const char *s, size_t n)
{
	if (text_reserve(t, n)) {
		memcpy(t->s + t->n, s, n);
		t->n += n;
	}
}

/*
 * Line k of the folded output with its weight, built whole for one write:
 * clang's 23,700 lines were 2.4M calls of fputs and putc, each through
 * stdio's checks and its file's jump table.
 */
static int line_put(struct text *t, const struct folded *fo, uint32_t k, uint64_t sum)
{
	char num[32];

	t->n = 0;
	for (uint32_t j = 0; j < fo->count[k]; j++) {
		const char *name = hs_names_str(&fo->names, fo->ids[fo->start[k] + j]);
		if (j)
			text_add(t, ";", 1);
		text_add(t, name, strlen(name));
	}
	text_add(t, num, (size_t)snprintf(num, sizeof(num), " %llu\n", (unsigned long long)sum));
	return t->err;
}

int hs_render_flame_folded(FILE *f, struct hs_stacks *st, const struct hs_flame *fl)
{
	struct text line = { 0 };
	size_t nw = fl->nw ? fl->nw : 1;
	uint64_t *out = calloc(nw, sizeof(*out));
	uint32_t *order = malloc(nw * sizeof(*order)), n = 0;
	struct folded fo = { .start = malloc(nw * sizeof(*fo.start)), .count = malloc(nw * sizeof(*fo.count)) };
	double floors = 0;
	int64_t missing;
	int rc = 0;

	if (!out || !order || !fo.start || !fo.count) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t k = 0; k < fl->nw; k++) {
		if (fl->w[k] <= 0)
			continue;
		if ((rc = folded_line(&fo, st, k)) < 0)
			goto out;
		out[k] = (uint64_t)floor(fl->w[k]);
		floors += floor(fl->w[k]);
		order[n++] = k;
	}
	line_of = &fo;
	/* estimates are fractional: hand the units lost to flooring to the largest remainders */
	missing = llround(fl->total) - (int64_t)llround(floors);
	if (missing > 0) {
		rem_w = fl->w;
		qsort(order, n, sizeof(*order), cmp_remainder);
		for (uint32_t i = 0; i < n && missing > 0; i++, missing--)
			out[order[i]]++;
	}
	/*
	 * Sorted like stackcollapse's output: the same text from any pass. As
	 * there, one line per text: backtraces that differ only by addresses
	 * (calls from two lines of one function) add up.
	 */
	if ((rc = sort_folded(&fo, order, n)) < 0)
		goto out;
	for (uint32_t i = 0; i < n;) {
		uint32_t k = order[i];
		uint64_t sum = 0;
		for (; i < n && same_line(&fo, k, order[i]); i++)
			sum += out[order[i]];
		if (!sum)
			continue;
		if ((rc = line_put(&line, &fo, k, sum)) < 0)
			goto out;
		fwrite(line.s, 1, line.n, f);
	}
	if (ferror(f))
		rc = -EIO;
out:
	free(line.s);
	hs_names_free(&fo.names);
	hs_flame_steps_free(fo.steps);
	free(fo.ids);
	free(fo.start);
	free(fo.count);
	free(out);
	free(order);
	return rc;
}

/* Greens through blues, so a memory graph never reads as a CPU profile; stable per name. */
static void colour(const char *name, int *r, int *g, int *b)
{
	uint32_t h = 2166136261u;
	double hue, sat, light, c, x, m, rr, gg, bb;

	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	hue = 95 + (double)(h % 1000) / 1000.0 * 130;   /* 95..225 degrees */
	sat = 0.40 + (double)(h / 1000 % 100) / 100.0 * 0.25;
	light = 0.55 + (double)(h / 100000 % 100) / 100.0 * 0.15;
	c = (1 - fabs(2 * light - 1)) * sat;
	x = c * (1 - fabs(fmod(hue / 60, 2) - 1));
	m = light - c / 2;
	if (hue < 120) { rr = x; gg = c; bb = 0; }
	else if (hue < 180) { rr = 0; gg = c; bb = x; }
	else { rr = 0; gg = x; bb = c; }
	*r = (int)lround((rr + m) * 255);
	*g = (int)lround((gg + m) * 255);
	*b = (int)lround((bb + m) * 255);
}

struct svg {
	FILE *f;
	const struct hs_flame *fl;
	double scale;             /* px per unit of weight */
	uint32_t depth;
	uint32_t *kids;           /* scratch for ordering children */
	struct text line;         /* the frame being written */
};

static const char *weight_label(enum hs_flame_weight w)
{
	switch (w) {
	case HS_WEIGHT_COUNT: return "allocations";
	case HS_WEIGHT_LEAKED: return "leaked";
	case HS_WEIGHT_LIVE: return "live";
	default: return "allocated";
	}
}

static void fmt_weight(const struct hs_flame *fl, double v, char *buf, size_t n)
{
	if (fl->weight == HS_WEIGHT_COUNT)
		hs_fmt_count(buf, n, v);
	else
		hs_fmt_bytes(buf, n, v);
}

static const struct hs_flame *sort_fl;

/* heaviest first, so the biggest consumers line up on the left */
static int cmp_kids(const void *a, const void *b)
{
	const struct hs_flame_node *x = &sort_fl->nodes[*(const uint32_t *)a], *y = &sort_fl->nodes[*(const uint32_t *)b];

	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	return strcmp(hs_names_str(&sort_fl->names, x->name), hs_names_str(&sort_fl->names, y->name));
}

/*
 * Node id's children, heaviest first, into the shared scratch past the
 * ancestors' entries (kids[0] counts them), so that recursion cannot
 * clobber them: at kids + 1 + *first, as many as it returns. Give them
 * back with kids[0] -= n.
 */
static uint32_t sorted_kids(const struct hs_flame *fl, uint32_t *kids, uint32_t id, uint32_t *first)
{
	uint32_t n = 0;

	for (uint32_t c = fl->nodes[id].first_child; c; c = fl->nodes[c].next_sibling)
		n++;
	*first = kids[0];
	kids[0] += n;
	n = 0;
	for (uint32_t c = fl->nodes[id].first_child; c; c = fl->nodes[c].next_sibling)
		kids[1 + *first + n++] = c;
	sort_fl = fl;
	qsort(&kids[1 + *first], n, sizeof(uint32_t), cmp_kids);
	return n;
}

/* Text escaped for XML at the end of t (len bytes of s) */
static void text_xml(struct text *t, const char *s, size_t len)
{
	/* room for the worst case, an entity for each byte */
	if (text_reserve(t, 6 * len))
		t->n += hs_xml_escape(t->s + t->n, s, len);
}

static void text_str(struct text *t, const char *s)
{
	text_add(t, s, strlen(s));
}

/* printf's "%.*f" of v */
static void text_fixed(struct text *t, double v, int decimals)
{
	char num[HS_FMT_FIXED_MAX];

	text_add(t, num, hs_fmt_fixed(num, sizeof(num), v, decimals));
}

static void text_int(struct text *t, long long v)
{
	char num[24];

	num[0] = '-';
	text_add(t, num + (v >= 0),
		 (v < 0) + hs_u64_to_str(num + 1, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v));
}

#define LABEL_MAX 511   /* bytes of a name that a frame's label shows at most */

/*
 * One frame's element, built whole and written at once: fprintf's
 * parsing and its formatting of nine numbers each, for clang's 41,000
 * frames, were a third of the command. 0 or -ENOMEM.
 */
static int frame_element(struct svg *s, const struct hs_flame_node *nd, const char *name, uint32_t depth, double x,
			 double w)
{
	const struct hs_flame *fl = s->fl;
	struct text *t = &s->line;
	double y = fl->down ? TOP + depth * ROW : TOP + (s->depth - depth) * ROW;
	size_t len = strlen(name), fit;
	char a[64], b[64];
	int r, g, bl;

	if (nd == fl->nodes) {
		r = 170; g = 190; bl = 200;
	} else {
		colour(name, &r, &g, &bl);
	}
	t->n = 0;
	fmt_weight(fl, nd->weight, a, sizeof(a));
	hs_fmt_count(b, sizeof(b), nd->count);
	fit = w < 3 * CHAR_PX ? 0 : (size_t)((w - 6) / CHAR_PX);
	text_str(t, "<g class=\"f\" data-x=\"");
	text_fixed(t, (x - PAD) / (WIDTH - 2 * PAD), 6);
	text_str(t, "\" data-w=\"");
	text_fixed(t, w / (WIDTH - 2 * PAD), 6);
	text_str(t, "\" data-d=\"");
	text_int(t, depth);
	text_str(t, "\" data-n=\"");
	text_xml(t, name, len);
	text_str(t, "\"><title>");
	text_xml(t, name, len);
	if (nd->inlined)
		text_str(t, " [inlined]");
	if (nd->file) {
		const char *file = base_name(nd->file);
		text_str(t, "\n");
		text_xml(t, file, strlen(file));
		if (nd->several_lines) {
			text_str(t, " (several lines)");
		} else {
			text_str(t, ":");
			text_int(t, nd->line);
		}
	}
	text_str(t, "\n");
	text_str(t, weight_label(fl->weight));
	text_str(t, ": ");
	text_str(t, a);
	text_str(t, " (");
	text_fixed(t, fl->total > 0 ? 100.0 * nd->weight / fl->total : 0.0, 2);
	text_str(t, "%), ");
	text_str(t, b);
	text_str(t, " allocations</title><rect x=\"");
	text_fixed(t, x, 2);
	text_str(t, "\" y=\"");
	text_fixed(t, y, 0);
	text_str(t, "\" width=\"");
	text_fixed(t, w, 2);
	text_str(t, "\" height=\"");
	text_int(t, ROW - 1);
	text_str(t, "\" fill=\"rgb(");
	text_int(t, r);
	text_str(t, ",");
	text_int(t, g);
	text_str(t, ",");
	text_int(t, bl);
	text_str(t, ")\" rx=\"2\"/><text x=\"");
	text_fixed(t, x + 3, 2);
	text_str(t, "\" y=\"");
	text_fixed(t, y + 11.5, 0);
	text_str(t, "\">");
	/* the label as fits, cut to fit - 2 bytes and "..": a name cut inside a UTF-8 sequence ends in U+FFFD */
	if (fit >= len) {
		text_xml(t, name, len);
	} else if (fit > 2) {
		text_xml(t, name, fit - 2 < LABEL_MAX ? fit - 2 : LABEL_MAX);
		text_str(t, "..");
	}
	text_str(t, "</text></g>\n");
	if (!t->err)
		fwrite(t->s, 1, t->n, s->f);
	return t->err;
}

static int frame(struct svg *s, uint32_t id, uint32_t depth, double x)
{
	const struct hs_flame *fl = s->fl;
	const struct hs_flame_node *nd = &fl->nodes[id];
	double w = nd->weight * s->scale;
	uint32_t first, n;
	int rc = 0;

	if (w < MIN_PX)
		return 0;
	if ((rc = frame_element(s, nd, hs_names_str(&fl->names, nd->name), depth, x, w)) < 0)
		return rc;
	n = sorted_kids(fl, s->kids, id, &first);
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		uint32_t c = s->kids[1 + first + i];
		rc = frame(s, c, depth + 1, x);
		x += fl->nodes[c].weight * s->scale;
	}
	s->kids[0] -= n;
	return rc;
}

static const char script[] =
	"var W=" "1200" ",PAD=10,CH=7,frames=[],details,matched,zoomed=null,term=null;\n"
	"function attr(e,n){return e.getAttribute(n);}\n"
	"function label(g,w){var n=attr(g,'data-n'),t=g.getElementsByTagName('text')[0],k=w<3*CH?0:Math.floor((w-6)/CH);\n"
	" t.textContent=k>=n.length?n:(k>2?n.substring(0,k-2)+'..':'');}\n"
	"function place(g,x,w){var r=g.getElementsByTagName('rect')[0],t=g.getElementsByTagName('text')[0],px=PAD+x*(W-2*PAD),pw=w*(W-2*PAD);\n"
	" r.setAttribute('x',px);r.setAttribute('width',pw);t.setAttribute('x',px+3);label(g,pw);}\n"
	"function zoom(z){zoomed=z;var x0=z?+attr(z,'data-x'):0,w0=z?+attr(z,'data-w'):1,d0=z?+attr(z,'data-d'):0,e=1e-9;\n"
	" for(var i=0;i<frames.length;i++){var g=frames[i],x=+attr(g,'data-x'),w=+attr(g,'data-w'),d=+attr(g,'data-d');\n"
	"  if(d>=d0&&x>=x0-e&&x+w<=x0+w0+e){g.style.display='';g.style.opacity='';place(g,(x-x0)/w0,w/w0);}\n"
	"  else if(d<d0&&x<=x0+e&&x+w>=x0+w0-e){g.style.display='';g.style.opacity='0.6';place(g,0,1);}\n"
	"  else g.style.display='none';}\n"
	" document.getElementById('reset').style.opacity=z?'1':'0.4';}\n"
	"function search(){var s=prompt('Search frames (regular expression):',term||'');if(s===null)return;mark(s);}\n"
	"function mark(s){term=s||null;var re=null;try{re=s?new RegExp(s):null;}catch(err){matched.textContent='bad regex: '+err.message;return;}\n"
	" var iv=[];for(var i=0;i<frames.length;i++){var g=frames[i],r=g.getElementsByTagName('rect')[0];\n"
	"  if(!attr(r,'data-fill'))r.setAttribute('data-fill',attr(r,'fill'));\n"
	"  if(re&&re.test(attr(g,'data-n'))){r.setAttribute('fill','rgb(230,90,200)');iv.push([+attr(g,'data-x'),+attr(g,'data-w')]);}\n"
	"  else r.setAttribute('fill',attr(r,'data-fill'));}\n"
	" iv.sort(function(a,b){return a[0]-b[0];});var sum=0,end=-1;\n"
	" for(var j=0;j<iv.length;j++){var a=iv[j][0],b=a+iv[j][1];if(b<=end)continue;sum+=b-Math.max(a,end);end=b;}\n"
	" matched.textContent=re?('matched \"'+s+'\": '+(100*sum).toFixed(2)+'% of all'):'';\n"
	" document.getElementById('clear').style.display=re?'':'none';}\n"
	"function init(){details=document.getElementById('details');matched=document.getElementById('matched');\n"
	" var gs=document.getElementsByTagName('g');for(var i=0;i<gs.length;i++)if(attr(gs[i],'class')=='f')frames.push(gs[i]);\n"
	" frames.forEach(function(g){var t=g.getElementsByTagName('title')[0].textContent;\n"
	"  g.addEventListener('mouseover',function(){details.textContent=t.replace(/\\n/g,'  |  ');});\n"
	"  g.addEventListener('mouseout',function(){details.textContent=' ';});\n"
	"  g.addEventListener('click',function(){zoom(g);});});\n"
	" document.getElementById('reset').addEventListener('click',function(){zoom(null);});\n"
	" document.getElementById('search').addEventListener('click',search);\n"
	" document.getElementById('clear').addEventListener('click',function(){mark('');});\n"
	" document.addEventListener('keydown',function(e){if((e.ctrlKey||e.metaKey)&&(e.key=='f'||e.key=='F')){e.preventDefault();search();}\n"
	"  else if(e.key=='Escape'){zoom(null);}});\n"
	" zoom(null);}\n"
	"window.addEventListener('load',init);\n";

/* One node and its subtree; kids: scratch as in frame(), past the ancestors' entries. */
static void json_node(FILE *f, const struct hs_flame *fl, uint32_t *kids, uint32_t id, unsigned indent)
{
	const struct hs_flame_node *nd = &fl->nodes[id];
	uint32_t first, n;

	fprintf(f, "{\"name\": ");
	hs_json_string(f, hs_names_str(&fl->names, nd->name));
	if (nd->file) {
		fprintf(f, ", \"file\": ");
		hs_json_string(f, nd->file);
		if (nd->several_lines)
			fprintf(f, ", \"several_lines\": true");
		else
			fprintf(f, ", \"line\": %d", nd->line);
	}
	if (nd->inlined)
		fprintf(f, ", \"inlined\": true");
	fprintf(f, ", \"value\": %.0f, \"count\": %.0f", nd->weight, nd->count);
	n = sorted_kids(fl, kids, id, &first);
	if (!n) {
		fputc('}', f);
		return;
	}
	fprintf(f, ", \"children\": [");
	for (uint32_t i = 0; i < n; i++) {
		fprintf(f, "%s\n%*s", i ? "," : "", (int)(indent + 1), "");
		json_node(f, fl, kids, kids[1 + first + i], indent + 1);
	}
	fputs("]}", f);
	kids[0] -= n;
}

int hs_render_flame_json(FILE *f, const struct hs_flame *fl, const char *path, const char *filter, int estimated)
{
	uint32_t *kids = calloc((size_t)fl->nnodes + 1, sizeof(*kids));

	if (!kids)
		return -ENOMEM;
	fprintf(f, "{\"schema\": \"heapscope-flame/1\", \"file\": ");
	hs_json_string(f, path);
	fprintf(f, ", \"filter\": ");
	hs_json_string(f, filter);
	fprintf(f, ",\n \"weight\": \"%s\", \"direction\": \"%s\", \"estimated\": %s, \"total\": %.0f, \"count\": %.0f",
		hs_flame_weight_names[fl->weight], fl->down ? "down" : "up", estimated ? "true" : "false", fl->total, fl->count);
	if (fl->weight == HS_WEIGHT_LIVE)
		fprintf(f, ", \"at_ns\": %llu", (unsigned long long)fl->at_ns);
	fprintf(f, ",\n \"root\": ");
	json_node(f, fl, kids, 0, 1);
	fprintf(f, "}\n");
	free(kids);
	return ferror(f) ? -EIO : 0;
}

double hs_render_flame_svg_keep(void)
{
	/* half of it, so that rounding never leaves out what a frame would show */
	return MIN_PX / (WIDTH - 2 * PAD) / 2;
}

int hs_render_flame_svg(FILE *f, const struct hs_flame *fl, const char *title, const char *subtitle)
{
	struct svg s = { .f = f, .fl = fl, .depth = fl->depth };
	uint32_t height = TOP + (fl->depth + 1) * ROW + BOTTOM;
	char a[64];
	int rc = 0;

	s.scale = fl->total > 0 ? (WIDTH - 2 * PAD) / fl->total : 0;
	s.kids = calloc((size_t)fl->nnodes + 1, sizeof(*s.kids));
	if (!s.kids)
		return -ENOMEM;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		   "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%u\" "
		   "viewBox=\"0 0 %d %u\" font-family=\"monospace\" font-size=\"12\">\n", WIDTH, height, WIDTH, height);
	fprintf(f, "<style>g.f text{pointer-events:none;fill:#102030}g.f:hover rect{stroke:#203040;stroke-width:1}"
		   ".btn{cursor:pointer;fill:#1a5a8a;text-decoration:underline}</style>\n");
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", script);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" fill=\"#f4f8fa\"/>\n", WIDTH, height);
	fprintf(f, "<text x=\"%d\" y=\"20\" text-anchor=\"middle\" font-size=\"15\">", WIDTH / 2);
	hs_xml_text(f, title);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"38\" text-anchor=\"middle\" fill=\"#405060\">", WIDTH / 2);
	hs_xml_text(f, subtitle);
	fmt_weight(fl, fl->total, a, sizeof(a));
	fprintf(f, " (total %s %s)</text>\n", weight_label(fl->weight), a);
	fprintf(f, "<text id=\"reset\" class=\"btn\" x=\"%d\" y=\"20\">Reset zoom</text>\n", PAD);
	fprintf(f, "<text id=\"search\" class=\"btn\" x=\"%d\" y=\"20\" text-anchor=\"end\">Search (Ctrl-F)</text>\n", WIDTH - PAD);
	fprintf(f, "<text id=\"clear\" class=\"btn\" x=\"%d\" y=\"38\" text-anchor=\"end\" style=\"display:none\">Clear search</text>\n",
		WIDTH - PAD);
	fprintf(f, "<text id=\"matched\" x=\"%d\" y=\"%u\" text-anchor=\"end\"> </text>\n", WIDTH - PAD, height - 12);
	fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", PAD, height - 12);
	if (fl->total > 0)
		rc = frame(&s, 0, 0, PAD);
	else
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no allocation matches the filter</text>\n", WIDTH / 2,
			TOP + ROW);
	fprintf(f, "</svg>\n");
	free(s.kids);
	free(s.line.s);
	return rc < 0 ? rc : ferror(f) ? -EIO : 0;
}
