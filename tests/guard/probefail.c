/* SPDX-License-Identifier: MIT */
/*
 * libprobefail.so, preloaded between the guard and the simulator:
 * DRM_IOCTL_VERSION fails with errno PROBEFAIL_ERRNO, PROBEFAIL_TIMES
 * times (-1: always); takes PROBEFAIL_SLEEP_MS milliseconds first (a
 * slow device); and is listed in the file PROBEFAIL_LOG, one line
 * "MAJOR:MINOR" of the file it was sent to ("-" for no character
 * device).  Every other ioctl goes on untouched.  With
 * PROBEFAIL_REQUEST=seal, the request so treated is the guard's
 * DRM_IOCTL_ARENA_SEAL instead (a driver whose SEAL is interrupted).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <arenaguard/uapi.h>

#include "hook.h"

static atomic_int left = -2;          /* -2: not read yet */

/* The request that fails: PROBEFAIL_REQUEST's. */
static unsigned long failing_request(void)
{
	const char *r = getenv("PROBEFAIL_REQUEST");
	return r && strcmp(r, "seal") == 0 ? DRM_IOCTL_ARENA_SEAL
					   : DRM_IOCTL_VERSION;
}

int ioctl(int fd, unsigned long request, ...)
{
	HOOK_IOCTL_ARG(request, arg);
	hook_ioctl_fn next = hook_next_ioctl();
	if (request == failing_request()) {
		const char *log = getenv("PROBEFAIL_LOG");
		if (log) {
			struct stat st;
			char line[64];
			int len = fstat(fd, &st) == 0 && S_ISCHR(st.st_mode)
				? snprintf(line, sizeof(line), "%u:%u\n",
					   major(st.st_rdev), minor(st.st_rdev))
				: snprintf(line, sizeof(line), "-\n");
			int out = open(log, O_WRONLY | O_APPEND | O_CREAT |
				       O_CLOEXEC, 0644);
			if (out >= 0) {
				if (write(out, line, (size_t)len) < 0)
					len = 0;
				close(out);
			}
		}
		const char *ms = getenv("PROBEFAIL_SLEEP_MS");
		if (ms)
			usleep((useconds_t)atoi(ms) * 1000);
		int n = atomic_load(&left);
		if (n == -2) {
			const char *t = getenv("PROBEFAIL_TIMES");
			n = t ? atoi(t) : 0;
			atomic_store(&left, n);
		}
		if (n != 0) {
			if (n > 0)
				atomic_fetch_sub(&left, 1);
			const char *e = getenv("PROBEFAIL_ERRNO");
			errno = e ? atoi(e) : EINTR;
			return -1;
		}
	}
	return next(fd, request, arg);
}
