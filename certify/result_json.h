/* SPDX-License-Identifier: MIT */
/*
 * result_json.h - a certification's result as the JSON object of
 * `arena-certify --json` (result_json.c).  Internal: arena-certify and
 * ac_certify_json build their output with these, and the guard its
 * records, so the object is written once; with json_out.h, never
 * jansson.
 */
#ifndef ARENACERT_RESULT_JSON_H
#define ARENACERT_RESULT_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <arenaguard/certify.h>

#include "json_out.h"

/* Room for one explanation; ac_diag_render truncates past it. */
#define RESULT_TEXT_LEN 16384

/*
 * The explanation of a verdict into text[0, len): for 0, "certified:
 * conditions (A), (B), (C) and (D) hold over N executed launches"; else
 * the rendered diagnostic (ac_diag_render).
 */
void aci_result_explain(char *text, size_t len, uint64_t verdict,
			const struct ac_diag *diag, const ac_program *program,
			uint64_t executed);

/*
 * Opens the result object and writes its first keys: "file" (left out
 * when file is NULL) and "verdict" (written exactly, an unsigned 64-bit
 * integer; null when verdict is NULL).  The caller adds the rest
 * (aci_result_json_fields, its own keys) and closes it (aci_json_out_end).  j
 * holds nothing open.
 */
void aci_result_json_begin(struct json_out *j, const char *file,
			   const uint64_t *verdict);

/*
 * The keys of the result object after "verdict": "condition", "reason",
 * the fields the reason names, "explanation" (left out when explanation
 * is NULL or empty) and "advisories" (each with its "explanation" when
 * explain_advisories), into the object open in j.
 */
void aci_result_json_fields(struct json_out *j, const ac_program *program,
			    const struct ac_diag *diag, const char *explanation,
			    const struct ac_advisory *advisories,
			    uint64_t n_advisories, int explain_advisories);

#endif
