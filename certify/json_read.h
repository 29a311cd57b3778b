/* SPDX-License-Identifier: MIT */
/*
 * The JSON reader's ways of reading (json_read.c), for the tests that
 * hold them against each other: ac_model_read_json reads with
 * ACI_JSON_FAST.  Every way reads a text to the same model or fails with
 * the same error, text, line and column (tests/test_json.c's differential
 * suite): the error is always the whole text's, read the classic way.
 */
#ifndef ARENACERT_JSON_READ_H
#define ARENACERT_JSON_READ_H

#include <stddef.h>

#include <arenaguard/program.h>

enum aci_json_way {
	ACI_JSON_CLASSIC,   /* jansson's tree of the whole text */
	ACI_JSON_SPLIT,     /* the root's arrays element by element (jansson) */
	ACI_JSON_FAST,      /* as SPLIT, launches in the common shape lexed
			     * in place (json_fast.h), the rest as SPLIT */
};

/* ac_model_read_json's contract, read the given way. */
int aci_model_read_json_way(const char *text, size_t len,
			    enum aci_json_way way, struct ac_model **out,
			    struct ac_error *err);

#endif
