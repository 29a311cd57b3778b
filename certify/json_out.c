/* SPDX-License-Identifier: MIT */
/*
 * json_out.c - the JSON writer of json_out.h: jansson's json_dumps(v, 0)
 * text, written with libc's allocator only.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"

size_t aci_json_out_utf8_len(const unsigned char *s, size_t n)
{
	assert(n > 0);
	size_t len;
	uint32_t cp;
	if (s[0] < 0x80)
		return 1;
	else if ((s[0] & 0xE0) == 0xC0)
		len = 2, cp = s[0] & 0x1F;
	else if ((s[0] & 0xF0) == 0xE0)
		len = 3, cp = s[0] & 0x0F;
	else if ((s[0] & 0xF8) == 0xF0)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	/* Overlong forms, surrogates and values past U+10FFFF are invalid. */
	static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

int aci_json_out_is_utf8(const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t len = aci_json_out_utf8_len(s + i, n - i);
		if (!len)
			return 0;
		i += len;
	}
	return 1;
}

/* Room for n more bytes and the NUL; 0, or -1 (then failed). */
static int reserve(struct json_out *j, size_t n)
{
	if (j->failed)
		return -1;
	if (j->cap - j->used > n)
		return 0;
	size_t cap = j->cap ? j->cap : 256;
	while (cap - j->used < n + 1) {
		if (cap > SIZE_MAX / 2) {
			j->failed = 1;
			return -1;
		}
		cap *= 2;
	}
	char *b = realloc(j->buf, cap);
	if (!b) {
		j->failed = 1;
		return -1;
	}
	j->buf = b;
	j->cap = cap;
	return 0;
}

static void put(struct json_out *j, const char *s, size_t n)
{
	if (reserve(j, n) == 0) {
		memcpy(j->buf + j->used, s, n);
		j->used += n;
		j->buf[j->used] = '\0';
	}
}

/* Before a value or a key: ", " unless it is its level's first (or a
 * key's value). */
static void separate(struct json_out *j)
{
	if (j->after_key) {
		j->after_key = 0;
		return;
	}
	if (j->depth == 0)
		return;
	uint32_t bit = 1u << (j->depth - 1);
	if (j->has_items & bit)
		put(j, ", ", 2);
	j->has_items |= bit;
}

/* The string's quoted, escaped text (the caller has separated). */
static void quoted(struct json_out *j, const char *str, size_t n)
{
	/* At most 6 bytes a byte (\u00XX); an invalid byte's U+FFFD is 3. */
	if (n > (SIZE_MAX - 3) / 6) {
		j->failed = 1;
		return;
	}
	if (reserve(j, 6 * n + 2) != 0)
		return;
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *s = (const unsigned char *)str;
	char *o = j->buf + j->used;
	*o++ = '"';
	for (size_t i = 0; i < n;) {
		size_t len = aci_json_out_utf8_len(s + i, n - i);
		if (len == 0) {
			memcpy(o, "\xEF\xBF\xBD", 3);
			o += 3;
			i++;
			continue;
		}
		if (len > 1) {
			memcpy(o, s + i, len);
			o += len;
			i += len;
			continue;
		}
		unsigned char c = s[i++];
		const char *esc = NULL;
		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default: break;
		}
		if (esc) {
			*o++ = esc[0];
			*o++ = esc[1];
		} else if (c < 0x20) {
			memcpy(o, "\\u00", 4);
			o[4] = hex[c >> 4];
			o[5] = hex[c & 15];
			o += 6;
		} else {
			*o++ = (char)c;
		}
	}
	*o++ = '"';
	*o = '\0';
	j->used = (size_t)(o - j->buf);
	assert(j->used < j->cap);
}

static void open_level(struct json_out *j, int array)
{
	separate(j);
	assert(j->depth < JSON_OUT_DEPTH);
	uint32_t bit = 1u << j->depth;
	j->has_items &= ~bit;
	if (array)
		j->is_array |= bit;
	else
		j->is_array &= ~bit;
	j->depth++;
	put(j, array ? "[" : "{", 1);
}

void aci_json_out_object(struct json_out *j)
{
	open_level(j, 0);
}

void aci_json_out_array(struct json_out *j)
{
	open_level(j, 1);
}

void aci_json_out_end(struct json_out *j)
{
	assert(j->depth > 0 && !j->after_key);
	j->depth--;
	put(j, (j->is_array >> j->depth) & 1 ? "]" : "}", 1);
}

void aci_json_out_key(struct json_out *j, const char *key)
{
	assert(j->depth > 0 && !((j->is_array >> (j->depth - 1)) & 1));
	assert(!j->after_key);
	separate(j);
	quoted(j, key, strlen(key));
	put(j, ": ", 2);
	j->after_key = 1;
}

void aci_json_out_text(struct json_out *j, const char *s, size_t n)
{
	separate(j);
	quoted(j, n ? s : "", n);
}

void aci_json_out_string(struct json_out *j, const char *s)
{
	aci_json_out_text(j, s, strlen(s));
}

/* A bare token: a number, true, false, null. */
static void token(struct json_out *j, const char *s, size_t n)
{
	separate(j);
	put(j, s, n);
}

void aci_json_out_int(struct json_out *j, int64_t v)
{
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "%" PRId64, v);
	token(j, buf, (size_t)n);
}

void aci_json_out_uint(struct json_out *j, uint64_t v)
{
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64, v);
	token(j, buf, (size_t)n);
}

void aci_json_out_bool(struct json_out *j, int v)
{
	if (v)
		token(j, "true", 4);
	else
		token(j, "false", 5);
}

void aci_json_out_null(struct json_out *j)
{
	token(j, "null", 4);
}

void aci_json_out_hex_u64(struct json_out *j, uint64_t v)
{
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	aci_json_out_text(j, buf, (size_t)n);
}

void aci_json_out_string_at(struct json_out *j, const char *key, const char *s)
{
	aci_json_out_key(j, key);
	aci_json_out_string(j, s);
}

void aci_json_out_int_at(struct json_out *j, const char *key, int64_t v)
{
	aci_json_out_key(j, key);
	aci_json_out_int(j, v);
}

void aci_json_out_uint_at(struct json_out *j, const char *key, uint64_t v)
{
	aci_json_out_key(j, key);
	aci_json_out_uint(j, v);
}

void aci_json_out_name(struct json_out *j, struct ac_bytes b)
{
	aci_json_out_text(j, (const char *)b.data, b.len);
}

void aci_json_out_bytes(struct json_out *j, const char *key, const char *hex_key,
			const uint8_t *p, size_t len)
{
	if (aci_json_out_is_utf8(p, len)) {
		aci_json_out_key(j, key);
		aci_json_out_text(j, (const char *)p, len);
		return;
	}
	static const char digits[] = "0123456789abcdef";
	aci_json_out_key(j, hex_key);
	separate(j);
	if (len > (SIZE_MAX - 3) / 2) {
		j->failed = 1;
		return;
	}
	if (reserve(j, 2 * len + 2) != 0)
		return;
	char *o = j->buf + j->used;
	*o++ = '"';
	for (size_t i = 0; i < len; i++) {
		*o++ = digits[p[i] >> 4];
		*o++ = digits[p[i] & 15];
	}
	*o++ = '"';
	*o = '\0';
	j->used = (size_t)(o - j->buf);
}

char *aci_json_out_take(struct json_out *j, int newline, size_t *len)
{
	assert(j->failed || (j->depth == 0 && !j->after_key));
	if (newline)
		put(j, "\n", 1);
	if (!j->buf && !j->failed)
		put(j, "", 0);
	char *text = j->failed ? NULL : j->buf;
	if (text && len)
		*len = j->used;
	if (!text)
		free(j->buf);
	*j = JSON_OUT_INIT;
	return text;
}

void aci_json_out_free(struct json_out *j)
{
	free(j->buf);
	*j = JSON_OUT_INIT;
}
