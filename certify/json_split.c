/* SPDX-License-Identifier: MIT */
/*
 * The splitter of json_split.h: a scanner that follows strings (with
 * their escapes) and bracket depth, not a parser.  Whatever it cannot
 * follow -- a root that is not an object, a stray byte between values, an
 * unterminated string -- makes it decline (0), and the reader parses the
 * whole text as before.  One pass over the text; the skeleton is at most
 * the text's size, the spans 16 bytes per element of a split array.
 * Elements of an array with a reader (json_split_lex) are offered to it
 * first, so that the bytes it reads are not walked here as well.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "json_split.h"

struct scan {
	const char *t;
	size_t len, p;
	char *out;                /* the skeleton so far */
	size_t out_len, copied;   /* text[0, copied) is in out */
	void *ctx;                /* the readers' */
};

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_ws(struct scan *s)
{
	while (s->p < s->len && is_ws(s->t[s->p]))
		s->p++;
}

/* The bytes the scanner stops at: in a string (STOP_STRING) and in a
 * bracketed value (STOP_VALUE).  A table, so that the bytes between are
 * passed one compare each: launches are most of a program's text. */
enum { STOP_STRING = 1, STOP_VALUE = 2 };
static const uint8_t stop[256] = {
	['"'] = STOP_STRING | STOP_VALUE, ['\\'] = STOP_STRING,
	['{'] = STOP_VALUE, ['['] = STOP_VALUE, ['}'] = STOP_VALUE,
	[']'] = STOP_VALUE,
};

/* At a '"': past the closing quote; 0 when the string does not end. */
static int skip_string(struct scan *s)
{
	assert(s->t[s->p] == '"');
	for (s->p++; s->p < s->len; s->p++) {
		while (s->p < s->len &&
		       !(stop[(unsigned char)s->t[s->p]] & STOP_STRING))
			s->p++;
		if (s->p == s->len)
			break;
		if (s->t[s->p] == '\\')
			s->p++;
		else {
			s->p++;
			return 1;
		}
	}
	return 0;
}

/* Past one value: a string, a bracketed value (by depth, strings
 * skipped), or a scalar up to a delimiter; 0 when none is there. */
static int skip_value(struct scan *s)
{
	if (s->p >= s->len)
		return 0;
	char c = s->t[s->p];
	if (c == '"')
		return skip_string(s);
	if (c == '{' || c == '[') {
		size_t depth = 0;
		while (s->p < s->len) {
			if (!(stop[(unsigned char)s->t[s->p]] & STOP_VALUE)) {
				s->p++;
				continue;
			}
			c = s->t[s->p];
			if (c == '"') {
				if (!skip_string(s))
					return 0;
				continue;
			}
			if (c == '{' || c == '[')
				depth++;
			else if (c == '}' || c == ']')
				depth--;
			s->p++;
			if (depth == 0)
				return 1;
		}
		return 0;
	}
	size_t start = s->p;
	while (s->p < s->len && !is_ws(s->t[s->p]) &&
	       !strchr(",:]}[{\"", s->t[s->p]))
		s->p++;
	return s->p > start;
}

/* Appends text[copied, upto) and then `extra` to the skeleton. */
static void emit(struct scan *s, size_t upto, const char *extra)
{
	memcpy(s->out + s->out_len, s->t + s->copied, upto - s->copied);
	s->out_len += upto - s->copied;
	s->copied = upto;
	size_t n = strlen(extra);
	memcpy(s->out + s->out_len, extra, n);
	s->out_len += n;
}

/* At the '[' of a split array: its element spans; the skeleton gets
 * "[]" for it.  0 when the array cannot be followed, -1 out of memory. */
static int split_array(struct scan *s, struct json_split_array *a,
		       json_split_lex lex)
{
	emit(s, s->p, "[]");
	s->p++;
	skip_ws(s);
	if (s->p < s->len && s->t[s->p] == ']') {
		s->copied = ++s->p;
		return 1;
	}
	for (;;) {
		size_t start = s->p;
		const char *past = lex ? lex(s->ctx, a->n, s->t + s->p,
					     s->t + s->len) : NULL;
		assert(!past || (past > s->t + s->p &&
				 past <= s->t + s->len));
		if (past)
			s->p = (size_t)(past - s->t);
		else if (!skip_value(s))
			return 0;
		if (a->n == a->cap) {
			uint64_t cap = a->cap ? 2 * a->cap : 64;
			struct json_span *e = realloc(a->e, cap * sizeof(*e));
			if (!e)
				return -1;
			a->e = e;
			a->cap = cap;
		}
		a->e[a->n++] = (struct json_span){ start, s->p - start };
		skip_ws(s);
		if (s->p >= s->len)
			return 0;
		if (s->t[s->p] == ']') {
			s->copied = ++s->p;
			return 1;
		}
		if (s->t[s->p] != ',')
			return 0;
		s->p++;
		skip_ws(s);
	}
}

/* The key at s->p asked for and not split yet, or NULL. */
static struct json_split_array *wanted(struct json_split *out,
				       const char *const *keys,
				       const char *key, size_t key_len)
{
	for (unsigned k = 0; keys[k]; k++) {
		struct json_split_array *a = &out->arrays[k];
		if (strlen(keys[k]) == key_len && !memcmp(keys[k], key, key_len))
			return a->key ? NULL : a;
	}
	return NULL;
}

/* The root object, member by member. */
static int split_root(struct scan *s, struct json_split *out,
		      const char *const *keys, const json_split_lex *lex)
{
	skip_ws(s);
	if (s->p >= s->len || s->t[s->p] != '{')
		return 0;
	s->p++;
	skip_ws(s);
	if (s->p < s->len && s->t[s->p] == '}')
		return 0;                 /* nothing to split */
	for (;;) {
		if (s->p >= s->len || s->t[s->p] != '"')
			return 0;
		size_t key = s->p + 1;
		if (!skip_string(s))
			return 0;
		size_t key_len = s->p - 1 - key;
		skip_ws(s);
		if (s->p >= s->len || s->t[s->p] != ':')
			return 0;
		s->p++;
		skip_ws(s);
		struct json_split_array *a =
			wanted(out, keys, s->t + key, key_len);
		if (a && s->p < s->len && s->t[s->p] == '[') {
			a->key = keys[a - out->arrays];
			int rc = split_array(s, a,
					     lex ? lex[a - out->arrays] : NULL);
			if (rc <= 0)
				return rc;
		} else if (!skip_value(s)) {
			return 0;
		}
		skip_ws(s);
		if (s->p >= s->len)
			return 0;
		if (s->t[s->p] == '}')
			break;
		if (s->t[s->p] != ',')
			return 0;
		s->p++;
		skip_ws(s);
	}
	emit(s, s->len, "");
	return 1;
}

int aci_json_split(const char *text, size_t len, const char *const *keys,
		   const json_split_lex *lex, void *ctx,
		   struct json_split *out)
{
	assert(text || len == 0);
	memset(out, 0, sizeof(*out));
	unsigned n_keys = 0;
	while (keys[n_keys])
		n_keys++;
	assert(n_keys <= JSON_SPLIT_MAX);
	out->n_arrays = n_keys;
	/* "[]" replaces at least "[]": the skeleton never outgrows the text */
	struct scan s = { .t = text, .len = len, .out = malloc(len + 1),
			  .ctx = ctx };
	if (!s.out)
		return -1;
	int rc = split_root(&s, out, keys, lex);
	out->skeleton = s.out;
	out->skeleton_len = s.out_len;
	if (rc <= 0)
		aci_json_split_free(out);
	return rc;
}

void aci_json_split_free(struct json_split *s)
{
	for (unsigned k = 0; k < s->n_arrays; k++)
		free(s->arrays[k].e);
	free(s->skeleton);
	memset(s, 0, sizeof(*s));
}

const struct json_split_array *aci_json_split_find(const struct json_split *s,
						   const char *key)
{
	for (unsigned k = 0; s && k < s->n_arrays; k++)
		if (s->arrays[k].key && strcmp(s->arrays[k].key, key) == 0)
			return &s->arrays[k];
	return NULL;
}
