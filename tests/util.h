/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the test suites. */
#ifndef ARENAGUARD_TEST_UTIL_H
#define ARENAGUARD_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <arenaguard/certify.h>

/* Reads a whole file; NULL if it cannot be read.  Free with free(). */
char *util_read_file(const char *path, size_t *len);

/* Parses JSON text into a model; fails the current test on error. */
struct ac_model *util_model_json(const char *json);
struct ac_model *util_read_json_ok(const char *text, size_t len);

/* Writes a model as JSON (NUL-terminated, *len bytes); fails the current
 * test on error. */
char *util_write_json_ok(const struct ac_model *m, size_t *len);

/* The verdict of a JSON program, or AC_NONE (with *err) when malformed. */
uint64_t util_verdict_json(const char *json, struct ac_error *err);

/* Same for a model already in memory. */
uint64_t util_verdict_model(const struct ac_model *m, struct ac_error *err);

/* Fails the current test unless two models hold the same values and the
 * same bytes in every string (content), and also start every flattened
 * run at the same index (model). */
void util_expect_same_content(const struct ac_model *a,
			      const struct ac_model *b);
/* v as 8 little-endian bytes at p. */
void util_put_le64(uint8_t *p, uint64_t v);

void util_expect_same_model(const struct ac_model *a, const struct ac_model *b);

/* Whether two diagnostics are equal in every field. */
int util_same_diag(const struct ac_diag *a, const struct ac_diag *b);

#endif
