/* SPDX-License-Identifier: MIT */
/*
 * (D)'s replay (certify/schedule.c, replay_reference): a reference that
 * is the third copy in a row of the same runs' phases is replayed from
 * the state the previous one left instead of walked.  Held against the
 * full walk (aci_schedule_set_replay(s, 0)) and the naive checker: the
 * verdict and every field of the diagnostic, appending one reference at
 * a time and all at once, on
 *
 * - the decode workload (one reference per token), with (D) faults
 *   planted in its first, a middle and its last token, a token's
 *   reference split or given twice, a foreign reference between tokens;
 * - random programs whose schedule repeats a random period of launches
 *   (tokens), mutated at random tokens (a launch dropped, a reference
 *   split, given twice, a random reference, a launch of another phase
 *   after it, a repeat body), fixed seeds,
 *   printed; AG_REPLAY_SEED=s and AG_REPLAY_COUNT=n choose others.
 *
 * And that replay does happen: decode's schedule walks two tokens.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arenaguard/certify.h>

#include "certify/program_impl.h"
#include "gen.h"
#include "naive.h"
#include "suites.h"
#include "util.h"
#include "workload.h"

/* ---- one schedule, walked or replayed ------------------------------------ */

struct outcome {
	uint64_t verdict;
	struct ac_diag diag;
	uint64_t replayed;
};

/* The references appended to a fresh schedule of p, one at a time or
 * all in one batch, with replay on or off. */
static struct outcome run(const ac_program *p, const struct ac_ref *refs,
			  size_t n, int replay, int batch)
{
	struct outcome o;
	struct ac_error err;
	ac_schedule *s = ac_schedule_new(p);
	ck_assert(s);
	aci_schedule_set_replay(s, replay);
	if (batch) {
		ck_assert_msg(ac_schedule_append(s, refs, n, &err) == 0, "%s",
			      err.message);
	} else {
		for (size_t i = 0; i < n; i++)
			ck_assert_msg(ac_schedule_append(s, &refs[i], 1, &err) == 0,
				      "%s", err.message);
	}
	o.verdict = ac_schedule_verdict(s, &o.diag);
	o.replayed = aci_schedule_replayed(s);
	ac_schedule_free(s);
	return o;
}

static void print_diag(const char *what, const struct ac_diag *d)
{
	fprintf(stderr, "  %s: verdict %" PRIu64 " reason %d instance %" PRIu64
		" phase %" PRIu64 " plane %" PRIu64 " start %" PRIu64
		" earlier %" PRIu64 " (phase %" PRIu64 ") intervening %" PRIu64
		" over %" PRIu64 ".%" PRIu64 "\n", what, d->verdict,
		(int)d->reason, d->instance, d->phase, d->tensor[0].index,
		d->start_launch, d->earlier, d->earlier_phase, d->intervening,
		d->tensor[1].phase, d->tensor[1].index);
}

/* The schedule refs[0 .. n) of m (program p) with replay on, one by one
 * and in a batch, against the full walk; returns the replayed outcome
 * (one by one).  0 when all agree. */
static int compare(const ac_program *p, const struct ac_ref *refs, size_t n,
		   struct outcome *replayed)
{
	struct outcome full = run(p, refs, n, 0, 0);
	struct outcome one = run(p, refs, n, 1, 0);
	struct outcome all = run(p, refs, n, 1, 1);
	ck_assert_uint_eq(full.replayed, 0);
	*replayed = one;
	if (util_same_diag(&full.diag, &one.diag) && util_same_diag(&full.diag, &all.diag) &&
	    full.verdict == one.verdict && full.verdict == all.verdict)
		return 0;
	print_diag("full walk", &full.diag);
	print_diag("replayed, one by one", &one.diag);
	print_diag("replayed, one batch", &all.diag);
	return -1;
}

/* The naive checker's verdict for m with the schedule refs. */
static uint64_t naive_with(const struct ac_model *m, const struct ac_ref *refs,
			   size_t n)
{
	struct ac_model copy = *m;
	copy.refs = refs;
	copy.n_refs = n;
	uint64_t v = UINT64_MAX;
	ck_assert_int_eq(naive_certify(&copy, &v), 0);
	return v;
}

/* ---- decode ---------------------------------------------------------- */

static struct workload *decode(enum workload_fault fault, uint64_t words)
{
	const char *why = NULL;
	struct workload_spec spec = { WORKLOAD_DECODE, fault, words, 0 };
	struct workload *w = workload_new(&spec, &why);
	ck_assert_msg(w, "%s", why ? why : "");
	return w;
}

/* The phase named `name` (its identity bytes), or UINT32_MAX. */
static uint32_t phase_named(const struct ac_model *m, const char *name)
{
	for (uint32_t i = 0; i < m->n_phases; i++)
		if (m->phases[i].identity.len == strlen(name) &&
		    memcmp(m->phases[i].identity.data, name, strlen(name)) == 0)
			return i;
	return UINT32_MAX;
}

/* The launches [*a, *b) of ref's run of phase ph. */
static void run_of_phase(const ac_program *p, const struct ac_ref *ref,
			 uint32_t ph, uint64_t *a, uint64_t *b)
{
	uint64_t end = ref->first + ref->count;
	for (uint32_t r = p->run_of[ref->first];
	     r < p->n_runs && p->runs[r].first < end; r++)
		if (p->runs[r].phase == ph) {
			*a = p->runs[r].first;
			*b = r + 1 < p->n_runs ? p->runs[r + 1].first : end;
			return;
		}
	ck_abort_msg("no run of phase %u", ph);
}

START_TEST(decode_replays_tokens)
{
	struct workload *w = decode(WORKLOAD_SOUND, 100000);
	const struct ac_model *m = &w->model;
	struct ac_error err;
	ac_program *p = ac_program_new(m, &err);
	ck_assert(p);
	ck_assert_uint_ge(m->n_refs, 5);
	struct outcome o;
	ck_assert_int_eq(compare(p, m->refs, m->n_refs, &o), 0);
	ck_assert_uint_eq(o.verdict, 0);
	/* Each token starts the same instances (its first phase, embed, is
	 * not its last, lm_head's); all but the first two are replayed. */
	struct outcome two = run(p, m->refs, 2, 1, 0);
	ck_assert_uint_eq(two.replayed, 0);
	/* instances of a token: its runs, none merging */
	uint32_t r0 = p->run_of[m->refs[1].first];
	uint32_t r1 = p->run_of[m->refs[1].first + m->refs[1].count - 1] + 1;
	uint64_t per_token = r1 - r0;
	printf("replay: decode, %" PRIu64 " tokens of %" PRIu64
	       " instances: %" PRIu64 " replayed\n", (uint64_t)m->n_refs,
	       per_token, o.replayed);
	ck_assert_uint_eq(o.replayed, (m->n_refs - 2) * per_token);
	ac_program_free(p);
	workload_free(w);
}
END_TEST

/* Token t's reference without the middle layer's qkv run: that layer's
 * scores carry q, last declared a layer before and overwritten since
 * (t and o over the same bytes): (D) fails in token t. */
static size_t drop_qkv(const ac_program *p, const struct ac_model *m,
		       size_t t, struct ac_ref *refs)
{
	char name[32];
	uint32_t layers = 0;
	while (snprintf(name, sizeof(name), "l%u.qkv", layers),
	       phase_named(m, name) != UINT32_MAX)
		layers++;
	snprintf(name, sizeof(name), "l%u.qkv", layers / 2);
	uint32_t ph = phase_named(m, name);
	ck_assert(ph != UINT32_MAX);
	size_t n = 0;
	for (size_t i = 0; i < m->n_refs; i++) {
		if (i != t) {
			refs[n++] = m->refs[i];
			continue;
		}
		uint64_t a, b, end = m->refs[i].first + m->refs[i].count;
		run_of_phase(p, &m->refs[i], ph, &a, &b);
		refs[n++] = (struct ac_ref){ m->refs[i].first, a - m->refs[i].first };
		refs[n++] = (struct ac_ref){ b, end - b };
	}
	return n;
}

START_TEST(decode_faults_match_full_walk)
{
	struct workload *w = decode(WORKLOAD_SOUND, 200000);
	const struct ac_model *m = &w->model;
	struct ac_error err;
	ac_program *p = ac_program_new(m, &err);
	ck_assert(p);
	size_t T = m->n_refs;
	ck_assert_uint_ge(T, 7);
	struct ac_ref *refs = calloc(2 * T + 4, sizeof(*refs));
	ck_assert(refs);
	const size_t tokens[3] = { 0, T / 2, T - 1 };
	uint64_t prev_instance = 0;
	for (int i = 0; i < 3; i++) {
		size_t n = drop_qkv(p, m, tokens[i], refs);
		struct outcome o;
		ck_assert_int_eq(compare(p, refs, n, &o), 0);
		ck_assert_uint_eq(o.diag.condition, AC_COND_D);
		ck_assert_uint_eq(o.verdict, naive_with(m, refs, n));
		/* the fault is in token t, after t - 2 replayed tokens */
		ck_assert(i == 0 || o.diag.instance > prev_instance);
		ck_assert(tokens[i] < 3 || o.replayed > 0);
		prev_instance = o.diag.instance;
		printf("replay: decode, qkv dropped in token %zu of %zu: verdict %"
		       PRIu64 " (instance %" PRIu64 "), %" PRIu64 " replayed\n",
		       tokens[i], T, o.verdict, o.diag.instance, o.replayed);
	}
	/* A token split in two, a token given twice, a foreign reference
	 * (the first launch alone) between tokens: sound, and replay starts
	 * again two copies later. */
	size_t n = 0;
	for (size_t i = 0; i < T; i++) {
		const struct ac_ref *r = &m->refs[i];
		if (i == 2) {
			refs[n++] = (struct ac_ref){ r->first, r->count / 2 };
			refs[n++] = (struct ac_ref){ r->first + r->count / 2,
						     r->count - r->count / 2 };
		} else {
			refs[n++] = *r;
		}
		if (i == 3)
			refs[n++] = *r;
		if (i == T / 2)
			refs[n++] = (struct ac_ref){ 0, 1 };
	}
	struct outcome o;
	ck_assert_int_eq(compare(p, refs, n, &o), 0);
	ck_assert_uint_eq(o.verdict, naive_with(m, refs, n));
	ck_assert_uint_gt(o.replayed, 0);
	free(refs);
	ac_program_free(p);
	workload_free(w);

	/* The plan's own reuse fault breaks every token: the first fails. */
	w = decode(WORKLOAD_REUSE, 200000);
	p = ac_program_new(&w->model, &err);
	ck_assert(p);
	ck_assert_int_eq(compare(p, w->model.refs, w->model.n_refs, &o), 0);
	ck_assert_uint_eq(o.verdict, w->verdict);
	ac_program_free(p);
	workload_free(w);
}
END_TEST

/* ---- random periodic schedules ------------------------------------------- */

#define WS_BASE 0x10000ull
#define UNIT 64
#define MAX_KEYS 12
#define MAX_PHASES 40
#define MAX_PLANES_PER_PHASE 3
#define MAX_PERIOD 12
#define MAX_TOKENS 10
#define EXTRA 4          /* launches of random phases after the tokens' */

struct rprog {
	struct ac_model m;
	struct ac_window window;
	struct ac_phase phases[MAX_PHASES];
	struct ac_tensor planes[MAX_PHASES * MAX_PLANES_PER_PHASE];
	struct ac_launch launches[MAX_PERIOD * MAX_TOKENS + EXTRA];
	struct ac_repeat repeat;
	uint8_t ids[MAX_PHASES][8];    /* launch identity: field 51, "Pnn" */
	char names[MAX_KEYS][12];
	struct ac_ref refs[4 * MAX_TOKENS + 8];
	size_t n_refs;
};

static int overlap(uint64_t a, uint64_t as, uint64_t b, uint64_t bs)
{
	return a < b + bs && b < a + as;
}

/* Phases over a few keys in one small workspace (many planes over the
 * same bytes: heavy keys beside light ones), a period of launches copied
 * for each token, a reference per token, then mutations. */
static void rprog_build(struct rprog *g, struct gen_rng *r)
{
	memset(g, 0, sizeof(*g));
	uint32_t n_keys = 2 + (uint32_t)gen_rng_below(r, MAX_KEYS - 1);
	uint64_t off[MAX_KEYS], size[MAX_KEYS];
	for (uint32_t k = 0; k < n_keys; k++) {
		off[k] = WS_BASE + UNIT * gen_rng_below(r, 8);
		size[k] = UNIT * (1 + gen_rng_below(r, 4));
		snprintf(g->names[k], sizeof(g->names[k]), "k%u", k);
	}
	uint32_t n_phases = 2 + (uint32_t)gen_rng_below(r, MAX_PHASES - 1);
	uint32_t n_planes = 0;
	for (uint32_t ph = 0; ph < n_phases; ph++) {
		uint8_t *id = g->ids[ph];
		id[0] = 0x9a;          /* field 51, wire type 2 */
		id[1] = 0x03;
		id[2] = 3;
		id[3] = 'P';
		id[4] = (uint8_t)('0' + ph / 10);
		id[5] = (uint8_t)('0' + ph % 10);
		g->phases[ph].identity = (struct ac_bytes){ id + 3, 3 };
		g->phases[ph].plane_first = n_planes;
		uint32_t want = 1 + (uint32_t)gen_rng_below(r, MAX_PLANES_PER_PHASE);
		for (uint32_t i = 0; i < want; i++) {
			uint32_t k = (uint32_t)gen_rng_below(r, n_keys);
			int ok = 1;          /* (B): a phase's planes are disjoint */
			for (uint32_t j = g->phases[ph].plane_first; j < n_planes; j++)
				if (overlap(off[k], size[k], g->planes[j].offset,
					    g->planes[j].size))
					ok = 0;
			if (!ok)
				continue;
			g->planes[n_planes++] = (struct ac_tensor){
				{ (const uint8_t *)g->names[k], (uint32_t)strlen(g->names[k]) },
				off[k], size[k], (uint8_t)(gen_rng_below(r, 4) == 0), { 0 } };
		}
		g->phases[ph].plane_count = n_planes - g->phases[ph].plane_first;
	}
	/* the period: mostly a few phases, so that keys come back */
	uint32_t period = 1 + (uint32_t)gen_rng_below(r, MAX_PERIOD);
	uint32_t tokens = 4 + (uint32_t)gen_rng_below(r, MAX_TOKENS - 3);
	uint32_t used = 1 + (uint32_t)gen_rng_below(r, n_phases);
	uint32_t pattern[MAX_PERIOD];
	for (uint32_t i = 0; i < period; i++)
		pattern[i] = (uint32_t)gen_rng_below(r, used);
	if (period > 1 && gen_rng_below(r, 3) == 0)
		pattern[period - 1] = pattern[0];   /* tokens' instances merge */
	for (uint32_t t = 0; t < tokens; t++)
		for (uint32_t i = 0; i < period; i++)
			g->launches[t * period + i].identity =
				(struct ac_bytes){ g->ids[pattern[i]], 6 };
	uint64_t extra = (uint64_t)tokens * period;
	for (uint32_t i = 0; i < EXTRA; i++)
		g->launches[extra + i].identity = (struct ac_bytes){
			g->ids[gen_rng_below(r, n_phases)], 6 };
	g->window = (struct ac_window){ { NULL, 0 }, WS_BASE, 16 * UNIT };
	g->m.alignment = UNIT;
	g->m.n_windows = 1;
	g->m.windows = &g->window;
	g->m.n_phases = n_phases;
	g->m.phases = g->phases;
	g->m.n_planes = n_planes;
	g->m.planes = g->planes;
	g->m.n_launches = tokens * period + EXTRA;
	g->m.launches = g->launches;
	/* a repeat over token 0 sometimes: never replayed (a body) */
	int body = gen_rng_below(r, 4) == 0;
	if (body) {
		g->repeat = (struct ac_repeat){ 0, period,
						2 + gen_rng_below(r, 3), 0, 0, 0, 0, 0, 0 };
		g->m.n_repeats = 1;
		g->m.repeats = &g->repeat;
	}
	/* the schedule: a reference per token, mutated at random tokens */
	size_t n = 0;
	for (uint32_t t = 0; t < tokens; t++) {
		uint64_t a = (uint64_t)t * period;
		uint64_t kind = gen_rng_below(r, 24);
		if (body && t == 0)
			kind = 9;                     /* cut no body */
		if (kind == 0 && period > 1) {        /* a launch dropped */
			uint64_t x = gen_rng_below(r, period);
			if (x > 0)
				g->refs[n++] = (struct ac_ref){ a, x };
			if (x + 1 < period)
				g->refs[n++] = (struct ac_ref){ a + x + 1,
								period - x - 1 };
		} else if (kind == 1 && period > 1) { /* split */
			uint64_t x = 1 + gen_rng_below(r, period - 1);
			g->refs[n++] = (struct ac_ref){ a, x };
			g->refs[n++] = (struct ac_ref){ a + x, period - x };
		} else if (kind == 2) {               /* twice */
			g->refs[n++] = (struct ac_ref){ a, period };
			g->refs[n++] = (struct ac_ref){ a, period };
		} else if (kind == 3 && !body) {      /* a random reference */
			uint64_t x = gen_rng_below(r, g->m.n_launches);
			uint64_t c = 1 + gen_rng_below(r, g->m.n_launches - x);
			g->refs[n++] = (struct ac_ref){ a, period };
			g->refs[n++] = (struct ac_ref){ x, c };
		} else if (kind == 5 || kind == 6) {  /* a foreign launch */
			g->refs[n++] = (struct ac_ref){ a, period };
			g->refs[n++] = (struct ac_ref){ extra + gen_rng_below(r, EXTRA), 1 };
		} else if (kind == 4 && t > 0) {      /* an earlier token again */
			uint64_t u = body ? 1 + gen_rng_below(r, t) : gen_rng_below(r, t + 1);
			if (u == t && !body)
				u = 0;
			g->refs[n++] = (struct ac_ref){ u * period, period };
		} else {
			g->refs[n++] = (struct ac_ref){ a, period };
		}
	}
	g->n_refs = n;
	g->m.refs = g->refs;
	g->m.n_refs = n;
}

static uint64_t env_u64(const char *name, uint64_t fallback)
{
	const char *v = getenv(name);
	return v && *v ? strtoull(v, NULL, 0) : fallback;
}

START_TEST(random_periodic_schedules_match_full_walk)
{
	static const uint64_t default_seeds[] = { 0x7e91a3ull, 0x32ull,
						  0xdecafbadull };
	uint64_t seeds[3];
	size_t n_seeds = 3;
	memcpy(seeds, default_seeds, sizeof(seeds));
	if (getenv("AG_REPLAY_SEED")) {
		seeds[0] = env_u64("AG_REPLAY_SEED", 0);
		n_seeds = 1;
	}
	uint64_t count = env_u64("AG_REPLAY_COUNT", 3000);
	uint64_t programs = 0, replayed = 0, failed_after = 0, d_faults = 0;
	struct rprog *g = malloc(sizeof(*g));
	ck_assert(g);
	for (size_t s = 0; s < n_seeds; s++) {
		printf("replay: base seed 0x%" PRIx64 ", %" PRIu64 " programs\n",
		       seeds[s], count);
		for (uint64_t i = 0; i < count; i++) {
			struct gen_rng r;
			gen_rng_seed(&r, seeds[s] ^ (i * 0x9E3779B97F4A7C15ull));
			rprog_build(g, &r);
			struct ac_error err;
			ac_program *p = ac_program_new(&g->m, &err);
			ck_assert_msg(p, "seed 0x%" PRIx64 " program %" PRIu64 ": %s",
				      seeds[s], i, err.message);
			struct outcome o;
			int rc = compare(p, g->refs, g->n_refs, &o);
			uint64_t v = naive_with(&g->m, g->refs, g->n_refs);
			ck_assert_msg(rc == 0 && o.verdict == v,
				      "seed 0x%" PRIx64 " program %" PRIu64
				      ": replay differs from the full walk or "
				      "naive (verdict %" PRIu64 ", naive %" PRIu64 ")",
				      seeds[s], i, o.verdict, v);
			programs++;
			replayed += o.replayed > 0;
			d_faults += o.diag.condition == AC_COND_D;
			failed_after += o.replayed > 0 && o.diag.condition == AC_COND_D;
			ac_program_free(p);
		}
	}
	free(g);
	printf("replay: %" PRIu64 " programs, %" PRIu64 " with replayed "
	       "references, %" PRIu64 " failing (D), %" PRIu64
	       " of them after a replay\n", programs, replayed, d_faults,
	       failed_after);
	/* the generator reaches both: replays, and faults after them */
	ck_assert_uint_ge(replayed * 5, programs);
	ck_assert_uint_ge(failed_after * 100, programs);
}
END_TEST

/* A reference holding a repeat body is walked, however often it comes:
 * a body's iterations are not one instance each. */
START_TEST(bodies_are_walked)
{
	struct rprog *g = malloc(sizeof(*g));
	ck_assert(g);
	int bodies = 0;
	for (uint64_t i = 0; i < 400; i++) {
		struct gen_rng r;
		gen_rng_seed(&r, 0xb0d1e5ull + i);
		rprog_build(g, &r);
		if (g->m.n_repeats == 0)
			continue;
		size_t n = 0;
		for (int k = 0; k < 4; k++)     /* the body alone, 4 times */
			g->refs[n++] = (struct ac_ref){ 0, g->repeat.count };
		g->refs[n++] = (struct ac_ref){ g->m.n_launches - 1, 1 };
		g->n_refs = g->m.n_refs = n;
		struct ac_error err;
		ac_program *p = ac_program_new(&g->m, &err);
		ck_assert(p);
		struct outcome o;
		ck_assert_int_eq(compare(p, g->refs, g->n_refs, &o), 0);
		ck_assert_uint_eq(o.replayed, 0);
		ck_assert_uint_eq(o.verdict, naive_with(&g->m, g->refs, g->n_refs));
		ac_program_free(p);
		bodies++;
	}
	free(g);
	ck_assert_int_ge(bodies, 50);
}
END_TEST

Suite *suite_replay(void)
{
	Suite *s = suite_create("replay");
	TCase *tc = tcase_create("replay");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, decode_replays_tokens);
	tcase_add_test(tc, decode_faults_match_full_walk);
	tcase_add_test(tc, random_periodic_schedules_match_full_walk);
	tcase_add_test(tc, bodies_are_walked);
	suite_add_tcase(s, tc);
	return s;
}
