/* SPDX-License-Identifier: MIT */
/*
 * Advisories (spec section 6): tensor-outside-windows at its boundaries,
 * its text, that it leaves the verdict alone, and the library against a
 * naive second computation over the differential generator's programs
 * (which must produce advisories, and programs without them).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "suites.h"
#include "util.h"

/* The advisories of a JSON program (well-formed: fails the test if not),
 * and its verdict in *verdict. */
static uint64_t advisories_of(const char *json, struct ac_advisory **out,
			      uint64_t *verdict, char *first_text, size_t len)
{
	struct ac_model *m = util_model_json(json);
	struct ac_error err;
	char text[512];
	ac_program *p = ac_program_new(m, &err);
	ck_assert_msg(p, "malformed: %s", ac_error_text(&err, text, sizeof(text)));
	uint64_t n = AC_NONE;
	ck_assert_int_eq(ac_program_advisories(p, out, &n, &err), 0);
	ck_assert((n == 0) == (*out == NULL));
	if (first_text && n)
		ac_advisory_render(&(*out)[0], p, first_text, len);
	ac_program_free(p);
	*verdict = util_verdict_model(m, &err);
	ac_model_free(m);
	return n;
}

/* A program: alignment 1, the windows and globals given as JSON arrays'
 * contents, no phase, no launch. */
static char *plan(const char *windows, const char *globals)
{
	char *text = NULL;
	if (asprintf(&text, "{\"alignment\": 1, \"windows\": [%s], \"globals\": [%s]}",
		     windows, globals) < 0)
		ck_abort_msg("out of memory");
	return text;
}

#define W(base, size) "{\"base\": \"" base "\", \"size\": \"" size "\"}"
#define G(name, off, size) "{\"name\": \"" name "\", \"offset\": \"" off \
	"\", \"size\": \"" size "\"}"

/* The first byte outside the windows of the one global, or AC_NONE when
 * it has no advisory. */
static uint64_t outside(const char *windows, const char *global)
{
	char *json = plan(windows, global);
	struct ac_advisory *a = NULL;
	uint64_t v, n = advisories_of(json, &a, &v, NULL, 0);
	free(json);
	ck_assert_uint_le(n, 1);
	uint64_t at = AC_NONE;
	if (n) {
		ck_assert_int_eq(a[0].kind, AC_ADVISORY_TENSOR_OUTSIDE_WINDOWS);
		ck_assert_uint_eq(a[0].tensor.phase, AC_NONE);
		ck_assert_uint_eq(a[0].tensor.index, 0);
		at = a[0].outside;
	}
	free(a);
	return at;
}

START_TEST(window_edges)
{
	const char *win = W("0x1000", "0x1000");     /* [0x1000, 0x2000) */
	/* ending at the window's end, starting at its start */
	ck_assert_uint_eq(outside(win, G("g", "0x1f00", "0x100")), AC_NONE);
	ck_assert_uint_eq(outside(win, G("g", "0x1000", "0x1000")), AC_NONE);
	/* one byte outside, above and below */
	ck_assert_uint_eq(outside(win, G("g", "0x1f00", "0x101")), 0x2000);
	ck_assert_uint_eq(outside(win, G("g", "0xfff", "0x2")), 0xfff);
	/* all outside: the first byte is its offset */
	ck_assert_uint_eq(outside(win, G("g", "0x2000", "0x10")), 0x2000);
	ck_assert_uint_eq(outside(win, G("g", "0x0", "0x10")), 0x0);
	/* covering the window and more on both sides */
	ck_assert_uint_eq(outside(win, G("g", "0x800", "0x2000")), 0x800);
}
END_TEST

START_TEST(several_windows)
{
	/* straddling two overlapping windows: their union counts */
	const char *overlapping = W("0x1000", "0x1000") "," W("0x1800", "0x1000");
	ck_assert_uint_eq(outside(overlapping, G("g", "0x1f00", "0x200")), AC_NONE);
	ck_assert_uint_eq(outside(overlapping, G("g", "0x1000", "0x1800")), AC_NONE);
	ck_assert_uint_eq(outside(overlapping, G("g", "0x1000", "0x1801")), 0x2800);
	/* touching windows, given in any order: no byte between them */
	const char *touching = W("0x2000", "0x1000") "," W("0x1000", "0x1000");
	ck_assert_uint_eq(outside(touching, G("g", "0x1f00", "0x200")), AC_NONE);
	/* a one-byte hole between two windows */
	const char *hole = W("0x1000", "0x1000") "," W("0x2001", "0x1000");
	ck_assert_uint_eq(outside(hole, G("g", "0x1f00", "0x200")), 0x2000);
	ck_assert_uint_eq(outside(hole, G("g", "0x2001", "0x10")), AC_NONE);
	/* a window inside another, and a chain of three */
	const char *nested = W("0x1000", "0x1000") "," W("0x1100", "0x10");
	ck_assert_uint_eq(outside(nested, G("g", "0x1100", "0xf00")), AC_NONE);
	ck_assert_uint_eq(outside(nested, G("g", "0x1100", "0xf01")), 0x2000);
	const char *chain = W("0x3000", "0x1000") "," W("0x1000", "0x1000") ","
			    W("0x2000", "0x1000");
	ck_assert_uint_eq(outside(chain, G("g", "0x1000", "0x3000")), AC_NONE);
	ck_assert_uint_eq(outside(chain, G("g", "0x1000", "0x3001")), 0x4000);
}
END_TEST

START_TEST(top_of_memory_and_no_windows)
{
	/* a window and a tensor ending at 2^64 */
#define TOP W("0xfffffffffffff000", "0x1000")
	const char *top = TOP;
	ck_assert_uint_eq(outside(top, G("g", "0xffffffffffffff00", "0x100")), AC_NONE);
	ck_assert_uint_eq(outside(top, G("g", "0xffffffffffffefff", "0x1001")),
			  0xffffffffffffefffull);
	/* a window ending at 2^64 overlapped by one below: merged */
	const char *two = W("0xffffffffffffe000", "0x1800") "," TOP;
#undef TOP
	ck_assert_uint_eq(outside(two, G("g", "0xffffffffffffe000", "0x2000")), AC_NONE);
	/* no windows at all: every non-empty tensor, from its first byte */
	ck_assert_uint_eq(outside("", G("g", "0x1000", "0x1")), 0x1000);
	ck_assert_uint_eq(outside("", G("g", "0xffffffffffffffff", "0x1")),
			  0xffffffffffffffffull);
}
END_TEST

START_TEST(empty_tensor_has_none)
{
	/* an empty global fails (A) but is no advisory, even outside */
	struct ac_advisory *a = NULL;
	uint64_t v;
	char *json = plan(W("0x1000", "0x1000"), G("g", "0x9000", "0x0"));
	ck_assert_uint_eq(advisories_of(json, &a, &v, NULL, 0), 0);
	ck_assert_uint_eq(v, 1);
	free(json);
	json = plan("", G("g", "0x9000", "0x0"));
	ck_assert_uint_eq(advisories_of(json, &a, &v, NULL, 0), 0);
	free(json);
}
END_TEST

/* Model order, planes by (phase, index), the text, and the verdict left
 * as it was, for a certified program and a failing one. */
START_TEST(order_text_and_verdict)
{
	const char *json =
		"{\"alignment\": 64,"
		" \"windows\": [{\"name\": \"arena0\", \"base\": \"0x1000\", \"size\": \"0x1000\"}],"
		" \"globals\": [{\"name\": \"w\", \"offset\": \"0x1000\", \"size\": 256},"
		"  {\"name\": \"out\", \"offset\": \"0x1fc0\", \"size\": 128}],"
		" \"phases\": [{\"identity\": \"P\", \"planes\": ["
		"   {\"name\": \"a\", \"offset\": \"0x1400\", \"size\": 64, \"carried\": false}]},"
		"  {\"identity\": \"Q\", \"planes\": ["
		"   {\"name\": \"in\", \"offset\": \"0x1400\", \"size\": 64, \"carried\": false},"
		"   {\"name\": \"b\", \"offset\": \"0x3000\", \"size\": 256, \"carried\": false}]}],"
		" \"launches\": [{\"phase\": \"P\", \"words\": [\"0x1400\"]},"
		"  {\"phase\": \"Q\", \"words\": [\"0x3000\"]}],"
		" \"schedule\": [{\"first\": 0, \"count\": 2}]}";
	struct ac_advisory *a = NULL;
	uint64_t v;
	char text[512];
	ck_assert_uint_eq(advisories_of(json, &a, &v, text, sizeof(text)), 2);
	ck_assert_uint_eq(v, 0);   /* (C) never checks 0x3000: certified */
	ck_assert_uint_eq(a[0].tensor.phase, AC_NONE);
	ck_assert_uint_eq(a[0].tensor.index, 1);
	ck_assert_uint_eq(a[0].outside, 0x2000);
	ck_assert_str_eq(text, "tensor-outside-windows: global 'out' (globals[1]) "
			 "[0x1fc0, 0x2040) has byte 0x2000 in no window");
	ck_assert_uint_eq(a[1].tensor.phase, 1);
	ck_assert_uint_eq(a[1].tensor.index, 1);
	ck_assert_uint_eq(a[1].outside, 0x3000);
	ck_assert_str_eq(ac_advisory_kind_name(a[1].kind), "tensor-outside-windows");
	free(a);

	/* the same plan failing (C) at launch 0: advisories all the same */
	char *failing = strdup(json);
	char *w = strstr(failing, "\"0x1400\"]}");
	ck_assert_ptr_nonnull(w);
	memcpy(w, "\"0x1800\"", 8);
	ck_assert_uint_eq(advisories_of(failing, &a, &v, NULL, 0), 2);
	ck_assert_uint_eq(v, 2);
	free(a);
	free(failing);
}
END_TEST

/* ---- against a naive computation, over the generator's programs ---- */

/* The first byte of tensor t in no window, walking up from its offset
 * through any window holding the current byte: O(W^2), obviously right. */
static int naive_outside(const struct ac_model *m, const struct ac_tensor *t,
			 uint64_t *at)
{
	if (t->size == 0)
		return 0;
	unsigned __int128 x = t->offset, end = (unsigned __int128)t->offset + t->size;
	while (x < end) {
		int found = 0;
		for (uint32_t i = 0; i < m->n_windows && !found; i++) {
			const struct ac_window *w = &m->windows[i];
			unsigned __int128 wend = (unsigned __int128)w->base + w->size;
			if (w->base <= x && x < wend) {
				x = wend;
				found = 1;
			}
		}
		if (!found) {
			*at = (uint64_t)x;
			return 1;
		}
	}
	return 0;
}

/* Advisory *k of the library's n is the naive one for tensor t (named
 * ref), if t has one; returns whether it had. */
static int expect_next(const struct ac_model *m, const struct ac_tensor *t,
		       struct ac_tensor_ref ref, const struct ac_advisory *a,
		       uint64_t n, uint64_t *k)
{
	uint64_t at;
	if (!naive_outside(m, t, &at))
		return 0;
	ck_assert_uint_lt(*k, n);
	ck_assert_uint_eq(a[*k].tensor.phase, ref.phase);
	ck_assert_uint_eq(a[*k].tensor.index, ref.index);
	ck_assert_uint_eq(a[*k].outside, at);
	(*k)++;
	return 1;
}

/* Library and naive agree on one program; counts what it had. */
static void compare(const struct ac_model *m, uint64_t *with, uint64_t *globals,
		    uint64_t *planes)
{
	struct ac_error err;
	ac_program *p = ac_program_new(m, &err);
	if (!p)
		return;                    /* malformed: no advisories */
	struct ac_advisory *a = NULL;
	uint64_t n = 0, k = 0;
	ck_assert_int_eq(ac_program_advisories(p, &a, &n, &err), 0);
	for (uint32_t g = 0; g < m->n_globals; g++)
		*globals += expect_next(m, &m->globals[g],
					(struct ac_tensor_ref){ AC_NONE, g }, a, n, &k);
	for (uint32_t ph = 0; ph < m->n_phases; ph++)
		for (uint32_t j = 0; j < m->phases[ph].plane_count; j++)
			*planes += expect_next(m, &m->planes[m->phases[ph].plane_first + j],
					       (struct ac_tensor_ref){ ph, j }, a, n, &k);
	ck_assert_uint_eq(k, n);
	*with += n > 0;
	free(a);
	ac_program_free(p);
}

START_TEST(generator_matches_naive)
{
	const uint64_t seed = 0xad715e5, count = 600;
	uint64_t with = 0, globals = 0, planes = 0;
	printf("advisory: seed 0x%" PRIx64 ", %" PRIu64 " programs\n", seed, count);
	for (uint64_t i = 0; i < count; i++) {
		struct gen_rng r;
		gen_rng_seed(&r, seed ^ (i * 0x9E3779B97F4A7C15ull));
		int aim;
		struct ac_model *m = gen_model_aimed(&r, &aim);
		compare(m, &with, &globals, &planes);
		gen_model_free(m);
	}
	printf("advisory: %" PRIu64 " programs with advisories (%" PRIu64
	       " on globals, %" PRIu64 " on planes)\n", with, globals, planes);
	/* the generator reaches both sides, and both kinds of tensor */
	ck_assert_uint_ge(with, count / 20);
	ck_assert_uint_le(with, count - count / 20);
	ck_assert_uint_gt(globals, 0);
	ck_assert_uint_gt(planes, 0);
}
END_TEST

Suite *suite_advisory(void)
{
	Suite *s = suite_create("advisory");
	TCase *tc = tcase_create("boundaries");
	tcase_add_test(tc, window_edges);
	tcase_add_test(tc, several_windows);
	tcase_add_test(tc, top_of_memory_and_no_windows);
	tcase_add_test(tc, empty_tensor_has_none);
	tcase_add_test(tc, order_text_and_verdict);
	suite_add_tcase(s, tc);
	tc = tcase_create("differential");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, generator_matches_naive);
	suite_add_tcase(s, tc);
	return s;
}
