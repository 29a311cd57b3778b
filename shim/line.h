/* SPDX-License-Identifier: MIT */
/*
 * Records as lines of the guard's own (line.c).
 */
#ifndef ARENAGUARD_SHIM_LINE_H
#define ARENAGUARD_SHIM_LINE_H

#include <stddef.h>

/* A record being composed in buf[0, cap): whatever is put in it is
 * escaped, so that only ag_line_end ends a line; the last byte is kept
 * for the newline, and a record cut short still ends with one.  Not
 * libarenacert's text builder (certify/text.h), which the guard uses for
 * plain text (api.c): what a line adds is the escaping of every byte put
 * into it, the application's paths and names included. */
struct ag_line {
	char *buf;
	size_t cap, used;
};

/* Appends s[0, n), each control byte, DEL and backslash escaped (\n,
 * \t, \\, \xHH); an escape that does not fit is left out whole.
 * t->cap > 1. */
void ag_line_put_escaped(struct ag_line *t, const char *s, size_t n);

/* Appends the printf-formatted text (at most 4095 bytes of it),
 * escaped as ag_line_put_escaped does. */
void ag_line_put(struct ag_line *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Ends the line: its newline, in the byte kept for it. */
void ag_line_end(struct ag_line *t);

#endif
