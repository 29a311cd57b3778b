/* SPDX-License-Identifier: MIT */
/*
 * The executed sequence (spec 1.3) in runs, and its instances (spec 2
 * (D)): the run index that (D) (schedule.c) advances by, and ac_walk,
 * which walks the executed sequence over it, folded (certify.h).
 *
 * A run is a maximal stretch of launches of one phase that does not cross
 * a repeat body's boundary; launches without a declared phase (NO_PHASE)
 * make runs like any phase.  A body's iterations after the first start
 * `steady` instances each: its runs, less one when its last run's phase
 * is its first's (the instance open at the end continues into the next
 * iteration).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "parallel.h"
#include "program_impl.h"

/*
 * Appends to runs[0, *n) the runs of launches [from, to), all in body
 * `body` (UINT32_MAX: in none), and sets their run_of.  starts: whether
 * launch `from` starts a run; otherwise it continues runs[*n - 1].
 * Inside the stretch, a change of phase starts one.
 */
static void runs_of_span(const uint32_t *phase_of, uint32_t from,
			 uint32_t to, uint32_t body, int starts,
			 struct run *runs, uint32_t *run_of, uint32_t *n_io)
{
	if (from >= to)
		return;
	uint32_t n = *n_io, cur = phase_of[from];
	if (starts)
		runs[n++] = (struct run){ from, cur, body };
	run_of[from] = n - 1;
	for (uint32_t l = from + 1; l < to; l++) {
		if (phase_of[l] != cur) {
			cur = phase_of[l];
			runs[n++] = (struct run){ l, cur, body };
		}
		run_of[l] = n - 1;
	}
	*n_io = n;
}

/*
 * runs_of_span over a stretch [from, to): a body's first launch starts a
 * run; so does a launch outside every body that follows a body's or
 * another phase's run.  Since bodies are not empty, every stretch's first
 * launch starts a run: the first outside stretch starts the table, every
 * later one follows a body (the run index in chunks relies on this).
 */
static void runs_of_stretch(const uint32_t *phase_of, uint32_t from,
			    uint32_t to, uint32_t body, struct run *runs,
			    uint32_t *run_of, uint32_t *n_io)
{
	uint32_t n = *n_io;
	runs_of_span(phase_of, from, to, body,
		     n == 0 || body != UINT32_MAX || runs[n - 1].body != body ||
		     runs[n - 1].phase != phase_of[from],
		     runs, run_of, n_io);
}

/* After the first iteration, a body whose last run has its first run's
 * phase continues that instance instead of starting one. */
static void set_steady(struct body *bodies, uint32_t n_bodies,
		       const struct run *runs)
{
	for (uint32_t k = 0; k < n_bodies; k++) {
		struct body *bd = &bodies[k];
		assert(bd->count > 0 && bd->run_count > 0);
		uint32_t first = runs[bd->run_first].phase;
		uint32_t last = runs[bd->run_first + bd->run_count - 1].phase;
		bd->steady = bd->run_count - (first == last);
	}
}

/*
 * The run index in chunks of the launch table, on threads.  A launch
 * starts a run iff it starts a stretch (launch 0, a body's first, the
 * launch after a body) or its phase differs from the launch before it
 * (runs_of_stretch): a test of the launch and the one before, so chunk
 * c's runs are counted on its own (pass 0), their numbers are the counts
 * of the chunks before it (a sum in chunk order), and each chunk writes
 * its runs and run_of from there (pass 1).  The result is the serial
 * one, entry for entry, whatever the threads and their timing.
 */
struct runs_split {
	const struct ac_model *m;
	const uint32_t *phase_of;
	const struct body *bodies;
	struct run *runs;
	uint32_t *run_of;
	uint32_t n_chunks;
	uint32_t *count;        /* per chunk: pass 0's runs, then the first's
				 * number */
	int pass;
};

static int runs_chunk(void *ctx, uint32_t c)
{
	struct runs_split *k = ctx;
	const struct body *bodies = k->bodies;
	const uint32_t *phase_of = k->phase_of;
	const uint32_t nb = k->m->n_repeats, nl = k->m->n_launches;
	uint32_t from = aci_chunk_start(nl, k->n_chunks, c),
		 to = aci_chunk_start(nl, k->n_chunks, c + 1);
	/* b: the first body that ends after `from` */
	uint32_t b;
	AC_PARTITION(uint32_t, b, nb, i,
		     bodies[i].first + bodies[i].count <= from);
	uint32_t n = k->pass ? k->count[c] : 0;
	for (uint32_t l = from; l < to;) {
		int in = b < nb && bodies[b].first <= l;
		uint32_t end = in ? bodies[b].first + bodies[b].count
				  : b < nb ? bodies[b].first : nl;
		if (end > to)
			end = to;
		int stretch = in ? l == bodies[b].first
				 : l == 0 || (b > 0 && l == bodies[b - 1].first +
						       bodies[b - 1].count);
		int starts = stretch || phase_of[l] != phase_of[l - 1];
		if (k->pass) {
			runs_of_span(phase_of, l, end, in ? b : UINT32_MAX,
				     starts, k->runs, k->run_of, &n);
		} else {
			n += starts;
			for (uint32_t i = l + 1; i < end; i++)
				n += phase_of[i] != phase_of[i - 1];
		}
		if (in && end == bodies[b].first + bodies[b].count)
			b++;
		l = end;
	}
	if (!k->pass)
		k->count[c] = n;
	return 0;
}

/* aci_index_runs' index on the team's threads (> 1; at least 2
 * launches): *n_runs; -1 when memory runs out. */
static int index_runs_split(const struct ac_model *m, const uint32_t *phase_of,
			    struct body *bodies, struct aci_team *team,
			    struct run *runs, uint32_t *run_of,
			    uint32_t *n_runs)
{
	struct runs_split k = {
		.m = m, .phase_of = phase_of, .bodies = bodies, .runs = runs,
		.run_of = run_of,
		.n_chunks = aci_chunk_count(team->threads, m->n_launches),
	};
	assert(team->threads > 1 && k.n_chunks > 1);
	k.count = malloc((size_t)k.n_chunks * sizeof(*k.count));
	if (!k.count)
		return -1;
	/* runs_chunk never fails */
	(void)aci_team_run(team, k.n_chunks, runs_chunk, &k);
	uint32_t n = 0;
	for (uint32_t c = 0; c < k.n_chunks; c++) {
		uint32_t here = k.count[c];
		k.count[c] = n;
		n += here;
	}
	k.pass = 1;
	(void)aci_team_run(team, k.n_chunks, runs_chunk, &k);
	free(k.count);
	*n_runs = n;
	for (uint32_t b = 0; b < m->n_repeats; b++) {
		bodies[b].run_first = run_of[bodies[b].first];
		bodies[b].run_count = run_of[bodies[b].first +
					     bodies[b].count - 1] + 1 -
				      bodies[b].run_first;
	}
	return 0;
}

int aci_index_runs(const struct ac_model *m, const uint32_t *phase_of,
		   struct body *bodies, struct aci_team *team,
		   struct run **runs_out, uint32_t **run_of_out,
		   uint32_t *n_runs)
{
	struct run *runs = aci_big_calloc((size_t)m->n_launches + 1, sizeof(*runs));
	uint32_t *run_of = aci_big_calloc((size_t)m->n_launches + 1,
					  sizeof(*run_of));
	*runs_out = runs;
	*run_of_out = run_of;
	if (!runs || !run_of)
		return -1;
	if (team && team->threads > 1 && m->n_launches > 1) {
		if (index_runs_split(m, phase_of, bodies, team, runs,
				     run_of, n_runs) != 0)
			return -1;
		set_steady(bodies, m->n_repeats, runs);
		return 0;
	}
	/* The bodies are sorted and disjoint (aci_validate_model): the table
	 * is walked a stretch at a time, outside a body or inside one. */
	uint32_t l = 0, n = 0;
	for (uint32_t b = 0; b < m->n_repeats; b++) {
		assert(bodies[b].first >= l);
		runs_of_stretch(phase_of, l, bodies[b].first, UINT32_MAX,
				runs, run_of, &n);
		bodies[b].run_first = n;
		l = bodies[b].first + bodies[b].count;
		runs_of_stretch(phase_of, bodies[b].first, l, b, runs, run_of,
				&n);
		bodies[b].run_count = n - bodies[b].run_first;
	}
	runs_of_stretch(phase_of, l, m->n_launches, UINT32_MAX, runs, run_of,
			&n);
	*n_runs = n;
	set_steady(bodies, m->n_repeats, runs);
	return 0;
}

struct ac_walk {
	const struct ac_model *m;
	const uint32_t *phase_of;
	/* the program's run index, or the walk's own (own_* non-NULL) */
	const struct body *bodies;
	const struct run *runs;
	const uint32_t *run_of;
	uint32_t n_runs;
	struct body *own_bodies;
	struct run *own_runs;
	uint32_t *own_run_of;
	uint64_t extra_repeat, extra_ordinal;

	/* during ac_walk_run */
	const struct ac_walk_hooks *h;
	uint64_t next_instance;
	uint64_t cur_instance;
	uint32_t cur_phase;
	int have_cur;          /* an instance is open */
	int cur_shown;         /* ... and has a column */
};

ac_walk *ac_walk_new(const ac_program *p, uint64_t extra_repeat,
		     uint64_t extra_ordinal)
{
	struct ac_walk *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->m = p->m;
	w->phase_of = p->phase_of;
	w->extra_repeat = extra_repeat;
	w->extra_ordinal = extra_ordinal;
	if (p->runs) {             /* built for (D) */
		w->bodies = p->bodies;
		w->runs = p->runs;
		w->run_of = p->run_of;
		w->n_runs = p->n_runs;
		return w;
	}
	size_t n_bodies = p->m->n_repeats;
	w->own_bodies = malloc((n_bodies + 1) * sizeof(*w->own_bodies));
	if (!w->own_bodies ||
	    aci_index_runs(p->m, p->phase_of,
			   memcpy(w->own_bodies, p->bodies,
				  n_bodies * sizeof(*w->own_bodies)),
			   NULL, &w->own_runs, &w->own_run_of,
			   &w->n_runs) != 0) {
		ac_walk_free(w);
		return NULL;
	}
	w->bodies = w->own_bodies;
	w->runs = w->own_runs;
	w->run_of = w->own_run_of;
	return w;
}

void ac_walk_free(ac_walk *w)
{
	if (!w)
		return;
	free(w->own_bodies);
	aci_big_free(w->own_runs);
	aci_big_free(w->own_run_of);
	free(w);
}

static uint64_t phase64(uint32_t p)
{
	return p == NO_PHASE ? AC_NONE : p;
}

/* Launches [first, first + count), all of one phase, execute: a new
 * instance unless the open one has that phase. */
static void add_run(struct ac_walk *w, uint64_t first, uint64_t count,
		    uint64_t ordinal, uint64_t ref)
{
	uint32_t p = w->phase_of[first];
	struct ac_walk_column col = { 0, phase64(p), ref, 0 };
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

/* Skips iterations: their instances are counted; the open instance, if
 * one continues out of the fold, gets a column of its own when it shows. */
static void skip(struct ac_walk *w, struct ac_walk_fold *f)
{
	f->first_instance = w->next_instance;
	w->next_instance += f->instances;
	if (f->instances)
		w->cur_instance = w->next_instance - 1;
	w->cur_shown = 0;
	w->h->fold(w->h->ctx, f);
}

int ac_walk_shown(uint64_t n, uint64_t extra, uint64_t out[AC_WALK_SHOWN])
{
	uint64_t want[AC_WALK_SHOWN] = { 0, 1, extra, n - 1 };
	int count = 0;
	for (int i = 0; i < AC_WALK_SHOWN; i++) {
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

/* One iteration of a body: its runs. */
static void walk_iteration(struct ac_walk *w, const struct body *b,
			   uint64_t ordinal, uint64_t ref)
{
	for (uint32_t r = b->run_first; r < b->run_first + b->run_count; r++) {
		uint64_t end = r + 1 < b->run_first + b->run_count
				       ? w->runs[r + 1].first
				       : (uint64_t)b->first + b->count;
		add_run(w, w->runs[r].first, end - w->runs[r].first, ordinal,
			ref);
	}
}

/* A body: its shown iterations, the ones between folded. */
static void walk_body(struct ac_walk *w, const struct body *b, uint64_t ref)
{
	uint64_t r = b->repeat, shown[AC_WALK_SHOWN];
	uint64_t extra = r == w->extra_repeat ? w->extra_ordinal : AC_NONE;
	int n = ac_walk_shown(b->iterations, extra, shown);
	for (int i = 0; i < n; i++) {
		if (i > 0 && shown[i] > shown[i - 1] + 1) {
			uint64_t skipped = shown[i] - shown[i - 1] - 1;
			struct ac_walk_fold f = { 0, r, shown[i - 1] + 1,
						  shown[i] - 1, b->iterations,
						  skipped * b->steady, 0 };
			skip(w, &f);
		}
		struct ac_walk_iter it = { 0, r, shown[i], b->iterations };
		w->h->iter_begin(w->h->ctx, &it);
		walk_iteration(w, b, shown[i], ref);
		w->h->iter_end(w->h->ctx);
	}
}

/* One reference: the runs it covers, cut to it, each body folded. */
static void walk_ref(struct ac_walk *w, uint64_t ref)
{
	const struct ac_ref *rf = &w->m->refs[ref];
	uint64_t end = rf->first + rf->count;
	for (uint32_t r = w->run_of[rf->first];
	     r < w->n_runs && w->runs[r].first < end;) {
		const struct run *run = &w->runs[r];
		if (run->body != UINT32_MAX) {
			/* a well-formed reference cuts no body */
			const struct body *b = &w->bodies[run->body];
			assert(b->first >= rf->first && b->first + b->count <= end);
			walk_body(w, b, ref);
			r = b->run_first + b->run_count;
			continue;
		}
		uint64_t at = run->first > rf->first ? run->first : rf->first;
		uint64_t stop = r + 1 < w->n_runs ? w->runs[r + 1].first
						  : w->m->n_launches;
		add_run(w, at, (stop < end ? stop : end) - at, AC_NONE, ref);
		r++;
	}
}

static int same_ref(const struct ac_ref *a, const struct ac_ref *b)
{
	return a->first == b->first && a->count == b->count;
}

/* n >= 4 identical references from i: 0, 1, a fold, n-1. */
static void walk_ref_run(struct ac_walk *w, uint64_t i, uint64_t n)
{
	assert(n >= 4);
	struct ac_walk_iter it = { 1, i, 0, n };
	w->h->iter_begin(w->h->ctx, &it);
	walk_ref(w, i);
	w->h->iter_end(w->h->ctx);

	uint64_t before = w->next_instance;
	it.iteration = 1;
	w->h->iter_begin(w->h->ctx, &it);
	walk_ref(w, i + 1);
	w->h->iter_end(w->h->ctx);

	/* every later run starts as the second did, so starts as many */
	struct ac_walk_fold f = { 1, i, 2, n - 2, n,
				  (n - 3) * (w->next_instance - before), 0 };
	skip(w, &f);
	it.iteration = n - 1;
	w->h->iter_begin(w->h->ctx, &it);
	walk_ref(w, i + n - 1);
	w->h->iter_end(w->h->ctx);
}

uint64_t ac_walk_run(ac_walk *w, const struct ac_walk_hooks *hooks)
{
	w->h = hooks;
	w->next_instance = w->cur_instance = 0;
	w->have_cur = w->cur_shown = 0;
	w->cur_phase = NO_PHASE;
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
