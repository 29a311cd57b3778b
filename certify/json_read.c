/* SPDX-License-Identifier: MIT */
/*
 * JSON interchange format -> model (shared/spec/program-json.md).
 *
 * jansson parses the text into a tree; this file walks the tree twice with
 * the same functions.  The first walk (r->fill == 0) checks every key, type
 * and number and only counts: array sizes, flattened list lengths and the
 * bytes of every name and identity.  The counts are then checked against
 * the model's fields and aci_model_owned_alloc() allocates everything at once.
 * The second walk (r->fill == 1) sees the same tree, so it cannot fail; it
 * stores values, using the counters of the first walk as cursors.
 *
 * Only syntax and types are checked here.  Whether an index names a launch
 * or a word, whether a range fits: that is ac_program_new()'s job, which
 * reports it with the same paths.
 *
 * Memory: a jansson tree costs about 20 times the text it holds, so the
 * root's arrays are not parsed whole.  aci_json_split() cuts them into element
 * spans and a skeleton holding the rest; the walks parse the skeleton once
 * and each element when they reach it, one element's tree at a time.  Any
 * failure of that reading -- a syntax error, a malformed value, memory --
 * makes the reader start again on the whole text the classic way, so that
 * every error (its text, line and column) is the whole text's: a
 * malformed input may cost the tree's memory, a well-formed one does not.
 *
 * Time: launches are most of the bytes, and jansson reads about 40 MB/s.
 * A launch or a tableless repeat in the common shape is lexed in place
 * instead (fast_launch_lex, fast_repeat_lex, json_fast.h), in the
 * splitter's own pass, so that its bytes are walked once; both walks take
 * what the lexer kept (fast_launch, fast_repeat), and when it read every
 * word its array becomes the model's words.
 * Anything else, or anything a check would refuse, it declines without
 * a side effect, and jansson's tree of that launch is read as before; so
 * every way of reading (json_read.h) gives the same model or error.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "identity.h"
#include "internal.h"
#include "json_fast.h"
#include "json_read.h"
#include "json_split.h"
#include "path.h"

#define FORMAT_NAME "arena-program/1"
#define EXACT_MAX ((uint64_t)1 << 53)  /* largest JSON integer we accept */
#define LOAD_FLAGS (JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL | JSON_DECODE_ANY)

/* The root's arrays, read element by element when split. */
static const char *const top_arrays[] = { "windows", "globals", "phases",
					  "launches", "repeats", "schedule",
					  NULL };

/*
 * Sections of the string pool, in the order the binary image stores them,
 * so both readers lay out o->bytes identically.
 */
enum pool {
	POOL_WINDOW, POOL_GLOBAL, POOL_PHASE, POOL_PLANE, POOL_LAUNCH, POOL_N
};

struct reader {
	struct ac_error *err;
	struct model_owned *o;
	int fill;                 /* 0: check and count; 1: store */
	/* Running totals of flattened lists: sizes after the first walk,
	 * cursors (the next free index) during the second. */
	uint64_t planes, words, deltas, slots, frame_values;
	uint64_t pool[POOL_N];    /* bytes per section, then next free byte */
	const char *text;         /* the input, for split elements */
	const struct json_split *split;   /* NULL: the tree holds it all */
	/* What the lexers read in the splitter's pass (NULL: nothing, as in
	 * ACI_JSON_SPLIT), and the walk's cursors in its words and deltas. */
	struct fast_store *fs;
	uint64_t fast_words, fast_deltas;
};

/* ---- paths: path.h ------------------------------------------------ */

/* Quotes a string for a message: printable ASCII, at most ~32 bytes. */
static const char *quote(char *buf, size_t size, const char *s, size_t len)
{
	size_t n = 0;
	buf[n++] = '"';
	for (size_t i = 0; i < len && n + 5 < size && i < 32; i++)
		buf[n++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (len > 32 || n + 5 >= size)
		buf[n++] = '.', buf[n++] = '.', buf[n++] = '.';
	buf[n++] = '"';
	buf[n] = 0;
	return buf;
}

/* ---- types and keys ------------------------------------------------- */

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE: return "true";
	case JSON_FALSE: return "false";
	case JSON_NULL: return "null";
	}
	return "an unknown value";
}

static int fail_type(struct reader *r, const char *path, const json_t *v,
		     const char *expected)
{
	return aci_fail(r->err, path, "expected %s, got %s", expected,
			type_name(v));
}

/* Is this key in the NULL-ended list?  (jansson refuses keys with NUL.) */
static int key_known(const char *key, const char *const *keys)
{
	for (; *keys; keys++)
		if (strcmp(*keys, key) == 0)
			return 1;
	return 0;
}

/* Checks that v is an object holding only the given keys. */
static int check_object(struct reader *r, json_t *v, const char *path,
			const char *const *keys, const char *expected)
{
	if (!json_is_object(v))
		return fail_type(r, path, v, expected);
	const char *key;
	json_t *value;
	json_object_foreach(v, key, value) {
		if (key_known(key, keys))
			continue;
		char where[PATH_LEN], q[48];
		path_key(where, path, key, strlen(key));
		return aci_fail(r->err, where, "unknown key %s in %s",
				quote(q, sizeof(q), key, strlen(key)), expected);
	}
	return 0;
}

/* The value of a required key; fails when the key is missing. */
static json_t *need(struct reader *r, json_t *obj, const char *path,
		    const char *key, const char *expected)
{
	json_t *v = json_object_get(obj, key);
	if (!v) {
		char where[PATH_LEN];
		path_field(where, path, key);
		aci_fail(r->err, where, "missing required key \"%s\" (%s)", key,
			 expected);
	}
	return v;
}

/* An optional array: *arr is NULL when the key is absent. */
static int opt_array(struct reader *r, json_t *obj, const char *path,
		     const char *key, json_t **arr)
{
	char where[PATH_LEN];
	*arr = json_object_get(obj, key);
	if (*arr && !json_is_array(*arr)) {
		path_field(where, path, key);
		return fail_type(r, where, *arr, "an array");
	}
	return 0;
}

/* A required array. */
static int need_array(struct reader *r, json_t *obj, const char *path,
		      const char *key, json_t **arr)
{
	if (!(*arr = need(r, obj, path, key, "an array")))
		return -1;
	return opt_array(r, obj, path, key, arr);
}

static size_t array_size(const json_t *arr)
{
	return arr ? json_array_size(arr) : 0;
}

/* Fails when an array is too long for a 32-bit count. */
static int check_count32(struct reader *r, const char *path, uint64_t n)
{
	if (n <= UINT32_MAX)
		return 0;
	return aci_fail(r->err, path, "%" PRIu64 " entries; at most 2^32-1", n);
}

/* Fails when a flattened list is too long for the model's 32-bit count. */
static int check_total32(struct reader *r, const char *path, uint64_t n,
			 const char *what)
{
	if (n <= UINT32_MAX)
		return 0;
	return aci_fail(r->err, path, "%" PRIu64 " %s in all; at most 2^32-1",
			n, what);
}

/* ---- numbers -------------------------------------------------------- */

/* A hex digit's value plus one, by byte; 0 for every other byte.  A
 * table: words are mostly hex strings, and a branch per digit showed. */
static const uint8_t hex_value[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6,
	['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* c's value as a hex digit, or -1. */
static int hex_digit(char c)
{
	return (int)hex_value[(unsigned char)c] - 1;
}

/*
 * Parses the digits of a number string: decimal, or hexadecimal after
 * "0x".  No sign, space or '+'.  Returns 0, or -1 with *why set.
 */
static int scan_u64(const char *s, size_t len, uint64_t *out,
		    const char **why)
{
	unsigned base = 10;
	uint64_t v = 0;
	if (len >= 2 && s[0] == '0' && s[1] == 'x')
		base = 16, s += 2, len -= 2;
	if (len == 0) {
		*why = base == 16 ? "no digits after 0x" : "empty string";
		return -1;
	}
	/* 16 hex or 19 decimal digits cannot pass 2^64: the check (a
	 * division) only for longer strings, and a loop per base: words
	 * are most of a program */
	int may_overflow = len > (base == 16 ? 16u : 19u);
	for (size_t i = 0; i < len; i++) {
		int d = base == 16 ? hex_digit(s[i]) :
			(s[i] >= '0' && s[i] <= '9' ? s[i] - '0' : -1);
		if (d < 0) {
			*why = base == 16 ? "not a hexadecimal digit" :
				"not a decimal digit (or 0x and hex digits)";
			return -1;
		}
		if (may_overflow && v > (UINT64_MAX - (unsigned)d) / base) {
			*why = "out of range";
			return -1;
		}
		v = v * base + (unsigned)d;
	}
	*out = v;
	return 0;
}

/* Reads a JSON integer within [-2^53, 2^53], or fails. */
static int exact_integer(struct reader *r, const json_t *v, const char *path,
			 json_int_t *out)
{
	if (json_is_real(v))
		return aci_fail(r->err, path, "not an integer (a fraction or "
				"an exponent); expected an integer or a "
				"decimal or 0x string");
	json_int_t n = json_integer_value(v);
	if (n > (json_int_t)EXACT_MAX || n < -(json_int_t)EXACT_MAX)
		return aci_fail(r->err, path, "integer %" JSON_INTEGER_FORMAT
				" is beyond 2^53 and not exact in JSON; write "
				"it as a string", n);
	*out = n;
	return 0;
}

/* An unsigned 64-bit value written as a string: 0, or -1 with *why. */
static int u64_of_string(const char *s, size_t len, uint64_t *out,
			 const char **why)
{
	if (len > 0 && s[0] == '-') {
		*why = "negative";
		return -1;
	}
	return scan_u64(s, len, out, why);
}

/* A signed 64-bit value written as a string: 0, or -1 with *why. */
static int i64_of_string(const char *s, size_t len, int64_t *out,
			 const char **why)
{
	int minus = len > 0 && s[0] == '-';
	uint64_t mag;
	if (scan_u64(s + minus, len - minus, &mag, why))
		return -1;
	/* |INT64_MIN| = 2^63 is the one magnitude only '-' allows. */
	if (minus && mag <= (uint64_t)INT64_MAX + 1) {
		*out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN :
			-(int64_t)mag;
		return 0;
	}
	if (!minus && mag <= (uint64_t)INT64_MAX) {
		*out = (int64_t)mag;
		return 0;
	}
	*why = "out of range";
	return -1;
}

/* An unsigned 64-bit value: an integer 0 .. 2^53 or a number string. */
static int parse_u64(struct reader *r, const json_t *v, const char *path,
		     uint64_t *out)
{
	const char *expected = "an unsigned 64-bit value (integer 0 .. 2^53, "
		"or a decimal or 0x string below 2^64)";
	if (json_is_number(v)) {
		json_int_t n = 0;   /* set when exact_integer returns 0 */
		if (exact_integer(r, v, path, &n))
			return -1;
		if (n < 0)
			return aci_fail(r->err, path, "negative; expected %s",
					expected);
		*out = (uint64_t)n;
		return 0;
	}
	if (!json_is_string(v))
		return fail_type(r, path, v, expected);
	const char *s = json_string_value(v), *why;
	size_t len = json_string_length(v);
	char q[48];
	if (u64_of_string(s, len, out, &why))
		return aci_fail(r->err, path, "%s: %s; expected %s",
				quote(q, sizeof(q), s, len), why, expected);
	return 0;
}

/* A signed 64-bit value: as above, or negative (integer or leading '-'). */
static int parse_i64(struct reader *r, const json_t *v, const char *path,
		     int64_t *out)
{
	const char *expected = "a signed 64-bit value (integer -2^53 .. "
		"2^53, or a decimal or 0x string, optionally with '-')";
	if (json_is_number(v)) {
		json_int_t n = 0;   /* set when exact_integer returns 0 */
		if (exact_integer(r, v, path, &n))
			return -1;
		*out = (int64_t)n;
		return 0;
	}
	if (!json_is_string(v))
		return fail_type(r, path, v, expected);
	const char *s = json_string_value(v), *why;
	size_t len = json_string_length(v);
	char q[48];
	if (i64_of_string(s, len, out, &why) == 0)
		return 0;
	return aci_fail(r->err, path, "%s: %s; expected %s",
			quote(q, sizeof(q), s, len), why, expected);
}

static int need_u64(struct reader *r, json_t *obj, const char *path,
		    const char *key, uint64_t *out)
{
	char where[PATH_LEN];
	json_t *v = need(r, obj, path, key, "an unsigned 64-bit value");
	path_field(where, path, key);
	return v ? parse_u64(r, v, where, out) : -1;
}

static int need_i64(struct reader *r, json_t *obj, const char *path,
		    const char *key, int64_t *out)
{
	char where[PATH_LEN];
	json_t *v = need(r, obj, path, key, "a signed 64-bit value");
	path_field(where, path, key);
	return v ? parse_i64(r, v, where, out) : -1;
}

static int need_bool(struct reader *r, json_t *obj, const char *path,
		     const char *key, uint8_t *out)
{
	char where[PATH_LEN];
	json_t *v = need(r, obj, path, key, "true or false");
	if (!v)
		return -1;
	path_field(where, path, key);
	if (!json_is_boolean(v))
		return fail_type(r, where, v, "true or false");
	*out = json_is_true(v);
	return 0;
}

/* ---- byte strings --------------------------------------------------- */

/* The length of s[0, len)'s prefix of hex digits. */
static size_t hex_span(const char *s, size_t len)
{
	size_t i = 0;
	while (i < len && hex_digit(s[i]) >= 0)
		i++;
	return i;
}

/* Checks the bytes of a hex string and returns its byte count in *n. */
static int check_hex(struct reader *r, const char *s, size_t len,
		     const char *path, uint64_t *n)
{
	size_t i = hex_span(s, len);
	if (i < len)
		return aci_fail(r->err, path, "byte %zu is not a hex "
				"digit; expected pairs of hex digits", i);
	if (len % 2)
		return aci_fail(r->err, path, "odd number of hex digits (%zu); "
				"expected two per byte", len);
	*n = len / 2;
	return 0;
}

/* s[0, len): hex digit pairs, checked */
static void decode_hex(const char *s, size_t len, uint8_t *dst)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		dst[i / 2] = (uint8_t)(hex_digit(s[i]) << 4 |
				       hex_digit(s[i + 1]));
}

/* Where the next len bytes of a pool section go; advances the section. */
static uint8_t *pool_take(struct reader *r, enum pool pool, uint64_t len,
			  struct ac_bytes *out)
{
	uint8_t *at = r->fill ? r->o->bytes + r->pool[pool] : NULL;
	r->pool[pool] += len;
	out->data = at;
	out->len = (uint32_t)len;
	return at;
}

static int check_len32(struct reader *r, const char *path, uint64_t len)
{
	if (len <= UINT32_MAX)
		return 0;
	return aci_fail(r->err, path, "%" PRIu64 " bytes; at most 2^32-1",
			len);
}

/*
 * Finds which of two twin keys ("name" and "name_hex") is given.  Returns
 * -1 when both are (error at the _hex key), else 0 with *text or *hex set
 * (or neither).
 */
static int twins(struct reader *r, json_t *obj, const char *path,
		 const char *key, const char *hex_key, json_t **text,
		 json_t **hex)
{
	*text = json_object_get(obj, key);
	*hex = json_object_get(obj, hex_key);
	if (!*text || !*hex)
		return 0;
	char where[PATH_LEN];
	path_field(where, path, hex_key);
	return aci_fail(r->err, where, "both %s and %s given; expected "
			"exactly one", key, hex_key);
}

/* Stores the checked hex digits s[0, slen) into a pool section. */
static void put_hex(struct reader *r, const char *s, size_t slen,
		    enum pool pool, struct ac_bytes *out)
{
	uint8_t *at = pool_take(r, pool, slen / 2, out);
	if (at)
		decode_hex(s, slen, at);
}

/* Bytes given as the hex digits s[0, slen), into a pool section. */
static int read_hex_bytes(struct reader *r, const char *s, size_t slen,
			  const char *path, enum pool pool,
			  struct ac_bytes *out)
{
	uint64_t len = 0;   /* set when check_hex returns 0 */
	if (check_hex(r, s, slen, path, &len) ||
	    check_len32(r, path, len))
		return -1;
	put_hex(r, s, slen, pool, out);
	return 0;
}

/* Bytes given as a string of hex digits, into a pool section. */
static int read_hex(struct reader *r, const json_t *v, const char *path,
		    enum pool pool, struct ac_bytes *out)
{
	if (!json_is_string(v))
		return fail_type(r, path, v, "a string of hex digits");
	return read_hex_bytes(r, json_string_value(v), json_string_length(v),
			      path, pool, out);
}

/* Bytes given as text: its UTF-8 bytes (jansson checked the encoding). */
static int read_text(struct reader *r, const json_t *v, const char *path,
		     enum pool pool, struct ac_bytes *out)
{
	if (!json_is_string(v))
		return fail_type(r, path, v, "a string");
	uint64_t len = json_string_length(v);
	if (check_len32(r, path, len))
		return -1;
	uint8_t *at = pool_take(r, pool, len, out);
	if (at && len)
		memcpy(at, json_string_value(v), len);
	return 0;
}

/*
 * A name or identity given as key (text) or key_hex, never both.  When
 * absent and optional it is the empty byte string.
 */
static int read_bytes(struct reader *r, json_t *obj, const char *path,
		      const char *key, const char *hex_key, int required,
		      enum pool pool, struct ac_bytes *out)
{
	char where[PATH_LEN];
	json_t *text, *hex;
	*out = (struct ac_bytes){ 0 };
	if (twins(r, obj, path, key, hex_key, &text, &hex))
		return -1;
	if (text) {
		path_field(where, path, key);
		return read_text(r, text, where, pool, out);
	}
	if (hex) {
		path_field(where, path, hex_key);
		return read_hex(r, hex, where, pool, out);
	}
	if (!required)
		return 0;
	path_field(where, path, key);
	return aci_fail(r->err, where, "missing required key \"%s\" (or "
			"\"%s\")", key, hex_key);
}

/* ---- the launch identity -------------------------------------------- */

/* The pool bytes of the identity of a phase of len bytes: the message
 * holding only field 51 (tag, minimal varint length, payload). */
static uint64_t phase_identity_len(uint64_t len)
{
	return len + aci_identity_field51_header(NULL, len);
}

/* Stores the identity of `phase`/`phase_hex` given as the checked string
 * s[0, slen) (hex digit pairs when is_hex, its length checked). */
static void put_phase_identity(struct reader *r, const char *s, size_t slen,
			       int is_hex, struct ac_bytes *out)
{
	uint64_t len = is_hex ? slen / 2 : slen;
	uint8_t *at = pool_take(r, POOL_LAUNCH, phase_identity_len(len), out);
	if (!at)
		return;
	at += aci_identity_field51_header(at, len);
	if (is_hex)
		decode_hex(s, slen, at);
	else if (len)
		memcpy(at, s, len);
}

/* Builds the identity of `phase`/`phase_hex` given as the string
 * s[0, slen). */
static int read_phase_identity_bytes(struct reader *r, const char *s,
				     size_t slen, int is_hex,
				     const char *path, struct ac_bytes *out)
{
	uint64_t len = slen;
	if ((is_hex && check_hex(r, s, slen, path, &len)) ||
	    check_len32(r, path, phase_identity_len(len)))
		return -1;
	put_phase_identity(r, s, slen, is_hex, out);
	return 0;
}

static int read_phase_identity(struct reader *r, const json_t *v, int is_hex,
			       const char *path, struct ac_bytes *out)
{
	if (!json_is_string(v))
		return fail_type(r, path, v, is_hex ? "a string of hex digits"
				 : "a string");
	return read_phase_identity_bytes(r, json_string_value(v),
					 json_string_length(v), is_hex, path,
					 out);
}

/* A launch's keys: its three sources of identity, then its words. */
static const char *const launch_keys[] = { "phase", "phase_hex",
					   "identity_hex", "words", NULL };
enum { LAUNCH_WORDS = 3 };

/* Exactly one of phase, phase_hex, identity_hex. */
static int read_launch_identity(struct reader *r, json_t *obj,
				const char *path, struct ac_bytes *out)
{
	const char *const *keys = launch_keys;
	json_t *v = NULL;
	int which = -1;
	char where[PATH_LEN];
	for (int k = 0; k < 3; k++) {
		json_t *got = json_object_get(obj, keys[k]);
		if (!got)
			continue;
		if (v) {
			path_field(where, path, keys[k]);
			return aci_fail(r->err, where, "both %s and %s given; "
					"expected exactly one of phase, "
					"phase_hex, identity_hex",
					keys[which], keys[k]);
		}
		v = got;
		which = k;
	}
	if (!v)
		return aci_fail(r->err, path, "no source identity: expected "
				"exactly one of phase, phase_hex, identity_hex");
	path_field(where, path, keys[which]);
	if (which < 2)
		return read_phase_identity(r, v, which == 1, where, out);
	return read_hex(r, v, where, POOL_LAUNCH, out);
}

/*
 * Whether the identity from source which (an index of launch_keys) given
 * as the string s[0, len) passes read_launch_identity's checks: 1, or 0
 * when one would fail.  Pure: no message.
 */
static int launch_identity_ok(int which, const char *s, size_t len)
{
	assert(which >= 0 && which < LAUNCH_WORDS);
	if (which > 0 && (hex_span(s, len) < len || len % 2))
		return 0;
	uint64_t bytes = which > 0 ? len / 2 : len;
	return (which < 2 ? phase_identity_len(bytes) : bytes) <= UINT32_MAX;
}

/* Stores that identity, launch_identity_ok, as read_launch_identity
 * stores it. */
static void put_launch_identity(struct reader *r, int which, const char *s,
				size_t len, struct ac_bytes *out)
{
	assert(launch_identity_ok(which, s, len));
	if (which < 2)
		put_phase_identity(r, s, len, which == 1, out);
	else
		put_hex(r, s, len, POOL_LAUNCH, out);
}

/* ---- the tables ----------------------------------------------------- */

/*
 * Each reader of one entry fills a struct the caller stores (second walk)
 * or drops (first walk).  Flattened lists advance the reader's running
 * totals, so an entry's *_first is the total before it.
 */

static int read_window(struct reader *r, json_t *v, const char *path,
		       struct ac_window *w)
{
	static const char *const keys[] = { "name", "name_hex", "base",
					    "size", NULL };
	if (check_object(r, v, path, keys, "a window {name, base, size}"))
		return -1;
	return read_bytes(r, v, path, "name", "name_hex", 0, POOL_WINDOW,
			  &w->name) ||
	       need_u64(r, v, path, "base", &w->base) ||
	       need_u64(r, v, path, "size", &w->size);
}

static int read_global(struct reader *r, json_t *v, const char *path,
		       struct ac_tensor *t)
{
	static const char *const keys[] = { "name", "name_hex", "offset",
					    "size", NULL };
	if (check_object(r, v, path, keys, "a global {name, offset, size}"))
		return -1;
	return read_bytes(r, v, path, "name", "name_hex", 1, POOL_GLOBAL,
			  &t->name) ||
	       need_u64(r, v, path, "offset", &t->offset) ||
	       need_u64(r, v, path, "size", &t->size);
}

static int read_plane(struct reader *r, json_t *v, const char *path,
		      struct ac_tensor *t)
{
	static const char *const keys[] = { "name", "name_hex", "offset",
					    "size", "carried", NULL };
	if (check_object(r, v, path, keys,
			 "a plane {name, offset, size, carried}"))
		return -1;
	return read_bytes(r, v, path, "name", "name_hex", 1, POOL_PLANE,
			  &t->name) ||
	       need_u64(r, v, path, "offset", &t->offset) ||
	       need_u64(r, v, path, "size", &t->size) ||
	       need_bool(r, v, path, "carried", &t->carried);
}

static int read_phase(struct reader *r, json_t *v, const char *path,
		      struct ac_phase *ph)
{
	static const char *const keys[] = { "identity", "identity_hex",
					    "planes", NULL };
	char where[PATH_LEN], at[PATH_LEN];
	json_t *planes;
	if (check_object(r, v, path, keys, "a phase {identity, planes}") ||
	    read_bytes(r, v, path, "identity", "identity_hex", 1, POOL_PHASE,
		       &ph->identity) ||
	    opt_array(r, v, path, "planes", &planes))
		return -1;
	path_field(where, path, "planes");
	size_t n = array_size(planes);
	if (check_count32(r, where, n))
		return -1;
	assert(r->planes <= UINT32_MAX);   /* total checked < 2^32 */
	ph->plane_first = (uint32_t)r->planes;
	ph->plane_count = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		struct ac_tensor t = { 0 };
		path_index(at, where, i);
		if (read_plane(r, json_array_get(planes, i), at, &t))
			return -1;
		if (r->fill)
			((struct ac_tensor *)MUT(r->o->m.planes))
				[r->planes] = t;
		r->planes++;
	}
	return 0;
}

static int read_launch(struct reader *r, json_t *v, const char *path,
		       struct ac_launch *l)
{
	char where[PATH_LEN], at[PATH_LEN];
	json_t *words;
	if (check_object(r, v, path, launch_keys, "a launch {phase, words}") ||
	    read_launch_identity(r, v, path, &l->identity) ||
	    opt_array(r, v, path, "words", &words))
		return -1;
	path_field(where, path, "words");
	size_t n = array_size(words);
	if (check_count32(r, where, n))
		return -1;
	l->word_first = r->words;
	l->word_count = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		uint64_t w;
		json_t *word = json_array_get(words, i);
		/* The path is made only for an error (parse_u64 is pure but
		 * for the error it reports): words are most of a program. */
		if (parse_u64(r, word, where, &w)) {
			path_index(at, where, i);
			return parse_u64(r, word, at, &w);
		}
		if (r->fill)
			((uint64_t *)MUT(r->o->m.words))[r->words] = w;
		r->words++;
	}
	return 0;
}

static const char *const delta_keys[] = { "launch", "word", "delta", NULL };

static int read_delta(struct reader *r, json_t *v, const char *path,
		      struct ac_delta *d)
{
	if (check_object(r, v, path, delta_keys,
			 "a delta {launch, word, delta}"))
		return -1;
	return need_u64(r, v, path, "launch", &d->launch) ||
	       need_u64(r, v, path, "word", &d->word) ||
	       need_i64(r, v, path, "delta", &d->delta);
}

static int read_slot(struct reader *r, json_t *v, const char *path,
		     struct ac_slot *s)
{
	static const char *const keys[] = { "launch", "word", NULL };
	if (check_object(r, v, path, keys, "a slot {launch, word}"))
		return -1;
	return need_u64(r, v, path, "launch", &s->launch) ||
	       need_u64(r, v, path, "word", &s->word);
}

static int read_deltas(struct reader *r, json_t *obj, const char *path,
		       struct ac_repeat *rp)
{
	char where[PATH_LEN], at[PATH_LEN];
	json_t *deltas;
	if (opt_array(r, obj, path, "deltas", &deltas))
		return -1;
	path_field(where, path, "deltas");
	size_t n = array_size(deltas);
	if (check_count32(r, where, n))
		return -1;
	assert(r->deltas <= UINT32_MAX);   /* total checked < 2^32 */
	rp->delta_first = (uint32_t)r->deltas;
	rp->delta_count = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		struct ac_delta d = { 0 };
		path_index(at, where, i);
		if (read_delta(r, json_array_get(deltas, i), at, &d))
			return -1;
		if (r->fill)
			((struct ac_delta *)MUT(r->o->m.deltas))[r->deltas] = d;
		r->deltas++;
	}
	return 0;
}

static int read_slots(struct reader *r, json_t *table, const char *path,
		      struct ac_repeat *rp)
{
	char where[PATH_LEN], at[PATH_LEN];
	json_t *slots;
	if (need_array(r, table, path, "slots", &slots))
		return -1;
	path_field(where, path, "slots");
	size_t n = array_size(slots);
	if (check_count32(r, where, n))
		return -1;
	rp->slot_count = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		struct ac_slot s = { 0 };
		path_index(at, where, i);
		if (read_slot(r, json_array_get(slots, i), at, &s))
			return -1;
		if (r->fill)
			((struct ac_slot *)MUT(r->o->m.slots))[r->slots] = s;
		r->slots++;
	}
	return 0;
}

/* One frame: exactly slot_count values. */
static int read_frame(struct reader *r, json_t *frame, const char *path,
		      uint32_t slot_count)
{
	char at[PATH_LEN];
	if (!json_is_array(frame))
		return fail_type(r, path, frame, "an array of frame values");
	size_t n = json_array_size(frame);
	if (n != slot_count)
		return aci_fail(r->err, path, "%zu values; expected one per "
				"slot (%" PRIu32 ")", n, slot_count);
	for (size_t s = 0; s < n; s++) {
		uint64_t v;
		path_index(at, path, s);
		if (parse_u64(r, json_array_get(frame, s), at, &v))
			return -1;
		if (r->fill)
			((uint64_t *)MUT(r->o->m.frame_values))
				[r->frame_values] = v;
		r->frame_values++;
	}
	return 0;
}

/*
 * The table {slots, frames}.  frame_count == 0 means "no table" in the
 * model, so a present table with no frames cannot be represented and is
 * rejected here.
 */
static int read_table(struct reader *r, json_t *table, const char *path,
		      struct ac_repeat *rp)
{
	static const char *const keys[] = { "slots", "frames", NULL };
	char where[PATH_LEN], at[PATH_LEN];
	json_t *frames;
	if (check_object(r, table, path, keys, "a table {slots, frames}") ||
	    read_slots(r, table, path, rp) ||
	    need_array(r, table, path, "frames", &frames))
		return -1;
	path_field(where, path, "frames");
	size_t n = json_array_size(frames);
	if (n == 0)
		return aci_fail(r->err, where, "a table needs at least one "
				"frame");
	rp->frame_count = n;
	for (size_t f = 0; f < n; f++) {
		path_index(at, where, f);
		if (read_frame(r, json_array_get(frames, f), at,
			       rp->slot_count))
			return -1;
	}
	return 0;
}

/* A repeat's keys; the fast path reads the first four. */
static const char *const repeat_keys[] = { "first", "count", "iterations",
					   "deltas", "table", NULL };
enum { REPEAT_DELTAS = 3, REPEAT_TABLE = 4 };

static int read_repeat(struct reader *r, json_t *v, const char *path,
		       struct ac_repeat *rp)
{
	const char *const *keys = repeat_keys;
	char where[PATH_LEN];
	/*
	 * Every run starts at its running sum, table or not, as in the
	 * canonical image: a tableless repeat has slot_count == 0 and
	 * frame_count == 0 but its firsts still point past the runs before.
	 */
	assert(r->slots <= UINT32_MAX);   /* total checked < 2^32 */
	rp->slot_first = (uint32_t)r->slots;  
	rp->frame_value_first = r->frame_values;
	if (check_object(r, v, path, keys, "a repeat {first, count, "
			 "iterations, deltas, table}") ||
	    need_u64(r, v, path, "first", &rp->first) ||
	    need_u64(r, v, path, "count", &rp->count) ||
	    need_u64(r, v, path, "iterations", &rp->iterations) ||
	    read_deltas(r, v, path, rp))
		return -1;
	json_t *table = json_object_get(v, "table");
	if (!table)
		return 0;
	path_field(where, path, "table");
	return read_table(r, table, where, rp);
}

/* ---- launches and repeats lexed in place (json_fast.h) -------------- */

/*
 * In ACI_JSON_FAST, the splitter offers each launch and repeat to a lexer
 * (fast_launch_lex, fast_repeat_lex: json_split_lex's contract) before it
 * would skip the element, so that those bytes -- most of a program -- are
 * walked once.  What a lexer reads is kept in a fast_store until the
 * walks take it (fast_launch, fast_repeat): the model's arrays are
 * allocated only after the first walk has counted everything.
 */

/* A growing array of elements of one size. */
struct kept {
	void *a;
	uint64_t n, cap;
};

/* The head of a kept record: read == 0 for an element the lexer did not
 * read (jansson reads it); n its words or deltas; which a launch's
 * identity source (a launch_keys index), 0 for a repeat. */
struct fast_read {
	uint32_t n;
	uint8_t read, which;
};

/* A launch fast_launch_lex read; its identity's string is in the text. */
struct fast_launch_read {
	struct fast_read head;    /* first: fast_record reads it */
	const char *id;
	size_t id_len;
};

/* A repeat fast_repeat_lex read (one without a table). */
struct fast_repeat_read {
	struct fast_read head;    /* first: fast_record reads it */
	uint64_t first, count, iterations;
};

/*
 * What the lexers read: a record per split launch and repeat, by the
 * element's index, and the words and deltas of the elements read, in the
 * text's order.  words_given: words.a became the model's words (the
 * model frees it).
 */
struct fast_store {
	struct kept launches, words, repeats, deltas;
	int words_given;
};

/* Room for element `at` of k (size bytes each), grown by doubling: its
 * address, or NULL when memory ran out (k unchanged). */
static void *kept_room(struct kept *k, uint64_t at, size_t size)
{
	if (at >= k->cap) {
		uint64_t cap = 2 * at > 4096 ? 2 * at : 4096;
		void *grown = cap > SIZE_MAX / size ? NULL :
			realloc(k->a, (size_t)(cap * size));
		if (!grown)
			return NULL;
		k->a = grown;
		k->cap = cap;
	}
	return (char *)k->a + at * size;
}

/* The zeroed record of element i (records before it that no lexer wrote
 * zeroed too: not read), or NULL when memory ran out. */
static void *kept_record(struct kept *k, uint64_t i, size_t size)
{
	void *rec = kept_room(k, i, size);
	if (!rec)
		return NULL;
	if (k->n <= i) {
		memset((char *)k->a + k->n * size, 0, (i + 1 - k->n) * size);
		k->n = i + 1;
	}
	return rec;
}

static void fast_store_free(struct fast_store *fs)
{
	free(fs->launches.a);
	if (!fs->words_given)
		free(fs->words.a);
	free(fs->repeats.a);
	free(fs->deltas.a);
	memset(fs, 0, sizeof(*fs));
}

/*
 * After whitespace, the digits of a plain string that u64_of_string
 * reads without a check that could fail: "0x" and 1 to 16 hex digits, or
 * 1 to 19 decimal digits.  1 with *v, or 0 (the string may still be good:
 * jansson's tree will say).  One pass over the bytes, the quotes checked.
 */
static int fast_u64_string(struct json_cur *c, uint64_t *v)
{
	const char *q = c->p + 1, *digits;
	uint64_t n = 0;
	assert(c->p < c->end && *c->p == '"');
	if (c->end - q >= 2 && q[0] == '0' && q[1] == 'x') {
		int d;
		for (digits = q += 2;
		     q < c->end && (d = hex_value[(unsigned char)*q]); q++)
			n = n << 4 | (uint64_t)(d - 1);
		if (q == digits || q - digits > 16)
			return 0;
	} else {
		for (digits = q; q < c->end && *q >= '0' && *q <= '9'; q++)
			n = n * 10 + (uint64_t)(*q - '0');
		if (q == digits || q - digits > 19)
			return 0;
	}
	if (q == c->end || *q != '"')
		return 0;
	*v = n;
	c->p = q + 1;
	return 1;
}

/*
 * An unsigned value in the shapes the fast path knows: an integer
 * 0 .. 2^53 or a string of fast_u64_string; 1 with *v as parse_u64 reads
 * it, else 0 (the value may still be good: jansson's tree will say).
 */
static int fast_u64(struct json_cur *c, uint64_t *v)
{
	aci_json_cur_ws(c);
	if (c->p < c->end && *c->p == '"')
		return fast_u64_string(c, v);
	return aci_json_cur_uint(c, v) && *v <= EXACT_MAX;
}

/* A signed value likewise: an integer -2^53 .. 2^53 or a plain string,
 * as parse_i64 reads it; else 0. */
static int fast_i64(struct json_cur *c, int64_t *v)
{
	const char *s, *why;
	size_t len;
	aci_json_cur_ws(c);
	if (c->p < c->end && *c->p == '"')
		return aci_json_cur_plain_string(c, &s, &len) &&
		       i64_of_string(s, len, v, &why) == 0;
	return aci_json_cur_int(c, v) && *v <= (int64_t)EXACT_MAX &&
	       *v >= -(int64_t)EXACT_MAX;
}

/*
 * A member's key, at the cursor after '{' or ',', and its ':': the key's
 * index in keys (NULL-ended, at most 32), marked in *seen; -1 when it is
 * not a plain string, not in keys or seen already.
 */
static int fast_key(struct json_cur *c, const char *const *keys,
		    unsigned *seen)
{
	const char *key;
	size_t len;
	int k = 0;
	if (!aci_json_cur_plain_string(c, &key, &len) ||
	    !aci_json_cur_take(c, ':'))
		return -1;
	/* the first byte sorts out most keys; strncmp stops at keys[k]'s
	 * end, and the key (plain) holds no NUL */
	while (keys[k] && (keys[k][0] != key[0] ||
			   strncmp(keys[k], key, len) || keys[k][len]))
		k++;
	assert(k < 32);
	if (!keys[k] || *seen & 1u << k)
		return -1;
	*seen |= 1u << k;
	return k;
}

/* One delta of the common shape: an object of delta_keys, each key once,
 * launch and word fast_u64's and delta a fast_i64. */
static int fast_delta(struct json_cur *c, struct ac_delta *d)
{
	unsigned seen = 0;
	if (!aci_json_cur_take(c, '{'))
		return 0;
	do {
		int k = fast_key(c, delta_keys, &seen);
		if (!(k == 0 ? fast_u64(c, &d->launch) :
		      k == 1 ? fast_u64(c, &d->word) :
		      k == 2 && fast_i64(c, &d->delta)))
			return 0;
	} while (aci_json_cur_take(c, ','));
	return aci_json_cur_take(c, '}') && seen == 7;
}

/*
 * An array of words (`delta` 0: fast_u64's) or of deltas (1: fast_delta's)
 * from the cursor at its '[' through its ']': 1 with *n and the values
 * in k from index k->n (k->n not moved: the caller commits them), or 0
 * (not the common shape, or no memory to keep them).
 */
static int fast_array(struct kept *k, struct json_cur *c, int delta,
		      uint64_t *n)
{
	size_t size = delta ? sizeof(struct ac_delta) : sizeof(uint64_t);
	*n = 0;
	if (!aci_json_cur_take(c, '['))
		return 0;
	if (aci_json_cur_take(c, ']'))
		return 1;
	do {
		void *room = kept_room(k, k->n + *n, size);
		if (!room || !(delta ? fast_delta(c, room) :
			       fast_u64(c, room)))
			return 0;
		(*n)++;
	} while (aci_json_cur_take(c, ','));
	return aci_json_cur_take(c, ']');
}

/*
 * json_split_lex for a launch: reads it without jansson when it has the
 * common shape -- an object of launch_keys, each at most once, exactly
 * one source of identity as a plain string and words as an array of
 * fast_u64's -- and passes read_launch's checks (launch_identity_ok).
 * Its record and words are then kept (ctx: the fast_store) for the walks,
 * which read it as read_launch reads the same text.  NULL for any other
 * shape or a failed check, with nothing kept: jansson's tree of the
 * element is read instead, and says what is wrong.  No message, so no path.
 */
static const char *fast_launch_lex(void *ctx, uint64_t i, const char *at,
				   const char *end)
{
	struct fast_store *fs = ctx;
	struct fast_launch_read got = { .head.which = LAUNCH_WORDS }, *f;
	struct json_cur c = { at, end };
	unsigned seen = 0;
	uint64_t n = 0;
	if (!(f = kept_record(&fs->launches, i, sizeof(*f))) ||
	    !aci_json_cur_take(&c, '{'))
		return NULL;
	do {
		int k = fast_key(&c, launch_keys, &seen);
		if (k < 0) {
			return NULL;          /* unknown or repeated */
		} else if (k == LAUNCH_WORDS) {
			if (!fast_array(&fs->words, &c, 0, &n))
				return NULL;
		} else if (got.head.which != LAUNCH_WORDS ||
			   !aci_json_cur_plain_string(&c, &got.id,
						      &got.id_len)) {
			return NULL;          /* two sources, or not plain */
		} else {
			got.head.which = (uint8_t)k;
		}
	} while (aci_json_cur_take(&c, ','));
	if (!aci_json_cur_take(&c, '}') || got.head.which == LAUNCH_WORDS ||
	    n > UINT32_MAX || !launch_identity_ok(got.head.which, got.id,
						   got.id_len))
		return NULL;
	got.head.n = (uint32_t)n;
	got.head.read = 1;
	*f = got;
	fs->words.n += n;
	return c.p;
}

/*
 * json_split_lex for a repeat without a table: an object of first, count
 * and iterations (fast_u64's) and optionally deltas (fast_delta's), each
 * key once, kept as fast_launch_lex keeps a launch; a table, or anything
 * else, and read_repeat reads it.
 */
static const char *fast_repeat_lex(void *ctx, uint64_t i, const char *at,
				   const char *end)
{
	struct fast_store *fs = ctx;
	struct fast_repeat_read got = { 0 }, *f;
	struct json_cur c = { at, end };
	unsigned seen = 0;
	uint64_t n = 0;
	if (!(f = kept_record(&fs->repeats, i, sizeof(*f))) ||
	    !aci_json_cur_take(&c, '{'))
		return NULL;
	do {
		int k = fast_key(&c, repeat_keys, &seen);
		if (!(k == 0 ? fast_u64(&c, &got.first) :
		      k == 1 ? fast_u64(&c, &got.count) :
		      k == 2 ? fast_u64(&c, &got.iterations) :
		      k == REPEAT_DELTAS && fast_array(&fs->deltas, &c, 1, &n)))
			return NULL;          /* a table, or not ours */
	} while (aci_json_cur_take(&c, ','));
	if (!aci_json_cur_take(&c, '}') || (seen & 7) != 7 || n > UINT32_MAX)
		return NULL;
	got.head.n = (uint32_t)n;
	got.head.read = 1;
	*f = got;
	fs->deltas.n += n;
	return c.p;
}

/* The record (size bytes, a fast_read first) of element i that a lexer
 * read, or NULL when none did. */
static const void *fast_record(const struct kept *k, uint64_t i, size_t size)
{
	if (i >= k->n)
		return NULL;
	const struct fast_read *head =
		(const void *)((const char *)k->a + i * size);
	return head->read ? head : NULL;
}

/*
 * The n values (size bytes each) of an element a lexer read, from the
 * walk's cursor *next in k: the second walk stores them at index `at` of
 * the model's array `model` (unless they are there already: words handed
 * over); both walks move the cursor on.
 */
static void fast_take(const struct reader *r, const struct kept *k,
		      uint64_t *next, uint64_t n, size_t size,
		      const void *model, uint64_t at)
{
	assert(*next + n <= k->n);
	if (r->fill && n) {
		const char *from = (const char *)k->a + *next * size;
		char *to = (char *)MUT(model) + at * size;
		if (to != from)
			memcpy(to, from, n * size);
	}
	*next += n;
}

/* A launch fast_launch_lex read, as read_launch reads it: 1, or 0 when
 * it read none (read_launch reads it). */
static int fast_launch(struct reader *r, uint64_t i, struct ac_launch *l)
{
	const struct fast_launch_read *f = r->fs ?
		fast_record(&r->fs->launches, i, sizeof(*f)) : NULL;
	if (!f)
		return 0;
	put_launch_identity(r, f->head.which, f->id, f->id_len, &l->identity);
	l->word_first = r->words;
	l->word_count = f->head.n;
	fast_take(r, &r->fs->words, &r->fast_words, f->head.n,
		  sizeof(uint64_t), r->o->m.words, r->words);
	r->words += f->head.n;
	return 1;
}

/* A repeat fast_repeat_lex read, as read_repeat reads it (fast_launch's
 * contract). */
static int fast_repeat(struct reader *r, uint64_t i, struct ac_repeat *rp)
{
	const struct fast_repeat_read *f = r->fs ?
		fast_record(&r->fs->repeats, i, sizeof(*f)) : NULL;
	if (!f)
		return 0;
	/* as read_repeat and read_deltas store a tableless repeat */
	assert(r->slots <= UINT32_MAX && r->deltas <= UINT32_MAX);
	rp->slot_first = (uint32_t)r->slots;
	rp->frame_value_first = r->frame_values;
	rp->first = f->first;
	rp->count = f->count;
	rp->iterations = f->iterations;
	rp->delta_first = (uint32_t)r->deltas;
	rp->delta_count = f->head.n;
	fast_take(r, &r->fs->deltas, &r->fast_deltas, f->head.n,
		  sizeof(struct ac_delta), r->o->m.deltas, r->deltas);
	r->deltas += f->head.n;
	return 1;
}

static int read_ref(struct reader *r, json_t *v, const char *path,
		    struct ac_ref *ref)
{
	static const char *const keys[] = { "first", "count", NULL };
	if (check_object(r, v, path, keys, "a reference {first, count}"))
		return -1;
	return need_u64(r, v, path, "first", &ref->first) ||
	       need_u64(r, v, path, "count", &ref->count);
}

/* ---- the program ---------------------------------------------------- */

/* The length of the root's array under key (arr: the tree's, or NULL). */
static uint64_t top_size(const struct reader *r, const char *key,
			 const json_t *arr)
{
	const struct json_split_array *a = aci_json_split_find(r->split, key);
	return a ? a->n : array_size(arr);
}

/* Element i of the root's array under key: the tree's (borrowed), or a
 * split element parsed now (*parsed set: json_decref it); NULL when the
 * element does not parse (the caller falls back to the whole text). */
static json_t *top_element(const struct reader *r, const char *key,
			   json_t *arr, uint64_t i, json_t **parsed)
{
	const struct json_split_array *a = aci_json_split_find(r->split, key);
	*parsed = NULL;
	if (!a)
		return json_array_get(arr, i);
	assert(i < a->n);
	return *parsed = json_loadb(r->text + a->e[i].at, a->e[i].len,
				    LOAD_FLAGS, NULL);
}

/*
 * Walks one top-level array with one entry reader and, when not NULL, a
 * reader of what the splitter's lexer read of an element (fast_launch's
 * contract), tried first.  The macro keeps the six loops (which differ
 * only in their element type) in one place.
 */
#define WALK(r, root, key, type, read_fn, fast_fn, field)                      \
	do {                                                                  \
		int (*fast_)(struct reader *, uint64_t, type *) = (fast_fn);  \
		json_t *arr_;                                                 \
		char at_[PATH_LEN];                                           \
		if (opt_array(r, root, "", key, &arr_))                       \
			return -1;                                            \
		uint64_t n_ = top_size(r, key, arr_);                         \
		for (uint64_t i_ = 0; i_ < n_; i_++) {                        \
			type e_ = { 0 };                                      \
			if (!(fast_ && fast_(r, i_, &e_))) {                  \
				json_t *parsed_;                              \
				json_t *v_ = top_element(r, key, arr_, i_,    \
							 &parsed_);           \
				path_index(at_, key, i_);                     \
				int rc_ = v_ ? read_fn(r, v_, at_, &e_) : -1; \
				json_decref(parsed_);                         \
				if (rc_)                                      \
					return -1;                            \
			}                                                     \
			if (r->fill)                                          \
				((type *)MUT(r->o->m.field))[i_] = e_;        \
		}                                                             \
	} while (0)

static int read_format(struct reader *r, json_t *root)
{
	json_t *v = json_object_get(root, "format");
	if (!v)
		return 0;
	if (!json_is_string(v))
		return fail_type(r, "format", v, "the string \"" FORMAT_NAME
				 "\"");
	if (json_string_length(v) != strlen(FORMAT_NAME) ||
	    memcmp(json_string_value(v), FORMAT_NAME, strlen(FORMAT_NAME))) {
		char q[48];
		return aci_fail(r->err, "format", "%s is not a known format; "
				"expected \"" FORMAT_NAME "\"",
				quote(q, sizeof(q), json_string_value(v),
				      json_string_length(v)));
	}
	return 0;
}

static int read_program(struct reader *r, json_t *root)
{
	static const char *const keys[] = { "format", "alignment", "windows",
					    "globals", "phases", "launches",
					    "repeats", "schedule", NULL };
	uint64_t alignment;
	if (check_object(r, root, "", keys, "a program object") ||
	    read_format(r, root) ||
	    need_u64(r, root, "", "alignment", &alignment))
		return -1;
	r->o->m.alignment = alignment;
	WALK(r, root, "windows", struct ac_window, read_window, NULL, windows);
	WALK(r, root, "globals", struct ac_tensor, read_global, NULL, globals);
	WALK(r, root, "phases", struct ac_phase, read_phase, NULL, phases);
	WALK(r, root, "launches", struct ac_launch, read_launch, fast_launch,
	     launches);
	WALK(r, root, "repeats", struct ac_repeat, read_repeat, fast_repeat,
	     repeats);
	WALK(r, root, "schedule", struct ac_ref, read_ref, NULL, refs);
	return 0;
}

/* After the first walk: every count into its field, checked. */
static int set_counts(struct reader *r, json_t *root)
{
	struct ac_model *m = &r->o->m;
	static const char *const keys32[] = { "windows", "globals", "phases",
					      "launches", "repeats" };
	uint32_t *fields32[] = { &m->n_windows, &m->n_globals, &m->n_phases,
				 &m->n_launches, &m->n_repeats };
	for (size_t k = 0; k < 5; k++) {
		uint64_t n = top_size(r, keys32[k],
				      json_object_get(root, keys32[k]));
		if (check_count32(r, keys32[k], n))
			return -1;
		*fields32[k] = (uint32_t)n;
	}
	if (check_total32(r, "phases", r->planes, "planes") ||
	    check_total32(r, "repeats", r->deltas, "deltas") ||
	    check_total32(r, "repeats", r->slots, "slots"))
		return -1;
	m->n_planes = (uint32_t)r->planes;
	m->n_deltas = (uint32_t)r->deltas;
	m->n_slots = (uint32_t)r->slots;
	m->n_words = r->words;
	m->n_frame_values = r->frame_values;
	m->n_refs = top_size(r, "schedule", json_object_get(root, "schedule"));
	return 0;
}

/* Turns per-section byte counts into section starts; returns the total. */
static uint64_t pool_layout(struct reader *r)
{
	uint64_t at = 0;
	for (int s = 0; s < POOL_N; s++) {
		uint64_t n = r->pool[s];
		r->pool[s] = at;
		at += n;
	}
	return at;
}

static int syntax_error(struct ac_error *err, const json_error_t *je)
{
	char where[PATH_LEN] = "";
	if (je->line > 0)
		snprintf(where, sizeof(where), "line %d, column %d", je->line,
			 je->column);
	return aci_fail(err, where, "invalid JSON: %s (byte %d)", je->text,
			je->position);
}

/* A raw NUL byte is never valid JSON (inside a string it is a control
 * character), and jansson skips one after a number: the first is an
 * error of its own, placed as jansson places its errors (1-based). */
static int nul_error(struct ac_error *err, const char *text, size_t len)
{
	const char *nul = memchr(text, 0, len);
	if (!nul)
		return 0;
	size_t at = (size_t)(nul - text), line = 1, line_start = 0;
	for (size_t i = 0; i < at; i++)
		if (text[i] == '\n')
			line++, line_start = i + 1;
	char where[PATH_LEN];
	snprintf(where, sizeof(where), "line %zu, column %zu", line,
		 at - line_start + 1);
	return aci_fail(err, where, "invalid JSON: a NUL byte at byte %zu",
			at + 1);
}

/*
 * When the lexers read every word (jansson none), their words are the
 * model's, in order: hands them over (model_owned.words_block, trimmed to
 * size) so that they are neither copied nor held twice.  Returns the
 * arrays aci_model_owned_alloc leaves to the caller (enum model_borrow);
 * after the allocation, adopt_words sets the model's words.
 */
static unsigned words_to_hand_over(const struct reader *r)
{
	const struct fast_store *fs = r->fs;
	return fs && fs->words.n && fs->words.n == r->o->m.n_words ?
		BORROW_WORDS : BORROW_NOTHING;
}

static void adopt_words(struct reader *r)
{
	struct fast_store *fs = r->fs;
	size_t len = (size_t)fs->words.n * sizeof(uint64_t);
	void *trimmed = realloc(fs->words.a, len);
	if (trimmed)              /* else the longer block is as good */
		fs->words.a = trimmed, fs->words.cap = fs->words.n;
	r->o->words_block = fs->words.a;
	r->o->words_len = fs->words.cap * sizeof(uint64_t);
	r->o->m.words = fs->words.a;
	fs->words_given = 1;
}

/*
 * Reads the program whose tree is parsed from tree_text[0, tree_len):
 * the whole text, or a split's skeleton (split elements then come from
 * text, and what the splitter's lexers read from fs when not NULL).
 * 0 with *out set, or -1 with err filled.
 */
static int read_model(const char *text, const struct json_split *split,
		      struct fast_store *fs, const char *tree_text,
		      size_t tree_len, struct ac_model **out,
		      struct ac_error *err)
{
	json_error_t je;
	json_t *root = json_loadb(tree_text, tree_len, LOAD_FLAGS, &je);
	if (!root)
		return syntax_error(err, &je);
	struct model_owned *o = aci_model_owned_new();
	if (!o) {
		json_decref(root);
		return aci_fail(err, "", "out of memory");
	}
	struct reader r = { .err = err, .o = o, .text = text, .split = split,
			    .fs = fs };
	if (read_program(&r, root) || set_counts(&r, root))
		goto fail;
	assert(!fs || (r.fast_words == fs->words.n &&
		       r.fast_deltas == fs->deltas.n));
	o->bytes_len = pool_layout(&r);
	unsigned borrow = words_to_hand_over(&r);
	if (aci_model_owned_alloc(o, borrow, err))
		goto fail;
	if (borrow & BORROW_WORDS)
		adopt_words(&r);
	/* Second walk over the same values: stores, and cannot fail but
	 * for memory when it parses split elements again. */
	r.fill = 1;
	r.planes = r.words = r.deltas = r.slots = r.frame_values = 0;
	r.fast_words = r.fast_deltas = 0;
	if (read_program(&r, root))
		goto fail;
	json_decref(root);
	*out = &o->m;
	return 0;
fail:
	json_decref(root);
	ac_model_free(&o->m);
	return -1;
}

/* The lexer of each of top_arrays' elements in ACI_JSON_FAST. */
static const json_split_lex top_lexers[] = { NULL, NULL, NULL,
					     fast_launch_lex, fast_repeat_lex,
					     NULL, NULL };
_Static_assert(sizeof(top_lexers) == sizeof(top_arrays),
	       "a lexer (or NULL) per split array");

int aci_model_read_json_way(const char *text, size_t len,
			    enum aci_json_way way, struct ac_model **out,
			    struct ac_error *err)
{
	if (out)
		*out = NULL;
	if (!text)
		text = "", len = 0;
	if (nul_error(err, text, len))
		return -1;
	struct ac_model *m = NULL;
	struct json_split split;
	struct fast_store fs = { 0 };
	int fast = way == ACI_JSON_FAST, rc = -1;
	if (way != ACI_JSON_CLASSIC &&
	    aci_json_split(text, len, top_arrays, fast ? top_lexers : NULL,
			   &fs, &split) == 1) {
		rc = read_model(text, &split, fast ? &fs : NULL,
				split.skeleton, split.skeleton_len, &m, err);
		aci_json_split_free(&split);
	}
	fast_store_free(&fs);
	/* Not split, or anything failed: the whole text, for its errors. */
	if (rc != 0)
		rc = read_model(text, NULL, NULL, text, len, &m, err);
	if (rc == 0 && out)
		*out = m;
	else
		ac_model_free(m);
	return rc;
}

int ac_model_read_json(const char *text, size_t len, struct ac_model **out,
		       struct ac_error *err)
{
	return aci_model_read_json_way(text, len, ACI_JSON_FAST, out, err);
}
