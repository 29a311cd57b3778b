/* SPDX-License-Identifier: MIT */
/*
 * The certification benchmark over the workloads (bench/workload): for
 * each workload, variant (sound, reuse, stride) and size (a decade of
 * parameter words each, from 1e3), side by side in one run:
 *
 *   hash          XXH3-128 of the program image: the physical floor,
 *                 reading every byte once
 *   read+certify  ac_program_view_image() and the schedule
 *                 (time_view_certify): an image read in place and
 *                 certified in one call, as arena-certify reads it
 *   copy+certify  the same with ac_model_read_image(), which copies the
 *                 image into a model that owns its arrays
 *   certify       ac_certify() alone, on a model already read
 *   naive         the tests' unrolling checker (tests/naive.c), where it
 *                 finishes in reasonable time
 *   peak          resident memory certification adds, at its peak
 *
 * Each time is the median of several repetitions; every verdict is
 * checked against the one the generator constructed.
 */
#ifndef ARENAGUARD_BENCH_SCALING_H
#define ARENAGUARD_BENCH_SCALING_H

#include <stdint.h>
#include <stdio.h>

#include <arenaguard/certify.h>

#include "workload.h"

/*
 * Reads image[0, len) in place and certifies it in one call
 * (ac_program_view_image with opt, NULL for the defaults), as
 * arena-certify and the guard do, then its schedule; *verdict is the
 * verdict, AC_NONE when the image could not be read.  Returns the
 * seconds `clock` measured around the read and the certificate
 * (freeing is not timed).
 */
double time_view_certify(const uint8_t *image, size_t len,
			 const struct ac_options *opt, double (*clock)(void),
			 uint64_t *verdict);

/* The table's rows: a workload's name and how it is generated. */
struct workload_row {
	const char *name;       /* "vit-repeat" */
	enum workload_kind kind;
	int repeat;             /* vit only: the layers as one Repeat */
};
#define WORKLOAD_ROWS 4
extern const struct workload_row workload_rows[WORKLOAD_ROWS];

struct scaling_options {
	uint64_t max_words;     /* the largest size (a power of ten) */
	uint64_t naive_words;   /* run the naive checker up to this size */
	int reps;               /* rounds at least below 1e7 words (3 from
				 * there; more when cheap) */
	const char *only;       /* one workload ("vit-repeat"), or NULL */
	FILE *tsv;              /* the table, or NULL */
};

/* Runs the table, prints a summary; returns the number of rows whose
 * verdict (the library's or the naive checker's) differed from the
 * constructed one (0 when all agree). */
int scaling_run(const struct scaling_options *options);

#endif
