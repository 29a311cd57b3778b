/* SPDX-License-Identifier: MIT */
/*
 * Linked into libarenaguard-failalloc.so only, with ld's --wrap for each
 * function below: every call the guard's objects (and the libarenacert
 * linked into them) make to an allocating function comes here first,
 * and fails with ENOMEM when failalloc_fails() says so (xxhash's state,
 * compiled inline, comes from the wrapped malloc).  The shipped
 * libarenaguard.so has none of this.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failalloc.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
int __real_vasprintf(char **out, const char *fmt, va_list ap);

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
char *__wrap_strdup(const char *s);
int __wrap_vasprintf(char **out, const char *fmt, va_list ap);

static int fails(void)
{
	if (!failalloc_fails())
		return 0;
	errno = ENOMEM;
	return 1;
}

void *__wrap_malloc(size_t size)
{
	return fails() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fails() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	return fails() ? NULL : __real_realloc(p, size);
}

char *__wrap_strdup(const char *s)
{
	return fails() ? NULL : __real_strdup(s);
}

int __wrap_vasprintf(char **out, const char *fmt, va_list ap)
{
	return fails() ? -1 : __real_vasprintf(out, fmt, ap);
}
