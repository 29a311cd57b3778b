/* SPDX-License-Identifier: MIT */
/*
 * result_json.h - a certification's result as the JSON object of
 * `arena-certify --json` (result_json.c).  Internal: arena-certify and
 * ac_certify_json build their output with these, so the object is
 * written once.
 */
#ifndef ARENACERT_RESULT_JSON_H
#define ARENACERT_RESULT_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <arenaguard/certify.h>

/* Room for one explanation; ac_diag_render truncates past it. */
#define RESULT_TEXT_LEN 16384

/*
 * The explanation of a verdict into text[0, len): for 0, "certified:
 * conditions (A), (B), (C) and (D) hold over N executed launches"; else
 * the rendered diagnostic (ac_diag_render).
 */
void result_explain(char *text, size_t len, uint64_t verdict,
		    const struct ac_diag *diag, const ac_program *program,
		    uint64_t executed);

/*
 * The keys of the result object after "verdict": "condition", "reason",
 * the fields the reason names, "explanation" (left out when explanation
 * is NULL or empty) and "advisories" (each with its "explanation" when
 * explain_advisories).  NULL only when memory runs out.
 */
json_t *result_json_fields(const ac_program *program,
			   const struct ac_diag *diag, const char *explanation,
			   const struct ac_advisory *advisories,
			   uint64_t n_advisories, int explain_advisories);

/*
 * {"file": F, "verdict": V, <the keys of rest>} as one malloc'ed
 * NUL-terminated line without a newline, its length in *len (len may be
 * NULL).  file NULL leaves "file" out; verdict NULL writes null.  The
 * verdict is written exactly (an unsigned 64-bit integer, which a jansson
 * integer cannot hold).  rest is consumed.  NULL when memory runs out.
 */
char *result_json_line(const char *file, const uint64_t *verdict,
		       json_t *rest, size_t *len);

#endif
