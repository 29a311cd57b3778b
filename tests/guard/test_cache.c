/* SPDX-License-Identifier: MIT */
/*
 * The guard's caches in this process: one budget in bytes bounds
 * everything they pin (shim/cache.c; docs/guard.md, "Caches").  The churn
 * of issue 13 at a small budget: verdicts on large reference arrays, and
 * distinct programs whose cached verdicts pin them, each created, used
 * and let go.  After every step the caches' count is within the budget,
 * and so is the resident memory the churn leaves; a references array its
 * prefixes' verdicts share is charged once; what was dropped is
 * not found again (the next request recomputes it); a program a handle
 * holds stays shared.  The locks: a hint lookup takes none, and threads
 * publishing and finding verdicts in every shard at once, trimming at a
 * small budget, keep the counts exact and within it (TSan checks the
 * rest).
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "load.h"
#include "options.h"
#include "stats.h"
#include "util.h"
#include "progs.h"
#include "rss.h"
#include "suites.h"

#define MIB ((size_t)1 << 20)
#define SLACK (4 * MIB)            /* malloc's and the test's own */

/* ThreadSanitizer's allocator keeps what is freed, so resident memory
 * says nothing there: the count alone is checked. */
#if defined(__SANITIZE_THREAD__)
#define RESIDENT_MEANINGFUL 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RESIDENT_MEANINGFUL 0
#endif
#endif
#ifndef RESIDENT_MEANINGFUL
#define RESIDENT_MEANINGFUL 1
#endif

/* The memory a churn left is within the budget (where it can be told). */
static void assert_resident_within(size_t grown, size_t budget)
{
	if (RESIDENT_MEANINGFUL)
		ck_assert_uint_le(grown, budget + SLACK);
}

/* Anonymous memory held by this process (rss.h). */
static size_t resident(void)
{
	size_t bytes = rss_held();
	ck_assert_uint_gt(bytes, 0);
	return bytes;
}

static struct ag_program *program_of(uint8_t *image, size_t len)
{
	struct ag_program *p = ag_program_get(image, len);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_null(p->error);
	return p;
}

/* Publishes a verdict on p for refs[0, n) under a forged digest, as
 * decide.c does (the verdict takes its own references); returns the
 * cache's entry, referenced. */
static struct ag_verdict *publish(struct ag_program *p, struct ag_refs *refs,
				  uint64_t n, uint64_t tag)
{
	struct ag_verdict *v = ag_verdict_new();
	ck_assert_ptr_nonnull(v);
	v->digest = (struct ac_digest){ tag, 0xcace };
	atomic_fetch_add(&p->refcount, 1);
	v->program = p;
	if (refs)
		atomic_fetch_add(&refs->refcount, 1);
	v->refv = refs;
	v->n_refs = n;
	v->text = ag_strdup("certified");
	return ag_verdict_publish(v);
}

static int cached(struct ag_program *p, struct ag_refs *refs, uint64_t n,
		  uint64_t tag)
{
	struct ac_digest d = { tag, 0xcace };
	struct ag_verdict *v = ag_verdict_find(&d, p, refs ? refs->v : NULL, n);
	ag_verdict_unref(v);
	return v != NULL;
}

static struct ag_program *good(void)
{
	size_t len;
	uint8_t *image = prog_image(PROG_GOOD, &len);
	return program_of(image, len);
}

/* 20 schedules of 2^18 references (4 MiB each) decided and let go, at a
 * budget of 8 MiB: the entry-bounded cache kept all 80 MiB. */
START_TEST(test_verdicts_within_budget)
{
	ag_cfg.cache_bytes = 8 * MIB;
	struct ag_program *p = good();
	size_t before = resident();
	const uint64_t n = 1u << 18;
	for (uint64_t i = 0; i < 20; i++) {
		struct ag_refs *r = ag_refs_grow(NULL, 0, n);
		ck_assert_ptr_nonnull(r);
		for (uint64_t k = 0; k < n; k++)
			r->v[k] = (struct ac_ref){ 0, 2 };
		r->v[0].count = 1 + i % 2;  /* the bytes differ too */
		struct ag_verdict *v = publish(p, r, n, 100 + i);
		ck_assert(cached(p, r, n, 100 + i));
		ag_verdict_unref(v);
		ag_refs_unref(r);           /* the schedule is destroyed */
		ck_assert_uint_le(ag_cache_bytes(), ag_cfg.cache_bytes);
	}
	size_t grown = resident() - before;
	printf("cache: 20 verdicts on 2^18 references at a budget of 8 MiB: "
	       "%zu bytes counted, %zu resident\n", ag_cache_bytes(), grown);
	assert_resident_within(grown, ag_cfg.cache_bytes);
	/* the oldest went: found no more, so it would be recomputed */
	struct ag_refs *first = ag_refs_grow(NULL, 0, n);
	for (uint64_t k = 0; k < n; k++)
		first->v[k] = (struct ac_ref){ 0, 2 };
	first->v[0].count = 1;
	ck_assert(!cached(p, first, n, 100));
	ag_refs_unref(first);
	ag_program_unref(p);
	ag_cache_trim();
}
END_TEST

/* A schedule submitted after every append leaves a verdict per prefix,
 * all sharing its references array: the array is charged once, so 50
 * prefixes of a 4 MiB array stay cached at a budget of 8 MiB. */
START_TEST(test_shared_references_charged_once)
{
	ag_cfg.cache_bytes = 8 * MIB;
	struct ag_program *p = good();
	const uint64_t n = 1u << 18;
	struct ag_refs *r = ag_refs_grow(NULL, 0, n);
	ck_assert_ptr_nonnull(r);
	for (uint64_t k = 0; k < n; k++)
		r->v[k] = (struct ac_ref){ 0, 2 };
	for (uint64_t i = 1; i <= 50; i++)
		ag_verdict_unref(publish(p, r, i * 1000, 400 + i));
	ck_assert_uint_le(ag_cache_bytes(), ag_cfg.cache_bytes);
	for (uint64_t i = 1; i <= 50; i++)
		ck_assert_msg(cached(p, r, i * 1000, 400 + i), "prefix %u",
			      (unsigned)i);
	ag_refs_unref(r);
	ag_program_unref(p);
	ag_cache_trim();
	ck_assert_uint_eq(ag_cache_entries(), 0);
}
END_TEST

/* 40 distinct programs of about 1 MiB each, each with a cached verdict
 * that pins it, created and let go at a budget of 16 MiB: the image
 * budget did not apply while verdicts pinned the programs. */
START_TEST(test_programs_within_budget)
{
	ag_cfg.cache_bytes = 16 * MIB;
	size_t before = resident(), len = 0;
	unsigned long long certified =
		atomic_load(&ag_stats.programs_certified);
	for (uint32_t i = 0; i < 40; i++) {
		uint8_t *image = prog_image_wide(32768, 0x3f800000 + i, &len);
		struct ag_program *p = program_of(image, len);
		struct ag_verdict *v = publish(p, NULL, 0, 200 + i);
		ag_verdict_unref(v);
		ag_program_unref(p);        /* the handle is destroyed */
		ck_assert_uint_le(ag_cache_bytes(), ag_cfg.cache_bytes);
	}
	size_t grown = resident() - before;
	printf("cache: 40 programs of %zu bytes with verdicts at a budget of "
	       "16 MiB: %zu bytes counted, %zu resident\n", len,
	       ag_cache_bytes(), grown);
	ck_assert_uint_ge(len, 1u << 20);
	assert_resident_within(grown, ag_cfg.cache_bytes);
	/* the first program went with its verdict: it is certified again */
	uint8_t *image = prog_image_wide(32768, 0x3f800000, &len);
	struct ag_program *p = program_of(image, len);
	ck_assert_uint_eq(atomic_load(&ag_stats.programs_certified),
			  certified + 41);
	ag_program_unref(p);
	ag_cache_trim();
}
END_TEST

/* A program a handle holds is not the cache's to drop: at a budget of
 * nothing, an equal image still finds it. */
START_TEST(test_held_program_stays_shared)
{
	ag_cfg.cache_bytes = 0;
	struct ag_program *held = good();
	struct ag_verdict *v = publish(held, NULL, 0, 300);
	ag_verdict_unref(v);
	ck_assert(!cached(held, NULL, 0, 300));    /* nothing is kept */
	size_t len;
	for (uint32_t i = 0; i < 4; i++) {
		uint8_t *image = prog_image_wide(64, 0x40000000 + i, &len);
		ag_program_unref(program_of(image, len));
	}
	struct ag_program *again = good();
	ck_assert_ptr_eq(again, held);
	ag_program_unref(again);
	ag_program_unref(held);
	ag_cache_trim();
	ck_assert_uint_eq(ag_cache_entries(), 0);
}
END_TEST

/* ARENAGUARD_CACHE_MB: MiB; what is not a number in range is the
 * default, never "no cache limit". */
START_TEST(test_cache_setting)
{
	const struct {
		const char *value;
		size_t bytes;
	} cases[] = {
		{ NULL, (size_t)AG_CACHE_MB_DEFAULT << 20 },
		{ "64", 64 * MIB },
		{ "0", 0 },
		{ "1048576", (size_t)1 << 40 },
		{ "1048577", (size_t)AG_CACHE_MB_DEFAULT << 20 },
		{ "-1", (size_t)AG_CACHE_MB_DEFAULT << 20 },
		{ "12k", (size_t)AG_CACHE_MB_DEFAULT << 20 },
		{ "", (size_t)AG_CACHE_MB_DEFAULT << 20 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].value)
			setenv("ARENAGUARD_CACHE_MB", cases[i].value, 1);
		else
			unsetenv("ARENAGUARD_CACHE_MB");
		ag_config_load();
		ck_assert_msg(ag_cfg.cache_bytes == cases[i].bytes, "%s",
			      cases[i].value ? cases[i].value : "(unset)");
	}
	unsetenv("ARENAGUARD_CACHE_MB");
	ag_config_load();
}
END_TEST

static void *look_up_hint(void *arg)
{
	return (void *)(intptr_t)ag_hint_has(arg);
}

/* A submit's hint lookup (every append of a lazy schedule) takes no lock:
 * it answers while another thread holds every lock of the caches (as a
 * thread preempted in a trim would).  It took the verdict cache's one
 * lock. */
START_TEST(test_hint_lookup_takes_no_lock)
{
	struct ac_digest d[2] = { { 0x5eed, 0x1 }, { 0x5eed, 0x2 } };
	ag_hints_add(d, 2);
	struct ac_digest absent = { 0x5eed, 0x3 };
	ag_cache_lock_all();
	pthread_t t[2];
	ck_assert_int_eq(pthread_create(&t[0], NULL, look_up_hint, &d[1]), 0);
	ck_assert_int_eq(pthread_create(&t[1], NULL, look_up_hint, &absent),
			 0);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;     /* a hang, not a cost: far beyond either */
	void *found[2];
	int rc[2];
	for (int i = 0; i < 2; i++)
		rc[i] = pthread_timedjoin_np(t[i], &found[i], &until);
	ag_cache_unlock_all(0);
	for (int i = 0; i < 2; i++)
		if (rc[i] == ETIMEDOUT)
			pthread_join(t[i], &found[i]);
	ck_assert_msg(rc[0] == 0 && rc[1] == 0, "a hint lookup waited for "
		      "the caches' locks");
	ck_assert_int_eq((intptr_t)found[0], 1);
	ck_assert_int_eq((intptr_t)found[1], 0);
	ag_hints_add(d, 2);      /* added once */
	ck_assert(ag_hint_has(&d[0]) && ag_hint_has(&d[1]));
}
END_TEST

#define PUBLISHERS 4
#define PER_PUBLISHER 2000
#define REFS 256

struct publisher {
	struct ag_program *p;
	uint64_t id;
	size_t verdict_bytes;   /* what its cached verdicts pin */
	int missing;            /* lookups that did not find its verdict */
	int wrong;              /* lookups that found another's */
};

/* Publishes a verdict for every prefix of its own references array,
 * under digests spread over every shard, and looks each up at once. */
static void *publish_prefixes(void *arg)
{
	struct publisher *w = arg;
	struct ag_refs *r = ag_refs_grow(NULL, 0, REFS);
	if (!r)
		return NULL;
	for (uint64_t k = 0; k < REFS; k++)
		r->v[k] = (struct ac_ref){ w->id, k };
	for (uint64_t i = 0; i < PER_PUBLISHER; i++) {
		uint64_t n = 1 + i % REFS, tag = w->id << 32 | i;
		struct ag_verdict *v = publish(w->p, r, n, tag);
		w->verdict_bytes += v->bytes;
		ag_verdict_unref(v);
		struct ac_digest d = { tag, 0xcace };
		v = ag_verdict_find(&d, w->p, r->v, n);
		if (!v)
			w->missing++;
		else if (v->refv != r || v->n_refs != n)
			w->wrong++;
		ag_verdict_unref(v);
	}
	ag_refs_unref(r);
	return NULL;
}

/* Threads publishing and finding verdicts in every shard at once: within
 * the budget every verdict is found and the count is exact (each thread's
 * array charged once, though its verdicts are in every shard); at a small
 * budget, trimming as they go, the count stays within it. */
START_TEST(test_shards_publish_at_once)
{
	for (int round = 0; round < 2; round++) {
		ag_cfg.cache_bytes = round == 0 ? 256 * MIB : 2 * MIB;
		struct ag_program *p = good();
		size_t empty = ag_cache_bytes();
		struct publisher w[PUBLISHERS];
		pthread_t t[PUBLISHERS];
		for (int i = 0; i < PUBLISHERS; i++) {
			w[i] = (struct publisher){ .p = p, .id = 1 + i };
			ck_assert_int_eq(pthread_create(&t[i], NULL,
							publish_prefixes,
							&w[i]), 0);
		}
		size_t bytes = 0;
		for (int i = 0; i < PUBLISHERS; i++) {
			pthread_join(t[i], NULL);
			ck_assert_int_eq(w[i].wrong, 0);
			if (round == 0)
				ck_assert_int_eq(w[i].missing, 0);
			bytes += w[i].verdict_bytes;
		}
		printf("cache: %d threads, %d verdicts each, budget %zu MiB: "
		       "%zu bytes counted\n", PUBLISHERS, PER_PUBLISHER,
		       ag_cfg.cache_bytes / MIB, ag_cache_bytes());
		if (round == 0) {
			ck_assert_uint_eq(ag_cache_entries(),
					  1 + PUBLISHERS * PER_PUBLISHER);
			ck_assert_uint_eq(ag_cache_bytes(),
					  empty + bytes + PUBLISHERS *
					  (sizeof(struct ag_refs) +
					   REFS * sizeof(struct ac_ref)));
		} else {
			ck_assert_uint_le(ag_cache_bytes(), ag_cfg.cache_bytes);
		}
		ag_program_unref(p);
		ag_cache_trim();
		ck_assert_uint_eq(ag_cache_entries(), 0);
	}
}
END_TEST

static void restore_budget(void)
{
	ag_cache_trim();
	ag_cfg.cache_bytes = (size_t)AG_CACHE_MB_DEFAULT << 20;
}

Suite *suite_cache(void)
{
	Suite *s = suite_create("cache");
	TCase *t = tcase_create("cache");
	tcase_set_timeout(t, 60);
	tcase_add_checked_fixture(t, NULL, restore_budget);
	tcase_add_test(t, test_verdicts_within_budget);
	tcase_add_test(t, test_shared_references_charged_once);
	tcase_add_test(t, test_programs_within_budget);
	tcase_add_test(t, test_held_program_stays_shared);
	tcase_add_test(t, test_cache_setting);
	tcase_add_test(t, test_hint_lookup_takes_no_lock);
	tcase_add_test(t, test_shards_publish_at_once);
	suite_add_tcase(s, t);
	return s;
}
