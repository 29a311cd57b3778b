/* SPDX-License-Identifier: MIT */
/*
 * libguard-atfork.so: a runtime library that quiesces the device around
 * fork, as GPU runtimes do.  Its constructor, which runs before the
 * guard's (guard-hostile-client links it), registers pthread_atfork
 * handlers that submit on the device once armed: prepare submits a
 * certified schedule (waiting for it) and a failing one; parent and
 * child each submit the certified one again.  What each got is kept for
 * the client to check (the child's in the child).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/ioctl.h>

#include <arenaguard/uapi.h>

#include "atfork_lib.h"

static int dev = -1;
static uint32_t certified, failing;
struct atfork_results atfork_results;

/* Submit schedule s (and wait for it when it runs): 0 or -errno. */
static int run(uint32_t s)
{
	int saved = errno;
	struct drm_arena_schedule_submit sub = { .schedule = s };
	int rc = ioctl(dev, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &sub) == 0
		 ? 0 : -errno;
	if (rc == 0) {
		struct drm_arena_wait w = { .seqno = sub.seqno,
					    .timeout_ns = -1 };
		rc = ioctl(dev, DRM_IOCTL_ARENA_WAIT, &w) == 0 ? 0 : -errno;
	}
	errno = saved;
	return rc;
}

static void prepare(void)
{
	if (dev < 0)
		return;
	atfork_results.prepare_certified = run(certified);
	atfork_results.prepare_failing = run(failing);
	atfork_results.prepared++;
}

static void parent(void)
{
	if (dev >= 0)
		atfork_results.parent = run(certified);
}

static void child(void)
{
	if (dev >= 0)
		atfork_results.child = run(certified);
}

__attribute__((constructor)) static void atfork_lib_load(void)
{
	pthread_atfork(prepare, parent, child);
}

void atfork_lib_arm(int fd, uint32_t certified_schedule,
		    uint32_t failing_schedule)
{
	certified = certified_schedule;
	failing = failing_schedule;
	atfork_results = (struct atfork_results){ 1, 1, 1, 1, 0 };
	dev = fd;
}
