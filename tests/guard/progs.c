/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arenaguard/certify.h>
#include <arenaguard/uapi.h>

#include "progs.h"

const struct ac_ref prog_good_refs[2] = { { 0, 2 }, { 3, 1 } };
const struct ac_ref prog_bad_d_refs[4] = {
	{ 0, 1 }, { 2, 1 }, { 1, 1 }, { 3, 1 },
};

static const char json_fmt[] =
	"{\"alignment\": 64,"
	" \"windows\": [{\"name\": \"arena\", \"base\": \"0x10000\","
	"  \"size\": \"0x%x\"}],"
	" \"globals\": [{\"name\": \"out\", \"offset\": \"0x18000\","
	"  \"size\": 256}],"
	" \"phases\": ["
	"  {\"identity\": \"P\", \"planes\": [{\"name\": \"a\","
	"   \"offset\": \"0x10000\", \"size\": 256, \"carried\": false}]},"
	"  {\"identity\": \"Q\", \"planes\": ["
	"   {\"name\": \"a\", \"offset\": \"0x10000\", \"size\": 256,"
	"    \"carried\": true},"
	"   {\"name\": \"b\", \"offset\": \"0x10100\", \"size\": 256,"
	"    \"carried\": false}]},"
	"  {\"identity\": \"R\", \"planes\": [{\"name\": \"z\","
	"   \"offset\": \"0x10000\", \"size\": 64, \"carried\": false}]}],"
	" \"launches\": ["
	"  {\"phase\": \"P\", \"words\": [%d, \"0x%x\", 64, \"0x3f800000\"]},"
	"  {\"phase\": \"Q\", \"words\": [%d, \"0x10100\", \"0x10000\", 64]},"
	"  {\"phase\": \"R\", \"words\": [%d, \"0x10000\", 16, \"0x40000000\"]},"
	"  {\"phase\": \"Q\", \"words\": [%d, \"0x18000\", \"0x10100\", 64]}"
	" ]}";

static struct ac_model *read_model(enum prog_kind kind)
{
	char json[4096];
	snprintf(json, sizeof(json), json_fmt,
		 kind == PROG_OUTSIDE ? 0x8000 : 0x10000, ARENA_K_FILL,
		 kind == PROG_BAD_C ? 0x10200 : 0x10000, ARENA_K_COPY,
		 ARENA_K_FILL, ARENA_K_COPY);
	struct ac_model *m = NULL;
	struct ac_error err;
	if (ac_model_read_json(json, strlen(json), &m, &err) != 0) {
		char text[512];
		fprintf(stderr, "progs: %s\n",
			ac_error_text(&err, text, sizeof(text)));
		abort();
	}
	return m;
}

uint8_t *prog_image(enum prog_kind kind, size_t *len)
{
	struct ac_model *m = read_model(kind);
	uint8_t *image = ac_model_write_image(m, len, NULL);
	ac_model_free(m);
	if (!image)
		abort();
	return image;
}

uint8_t *prog_image_wide(uint32_t launches, uint32_t seed, size_t *len)
{
	struct ac_model *m = read_model(PROG_GOOD);
	struct ac_model wide = *m;
	struct ac_launch *l = calloc(launches, sizeof(*l));
	uint64_t *words = calloc((size_t)launches * 4, sizeof(*words));
	if (!l || !words)
		abort();
	for (uint32_t i = 0; i < launches; i++) {
		l[i] = m->launches[0];
		l[i].word_first = 4 * (uint64_t)i;
		memcpy(&words[4 * (size_t)i], &m->words[m->launches[0].word_first],
		       4 * sizeof(*words));
		words[4 * (size_t)i + 3] = seed;   /* the fill value's bits */
	}
	wide.launches = l;
	wide.n_launches = launches;
	wide.words = words;
	wide.n_words = 4 * (uint64_t)launches;
	uint8_t *image = ac_model_write_image(&wide, len, NULL);
	free(l);
	free(words);
	ac_model_free(m);
	if (!image)
		abort();
	return image;
}

uint64_t prog_verdict(const uint8_t *image, size_t len,
		      const struct ac_ref *refs, size_t n)
{
	struct ac_model *m = NULL;
	if (ac_model_read_image(image, len, &m, NULL) != 0)
		return UINT64_MAX;
	m->refs = refs;
	m->n_refs = n;
	uint64_t verdict;
	int rc = ac_certify(m, &verdict, NULL, NULL);
	m->refs = NULL;
	m->n_refs = 0;
	ac_model_free(m);
	return rc == 0 ? verdict : UINT64_MAX;
}
