/* SPDX-License-Identifier: MIT */
/*
 * The JSON reader and writer (shared/spec/program-json.md): every example
 * survives read -> write -> read, the writer is a fixed point, every
 * malformed class is reported at its JSON path, odd bytes (NUL, non-UTF-8)
 * and 64-bit edge values round-trip, and no input crashes the reader.
 * Nothing here needs the certificate itself.
 */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "certify/identity.h"
#include "suites.h"
#include "util.h"

#define EXAMPLES_DIR AG_SPEC_DIR "/examples"

/* ---- helpers -------------------------------------------------------- */

/*
 * Test JSON is written with single quotes for readability; this turns
 * them into double quotes (no test needs a literal single quote).
 * Returns a static buffer.
 */
static const char *dq(const char *s)
{
	static char buf[8192];
	size_t n = strlen(s);
	ck_assert_uint_lt(n, sizeof(buf));
	for (size_t i = 0; i <= n; i++)
		buf[i] = s[i] == '\'' ? '"' : s[i];
	return buf;
}

/* Reads JSON text (single-quoted, see dq) that must be well-formed. */
static struct ac_model *model_of(const char *sq)
{
	return util_model_json(dq(sq));
}

static int bytes_is(struct ac_bytes a, const void *p, uint32_t len)
{
	return a.len == len && (!len || memcmp(a.data, p, len) == 0);
}

/*
 * The round trip every test relies on: write m, read it back (same
 * content), write again (same text).  Returns the first text.
 */
static char *round_trip(const struct ac_model *m)
{
	size_t len1, len2;
	char *t1 = util_write_json_ok(m, &len1);
	struct ac_model *m2 = util_read_json_ok(t1, len1);
	util_expect_same_content(m, m2);
	char *t2 = util_write_json_ok(m2, &len2);
	ck_assert_msg(len1 == len2 && memcmp(t1, t2, len1) == 0,
		      "second write differs:\n%s\n---\n%s", t1, t2);
	struct ac_model *m3 = util_read_json_ok(t2, len2);
	util_expect_same_model(m2, m3);
	ac_model_free(m3);
	free(t2);
	ac_model_free(m2);
	return t1;
}

static int count_of(const char *text, const char *what)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, what)); p++)
		n++;
	return n;
}

static int is_json_name(const char *name)
{
	size_t n = strlen(name);
	return n > 5 && strcmp(name + n - 5, ".json") == 0;
}

/* ---- examples ------------------------------------------------------- */

START_TEST(examples_round_trip)
{
	DIR *dir = opendir(EXAMPLES_DIR);
	ck_assert_msg(dir, "cannot open %s", EXAMPLES_DIR);
	int seen = 0;
	struct dirent *e;
	while ((e = readdir(dir))) {
		if (!is_json_name(e->d_name))
			continue;
		char path[4096];
		size_t len;
		snprintf(path, sizeof(path), "%s/%s", EXAMPLES_DIR, e->d_name);
		char *text = util_read_file(path, &len);
		ck_assert_msg(text, "cannot read %s", path);
		struct ac_model *m = util_read_json_ok(text, len);
		ck_assert_uint_eq(m->alignment, 64);
		ck_assert_uint_ge(m->n_launches, 1);
		/* Re-serialised, it reads back equal field by field. */
		size_t wlen;
		char *w = util_write_json_ok(m, &wlen);
		struct ac_model *back = util_read_json_ok(w, wlen);
		util_expect_same_model(m, back);
		free(round_trip(back));
		ac_model_free(back);
		free(w);
		ac_model_free(m);
		free(text);
		seen++;
	}
	closedir(dir);
	ck_assert_int_ge(seen, 1);
}
END_TEST

START_TEST(example_values)
{
	size_t len;
	char *text = util_read_file(EXAMPLES_DIR "/ex1.json", &len);
	ck_assert_ptr_nonnull(text);
	struct ac_model *m = util_read_json_ok(text, len);
	ck_assert_uint_eq(m->n_windows, 1);
	ck_assert(bytes_is(m->windows[0].name, "arena0", 6));
	ck_assert_uint_eq(m->windows[0].base, 0x1000);
	ck_assert_uint_eq(m->windows[0].size, 0x1000);
	ck_assert_uint_eq(m->n_globals, 1);
	ck_assert_uint_eq(m->globals[0].offset, 0x1000);
	ck_assert_uint_eq(m->globals[0].size, 256);
	ck_assert_uint_eq(m->n_phases, 3);
	ck_assert_uint_eq(m->n_planes, 4);
	ck_assert(bytes_is(m->phases[1].identity, "Q", 1));
	ck_assert_uint_eq(m->phases[1].plane_first, 1);
	ck_assert_uint_eq(m->phases[1].plane_count, 2);
	ck_assert_uint_eq(m->planes[1].carried, 1);
	ck_assert_uint_eq(m->planes[2].carried, 0);
	ck_assert(bytes_is(m->planes[2].name, "b", 1));
	ck_assert_uint_eq(m->n_launches, 2);
	ck_assert(bytes_is(m->launches[1].identity, "\x9a\x03\x01Q", 4));
	ck_assert_uint_eq(m->launches[1].word_first, 2);
	ck_assert_uint_eq(m->launches[1].word_count, 2);
	ck_assert_uint_eq(m->n_words, 4);
	ck_assert_uint_eq(m->words[3], 0x1500);
	ck_assert_uint_eq(m->n_repeats, 0);
	ck_assert_uint_eq(m->n_refs, 1);
	ck_assert_uint_eq(m->refs[0].first, 0);
	ck_assert_uint_eq(m->refs[0].count, 2);
	ac_model_free(m);
	free(text);

	text = util_read_file(EXAMPLES_DIR "/ex7a.json", &len);
	ck_assert_ptr_nonnull(text);
	m = util_read_json_ok(text, len);
	ck_assert_uint_eq(m->n_repeats, 1);
	ck_assert_uint_eq(m->repeats[0].iterations, 4);
	ck_assert_uint_eq(m->repeats[0].delta_count, 1);
	ck_assert_int_eq(m->deltas[0].delta, 64);
	ck_assert_uint_eq(m->repeats[0].frame_count, 0);
	ac_model_free(m);
	free(text);
}
END_TEST

/* ---- the model's layout --------------------------------------------- */

static const char *const flat_json =
	"{'alignment': 8,"
	" 'windows': [{'name': 'w0', 'base': 0, 'size': 16}, "
	"             {'base': 16, 'size': 16}],"
	" 'globals': [{'name': 'g', 'offset': 0, 'size': 8}],"
	" 'phases': [{'identity': 'P', 'planes': ["
	"               {'name': 'a', 'offset': 8, 'size': 8, 'carried': false},"
	"               {'name': 'bb', 'offset': 16, 'size': 8, 'carried': true}]},"
	"            {'identity_hex': '00ff'},"
	"            {'identity': 'R', 'planes': ["
	"               {'name_hex': '', 'offset': 24, 'size': 8, 'carried': false}]}],"
	" 'launches': [{'phase': 'P', 'words': ['0x8', 9]},"
	"              {'phase_hex': 'ff'},"
	"              {'identity_hex': '0801', 'words': ['18446744073709551615']}],"
	" 'repeats': [{'first': 0, 'count': 1, 'iterations': 3,"
	"              'deltas': [{'launch': 0, 'word': 0, 'delta': -8},"
	"                         {'launch': 0, 'word': 1, 'delta': '0x10'}],"
	"              'table': {'slots': [{'launch': 0, 'word': 0},"
	"                                  {'launch': 0, 'word': 1}],"
	"                        'frames': [['0x1', '0x2'], ['0x3', 4], [5, 6]]}},"
	"             {'first': 2, 'count': 1, 'iterations': 2},"
	"             {'first': 1, 'count': 1, 'iterations': 2,"
	"              'table': {'slots': [{'launch': 1, 'word': 7}],"
	"                        'frames': [['0x7']]}}],"
	" 'schedule': [{'first': 0, 'count': 3}, {'first': 1, 'count': 1}]}";

START_TEST(flattened_runs)
{
	struct ac_model *m = model_of(flat_json);
	ck_assert_uint_eq(m->n_planes, 3);
	ck_assert_uint_eq(m->phases[0].plane_first, 0);
	ck_assert_uint_eq(m->phases[1].plane_first, 2);
	ck_assert_uint_eq(m->phases[1].plane_count, 0);
	ck_assert_uint_eq(m->phases[2].plane_first, 2);
	ck_assert_uint_eq(m->phases[2].plane_count, 1);
	ck_assert_uint_eq(m->planes[2].offset, 24);
	ck_assert_uint_eq(m->planes[2].name.len, 0);

	ck_assert_uint_eq(m->n_words, 3);
	ck_assert_uint_eq(m->launches[1].word_first, 2);
	ck_assert_uint_eq(m->launches[1].word_count, 0);
	ck_assert_uint_eq(m->launches[2].word_first, 2);
	ck_assert_uint_eq(m->words[1], 9);
	ck_assert_uint_eq(m->words[2], UINT64_MAX);

	ck_assert_uint_eq(m->n_deltas, 2);
	ck_assert_int_eq(m->deltas[0].delta, -8);
	ck_assert_int_eq(m->deltas[1].delta, 16);
	ck_assert_uint_eq(m->repeats[1].delta_first, 2);
	ck_assert_uint_eq(m->repeats[1].delta_count, 0);
	ck_assert_uint_eq(m->repeats[1].frame_count, 0);
	/* A tableless repeat's runs still start at the running sums. */
	ck_assert_uint_eq(m->repeats[1].slot_first, 2);
	ck_assert_uint_eq(m->repeats[1].slot_count, 0);
	ck_assert_uint_eq(m->repeats[1].frame_value_first, 6);

	/* Frame f, slot s at frame_value_first + f * slot_count + s. */
	ck_assert_uint_eq(m->n_slots, 3);
	ck_assert_uint_eq(m->n_frame_values, 7);
	const struct ac_repeat *r0 = &m->repeats[0], *r2 = &m->repeats[2];
	ck_assert_uint_eq(r0->slot_count, 2);
	ck_assert_uint_eq(r0->frame_count, 3);
	ck_assert_uint_eq(r0->frame_value_first, 0);
	for (uint64_t f = 0; f < 3; f++)
		for (uint64_t s = 0; s < 2; s++)
			ck_assert_uint_eq(m->frame_values[f * 2 + s],
					  1 + f * 2 + s);
	ck_assert_uint_eq(r2->slot_first, 2);
	ck_assert_uint_eq(r2->slot_count, 1);
	ck_assert_uint_eq(r2->frame_count, 1);
	ck_assert_uint_eq(r2->frame_value_first, 6);
	ck_assert_uint_eq(m->frame_values[6], 7);
	ck_assert_uint_eq(m->slots[2].word, 7);
	ac_model_free(m);
}
END_TEST

/*
 * The string pool: window names, global names, phase identities, plane
 * names, launch identities, each section in order, back to back (the
 * binary image's order).
 */
START_TEST(string_pool_order)
{
	struct ac_model *m = model_of(flat_json);
	const struct ac_bytes *seq[] = {
		&m->windows[0].name, &m->windows[1].name, &m->globals[0].name,
		&m->phases[0].identity, &m->phases[1].identity,
		&m->phases[2].identity, &m->planes[0].name, &m->planes[1].name,
		&m->planes[2].name, &m->launches[0].identity,
		&m->launches[1].identity, &m->launches[2].identity,
	};
	const char *expect = "w0" "g" "P" "\x00\xff" "R" "a" "bb"
		"\x9a\x03\x01P" "\x9a\x03\x01\xff" "\x08\x01";
	size_t total = 2 + 1 + 1 + 2 + 1 + 1 + 2 + 4 + 4 + 2;
	const uint8_t *base = seq[0]->data;
	size_t at = 0;
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		if (!seq[i]->len)
			continue;   /* absent (NULL) or empty: no bytes */
		ck_assert_msg(seq[i]->data == base + at,
			      "string %zu is not where the pool order puts it",
			      i);
		at += seq[i]->len;
	}
	ck_assert_uint_eq(at, total);
	ck_assert(memcmp(base, expect, total) == 0);
	free(round_trip(m));
	ac_model_free(m);
}
END_TEST

START_TEST(defaults)
{
	struct ac_model *m = model_of("{'alignment': 1}");
	ck_assert_uint_eq(m->alignment, 1);
	ck_assert_uint_eq(m->n_windows + m->n_globals + m->n_phases +
			  m->n_planes + m->n_launches + m->n_repeats +
			  m->n_deltas + m->n_slots, 0);
	ck_assert_uint_eq(m->n_words + m->n_frame_values + m->n_refs, 0);
	char *text = round_trip(m);
	ck_assert_ptr_null(strstr(text, "repeats"));
	ck_assert_ptr_nonnull(strstr(text, "\"windows\": []"));
	ck_assert_ptr_nonnull(strstr(text, "\"schedule\": []"));
	free(text);
	ac_model_free(m);

	/* Empty lists, an empty window name, an empty phase and a present
	 * format read the same as absent ones. */
	m = model_of("{'format': 'arena-program/1', 'alignment': 1, "
		     "'windows': [{'name': '', 'base': 1, 'size': 1}], "
		     "'phases': [{'identity': '', 'planes': []}], "
		     "'launches': [{'phase': '', 'words': []}], "
		     "'repeats': [], 'schedule': []}");
	ck_assert_uint_eq(m->windows[0].name.len, 0);
	ck_assert_uint_eq(m->phases[0].identity.len, 0);
	ck_assert(bytes_is(m->launches[0].identity, "\x9a\x03\x00", 3));
	free(round_trip(m));
	ac_model_free(m);
}
END_TEST

/* ---- the writer's shape --------------------------------------------- */

START_TEST(writer_shape)
{
	struct ac_model *m = model_of(flat_json);
	size_t len;
	char *t = util_write_json_ok(m, &len);
	const char *head = "{\n \"format\": \"arena-program/1\",\n"
			   " \"alignment\": 8,\n \"windows\": [\n";
	ck_assert_msg(strncmp(t, head, strlen(head)) == 0, "%s", t);
	ck_assert(len >= 2 && t[len - 1] == '\n' && t[len - 2] == '}');
	const char *keys[] = { "\"windows\"", "\"globals\"", "\"phases\"",
			       "\"launches\"", "\"repeats\"", "\"schedule\"" };
	const char *prev = t;
	for (size_t i = 0; i < 6; i++) {
		const char *at = strstr(t, keys[i]);
		ck_assert_msg(at && at > prev, "%s out of order", keys[i]);
		prev = at;
	}
	/* Addresses in lowercase hex; sizes and indices as integers. */
	ck_assert_ptr_nonnull(strstr(t, "\"words\": [\n    \"0x8\",\n    \"0x9\""));
	ck_assert_ptr_nonnull(strstr(t, "\"0xffffffffffffffff\""));
	ck_assert_ptr_nonnull(strstr(t, "\"size\": 16"));
	ck_assert_ptr_nonnull(strstr(t, "\"delta\": -8"));
	ck_assert_ptr_nonnull(strstr(t, "\"delta\": 16"));
	/* The second window has no name, so none is written. */
	ck_assert_ptr_nonnull(strstr(t, "{\n   \"base\": \"0x10\""));
	/* Canonical phase identities as phase/phase_hex, others raw. */
	ck_assert_ptr_nonnull(strstr(t, "\"phase\": \"P\""));
	ck_assert_ptr_nonnull(strstr(t, "\"phase_hex\": \"ff\""));
	ck_assert_ptr_nonnull(strstr(t, "\"identity_hex\": \"0801\""));
	ck_assert_ptr_nonnull(strstr(t, "\"identity_hex\": \"00ff\""));
	ck_assert_ptr_nonnull(strstr(t, "\"name\": \"\""));
	/* Only repeats with frames get a table. */
	ck_assert_int_eq(count_of(t, "\"table\""), 2);
	ck_assert_int_eq(count_of(t, "\"deltas\""), 3);
	free(t);
	ac_model_free(m);
}
END_TEST

/* ---- numbers -------------------------------------------------------- */

static const struct { const char *value; uint64_t expect; } u64_ok[] = {
	{ "0", 0 },
	{ "9007199254740992", 9007199254740992ull },        /* 2^53 */
	{ "'9007199254740993'", 9007199254740993ull },
	{ "'18446744073709551615'", UINT64_MAX },
	{ "'0xffffffffffffffff'", UINT64_MAX },
	{ "'0xFFF'", 0xfff },
	{ "'0x00000000000000000000001'", 1 },
	{ "'007'", 7 },
	{ "'0'", 0 },
	{ "'0x0'", 0 },
	{ "-0", 0 },
};

START_TEST(unsigned_forms)
{
	char json[256];
	snprintf(json, sizeof(json), "{'alignment': %s}", u64_ok[_i].value);
	struct ac_model *m = model_of(json);
	ck_assert_uint_eq(m->alignment, u64_ok[_i].expect);
	free(round_trip(m));
	ac_model_free(m);
}
END_TEST

static const struct { const char *value; int64_t expect; } i64_ok[] = {
	{ "-9007199254740992", -9007199254740992ll },
	{ "9007199254740992", 9007199254740992ll },
	{ "'-9223372036854775808'", INT64_MIN },
	{ "'9223372036854775807'", INT64_MAX },
	{ "'-0x8000000000000000'", INT64_MIN },
	{ "'0x7fffffffffffffff'", INT64_MAX },
	{ "'-0x40'", -64 },
	{ "'-0'", 0 },
	{ "'-9007199254740993'", -9007199254740993ll },
	{ "-1", -1 },
};

START_TEST(signed_forms)
{
	char json[512];
	snprintf(json, sizeof(json), "{'alignment': 1, 'repeats': [{'first': 0,"
		 " 'count': 1, 'iterations': 1, 'deltas': [{'launch': 0, "
		 "'word': 0, 'delta': %s}]}]}", i64_ok[_i].value);
	struct ac_model *m = model_of(json);
	ck_assert_int_eq(m->deltas[0].delta, i64_ok[_i].expect);
	free(round_trip(m));
	ac_model_free(m);
}
END_TEST

/* ---- identities and names ------------------------------------------- */

START_TEST(phase_identity_bytes)
{
	struct ac_model *m = model_of(
		"{'alignment': 1, 'launches': [{'phase': 'P'}, {'phase': ''},"
		" {'phase_hex': 'ff00fe'}, {'phase': 'a\\u0000b'},"
		" {'identity_hex': '9a0301'}, {'identity_hex': '9a03810050'},"
		" {'identity_hex': '9a03015050'}, {'identity_hex': ''},"
		" {'identity_hex': '9A0301FF'}]}");
	ck_assert(bytes_is(m->launches[0].identity, "\x9a\x03\x01P", 4));
	ck_assert(bytes_is(m->launches[1].identity, "\x9a\x03\x00", 3));
	ck_assert(bytes_is(m->launches[2].identity,
			   "\x9a\x03\x03\xff\x00\xfe", 6));
	ck_assert(bytes_is(m->launches[3].identity, "\x9a\x03\x03" "a\0b", 6));
	ck_assert(bytes_is(m->launches[4].identity, "\x9a\x03\x01", 3));
	ck_assert(bytes_is(m->launches[8].identity, "\x9a\x03\x01\xff", 4));
	char *t = round_trip(m);
	/* Non-UTF-8 payload: phase_hex.  Truncated, non-minimal length or
	 * trailing bytes: not canonical, so raw. */
	ck_assert_ptr_nonnull(strstr(t, "\"phase_hex\": \"ff00fe\""));
	ck_assert_ptr_nonnull(strstr(t, "\"phase\": \"a\\u0000b\""));
	ck_assert_ptr_nonnull(strstr(t, "\"identity_hex\": \"9a0301\""));
	ck_assert_ptr_nonnull(strstr(t, "\"identity_hex\": \"9a03810050\""));
	ck_assert_ptr_nonnull(strstr(t, "\"identity_hex\": \"9a03015050\""));
	ck_assert_ptr_nonnull(strstr(t, "\"identity_hex\": \"\""));
	ck_assert_ptr_nonnull(strstr(t, "\"phase_hex\": \"ff\""));
	free(t);
	ac_model_free(m);
}
END_TEST

/* A payload of 200 bytes needs a two-byte length varint (0xC8 0x01). */
START_TEST(phase_identity_long)
{
	char json[1024], payload[201];
	memset(payload, 'x', 200);
	payload[200] = 0;
	snprintf(json, sizeof(json), "{'alignment': 1, 'launches': "
		 "[{'phase': '%s'}]}", payload);
	struct ac_model *m = model_of(json);
	const struct ac_bytes id = m->launches[0].identity;
	ck_assert_uint_eq(id.len, 204);
	ck_assert(memcmp(id.data, "\x9a\x03\xc8\x01", 4) == 0);
	ck_assert(memcmp(id.data + 4, payload, 200) == 0);
	char *t = round_trip(m);
	ck_assert_ptr_nonnull(strstr(t, "\"phase\": \"xxxx"));
	free(t);
	ac_model_free(m);
}
END_TEST

START_TEST(odd_names)
{
	struct ac_model *m = model_of(
		"{'alignment': 1,"
		" 'windows': [{'name_hex': 'c0', 'base': 0, 'size': 1}],"
		" 'globals': [{'name': 'g\\u0000h', 'offset': 0, 'size': 1},"
		"             {'name': '\\u00e9\\ud83d\\ude00', 'offset': 0,"
		"              'size': 1},"
		"             {'name_hex': 'EDA080', 'offset': 0, 'size': 1}],"
		" 'phases': [{'identity_hex': 'ff', 'planes': ["
		"   {'name': '', 'offset': 0, 'size': 1, 'carried': true}]}]}");
	ck_assert(bytes_is(m->windows[0].name, "\xc0", 1));
	ck_assert(bytes_is(m->globals[0].name, "g\0h", 3));
	ck_assert(bytes_is(m->globals[1].name, "\xc3\xa9\xf0\x9f\x98\x80", 6));
	ck_assert(bytes_is(m->globals[2].name, "\xed\xa0\x80", 3));
	ck_assert(bytes_is(m->phases[0].identity, "\xff", 1));
	char *t = round_trip(m);
	ck_assert_ptr_nonnull(strstr(t, "\"name_hex\": \"c0\""));
	ck_assert_ptr_nonnull(strstr(t, "\"name\": \"g\\u0000h\""));
	/* An encoded surrogate is not UTF-8: hex. */
	ck_assert_ptr_nonnull(strstr(t, "\"name_hex\": \"eda080\""));
	ck_assert_ptr_nonnull(strstr(t, "\"identity_hex\": \"ff\""));
	free(t);
	ac_model_free(m);
}
END_TEST

/* ---- malformed input ------------------------------------------------ */

/* Bits of JSON the cases below share. */
#define PLAN "'alignment': 64, "
#define PLANE(extra) "{'name': 'a', 'offset': 0, 'size': 1" extra "}"
#define REPEAT(extra) "{'first': 0, 'count': 1, 'iterations': 2" extra "}"
#define DELTAS(d) ", 'deltas': [{'launch': 0, 'word': 0, 'delta': 1}, " \
	"{'launch': 0, 'word': 0, 'delta': " d "}]"
#define WORDS4(w) "'launches': [{'phase': 'P'}, {'phase': 'P'}, " \
	"{'phase': 'P'}, {'phase': 'P', 'words': [0, " w "]}]"

static const struct {
	const char *json;      /* single-quoted, see dq() */
	const char *where;     /* exact, or a prefix when ending in '*' */
	const char *message;   /* a substring of the message */
} bad[] = {
	/* Syntax, from jansson: a line and column. */
	{ "{'alignment': 1, 'alignment': 2}", "line 1, column *",
	  "duplicate" },
	{ "{'alignment': 1,\n 'windows': [\n", "line 3, column *", "" },
	{ "{'alignment': 1,\n}", "line 2, column *", "" },
	{ "", "line *", "" },
	{ "{'alignment': 18446744073709551616}", "line 1, column *", "" },
	{ "{'alignment': 1} x", "line 1, column *", "" },
	{ "{'alignment': 1, 'globals': [{'name': '\\ud800', 'offset': 0, "
	  "'size': 1}]}", "line 1, column *", "" },
	/* Top level. */
	{ "[]", "", "object" },
	{ "{}", "alignment", "missing required key" },
	{ "{" PLAN "'colour': 1}", "colour", "unknown key" },
	{ "{" PLAN "'format': 'arena-program/2'}", "format",
	  "arena-program/1" },
	{ "{" PLAN "'format': 1}", "format", "got an integer" },
	{ "{" PLAN "'windows': {}}", "windows", "expected an array" },
	/* Unknown keys and wrong types inside entries. */
	{ "{" PLAN "'windows': [{'base': 0, 'size': 1, 'colour': 2}]}",
	  "windows[0].colour", "unknown key" },
	{ "{" PLAN "'windows': [{'base': 0, 'size': 1, 'a\\u0001': 2}]}",
	  "windows[0].a?", "unknown key" },
	{ "{" PLAN "'windows': [{'base': 0, 'size': 1, 'a\\u0000': 2}]}",
	  "line 1, column *", "NUL" },
	{ "{" PLAN "'windows': [3]}", "windows[0]", "expected a window" },
	{ "{" PLAN "'phases': [{'identity': 'P', 'planes': ["
	  PLANE(", 'carried': 1") "]}]}", "phases[0].planes[0].carried",
	  "true or false" },
	{ "{" PLAN "'phases': [{'identity': 'P', 'planes': {}}]}",
	  "phases[0].planes", "expected an array" },
	{ "{" PLAN "'globals': [{'name': 7, 'offset': 0, 'size': 1}]}",
	  "globals[0].name", "expected a string" },
	{ "{" PLAN WORDS4("true") "}", "launches[3].words[1]",
	  "got true" },
	{ "{" PLAN "'launches': [{'identity': 'P'}]}",
	  "launches[0].identity", "unknown key" },
	/* Missing required keys. */
	{ "{" PLAN "'windows': [{'size': 1}]}", "windows[0].base",
	  "missing required key" },
	{ "{" PLAN "'phases': [{'identity': 'P'}, {'identity': 'Q'}, "
	  "{'identity': 'R', 'planes': [" PLANE("") "]}]}",
	  "phases[2].planes[0].carried", "missing required key" },
	{ "{" PLAN "'phases': [{'planes': []}]}", "phases[0].identity",
	  "missing required key" },
	{ "{" PLAN "'globals': [{'offset': 0, 'size': 1}]}",
	  "globals[0].name", "name_hex" },
	{ "{" PLAN "'schedule': [{'first': 0}]}", "schedule[0].count",
	  "missing required key" },
	{ "{" PLAN "'repeats': [{'first': 0, 'count': 1}]}",
	  "repeats[0].iterations", "missing required key" },
	{ "{" PLAN "'repeats': [" REPEAT(", 'table': {'frames': [[]]}")
	  "]}", "repeats[0].table.slots", "missing required key" },
	{ "{" PLAN "'repeats': [" REPEAT(", 'table': {'slots': []}")
	  "]}", "repeats[0].table.frames", "missing required key" },
	/* Numbers. */
	{ "{'alignment': 1.5}", "alignment", "fraction" },
	{ "{'alignment': 1.0}", "alignment", "fraction" },
	{ "{'alignment': 1e3}", "alignment", "exponent" },
	{ "{'alignment': 9007199254740993}", "alignment", "2^53" },
	{ "{'alignment': -1}", "alignment", "negative" },
	{ "{'alignment': '-1'}", "alignment", "negative" },
	{ "{'alignment': '0x'}", "alignment", "no digits after 0x" },
	{ "{'alignment': ''}", "alignment", "empty" },
	{ "{'alignment': ' 1'}", "alignment", "not a decimal digit" },
	{ "{'alignment': '1 '}", "alignment", "not a decimal digit" },
	{ "{'alignment': '+1'}", "alignment", "not a decimal digit" },
	{ "{'alignment': '0X10'}", "alignment", "not a decimal digit" },
	{ "{'alignment': '0x1g'}", "alignment", "not a hexadecimal digit" },
	{ "{'alignment': '1\\u0000'}", "alignment", "not a decimal digit" },
	{ "{'alignment': '1.5'}", "alignment", "not a decimal digit" },
	{ "{'alignment': null}", "alignment", "got null" },
	{ "{'alignment': true}", "alignment", "got true" },
	{ "{" PLAN WORDS4("'18446744073709551616'") "}",
	  "launches[3].words[1]", "out of range" },
	{ "{" PLAN WORDS4("'0x10000000000000000'") "}",
	  "launches[3].words[1]", "out of range" },
	{ "{" PLAN "'repeats': [" REPEAT(DELTAS("'-9223372036854775809'"))
	  "]}", "repeats[0].deltas[1].delta", "out of range" },
	{ "{" PLAN "'repeats': [" REPEAT(DELTAS("'9223372036854775808'"))
	  "]}", "repeats[0].deltas[1].delta", "out of range" },
	{ "{" PLAN "'repeats': [" REPEAT(DELTAS("-9007199254740993"))
	  "]}", "repeats[0].deltas[1].delta", "2^53" },
	{ "{" PLAN "'repeats': [" REPEAT(DELTAS("'--1'")) "]}",
	  "repeats[0].deltas[1].delta", "not a decimal digit" },
	{ "{" PLAN "'repeats': [" REPEAT(DELTAS("'-'")) "]}",
	  "repeats[0].deltas[1].delta", "empty" },
	{ "{" PLAN "'repeats': [" REPEAT(DELTAS("0.5")) "]}",
	  "repeats[0].deltas[1].delta", "fraction" },
	/* Byte strings. */
	{ "{" PLAN "'globals': [{'name_hex': 'abc', 'offset': 0, "
	  "'size': 1}]}", "globals[0].name_hex", "odd number" },
	{ "{" PLAN "'globals': [{'name_hex': 'zz', 'offset': 0, "
	  "'size': 1}]}", "globals[0].name_hex", "not a hex digit" },
	{ "{" PLAN "'globals': [{'name': 'a', 'name_hex': '61', "
	  "'offset': 0, 'size': 1}]}", "globals[0].name_hex",
	  "exactly one" },
	{ "{" PLAN "'phases': [{'identity': 'P', 'identity_hex': '50'}]}",
	  "phases[0].identity_hex", "exactly one" },
	{ "{" PLAN "'launches': [{'words': []}]}", "launches[0]",
	  "exactly one of phase, phase_hex, identity_hex" },
	{ "{" PLAN "'launches': [{'phase': 'P', 'identity_hex': '00'}]}",
	  "launches[0].identity_hex", "exactly one" },
	{ "{" PLAN "'launches': [{'phase': 'P', 'phase_hex': '50'}]}",
	  "launches[0].phase_hex", "exactly one" },
	{ "{" PLAN "'launches': [{'phase_hex': '5'}]}",
	  "launches[0].phase_hex", "odd number" },
	{ "{" PLAN "'launches': [{'identity_hex': 5}]}",
	  "launches[0].identity_hex", "expected a string" },
	/* Tables. */
	{ "{" PLAN "'repeats': [" REPEAT(", 'table': {'slots': "
	  "[{'launch': 0, 'word': 0}], 'frames': [['0x1'], [], ['0x2']]}")
	  "]}", "repeats[0].table.frames[1]", "one per slot" },
	{ "{" PLAN "'repeats': [" REPEAT(", 'table': {'slots': "
	  "[{'launch': 0, 'word': 0}], 'frames': [['0x1', '0x2']]}")
	  "]}", "repeats[0].table.frames[0]", "one per slot" },
	{ "{" PLAN "'repeats': [" REPEAT(", 'table': {'slots': "
	  "[{'launch': 0, 'word': 0}], 'frames': []}") "]}",
	  "repeats[0].table.frames", "at least one frame" },
	{ "{" PLAN "'repeats': [" REPEAT(", 'table': {'slots': "
	  "[{'launch': 0, 'word': 0}], 'frames': [1]}") "]}",
	  "repeats[0].table.frames[0]", "expected an array" },
	{ "{" PLAN "'repeats': [" REPEAT(", 'table': {'slots': "
	  "[{'launch': 0, 'word': 0}], 'frames': [[1.5]]}") "]}",
	  "repeats[0].table.frames[0][0]", "fraction" },
	{ "{" PLAN "'repeats': [" REPEAT(", 'table': {'slots': "
	  "[{'launch': 0, 'word': '0x'}], 'frames': [[1]]}") "]}",
	  "repeats[0].table.slots[0].word", "no digits" },
	{ "{" PLAN "'repeats': [" REPEAT(", 'table': []") "]}",
	  "repeats[0].table", "expected a table" },
	{ "{" PLAN "'repeats': [" REPEAT(", 'table': {'slots': [], "
	  "'frames': [[]], 'x': 1}") "]}", "repeats[0].table.x",
	  "unknown key" },
};

static int where_matches(const char *where, const char *pattern)
{
	size_t n = strlen(pattern);
	if (n && pattern[n - 1] == '*')
		return strncmp(where, pattern, n - 1) == 0;
	return strcmp(where, pattern) == 0;
}

START_TEST(malformed)
{
	const char *json = dq(bad[_i].json);
	static struct ac_model sentinel;
	struct ac_model *m = &sentinel;  /* must become NULL */
	struct ac_error err;
	memset(&err, 0x55, sizeof(err));
	int rc = ac_model_read_json(json, strlen(json), &m, &err);
	ck_assert_msg(rc == -1, "case %d accepted: %s", _i, json);
	ck_assert_ptr_null(m);
	ck_assert(memchr(err.where, 0, sizeof(err.where)));
	ck_assert(memchr(err.message, 0, sizeof(err.message)));
	ck_assert_msg(where_matches(err.where, bad[_i].where),
		      "case %d: where is \"%s\", expected \"%s\" (%s)", _i,
		      err.where, bad[_i].where, err.message);
	ck_assert_msg(strstr(err.message, bad[_i].message),
		      "case %d: message \"%s\" lacks \"%s\"", _i, err.message,
		      bad[_i].message);
	ck_assert_msg(err.message[0], "case %d: empty message", _i);
	/* And the same without an error struct. */
	ck_assert_int_eq(ac_model_read_json(json, strlen(json), &m, NULL), -1);
}
END_TEST

START_TEST(syntax_error_position)
{
	const char *json = "{\"alignment\": 1,\n  \"windows\": [}\n";
	struct ac_model *m = NULL;
	struct ac_error err;
	ck_assert_int_eq(ac_model_read_json(json, strlen(json), &m, &err), -1);
	ck_assert_str_eq(err.where, "line 2, column 15");
	ck_assert_ptr_nonnull(strstr(err.message, "byte "));
}
END_TEST

/* Every proper prefix of an example is malformed, and none crashes. */
START_TEST(truncated_text)
{
	size_t len;
	char *text = util_read_file(EXAMPLES_DIR "/ex7a.json", &len);
	ck_assert_ptr_nonnull(text);
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	for (size_t n = 0; n < len; n++) {
		struct ac_model *m = NULL;
		struct ac_error err;
		ck_assert_msg(ac_model_read_json(text, n, &m, &err) == -1,
			      "prefix of %zu bytes accepted", n);
		ck_assert(strncmp(err.where, "line ", 5) == 0);
	}
	struct ac_model *m = util_read_json_ok(text, len);
	ac_model_free(m);
	free(text);
}
END_TEST

START_TEST(hostile_text)
{
	struct ac_model *m = NULL;
	struct ac_error err;
	/* Deep nesting: jansson stops at its depth limit. */
	size_t depth = 100000;
	char *deep = malloc(2 * depth + 32);
	ck_assert_ptr_nonnull(deep);
	size_t n = (size_t)sprintf(deep, "{\"alignment\": ");
	memset(deep + n, '[', depth);
	memset(deep + n + depth, ']', depth);
	deep[n + 2 * depth] = '}';
	ck_assert_int_eq(ac_model_read_json(deep, n + 2 * depth + 1, &m, &err),
			 -1);
	ck_assert(strncmp(err.where, "line 1, column", 14) == 0);
	free(deep);

	/* Invalid UTF-8, a NUL byte outside strings, NULL text. */
	const char bad_utf8[] = "{\"alignment\": 1, \"globals\": [{\"name\": "
				"\"\xff\", \"offset\": 0, \"size\": 1}]}";
	ck_assert_int_eq(ac_model_read_json(bad_utf8, sizeof(bad_utf8) - 1, &m,
					    &err), -1);
	ck_assert(strncmp(err.where, "line 1, column", 14) == 0);
	const char nul[] = "{\"alignment\": 1,\0 \"windows\": []}";
	ck_assert_int_eq(ac_model_read_json(nul, sizeof(nul) - 1, &m, &err),
			 -1);
	ck_assert_int_eq(ac_model_read_json(NULL, 0, &m, &err), -1);
	ck_assert_ptr_null(m);

	/* A huge exponent and a huge integer are jansson errors, too. */
	const char *big = "{\"alignment\": 1e999999}";
	ck_assert_int_eq(ac_model_read_json(big, strlen(big), &m, &err), -1);
}
END_TEST

/* ---- the writer on hand-built models -------------------------------- */

START_TEST(writer_edge_values)
{
	static const uint64_t words[] = { UINT64_MAX, 0, 1ull << 53,
					  (1ull << 53) + 1 };
	static const struct ac_delta deltas[] = {
		{ UINT64_MAX, 1ull << 53, INT64_MIN },
		{ (1ull << 53) + 1, 0, INT64_MAX },
		{ 0, 0, -(int64_t)(1ull << 53) - 1 },
		{ 0, 0, (int64_t)(1ull << 53) },
	};
	static const struct ac_slot slots[] = { { UINT64_MAX, 3 } };
	static const uint64_t frames[] = { UINT64_MAX, 5 };
	static const struct ac_repeat repeats[] = {
		{ .first = UINT64_MAX, .count = 1ull << 53,
		  .iterations = (1ull << 53) + 1, .delta_first = 0,
		  .delta_count = 4, .slot_first = 0, .slot_count = 1,
		  .frame_count = 2, .frame_value_first = 0 },
		/* A table with no slots: frames of no values. */
		{ .first = 1, .count = 1, .iterations = 3, .delta_first = 4,
		  .slot_first = 1, .frame_count = 3, .frame_value_first = 2 },
	};
	static const struct ac_ref refs[] = { { UINT64_MAX, 0 } };
	static const uint8_t id[] = { 0x9a, 0x03, 0x02, 0xc3, 0x28 };
	static const struct ac_launch launches[] = {
		{ { id, sizeof(id) }, 0, 4, 0 },
	};
	struct ac_model m = {
		.alignment = UINT64_MAX,
		.n_launches = 1, .launches = launches,
		.n_words = 4, .words = words,
		.n_repeats = 2, .repeats = repeats,
		.n_deltas = 4, .deltas = deltas,
		.n_slots = 1, .slots = slots,
		.n_frame_values = 2, .frame_values = frames,
		.n_refs = 1, .refs = refs,
	};
	char *t = round_trip(&m);
	ck_assert_ptr_nonnull(strstr(t, "\"alignment\": \"18446744073709551615\""));
	ck_assert_ptr_nonnull(strstr(t, "\"count\": 9007199254740992"));
	ck_assert_ptr_nonnull(strstr(t, "\"iterations\": \"9007199254740993\""));
	ck_assert_ptr_nonnull(strstr(t, "\"delta\": \"-9223372036854775808\""));
	ck_assert_ptr_nonnull(strstr(t, "\"delta\": \"9223372036854775807\""));
	ck_assert_ptr_nonnull(strstr(t, "\"delta\": \"-9007199254740993\""));
	ck_assert_ptr_nonnull(strstr(t, "\"delta\": 9007199254740992"));
	ck_assert_ptr_nonnull(strstr(t, "\"0x20000000000001\""));
	ck_assert_ptr_nonnull(strstr(t, "\"phase_hex\": \"c328\""));
	ck_assert_ptr_nonnull(strstr(t, "\"first\": \"18446744073709551615\""));

	/* What the reader makes of it has the same content. */
	struct ac_model *back = util_read_json_ok(t, strlen(t));
	ck_assert_uint_eq(back->repeats[1].frame_count, 3);
	ck_assert_uint_eq(back->repeats[1].slot_count, 0);
	ac_model_free(back);
	free(t);
}
END_TEST

START_TEST(writer_rejects_bad_runs)
{
	static const struct ac_tensor planes[1];
	static const struct ac_phase phases[] = { { { NULL, 0 }, 1, 1 } };
	static const struct ac_launch launches[] = {
		{ { NULL, 0 }, 3, 2, 0 },
	};
	static const uint64_t words[4];
	static const struct ac_repeat repeats[] = {
		{ .first = 0, .count = 1, .iterations = 1, .slot_count = 2,
		  .frame_count = 3, .frame_value_first = 1 },
	};
	static const struct ac_slot slots[2];
	static const uint64_t frames[6];
	struct ac_error err;
	size_t len;

	struct ac_model m = { .alignment = 1, .n_phases = 1, .phases = phases,
			      .n_planes = 1, .planes = planes };
	ck_assert_ptr_null(ac_model_write_json(&m, &len, &err));
	ck_assert_str_eq(err.where, "phases[0].plane_count");

	m = (struct ac_model){ .alignment = 1, .n_launches = 1,
			       .launches = launches, .n_words = 4,
			       .words = words };
	ck_assert_ptr_null(ac_model_write_json(&m, &len, &err));
	ck_assert_str_eq(err.where, "launches[0].word_count");

	m = (struct ac_model){ .alignment = 1, .n_repeats = 1,
			       .repeats = repeats, .n_slots = 2, .slots = slots,
			       .n_frame_values = 6, .frame_values = frames };
	ck_assert_ptr_null(ac_model_write_json(&m, &len, &err));
	ck_assert_str_eq(err.where, "repeats[0].frame_count");

	m = (struct ac_model){ .alignment = 1, .n_globals = 1 };
	ck_assert_ptr_null(ac_model_write_json(&m, &len, &err));
	ck_assert_str_eq(err.where, "globals");

	static const struct ac_repeat frameless[] = {
		{ .first = 0, .count = 1, .iterations = 1, .slot_count = 1 },
	};
	m = (struct ac_model){ .alignment = 1, .n_repeats = 1,
			       .repeats = frameless, .n_slots = 2,
			       .slots = slots };
	ck_assert_ptr_null(ac_model_write_json(&m, &len, &err));
	ck_assert_str_eq(err.where, "repeats[0]");
	ck_assert_ptr_nonnull(strstr(err.message, "no frames"));

	static const struct ac_tensor nameless[] = { { { NULL, 2 }, 0, 1, 0,
						       { 0 } } };
	m = (struct ac_model){ .alignment = 1, .n_globals = 1,
			       .globals = nameless };
	ck_assert_ptr_null(ac_model_write_json(&m, &len, &err));
	ck_assert_str_eq(err.where, "globals[0].name");
}
END_TEST

/* A hand-built model whose structure is broken gets one error, the same
 * from ac_program_new and both writers (structure.c). */
START_TEST(structure_errors_are_one)
{
	static const struct ac_tensor planes[1];
	static const struct ac_phase phases[] = { { { NULL, 0 }, 1, 1 } };
	static const struct ac_launch launches[] = { { { NULL, 0 }, 3, 2, 0 } };
	static const uint64_t words[4];
	static const struct ac_repeat repeats[] = {
		{ .first = 0, .count = 1, .iterations = 1, .delta_first = 2,
		  .delta_count = 1 },
	};
	static const struct ac_delta deltas[2];
	static const struct ac_tensor nameless[] = { { { NULL, 2 }, 0, 1, 0,
						       { 0 } } };
	const struct ac_model models[] = {
		{ .alignment = 1, .n_phases = 1, .phases = phases,
		  .n_planes = 1, .planes = planes },
		{ .alignment = 1, .n_launches = 1, .launches = launches,
		  .n_words = 4, .words = words },
		{ .alignment = 1, .n_launches = 1, .launches = launches,
		  .n_words = 5, .words = words, .n_repeats = 1,
		  .repeats = repeats, .n_deltas = 2, .deltas = deltas },
		{ .alignment = 1, .n_globals = 1 },
		{ .alignment = 1, .n_globals = 1, .globals = nameless },
	};
	const char *where[] = { "phases[0].plane_count",
				"launches[0].word_count",
				"repeats[0].delta_count", "globals",
				"globals[0].name" };
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		struct ac_error a, b, c;
		size_t len;
		ck_assert_ptr_null(ac_program_new(&models[i], &a));
		ck_assert_ptr_null(ac_model_write_image(&models[i], &len, &b));
		ck_assert_ptr_null(ac_model_write_json(&models[i], &len, &c));
		ck_assert_str_eq(a.where, where[i]);
		ck_assert_str_eq(b.where, where[i]);
		ck_assert_str_eq(c.where, where[i]);
		ck_assert_str_eq(a.message, b.message);
		ck_assert_str_eq(a.message, c.message);
	}
}
END_TEST

/* ---- random models -------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* splitmix64: fixed seeds, reproducible */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Mostly small values, often the edges of the formats. */
static uint64_t rnd_u64(void)
{
	static const uint64_t edge[] = { 0, 1, 1ull << 53, (1ull << 53) + 1,
					 UINT64_MAX, (uint64_t)INT64_MAX + 1 };
	switch (rnd() % 4) {
	case 0: return edge[rnd() % 6];
	case 1: return rnd();
	default: return rnd() % 300;
	}
}

/* Bytes: text, text with NUL, arbitrary, or a field-51 message. */
static struct ac_bytes rnd_bytes(uint8_t *pool, size_t *used)
{
	uint8_t *p = pool + *used;
	uint32_t len = (uint32_t)(rnd() % 8), n = 0;
	unsigned kind = rnd() % 4;
	if (kind == 3) {
		p[n++] = 0x9a;
		p[n++] = 0x03;
		p[n++] = (uint8_t)len;
	}
	for (uint32_t i = 0; i < len; i++) {
		uint8_t b = (uint8_t)rnd();
		p[n++] = kind == 0 ? 'a' + b % 26 : kind == 1 ? b % 4 : b;
	}
	if (kind == 3 && rnd() % 4 == 0)
		p[n++] = 0;   /* trailing byte: not canonical */
	*used += n;
	return (struct ac_bytes){ p, n };
}

/* A table without slots: its frames carry nothing, and each is a "[]" in
 * JSON, so the writer takes up to 4096 of them and refuses more at once
 * (found by fuzz_image: 2^27 of them took minutes and gigabytes). */
START_TEST(writer_limits_slotless_frames)
{
	static const uint8_t id[] = { 0x9a, 0x03, 0x01, 'P' };
	struct ac_phase phase = { { id + 3, 1 }, 0, 0 };
	struct ac_launch launch = { { id, sizeof(id) }, 0, 0, 0 };
	struct ac_repeat rep = { .first = 0, .count = 1, .iterations = 2,
				 .frame_count = 4096 };
	struct ac_model m = { .alignment = 1, .n_phases = 1, .phases = &phase,
			      .n_launches = 1, .launches = &launch,
			      .n_repeats = 1, .repeats = &rep };
	size_t len;
	char *text = util_write_json_ok(&m, &len);
	struct ac_model *back = util_read_json_ok(text, len);
	ck_assert_uint_eq(back->repeats[0].frame_count, 4096);
	ac_model_free(back);
	free(text);

	struct ac_error err;
	rep.frame_count = 4097;
	ck_assert_ptr_null(ac_model_write_json(&m, &len, &err));
	ck_assert_str_eq(err.where, "repeats[0]");
	ck_assert(strstr(err.message, "4096") != NULL);
	rep.frame_count = (uint64_t)1 << 39;
	ck_assert_ptr_null(ac_model_write_json(&m, &len, &err));
}
END_TEST

START_TEST(random_models)
{
	enum { N = 6, K = 4 };
	struct ac_window windows[N];
	struct ac_tensor globals[N], planes[N * K];
	struct ac_phase phases[N];
	struct ac_launch launches[N];
	uint64_t words[N * K], frame_values[N * K * K];
	struct ac_repeat repeats[N];
	struct ac_delta deltas[N * K];
	struct ac_slot slots[N * K];
	struct ac_ref refs[N];
	uint8_t pool[8 * 20 * (5 * N + N * K)];

	rng_state = 1000 + (uint64_t)_i;
	for (int round = 0; round < 20; round++) {
		size_t used = 0;
		struct ac_model m = { .alignment = rnd_u64() };
		memset(planes, 0, sizeof(planes));
		memset(globals, 0, sizeof(globals));
		m.n_windows = rnd() % N;
		for (uint32_t i = 0; i < m.n_windows; i++)
			windows[i] = (struct ac_window){
				rnd() % 2 ? rnd_bytes(pool, &used) :
					(struct ac_bytes){ NULL, 0 },
				rnd_u64(), rnd_u64() };
		m.n_globals = rnd() % N;
		for (uint32_t i = 0; i < m.n_globals; i++) {
			globals[i].name = rnd_bytes(pool, &used);
			globals[i].offset = rnd_u64();
			globals[i].size = rnd_u64();
		}
		m.n_phases = rnd() % N;
		for (uint32_t i = 0; i < m.n_phases; i++) {
			uint32_t k = rnd() % K;
			phases[i] = (struct ac_phase){
				rnd_bytes(pool, &used), m.n_planes, k };
			for (uint32_t j = 0; j < k; j++) {
				struct ac_tensor *t = &planes[m.n_planes++];
				t->name = rnd_bytes(pool, &used);
				t->offset = rnd_u64();
				t->size = rnd_u64();
				t->carried = rnd() % 2;
			}
		}
		m.n_launches = rnd() % N;
		for (uint32_t i = 0; i < m.n_launches; i++) {
			uint32_t k = rnd() % K;
			launches[i] = (struct ac_launch){
				rnd_bytes(pool, &used), m.n_words, k, 0 };
			for (uint32_t j = 0; j < k; j++)
				words[m.n_words++] = rnd_u64();
		}
		m.n_repeats = rnd() % N;
		for (uint32_t i = 0; i < m.n_repeats; i++) {
			struct ac_repeat *r = &repeats[i];
			*r = (struct ac_repeat){ rnd_u64(), rnd_u64(),
						 rnd_u64(), m.n_deltas,
						 rnd() % K, m.n_slots, 0, 0,
						 m.n_frame_values };
			for (uint32_t j = 0; j < r->delta_count; j++)
				deltas[m.n_deltas++] = (struct ac_delta){
					rnd_u64(), rnd_u64(),
					(int64_t)rnd_u64() };
			if (rnd() % 2)
				continue;
			r->slot_count = rnd() % K;
			r->frame_count = 1 + rnd() % (K - 1);
			for (uint32_t j = 0; j < r->slot_count; j++)
				slots[m.n_slots++] = (struct ac_slot){
					rnd_u64(), rnd_u64() };
			for (uint64_t j = 0; j < r->frame_count * r->slot_count;
			     j++)
				frame_values[m.n_frame_values++] = rnd_u64();
		}
		m.n_refs = rnd() % N;
		for (uint64_t i = 0; i < m.n_refs; i++)
			refs[i] = (struct ac_ref){ rnd_u64(), rnd_u64() };
		m.windows = windows; m.globals = globals; m.phases = phases;
		m.planes = planes; m.launches = launches; m.words = words;
		m.repeats = repeats; m.deltas = deltas; m.slots = slots;
		m.frame_values = frame_values; m.refs = refs;
		/* The generator builds runs the way the reader does, so the
		 * models match field by field, not only in content. */
		char *t = round_trip(&m);
		struct ac_model *back = util_read_json_ok(t, strlen(t));
		util_expect_same_model(&m, back);
		ac_model_free(back);
		free(t);
	}
}
END_TEST

/*
 * The reader parses the root's arrays element by element (a split of the
 * text, certify/json_split.c) and falls back to the whole text when the
 * split cannot be followed.  Both must read the same model: the program
 * below with every kind of text the splitter walks over (brackets,
 * braces, commas and escaped quotes inside strings, every JSON
 * whitespace, empty arrays) against itself with its root keys escaped,
 * which the splitter does not match, so that it is read whole.
 */
static const char split_text[] =
	"{\"alignment\"\t:\r\n64, \"windows\": [ {\"name\": \"a]},[\\\"{\", "
	"\"base\": \"0x1000\", \"size\": \"0x1000\"} ] ,\n"
	"\"globals\":[],\"phases\" : [{\"identity\": \"P,]\", \"planes\": "
	"[{\"name\": \"x\\\\\", \"offset\": \"0x1000\", \"size\": 64, "
	"\"carried\": false}]}],\n \"launches\": [\n {\"phase\": \"P,]\", "
	"\"words\": [1, \"0x1000\", 3]},{\"phase\": \"P,]\", \"words\": []}\n"
	"], \"repeats\": [ ], \"schedule\": [{\"first\": 0, \"count\": 2}]}\n";

static char *escape_root_keys(const char *text)
{
	static const char *const keys[] = { "\"windows\"", "\"globals\"",
		"\"phases\"", "\"launches\"", "\"repeats\"", "\"schedule\"" };
	char *out = malloc(strlen(text) * 2 + 1), *o = out;
	ck_assert_ptr_nonnull(out);
	for (const char *t = text; *t;) {
		size_t k = 0;
		while (k < 6 && strncmp(t, keys[k], strlen(keys[k])))
			k++;
		if (k < 6) {                /* "x..." -> "\u0078..." */
			o += sprintf(o, "\"\\u%04x%s", t[1], keys[k] + 2);
			t += strlen(keys[k]);
		} else {
			*o++ = *t++;
		}
	}
	*o = 0;
	return out;
}

START_TEST(split_reads_like_whole)
{
	char *whole = escape_root_keys(split_text);
	ck_assert_str_ne(whole, split_text);
	struct ac_model *a = util_read_json_ok(split_text, strlen(split_text));
	struct ac_model *b = util_read_json_ok(whole, strlen(whole));
	util_expect_same_content(a, b);
	ck_assert_uint_eq(a->n_launches, 2);
	ck_assert_uint_eq(a->n_words, 3);
	ck_assert_uint_eq(a->n_refs, 1);
	ck_assert(bytes_is(a->windows[0].name, "a]},[\"{", 7));
	ck_assert(bytes_is(a->planes[0].name, "x\\", 2));
	ac_model_free(a);
	ac_model_free(b);
	free(whole);
}
END_TEST

/* Errors are the whole text's, in its order: a malformed launch read
 * before a syntax error in a later array still gives the syntax error,
 * at its line and column; a malformed element gives its path. */
START_TEST(split_errors_are_whole_texts)
{
	const char *late_syntax =
		"{\"alignment\": 64, \"launches\": [{\"phase\": 5}],\n"
		" \"schedule\": [{\"first\": 0 \"count\": 1}]}";
	struct ac_model *m = NULL;
	struct ac_error err;
	ck_assert_int_eq(ac_model_read_json(late_syntax, strlen(late_syntax),
					    &m, &err), -1);
	ck_assert_str_eq(err.where, "line 2, column 33"); /* "count" ends */
	ck_assert_ptr_nonnull(strstr(err.message, "invalid JSON"));
	const char *bad_word =
		"{\"alignment\": 64, \"launches\": [{\"phase\": \"P\", "
		"\"words\": [1]}, {\"phase\": \"P\", \"words\": [1, -2]}]}";
	ck_assert_int_eq(ac_model_read_json(bad_word, strlen(bad_word), &m,
					    &err), -1);
	ck_assert_str_eq(err.where, "launches[1].words[1]");
	ck_assert_ptr_null(m);
}
END_TEST

/* The one varint codec (identity.h), which the JSON reader writes field
 * 51 with, the writer recognises it by and the identity parser reads. */
START_TEST(varint_round_trip)
{
	static const uint64_t values[] = { 0, 1, 127, 128, 16383, 16384,
					   (uint64_t)1 << 32, (uint64_t)1 << 63,
					   UINT64_MAX };
	static const unsigned sizes[] = { 1, 1, 1, 2, 2, 3, 5, 10, 10 };
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		uint8_t b[10];
		ck_assert_uint_eq(aci_varint_put(NULL, values[i]), sizes[i]);
		ck_assert_uint_eq(aci_varint_put(b, values[i]), sizes[i]);
		uint64_t pos = 0, v;
		ck_assert_int_eq(aci_varint_read(b, sizes[i], &pos, &v), 0);
		ck_assert_uint_eq(v, values[i]);
		ck_assert_uint_eq(pos, sizes[i]);
		pos = 0;                              /* truncated */
		ck_assert_int_eq(aci_varint_read(b, sizes[i] - 1, &pos, &v), -1);
	}
	/* an 11th byte, a 10th above 1 */
	const uint8_t eleven[11] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				     0xff, 0xff, 0x81, 0x00 };
	uint64_t pos = 0, v;
	ck_assert_int_eq(aci_varint_read(eleven, 11, &pos, &v), -1);
	/* field 51 alone, canonical: header then payload */
	uint8_t id[4 + 200];
	unsigned h = aci_identity_field51_header(id, 200);
	ck_assert_uint_eq(h, 4);
	ck_assert_uint_eq(aci_identity_field51_header(NULL, 200), 4);
	memset(id + h, 'x', 200);
	const uint8_t *payload;
	uint64_t len;
	ck_assert(aci_identity_field51_only(id, h + 200, &payload, &len));
	ck_assert_ptr_eq(payload, id + h);
	ck_assert_uint_eq(len, 200);
	ck_assert(!aci_identity_field51_only(id, h + 199, &payload, &len));
	/* a length written with a needless byte is not canonical */
	const uint8_t long_len[] = { 0x9a, 0x03, 0x81, 0x00, 'x' };
	ck_assert(!aci_identity_field51_only(long_len, 5, &payload, &len));
	struct identity_field51 parsed;
	aci_identity_parse(long_len, 5, &parsed);        /* yet it parses */
	ck_assert_int_eq(parsed.problem, AC_ID_OK);
	ck_assert_uint_eq(parsed.len, 1);
}
END_TEST

Suite *suite_json(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("json");
	tcase_add_test(tc, examples_round_trip);
	tcase_add_test(tc, example_values);
	tcase_add_test(tc, flattened_runs);
	tcase_add_test(tc, string_pool_order);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, writer_shape);
	tcase_add_loop_test(tc, unsigned_forms, 0,
			    sizeof(u64_ok) / sizeof(u64_ok[0]));
	tcase_add_loop_test(tc, signed_forms, 0,
			    sizeof(i64_ok) / sizeof(i64_ok[0]));
	tcase_add_test(tc, phase_identity_bytes);
	tcase_add_test(tc, phase_identity_long);
	tcase_add_test(tc, varint_round_trip);
	tcase_add_test(tc, odd_names);
	tcase_add_loop_test(tc, malformed, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, syntax_error_position);
	tcase_add_test(tc, split_reads_like_whole);
	tcase_add_test(tc, split_errors_are_whole_texts);
	tcase_add_test(tc, truncated_text);
	tcase_add_test(tc, hostile_text);
	tcase_add_test(tc, writer_edge_values);
	tcase_add_test(tc, writer_rejects_bad_runs);
	tcase_add_test(tc, structure_errors_are_one);
	tcase_add_test(tc, writer_limits_slotless_frames);
	tcase_add_loop_test(tc, random_models, 0, 8);
	suite_add_tcase(s, tc);
	return s;
}
