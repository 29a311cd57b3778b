/* SPDX-License-Identifier: MIT */
/*
 * The paths errors name an input's entries by, as the JSON reader writes
 * them ("launches[3].words[7]", "repeats[0].table"): json_read.c's and
 * builder.c's, so a plan built call by call is named as its JSON is.
 * Each writes a NUL-terminated path of at most PATH_LEN bytes into buf
 * (a path that does not fit ends in "...": never in practice, depth is
 * fixed).
 */
#ifndef ARENACERT_PATH_H
#define ARENACERT_PATH_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <arenaguard/program.h>

#define PATH_LEN sizeof(((struct ac_error *)0)->where)

/* Marks a path that did not fit (never in practice: depth is fixed). */
static inline void path_done(char *buf, int n)
{
	if (n >= (int)PATH_LEN)
		memcpy(buf + PATH_LEN - 4, "...", 4);
}

/* Appends a key to a path, copying only printable ASCII of odd keys. */
static inline void path_key(char *buf, const char *path, const char *key,
			    size_t key_len)
{
	char safe[48];
	size_t n = 0;
	for (size_t i = 0; i < key_len && n < sizeof(safe) - 4; i++)
		safe[n++] = key[i] > 0x20 && key[i] < 0x7f ? key[i] : '?';
	if (key_len > n)
		safe[n++] = '.', safe[n++] = '.', safe[n++] = '.';
	safe[n] = 0;
	path_done(buf, snprintf(buf, PATH_LEN, "%s%s%s", path,
				path[0] ? "." : "", safe));
}

static inline void path_field(char *buf, const char *path, const char *key)
{
	path_key(buf, path, key, strlen(key));
}

static inline void path_index(char *buf, const char *path, uint64_t i)
{
	path_done(buf, snprintf(buf, PATH_LEN, "%s[%" PRIu64 "]", path, i));
}

#endif
