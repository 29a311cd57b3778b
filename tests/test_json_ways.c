/* SPDX-License-Identifier: MIT */
/*
 * The JSON reader's three ways (certify/json_read.h) held against each
 * other: jansson's tree of the whole text (classic), the root's arrays
 * element by element (split), and split with launches lexed in place
 * (fast, ac_model_read_json's way).  On every text -- the spec's
 * examples, the workloads, random programs, launches and repeats in
 * every shape the fast lexer must recognise or decline, and mutations of all of these
 * with a fixed seed -- the three read the same model (field by field, and
 * the same program image) or fail with the same error text and place,
 * byte for byte.
 */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "certify/internal.h"
#include "certify/json_read.h"
#include "gen.h"
#include "suites.h"
#include "util.h"
#include "workload.h"

#define EXAMPLES_DIR AG_SPEC_DIR "/examples"
#define MUTATION_SEED 0x6a736f6e66617374ull   /* "jsonfast" */

/* Fails the test unless every way reads text alike; returns 1 when the
 * text reads (a program), 0 when every way refuses it. */
static int same_every_way(const char *text, size_t len, const char *what)
{
	struct ac_model *m[3] = { NULL, NULL, NULL };
	struct ac_error err[3];
	int rc[3];
	static const enum aci_json_way ways[3] = { ACI_JSON_CLASSIC,
						   ACI_JSON_SPLIT,
						   ACI_JSON_FAST };
	for (int w = 0; w < 3; w++) {
		memset(&err[w], 0, sizeof(err[w]));
		rc[w] = aci_model_read_json_way(text, len, ways[w], &m[w],
						&err[w]);
	}
	for (int w = 1; w < 3; w++) {
		ck_assert_msg(rc[w] == rc[0], "%s: way %d returns %d, classic "
			      "%d (%s: %s)", what, w, rc[w], rc[0],
			      rc[w] ? err[w].where : err[0].where,
			      rc[w] ? err[w].message : err[0].message);
		if (rc[0]) {
			ck_assert_msg(!strcmp(err[w].where, err[0].where) &&
				      !strcmp(err[w].message, err[0].message),
				      "%s: way %d says %s: %s; classic %s: %s",
				      what, w, err[w].where, err[w].message,
				      err[0].where, err[0].message);
			ck_assert_ptr_null(m[w]);
			continue;
		}
		util_expect_same_model(m[0], m[w]);
		size_t a_len, b_len;
		struct ac_error e;
		uint8_t *a = ac_model_write_image(m[0], &a_len, &e);
		uint8_t *b = ac_model_write_image(m[w], &b_len, &e);
		ck_assert_msg((!a && !b) || (a && b && a_len == b_len &&
					     !memcmp(a, b, a_len)),
			      "%s: way %d's program image differs", what, w);
		free(a);
		free(b);
	}
	for (int w = 0; w < 3; w++)
		ac_model_free(m[w]);
	return rc[0] == 0;
}

/* ---- mutations ------------------------------------------------------ */

/* Bytes that matter to a JSON lexer, and some that never should. */
static const char hot[] = "\"\\,:[]{} \t\n\r-+0123456789.eExXabcdefABCDEF"
	"ntrufl/u\x01\x7f\x80\xc3\xff";

/*
 * One mutation of text[0, len) into out (at least len + 64 bytes), its
 * length returned: a byte replaced, deleted or inserted, or a span
 * duplicated or cut, at a position drawn near a launch's words when
 * `near` is not NULL (so that mutations of big texts hit the fast path).
 */
static size_t mutate(struct gen_rng *g, const char *text, size_t len,
		     const char *near, char *out)
{
	size_t at = len ? (size_t)gen_rng_below(g, len) : 0;
	if (near && len > 64 && gen_rng_below(g, 4)) {
		const char *p = near;
		size_t start = (size_t)(p - text);
		at = start + (size_t)gen_rng_below(g, len - start);
		const char *w = strstr(text + at, "\"words\"");
		if (w)
			at = (size_t)(w - text) + (size_t)gen_rng_below(g, 40);
		if (at >= len)
			at = len - 1;
	}
	char c = hot[gen_rng_below(g, sizeof(hot) - 1)];
	size_t span = 1 + (size_t)gen_rng_below(g, 24);
	memcpy(out, text, len);
	switch (gen_rng_below(g, 5)) {
	case 0:                                     /* replace */
		if (len)
			out[at] = c;
		return len;
	case 1:                                     /* delete */
		if (!len)
			return 0;
		memmove(out + at, out + at + 1, len - at - 1);
		return len - 1;
	case 2:                                     /* insert */
		memmove(out + at + 1, out + at, len - at);
		out[at] = c;
		return len + 1;
	case 3:                                     /* duplicate */
		if (span > len - at)
			span = len - at;
		if (span > 64)
			span = 64;
		memmove(out + at + span, out + at, len - at);
		return len + span;
	default:                                    /* cut */
		if (span > len - at)
			span = len - at;
		memmove(out + at, out + at + span, len - at - span);
		return len - span;
	}
}

/* Every way alike on text and on `rounds` mutations of it. */
static void same_mutated(struct gen_rng *g, const char *text, size_t len,
			 unsigned rounds, const char *what)
{
	char *out = malloc(len + 65);
	ck_assert_ptr_nonnull(out);
	const char *near = strstr(text, "\"launches\"");
	same_every_way(text, len, what);
	for (unsigned k = 0; k < rounds; k++) {
		char name[160];
		size_t n = mutate(g, text, len, near, out);
		snprintf(name, sizeof(name), "%s, mutation %u (seed %#llx)",
			 what, k, (unsigned long long)MUTATION_SEED);
		same_every_way(out, n, name);
	}
	free(out);
}

/* ---- the texts ------------------------------------------------------ */

START_TEST(ways_examples)
{
	struct gen_rng g;
	gen_rng_seed(&g, MUTATION_SEED);
	DIR *d = opendir(EXAMPLES_DIR);
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	unsigned n = 0;
	while ((e = readdir(d))) {
		size_t nl = strlen(e->d_name), len;
		if (nl < 5 || strcmp(e->d_name + nl - 5, ".json"))
			continue;
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", EXAMPLES_DIR, e->d_name);
		char *text = util_read_file(path, &len);
		same_mutated(&g, text, len, 200, e->d_name);
		free(text);
		n++;
	}
	closedir(d);
	ck_assert_uint_gt(n, 0);
}
END_TEST

/* The workload of spec as JSON text (free it), *len its bytes. */
static char *workload_json(const struct workload_spec *spec, size_t *len)
{
	const char *why = "?";
	struct workload *w = workload_new(spec, &why);
	ck_assert_msg(w, "%s", why);
	struct ac_error err;
	char *text = ac_model_write_json(&w->model, len, &err);
	ck_assert_ptr_nonnull(text);
	workload_free(w);
	return text;
}

/* Each workload (its three faults) at about 3,000 words, as JSON. */
START_TEST(ways_workloads)
{
	static const struct { enum workload_kind kind; int repeat; } shapes[] = {
		{ WORKLOAD_VIT, 0 }, { WORKLOAD_VIT, 1 },
		{ WORKLOAD_DECODE, 0 }, { WORKLOAD_ADJOINT, 0 },
	};
	struct gen_rng g;
	gen_rng_seed(&g, MUTATION_SEED + 1);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		for (int f = 0; f < WORKLOAD_FAULTS; f++) {
			struct workload_spec spec = { shapes[s].kind,
				(enum workload_fault)f, 3000,
				shapes[s].repeat };
			size_t len;
			char *text = workload_json(&spec, &len);
			char what[96];
			snprintf(what, sizeof(what), "%s%s %s",
				 workload_kind_name(spec.kind),
				 spec.repeat ? " --repeat" : "",
				 workload_fault_name(spec.fault));
			ck_assert(same_every_way(text, len, what));
			same_mutated(&g, text, len, f == 0 ? 40 : 8, what);
			free(text);
		}
	}
}
END_TEST

/* Whether text's model, read the fast way, holds the words the lexer
 * read itself (handed over: model_owned.words_block, exactly as long),
 * after checking that every way reads it alike. */
static int words_handed_over(const char *text, size_t len, const char *what)
{
	ck_assert(same_every_way(text, len, what));
	struct ac_model *m;
	struct ac_error err;
	ck_assert_int_eq(aci_model_read_json_way(text, len, ACI_JSON_FAST, &m,
						 &err), 0);
	const struct model_owned *o = (const struct model_owned *)m;
	int given = o->words_block != NULL;
	if (given) {
		ck_assert_ptr_eq(o->words_block, m->words);
		ck_assert_uint_eq(o->words_len, m->n_words * sizeof(uint64_t));
	}
	ac_model_free(m);
	return given;
}

/*
 * The words the lexer read in the splitter's pass become the model's
 * words when it read all of them (not copied, not held twice: the peak
 * memory of a JSON program), and are copied when jansson read some.
 */
START_TEST(ways_words_handed_over)
{
	struct workload_spec spec = { WORKLOAD_VIT, WORKLOAD_SOUND, 20000, 0 };
	size_t len;
	char *text = workload_json(&spec, &len);
	ck_assert(words_handed_over(text, len, "vit, 20,000 words"));
	free(text);
	static const struct { const char *text; int given; } texts[] = {
		/* jansson reads the second launch (an escape), with words */
		{ "{\"alignment\": 64, \"launches\": [{\"phase\": \"A\", "
		  "\"words\": [1, \"0x2\"]}, {\"phase\": \"\\u0041\", "
		  "\"words\": [3]}], \"schedule\": []}", 0 },
		/* ... without words: every word is still the lexer's */
		{ "{\"alignment\": 64, \"launches\": [{\"phase\": \"A\", "
		  "\"words\": [1, \"0x2\"]}, {\"phase\": \"\\u0041\"}, "
		  "{\"phase\": \"A\", \"words\": [3]}], \"schedule\": []}", 1 },
		/* no word at all: nothing to hand over */
		{ "{\"alignment\": 64, \"launches\": [{\"phase\": \"A\", "
		  "\"words\": []}], \"schedule\": []}", 0 },
	};
	for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++)
		ck_assert_msg(words_handed_over(texts[t].text,
						strlen(texts[t].text),
						texts[t].text) ==
			      texts[t].given, "%s", texts[t].text);
}
END_TEST

/* Random programs of the differential suite's generator, as JSON. */
START_TEST(ways_random)
{
	struct gen_rng g, mut;
	gen_rng_seed(&g, MUTATION_SEED + 2);
	gen_rng_seed(&mut, MUTATION_SEED + 3);
	for (int i = 0; i < 150; i++) {
		int aim;
		struct ac_model *m = gen_model_aimed(&g, &aim);
		size_t len;
		struct ac_error err;
		char *text = ac_model_write_json(m, &len, &err);
		if (text) {
			char what[64];
			snprintf(what, sizeof(what), "random program %d", i);
			same_mutated(&mut, text, len, 20, what);
			free(text);
		}
		gen_model_free(m);
	}
}
END_TEST

/*
 * Launches in the shapes the fast lexer recognises and in the shapes it
 * must decline (jansson's tree then reads them and says what is wrong),
 * each in a program of two launches so that a declined one sits between
 * lexed ones.
 */
static const char *const launch_shapes[] = {
	"{'phase': 'P', 'words': [1, '0x10', '17']}",
	"{'words': [1, 2], 'phase': 'P'}",                 /* words first */
	"{ 'phase_hex' : '5051' ,\n\t'words' :[ ] }\r\n",
	"{'identity_hex': '9a030150', 'words': [0]}",
	"{'phase': 'P'}",                                  /* no words */
	"{'phase': '', 'words': []}",
	"{'phase': 'P', 'words': [9007199254740992]}",     /* 2^53 */
	"{'phase': 'P', 'words': [9007199254740993]}",     /* 2^53 + 1 */
	"{'phase': 'P', 'words': [9999999999999999999]}",  /* 19 digits */
	"{'phase': 'P', 'words': [18446744073709551616]}", /* 2^64 */
	"{'phase': 'P', 'words': [123456789012345678901234]}",
	"{'phase': 'P', 'words': ['0xffffffffffffffff']}",
	"{'phase': 'P', 'words': ['0x10000000000000000']}",
	"{'phase': 'P', 'words': ['0x0000000000000000001']}",
	"{'phase': 'P', 'words': ['18446744073709551615']}",
	"{'phase': 'P', 'words': ['18446744073709551616']}",
	"{'phase': 'P', 'words': ['00000000000000000000001']}",
	"{'phase': 'P', 'words': [0, 00]}",
	"{'phase': 'P', 'words': [01]}",
	"{'phase': 'P', 'words': [-0]}",
	"{'phase': 'P', 'words': [-1]}",
	"{'phase': 'P', 'words': [1.0]}",
	"{'phase': 'P', 'words': [1e3]}",
	"{'phase': 'P', 'words': [1E3]}",
	"{'phase': 'P', 'words': [+1]}",
	"{'phase': 'P', 'words': ['-1']}",
	"{'phase': 'P', 'words': ['0x']}",
	"{'phase': 'P', 'words': ['0xABCDEFabcdef0123', '0x0']}",
	"{'phase': 'P', 'words': ['0x12345678901234567']}", /* 17 digits */
	"{'phase': 'P', 'words': ['1234567890123456789']}", /* 19 digits */
	"{'phase': 'P', 'words': ['12345678901234567890']}",
	"{'phase': 'P', 'words': ['0x1 ']}",
	"{'phase': 'P', 'words': ['1x']}",
	"{'phase': 'P', 'words': ['0x1g']}",
	"{'phase': 'P', 'words': ['-0x1']}",
	"{'phase': 'P', 'words': ['0x1\\u0030']}",
	"{'phase': 'P', 'words': ['0x1]']}",
	"{'phase': 'P]}', 'words': [1]}",                 /* brackets inside */
	"{'phase': 'P', 'words': [1]} 5",                  /* after the value */
	"{'phase': 'P', 'words': [1]}}",
	"{'phase': 'P', 'words': ['0X1']}",
	"{'phase': 'P', 'words': ['0xg']}",
	"{'phase': 'P', 'words': ['']}",
	"{'phase': 'P', 'words': [' 1']}",
	"{'phase': 'P', 'words': ['\\u0031']}",
	"{'phase': 'P', 'words': [true]}",
	"{'phase': 'P', 'words': [null]}",
	"{'phase': 'P', 'words': [[1]]}",
	"{'phase': 'P', 'words': [{}]}",
	"{'phase': 'P', 'words': [1,]}",
	"{'phase': 'P', 'words': [,1]}",
	"{'phase': 'P', 'words': [1 2]}",
	"{'phase': 'P', 'words': 5}",
	"{'phase': 'P', 'words': '0x1'}",
	"{'phase': 'P', 'words': [1], 'words': [2]}",      /* duplicate key */
	"{'phase': 'P', 'phase': 'Q'}",
	"{'phase': 'P', 'phase_hex': '50'}",
	"{'phase_hex': '5', 'words': []}",
	"{'phase_hex': 'zz', 'words': []}",
	"{'identity_hex': '9a0301', 'words': []}",
	"{'identity_hex': 'abc', 'words': []}",
	"{'words': [1]}",
	"{}",
	"{'phase': 'P', 'extra': 1}",
	"{'phase': 'P', 'word': [1]}",
	"{'phase': 'P\\n', 'words': []}",
	"{'phase': 'P\\u00e9', 'words': []}",
	"{'phase': '\xc3\xa9', 'words': []}",
	"{'phase': '\xc3', 'words': []}",
	"{'phase': '\x7f', 'words': []}",
	"{'phase': 'a\tb', 'words': []}",
	"{'phase': 5, 'words': []}",
	"{'phase': 'P' 'words': []}",
	"{'phase': 'P', 'words': []} ",
	"{'phase': 'P', 'words': [1]",
	"['phase', 'P']",
	"5",
};

/* Repeats likewise (the fast path reads those without a table). */
static const char *const repeat_shapes[] = {
	"{'first': 0, 'count': 1, 'iterations': 3}",
	"{'iterations': '0x3', 'count': '1', 'first': 0, 'deltas': []}",
	"{'first': 0, 'count': 2, 'iterations': 2, 'deltas': [{'launch': 0, "
		"'word': 1, 'delta': -5}, {'delta': '-0x10', 'word': 0, "
		"'launch': '1'}]}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': [{'launch': 0, "
		"'word': 0, 'delta': '-9223372036854775808'}]}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': [{'launch': 0, "
		"'word': 0, 'delta': '9223372036854775808'}]}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': [{'launch': 0, "
		"'word': 0, 'delta': -9007199254740992}]}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': [{'launch': 0, "
		"'word': 0, 'delta': -9007199254740993}]}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': [{'launch': 0, "
		"'word': 0, 'delta': -0}]}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': [{'launch': 0, "
		"'word': 0, 'delta': - 1}]}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': [{'launch': 0, "
		"'word': 0, 'delta': --1}]}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': [{'launch': 0, "
		"'word': 0, 'delta': -01}]}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': [{'launch': 0, "
		"'word': 0, 'delta': -1.5}]}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': [{'launch': 0, "
		"'word': 0}]}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': [{'launch': 0, "
		"'word': 0, 'delta': 1, 'delta': 2}]}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': [{'launch': 0, "
		"'word': 0, 'delta': 1, 'x': 2}]}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': [{'launch': -1, "
		"'word': 0, 'delta': 1}]}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': [[0, 0, 1]]}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': [{}]}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': 5}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'table': {'slots': "
		"[{'launch': 0, 'word': 0}], 'frames': [[1], [2]]}}",
	"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': [], 'table': "
		"{'slots': [], 'frames': [[]]}}",
	"{'first': 0, 'count': 1}",
	"{'first': 0, 'first': 0, 'count': 1, 'iterations': 2}",
	"{'first': 0, 'count': 1, 'iterations': 2.0}",
	"{'first': 0, 'count': 1, 'iterations': 'x'}",
	"{'first': '0x', 'count': 1, 'iterations': 2}",
	"{'first': 0, 'count': 1, 'iterations': '0x1]'}",
	"{'first': 0, 'count': 1, 'iterations': 2} ]",
	"{'first': 0, 'count': 1, 'iterations': 2, 'extra': []}",
	"{}",
	"[]",
};

/* A program of three elements, shape the middle one: launches (tmpl 0)
 * or repeats (1), as single-quoted JSON; mutated. */
static void element_shape(const char *shape, int tmpl, uint64_t seed)
{
	static const char *const tmpls[] = {
		"{'alignment': 64, 'launches': [\n"
		"{'phase': 'A', 'words': ['0x1', 2]},\n%s,\n"
		"{'phase': 'B', 'words': [3]}], 'schedule': "
		"[{'first': 0, 'count': 3}]}",
		"{'alignment': 64, 'launches': [{'phase': 'A', 'words': [1]}, "
		"{'phase': 'A', 'words': [2, 3]}], 'repeats': [\n"
		"{'first': 0, 'count': 1, 'iterations': 2, 'deltas': "
		"[{'launch': 0, 'word': 0, 'delta': 1}]},\n%s,\n"
		"{'first': 1, 'count': 1, 'iterations': 1}], 'schedule': "
		"[{'first': 0, 'count': 2}]}",
	};
	struct gen_rng g;
	gen_rng_seed(&g, seed);
	size_t n = strlen(shape);
	char *text = malloc(2 * n + 512), *o = text;
	ck_assert_ptr_nonnull(text);
	o += sprintf(o, tmpls[tmpl], shape);
	for (char *p = text; p < o; p++)
		if (*p == '\'')
			*p = '"';
	same_mutated(&g, text, (size_t)(o - text), 100, shape);
	free(text);
}

START_TEST(ways_launch_shapes)
{
	element_shape(launch_shapes[_i], 0, MUTATION_SEED + 4);
}
END_TEST

START_TEST(ways_repeat_shapes)
{
	element_shape(repeat_shapes[_i], 1, MUTATION_SEED + 5);
}
END_TEST

Suite *suite_json_ways(void)
{
	Suite *s = suite_create("json_ways");
	TCase *tc = tcase_create("json_ways");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ways_examples);
	tcase_add_test(tc, ways_workloads);
	tcase_add_test(tc, ways_random);
	tcase_add_test(tc, ways_words_handed_over);
	tcase_add_loop_test(tc, ways_launch_shapes, 0,
			    sizeof(launch_shapes) / sizeof(launch_shapes[0]));
	tcase_add_loop_test(tc, ways_repeat_shapes, 0,
			    sizeof(repeat_shapes) / sizeof(repeat_shapes[0]));
	suite_add_tcase(s, tc);
	return s;
}
