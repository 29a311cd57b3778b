/* SPDX-License-Identifier: MIT */
/* Shared by the libFuzzer harnesses: a check that always aborts, an
 * input reader, certification outcomes. */
#ifndef ARENAGUARD_FUZZ_H
#define ARENAGUARD_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arenaguard/certify.h>
#include <arenaguard/program.h>

/* Not assert(): the check must hold in every build type, and abort()
 * is what libFuzzer reports as a crash with the input saved. */
#define FUZZ_CHECK(cond, ...)                                              \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: check failed: %s: ",       \
				__FILE__, __LINE__, #cond);                \
			fprintf(stderr, __VA_ARGS__);                      \
			fputc('\n', stderr);                               \
			abort();                                           \
		}                                                          \
	} while (0)

/* The input read front to back as little-endian integers and byte
 * runs; past its end, zeros: every input decodes to something. */
struct fuzz_in {
	const uint8_t *p, *end;
};

static inline uint64_t fuzz_take(struct fuzz_in *in, unsigned int bytes)
{
	uint64_t v = 0;
	for (unsigned int i = 0; i < bytes && in->p < in->end; i++)
		v |= (uint64_t)*in->p++ << (8 * i);
	return v;
}

static inline void fuzz_take_bytes(struct fuzz_in *in, void *dst, size_t n)
{
	size_t have = (size_t)(in->end - in->p);
	if (have > n)
		have = n;
	if (have)
		memcpy(dst, in->p, have);
	memset((uint8_t *)dst + have, 0, n - have);
	in->p += have;
}

/* An unsigned integer of `width` bytes (1 to 8) in memory, in the host's
 * order (little-endian, as the input's). */
static inline uint64_t fuzz_get(const void *p, size_t width)
{
	uint64_t v = 0;
	memcpy(&v, p, width);
	return v;
}

static inline void fuzz_put(void *p, size_t width, uint64_t v)
{
	memcpy(p, &v, width);
}

/* What certifying a model gave: a verdict with its diagnostic, or an error. */
struct fuzz_outcome {
	int rc;
	uint64_t verdict;
	struct ac_diag diag;
	char error[400];
};

static inline void fuzz_certify(const struct ac_model *m,
				struct fuzz_outcome *o)
{
	struct ac_error err = { { 0 }, { 0 } };
	o->rc = ac_certify(m, &o->verdict, &o->diag, &err);
	o->error[0] = 0;
	if (o->rc != 0) {
		o->verdict = AC_NONE;
		ac_error_text(&err, o->error, sizeof(o->error));
	}
}

/* Equal models must get equal outcomes, down to the diagnostic's main
 * fields and the error text (model paths, not byte offsets). */
static inline int fuzz_same_outcome(const struct fuzz_outcome *a,
				    const struct fuzz_outcome *b)
{
	if (a->rc != b->rc)
		return 0;
	if (a->rc != 0)
		return strcmp(a->error, b->error) == 0;
	return a->verdict == b->verdict &&
	       a->diag.condition == b->diag.condition &&
	       a->diag.reason == b->diag.reason &&
	       a->diag.launch == b->diag.launch &&
	       a->diag.word == b->diag.word &&
	       a->diag.instance == b->diag.instance;
}

/* Certifies m, a model that must equal the one a was certified from (a
 * round trip's result), and checks that it gets the same outcome;
 * `what` names the round trip in the failure. */
static inline void fuzz_certify_same(const struct fuzz_outcome *a,
				     const struct ac_model *m,
				     const char *what)
{
	struct fuzz_outcome b;
	fuzz_certify(m, &b);
	FUZZ_CHECK(fuzz_same_outcome(a, &b),
		   "%s certifies differently: %llu '%s' vs %llu '%s'", what,
		   (unsigned long long)a->verdict, a->error,
		   (unsigned long long)b.verdict, b.error);
}

#endif
