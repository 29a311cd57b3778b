/* SPDX-License-Identifier: MIT */
/*
 * arena-serve's readiness (examples/README.md, "Health"): whether the
 * device accepts the server's submissions, as /health tells a load
 * balancer (200 ready, 503 not).  The start-up probe (engine_probe: one
 * certified token, submitted once before the server announces itself)
 * and every completion are noted here; the server is not ready after a
 * refused probe, or after `unhealthy_after` completions in a row that
 * ended in a device error, until a probe or a completion succeeds.  A
 * submission the guard blocked says nothing about the device (the
 * request's program fails its certificate) and counts neither way,
 * except for the probe's, whose program is the correct planner's.
 *
 * The state lives in memory every worker shares (struct serve_shared),
 * under a robust process-shared lock: a worker that dies holding it
 * leaves it usable.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "serve.h"

#define PROBE_INTERVAL_NS 1000000000ull   /* re-probe once a second */

int health_init(struct serve_health *h, int unhealthy_after)
{
	assert(unhealthy_after >= 1);
	memset(h, 0, sizeof(*h));
	h->unhealthy_after = unhealthy_after;
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	int rc = pthread_mutex_init(&h->lock, &a);
	pthread_mutexattr_destroy(&a);
	return -rc;
}

static void lock(struct serve_health *h)
{
	if (pthread_mutex_lock(&h->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&h->lock);   /* plain data: whole */
}

void health_note(struct serve_health *h, const struct generation *g,
		 int probe)
{
	if (g->status != 200 && g->blocked && !probe)
		return;
	lock(h);
	if (g->status == 200) {
		h->failures = 0;
		h->probe_failed = 0;
	} else {
		h->failures++;
		h->probe_failed |= probe;
		snprintf(h->reason, sizeof(h->reason), "%s%.400s",
			 probe ? "the probe: "
			       : "", g->error);
	}
	pthread_mutex_unlock(&h->lock);
}

int health_ready(struct serve_health *h, char *reason, size_t size)
{
	assert(size > 0);
	lock(h);
	int ready = !h->probe_failed && h->failures < h->unhealthy_after;
	if (ready)
		reason[0] = 0;
	else
		snprintf(reason, size, "%d completion%s in a row (probes "
			 "included) failed on the device; the last: %s",
			 h->failures, h->failures == 1 ? "" : "s", h->reason);
	pthread_mutex_unlock(&h->lock);
	return ready;
}

int health_probe_due(struct serve_health *h)
{
	uint64_t now = serve_now_ns();
	unsigned long long last = atomic_load(&h->last_probe_ns);
	return (last == 0 || now - last >= PROBE_INTERVAL_NS) &&
	       atomic_compare_exchange_strong(&h->last_probe_ns, &last, now);
}
