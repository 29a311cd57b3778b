/* SPDX-License-Identifier: MIT */
/*
 * report_walk.c - the executed sequence, folded (see report_walk.h).
 */
#include <stdlib.h>

#include "report_walk.h"

#define NONE32 UINT32_MAX

struct walk {
	const struct ac_model *m;
	uint32_t *phase;       /* per launch; NONE32 without a phase */
	uint32_t *repeat;      /* per launch; NONE32 outside every body */
	uint64_t *steady;      /* per repeat: instances a later iteration starts */
	uint64_t extra_repeat, extra_ordinal;

	/* during walk_run */
	const struct walk_hooks *h;
	uint64_t next_instance;
	uint64_t cur_instance;
	uint32_t cur_phase;
	int have_cur;          /* an instance is open */
	int cur_shown;         /* ... and has a column */
};

static uint64_t phase64(uint32_t p)
{
	return p == NONE32 ? AC_NONE : p;
}

uint64_t walk_phase(const struct walk *w, uint64_t launch)
{
	return phase64(w->phase[launch]);
}

uint64_t walk_repeat(const struct walk *w, uint64_t launch)
{
	return w->repeat[launch] == NONE32 ? AC_NONE : w->repeat[launch];
}

/* Runs of one phase in a body, less one when its ends join up. */
static uint64_t steady_instances(const struct walk *w, const struct ac_repeat *r)
{
	uint64_t runs = 1;
	for (uint64_t l = r->first + 1; l < r->first + r->count; l++)
		runs += w->phase[l] != w->phase[l - 1];
	return runs - (w->phase[r->first] == w->phase[r->first + r->count - 1]);
}

struct walk *walk_new(const ac_program *program, uint64_t extra_repeat,
		      uint64_t extra_ordinal)
{
	const struct ac_model *m = ac_program_model(program);
	struct walk *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->m = m;
	w->extra_repeat = extra_repeat;
	w->extra_ordinal = extra_ordinal;
	w->phase = malloc(((size_t)m->n_launches + 1) * sizeof(*w->phase));
	w->repeat = malloc(((size_t)m->n_launches + 1) * sizeof(*w->repeat));
	w->steady = malloc(((size_t)m->n_repeats + 1) * sizeof(*w->steady));
	if (!w->phase || !w->repeat || !w->steady) {
		walk_free(w);
		return NULL;
	}
	for (uint32_t l = 0; l < m->n_launches; l++) {
		uint64_t p = ac_program_launch_phase(program, l);
		w->phase[l] = p == AC_NONE ? NONE32 : (uint32_t)p;
		w->repeat[l] = NONE32;
	}
	for (uint32_t r = 0; r < m->n_repeats; r++) {
		const struct ac_repeat *rep = &m->repeats[r];
		for (uint64_t l = rep->first; l < rep->first + rep->count; l++)
			w->repeat[l] = r;
		w->steady[r] = steady_instances(w, rep);
	}
	return w;
}

void walk_free(struct walk *w)
{
	if (!w)
		return;
	free(w->phase);
	free(w->repeat);
	free(w->steady);
	free(w);
}

/* Launches [first, first + count), all of one phase, execute. */
static void add_run(struct walk *w, uint64_t first, uint64_t count,
		    uint64_t ordinal, uint64_t ref)
{
	uint32_t p = w->phase[first];
	struct walk_col col = { 0, phase64(p), ref, 0 };
	if (w->have_cur && p == w->cur_phase) {
		if (!w->cur_shown) {
			col.instance = w->cur_instance;
			col.continued = 1;
			w->h->column(w->h->ctx, &col);
			w->cur_shown = 1;
		}
	} else {
		w->cur_instance = w->next_instance++;
		w->cur_phase = p;
		w->have_cur = w->cur_shown = 1;
		col.instance = w->cur_instance;
		w->h->column(w->h->ctx, &col);
	}
	w->h->run(w->h->ctx, first, count, ordinal, ref);
}

/* Launches [lo, hi) outside repeat bodies (or one iteration of a body). */
static void walk_runs(struct walk *w, uint64_t lo, uint64_t hi,
		      uint64_t ordinal, uint64_t ref)
{
	while (lo < hi) {
		uint64_t end = lo + 1;
		while (end < hi && w->phase[end] == w->phase[lo])
			end++;
		add_run(w, lo, end - lo, ordinal, ref);
		lo = end;
	}
}

/* Skips iterations: their instances are counted; the open instance, if
 * one continues out of the fold, gets a column of its own when it shows. */
static void skip(struct walk *w, struct walk_fold *f)
{
	f->first_instance = w->next_instance;
	w->next_instance += f->instances;
	if (f->instances)
		w->cur_instance = w->next_instance - 1;
	w->cur_shown = 0;
	w->h->fold(w->h->ctx, f);
}

int walk_shown(uint64_t n, uint64_t extra, uint64_t out[WALK_SHOWN])
{
	uint64_t want[WALK_SHOWN] = { 0, 1, extra, n - 1 };
	int count = 0;
	for (int i = 0; i < WALK_SHOWN; i++) {
		uint64_t t = want[i];
		if (t >= n)
			continue;
		int at = count;
		while (at > 0 && out[at - 1] > t)
			at--;
		if (at > 0 && out[at - 1] == t)
			continue;
		for (int j = count; j > at; j--)
			out[j] = out[j - 1];
		out[at] = t;
		count++;
	}
	return count;
}

static void walk_body(struct walk *w, uint64_t r, uint64_t ref)
{
	const struct ac_repeat *rep = &w->m->repeats[r];
	uint64_t shown[WALK_SHOWN];
	uint64_t extra = r == w->extra_repeat ? w->extra_ordinal : AC_NONE;
	int n = walk_shown(rep->iterations, extra, shown);
	for (int i = 0; i < n; i++) {
		if (i > 0 && shown[i] > shown[i - 1] + 1) {
			uint64_t skipped = shown[i] - shown[i - 1] - 1;
			struct walk_fold f = { 0, r, shown[i - 1] + 1, shown[i] - 1,
					       rep->iterations, skipped * w->steady[r], 0 };
			skip(w, &f);
		}
		struct walk_iter it = { 0, r, shown[i], rep->iterations };
		w->h->iter_begin(w->h->ctx, &it);
		walk_runs(w, rep->first, rep->first + rep->count, shown[i], ref);
		w->h->iter_end(w->h->ctx);
	}
}

/* One reference: plain launches in runs, each repeat body folded. */
static void walk_ref(struct walk *w, uint64_t ref)
{
	const struct ac_ref *rf = &w->m->refs[ref];
	uint64_t l = rf->first, end = rf->first + rf->count;
	while (l < end) {
		uint32_t r = w->repeat[l];
		if (r != NONE32 && w->m->repeats[r].first == l &&
		    l + w->m->repeats[r].count <= end) {
			walk_body(w, r, ref);
			l += w->m->repeats[r].count;
			continue;
		}
		uint64_t stop = l + 1;
		while (stop < end && w->repeat[stop] == NONE32)
			stop++;
		walk_runs(w, l, stop, AC_NONE, ref);
		l = stop;
	}
}

static int same_ref(const struct ac_ref *a, const struct ac_ref *b)
{
	return a->first == b->first && a->count == b->count;
}

/* n >= 4 identical references from i: 0, 1, a fold, n-1. */
static void walk_ref_run(struct walk *w, uint64_t i, uint64_t n)
{
	struct walk_iter it = { 1, i, 0, n };
	w->h->iter_begin(w->h->ctx, &it);
	walk_ref(w, i);
	w->h->iter_end(w->h->ctx);

	uint64_t before = w->next_instance;
	it.iteration = 1;
	w->h->iter_begin(w->h->ctx, &it);
	walk_ref(w, i + 1);
	w->h->iter_end(w->h->ctx);

	/* every later run starts as the second did, so starts as many */
	struct walk_fold f = { 1, i, 2, n - 2, n,
			       (n - 3) * (w->next_instance - before), 0 };
	skip(w, &f);
	it.iteration = n - 1;
	w->h->iter_begin(w->h->ctx, &it);
	walk_ref(w, i + n - 1);
	w->h->iter_end(w->h->ctx);
}

uint64_t walk_run(struct walk *w, const struct walk_hooks *hooks)
{
	w->h = hooks;
	w->next_instance = w->cur_instance = 0;
	w->have_cur = w->cur_shown = 0;
	w->cur_phase = NONE32;
	const struct ac_model *m = w->m;
	for (uint64_t i = 0; i < m->n_refs;) {
		uint64_t n = 1;
		while (i + n < m->n_refs && same_ref(&m->refs[i + n], &m->refs[i]))
			n++;
		if (n >= 4)
			walk_ref_run(w, i, n);
		else
			for (uint64_t q = i; q < i + n; q++)
				walk_ref(w, q);
		i += n;
	}
	return w->next_instance;
}
