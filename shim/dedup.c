/* SPDX-License-Identifier: MIT */
/*
 * Deduplication of the guard's records (dedup.h): the keys reported
 * already, as 64-bit hashes in an open-addressed table under
 * report_lock.  The first keys fit a static table, so that a record
 * saying the guard ran out of memory is deduplicated without any; when
 * the table cannot grow, keys go on in it while it has room, and once
 * it is full everything counts as reported (silence, not a flood).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "dedup.h"

#define SEEN_STATIC 64

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t seen_static[SEEN_STATIC];
static uint64_t *seen = seen_static;   /* hashes of reported keys; 0: empty */
static size_t seen_cap = SEEN_STATIC, seen_used;

/* Doubles the table: 0, or -ENOMEM (the table is as it was). */
static int grow(void)
{
	size_t cap = 2 * seen_cap;
	uint64_t *t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < seen_cap; i++) {
		if (!seen[i])
			continue;
		size_t j = seen[i] & (cap - 1);
		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = seen[i];
	}
	if (seen != seen_static)
		free(seen);
	seen = t;
	seen_cap = cap;
	return 0;
}

/* Whether key was reported before; records it if not.  When the table
 * cannot grow it takes keys while it has room (fuller, slower to probe,
 * still exact; one slot stays empty, so that a probe ends), not counted
 * as reported; full, everything counts as reported: silence, not a
 * flood. */
static int seen_before(const char *key)
{
	uint64_t h = XXH3_64bits(key, strlen(key));
	if (!h)
		h = 1;
	if ((seen_used + 1) * 2 > seen_cap && grow() != 0 &&
	    seen_used + 2 > seen_cap)
		return 1;
	size_t i = h & (seen_cap - 1);
	while (seen[i]) {
		if (seen[i] == h)
			return 1;
		i = (i + 1) & (seen_cap - 1);
	}
	seen[i] = h;
	seen_used++;
	return 0;
}

void ag_report_reset(void)
{
	pthread_mutex_lock(&report_lock);
	if (seen != seen_static)
		free(seen);
	memset(seen_static, 0, sizeof(seen_static));
	seen = seen_static;
	seen_cap = SEEN_STATIC;
	seen_used = 0;
	pthread_mutex_unlock(&report_lock);
}

int ag_dedup_seen(const char *key)
{
	pthread_mutex_lock(&report_lock);
	int old = seen_before(key);
	pthread_mutex_unlock(&report_lock);
	return old;
}

void ag_dedup_lock(void)
{
	pthread_mutex_lock(&report_lock);
}

void ag_dedup_unlock(void)
{
	pthread_mutex_unlock(&report_lock);
}
