/* SPDX-License-Identifier: MIT */
/*
 * (D) over the planes the program follows (certify/program.c,
 * index_followed) and its lazy per-schedule state (certify/lazy_array.c).
 * Each case is a shortcut that would be wrong: a breaking phase that
 * carries nothing, breaking long before the carried plane is used, with
 * unfollowed phases in between; a break between two instances of a loop
 * that had settled (each instance reusing its phase's last); a phase mixing carried, followed and
 * unfollowed planes, whose diagnostic must name planes by their index in
 * the phase; a different key over the same bytes; repeats; and the
 * memory of a small schedule of a large program.  Verdicts are checked
 * against the spec's arithmetic and against the naive checker.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arenaguard/certify.h>

#include "certify/lazy_array.h"
#include "certify/program_impl.h"
#include "naive.h"
#include "suites.h"
#include "util.h"

/* Planes by name: a (the carried one) at [0x1400, 0x1500). */
#define PLANE(name, offset, size, carried) \
	"{\"name\": \"" name "\", \"offset\": \"" offset "\", \"size\": " \
	#size ", \"carried\": " carried "}"

/*
 * P declares a; Q carries it; R (carrying nothing) declares z over a's
 * first bytes after a fresh y that meets nothing watched; U and V
 * declare planes over each other and over nothing watched; M mixes an
 * unfollowed fresh plane, a fresh plane over a, and the carried a.
 */
static const char *const plan =
	"{\"alignment\": 64,"
	" \"windows\": [{\"base\": \"0x1000\", \"size\": \"0x10000\"}],"
	" \"phases\": ["
	"  {\"identity\": \"P\", \"planes\": [" PLANE("a", "0x1400", 256, "false") "]},"
	"  {\"identity\": \"Q\", \"planes\": [" PLANE("a", "0x1400", 256, "true") "]},"
	"  {\"identity\": \"R\", \"planes\": [" PLANE("y", "0x3000", 64, "false") ","
	                                          PLANE("z", "0x1400", 64, "false") "]},"
	"  {\"identity\": \"U\", \"planes\": [" PLANE("u", "0x2000", 256, "false") "]},"
	"  {\"identity\": \"V\", \"planes\": [" PLANE("v", "0x2040", 256, "false") "]},"
	"  {\"identity\": \"M\", \"planes\": [" PLANE("m", "0x4000", 64, "false") ","
	                                          PLANE("a", "0x1400", 256, "true") "]},"
	"  {\"identity\": \"T\", \"planes\": [" PLANE("b", "0x1400", 256, "false") "]},"
	"  {\"identity\": \"E\", \"planes\": [" PLANE("e", "0x14c0", 128, "false") "]}],"
	" \"launches\": [{\"phase\": \"P\"}, {\"phase\": \"Q\"}, {\"phase\": \"R\"},"
	"  {\"phase\": \"U\"}, {\"phase\": \"V\"}, {\"phase\": \"M\"},"
	"  {\"phase\": \"T\"}, {\"phase\": \"E\"}, {\"phase\": \"Q\"}, {\"phase\": \"R\"}],"
	" \"repeats\": [{\"first\": 8, \"count\": 2, \"iterations\": %s}],"
	" \"schedule\": [%s]}";
enum { N_LAUNCHES = 10, L_P = 0, L_Q = 1, L_R = 2, L_U = 3, L_V = 4,
       L_M = 5, L_T = 6, L_E = 7, L_BODY = 8 };
enum { PH_P = 0, PH_R = 2, PH_M = 5, PH_T = 6, PH_E = 7 };

/* The plan with `iterations` for the repeat and a schedule of one-launch
 * references to the launches in `launches` (-1 ends; L_BODY is the body). */
static char *program(const char *iterations, const int *launches)
{
	size_t cap = 1 << 16, len = 0;
	char *refs = malloc(cap), *json = malloc(cap + 4096);
	ck_assert(refs && json);
	refs[0] = 0;
	for (int i = 0; launches[i] >= 0; i++) {
		ck_assert(len + 64 < cap);
		len += (size_t)snprintf(refs + len, cap - len,
					"%s{\"first\": %d, \"count\": %d}",
					i ? ", " : "", launches[i],
					launches[i] == L_BODY ? 2 : 1);
	}
	snprintf(json, cap + 4096, plan, iterations, refs);
	free(refs);
	return json;
}

/* Certifies, checks the naive checker agrees (when it can unroll), and
 * returns the verdict with its diagnostic. */
static uint64_t certify(const char *json, struct ac_diag *diag, int naive)
{
	struct ac_model *m = util_model_json(json);
	struct ac_error err;
	uint64_t verdict = 0, want = 0;
	ck_assert_int_eq(ac_certify(m, &verdict, diag, &err), 0);
	if (naive) {
		ck_assert_int_eq(naive_certify(m, &want), 0);
		ck_assert_uint_eq(verdict, want);
	}
	ac_model_free(m);
	return verdict;
}

/* The schedule's instance k breaks (D): a's bytes, last declared by
 * instance `earlier`, were taken by instance `intervening` of phase
 * `breaker`. */
static void expect_overwritten(const char *iterations, const int *launches,
			       int naive, uint64_t k, uint64_t earlier,
			       uint64_t intervening, uint64_t breaker)
{
	char *json = program(iterations, launches);
	struct ac_diag d;
	ck_assert_uint_eq(certify(json, &d, naive), 2 + N_LAUNCHES + k);
	ck_assert_int_eq(d.reason, AC_CARRIED_OVERWRITTEN);
	ck_assert_uint_eq(d.earlier, earlier);
	ck_assert_uint_eq(d.intervening, intervening);
	ck_assert_uint_eq(d.tensor[1].phase, breaker);
	free(json);
}

START_TEST(breaker_carrying_nothing_long_ago)
{
	/* P R, then U V alternating 200 times (unfollowed), then Q */
	int l[512], n = 0;
	l[n++] = L_P;
	l[n++] = L_R;
	for (int i = 0; i < 200; i++)
		l[n++] = i % 2 ? L_V : L_U;
	l[n++] = L_Q;
	l[n] = -1;
	expect_overwritten("2", l, 1, 202, 0, 1, PH_R);
	char *json = program("2", l);
	struct ac_diag d;
	certify(json, &d, 0);
	ck_assert_uint_eq(d.tensor[1].index, 1);   /* z, after the y */
	free(json);

	/* P R P, the U V run, Q: the break came before the last declaration */
	n = 0;
	l[n++] = L_P;
	l[n++] = L_R;
	l[n++] = L_P;
	for (int i = 0; i < 200; i++)
		l[n++] = i % 2 ? L_V : L_U;
	l[n++] = L_Q;
	l[n] = -1;
	json = program("2", l);
	ck_assert_uint_eq(certify(json, &d, 1), 0);
	free(json);
}
END_TEST

/* Q and P alternate long enough that instances reuse what their phase's
 * previous instance left (the O(1) path); then R breaks a, far from the
 * next Q, which must notice. */
START_TEST(break_between_instances_of_a_settled_loop)
{
	int l[1024], n = 0;
	for (int i = 0; i < 100; i++) {
		l[n++] = L_P;
		l[n++] = L_Q;
	}
	for (int i = 0; i < 100; i++)
		l[n++] = i % 2 ? L_V : L_U;
	l[n++] = L_R;
	for (int i = 0; i < 100; i++)
		l[n++] = i % 2 ? L_V : L_U;
	l[n++] = L_Q;
	l[n] = -1;
	/* earlier: the last Q; intervening: R */
	expect_overwritten("2", l, 1, 401, 199, 300, PH_R);

	/* the same with M (a carried, among other planes) as the last
	 * declarer: earlier names M's instance */
	n = 0;
	for (int i = 0; i < 50; i++) {
		l[n++] = L_P;
		l[n++] = L_Q;
		l[n++] = L_M;
	}
	l[n++] = L_R;
	l[n++] = L_Q;
	l[n] = -1;
	expect_overwritten("2", l, 1, 151, 149, 150, PH_R);
	char *json = program("2", l);
	struct ac_diag d;
	certify(json, &d, 0);
	ck_assert_uint_eq(d.earlier_phase, PH_M);
	free(json);
}
END_TEST

START_TEST(mixed_phase_names_planes_in_phase_order)
{
	/* M first: its carried a (plane 1, after the unfollowed m) was
	 * never declared */
	int l[] = { L_M, -1 };
	char *json = program("2", l);
	struct ac_diag d;
	ck_assert_uint_eq(certify(json, &d, 1), 2 + N_LAUNCHES + 0);
	ck_assert_int_eq(d.reason, AC_CARRIED_UNDECLARED);
	ck_assert_uint_eq(d.tensor[0].phase, PH_M);
	ck_assert_uint_eq(d.tensor[0].index, 1);
	free(json);

	/* P M M U M: fine (M redeclares its own a) */
	int ok[] = { L_P, L_M, L_U, L_M, L_U, L_M, -1 };
	json = program("2", ok);
	ck_assert_uint_eq(certify(json, &d, 1), 0);
	free(json);
}
END_TEST

START_TEST(other_key_over_the_same_bytes)
{
	/* T's b has a's offset and size but another name: another key */
	int l[] = { L_P, L_U, L_T, L_V, L_Q, -1 };
	expect_overwritten("2", l, 1, 4, 0, 2, PH_T);
	/* E's e straddles a's end: it takes a's last bytes */
	int e[] = { L_P, L_E, L_U, L_M, -1 };
	expect_overwritten("2", e, 1, 3, 0, 1, PH_E);
}
END_TEST

START_TEST(repeats_of_a_breaking_body)
{
	/* P, then the body Q R: iteration 0 passes, R breaks a, iteration 1's
	 * Q fails: instance 3, whatever the iteration count */
	int l[] = { L_P, L_BODY, -1 };
	expect_overwritten("1000", l, 1, 3, 1, 2, PH_R);
	expect_overwritten("4294967295", l, 0, 3, 1, 2, PH_R);

	/* P, the body once, then P Q: fine; after P U, the body fails in
	 * its iteration 1, numbered as such */
	int once[] = { L_P, L_BODY, L_P, L_Q, -1 };
	struct ac_diag d;
	char *json = program("1", once);
	ck_assert_uint_eq(certify(json, &d, 1), 0);
	free(json);
	int after[] = { L_P, L_U, L_BODY, L_V, L_P, L_BODY, -1 };
	json = program("4294967295", after);
	ck_assert_uint_eq(certify(json, &d, 0), 2 + N_LAUNCHES + 4);
	free(json);
	json = program("1000", after);
	ck_assert_uint_eq(certify(json, &d, 1), 2 + N_LAUNCHES + 4);
	free(json);
}
END_TEST

/*
 * A program of K phase pairs: phase 2i declares 100 fresh planes, phase
 * 2i + 1 carries them, so every key is watched.  A schedule running one
 * pair holds state for its 100 keys, not for the program's 100 K.
 */
START_TEST(small_schedule_of_a_large_program)
{
	enum { PAIRS = 200, PLANES = 100 };
	size_t cap = (size_t)PAIRS * 2 * PLANES * 96 + 4096, len = 0;
	char *j = malloc(cap);
	ck_assert_ptr_nonnull(j);
#define PUT(...) (len += (size_t)snprintf(j + len, cap - len, __VA_ARGS__))
	PUT("{\"alignment\": 64, \"phases\": [");
	for (int ph = 0; ph < 2 * PAIRS; ph++) {
		PUT("%s{\"identity\": \"%d\", \"planes\": [", ph ? ", " : "", ph);
		for (int k = 0; k < PLANES; k++)
			PUT("%s{\"name\": \"x\", \"offset\": %d, \"size\": 64, "
			    "\"carried\": %s}", k ? ", " : "",
			    ((ph / 2) * PLANES + k) * 64,
			    ph % 2 ? "true" : "false");
		PUT("]}");
	}
	PUT("], \"launches\": [");
	for (int ph = 0; ph < 2 * PAIRS; ph++)
		PUT("%s{\"phase\": \"%d\"}", ph ? ", " : "", ph);
	PUT("]}");
#undef PUT
	ck_assert(len < cap);
	struct ac_model *m = util_model_json(j);
	free(j);
	ac_program *p = ac_program_new(m, NULL);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(p->n_watched, PAIRS * PLANES);
	ac_schedule *small = ac_schedule_new(p), *all = ac_schedule_new(p);
	ck_assert(small && all);
	struct ac_ref pair = { 2 * (PAIRS / 2), 2 }, every = { 0, 2 * PAIRS };
	ck_assert_int_eq(ac_schedule_append(small, &pair, 1, NULL), 0);
	ck_assert_int_eq(ac_schedule_append(all, &every, 1, NULL), 0);
	ck_assert_uint_eq(ac_schedule_verdict(small, NULL), 0);
	ck_assert_uint_eq(ac_schedule_verdict(all, NULL), 0);
	size_t small_bytes = aci_schedule_state_bytes(small);
	size_t all_bytes = aci_schedule_state_bytes(all);
	printf("followed: state of one pair %zu bytes, of all %zu\n",
	       small_bytes, all_bytes);
	/* every key is light (two planes over it): no key state, no map;
	 * the states of the phases run, a few kB, where one dense copy of
	 * the program's keys is 800 kB; running every phase holds one
	 * state (three counters at least) a phase */
	ck_assert_uint_lt(small_bytes, 32 * 1024);
	ck_assert_uint_gt(all_bytes, 2 * PAIRS * 3 * sizeof(uint64_t));
	ac_schedule_free(small);
	ac_schedule_free(all);
	ac_program_free(p);
	ac_model_free(m);
}
END_TEST

/*
 * P declares a, T declares b (another key) over it, Q carries a: while P
 * and T alternate nothing carried runs, so (D) follows no plane (a is
 * light: three planes over it), yet the Q at the end must see that T ran
 * after the last P.  earlier: the last P; intervening: the T after it.
 */
START_TEST(carried_key_moved_while_nothing_carried_runs)
{
	int l[512], n = 0;
	for (int i = 0; i < 200; i++)
		l[n++] = i % 2 ? L_T : L_P;
	l[n++] = L_Q;
	l[n] = -1;
	expect_overwritten("2", l, 1, 200, 198, 199, PH_T);
	/* several phases over a since P: the first instance since is the
	 * one reported, as for a key the owner map follows */
	int two[] = { L_P, L_T, L_R, L_P, L_R, L_T, L_R, L_Q, -1 };
	int owt[] = { L_P, L_R, L_T, L_P, L_T, L_R, L_T, L_Q, -1 };
	expect_overwritten("2", two, 1, 7, 3, 4, PH_R);
	expect_overwritten("2", owt, 1, 7, 3, 4, PH_T);
	/* ... ending with P instead: fine */
	n--;
	l[n++] = L_P;
	l[n++] = L_Q;
	l[n] = -1;
	char *json = program("2", l);
	ck_assert_uint_eq(certify(json, NULL, 1), 0);
	/* and the map holds none of them: a, b and z are decided from the
	 * last instances of P, Q, M, R, T, E */
	struct ac_model *m = util_model_json(json);
	ac_program *p = ac_program_new(m, NULL);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(p->followed_first[m->n_phases], 0);
	ac_program_free(p);
	ac_model_free(m);
	free(json);
	/* Q after P, T, then a P long before: j is the latest P, not the
	 * first; T between two P and after neither Q: fine */
	int again[] = { L_P, L_T, L_P, L_U, L_V, L_Q, L_T, L_P, L_Q, -1 };
	json = program("2", again);
	ck_assert_uint_eq(certify(json, NULL, 1), 0);
	free(json);
}
END_TEST

enum { HEAVY_OVER = 2 * LIGHT_TOUCHES };

/*
 * Heavy and light keys in one phase.  D declares h at 0x1000 and l at
 * 0x2000; phases O0 .. O(HEAVY_OVER - 1) each declare another key over
 * h (so h is heavy, followed in the map); Z declares z over l (light);
 * C1 carries h then l, C2 carries l then h.  Launches: D, Z, C1, C2,
 * then the O's.
 */
static char *heavy_light_program(const int *launches)
{
	size_t cap = 4096 + (size_t)HEAVY_OVER * 160 + 64 * 64, len = 0;
	char *j = malloc(cap);
	ck_assert_ptr_nonnull(j);
#define PUT(...) (len += (size_t)snprintf(j + len, cap - len, __VA_ARGS__))
	PUT("{\"alignment\": 64, \"phases\": ["
	    "{\"identity\": \"D\", \"planes\": [" PLANE("h", "0x1000", 64, "false")
	    ", " PLANE("l", "0x2000", 64, "false") "]},"
	    "{\"identity\": \"Z\", \"planes\": [" PLANE("z", "0x2000", 64, "false") "]},"
	    "{\"identity\": \"C1\", \"planes\": [" PLANE("h", "0x1000", 64, "true")
	    ", " PLANE("l", "0x2000", 64, "true") "]},"
	    "{\"identity\": \"C2\", \"planes\": [" PLANE("l", "0x2000", 64, "true")
	    ", " PLANE("h", "0x1000", 64, "true") "]}");
	for (int i = 0; i < HEAVY_OVER; i++)
		PUT(", {\"identity\": \"O%d\", \"planes\": [{\"name\": \"o%d\", "
		    "\"offset\": \"0x1000\", \"size\": 64, \"carried\": false}]}",
		    i, i);
	PUT("], \"launches\": [{\"phase\": \"D\"}, {\"phase\": \"Z\"}, "
	    "{\"phase\": \"C1\"}, {\"phase\": \"C2\"}");
	for (int i = 0; i < HEAVY_OVER; i++)
		PUT(", {\"phase\": \"O%d\"}", i);
	PUT("], \"schedule\": [");
	for (int i = 0; launches[i] >= 0; i++)
		PUT("%s{\"first\": %d, \"count\": 1}", i ? ", " : "", launches[i]);
	PUT("]}");
#undef PUT
	ck_assert(len < cap);
	return j;
}

enum { HL_D = 0, HL_Z = 1, HL_C1 = 2, HL_C2 = 3, HL_O = 4,
       HL_LAUNCHES = HL_O + HEAVY_OVER };

/* Phase of O_i. */
#define PH_O(i) (HL_O + (i))

/* The first failing carried plane in phase order, whichever way (map or
 * last instances) its key is decided: plane `plane` of instance k, last
 * declared by instance `earlier`, overwritten by phase `breaker` at
 * instance `intervening`. */
static void expect_heavy_light(const int *launches, uint64_t k, uint32_t plane,
			       uint64_t earlier, uint64_t intervening,
			       uint64_t breaker)
{
	char *json = heavy_light_program(launches);
	struct ac_diag d;
	ck_assert_uint_eq(certify(json, &d, 1), 2 + HL_LAUNCHES + k);
	ck_assert_int_eq(d.reason, AC_CARRIED_OVERWRITTEN);
	ck_assert_uint_eq(d.tensor[0].index, plane);
	ck_assert_uint_eq(d.earlier, earlier);
	ck_assert_uint_eq(d.intervening, intervening);
	ck_assert_uint_eq(d.tensor[1].phase, breaker);
	free(json);
}

START_TEST(heavy_and_light_keys_in_one_phase)
{
	int ok[] = { HL_D, HL_C1, HL_O + 3, HL_D, HL_C2, HL_Z, HL_D, HL_C1,
		     HL_C2, -1 };
	char *json = heavy_light_program(ok);
	struct ac_model *m = util_model_json(json);
	ac_program *p = ac_program_new(m, NULL);
	ck_assert_ptr_nonnull(p);
	/* h heavy, l light: both ways are exercised */
	ck_assert_uint_eq(p->n_watched, 2);
	ck_assert_uint_eq(p->light[p->spans[0].key], 0);
	ck_assert_uint_eq(p->light[p->spans[1].key], 1);
	/* only D's fresh h goes into the map: C1's and C2's carried h,
	 * found intact, already is one segment of h there */
	ck_assert_uint_eq(p->followed_first[HL_D + 1] - p->followed_first[HL_D], 1);
	ck_assert_uint_eq(p->followed_first[HL_C2 + 1] - p->followed_first[HL_C1], 0);
	ac_program_free(p);
	ac_model_free(m);
	ck_assert_uint_eq(certify(json, NULL, 1), 0);
	free(json);
	/* both broken: C1 reports h (heavy), C2 reports l (light) */
	int both1[] = { HL_D, HL_O + 3, HL_Z, HL_C1, -1 };
	expect_heavy_light(both1, 3, 0, 0, 1, PH_O(3));
	int both2[] = { HL_D, HL_O + 3, HL_Z, HL_C2, -1 };
	expect_heavy_light(both2, 3, 0, 0, 2, HL_Z);
	/* only the second plane broken, after the phase had settled */
	int second1[] = { HL_D, HL_C1, HL_D, HL_C1, HL_Z, HL_C1, -1 };
	expect_heavy_light(second1, 5, 1, 3, 4, HL_Z);
	int second2[] = { HL_D, HL_C2, HL_D, HL_C2, HL_O + 7, HL_C2, -1 };
	expect_heavy_light(second2, 5, 1, 3, 4, PH_O(7));
	/* a key never declared, light or heavy */
	int undeclared1[] = { HL_C1, -1 }, undeclared2[] = { HL_C2, -1 };
	struct ac_diag d;
	json = heavy_light_program(undeclared1);
	ck_assert_uint_eq(certify(json, &d, 1), 2 + HL_LAUNCHES);
	ck_assert_int_eq(d.reason, AC_CARRIED_UNDECLARED);
	ck_assert_uint_eq(d.tensor[0].index, 0);
	free(json);
	json = heavy_light_program(undeclared2);
	ck_assert_uint_eq(certify(json, &d, 1), 2 + HL_LAUNCHES);
	ck_assert_int_eq(d.reason, AC_CARRIED_UNDECLARED);
	ck_assert_uint_eq(d.tensor[0].index, 0);
	free(json);
}
END_TEST

/*
 * Phases sharing runs of the plane table (a model may: spec 1 does not
 * forbid it): P declares a, R (never run) lists P's plane, Q1..Q4 all
 * list the one carried a.  Each listing is its phase's plane, so every
 * Q carries what P declared: certified, as the naive checker says and
 * as the JSON (each phase its own copy) says.  Before program.c's
 * own_planes the light key's touch list gave P's plane to R alone (P's
 * declaration unseen: a false (D)), and the per-phase carried lists,
 * sized by the plane table, were written past their end (ASan).
 */
START_TEST(phases_sharing_planes)
{
	static const char *const json =
		"{\"alignment\": 64,"
		" \"windows\": [{\"base\": \"0x1000\", \"size\": \"0x10000\"}],"
		" \"phases\": ["
		"  {\"identity\": \"P\", \"planes\": [" PLANE("a", "0x1400", 256, "false") "]},"
		"  {\"identity\": \"R\", \"planes\": [" PLANE("a", "0x1400", 256, "false") "]},"
		"  {\"identity\": \"Q1\", \"planes\": [" PLANE("a", "0x1400", 256, "true") "]},"
		"  {\"identity\": \"Q2\", \"planes\": [" PLANE("a", "0x1400", 256, "true") "]},"
		"  {\"identity\": \"Q3\", \"planes\": [" PLANE("a", "0x1400", 256, "true") "]},"
		"  {\"identity\": \"Q4\", \"planes\": [" PLANE("a", "0x1400", 256, "true") "]}],"
		" \"launches\": [{\"phase\": \"P\"}, {\"phase\": \"Q1\"},"
		"  {\"phase\": \"Q2\"}, {\"phase\": \"Q3\"}, {\"phase\": \"Q4\"}],"
		" \"schedule\": [{\"first\": 0, \"count\": 5}]}";
	ck_assert_uint_eq(certify(json, NULL, 1), 0);
	struct ac_model *m = util_model_json(json);
	ck_assert_uint_eq(m->n_planes, 6);
	struct ac_phase phases[6];
	memcpy(phases, m->phases, sizeof(phases));
	phases[1].plane_first = 0;              /* P's plane */
	for (int ph = 2; ph < 6; ph++)
		phases[ph].plane_first = 1;     /* Q1's, the second */
	struct ac_tensor planes[2] = { m->planes[0], m->planes[2] };
	struct ac_model shared = *m;
	shared.phases = phases;
	shared.planes = planes;
	shared.n_planes = 2;
	struct ac_error err;
	uint64_t verdict = AC_NONE, want = AC_NONE;
	ck_assert_int_eq(naive_certify(&shared, &want), 0);
	ck_assert_uint_eq(want, 0);
	ck_assert_int_eq(ac_certify(&shared, &verdict, NULL, &err), 0);
	ck_assert_uint_eq(verdict, 0);
	/* the program's model: every phase with the same planes */
	ac_program *p = ac_program_new(&shared, &err);
	ck_assert_ptr_nonnull(p);
	const struct ac_model *own = ac_program_model(p);
	ck_assert_uint_eq(own->n_phases, 6);
	for (uint32_t ph = 0; ph < 6; ph++) {
		const struct ac_phase *a = &own->phases[ph], *b = &phases[ph];
		ck_assert_uint_eq(a->plane_count, b->plane_count);
		const struct ac_tensor *x = &own->planes[a->plane_first],
				       *y = &shared.planes[b->plane_first];
		ck_assert(x->offset == y->offset && x->size == y->size &&
			  x->carried == y->carried &&
			  x->name.len == y->name.len &&
			  !memcmp(x->name.data, y->name.data, x->name.len));
	}
	ac_program_free(p);
	ac_model_free(m);
}
END_TEST

/* Sizes at every depth boundary of the tree: written elements read back,
 * the others read zero, and memory follows the leaves written. */
START_TEST(lazy_array_edges)
{
	static const uint64_t sizes[] = { 1, 64, 65, 4096, 4097, 262144,
					  262145, (uint64_t)1 << 36 };
	for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		uint64_t n = sizes[z];
		struct lazy_array a;
		aci_lazy_array_init(&a, n, sizeof(uint32_t));
		ck_assert_uint_eq(aci_lazy_array_bytes(&a), 0);
		uint64_t at[] = { 0, n / 2, n - 1, n > 64 ? 64 : 0 };
		for (int i = 0; i < 4; i++) {
			uint32_t *e = lazy_array_at(&a, at[i]);
			ck_assert_ptr_nonnull(e);
			*e = (uint32_t)(at[i] + 1);
		}
		for (int i = 0; i < 4; i++)
			ck_assert_uint_eq(*(const uint32_t *)
					  lazy_array_get(&a, at[i]),
					  (uint32_t)(at[i] + 1));
		if (n > 2)
			ck_assert_uint_eq(*(const uint32_t *)
					  lazy_array_get(&a, 1), 0);
		if (n > 130)
			ck_assert_uint_eq(*(const uint32_t *)
					  lazy_array_get(&a, n - 2 - 64), 0);
		/* at most 4 leaves and 4 paths of nodes */
		ck_assert_uint_le(aci_lazy_array_bytes(&a),
				  4 * (LAZY_LEAF_BYTES + a.depth * LAZY_FANOUT *
				       sizeof(void *)));
		aci_lazy_array_free(&a);
	}
}
END_TEST

Suite *suite_followed(void)
{
	Suite *s = suite_create("followed");
	TCase *tc = tcase_create("followed");
	tcase_add_test(tc, breaker_carrying_nothing_long_ago);
	tcase_add_test(tc, break_between_instances_of_a_settled_loop);
	tcase_add_test(tc, mixed_phase_names_planes_in_phase_order);
	tcase_add_test(tc, other_key_over_the_same_bytes);
	tcase_add_test(tc, repeats_of_a_breaking_body);
	tcase_add_test(tc, small_schedule_of_a_large_program);
	tcase_add_test(tc, carried_key_moved_while_nothing_carried_runs);
	tcase_add_test(tc, heavy_and_light_keys_in_one_phase);
	tcase_add_test(tc, lazy_array_edges);
	tcase_add_test(tc, phases_sharing_planes);
	suite_add_tcase(s, tc);
	return s;
}
