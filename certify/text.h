/* SPDX-License-Identifier: MIT */
/*
 * text.h - a bounded text builder, for the diagnostics (diag.c) and the
 * HTML report's labels (tools/report_fail.c).  Internal to libarenacert
 * and its tools.
 *
 * Output is cut at the buffer's end, never overrun, and stays a C string
 * (buf[used] == '\0' once anything was put).
 */
#ifndef ARENACERT_TEXT_H
#define ARENACERT_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

struct text {
	char *buf;
	size_t len, used;     /* buf holds len bytes; used of them written */
};

/* A text over a char array. */
#define TEXT_OF(array) ((struct text){ (array), sizeof(array), 0 })

/* printf into the text. */
void aci_text_put(struct text *t, const char *fmt, ...) AC_PRINTF(2, 3);

/* [0xoffset, 0xend); an end of 2^64 (no uint64_t holds it) as "2^64". */
void aci_text_range(struct text *t, uint64_t offset, uint64_t size);

/* A wide value as ac_wide_text writes it. */
void aci_text_wide(struct text *t, struct ac_wide v);

#endif /* ARENACERT_TEXT_H */
