/* SPDX-License-Identifier: MIT */
/*
 * Small things every file of the guard may use (util.h): strings, the clock, a digest as text.  The bottom of the
 * guard's layers (docs/guard.md, "Layers"): calls nothing of the guard.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arenaguard/certify.h>

#include "util.h"

char *ag_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

char *ag_printf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

uint64_t ag_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ag_digest_text(const struct ac_digest *d, char out[33])
{
	snprintf(out, 33, "%016" PRIx64 "%016" PRIx64, d->high, d->low);
}

int ag_high_fd_base(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < 8)
		return 3;
	return rl.rlim_cur / 2 < 1000 ? (int)(rl.rlim_cur / 2) : 1000;
}
