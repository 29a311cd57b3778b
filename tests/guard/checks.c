/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>

#include "checks.h"

atomic_int failures;

void check(int ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%s: ", ok ? "ok" : "FAIL");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
	if (!ok)
		atomic_fetch_add(&failures, 1);
}
