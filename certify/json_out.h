/* SPDX-License-Identifier: MIT */
/*
 * json_out.h - a small JSON writer of libarenacert's own: text into a
 * growing buffer the writer allocates with libc's malloc (the library's
 * allocator), never through jansson.  arena-certify --json's object
 * (result_json.c) and the guard's JSON records (shim/record_json.c) are
 * written with it, so that the guard never calls an allocator the
 * application may have given jansson (json_set_alloc_funcs) nor frees
 * what one returned.  Internal to libarenacert, its tools and the guard.
 *
 * The text is what jansson's json_dumps(value, 0) writes for the same
 * value: ", " between members and elements, ": " after a key, strings
 * UTF-8 with only '"', '\\' and the control characters escaped (\b \f
 * \n \r \t, else \u00XX in upper-case hex), integers in decimal.  A
 * string's bytes that are not valid UTF-8 become U+FFFD (json_text.h
 * does the same for jansson's strings).
 *
 * Out of memory is sticky: every later call does nothing and
 * aci_json_out_take returns NULL, so a writer is used without checking each
 * call.  Keys are written as given; a caller writes each key once.
 */
#ifndef ARENACERT_JSON_OUT_H
#define ARENACERT_JSON_OUT_H

#include <stddef.h>
#include <stdint.h>

#include <arenaguard/program.h>

/* How deep objects and arrays may nest (the result object needs 4). */
#define JSON_OUT_DEPTH 16

struct json_out {
	char *buf;
	size_t used, cap;
	int failed;                /* memory ran out: nothing more is written */
	int after_key;             /* the next value is a key's: no separator */
	unsigned depth;            /* open objects and arrays */
	uint32_t has_items;        /* bit d: level d has an element already */
	uint32_t is_array;         /* bit d: level d is an array */
};

/* An empty writer (no memory yet). */
#define JSON_OUT_INIT ((struct json_out){ 0 })

/*
 * The length of the valid UTF-8 sequence at s (n > 0 bytes left), or 0
 * for an invalid byte: overlong forms, surrogates and values past
 * U+10FFFF are invalid, as jansson's check has them.
 */
size_t aci_json_out_utf8_len(const unsigned char *s, size_t n);

/* Whether all n bytes at s are valid UTF-8. */
int aci_json_out_is_utf8(const uint8_t *s, size_t n);

/* Opens an object or an array (as a value: after a key, or as an
 * element, or at the top). */
void aci_json_out_object(struct json_out *j);
void aci_json_out_array(struct json_out *j);

/* Closes the innermost open object or array. */
void aci_json_out_end(struct json_out *j);

/* The key of the next value, in an open object. */
void aci_json_out_key(struct json_out *j, const char *key);

/* Values. */
void aci_json_out_text(struct json_out *j, const char *s, size_t n);
void aci_json_out_string(struct json_out *j, const char *s);  /* NUL-ended */
void aci_json_out_int(struct json_out *j, int64_t v);
void aci_json_out_uint(struct json_out *j, uint64_t v);  /* exact, unsigned */
void aci_json_out_bool(struct json_out *j, int v);
void aci_json_out_null(struct json_out *j);
void aci_json_out_hex_u64(struct json_out *j, uint64_t v);   /* "0x..." */

/* A key and its value, in an open object. */
void aci_json_out_string_at(struct json_out *j, const char *key, const char *s);
void aci_json_out_int_at(struct json_out *j, const char *key, int64_t v);
void aci_json_out_uint_at(struct json_out *j, const char *key, uint64_t v);

/* A name or identity of the model as text (invalid UTF-8: U+FFFD). */
void aci_json_out_name(struct json_out *j, struct ac_bytes b);

/* key: the bytes as a string when they are valid UTF-8, else hex_key:
 * their hex digits, two a byte (the result object's names). */
void aci_json_out_bytes(struct json_out *j, const char *key, const char *hex_key,
			const uint8_t *p, size_t len);

/*
 * The text written, NUL-terminated, with a newline after it when
 * newline; its length (newline included, the NUL not) in *len (len may
 * be NULL).  Every object and array must be closed.  The caller frees
 * it with free().  NULL when memory ran out; the writer is empty again
 * either way.
 */
char *aci_json_out_take(struct json_out *j, int newline, size_t *len);

/* Frees what the writer holds (after a failure, or to give up). */
void aci_json_out_free(struct json_out *j);

#endif /* ARENACERT_JSON_OUT_H */
