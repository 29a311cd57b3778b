/* SPDX-License-Identifier: MIT */
/*
 * The allocations ac_program_new makes for a program of about 10^3 words
 * (each workload, sound), counted by wrapping malloc, calloc and realloc
 * at link time (-Wl,--wrap: the library is linked statically, so its
 * calls are the wrapped ones; jansson's and libc's own are not).  At this
 * size they are a fixed cost beside certification itself
 * (docs/performance.md), so each count is pinned at most what it is:
 * a regression fails here; an improvement lowers the pins.  Today's 15
 * or 16: the program, its arena and the builders' scratch arena, the
 * word check, its arena and hints, three per-launch arrays
 * (aci_big_calloc), the hash indexes (phase identities, plane keys), the
 * sorted globals and the windows' union.
 */
#include <stdio.h>
#include <stdlib.h>

#include <arenaguard/certify.h>

#include "workload.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static unsigned long allocs;

void *__wrap_malloc(size_t n)
{
	allocs++;
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	allocs++;
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	allocs++;
	return __real_realloc(p, n);
}

static const struct {
	const char *name;
	enum workload_kind kind;
	int repeat;
	unsigned long most;        /* the pin: ac_program_new's allocations */
} shapes[] = {
	{ "vit", WORKLOAD_VIT, 0, 16 },
	{ "vit-repeat", WORKLOAD_VIT, 1, 16 },
	{ "decode", WORKLOAD_DECODE, 0, 15 },
	{ "adjoint", WORKLOAD_ADJOINT, 0, 15 },
};

/* Ends with scripts/test's summary line, "N passed, N failed" (a shape a
 * case). */
int main(void)
{
	int passed = 0, failed = 0;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct workload_spec spec = { shapes[i].kind, WORKLOAD_SOUND,
					      1000, shapes[i].repeat };
		const char *why = "?";
		struct workload *w = workload_new(&spec, &why);
		if (!w) {
			printf("%s: %s: FAIL\n", shapes[i].name, why);
			failed++;
			continue;
		}
		struct ac_error err;
		allocs = 0;
		ac_program *p = ac_program_new(&w->model, &err);
		unsigned long n = allocs;
		if (!p || ac_program_verdict(p) != 0) {
			printf("%s: not certified: FAIL\n", shapes[i].name);
			failed++;
			ac_program_free(p);
			workload_free(w);
			continue;
		}
		int ok = n <= shapes[i].most;
		printf("%s: %lu allocations in ac_program_new (at most %lu)%s\n",
		       shapes[i].name, n, shapes[i].most, ok ? "" : ": FAIL");
		ok ? passed++ : failed++;
		ac_program_free(p);
		workload_free(w);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
