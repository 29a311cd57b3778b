/* SPDX-License-Identifier: MIT */
/* Shared by the libFuzzer harnesses: a check that always aborts. */
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

#endif
