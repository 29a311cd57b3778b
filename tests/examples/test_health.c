/* SPDX-License-Identifier: MIT */
/*
 * arena-serve's readiness (examples/health.c) in process, on a clock the
 * test sets: not ready after a refused probe or --unhealthy-after device
 * errors in a row, ready again after one success; blocked completions
 * count neither way (but a blocked probe does); the re-probe is due
 * once a second, to one caller.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "serve.h"
#include "suites.h"

/* health.c's clock, here the test's (engine.c's is CLOCK_MONOTONIC). */
static uint64_t clock_ns;

uint64_t serve_now_ns(void)
{
	return clock_ns;
}

static void note(struct serve_health *h, int status, int blocked,
		 int probe, const char *error)
{
	struct generation g;
	memset(&g, 0, sizeof(g));
	g.status = status;
	g.blocked = blocked;
	snprintf(g.error, sizeof(g.error), "%s", error);
	health_note(h, &g, probe);
}

static int ready(struct serve_health *h, char *why, size_t size)
{
	return health_ready(h, why, size);
}

START_TEST(health_follows_completions)
{
	struct serve_health h;
	char why[1024];
	ck_assert_int_eq(health_init(&h, 3), 0);
	ck_assert_int_eq(ready(&h, why, sizeof(why)), 1);
	ck_assert_str_eq(why, "");
	/* Two device errors: still ready; the third: not. */
	note(&h, 500, 0, 0, "device error at step 0: Input/output error");
	note(&h, 500, 0, 0, "device error at step 1: Input/output error");
	ck_assert_int_eq(ready(&h, why, sizeof(why)), 1);
	/* Blocked ones say nothing of the device. */
	for (int i = 0; i < 10; i++)
		note(&h, 500, 1, 0, "blocked submission of schedule 1");
	ck_assert_int_eq(ready(&h, why, sizeof(why)), 1);
	note(&h, 500, 0, 0, "device error at step 2: Input/output error");
	ck_assert_int_eq(ready(&h, why, sizeof(why)), 0);
	ck_assert_msg(strstr(why, "3 completions in a row") &&
		      strstr(why, "step 2: Input/output error"), "%s", why);
	/* One success: ready again. */
	note(&h, 200, 0, 0, "");
	ck_assert_int_eq(ready(&h, why, sizeof(why)), 1);
	/* A refused probe: not ready at once, until a success. */
	note(&h, 500, 0, 1, "device error at step 0: Required key not "
	     "available");
	ck_assert_int_eq(ready(&h, why, sizeof(why)), 0);
	ck_assert_msg(strstr(why, "the probe: device error"), "%s", why);
	note(&h, 500, 1, 0, "blocked");
	ck_assert_int_eq(ready(&h, why, sizeof(why)), 0);
	note(&h, 200, 0, 1, "");
	ck_assert_int_eq(ready(&h, why, sizeof(why)), 1);
	/* The guard blocking the probe (a correct program) is not ready. */
	note(&h, 500, 1, 1, "blocked submission of schedule 1");
	ck_assert_int_eq(ready(&h, why, sizeof(why)), 0);
	/* A short buffer: cut, NUL-terminated. */
	char small[8];
	ck_assert_int_eq(ready(&h, small, sizeof(small)), 0);
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
	pthread_mutex_destroy(&h.lock);
}
END_TEST

START_TEST(health_probe_once_a_second)
{
	struct serve_health h;
	ck_assert_int_eq(health_init(&h, 1), 0);
	clock_ns = 5000000000ull;
	ck_assert_int_eq(health_probe_due(&h), 1);   /* never probed */
	ck_assert_int_eq(health_probe_due(&h), 0);   /* claimed */
	clock_ns += 999999999ull;
	ck_assert_int_eq(health_probe_due(&h), 0);
	clock_ns += 1;
	ck_assert_int_eq(health_probe_due(&h), 1);
	ck_assert_int_eq(health_probe_due(&h), 0);
	pthread_mutex_destroy(&h.lock);
}
END_TEST

Suite *suite_health(void)
{
	Suite *s = suite_create("health");
	TCase *tc = tcase_create("health");
	tcase_add_test(tc, health_follows_completions);
	tcase_add_test(tc, health_probe_once_a_second);
	suite_add_tcase(s, tc);
	return s;
}
