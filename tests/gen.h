/* SPDX-License-Identifier: MIT */
/*
 * Random programs for the differential suite.  A fixed-seed PRNG
 * (xoshiro256** seeded through splitmix64) drives a generator that builds
 * programs shaped like real plans -- windows, globals, phases whose planes
 * share a workspace, launches pointing into named ranges, repeats, schedules
 * of several references -- and then mutates them towards every verdict
 * class and the spec's boundaries, including malformed programs.
 */
#ifndef ARENAGUARD_TEST_GEN_H
#define ARENAGUARD_TEST_GEN_H

#include <stdint.h>
#include <stdio.h>

#include <arenaguard/program.h>

struct gen_rng {
	uint64_t s[4];
};

void gen_rng_seed(struct gen_rng *r, uint64_t seed);
uint64_t gen_rng_next(struct gen_rng *r);
/* Uniform-enough in [0, n); 0 when n is 0. */
uint64_t gen_rng_below(struct gen_rng *r, uint64_t n);

/* One random program; the model owns its arrays.  Free with
 * gen_model_free().  Never NULL (aborts when memory runs out). */
struct ac_model *gen_model(struct gen_rng *r);
void gen_model_free(struct ac_model *m);

/* What the last mutation of a program aimed at (whether it hit is for
 * the checkers to say): statistics for the generator's own tuning. */
enum gen_aim {
	GEN_AIM_NONE,           /* unmutated: mostly certified */
	GEN_AIM_AB,
	GEN_AIM_C,
	GEN_AIM_D,
	GEN_AIM_MALFORMED,
	GEN_AIM_BENIGN,         /* well-formed edge cases */
	GEN_AIM_TILED,          /* thousands of planes, unmutated */
	GEN_AIM_COUNT
};
struct ac_model *gen_model_aimed(struct gen_rng *r, int *aim);

/* A deep copy of any model, owned like gen_model()'s. */
struct ac_model *gen_model_copy(const struct ac_model *m);

/* Writes a model in the JSON interchange format (shared/spec/
 * program-json.md); a fallback for when the library's writer fails. */
void gen_model_dump_json(FILE *f, const struct ac_model *m);

#endif
