/* SPDX-License-Identifier: MIT */
/*
 * Every worked example in shared/spec/examples gives its .expect verdict.
 * The folder is listed at run time, so examples added to the spec are
 * checked without touching this file.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"
#include "util.h"

#define EXAMPLES AG_SPEC_DIR "/examples"

static int example_count(void)
{
	DIR *dir = opendir(EXAMPLES);
	int n = 0;
	struct dirent *e;
	while (dir && (e = readdir(dir)))
		if (strlen(e->d_name) > 5 &&
		    strcmp(e->d_name + strlen(e->d_name) - 5, ".json") == 0)
			n++;
	if (dir)
		closedir(dir);
	return n;
}

/* Examples in name order, so the loop index names the same file each run. */
static int name_order(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *example_name(int index)
{
	DIR *dir = opendir(EXAMPLES);
	ck_assert_ptr_nonnull(dir);
	char *names[512];
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dir)) && n < 512)
		if (strlen(e->d_name) > 5 &&
		    strcmp(e->d_name + strlen(e->d_name) - 5, ".json") == 0)
			names[n++] = strdup(e->d_name);
	closedir(dir);
	qsort(names, n, sizeof(names[0]), name_order);
	ck_assert_int_lt(index, n);
	char *name = names[index];
	for (int i = 0; i < n; i++)
		if (i != index)
			free(names[i]);
	return name;
}

START_TEST(example_gives_expected_verdict)
{
	char *name = example_name(_i);
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", EXAMPLES, name);
	char *json = util_read_file(path, NULL);
	ck_assert_msg(json, "cannot read %s", path);
	strcpy(path + strlen(path) - 5, ".expect");
	char *expect = util_read_file(path, NULL);
	ck_assert_msg(expect, "cannot read %s", path);

	struct ac_error err;
	uint64_t verdict = util_verdict_json(json, &err);
	char text[512];
	ck_assert_msg(verdict != AC_NONE, "%s: %s", name,
		      ac_error_text(&err, text, sizeof(text)));
	uint64_t want = strtoull(expect, NULL, 10);
	ck_assert_msg(verdict == want, "%s: verdict %" PRIu64 ", expected %"
		      PRIu64, name, verdict, want);
	free(json);
	free(expect);
	free(name);
}
END_TEST

/* Guards the loop above: a missing folder must fail, not run no test. */
START_TEST(examples_are_present)
{
	ck_assert_msg(example_count() > 0, "no examples in %s", EXAMPLES);
}
END_TEST

Suite *suite_examples(void)
{
	Suite *s = suite_create("examples");
	TCase *tc = tcase_create("spec");
	int n = example_count();
	tcase_add_test(tc, examples_are_present);
	tcase_add_loop_test(tc, example_gives_expected_verdict, 0, n);
	suite_add_tcase(s, tc);
	return s;
}
