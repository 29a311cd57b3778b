/* SPDX-License-Identifier: MIT */
/*
 * ac_certify_json, the one-shot entry point of bindings: on every worked
 * example it returns exactly arena-certify --json's object without its
 * "file" key, from JSON text and from the image alike; malformed input
 * gets NULL and the error arena-certify reports (JSON path, byte offset).
 * And json_out.h, the writer of that object and of the guard's records:
 * its text is jansson's json_dumps(v, 0), byte for byte, for every byte
 * in strings and for nested values.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "certify/json_out.h"
#include "certify/json_text.h"

#include "suites.h"
#include "util.h"

#ifndef AG_ARENA_CERTIFY
#error "AG_ARENA_CERTIFY must be defined by the build"
#endif

static const char *const examples[] = {
	"ex1", "ex2", "ex3", "ex4", "ex5", "ex6", "ex7a", "ex7b", "ex7c",
};

/* arena-certify --json's line for path, its "file" key cut: what
 * ac_certify_json must return.  Malloc'ed. */
static char *cli_object(const char *path)
{
	char cmd[1024], line[65536];
	snprintf(cmd, sizeof(cmd), "'%s' --json '%s' 2>/dev/null",
		 AG_ARENA_CERTIFY, path);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), p));
	pclose(p);
	line[strcspn(line, "\n")] = 0;
	const char *v = strstr(line, "\"verdict\": ");
	ck_assert_ptr_nonnull(v);
	char *out = malloc(strlen(v) + 2);
	ck_assert_ptr_nonnull(out);
	out[0] = '{';
	strcpy(out + 1, v);
	return out;
}

START_TEST(examples_as_the_cli)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/examples/%s.json", AG_SPEC_DIR,
		 examples[_i]);
	size_t len = 0, out_len = 0;
	char *text = util_read_file(path, &len);
	ck_assert_ptr_nonnull(text);
	struct ac_error err = { "", "" };
	char *got = ac_certify_json(text, len, &out_len, &err);
	ck_assert_msg(got, "%s: %s: %s", path, err.where, err.message);
	ck_assert_uint_eq(out_len, strlen(got));
	char *want = cli_object(path);
	ck_assert_str_eq(got, want);

	/* the same program as an image: the same object */
	struct ac_model *m = util_read_json_ok(text, len);
	size_t img_len = 0;
	uint8_t *img = ac_model_write_image(m, &img_len, &err);
	ck_assert_ptr_nonnull(img);
	char *from_image = ac_certify_json(img, img_len, NULL, &err);
	ck_assert_ptr_nonnull(from_image);
	ck_assert_str_eq(from_image, want);
	free(from_image);
	free(img);
	ac_model_free(m);
	free(want);
	free(got);
	free(text);
}
END_TEST

START_TEST(advisories_explained)
{
	const char *json = "{\"alignment\": 64, \"windows\": [{\"base\": "
		"\"0x1000\", \"size\": \"0x1000\"}], \"globals\": [{\"name\": "
		"\"w\", \"offset\": \"0x3000\", \"size\": 64}]}";
	struct ac_error err = { "", "" };
	char *got = ac_certify_json(json, strlen(json), NULL, &err);
	ck_assert_ptr_nonnull(got);
	ck_assert_ptr_nonnull(strstr(got, "\"verdict\": 0, "));
	ck_assert_ptr_nonnull(strstr(got, "\"advisories\": [{\"kind\": "
		"\"tensor-outside-windows\""));
	ck_assert_ptr_nonnull(strstr(got, "\"explanation\": \"tensor-outside-"
		"windows: global 'w' (globals[0]) [0x3000, 0x3040) has byte "
		"0x3000 in no window\""));
	free(got);
}
END_TEST

START_TEST(malformed_json_names_the_path)
{
	const char *json = "{\"alignment\": 64, \"launches\": [{\"phase\": "
		"\"P\", \"words\": [\"0x1400\", 1.5]}]}";
	struct ac_error err = { "", "" };
	size_t out_len = 7;
	ck_assert_ptr_null(ac_certify_json(json, strlen(json), &out_len, &err));
	ck_assert_str_eq(err.where, "launches[0].words[1]");
	ck_assert_ptr_nonnull(strstr(err.message, "not an integer"));
	/* err may be NULL */
	ck_assert_ptr_null(ac_certify_json(json, strlen(json), NULL, NULL));
}
END_TEST

START_TEST(malformed_image_names_the_byte)
{
	const char *json = "{\"alignment\": 64}";
	struct ac_model *m = util_read_json_ok(json, strlen(json));
	struct ac_error err = { "", "" };
	size_t len = 0;
	uint8_t *img = ac_model_write_image(m, &len, &err);
	ck_assert_ptr_nonnull(img);
	ck_assert_ptr_null(ac_certify_json(img, len - 1, NULL, &err));
	ck_assert_ptr_nonnull(strstr(err.where, "byte "));
	free(img);
	ac_model_free(m);
}
END_TEST

/* json_out's text for one string, and jansson's for aci_json_text's string of
 * the same bytes (invalid UTF-8 as U+FFFD, as both make it). */
static void same_string(const char *bytes, size_t n)
{
	struct json_out j = JSON_OUT_INIT;
	aci_json_out_text(&j, bytes, n);
	size_t len = 0;
	char *got = aci_json_out_take(&j, 0, &len);
	ck_assert_ptr_nonnull(got);
	json_t *v = aci_json_text(bytes, n);
	ck_assert_ptr_nonnull(v);
	char *want = json_dumps(v, JSON_ENCODE_ANY);
	ck_assert_ptr_nonnull(want);
	ck_assert_uint_eq(len, strlen(want));
	ck_assert_msg(!strcmp(got, want), "%zu bytes: %s, jansson %s", n, got,
		      want);
	free(want);
	json_decref(v);
	free(got);
}

START_TEST(writer_strings_as_jansson)
{
	/* every byte alone */
	for (int b = 0; b < 256; b++) {
		char c = (char)b;
		same_string(&c, 1);
	}
	same_string("", 0);
	/* strings of pieces that make valid and invalid UTF-8 (truncated,
	 * overlong, surrogate, past U+10FFFF, stray continuation), fixed
	 * seed */
	static const char *const pieces[] = {
		"a", "\"", "\\", "/", "\n", "\x01", "\x1f", "\x7f", "\0",
		"\xc3\xa9", "\xe2\x80\xa8", "\xf0\x9f\x98\x80", "\xc3",
		"\xe2\x80", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
		"\x80", "\xff", "\xf8\x88\x80\x80\x80",
	};
	size_t n_pieces = sizeof(pieces) / sizeof(pieces[0]);
	srand(27);
	for (int i = 0; i < 3000; i++) {
		char buf[64];
		size_t n = 0;
		for (int k = rand() % 8; k > 0; k--) {
			size_t p = (size_t)rand() % n_pieces;
			size_t len = p == 8 ? 1 : strlen(pieces[p]);
			memcpy(buf + n, pieces[p], len);
			n += len;
		}
		same_string(buf, n);
	}
}
END_TEST

START_TEST(writer_values_as_jansson)
{
	struct json_out j = JSON_OUT_INIT;
	aci_json_out_object(&j);
	aci_json_out_key(&j, "a\"\n");
	aci_json_out_array(&j);
	aci_json_out_int(&j, 1);
	aci_json_out_int(&j, INT64_MIN);
	aci_json_out_int(&j, INT64_MAX);
	aci_json_out_bool(&j, 1);
	aci_json_out_bool(&j, 0);
	aci_json_out_null(&j);
	aci_json_out_object(&j);
	aci_json_out_end(&j);
	aci_json_out_array(&j);
	aci_json_out_end(&j);
	aci_json_out_hex_u64(&j, UINT64_MAX);
	aci_json_out_end(&j);
	aci_json_out_key(&j, "b");
	aci_json_out_object(&j);
	aci_json_out_key(&j, "c");
	aci_json_out_string(&j, "x");
	aci_json_out_bytes(&j, "n", "n_hex", (const uint8_t *)"\xff\x00", 2);
	aci_json_out_bytes(&j, "m", "m_hex", (const uint8_t *)"ok", 2);
	aci_json_out_end(&j);
	aci_json_out_key(&j, "e");
	aci_json_out_array(&j);
	aci_json_out_end(&j);
	aci_json_out_end(&j);
	char *got = aci_json_out_take(&j, 0, NULL);
	ck_assert_ptr_nonnull(got);

	json_t *want_v = json_pack("{s:[I,I,I,b,b,n,{},[],s],s:{s:s,s:s,s:s},"
				   "s:[]}", "a\"\n", (json_int_t)1,
				   (json_int_t)INT64_MIN, (json_int_t)INT64_MAX,
				   1, 0, "0xffffffffffffffff", "b", "c", "x",
				   "n_hex", "ff00", "m", "ok", "e");
	ck_assert_ptr_nonnull(want_v);
	char *want = json_dumps(want_v, 0);
	ck_assert_str_eq(got, want);
	free(want);
	json_decref(want_v);
	free(got);

	/* an exact unsigned 64-bit integer, which jansson cannot hold */
	aci_json_out_uint(&j, UINT64_MAX);
	size_t len = 0;
	got = aci_json_out_take(&j, 1, &len);
	ck_assert_str_eq(got, "18446744073709551615\n");
	ck_assert_uint_eq(len, 21);
	free(got);
}
END_TEST

Suite *suite_result_json(void)
{
	Suite *s = suite_create("result_json");
	TCase *tc = tcase_create("result_json");
	tcase_add_loop_test(tc, examples_as_the_cli, 0,
			    (int)(sizeof(examples) / sizeof(examples[0])));
	tcase_add_test(tc, advisories_explained);
	tcase_add_test(tc, malformed_json_names_the_path);
	tcase_add_test(tc, malformed_image_names_the_byte);
	tcase_add_test(tc, writer_strings_as_jansson);
	tcase_add_test(tc, writer_values_as_jansson);
	suite_add_tcase(s, tc);
	return s;
}
