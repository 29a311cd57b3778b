/* SPDX-License-Identifier: MIT */
/*
 * json_text.h - arbitrary bytes as JSON strings, for arena-certify's
 * JSON output and its HTML report.
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
