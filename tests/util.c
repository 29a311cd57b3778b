/* SPDX-License-Identifier: MIT */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

char *util_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *nb = realloc(buf, 2 * cap + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf) {
		buf[n] = 0;
		if (len)
			*len = n;
	}
	return buf;
}

struct ac_model *util_model_json(const char *json)
{
	struct ac_model *m = NULL;
	struct ac_error err;
	char text[512];
	if (ac_model_read_json(json, strlen(json), &m, &err) != 0)
		ck_abort_msg("JSON did not parse: %s",
			     ac_error_text(&err, text, sizeof(text)));
	return m;
}

uint64_t util_verdict_model(const struct ac_model *m, struct ac_error *err)
{
	uint64_t verdict;
	if (ac_certify(m, &verdict, NULL, err) != 0)
		return AC_NONE;
	return verdict;
}

uint64_t util_verdict_json(const char *json, struct ac_error *err)
{
	struct ac_model *m = NULL;
	if (ac_model_read_json(json, strlen(json), &m, err) != 0)
		return AC_NONE;
	uint64_t v = util_verdict_model(m, err);
	ac_model_free(m);
	return v;
}
