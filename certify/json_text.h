/* SPDX-License-Identifier: MIT */
/*
 * json_text.h - arbitrary bytes as JSON strings, for the result object
 * of arena-certify --json (result_json.c) and its HTML report.  Internal
 * to libarenacert and its tools.
 */
#ifndef ARENAGUARD_JSON_TEXT_H
#define ARENAGUARD_JSON_TEXT_H

#include <stddef.h>

#include <jansson.h>

#include <arenaguard/program.h>

/*
 * A JSON string of arbitrary bytes (a file name, a rendered diagnostic, a
 * tensor's name): invalid UTF-8 becomes U+FFFD, as JSON text must be
 * Unicode.  NULL only when memory runs out.
 */
json_t *json_text(const char *s, size_t n);

/* The same for a name or identity of the model. */
json_t *json_name(struct ac_bytes b);

#endif /* ARENAGUARD_JSON_TEXT_H */
