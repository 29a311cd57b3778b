/* SPDX-License-Identifier: MIT */
/*
 * The application's interface (include/arenaguard/guard_api.h, shim/
 * api.c), in process on the fake driver: the counters follow what the
 * guard decided, a short size gets whole fields only, the last refusal
 * is the calling thread's, kept also when its report was not repeated,
 * and the configuration follows the guard's.  (That the functions are
 * found with dlsym in a process running under libarenaguard.so:
 * serve-tests, /metrics.)
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <arenaguard/guard_api.h>

#include "fake.h"
#include "mirror.h"
#include "options.h"
#include "stats.h"
#include "suppress.h"
#include "progs.h"
#include "spawn.h"
#include "suites.h"

static struct arenaguard_counters counters(void)
{
	struct arenaguard_counters c;
	memset(&c, 0xa5, sizeof(c));
	ck_assert_int_eq(arenaguard_get_counters(&c, sizeof(c)), sizeof(c));
	ck_assert_uint_eq(c.size, sizeof(c));
	return c;
}

START_TEST(test_counters_follow_decisions)
{
	fake_setup();
	struct ag_file *f = ag_file_new();
	struct arenaguard_counters before = counters();
	ck_assert_uint_eq(before.mode, ARENAGUARD_MODE_ENFORCE);
	uint32_t bad = fake_bad_d(f);
	ck_assert_int_eq(fake_submit(f, bad), -EPERM);
	ck_assert_int_eq(fake_submit(f, bad), -EPERM);
	uint32_t prog = fake_program(f, PROG_GOOD);
	uint32_t good = fake_schedule(f, prog, prog_good_refs, 2, 2);
	ck_assert_int_eq(fake_submit(f, good), 0);
	struct arenaguard_counters after = counters();
	ck_assert_uint_eq(after.submissions - before.submissions, 3);
	ck_assert_uint_eq(after.blocked - before.blocked, 2);
	ck_assert_uint_eq(after.warned - before.warned, 0);
	ck_assert_uint_eq(after.submissions, atomic_load(&ag_stats.submissions));
	ck_assert_uint_eq(after.records, atomic_load(&ag_stats.records));
	ag_cfg.mode = AG_WARN;
	ck_assert_uint_eq(counters().mode, ARENAGUARD_MODE_WARN);
	ag_cfg.mode = AG_OFF;
	ck_assert_uint_eq(counters().mode, ARENAGUARD_MODE_OFF);
	ag_cfg.mode = AG_ENFORCE;
	ag_file_unref(f);
}
END_TEST

/* An older caller's smaller struct: the fields that fit whole. */
START_TEST(test_counters_short_size)
{
	struct arenaguard_counters c;
	ck_assert_int_eq(arenaguard_get_counters(NULL, sizeof(c)), -1);
	ck_assert_int_eq(arenaguard_get_counters(&c, 7), -1);
	memset(&c, 0xa5, sizeof(c));
	ck_assert_int_eq(arenaguard_get_counters(&c, 8), 8);
	ck_assert_uint_eq(c.size, 8);
	ck_assert_uint_eq(c.programs_certified, 0xa5a5a5a5a5a5a5a5ull);
	memset(&c, 0xa5, sizeof(c));
	ck_assert_int_eq(arenaguard_get_counters(&c, 8 + 8 * 2 + 5), 24);
	ck_assert_uint_eq(c.size, 24);
	ck_assert_uint_eq(c.program_hits, atomic_load(&ag_stats.program_hits));
	ck_assert_uint_eq(c.schedules_certified, 0xa5a5a5a5a5a5a5a5ull);
	/* A newer caller's larger struct: the guard says what it filled. */
	char big[sizeof(c) + 64];
	ck_assert_int_eq(arenaguard_get_counters((void *)big, sizeof(big)),
			 sizeof(c));
}
END_TEST

/* The configuration follows ag_cfg; a short size gets whole fields. */
START_TEST(test_config)
{
	struct arenaguard_config c;
	ck_assert_int_eq(arenaguard_get_config(NULL, sizeof(c)), -1);
	ck_assert_int_eq(arenaguard_get_config(&c, 7), -1);
	enum ag_mode mode = ag_cfg.mode;
	int strict = ag_cfg.strict;
	static const struct { enum ag_mode mode; uint32_t api; } modes[] = {
		{ AG_OFF, ARENAGUARD_MODE_OFF },
		{ AG_WARN, ARENAGUARD_MODE_WARN },
		{ AG_ENFORCE, ARENAGUARD_MODE_ENFORCE },
	};
	for (int i = 0; i < 3; i++) {
		ag_cfg.mode = modes[i].mode;
		ag_cfg.strict = i & 1 ? 7 : 0;
		memset(&c, 0xa5, sizeof(c));
		ck_assert_int_eq(arenaguard_get_config(&c, sizeof(c)),
				 sizeof(c));
		ck_assert_uint_eq(c.size, sizeof(c));
		ck_assert_uint_eq(c.mode, modes[i].api);
		ck_assert_uint_eq(c.strict, i & 1);
		ck_assert_uint_eq(c.suppressions, ag_suppress_count());
	}
	memset(&c, 0xa5, sizeof(c));
	ck_assert_int_eq(arenaguard_get_config(&c, 8 + 3), 8);
	ck_assert_uint_eq(c.size, 8);
	ck_assert_uint_eq(c.strict, 0xa5a5a5a5u);
	char big[sizeof(c) + 16];
	ck_assert_int_eq(arenaguard_get_config((void *)big, sizeof(big)),
			 sizeof(c));
	ag_cfg.mode = mode;
	ag_cfg.strict = strict;
}
END_TEST

static void *refusal_elsewhere(void *arg)
{
	char buf[64];
	*(long *)arg = arenaguard_last_refusal(buf, sizeof(buf), 0);
	return NULL;
}

START_TEST(test_last_refusal)
{
	fake_setup();
	char buf[8192];
	ck_assert_int_eq(arenaguard_last_refusal(NULL, 10, 0), -1);
	ck_assert_int_eq(arenaguard_last_refusal(buf, 0, 0), -1);
	arenaguard_last_refusal(buf, sizeof(buf), 1);
	ck_assert_int_eq(arenaguard_last_refusal(buf, sizeof(buf), 0), 0);
	ck_assert_str_eq(buf, "");

	struct ag_file *f = ag_file_new();
	uint32_t bad = fake_bad_d(f);
	/* Twice: the second report is not repeated, the refusal is kept. */
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(fake_submit(f, bad), -EPERM);
		long n = arenaguard_last_refusal(buf, sizeof(buf), 0);
		ck_assert_int_eq(n, (long)strlen(buf));
		ck_assert_msg(strstr(buf, "blocked submission of schedule ") ==
			      buf, "%s", buf);
		ck_assert_msg(strstr(buf, "verdict 8 (D)\n(D) fails at "
				     "instance"), "%s", buf);
		/* Another thread has none. */
		pthread_t th;
		long other = -2;
		ck_assert_int_eq(pthread_create(&th, NULL, refusal_elsewhere,
						&other), 0);
		pthread_join(th, NULL);
		ck_assert_int_eq(other, 0);
		/* Truncated: the length is the whole one. */
		char small[10];
		ck_assert_int_eq(arenaguard_last_refusal(small, sizeof(small),
							 round), n);
		ck_assert_int_eq(strlen(small), 9);
		ck_assert(strncmp(small, buf, 9) == 0);
	}
	/* Cleared by the last call. */
	ck_assert_int_eq(arenaguard_last_refusal(buf, sizeof(buf), 0), 0);
	ag_file_unref(f);
}
END_TEST

static void teardown(void)
{
	scratch_remove();
}

Suite *suite_api(void)
{
	Suite *s = suite_create("api");
	TCase *t = tcase_create("api");
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_test(t, test_counters_follow_decisions);
	tcase_add_test(t, test_counters_short_size);
	tcase_add_test(t, test_last_refusal);
	tcase_add_test(t, test_config);
	suite_add_tcase(s, t);
	return s;
}
