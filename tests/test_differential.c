/* SPDX-License-Identifier: MIT */
/*
 * The differential suite: the library against the deliberately naive
 * checker (naive.c) on thousands of generated programs (gen.c).
 *
 * Every program i of base seed s is generated from its own PRNG stream, so
 * a failure is reproduced by
 *     AG_DIFF_SEED=s AG_DIFF_ONLY=i CK_RUN_SUITE=differential arenacert-tests
 * AG_DIFF_SEED replaces the fixed seed list with one base seed and
 * AG_DIFF_COUNT sets the programs per seed.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "naive.h"
#include "suites.h"
#include "util.h"

/* ---- configuration ------------------------------------------------------ */

static const uint64_t default_seeds[] = {
	0x0849689d36719d1bull, 0x1ull, 0xdecafbadull, 0x5eed5eed5eedull,
};
#define DEFAULT_COUNT 1500             /* programs per seed */
#define MAX_DUMPS 3                    /* mismatching programs dumped */
#define MIN_SHARE_PERCENT 3            /* each verdict class at least */

struct config {
	uint64_t seeds[16];
	size_t n_seeds;
	uint64_t count;
	int64_t only;                  /* one program index, or -1 */
};

static uint64_t env_u64(const char *name, uint64_t fallback)
{
	const char *v = getenv(name);
	return v && *v ? strtoull(v, NULL, 0) : fallback;
}

static struct config get_config(void)
{
	struct config c;
	memset(&c, 0, sizeof(c));
	if (getenv("AG_DIFF_SEED")) {
		c.seeds[0] = env_u64("AG_DIFF_SEED", 0);
		c.n_seeds = 1;
	} else {
		c.n_seeds = sizeof(default_seeds) / sizeof(default_seeds[0]);
		memcpy(c.seeds, default_seeds, sizeof(default_seeds));
	}
	c.count = env_u64("AG_DIFF_COUNT", DEFAULT_COUNT);
	c.only = getenv("AG_DIFF_ONLY") ? (int64_t)env_u64("AG_DIFF_ONLY", 0) : -1;
	return c;
}

/* Program i of a base seed has its own stream: reproducible alone. */
static struct ac_model *program(uint64_t seed, uint64_t i, int *aim)
{
	struct gen_rng r;
	gen_rng_seed(&r, seed ^ (i * 0x9E3779B97F4A7C15ull));
	return gen_model_aimed(&r, aim);
}

/* ---- outcomes --------------------------------------------------------------- */

enum outcome { O_CERTIFIED, O_AB, O_C, O_D, O_MALFORMED, O_TOO_BIG, O_COUNT };

static const char *outcome_names[O_COUNT] = {
	"certified", "A/B", "C", "D", "malformed", "too-big-for-naive",
};

static enum outcome classify(const struct ac_model *m, int rc, uint64_t v)
{
	if (rc == NAIVE_MALFORMED)
		return O_MALFORMED;
	if (rc == NAIVE_TOO_BIG)
		return O_TOO_BIG;
	if (v == 0)
		return O_CERTIFIED;
	if (v == 1)
		return O_AB;
	return v < 2 + (uint64_t)m->n_launches ? O_C : O_D;
}

/* "verdict N" or "malformed" for messages. */
static const char *show(int rc, uint64_t v, char *buf, size_t len)
{
	if (rc == NAIVE_MALFORMED)
		snprintf(buf, len, "malformed");
	else if (rc == NAIVE_TOO_BIG)
		snprintf(buf, len, "too big");
	else
		snprintf(buf, len, "verdict %" PRIu64, v);
	return buf;
}

/* The program as JSON on stderr: the library's writer, or gen's own
 * when the writer refuses. */
static void dump(const struct ac_model *m)
{
	size_t len = 0;
	struct ac_error err;
	char *json = ac_model_write_json(m, &len, &err);
	if (json) {
		fwrite(json, 1, len, stderr);
		fputc('\n', stderr);
		free(json);
	} else {
		gen_model_dump_json(stderr, m);
	}
}

/* The library's answer in the naive checker's terms. */
static int library_certify(const struct ac_model *m, uint64_t *v,
			   struct ac_diag *diag, struct ac_error *err)
{
	memset(err, 0, sizeof(*err));
	return ac_certify(m, v, diag, err) == 0 ? 0 : NAIVE_MALFORMED;
}

/* ---- the diagnostic must tell the truth --------------------------------------- */

/*
 * Which of several failing objects a diagnostic names is the library's
 * choice; what it says about the one it names is checkable: the condition
 * matches the verdict, the launch and instance are the verdict's, a
 * misaligned tensor is misaligned, overlapping tensors overlap, an
 * unnamed word is one of the launch's unfine words, an overwritten plane
 * was overwritten by a plane of another key over its bytes.
 */
static const struct ac_tensor *diag_tensor(const struct ac_model *m,
					   struct ac_tensor_ref r)
{
	if (r.phase == AC_NONE)
		return r.index < m->n_globals ? &m->globals[r.index] : NULL;
	if (r.phase >= m->n_phases || r.index >= m->phases[r.phase].plane_count)
		return NULL;
	return &m->planes[m->phases[r.phase].plane_first + r.index];
}

static int tensors_meet(const struct ac_tensor *a, const struct ac_tensor *b)
{
	typedef unsigned __int128 u128;
	return a->size && b->size &&
	       (u128)a->offset < (u128)b->offset + b->size &&
	       (u128)b->offset < (u128)a->offset + a->size;
}

static int same_key(const struct ac_tensor *a, const struct ac_tensor *b)
{
	return a->offset == b->offset && a->size == b->size &&
	       a->name.len == b->name.len &&
	       (a->name.len == 0 || memcmp(a->name.data, b->name.data, a->name.len) == 0);
}

static const char *layout_problem(const struct ac_model *m, const struct ac_diag *d)
{
	const struct ac_tensor *t0 = diag_tensor(m, d->tensor[0]);
	const struct ac_tensor *t1 = diag_tensor(m, d->tensor[1]);
	int global0 = d->tensor[0].phase == AC_NONE;
	switch (d->reason) {
	case AC_GLOBAL_MISALIGNED:
	case AC_PLANE_MISALIGNED:
		if (!t0 || global0 != (d->reason == AC_GLOBAL_MISALIGNED) ||
		    t0->offset % m->alignment == 0)
			return "names an aligned tensor as misaligned";
		return NULL;
	case AC_GLOBAL_EMPTY:
	case AC_PLANE_EMPTY:
		if (!t0 || global0 != (d->reason == AC_GLOBAL_EMPTY) || t0->size)
			return "names a non-empty tensor as empty";
		return NULL;
	case AC_GLOBALS_OVERLAP:
	case AC_PLANES_OVERLAP:
	case AC_PLANE_OVERLAPS_GLOBAL:
		if (!t0 || !t1 || t0 == t1 || !tensors_meet(t0, t1))
			return "names two tensors that do not overlap";
		if (d->reason == AC_PLANES_OVERLAP &&
		    d->tensor[0].phase != d->tensor[1].phase)
			return "overlapping planes of different phases";
		return NULL;
	default:
		return "a reason that is not (A) or (B)";
	}
}

static const char *words_problem(const struct ac_model *m, uint64_t v,
				 const struct naive_detail *nd,
				 const struct ac_diag *d)
{
	if (d->launch != v - 2)
		return "names another launch than the verdict's";
	if (nd->phase < 0)
		return d->reason == AC_LAUNCH_NO_PHASE ? NULL
			: "a launch without phase reported for its words";
	if (d->reason != AC_WORD_UNNAMED)
		return "a launch with a phase reported as without one";
	if (d->word >= m->launches[d->launch].word_count ||
	    naive_word_fine(m, d->launch, d->word) != 0)
		return "names a word whose intervals are all fine";
	return NULL;
}

static const char *carried_problem(const struct ac_model *m, uint64_t v,
				   const struct naive_detail *nd,
				   const struct ac_diag *d)
{
	uint64_t k = v - 2 - m->n_launches;
	const struct ac_tensor *c = diag_tensor(m, d->tensor[0]);
	if (d->instance != k)
		return "names another instance than the verdict's";
	if (d->phase != (uint64_t)nd->phase || d->tensor[0].phase != d->phase)
		return "names another phase than the breaking instance's";
	if (!c || !c->carried)
		return "names a plane that is not carried";
	if (d->reason == AC_CARRIED_UNDECLARED)
		return NULL;
	const struct ac_tensor *o = diag_tensor(m, d->tensor[1]);
	if (d->reason != AC_CARRIED_OVERWRITTEN)
		return "a reason that is not (D)";
	if (!(d->earlier < d->intervening && d->intervening < k))
		return "intervening instance not between earlier and k";
	if (!o || d->tensor[1].phase == AC_NONE || same_key(o, c) ||
	    !tensors_meet(o, c))
		return "the overwriting plane does not overwrite";
	return NULL;
}

/* NULL when the library's diagnostic agrees with the naive verdict. */
static const char *diag_problem(const struct ac_model *m, uint64_t v,
				const struct naive_detail *nd,
				const struct ac_diag *d)
{
	static const enum ac_condition cond[] = {
		['A'] = AC_COND_A, ['B'] = AC_COND_B, ['C'] = AC_COND_C,
		['D'] = AC_COND_D,
	};
	if (d->verdict != v)
		return "diag.verdict differs from the verdict";
	if (nd->condition == 0)
		return d->condition == AC_CERTIFIED ? NULL
						     : "a condition for a certified program";
	if (d->condition != cond[(unsigned char)nd->condition])
		return "the wrong condition (A before B before C before D)";
	switch (nd->condition) {
	case 'A':
	case 'B':
		return layout_problem(m, d);
	case 'C':
		return words_problem(m, v, nd, d);
	default:
		return carried_problem(m, v, nd, d);
	}
}

static int agree(int rc_a, uint64_t va, int rc_b, uint64_t vb)
{
	return rc_a == rc_b && (rc_a != 0 || va == vb);
}

/* ---- one-shot: library vs naive --------------------------------------------- */

struct tally {
	uint64_t total, mismatches;
	uint64_t by_outcome[O_COUNT];
	uint64_t by_aim[GEN_AIM_COUNT][O_COUNT];
};

static void report_mismatch(uint64_t seed, uint64_t i, const struct ac_model *m,
			    int rc_n, uint64_t vn, int rc_l, uint64_t vl,
			    const struct ac_error *err, uint64_t nth)
{
	char a[64], b[64], text[400];
	fprintf(stderr,
		"differential MISMATCH seed 0x%" PRIx64 " program %" PRIu64
		": naive %s, library %s%s%s\n",
		seed, i, show(rc_n, vn, a, sizeof(a)), show(rc_l, vl, b, sizeof(b)),
		rc_l ? " -- " : "",
		rc_l ? ac_error_text(err, text, sizeof(text)) : "");
	if (nth < MAX_DUMPS)
		dump(m);
}

static void check_one(struct tally *t, uint64_t seed, uint64_t i)
{
	int aim;
	struct ac_model *m = program(seed, i, &aim);
	uint64_t vn = 0, vl = 0;
	struct ac_error err;
	struct ac_diag diag;
	struct naive_detail nd;
	int rc_n = naive_certify_detail(m, &vn, &nd);
	enum outcome o = classify(m, rc_n, vn);
	t->total++;
	t->by_outcome[o]++;
	t->by_aim[aim][o]++;
	if (rc_n != NAIVE_TOO_BIG) {
		int rc_l = library_certify(m, &vl, &diag, &err);
		const char *why;
		if (!agree(rc_n, vn, rc_l, vl)) {
			report_mismatch(seed, i, m, rc_n, vn, rc_l, vl, &err,
					t->mismatches++);
		} else if (rc_n == 0 && (why = diag_problem(m, vn, &nd, &diag))) {
			fprintf(stderr, "differential DIAGNOSTIC seed 0x%" PRIx64
				" program %" PRIu64 " (verdict %" PRIu64 "): %s\n",
				seed, i, vn, why);
			if (t->mismatches++ < MAX_DUMPS)
				dump(m);
		}
	}
	gen_model_free(m);
}

static void print_tally(const struct tally *t)
{
	static const char *aims[GEN_AIM_COUNT] = {
		"unmutated", "aim A/B", "aim C", "aim D", "aim malformed",
		"aim benign", "tiled",
	};
	printf("differential: %" PRIu64 " programs, %" PRIu64 " mismatches\n",
	       t->total, t->mismatches);
	for (int o = 0; o < O_COUNT; o++)
		printf("  %-18s %7" PRIu64 " (%.1f%%)\n", outcome_names[o],
		       t->by_outcome[o],
		       t->total ? 100.0 * (double)t->by_outcome[o] / (double)t->total : 0.0);
	printf("  by mutation aim (certified A/B C D malformed too-big):\n");
	for (int a = 0; a < GEN_AIM_COUNT; a++) {
		printf("    %-14s", aims[a]);
		for (int o = 0; o < O_COUNT; o++)
			printf(" %6" PRIu64, t->by_aim[a][o]);
		printf("\n");
	}
}

START_TEST(library_matches_naive)
{
	struct config c = get_config();
	struct tally t;
	memset(&t, 0, sizeof(t));
	for (size_t s = 0; s < c.n_seeds; s++) {
		printf("differential: base seed 0x%" PRIx64 ", %" PRIu64
		       " programs%s\n", c.seeds[s], c.only >= 0 ? 1 : c.count,
		       c.only >= 0 ? " (AG_DIFF_ONLY)" : "");
		if (c.only >= 0) {
			check_one(&t, c.seeds[s], (uint64_t)c.only);
			continue;
		}
		for (uint64_t i = 0; i < c.count; i++)
			check_one(&t, c.seeds[s], i);
	}
	print_tally(&t);
	fflush(stdout);
	ck_assert_msg(t.mismatches == 0,
		      "%" PRIu64 " of %" PRIu64 " programs disagree (see stderr)",
		      t.mismatches, t.total);
	if (c.only >= 0 || t.total < 200)
		return;                 /* too few for shares to mean anything */
	for (int o = 0; o < O_MALFORMED + 1; o++)
		ck_assert_msg(t.by_outcome[o] * 100 >= t.total * MIN_SHARE_PERCENT,
			      "the generator covers class %s too rarely: %" PRIu64
			      " of %" PRIu64, outcome_names[o], t.by_outcome[o],
			      t.total);
}
END_TEST

/* ---- incremental schedules vs one shot and vs naive on prefixes ------------ */

/* The model with only its first k references. */
static int naive_prefix(const struct ac_model *m, uint64_t k, uint64_t *v)
{
	struct ac_model prefix = *m;
	prefix.n_refs = k;
	return naive_certify(&prefix, v);
}

/* Verdict of a schedule so far, checked against naive on the prefix. */
static int prefix_agrees(const ac_schedule *s, const struct ac_model *m,
			 uint64_t k, uint64_t seed, uint64_t i)
{
	uint64_t vn = 0, executed = 0;
	int rc_n = naive_prefix(m, k, &vn);
	if (rc_n == NAIVE_TOO_BIG)
		return 1;
	uint64_t vl = ac_schedule_verdict(s, NULL);
	struct ac_model prefix = *m;
	prefix.n_refs = k;
	naive_executed(&prefix, &executed);
	if (rc_n == 0 && vn == vl && ac_schedule_length(s) == k &&
	    ac_schedule_executed(s) == executed)
		return 1;
	char a[64];
	fprintf(stderr,
		"incremental MISMATCH seed 0x%" PRIx64 " program %" PRIu64
		" after %" PRIu64 " refs: naive %s, library verdict %" PRIu64
		" (length %" PRIu64 ", executed %" PRIu64 " vs %" PRIu64 ")\n",
		seed, i, k, show(rc_n, vn, a, sizeof(a)), vl,
		ac_schedule_length(s), ac_schedule_executed(s), executed);
	return 0;
}

/* Appends the model's references one at a time; returns the final
 * verdict or AC_NONE when a reference was refused (or on a mismatch,
 * after printing it; *ok is cleared then).  A twin schedule of the same
 * program takes the same references interleaved with the first: schedules
 * share the program and nothing else. */
static uint64_t append_one_by_one(const ac_program *p, const struct ac_model *m,
				  uint64_t seed, uint64_t i, int *ok)
{
	ac_schedule *s = ac_schedule_new(p), *twin = ac_schedule_new(p);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(twin);
	uint64_t verdict = AC_NONE, v;
	*ok &= prefix_agrees(s, m, 0, seed, i);
	uint64_t k;
	for (k = 0; k < m->n_refs && *ok; k++) {
		struct ac_error err;
		if (ac_schedule_append(s, &m->refs[k], 1, &err) != 0) {
			/* Refused: the prefix through this ref is malformed. */
			if (naive_prefix(m, k + 1, &v) != NAIVE_MALFORMED) {
				fprintf(stderr, "incremental MISMATCH seed 0x%" PRIx64
					" program %" PRIu64 ": ref %" PRIu64
					" refused, naive accepts it\n", seed, i, k);
				*ok = 0;
			}
			/* Atomic: nothing was appended. */
			*ok &= ac_schedule_length(s) == k;
			break;
		}
		*ok &= prefix_agrees(s, m, k + 1, seed, i);
		if (ac_schedule_append(twin, &m->refs[k], 1, &err) != 0 ||
		    ac_schedule_verdict(twin, NULL) != ac_schedule_verdict(s, NULL)) {
			fprintf(stderr, "incremental MISMATCH seed 0x%" PRIx64
				" program %" PRIu64 ": twin schedule differs "
				"after %" PRIu64 " refs\n", seed, i, k + 1);
			*ok = 0;
		}
	}
	if (k == m->n_refs)
		verdict = ac_schedule_verdict(s, NULL);
	ac_schedule_free(s);
	ac_schedule_free(twin);
	return verdict;
}

/* Appends every reference in one batch: the same verdict, or refused as
 * a whole when one-by-one refused some reference. */
static int batch_agrees(const ac_program *p, const struct ac_model *m,
			uint64_t one_by_one)
{
	ac_schedule *s = ac_schedule_new(p);
	ck_assert_ptr_nonnull(s);
	struct ac_error err;
	int rc = ac_schedule_append(s, m->refs, (size_t)m->n_refs, &err);
	int ok;
	if (one_by_one == AC_NONE)
		ok = rc != 0 && ac_schedule_length(s) == 0;
	else
		ok = rc == 0 && ac_schedule_verdict(s, NULL) == one_by_one;
	ac_schedule_free(s);
	return ok;
}

static int incremental_one(uint64_t seed, uint64_t i)
{
	struct ac_model *m = program(seed, i, NULL);
	struct ac_error err;
	uint64_t v;
	int ok = 1;
	ac_program *p = ac_program_new(m, &err);
	if (!p) {
		/* The plan or table is malformed: so is every prefix. */
		ok = naive_prefix(m, 0, &v) == NAIVE_MALFORMED;
		if (!ok)
			fprintf(stderr, "incremental MISMATCH seed 0x%" PRIx64
				" program %" PRIu64 ": ac_program_new refused a "
				"well-formed plan\n", seed, i);
	} else {
		uint64_t final = append_one_by_one(p, m, seed, i, &ok);
		if (ok && !batch_agrees(p, m, final)) {
			fprintf(stderr, "incremental MISMATCH seed 0x%" PRIx64
				" program %" PRIu64 ": batch append differs from "
				"one-by-one\n", seed, i);
			ok = 0;
		}
		uint64_t once;
		if (ok && final != AC_NONE &&
		    (ac_certify(m, &once, NULL, &err) != 0 || once != final)) {
			fprintf(stderr, "incremental MISMATCH seed 0x%" PRIx64
				" program %" PRIu64 ": ac_certify differs from "
				"appends\n", seed, i);
			ok = 0;
		}
		ac_program_free(p);
	}
	if (!ok)
		dump(m);
	gen_model_free(m);
	return ok;
}

START_TEST(incremental_matches_naive_prefixes)
{
	struct config c = get_config();
	uint64_t count = c.only >= 0 ? 1 : (c.count + 3) / 4;
	uint64_t failed = 0, total = 0;
	for (size_t s = 0; s < c.n_seeds; s++) {
		printf("incremental: base seed 0x%" PRIx64 ", %" PRIu64 " programs\n",
		       c.seeds[s], count);
		for (uint64_t i = 0; i < count && failed < MAX_DUMPS; i++) {
			uint64_t index = c.only >= 0 ? (uint64_t)c.only : i;
			failed += !incremental_one(c.seeds[s], index);
			total++;
		}
	}
	ck_assert_msg(failed == 0, "%" PRIu64 " of %" PRIu64
		      " programs: incremental schedule disagrees", failed, total);
}
END_TEST

/* ---- the interchange formats keep every generated program ------------------ */

/* Writes m in one format, reads it back: the naive verdict must not
 * change, and writing the copy gives the same bytes.  Writers and readers
 * may refuse only programs that are malformed anyway. */
static int roundtrip(const struct ac_model *m, int rc, uint64_t v, int image)
{
	struct ac_error err;
	size_t len = 0, len2 = 0;
	void *out = image ? (void *)ac_model_write_image(m, &len, &err)
			  : (void *)ac_model_write_json(m, &len, &err);
	if (!out)
		return rc == NAIVE_MALFORMED;
	struct ac_model *copy = NULL;
	int read = image ? ac_model_read_image(out, len, &copy, &err)
			 : ac_model_read_json(out, len, &copy, &err);
	int ok = rc == NAIVE_MALFORMED;
	if (read == 0) {
		uint64_t v2 = 0;
		int rc2 = naive_certify(copy, &v2);
		void *again = image ? (void *)ac_model_write_image(copy, &len2, &err)
				    : (void *)ac_model_write_json(copy, &len2, &err);
		ok = agree(rc, v, rc2, v2) && again && len2 == len &&
		     memcmp(out, again, len) == 0;
		free(again);
		ac_model_free(copy);
	}
	free(out);
	return ok;
}

START_TEST(formats_keep_verdicts)
{
	struct config c = get_config();
	uint64_t count = c.only >= 0 ? 1 : (c.count + 3) / 4;
	uint64_t failed = 0, total = 0;
	for (size_t s = 0; s < c.n_seeds; s++) {
		printf("formats: base seed 0x%" PRIx64 ", %" PRIu64 " programs\n",
		       c.seeds[s], count);
		for (uint64_t i = 0; i < count && failed < MAX_DUMPS; i++) {
			uint64_t index = c.only >= 0 ? (uint64_t)c.only : i;
			struct ac_model *m = program(c.seeds[s], index, NULL);
			uint64_t v = 0;
			int rc = naive_certify(m, &v);
			for (int image = 0; image < 2; image++) {
				if (roundtrip(m, rc, v, image))
					continue;
				fprintf(stderr, "formats MISMATCH seed 0x%" PRIx64
					" program %" PRIu64 ": the %s round trip "
					"changes the program\n", c.seeds[s], index,
					image ? "image" : "JSON");
				gen_model_dump_json(stderr, m);
				failed++;
			}
			total++;
			gen_model_free(m);
		}
	}
	ck_assert_msg(failed == 0, "%" PRIu64 " of %" PRIu64
		      " programs changed by a format round trip", failed, total);
}
END_TEST

/* ---- the 2^62 boundary of the executed sequence ------------------------------- */

/*
 * Table: a body of 2^15 launches repeated 2^32 - 1 times, then 2^15 - 1
 * single launches.  A reference over all of it stands for
 * 2^15 (2^32 - 1) + 2^15 - 1 = 2^47 - 1 launches; 2^15 of them make
 * 2^62 - 2^15, and 2^15 - 1 more single-launch references make 2^62 - 1
 * (well-formed); one more makes 2^62 (malformed).  One phase, no planes,
 * no words: certified.
 */
struct big_program {
	struct ac_model m;
	struct ac_launch *launches;
	struct ac_ref *refs;
	struct ac_repeat repeat;
	struct ac_phase phase;
};

static const uint8_t big_identity[] = { 0x9a, 0x03, 0x01, 'P' };

static void big_build(struct big_program *b, uint64_t extra_refs)
{
	const uint64_t half = (uint64_t)1 << 15;
	memset(b, 0, sizeof(*b));
	b->launches = calloc(2 * half, sizeof(*b->launches));
	b->refs = calloc(half + extra_refs, sizeof(*b->refs));
	ck_assert(b->launches && b->refs);
	for (uint64_t l = 0; l < 2 * half - 1; l++)
		b->launches[l].identity = (struct ac_bytes){ big_identity, 4 };
	b->repeat.first = 0;
	b->repeat.count = half;
	b->repeat.iterations = 0xFFFFFFFFu;
	for (uint64_t r = 0; r < half; r++)
		b->refs[r] = (struct ac_ref){ 0, 2 * half - 1 };
	for (uint64_t r = 0; r < extra_refs; r++)
		b->refs[half + r] = (struct ac_ref){ half, 1 };
	b->phase.identity = (struct ac_bytes){ big_identity + 3, 1 };
	b->m.alignment = 1;
	b->m.n_phases = 1;
	b->m.phases = &b->phase;
	b->m.n_launches = (uint32_t)(2 * half - 1);
	b->m.launches = b->launches;
	b->m.n_repeats = 1;
	b->m.repeats = &b->repeat;
	b->m.n_refs = half + extra_refs;
	b->m.refs = b->refs;
}

static void big_free(struct big_program *b)
{
	free(b->launches);
	free(b->refs);
}

START_TEST(executed_limit_boundary)
{
	const uint64_t half = (uint64_t)1 << 15;
	struct big_program b;
	uint64_t v = 7, executed = 0;
	struct ac_error err;

	big_build(&b, half - 1);          /* 2^62 - 1 launches */
	ck_assert_int_eq(naive_executed(&b.m, &executed), 0);
	ck_assert_uint_eq(executed, ((uint64_t)1 << 62) - 1);
	ck_assert_int_eq(naive_certify(&b.m, &v), NAIVE_TOO_BIG);
	ck_assert_msg(ac_certify(&b.m, &v, NULL, &err) == 0,
		      "2^62 - 1 executed launches refused: %s", err.message);
	ck_assert_uint_eq(v, 0);
	big_free(&b);

	big_build(&b, half);              /* 2^62 launches */
	ck_assert_int_eq(naive_certify(&b.m, &v), NAIVE_MALFORMED);
	ck_assert_msg(ac_certify(&b.m, &v, NULL, &err) != 0,
		      "2^62 executed launches accepted (verdict %" PRIu64 ")", v);
	big_free(&b);
}
END_TEST

/* ---- the naive checker on hand-computed cases ---------------------------------- */

/* Section 5's plan. */
#define BYTES(s) { (const uint8_t *)(s), sizeof(s) - 1 }
static const struct ac_window ex_windows[] = { { { NULL, 0 }, 0x1000, 0x1000 } };
static const struct ac_tensor ex_globals[] = { { BYTES("w"), 0x1000, 0x100, 0, { 0 } } };
static const struct ac_tensor ex_planes[] = {
	{ BYTES("a"), 0x1400, 0x100, 0, { 0 } },
	{ BYTES("a"), 0x1400, 0x100, 1, { 0 } },
	{ BYTES("b"), 0x1500, 0x100, 0, { 0 } },
	{ BYTES("z"), 0x1400, 0x40, 0, { 0 } },
};
static const struct ac_phase ex_phases[] = {
	{ BYTES("P"), 0, 1 }, { BYTES("Q"), 1, 2 }, { BYTES("R"), 3, 1 },
};
static const uint8_t id_p[] = { 0x9a, 3, 1, 'P' }, id_q[] = { 0x9a, 3, 1, 'Q' },
		     id_r[] = { 0x9a, 3, 1, 'R' };

static struct ac_model example_plan(void)
{
	struct ac_model m;
	memset(&m, 0, sizeof(m));
	m.alignment = 64;
	m.n_windows = 1;
	m.windows = ex_windows;
	m.n_globals = 1;
	m.globals = ex_globals;
	m.n_phases = 3;
	m.phases = ex_phases;
	m.n_planes = 4;
	m.planes = ex_planes;
	return m;
}

static uint64_t naive_ok(const struct ac_model *m)
{
	uint64_t v = UINT64_MAX;
	ck_assert_int_eq(naive_certify(m, &v), 0);
	return v;
}

START_TEST(naive_worked_examples)
{
	struct ac_launch l3[] = { { { id_p, 4 }, 0, 2, 0 }, { { id_q, 4 }, 2, 2, 0 },
				  { { id_r, 4 }, 4, 1, 0 } };
	uint64_t words[] = { 0x1400, 0x1000, 0x1400, 0x1500, 0x1400 };
	struct ac_ref all[] = { { 0, 2 } }, ex2[] = { { 1, 1 }, { 0, 2 } },
		      ex3[] = { { 0, 1 }, { 2, 1 }, { 1, 1 } };
	struct ac_model m = example_plan();
	m.n_launches = 2;
	m.launches = l3;
	m.n_words = 5;
	m.words = words;
	m.n_refs = 1;
	m.refs = all;
	ck_assert_uint_eq(naive_ok(&m), 0);                  /* 1 */
	m.n_refs = 2;
	m.refs = ex2;
	ck_assert_uint_eq(naive_ok(&m), 4);                  /* 2 */
	m.n_launches = 3;
	m.n_refs = 3;
	m.refs = ex3;
	ck_assert_uint_eq(naive_ok(&m), 7);                  /* 3 */

	uint64_t w4[] = { 0x1400, 0x1000, 0x1600 };
	struct ac_launch l4[] = { { { id_p, 4 }, 0, 2, 0 }, { { id_q, 4 }, 2, 1, 0 } };
	m = example_plan();
	m.n_launches = 2;
	m.launches = l4;
	m.n_words = 3;
	m.words = w4;
	m.n_refs = 1;
	m.refs = all;
	ck_assert_uint_eq(naive_ok(&m), 3);                  /* 4 */

	uint64_t w5[] = { 0x1400, 0xfff, 0x2000, 0x1400, 0x1500 };
	struct ac_launch l5[] = { { { id_p, 4 }, 0, 3, 0 }, { { id_q, 4 }, 3, 2, 0 } };
	m.launches = l5;
	m.words = w5;
	m.n_words = 5;
	ck_assert_uint_eq(naive_ok(&m), 0);                  /* 5 */

	struct ac_tensor planes6[4];
	memcpy(planes6, ex_planes, sizeof(planes6));
	planes6[2].offset = 0x10c0;
	m = example_plan();
	m.planes = planes6;
	m.n_launches = 2;
	m.launches = l3;
	m.n_words = 5;
	m.words = words;
	m.n_refs = 1;
	m.refs = all;
	ck_assert_uint_eq(naive_ok(&m), 1);                  /* 6 */
}
END_TEST

START_TEST(naive_repeat_examples)
{
	uint64_t words[] = { 0x1400, 0x1400, 0x1500 };
	struct ac_launch l[] = { { { id_p, 4 }, 0, 1, 0 }, { { id_q, 4 }, 1, 2, 0 } };
	struct ac_ref all[] = { { 0, 2 } };
	struct ac_delta d = { 0, 0, 64 };
	struct ac_repeat r = { 0, 1, 4, 0, 1, 0, 0, 0, 0 };
	struct ac_model m = example_plan();
	m.n_launches = 2;
	m.launches = l;
	m.n_words = 3;
	m.words = words;
	m.n_refs = 1;
	m.refs = all;
	m.n_repeats = 1;
	m.repeats = &r;
	m.n_deltas = 1;
	m.deltas = &d;
	ck_assert_uint_eq(naive_ok(&m), 0);                  /* 7, +0x40 */
	d.delta = 128;
	ck_assert_uint_eq(naive_ok(&m), 2);                  /* 7, +0x80 */
	d.delta = 0;
	r.iterations = 200;
	ck_assert_uint_eq(naive_ok(&m), 0);                  /* 7, N 200 */

	/* Points vs hull: +0x80 over 2 iterations stays inside a; the third
	 * point 0x1500 is in b, which P does not name. */
	d.delta = 0x80;
	r.iterations = 2;
	ck_assert_uint_eq(naive_ok(&m), 0);
	r.iterations = 3;
	ck_assert_uint_eq(naive_ok(&m), 2);

	/* A table of two frames: only frames 0 .. N-1 are ever used. */
	struct ac_slot slot = { 0, 0 };
	uint64_t frames[] = { 0x1400, 0x1900 };
	r = (struct ac_repeat){ 0, 1, 1, 0, 0, 0, 1, 2, 0 };
	m.n_deltas = 0;
	m.n_slots = 1;
	m.slots = &slot;
	m.n_frame_values = 2;
	m.frame_values = frames;
	ck_assert_uint_eq(naive_ok(&m), 0);
	r.iterations = 2;
	ck_assert_uint_eq(naive_ok(&m), 2);

	/* Malformed: 0 iterations; a delta naming a word past the launch's. */
	r = (struct ac_repeat){ 0, 1, 0, 0, 0, 0, 0, 0, 0 };
	uint64_t v;
	ck_assert_int_eq(naive_certify(&m, &v), NAIVE_MALFORMED);
	r = (struct ac_repeat){ 0, 1, 2, 0, 1, 0, 0, 0, 0 };
	d = (struct ac_delta){ 0, 1, 0 };
	m.n_deltas = 1;
	ck_assert_int_eq(naive_certify(&m, &v), NAIVE_MALFORMED);
}
END_TEST

struct id_case {
	const char *hex;
	int64_t phase;                 /* expected: index of "P"/"Q", or -1 */
};

static const struct id_case id_cases[] = {
	{ "9a030150", 0 },
	{ "", -1 },                                 /* no field 51 */
	{ "9a0301519a030150", 0 },                  /* the last one wins */
	{ "9a0301509a030158", -1 },                 /* last names no phase */
	{ "9a030150980301", -1 },                   /* 51 with wire type 0 */
	{ "9d03616263649a030150", -1 },             /* 51 with wire type 5 */
	{ "0896019a030151", 1 },                    /* unknown varint first */
	{ "9a03015011" "0102030405060708", 0 },     /* fixed64 after */
	{ "9a030150150102030415", -1 },             /* fixed32 truncated */
	{ "9a03015015" "01020304", 0 },             /* fixed32 */
	{ "9a030250", -1 },                         /* length past the end */
	{ "9a03015080", -1 },                       /* truncated varint */
	{ "9a83008100" "50", 0 },                   /* non-minimal varints */
	{ "0b9a030150", -1 },                       /* wire type 3 */
	{ "0c9a030150", -1 },                       /* wire type 4 */
	{ "9a0301500e", -1 },                       /* wire type 6 */
	{ "9a0301500f", -1 },                       /* wire type 7 */
	{ "00009a030150", -1 },                     /* field number 0 */
	{ "f8ffffff0f009a030150", 0 },              /* field 2^29 - 1 */
	{ "808080801000" "9a030150", -1 },          /* field 2^29 */
	{ "08ffffffffffffffffff01" "9a030150", 0 }, /* value 2^64 - 1 */
	{ "08ffffffffffffffffff02" "9a030150", -1 }, /* value 2^64 */
	{ "08ffffffffffffffffffff01" "9a030150", -1 }, /* 11 bytes */
	{ "9a0300", -1 },                           /* empty: no such phase */
	{ "9a03025051", -1 },                       /* "PQ" is neither */
	{ "3a039a0301", -1 },                       /* 51 nested in bytes */
};

static size_t unhex(const char *hex, uint8_t *out)
{
	size_t n = strlen(hex) / 2;
	for (size_t i = 0; i < n; i++) {
		unsigned byte;
		sscanf(hex + 2 * i, "%2x", &byte);
		out[i] = (uint8_t)byte;
	}
	return n;
}

START_TEST(naive_identities)
{
	struct ac_model m = example_plan();
	uint8_t bytes[64];
	struct ac_launch l = { { bytes, 0 }, 0, 0, 0 };
	m.n_launches = 1;
	m.launches = &l;
	for (size_t i = 0; i < sizeof(id_cases) / sizeof(id_cases[0]); i++) {
		l.identity.len = (uint32_t)unhex(id_cases[i].hex, bytes);
		ck_assert_msg(naive_phase_of(&m, 0) == id_cases[i].phase,
			      "identity %s: phase %" PRId64 ", expected %" PRId64,
			      id_cases[i].hex, naive_phase_of(&m, 0),
			      id_cases[i].phase);
	}
}
END_TEST

/* The naive checker on the spec's example files (needs the JSON reader). */
START_TEST(naive_spec_example_files)
{
	static const char *names[] = { "ex1", "ex2", "ex3", "ex4", "ex5", "ex6",
				       "ex7a", "ex7b", "ex7c" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[512];
		size_t len;
		snprintf(path, sizeof(path), "%s/examples/%s.json", AG_SPEC_DIR, names[i]);
		char *json = util_read_file(path, &len);
		snprintf(path, sizeof(path), "%s/examples/%s.expect", AG_SPEC_DIR, names[i]);
		char *expect = util_read_file(path, NULL);
		ck_assert_msg(json && expect, "cannot read %s", path);
		struct ac_model *m = NULL;
		struct ac_error err;
		char text[400];
		ck_assert_msg(ac_model_read_json(json, len, &m, &err) == 0,
			      "%s: %s", names[i], ac_error_text(&err, text, sizeof(text)));
		uint64_t v = naive_ok(m);
		ck_assert_msg(v == strtoull(expect, NULL, 10), "%s: naive %" PRIu64
			      ", expected %s", names[i], v, expect);
		ac_model_free(m);
		free(json);
		free(expect);
	}
}
END_TEST

Suite *suite_differential(void)
{
	Suite *s = suite_create("differential");
	TCase *naive = tcase_create("naive");
	tcase_add_test(naive, naive_worked_examples);
	tcase_add_test(naive, naive_repeat_examples);
	tcase_add_test(naive, naive_identities);
	tcase_add_test(naive, naive_spec_example_files);
	suite_add_tcase(s, naive);

	TCase *diff = tcase_create("differential");
	tcase_set_timeout(diff, 600);
	tcase_add_test(diff, library_matches_naive);
	tcase_add_test(diff, incremental_matches_naive_prefixes);
	tcase_add_test(diff, executed_limit_boundary);
	tcase_add_test(diff, formats_keep_verdicts);
	suite_add_tcase(s, diff);
	return s;
}
