/* SPDX-License-Identifier: MIT */
/*
 * A lexer for the common shapes of a JSON program's bulk (json_read.c's
 * fast path for launches and repeats): plain strings and integers, read in
 * place, one pass, no allocation.  It recognises a subset of JSON and
 * nothing else: whatever it does not recognise -- an escape, a byte
 * outside printable ASCII in a string, a sign, a fraction, an exponent,
 * a number of more than 19 digits -- makes its function return 0, and the
 * caller reads the element with jansson instead.  So what it accepts is
 * valid JSON read to the same values jansson reads, and every error stays
 * jansson's (or the reader's, on jansson's tree).
 *
 * Invariant: c->p <= c->end; c->p moves forward only.  A function that
 * returns 0 may leave c->p anywhere in [before, end]: after a 0 the
 * caller abandons the cursor.
 */
#ifndef ARENACERT_JSON_FAST_H
#define ARENACERT_JSON_FAST_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

/* The text left to read: [p, end). */
struct json_cur {
	const char *p, *end;
};

/* Past JSON whitespace (space, tab, LF, CR).  Every other byte the
 * lexer stops at is above ' ', so one compare ends the common case. */
static inline void aci_json_cur_ws(struct json_cur *c)
{
	const uint64_t ws = 1ull << ' ' | 1ull << '\n' | 1ull << '\t' |
		1ull << '\r';
	assert(c->p <= c->end);
	while (c->p < c->end && (unsigned char)*c->p <= ' ' &&
	       (ws >> (unsigned char)*c->p & 1))
		c->p++;
}

/* After whitespace, the byte ch: 1 and past it, or 0. */
static inline int aci_json_cur_take(struct json_cur *c, char ch)
{
	aci_json_cur_ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return 1;
	}
	return 0;
}

/* 1 when only whitespace is left. */
static inline int aci_json_cur_done(struct json_cur *c)
{
	aci_json_cur_ws(c);
	return c->p == c->end;
}

/* 1 for the bytes a plain string (below) ends at: control characters,
 * '"', '\\' and beyond ASCII.  A table, one test a byte. */
static const uint8_t aci_json_unplain[256] = {
#define ACI_JSON_8(b) [b] = 1, [b + 1] = 1, [b + 2] = 1, [b + 3] = 1, \
	[b + 4] = 1, [b + 5] = 1, [b + 6] = 1, [b + 7] = 1
	ACI_JSON_8(0x00), ACI_JSON_8(0x08), ACI_JSON_8(0x10), ACI_JSON_8(0x18),
	['"'] = 1, ['\\'] = 1,
	ACI_JSON_8(0x80), ACI_JSON_8(0x88), ACI_JSON_8(0x90), ACI_JSON_8(0x98),
	ACI_JSON_8(0xa0), ACI_JSON_8(0xa8), ACI_JSON_8(0xb0), ACI_JSON_8(0xb8),
	ACI_JSON_8(0xc0), ACI_JSON_8(0xc8), ACI_JSON_8(0xd0), ACI_JSON_8(0xd8),
	ACI_JSON_8(0xe0), ACI_JSON_8(0xe8), ACI_JSON_8(0xf0), ACI_JSON_8(0xf8),
#undef ACI_JSON_8
};

/*
 * After whitespace, a plain string: bytes 0x20 .. 0x7f but '"' and '\\'
 * (no escape, no control character, ASCII, so valid UTF-8 as it is).
 * 1 with *s, *len its bytes inside the quotes (which are jansson's
 * value of it), or 0.
 */
static inline int aci_json_cur_plain_string(struct json_cur *c,
					    const char **s, size_t *len)
{
	aci_json_cur_ws(c);
	if (c->p == c->end || *c->p != '"')
		return 0;
	const char *q = c->p + 1;
	while (q < c->end && !aci_json_unplain[(unsigned char)*q])
		q++;
	if (q == c->end || *q != '"')
		return 0;
	*s = c->p + 1;
	*len = (size_t)(q - *s);
	c->p = q + 1;
	return 1;
}

/*
 * After whitespace, a JSON integer without sign, fraction or exponent, of
 * at most 19 digits (so below 10^19 < 2^64): 1 with *v, or 0.  A leading
 * zero is JSON only alone ("0"), as jansson reads it.
 */
static inline int aci_json_cur_uint(struct json_cur *c, uint64_t *v)
{
	aci_json_cur_ws(c);
	const char *q = c->p;
	uint64_t n = 0;
	if (q == c->end || *q < '0' || *q > '9')
		return 0;
	if (*q == '0') {
		q++;
	} else {
		while (q < c->end && *q >= '0' && *q <= '9' && q - c->p < 19)
			n = n * 10 + (uint64_t)(*q++ - '0');
	}
	/* more digits, a fraction or an exponent: not ours */
	if (q < c->end && ((*q >= '0' && *q <= '9') || *q == '.' ||
			   *q == 'e' || *q == 'E'))
		return 0;
	*v = n;
	c->p = q;
	return 1;
}

/*
 * After whitespace, a JSON integer as aci_json_cur_uint reads it, or '-'
 * and one: 1 with *v, or 0 (also beyond INT64_MAX's magnitude).
 */
static inline int aci_json_cur_int(struct json_cur *c, int64_t *v)
{
	aci_json_cur_ws(c);
	int minus = c->p < c->end && *c->p == '-';
	struct json_cur digits = { c->p + minus, c->end };
	uint64_t m;
	/* no whitespace between '-' and its digits */
	if (digits.p == c->end || *digits.p < '0' || *digits.p > '9' ||
	    !aci_json_cur_uint(&digits, &m) || m > (uint64_t)INT64_MAX)
		return 0;
	*v = minus ? -(int64_t)m : (int64_t)m;
	c->p = digits.p;
	return 1;
}

#endif
