/* SPDX-License-Identifier: MIT */
/*
 * report_timeline.c - columns and boxes (see report_timeline.h).
 *
 * The walk runs twice: first to count its columns and find the wanted
 * ones, so that what to keep is known; then to build the kept columns
 * and to follow every declaration, kept or not.
 */
#include <stdlib.h>
#include <string.h>

#include "common/partition.h"   /* AC_PARTITION, the one binary search */
#include "report_timeline.h"

/* What a long walk keeps: its first and last columns, and this many on
 * each side of a wanted one. */
#define KEEP_HEAD 1000
#define KEEP_TAIL 300
#define KEEP_AROUND 200

#define N_WANT 6   /* instance[3], launch, phase[2] */

/* Grows *p (of *cap elements of size bytes) to hold n + 1. */
static int grow(void *pp, size_t *cap, size_t n, size_t size)
{
	void **p = pp;
	if (n < *cap)
		return 0;
	size_t ncap = *cap ? 2 * *cap : 64;
	void *np = realloc(*p, ncap * size);
	if (!np)
		return -1;
	*p = np;
	*cap = ncap;
	return 0;
}

/* ---- the first walk: count, and find the wanted columns ---- */

struct finder {
	const struct tl_want *want;
	uint64_t columns, cur;
	uint64_t at[N_WANT];
};

static void find_column(void *ctx, const struct ac_walk_column *c)
{
	struct finder *f = ctx;
	for (int i = 0; i < 3; i++)
		if (f->at[i] == AC_NONE && c->instance == f->want->instance[i])
			f->at[i] = f->columns;
	for (int i = 0; i < 2; i++)
		if (f->at[4 + i] == AC_NONE && c->phase == f->want->phase[i] &&
		    c->phase != AC_NONE)
			f->at[4 + i] = f->columns;
	f->cur = f->columns++;
}

static void find_run(void *ctx, uint64_t first, uint64_t count,
		     uint64_t ordinal, uint64_t ref)
{
	struct finder *f = ctx;
	const struct tl_want *w = f->want;
	(void)ref;
	if (f->at[3] == AC_NONE && w->launch >= first && w->launch - first < count &&
	    (w->ordinal == AC_NONE || w->ordinal == ordinal))
		f->at[3] = f->cur;
}

static void find_fold(void *ctx, const struct ac_walk_fold *fold)
{
	struct finder *f = ctx;
	(void)fold;
	f->cur = f->columns++;
}

static void no_iter_begin(void *ctx, const struct ac_walk_iter *it)
{
	(void)ctx;
	(void)it;
}

static void no_iter_end(void *ctx)
{
	(void)ctx;
}

/* ---- which walk columns are kept ---- */

struct range {
	uint64_t first, end;  /* walk columns [first, end) ... */
	size_t base;          /* ... are columns base, base + 1, ... */
};

static int cmp_range(const void *pa, const void *pb)
{
	const struct range *a = pa, *b = pb;
	return (a->first > b->first) - (a->first < b->first);
}

/* Kept stretches, sorted and merged, each after a gap column but the
 * first.  Returns how many (at most N_WANT + 2). */
static size_t keep_ranges(uint64_t total, const uint64_t at[N_WANT],
			  struct range *r)
{
	size_t n = 0;
	if (total <= TL_MAX_COLUMNS) {
		r[n++] = (struct range){ 0, total, 0 };
	} else {
		r[n++] = (struct range){ 0, KEEP_HEAD, 0 };
		r[n++] = (struct range){ total - KEEP_TAIL, total, 0 };
		for (int i = 0; i < N_WANT; i++) {
			if (at[i] == AC_NONE)
				continue;
			uint64_t lo = at[i] > KEEP_AROUND ? at[i] - KEEP_AROUND : 0;
			uint64_t hi = at[i] + KEEP_AROUND + 1;
			r[n++] = (struct range){ lo, hi < total ? hi : total, 0 };
		}
	}
	qsort(r, n, sizeof(*r), cmp_range);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		/* a gap of one column would stand for just that column */
		if (m && r[i].first <= r[m - 1].end + 1) {
			if (r[i].end > r[m - 1].end)
				r[m - 1].end = r[i].end;
		} else {
			r[m++] = r[i];
		}
	}
	size_t base = 0;
	for (size_t i = 0; i < m; i++) {
		r[i].base = base + (i > 0);
		base = r[i].base + (size_t)(r[i].end - r[i].first);
	}
	return m;
}

/* ---- the second walk: build ---- */

struct builder {
	struct timeline *tl;
	size_t cap_cols, cap_spans, cap_boxes;
	struct range r[N_WANT + 2];
	size_t n_r;
	uint64_t columns, cur;
	size_t wanted[N_WANT];      /* columns; SIZE_MAX for none */
	struct { uint64_t first; int pending; struct ac_walk_iter it; } open[4];
	int depth;
	int oom;
};

/* The column walk column v is drawn in; *gap says if it is a gap. */
static size_t column_of(const struct builder *b, uint64_t v, int *gap)
{
	size_t above;
	AC_PARTITION(size_t, above, b->n_r, i, b->r[i].first <= v);
	const struct range *r = &b->r[above ? above - 1 : 0];
	*gap = v >= r->end;
	return *gap ? r->base + (size_t)(r->end - r->first) : r->base + (size_t)(v - r->first);
}

/* The column for walk column v: a new one, or the gap it falls in. */
static struct tl_col *place(struct builder *b, uint64_t v, enum tl_kind kind,
			    uint64_t instance)
{
	struct timeline *tl = b->tl;
	int gap;
	size_t c = column_of(b, v, &gap);
	if (c < tl->n_cols) {
		struct tl_col *g = &tl->cols[c];
		g->columns++;
		if (g->instance == AC_NONE)
			g->instance = instance;
		if (instance != AC_NONE && (g->instance_last == AC_NONE ||
					    instance > g->instance_last))
			g->instance_last = instance;
		return NULL;
	}
	if (grow(&tl->cols, &b->cap_cols, tl->n_cols, sizeof(*tl->cols)) != 0) {
		b->oom = 1;
		return NULL;
	}
	struct tl_col *col = &tl->cols[tl->n_cols++];
	memset(col, 0, sizeof(*col));
	col->kind = gap ? TL_GAP : kind;
	col->instance = col->instance_last = instance;
	col->phase = col->ref = AC_NONE;
	col->launch_first = col->launch_last = AC_NONE;
	col->ordinal_first = col->ordinal_last = AC_NONE;
	col->columns = 1;
	return gap ? NULL : col;
}

static void build_column(void *ctx, const struct ac_walk_column *c)
{
	struct builder *b = ctx;
	uint64_t v = b->columns++;
	b->cur = v;
	struct tl_col *col = place(b, v, c->continued ? TL_CONTINUED : TL_INSTANCE,
				   c->instance);
	if (col) {
		col->phase = c->phase;
		col->ref = c->ref;
	}
	if (!b->oom && live_declare(b->tl->live, c->phase, v) != 0)
		b->oom = 1;
}

static void build_run(void *ctx, uint64_t first, uint64_t count,
		      uint64_t ordinal, uint64_t ref)
{
	struct builder *b = ctx;
	(void)ref;
	for (int i = 0; i < b->depth; i++)
		if (b->open[i].pending) {
			b->open[i].first = b->cur;
			b->open[i].pending = 0;
		}
	int gap;
	size_t c = column_of(b, b->cur, &gap);
	if (gap || c >= b->tl->n_cols)
		return;
	struct tl_col *col = &b->tl->cols[c];
	if (col->launches == 0) {
		col->launch_first = first;
		col->ordinal_first = ordinal;
	}
	col->launch_last = first + count - 1;
	col->ordinal_last = ordinal;
	col->launches += count;
}

static void build_fold(void *ctx, const struct ac_walk_fold *f)
{
	struct builder *b = ctx;
	uint64_t v = b->columns++;
	b->cur = v;
	uint64_t last = f->instances ? f->first_instance + f->instances - 1 : AC_NONE;
	struct tl_col *col = place(b, v, TL_FOLD, f->instances ? f->first_instance
							       : AC_NONE);
	if (col) {
		col->fold = *f;
		col->instance_last = last;
	} else if (!b->oom && last != AC_NONE) {
		struct tl_col *g = &b->tl->cols[b->tl->n_cols - 1];
		if (g->instance == AC_NONE)
			g->instance = f->first_instance;
		if (g->instance_last == AC_NONE || last > g->instance_last)
			g->instance_last = last;
	}
}

static void build_iter_begin(void *ctx, const struct ac_walk_iter *it)
{
	struct builder *b = ctx;
	if (b->depth < 4) {
		b->open[b->depth].pending = 1;
		b->open[b->depth].it = *it;
	}
	b->depth++;
}

static void build_iter_end(void *ctx)
{
	struct builder *b = ctx;
	if (--b->depth >= 4 || b->open[b->depth].pending)
		return;
	int gap0, gap1;
	size_t c0 = column_of(b, b->open[b->depth].first, &gap0);
	size_t c1 = column_of(b, b->cur, &gap1);
	struct timeline *tl = b->tl;
	if ((c0 == c1 && gap0) || grow(&tl->spans, &b->cap_spans, tl->n_spans,
				       sizeof(*tl->spans)) != 0)
		return;
	tl->spans[tl->n_spans++] = (struct tl_span){ c0, c1, b->open[b->depth].it };
}

static int touches_wanted(const struct builder *b, size_t c0, size_t c1)
{
	for (int i = 0; i < N_WANT; i++)
		if (b->wanted[i] != SIZE_MAX && c0 <= b->wanted[i] && b->wanted[i] <= c1)
			return 1;
	return 0;
}

static void keep_box(void *ctx, const struct live_box *box)
{
	struct builder *b = ctx;
	struct timeline *tl = b->tl;
	int gap0, gap1;
	size_t c0 = column_of(b, box->first, &gap0);
	size_t c1 = column_of(b, box->last, &gap1);
	if ((c0 == c1 && gap0) ||
	    (tl->n_boxes >= TL_MAX_BOXES && !touches_wanted(b, c0, c1)) ||
	    grow(&tl->boxes, &b->cap_boxes, tl->n_boxes, sizeof(*tl->boxes)) != 0) {
		tl->boxes_left_out++;
		return;
	}
	tl->boxes[tl->n_boxes++] = (struct tl_box){ box->key, box->flags, c0, c1 };
}

/* ---- together ---- */

static uint64_t find_all(ac_walk *walk, const struct tl_want *want,
			 uint64_t at[N_WANT], uint64_t *instances)
{
	struct finder f = { want, 0, 0, { 0 } };
	for (int i = 0; i < N_WANT; i++)
		f.at[i] = AC_NONE;
	struct ac_walk_hooks h = { &f, find_column, find_run, find_fold,
				no_iter_begin, no_iter_end };
	*instances = ac_walk_run(walk, &h);
	memcpy(at, f.at, sizeof(f.at));
	return f.columns;
}

static int build(struct builder *b, ac_walk *walk, const uint64_t at[N_WANT],
		 struct tl_found *found)
{
	uint64_t *out[N_WANT] = { &found->instance[0], &found->instance[1],
				  &found->instance[2], &found->launch,
				  &found->phase[0], &found->phase[1] };
	for (int i = 0; i < N_WANT; i++) {
		int gap;
		b->wanted[i] = at[i] == AC_NONE ? SIZE_MAX : column_of(b, at[i], &gap);
		*out[i] = at[i] == AC_NONE ? AC_NONE : b->wanted[i];
	}
	struct ac_walk_hooks h = { b, build_column, build_run, build_fold,
				build_iter_begin, build_iter_end };
	ac_walk_run(walk, &h);
	live_finish(b->tl->live);
	return b->oom ? -1 : 0;
}

struct timeline *timeline_new(const ac_program *program, ac_walk *walk,
			      const struct tl_want *want, struct tl_found *found)
{
	struct timeline *tl = calloc(1, sizeof(*tl));
	struct builder *b = calloc(1, sizeof(*b));
	if (!tl || !b)
		goto fail;
	b->tl = tl;
	tl->live = live_new(ac_program_model(program), keep_box, b);
	if (!tl->live)
		goto fail;
	uint64_t at[N_WANT];
	tl->walk_columns = find_all(walk, want, at, &tl->instances);
	b->n_r = keep_ranges(tl->walk_columns, at, b->r);
	if (build(b, walk, at, found) != 0)
		goto fail;
	free(b);
	return tl;
fail:
	free(b);
	timeline_free(tl);
	return NULL;
}

void timeline_free(struct timeline *tl)
{
	if (!tl)
		return;
	free(tl->cols);
	free(tl->spans);
	free(tl->boxes);
	live_free(tl->live);
	free(tl);
}

uint64_t timeline_add_extra(struct timeline *tl, const struct ac_model *m,
			    uint64_t phase, uint64_t launch)
{
	static const struct ac_phase none = { { NULL, 0 }, 0, 0 };
	const struct ac_phase *p = phase < m->n_phases ? &m->phases[phase] : &none;
	struct tl_col *nc = realloc(tl->cols, (tl->n_cols + 1) * sizeof(*nc));
	struct tl_box *nb = realloc(tl->boxes, (tl->n_boxes + p->plane_count + 1) *
				    sizeof(*nb));
	if (nc)
		tl->cols = nc;
	if (nb)
		tl->boxes = nb;
	if (!nc || !nb)
		return AC_NONE;
	size_t c = tl->n_cols++;
	memset(&tl->cols[c], 0, sizeof(tl->cols[c]));
	tl->cols[c].kind = TL_EXTRA;
	tl->cols[c].instance = tl->cols[c].instance_last = AC_NONE;
	tl->cols[c].phase = phase;
	tl->cols[c].ref = AC_NONE;
	tl->cols[c].launch_first = tl->cols[c].launch_last = launch;
	tl->cols[c].ordinal_first = tl->cols[c].ordinal_last = AC_NONE;
	for (uint32_t i = 0; i < p->plane_count; i++) {
		uint64_t plane = (uint64_t)p->plane_first + i;
		uint32_t flags = m->planes[plane].carried ? LIVE_CARRIED : 0;
		tl->boxes[tl->n_boxes++] = (struct tl_box){
			live_key_of(tl->live, plane), flags, c, c };
	}
	return c;
}

const struct tl_box *timeline_box_at(const struct timeline *tl, uint32_t key,
				     size_t c)
{
	for (size_t i = 0; i < tl->n_boxes; i++) {
		const struct tl_box *b = &tl->boxes[i];
		if (b->key == key && b->first <= c && c <= b->last)
			return b;
	}
	return NULL;
}
