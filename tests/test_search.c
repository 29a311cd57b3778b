/* SPDX-License-Identifier: MIT */
/*
 * (C) on plans with hundreds of named ranges.  The library finds a word's
 * named range by a bucketed search once a set has 16 ranges or more
 * (certify/words.c), which the small plans of the other suites never
 * reach.  Here the naive checker's linear scan (naive_word_fine) is the
 * oracle for thousands of probes: every range's edges and middle, random
 * values, and hull intervals of long repeats.  Fixed seed, printed.
 */
#define _GNU_SOURCE
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

#define SEARCH_SEED 0x5ea4c4ull
#define N_GLOBALS 300
#define N_MANY 120               /* planes of phase "many" */
#define N_FEW 3                  /* planes of phase "few": plain search */
#define N_RANDOM 2000
#define WINDOW_BASE 0x100000ull
#define WINDOW_SIZE ((uint64_t)1 << 26)

/* Field 51 holding one byte: the phase identities "m" and "f". */
static const uint8_t id_many[] = { 0x9a, 0x03, 0x01, 'm' };
static const uint8_t id_few[] = { 0x9a, 0x03, 0x01, 'f' };

struct plan {
	struct ac_window window;
	struct ac_tensor globals[N_GLOBALS];
	struct ac_tensor planes[N_MANY + N_FEW];
	struct ac_phase phases[2];
	uint64_t end;                /* where the next tensor may go */
};

/* Tensors of sizes from 1 byte to 64 KiB, with gaps of 0 to 4 KiB, so
 * that buckets hold zero, one or many ranges. */
static struct ac_tensor place(struct plan *p, struct gen_rng *r)
{
	uint64_t size = 1 + gen_rng_below(r, (uint64_t)1 << gen_rng_below(r, 17));
	uint64_t gap = gen_rng_below(r, 3) ? gen_rng_below(r, 4096) : 0;
	struct ac_tensor t = { .offset = p->end + gap, .size = size };
	p->end = t.offset + size;
	return t;
}

static void plan_init(struct plan *p, struct gen_rng *r)
{
	p->window = (struct ac_window){ .base = WINDOW_BASE, .size = WINDOW_SIZE };
	p->end = WINDOW_BASE - 8192;     /* the first tensors straddle the base */
	for (int i = 0; i < N_GLOBALS; i++)
		p->globals[i] = place(p, r);
	for (int i = 0; i < N_MANY + N_FEW; i++)
		p->planes[i] = place(p, r);
	p->phases[0] = (struct ac_phase){ { id_many + 3, 1 }, 0, N_MANY };
	p->phases[1] = (struct ac_phase){ { id_few + 3, 1 }, N_MANY, N_FEW };
	ck_assert_uint_lt(p->end, WINDOW_BASE + WINDOW_SIZE);
}

static struct ac_model plan_model(const struct plan *p)
{
	return (struct ac_model){
		.alignment = 1,
		.n_windows = 1, .windows = &p->window,
		.n_globals = N_GLOBALS, .globals = p->globals,
		.n_phases = 2, .phases = p->phases,
		.n_planes = N_MANY + N_FEW, .planes = p->planes,
	};
}

/* Probes: the edges and middle of every named range, random values
 * around and across the window, and the window's own edges. */
static uint64_t *probes(const struct plan *p, struct gen_rng *r, size_t *n)
{
	size_t cap = 5 * (N_GLOBALS + N_MANY + N_FEW) + N_RANDOM + 4, k = 0;
	uint64_t *v = malloc(cap * sizeof(*v));
	ck_assert_ptr_nonnull(v);
	const struct ac_tensor *all[] = { p->globals, p->planes };
	const int counts[] = { N_GLOBALS, N_MANY + N_FEW };
	for (int set = 0; set < 2; set++)
		for (int i = 0; i < counts[set]; i++) {
			const struct ac_tensor *t = &all[set][i];
			uint64_t last = t->offset + t->size - 1;
			v[k++] = t->offset - 1;
			v[k++] = t->offset;
			v[k++] = t->offset + (t->size - 1) / 2;
			v[k++] = last;
			v[k++] = last + 1;
		}
	for (int i = 0; i < N_RANDOM; i++)
		v[k++] = WINDOW_BASE - 16384 + gen_rng_below(r, p->end - WINDOW_BASE + 32768);
	v[k++] = WINDOW_BASE - 1;
	v[k++] = WINDOW_BASE;
	v[k++] = WINDOW_BASE + WINDOW_SIZE - 1;
	v[k++] = WINDOW_BASE + WINDOW_SIZE;
	*n = k;
	return v;
}

/* (A)-(C) of the launches [from, n): 0 or 2 + the first failing one. */
static uint64_t verdict_from(const struct ac_model *m, uint32_t from)
{
	struct ac_model tail = *m;
	tail.launches += from;
	tail.n_launches -= from;
	struct ac_error err;
	ac_program *prog = ac_program_new(&tail, &err);
	ck_assert_msg(prog != NULL, "%s: %s", err.where, err.message);
	uint64_t v = ac_program_verdict(prog);
	ac_program_free(prog);
	return v;
}

/* One launch per probe, each phase in turn.  With F the launches the
 * naive scan finds unfine, the program from any launch on must fail at
 * the next member of F, or pass when there is none. */
START_TEST(point_words_match_a_linear_scan)
{
	struct gen_rng r;
	gen_rng_seed(&r, SEARCH_SEED);
	fprintf(stderr, "search: seed %#" PRIx64 "\n", (uint64_t)SEARCH_SEED);
	static struct plan p;
	plan_init(&p, &r);
	size_t n;
	uint64_t *words = probes(&p, &r, &n);
	struct ac_launch *launches = calloc(2 * n, sizeof(*launches));
	ck_assert_ptr_nonnull(launches);
	for (size_t i = 0; i < 2 * n; i++)
		launches[i] = (struct ac_launch){
			{ i < n ? id_many : id_few, 4 }, i % n, 1, 0 };
	struct ac_model m = plan_model(&p);
	m.n_launches = (uint32_t)(2 * n);
	m.launches = launches;
	m.n_words = n;
	m.words = words;

	size_t unfine = 0;
	uint32_t next_bad = (uint32_t)(2 * n);   /* scanning backwards */
	for (uint32_t l = (uint32_t)(2 * n); l-- > 0;) {
		int fine = naive_word_fine(&m, l, 0);
		ck_assert_int_ne(fine, NAIVE_TOO_BIG);
		if (!fine) {
			next_bad = l;
			unfine++;
			ck_assert_uint_eq(verdict_from(&m, l), 2);
		}
		/* sampled: every launch that starts a run of fine ones */
		if (fine && (l == 0 || !naive_word_fine(&m, l - 1, 0))) {
			uint64_t expect = next_bad == 2 * n ? 0
					  : 2 + (uint64_t)(next_bad - l);
			ck_assert_msg(verdict_from(&m, l) == expect,
				      "from launch %u (word %#" PRIx64 "): "
				      "expected %" PRIu64, l, words[l % n],
				      expect);
		}
	}
	/* both outcomes are well represented */
	ck_assert_uint_gt(unfine, n / 10);
	ck_assert_uint_lt(unfine, 2 * n - n / 10);
	free(launches);
	free(words);
}
END_TEST

/* A repeat of 200 iterations with one delta: the word's interval is the
 * hull [x, x + 199 d] (spec 2 (C)), fine when inside one named range or
 * clear of the window. */
START_TEST(hull_intervals_match_a_linear_scan)
{
	struct gen_rng r;
	gen_rng_seed(&r, SEARCH_SEED + 1);
	static struct plan p;
	plan_init(&p, &r);
	size_t n;
	uint64_t *starts = probes(&p, &r, &n);
	size_t fine_count = 0, tried = 0;
	for (size_t i = 0; i < n; i += 3, tried++) {
		uint64_t word = starts[i];
		struct ac_launch launch = { { id_many, 4 }, 0, 1, 0 };
		/* steps from 1 byte to 1 MiB, either way */
		int64_t step = (int64_t)(1 + gen_rng_below(&r, (uint64_t)1 << gen_rng_below(&r, 21)));
		struct ac_delta delta = { 0, 0, gen_rng_below(&r, 2) ? step : -step };
		struct ac_repeat rep = { .first = 0, .count = 1,
					 .iterations = 200, .delta_first = 0,
					 .delta_count = 1 };
		struct ac_model m = plan_model(&p);
		m.n_launches = 1;
		m.launches = &launch;
		m.n_words = 1;
		m.words = &word;
		m.n_repeats = 1;
		m.repeats = &rep;
		m.n_deltas = 1;
		m.deltas = &delta;
		int fine = naive_word_fine(&m, 0, 0);
		ck_assert_int_ne(fine, NAIVE_TOO_BIG);
		fine_count += fine == 1;
		ck_assert_msg(verdict_from(&m, 0) == (fine ? 0 : 2),
			      "word %#" PRIx64 " delta %" PRId64 ": naive says %s",
			      word, delta.delta, fine ? "fine" : "not fine");
	}
	ck_assert_uint_gt(fine_count, 0);
	ck_assert_uint_lt(fine_count, tried);
	free(starts);
}
END_TEST

/*
 * Moved words whose hull crosses many ranges: weights laid out per layer
 * at a stride, a pointer moved one layer per iteration (the workloads'
 * vit --repeat).  The library walks the points along the ranges
 * (certify/words.c, first_bad_point), guessing each point's range from
 * the last two; here one layer at a time is broken (its tensor shrunk,
 * shifted or removed, or a foreign range inserted before it) and the
 * diagnostic must name exactly that iteration, moving either way.
 */
#define LAYERS 27
#define PER_LAYER 5
#define LAYER_STRIDE 0x10000ull

START_TEST(progression_points_name_the_first_bad_iteration)
{
	struct gen_rng r;
	gen_rng_seed(&r, SEARCH_SEED + 2);
	static struct ac_tensor g[LAYERS * PER_LAYER + 1];
	struct ac_window window = { .base = WINDOW_BASE, .size = WINDOW_SIZE };
	size_t cases = 0;
	for (int round = 0; round < 400; round++) {
		/* the layer layout: PER_LAYER tensors at fixed offsets */
		uint64_t off[PER_LAYER], size[PER_LAYER], at = 0;
		for (int k = 0; k < PER_LAYER; k++) {
			off[k] = at + 16 * gen_rng_below(&r, 8);
			size[k] = 32 + 16 * gen_rng_below(&r, 64);
			at = off[k] + size[k];
		}
		int target = (int)gen_rng_below(&r, PER_LAYER);
		int bad = round % 5 == 0 ? -1 : (int)gen_rng_below(&r, LAYERS);
		int how = (int)gen_rng_below(&r, 4);
		uint32_t n = 0;
		for (int l = 0; l < LAYERS; l++)
			for (int k = 0; k < PER_LAYER; k++) {
				struct ac_tensor t = {
					.offset = WINDOW_BASE + l * LAYER_STRIDE + off[k],
					.size = size[k] };
				if (l == bad && k == target) {
					if (how == 0) {
						t.size = 16;       /* ends before */
					} else if (how == 1) {
						t.offset += 16;    /* starts after */
						t.size -= 16;
					}
					else if (how == 2)
						continue;          /* gone */
					else {
						/* a range before it: the guess misses */
						g[n++] = (struct ac_tensor){
							.offset = t.offset - 0x8000,
							.size = 16 };
					}
				}
				g[n++] = t;
			}
		int down = round % 2;    /* from the last layer, delta < 0 */
		/* the word's byte in its layer's tensor: the last, or one of
		 * the first 16 when the broken layer's starts later */
		uint64_t word = WINDOW_BASE + off[target] +
				(how == 1 ? 8 : size[target] - 1) +
				(down ? (LAYERS - 1) * LAYER_STRIDE : 0);
		struct ac_launch launch = { { id_many, 4 }, 0, 1, 0 };
		struct ac_delta delta = { 0, 0, down ? -(int64_t)LAYER_STRIDE
						     : (int64_t)LAYER_STRIDE };
		struct ac_repeat rep = { .first = 0, .count = 1,
					 .iterations = LAYERS, .delta_first = 0,
					 .delta_count = 1 };
		struct ac_tensor plane = { .offset = WINDOW_BASE + WINDOW_SIZE - 64,
					   .size = 64 };
		struct ac_phase phase = { { id_many + 3, 1 }, 0, 1 };
		struct ac_model m = {
			.alignment = 16,
			.n_windows = 1, .windows = &window,
			.n_globals = n, .globals = g,
			.n_phases = 1, .phases = &phase,
			.n_planes = 1, .planes = &plane,
			.n_launches = 1, .launches = &launch,
			.n_words = 1, .words = &word,
			.n_repeats = 1, .repeats = &rep,
			.n_deltas = 1, .deltas = &delta,
		};
		/* a guessed range that does not hold the point: how 3 leaves
		 * the layer fine, the others break it */
		int expect_bad = bad >= 0 && how != 3;
		uint64_t t_bad = !expect_bad ? 0
			: down ? (uint64_t)(LAYERS - 1 - bad) : (uint64_t)bad;
		ck_assert_int_eq(naive_word_fine(&m, 0, 0), !expect_bad);
		uint64_t verdict;
		struct ac_diag diag;
		struct ac_error err;
		ck_assert_int_eq(ac_certify(&m, &verdict, &diag, &err), 0);
		ck_assert_msg(verdict == (expect_bad ? 2 : 0),
			      "round %d: layer %d broken (%d): verdict %" PRIu64,
			      round, bad, how, verdict);
		if (expect_bad)
			ck_assert_msg(diag.ordinal == t_bad,
				      "round %d: layer %d broken (%d), moving %s: "
				      "ordinal %" PRIu64 ", expected %" PRIu64,
				      round, bad, how, down ? "down" : "up",
				      diag.ordinal, t_bad);
		cases += expect_bad;
	}
	ck_assert_uint_gt(cases, 100);
}
END_TEST

/*
 * What (C) remembers between words (certify/words.c: the hints, slots by
 * a hash of phase, kernel and word; the moved words already found fine)
 * holds for one phase only.  N_PHASES phases, each with its own plane, so
 * that phases share hint slots; the launches run through the phases
 * twice, each with the same kernel (word 0) and POINTERS words into its
 * phase's plane, and then launch k points into phase p's plane instead:
 * the verdict is 2 + k and the word 1, for every p, as plain words and
 * as words a repeat moves.
 */
#define N_PHASES 96
#define POINTERS 32
#define PLANES_AT (WINDOW_BASE + 0x10000)

START_TEST(remembered_answers_hold_for_one_phase)
{
	struct ac_window window = { .base = WINDOW_BASE, .size = WINDOW_SIZE };
	struct ac_tensor global = { .offset = WINDOW_BASE, .size = 0x100 };
	static struct ac_tensor planes[N_PHASES];
	static struct ac_phase phases[N_PHASES];
	static uint8_t ids[N_PHASES][5];
	enum { N = 2 * N_PHASES, PER = 1 + POINTERS };
	static struct ac_launch launches[N];
	static uint64_t words[N * PER];
	static struct ac_delta deltas[N * POINTERS];
	for (uint32_t p = 0; p < N_PHASES; p++) {
		/* field 51, two bytes: "p" and the phase's number */
		memcpy(ids[p], (uint8_t[]){ 0x9a, 0x03, 0x02, 'p', (uint8_t)p }, 5);
		planes[p] = (struct ac_tensor){ .offset = PLANES_AT + 0x1000 * p,
						.size = 0x1000 };
		phases[p] = (struct ac_phase){ { ids[p] + 3, 2 }, p, 1 };
	}
	const uint32_t ks[] = { N_PHASES + 5, N - 1 };
	size_t cases = 0;
	for (int moved = 0; moved < 2; moved++)
	for (int ki = 0; ki < 2; ki++)
	for (uint32_t p = 0; p < N_PHASES; p++) {
		uint32_t k = ks[ki];
		if (p == k % N_PHASES)
			continue;
		for (uint32_t l = 0; l < N; l++) {
			uint32_t q = l % N_PHASES;
			launches[l] = (struct ac_launch){ { ids[q], 5 }, PER * l,
							  PER, 0 };
			words[PER * l] = 7;        /* the kernel */
			for (uint32_t w = 1; w < PER; w++) {
				/* moved: 2 points 8 apart, in the plane */
				words[PER * l + w] = planes[l == k ? p : q].offset +
						     0x10 * (w - 1);
				deltas[POINTERS * l + w - 1] =
					(struct ac_delta){ l, w, 8 };
			}
		}
		struct ac_repeat rep = { .first = 0, .count = N,
					 .iterations = 2, .delta_first = 0,
					 .delta_count = N * POINTERS };
		struct ac_model m = {
			.alignment = 1,
			.n_windows = 1, .windows = &window,
			.n_globals = 1, .globals = &global,
			.n_phases = N_PHASES, .phases = phases,
			.n_planes = N_PHASES, .planes = planes,
			.n_launches = N, .launches = launches,
			.n_words = N * PER, .words = words,
			.n_repeats = (uint32_t)moved, .repeats = &rep,
			.n_deltas = moved ? N * POINTERS : 0, .deltas = deltas,
		};
		ck_assert_int_eq(naive_word_fine(&m, k, 1), 0);
		ck_assert_int_eq(naive_word_fine(&m, k - 1, 1), 1);
		uint64_t verdict;
		struct ac_diag diag;
		struct ac_error err;
		ck_assert_int_eq(ac_certify(&m, &verdict, &diag, &err), 0);
		ck_assert_msg(verdict == 2 + k && diag.word == 1,
			      "%s, launch %u into phase %u's plane: verdict %"
			      PRIu64 ", word %" PRIu64, moved ? "moved" : "plain",
			      k, p, verdict, (uint64_t)diag.word);
		cases++;
	}
	ck_assert_uint_eq(cases, 4 * (N_PHASES - 1));
}
END_TEST

/* ---- launches compared with earlier ones (scan_plain) --------------- */

/* (C) of m, a model whose (A) and (B) hold, with the comparison of
 * launches on or off: its return value, *d and *compared. */
static int words_checked(const struct ac_model *m, int compare,
			 struct ac_diag *d, uint64_t *compared)
{
	struct hash_index h;
	uint32_t first, dup;
	ck_assert_int_eq(aci_phase_table_build(m, &h, &first, &dup), 0);
	uint32_t *phase_of = malloc(((size_t)m->n_launches + 1) *
				    sizeof(*phase_of));
	ck_assert_ptr_nonnull(phase_of);
	ck_assert_int_eq(aci_phases_of_launches(m, &h, phase_of, NULL), 0);
	aci_hash_index_free(&h);
	uint32_t *globals = aci_sort_tensors(m->globals, m->n_globals,
					     aci_planes_listed(m));
	ck_assert_ptr_nonnull(globals);
	memset(d, 0, sizeof(*d));
	ck_assert_int_eq(aci_check_layout(m, globals, globals + m->n_globals, d),
			 0);
	int rc = aci_check_words_compared(m, phase_of, globals,
					  globals + m->n_globals, compare, d,
					  compared);
	free(globals);
	free(phase_of);
	return rc;
}

/* The same return value and diagnostic with the comparison on and off;
 * the words compared (found equal to an earlier launch's). */
static uint64_t compared_agree(const struct ac_model *m, const char *what)
{
	struct ac_diag on, off;
	uint64_t compared = 0, none = 0;
	int rc_on = words_checked(m, 1, &on, &compared);
	int rc_off = words_checked(m, 0, &off, &none);
	ck_assert_msg(rc_on == rc_off && util_same_diag(&on, &off),
		      "%s: compared %d (launch %" PRIu64 " word %" PRIu64
		      "), tested %d (launch %" PRIu64 " word %" PRIu64 ")",
		      what, rc_on, (uint64_t)on.launch, (uint64_t)on.word,
		      rc_off, (uint64_t)off.launch, (uint64_t)off.word);
	ck_assert_uint_eq(none, 0);
	return compared;
}

/* decode's tokens repeat the previous token's launches with most words
 * unchanged: from the second token on, most words are found equal to the
 * previous token's and take no test; vit's and adjoint's launches move
 * their pointers, and are tested.  Every fault gets the same diagnostic
 * as without the comparison. */
START_TEST(equal_words_need_no_test)
{
	const enum workload_kind kinds[] = { WORKLOAD_DECODE, WORKLOAD_VIT,
					     WORKLOAD_ADJOINT };
	const enum workload_fault faults[] = { WORKLOAD_SOUND, WORKLOAD_REUSE,
					       WORKLOAD_STRIDE };
	for (int k = 0; k < 3; k++)
	for (int f = 0; f < 3; f++) {
		struct workload_spec spec = { kinds[k], faults[f], 10000, 0 };
		const char *why;
		struct workload *w = workload_new(&spec, &why);
		ck_assert_ptr_nonnull(w);
		char what[64];
		snprintf(what, sizeof(what), "%s %s",
			 workload_kind_name(kinds[k]),
			 workload_fault_name(faults[f]));
		uint64_t compared = compared_agree(&w->model, what);
		if (kinds[k] == WORKLOAD_DECODE && faults[f] == WORKLOAD_SOUND)
			ck_assert_msg(2 * compared > w->model.n_words,
				      "%s: %" PRIu64 " of %" PRIu64
				      " words compared", what, compared,
				      (uint64_t)w->model.n_words);
		workload_free(w);
	}
}
END_TEST

#define COMPARED_SEED 0xc0a9a7edull
#define COMPARED_PROGRAMS 3000

/* Values for the random launches below: fine for every phase (the global,
 * outside the window, a count), fine for some phases only, and in the
 * window but in no named range. */
static const char *const compared_values[] = {
	"0x1000", "0x10ff", "0x2000", "5", "0x1400", "0x1410",
	"0x14ff", "0x1440", "0x1500", "0x15ff", "0x1100", "0x1fff",
};
#define FINE_EVERYWHERE 6        /* the first six are fine in every phase */

/*
 * Random launch tables over PLAN_PQR-like phases, most launches a copy of
 * one a few back with a word or none changed, and repeats of one launch,
 * by a delta or by a table whose word is bad as written but fine in every
 * frame, copied by plain launches after it:
 * the comparison must give the diagnostic of testing every word, and never
 * take a launch a repeat moves as proof.  Fixed seed, printed.
 */
START_TEST(compared_words_decide_as_tested)
{
	static const char plan[] =
		"\"alignment\": 1,"
		"\"windows\": [{\"base\": \"0x1000\", \"size\": \"0x1000\"}],"
		"\"globals\": [{\"name\": \"w\", \"offset\": \"0x1000\", \"size\": 256}],"
		"\"phases\": ["
		" {\"identity\": \"P\", \"planes\": [{\"name\": \"a\", \"offset\": \"0x1400\", \"size\": 256, \"carried\": false}]},"
		" {\"identity\": \"Q\", \"planes\": [{\"name\": \"a\", \"offset\": \"0x1400\", \"size\": 256, \"carried\": false},"
		"  {\"name\": \"b\", \"offset\": \"0x1500\", \"size\": 256, \"carried\": false}]},"
		" {\"identity\": \"R\", \"planes\": [{\"name\": \"z\", \"offset\": \"0x1400\", \"size\": 64, \"carried\": false}]}]";
	struct gen_rng r;
	gen_rng_seed(&r, COMPARED_SEED);
	printf("search: compared_words_decide_as_tested seed 0x%llx\n",
	       (unsigned long long)COMPARED_SEED);
	uint64_t compared = 0, failed = 0;
	for (int prog = 0; prog < COMPARED_PROGRAMS; prog++) {
		enum { MAX_LAUNCHES = 48, MAX_WORDS = 4 };
		uint32_t n = 4 + (uint32_t)gen_rng_below(&r, MAX_LAUNCHES - 4);
		uint32_t phase[MAX_LAUNCHES], count[MAX_LAUNCHES];
		uint32_t value[MAX_LAUNCHES][MAX_WORDS];
		/* a repeat over launch `moved` (none: n), its word 0 bad as
		 * written; then copies of it */
		uint32_t moved = gen_rng_below(&r, 2) ? (uint32_t)gen_rng_below(&r, n - 2) : n;
		int by_table = gen_rng_below(&r, 2);
		for (uint32_t l = 0; l < n; l++) {
			uint32_t back = 1 + (uint32_t)gen_rng_below(&r, 4);
			int bad = gen_rng_below(&r, 40) == 0;
			if (l >= back && gen_rng_below(&r, 4) != 0) {
				phase[l] = phase[l - back];
				count[l] = count[l - back];
				memcpy(value[l], value[l - back], sizeof(value[l]));
				if (gen_rng_below(&r, 3) == 0)
					value[l][gen_rng_below(&r, count[l])] =
						(uint32_t)gen_rng_below(&r, bad ? 12 : FINE_EVERYWHERE);
			} else {
				phase[l] = (uint32_t)gen_rng_below(&r, 3);
				count[l] = 1 + (uint32_t)gen_rng_below(&r, MAX_WORDS);
				for (uint32_t w = 0; w < MAX_WORDS; w++)
					value[l][w] = (uint32_t)gen_rng_below(&r,
						bad ? 12 : FINE_EVERYWHERE);
			}
			if (l == moved) {
				/* by a table: word 0 as written is never a
				 * value (0x1100: bad), its frames are; by a
				 * delta: written, it is the value at t = 0 */
				phase[l] = 0;
				if (by_table)
					value[l][0] = 10;
			}
		}
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		fprintf(f, "{%s, \"launches\": [", plan);
		for (uint32_t l = 0; l < n; l++) {
			fprintf(f, "%s{\"phase\": \"%c\", \"words\": [", l ? ", " : "",
				"PQR"[phase[l]]);
			for (uint32_t w = 0; w < count[l]; w++)
				fprintf(f, "%s\"%s\"", w ? ", " : "",
					compared_values[value[l][w]]);
			fprintf(f, "]}");
		}
		fprintf(f, "]");
		if (moved < n)
			fprintf(f, ", \"repeats\": [{\"first\": %u, \"count\": 1, "
				"\"iterations\": 2, %s}]", moved, by_table ?
				"\"table\": {\"slots\": [{\"launch\": 0, \"word\": 0}],"
				" \"frames\": [[\"0x1400\"], [\"0x1410\"]]}" :
				"\"deltas\": [{\"launch\": 0, \"word\": 0, \"delta\": 0}]");
		fprintf(f, "}");
		fclose(f);
		if (moved < n) {
			/* the slot and the delta name the body's own launch */
			char at[32];
			snprintf(at, sizeof(at), "\"launch\": %u", moved);
			char *p = strstr(text, "\"launch\": 0");
			ck_assert_ptr_nonnull(p);
			size_t old = strlen("\"launch\": 0"), add = strlen(at);
			char *t = malloc(len + add + 1);
			ck_assert_ptr_nonnull(t);
			memcpy(t, text, (size_t)(p - text));
			memcpy(t + (p - text), at, add);
			strcpy(t + (p - text) + add, p + old);
			free(text);
			text = t;
		}
		struct ac_model *m = util_model_json(text);
		char what[48];
		snprintf(what, sizeof(what), "program %d", prog);
		struct ac_diag d;
		uint64_t c = compared_agree(m, what);
		compared += c;
		failed += words_checked(m, 1, &d, &c) == 1;
		ac_model_free(m);
		free(text);
	}
	/* both ways were taken: words compared, programs failing */
	ck_assert_uint_gt(compared, 0);
	ck_assert_uint_gt(failed, COMPARED_PROGRAMS / 10);
	ck_assert_uint_lt(failed, COMPARED_PROGRAMS * 9 / 10);
}
END_TEST

Suite *suite_search(void)
{
	Suite *s = suite_create("search");
	TCase *tc = tcase_create("many_ranges");
	tcase_add_test(tc, point_words_match_a_linear_scan);
	tcase_add_test(tc, hull_intervals_match_a_linear_scan);
	tcase_add_test(tc, progression_points_name_the_first_bad_iteration);
	tcase_add_test(tc, remembered_answers_hold_for_one_phase);
	tcase_add_test(tc, equal_words_need_no_test);
	tcase_add_test(tc, compared_words_decide_as_tested);
	suite_add_tcase(s, tc);
	return s;
}
