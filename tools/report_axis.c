/* SPDX-License-Identifier: MIT */
/*
 * report_axis.c - the address axis (see report_axis.h).
 *
 * Intervals are inclusive [lo, hi] throughout: a range may end at 2^64,
 * which no uint64_t holds.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/partition.h"   /* AC_PARTITION, the one binary search */
#include "certify/json_text.h"
#include "report_axis.h"

/* Share of its pane an elementary interval gets, before normalising:
 * its share of the pane's bytes, clamped. */
#define MIN_SHARE 0.004   /* any interval: thin tensors stay visible */
#define MAX_EMPTY 0.12    /* an interval no tensor covers */
#define PANE_SPACE 0.35   /* space between panes, in pane weights */
#define MAX_TICKS 4000    /* address labels offered per pane */

enum { IV_WINDOW, IV_GLOBAL, IV_PLANE };

struct ival {
	uint64_t lo, hi;
	int kind;
};

/* What covers an elementary interval. */
enum { COVER_GLOBAL = 1, COVER_PLANE = 2 };

struct seg {
	uint64_t lo, hi;
	uint32_t y0, y1;
	int cover;             /* COVER_* */
};

struct pane {
	uint64_t lo, hi;
	uint32_t y0, y1;
	size_t seg_first, seg_count;
};

struct axis {
	const struct ac_model *m;
	struct pane *panes;
	size_t n_panes;
	struct seg *segs;
	size_t n_segs;
};

static int cmp_ival(const void *pa, const void *pb)
{
	const struct ival *a = pa, *b = pb;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return (a->hi > b->hi) - (a->hi < b->hi);
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return (a > b) - (a < b);
}

/* A tensor's bytes; an empty one is shown as the byte at its offset. */
static struct ival tensor_ival(const struct ac_tensor *t, int kind)
{
	struct ival v = { t->offset, t->offset, kind };
	if (t->size)
		v.hi = t->size - 1 > UINT64_MAX - t->offset ? UINT64_MAX
							    : t->offset + (t->size - 1);
	return v;
}

static struct ival *collect(const struct ac_model *m, size_t *n)
{
	size_t cap = (size_t)m->n_windows + m->n_globals + m->n_planes;
	struct ival *v = malloc((cap + 1) * sizeof(*v));
	if (!v)
		return NULL;
	size_t k = 0;
	for (uint32_t i = 0; i < m->n_windows; i++) {
		const struct ac_window *w = &m->windows[i];
		uint64_t hi = w->size - 1 > UINT64_MAX - w->base ? UINT64_MAX
								 : w->base + (w->size - 1);
		if (w->size)
			v[k++] = (struct ival){ w->base, hi, IV_WINDOW };
	}
	for (uint32_t i = 0; i < m->n_globals; i++)
		v[k++] = tensor_ival(&m->globals[i], IV_GLOBAL);
	for (uint32_t i = 0; i < m->n_planes; i++)
		v[k++] = tensor_ival(&m->planes[i], IV_PLANE);
	qsort(v, k, sizeof(*v), cmp_ival);
	*n = k;
	return v;
}

/* Intervals that overlap or touch make one pane. */
static int make_panes(struct axis *a, const struct ival *v, size_t n)
{
	a->panes = malloc((n + 1) * sizeof(*a->panes));
	if (!a->panes)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct pane *p = a->n_panes ? &a->panes[a->n_panes - 1] : NULL;
		if (p && (p->hi == UINT64_MAX || v[i].lo <= p->hi + 1)) {
			if (v[i].hi > p->hi)
				p->hi = v[i].hi;
		} else {
			a->panes[a->n_panes++] = (struct pane){ v[i].lo, v[i].hi,
								0, 0, 0, 0 };
		}
	}
	return 0;
}

/* The pane holding address x, or n_panes. */
static size_t find_pane(const struct axis *a, uint64_t x)
{
	size_t lo;
	AC_PARTITION(size_t, lo, a->n_panes, i, a->panes[i].hi < x);
	return lo < a->n_panes && a->panes[lo].lo <= x ? lo : a->n_panes;
}

/* Cut points: every interval's start and the byte after its end, and the
 * extra intervals' where they fall inside a pane. */
static uint64_t *cut_points(const struct axis *a, const struct ival *v,
			    size_t n, const uint64_t *extra, size_t n_extra,
			    size_t *out_n)
{
	uint64_t *c = malloc((2 * n + 2 * n_extra + 1) * sizeof(*c));
	if (!c)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		c[k++] = v[i].lo;
		if (v[i].hi != UINT64_MAX)
			c[k++] = v[i].hi + 1;
	}
	for (size_t i = 0; i < n_extra; i++) {
		uint64_t lo = extra[2 * i], hi = extra[2 * i + 1];
		if (find_pane(a, lo) < a->n_panes)
			c[k++] = lo;
		if (hi != UINT64_MAX && find_pane(a, hi) < a->n_panes)
			c[k++] = hi + 1;
	}
	qsort(c, k, sizeof(*c), cmp_u64);
	size_t u = 0;
	for (size_t i = 0; i < k; i++)
		if (u == 0 || c[i] != c[u - 1])
			c[u++] = c[i];
	*out_n = u;
	return c;
}

static int make_segs(struct axis *a, const uint64_t *cut, size_t n_cut)
{
	a->segs = malloc((n_cut + 1) * sizeof(*a->segs));
	if (!a->segs)
		return -1;
	size_t i = 0;
	for (size_t p = 0; p < a->n_panes; p++) {
		struct pane *pn = &a->panes[p];
		while (i < n_cut && cut[i] < pn->lo)
			i++;
		pn->seg_first = a->n_segs;
		for (; i < n_cut && cut[i] <= pn->hi; i++) {
			uint64_t hi = i + 1 < n_cut && cut[i + 1] <= pn->hi
				      ? cut[i + 1] - 1 : pn->hi;
			a->segs[a->n_segs++] = (struct seg){ cut[i], hi, 0, 0, 0 };
		}
		pn->seg_count = a->n_segs - pn->seg_first;
	}
	return 0;
}

/* The elementary interval holding x (which must lie in a pane). */
static size_t find_seg(const struct axis *a, uint64_t x)
{
	size_t above;
	AC_PARTITION(size_t, above, a->n_segs, i, a->segs[i].lo <= x);
	return above ? above - 1 : 0;
}

/* Marks the intervals globals and planes cover: difference arrays. */
static int mark_tensors(struct axis *a, const struct ival *v, size_t n)
{
	long *diff = calloc(2 * (a->n_segs + 1), sizeof(*diff));
	if (!diff)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (v[i].kind == IV_WINDOW)
			continue;
		long *d = diff + (v[i].kind == IV_PLANE ? a->n_segs + 1 : 0);
		d[find_seg(a, v[i].lo)]++;
		d[find_seg(a, v[i].hi) + 1]--;
	}
	long globals = 0, planes = 0;
	for (size_t s = 0; s < a->n_segs; s++) {
		globals += diff[s];
		planes += diff[a->n_segs + 1 + s];
		a->segs[s].cover = (globals > 0 ? COVER_GLOBAL : 0) |
				   (planes > 0 ? COVER_PLANE : 0);
	}
	free(diff);
	return 0;
}

static double share(const struct pane *p, const struct seg *s)
{
	double span = (double)(p->hi - p->lo) + 1.0;
	double f = ((double)(s->hi - s->lo) + 1.0) / span;
	if (f < MIN_SHARE)
		f = MIN_SHARE;
	if (!s->cover && f > MAX_EMPTY)
		f = MAX_EMPTY;
	return f;
}

/* A pane with more tensors gets more room, but only logarithmically, and
 * planes (which change over time) more than globals (bands). */
static double pane_weight(const struct axis *a, const struct pane *p)
{
	size_t globals = 0, planes = 0;
	for (size_t s = p->seg_first; s < p->seg_first + p->seg_count; s++) {
		globals += (a->segs[s].cover & COVER_GLOBAL) != 0;
		planes += (a->segs[s].cover & COVER_PLANE) != 0;
	}
	return 1.0 + 0.6 * log2(1.0 + (double)globals) + 1.6 * log2(1.0 + (double)planes);
}

/* Spreads [y0, y1) over the pane's intervals by their shares. */
static void layout_pane(struct axis *a, struct pane *p, double y0, double y1)
{
	double total = 0, acc = 0;
	for (size_t s = p->seg_first; s < p->seg_first + p->seg_count; s++)
		total += share(p, &a->segs[s]);
	p->y0 = (uint32_t)lround(y0);
	p->y1 = (uint32_t)lround(y1);
	for (size_t s = p->seg_first; s < p->seg_first + p->seg_count; s++) {
		struct seg *sg = &a->segs[s];
		sg->y0 = (uint32_t)lround(y0 + (y1 - y0) * acc / total);
		acc += share(p, sg);
		sg->y1 = (uint32_t)lround(y0 + (y1 - y0) * acc / total);
	}
}

static void layout(struct axis *a)
{
	double total = 0;
	for (size_t p = 0; p < a->n_panes; p++)
		total += pane_weight(a, &a->panes[p]);
	total += PANE_SPACE * (a->n_panes ? (double)a->n_panes - 1 : 0);
	double unit = AXIS_UNITS / (total > 0 ? total : 1), y = 0;
	for (size_t p = 0; p < a->n_panes; p++) {
		double h = pane_weight(a, &a->panes[p]) * unit;
		layout_pane(a, &a->panes[p], y, y + h);
		y += h + PANE_SPACE * unit;
	}
}

struct axis *axis_new(const struct ac_model *m, const uint64_t *extra,
		      size_t n_extra)
{
	struct axis *a = calloc(1, sizeof(*a));
	size_t n = 0, n_cut = 0;
	struct ival *v = a ? collect(m, &n) : NULL;
	uint64_t *cut = NULL;
	if (!v)
		goto fail;
	a->m = m;
	if (make_panes(a, v, n) != 0)
		goto fail;
	cut = cut_points(a, v, n, extra, n_extra, &n_cut);
	if (!cut || make_segs(a, cut, n_cut) != 0 || mark_tensors(a, v, n) != 0)
		goto fail;
	layout(a);
	free(cut);
	free(v);
	return a;
fail:
	free(cut);
	free(v);
	axis_free(a);
	return NULL;
}

void axis_free(struct axis *a)
{
	if (!a)
		return;
	free(a->panes);
	free(a->segs);
	free(a);
}

/* Where byte x starts (end 0) or ends (end 1) inside its interval. */
static uint32_t y_of(const struct axis *a, uint64_t x, int end)
{
	if (a->n_segs == 0)
		return 0;
	const struct seg *s = &a->segs[find_seg(a, x)];
	if (x < s->lo)
		return s->y0;
	if (x > s->hi)
		return s->y1;
	double bytes = (double)(s->hi - s->lo) + 1.0;
	double into = (double)(x - s->lo) + (end ? 1.0 : 0.0);
	return s->y0 + (uint32_t)lround((s->y1 - s->y0) * (into / bytes));
}

void axis_place(const struct axis *a, uint64_t lo, uint64_t hi,
		uint32_t *y0, uint32_t *y1)
{
	*y0 = y_of(a, lo, 0);
	*y1 = y_of(a, hi, 1);
}

size_t axis_cover(const struct axis *a, uint64_t lo, uint64_t hi,
		  uint32_t (*out)[2], size_t max)
{
	size_t n = 0;
	for (size_t p = 0; p < a->n_panes && n < max; p++) {
		const struct pane *pn = &a->panes[p];
		if (pn->hi < lo || pn->lo > hi)
			continue;
		axis_place(a, lo > pn->lo ? lo : pn->lo, hi < pn->hi ? hi : pn->hi,
			   &out[n][0], &out[n][1]);
		n++;
	}
	return n;
}

static json_t *hex(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return json_string(buf);
}

/* The byte after hi, which may be 2^64. */
static json_t *end_of(uint64_t hi)
{
	return hi == UINT64_MAX ? json_string("2^64") : hex(hi + 1);
}

static json_t *pane_windows(const struct axis *a, size_t p)
{
	json_t *ws = json_array();
	const struct ac_model *m = a->m;
	for (uint32_t i = 0; i < m->n_windows; i++) {
		const struct ac_window *w = &m->windows[i];
		if (!w->size || find_pane(a, w->base) != p)
			continue;
		uint64_t hi = w->size - 1 > UINT64_MAX - w->base ? UINT64_MAX
								 : w->base + (w->size - 1);
		uint32_t y0, y1;
		axis_place(a, w->base, hi, &y0, &y1);
		json_array_append_new(ws, json_pack("[i, i, o, i, o, o]", (json_int_t)y0,
			(json_int_t)y1, aci_json_name(w->name), (json_int_t)i,
			hex(w->base), end_of(hi)));
	}
	return ws;
}

json_t *axis_json(const struct axis *a)
{
	json_t *panes = json_array();
	for (size_t p = 0; p < a->n_panes; p++) {
		const struct pane *pn = &a->panes[p];
		json_t *ticks = json_array();
		/* the page labels ticks 13px apart: a pane of a hundred
		 * thousand planes needs no more than a few thousand */
		size_t step = pn->seg_count / MAX_TICKS + 1;
		for (size_t s = pn->seg_first; s < pn->seg_first + pn->seg_count; s += step)
			json_array_append_new(ticks, json_pack("[i, o, i]",
				(json_int_t)a->segs[s].y0, hex(a->segs[s].lo),
				a->segs[s].cover != 0));
		json_array_append_new(panes, json_pack("{s:i, s:i, s:o, s:o, s:o, s:o}",
			"y0", (json_int_t)pn->y0, "y1", (json_int_t)pn->y1,
			"lo", hex(pn->lo), "end", end_of(pn->hi),
			"windows", pane_windows(a, p), "ticks", ticks));
	}
	return panes;
}
