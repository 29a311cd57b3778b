/* SPDX-License-Identifier: MIT */
/*
 * json_text.h - arbitrary bytes and values as jansson's JSON strings, for
 * the program's JSON writer (json_write.c) and arena-certify's HTML
 * report.  Internal to libarenacert and its tools.  The result object
 * and the guard's records are written without jansson (json_out.h).
 */
#ifndef ARENAGUARD_JSON_TEXT_H
#define ARENAGUARD_JSON_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <arenaguard/program.h>

/*
 * A JSON string of arbitrary bytes (a file name, a rendered diagnostic, a
 * tensor's name): invalid UTF-8 becomes U+FFFD, as JSON text must be
 * Unicode.  NULL only when memory runs out.
 */
json_t *aci_json_text(const char *s, size_t n);

/* The same for a name or identity of the model. */
json_t *aci_json_name(struct ac_bytes b);

/* Bytes as a string of lowercase hex digits, two a byte.  NULL only when
 * memory runs out. */
json_t *aci_json_hex_bytes(const uint8_t *p, uint32_t len);

/*
 * Sets key to the bytes as a string when they are valid UTF-8 (jansson
 * checks, and refuses otherwise), else hex_key to their hex digits (the
 * program's JSON format, and the result object's names).  0, or -1 when
 * memory runs out.
 */
int aci_json_set_bytes(json_t *obj, const char *key, const char *hex_key,
		       const uint8_t *p, uint32_t len);

/* A 64-bit value as a "0x..." string: JSON numbers lose them. */
json_t *aci_json_hex_u64(uint64_t v);

#endif /* ARENAGUARD_JSON_TEXT_H */
