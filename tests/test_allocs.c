/* SPDX-License-Identifier: MIT */
/*
 * The allocations ac_program_new makes for a program of about 10^3 words
 * (each workload, sound), counted by wrapping malloc, calloc and realloc
 * at link time (-Wl,--wrap: the library is linked statically, so its
 * calls are the wrapped ones; jansson's and libc's own are not).  At this
 * size they are a fixed cost beside certification itself
 * (docs/performance.md), so each count is pinned at most what it is:
 * a regression fails here; an improvement lowers the pins.  Today's 14
 * or 15: the program, its arena and the builders' scratch arena, the
 * word check, its arena and hints, three per-launch arrays
 * (aci_big_calloc), the hash indexes (phase identities, built once by
 * the validation and read by the launches' phases; the cache of parsed
 * launch identities; plane keys), the sorted globals and the windows'
 * union.
 *
 * Also pinned: the bytes calloc zeroes while the program's image is read
 * in place and certified (ac_program_view_image, a schedule of the
 * image's own references, its verdict), as bench-certify's read +
 * certify does.  The image reader writes every field of its model, so
 * the model's arrays are not zeroed (they were: 7 % of the instructions
 * at this size); what is left is the program's and the schedule's own
 * zeroed tables.
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
static unsigned long long zeroed;      /* bytes calloc was asked for */

void *__wrap_malloc(size_t n)
{
	allocs++;
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	allocs++;
	zeroed += (unsigned long long)n * size;
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
	unsigned long long most_zeroed;  /* the pin: calloc's bytes in
					  * reading and certifying the image */
} shapes[] = {
	{ "vit", WORKLOAD_VIT, 0, 15, 7276 },
	{ "vit-repeat", WORKLOAD_VIT, 1, 15, 5980 },
	{ "decode", WORKLOAD_DECODE, 0, 14, 6660 },
	{ "adjoint", WORKLOAD_ADJOINT, 0, 14, 7368 },
};

/* The bytes calloc zeroes in viewing and certifying the model's image;
 * 0 with *ok 0 when it is not certified. */
static unsigned long long zeroed_reading(const struct ac_model *model,
					 int *ok)
{
	struct ac_error err;
	size_t len;
	uint8_t *image = ac_model_write_image(model, &len, &err);
	struct ac_model *m = NULL;
	ac_schedule *s = NULL;
	*ok = 0;
	if (!image)
		return 0;
	zeroed = 0;
	ac_program *p = ac_program_view_image(image, len, NULL, &m, &err);
	if (p && (s = ac_schedule_new(p)) &&
	    ac_schedule_append(s, m->refs, (size_t)m->n_refs, &err) == 0)
		*ok = ac_schedule_verdict(s, NULL) == 0;
	unsigned long long n = zeroed;
	ac_schedule_free(s);
	ac_program_free(p);
	ac_model_free(m);
	free(image);
	return n;
}

/* Ends with scripts/test's summary line, "N passed, N failed" (two cases
 * a shape: the allocations, the zeroed bytes). */
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
			failed += 2;
			continue;
		}
		struct ac_error err;
		allocs = 0;
		ac_program *p = ac_program_new(&w->model, &err);
		unsigned long n = allocs;
		if (!p || ac_program_verdict(p) != 0) {
			printf("%s: not certified: FAIL\n", shapes[i].name);
			failed += 2;
			ac_program_free(p);
			workload_free(w);
			continue;
		}
		int ok = n <= shapes[i].most;
		printf("%s: %lu allocations in ac_program_new (at most %lu)%s\n",
		       shapes[i].name, n, shapes[i].most, ok ? "" : ": FAIL");
		ok ? passed++ : failed++;
		int certified;
		unsigned long long z = zeroed_reading(&w->model, &certified);
		ok = certified && z <= shapes[i].most_zeroed;
		printf("%s: %llu bytes zeroed by calloc in reading and "
		       "certifying its image (at most %llu)%s\n",
		       shapes[i].name, z, shapes[i].most_zeroed,
		       ok ? "" : certified ? ": FAIL" : ": not certified: FAIL");
		ok ? passed++ : failed++;
		ac_program_free(p);
		workload_free(w);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
