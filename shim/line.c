/* SPDX-License-Identifier: MIT */
/*
 * Records as lines of the guard's own (line.h): every value put into a
 * line is escaped, so that only ag_line_end ends one, whatever the
 * application's paths and names hold.  No state, no memory: the caller
 * gives the buffer.
 */
#define _GNU_SOURCE

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "line.h"

/* Appends s[0, n), each control byte, DEL and backslash escaped (\n,
 * \t, \\, \xHH); an escape that does not fit is left out whole. */
void ag_line_put_escaped(struct ag_line *t, const char *s, size_t n)
{
	assert(t->cap > 1 && t->used <= t->cap);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[5];
		size_t len = 1;
		esc[0] = (char)c;
		if (c == '\\' || c == '\n' || c == '\t') {
			esc[0] = '\\';
			esc[1] = c == '\n' ? 'n' : c == '\t' ? 't' : '\\';
			len = 2;
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x", c);
			len = 4;
		}
		if (t->used + len + 1 > t->cap)
			return;
		memcpy(t->buf + t->used, esc, len);
		t->used += len;
	}
}

static void vput(struct ag_line *t, const char *fmt, va_list ap)
{
	char buf[4096];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n > 0)
		ag_line_put_escaped(t, buf, (size_t)n < sizeof(buf)
					    ? (size_t)n : sizeof(buf) - 1);
}

void ag_line_put(struct ag_line *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vput(t, fmt, ap);
	va_end(ap);
}

void ag_line_end(struct ag_line *t)
{
	if (t->used < t->cap)
		t->buf[t->used++] = '\n';
}
