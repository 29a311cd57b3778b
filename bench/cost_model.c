/* SPDX-License-Identifier: MIT */
/* The cost model's micro-benchmarks (cost_model.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arenaguard/certify.h>

#include "cost_model.h"
#include "timing.h"

/* Phase i's identity is the field-51 message holding the byte 'A' + i. */
static uint8_t identities[4][4];
static uint8_t names[4][1];

/*
 * A program shaped like a layer loop: phases A (fresh x), B (carried x,
 * fresh y over the same workspace later), C (carried y), D (fresh over
 * both); a body of `body` launches cycling A B C D with pointer words
 * advanced by deltas, run `iterations` times.
 */
struct bench_model {
	struct ac_model m;
	struct ac_window window;
	struct ac_phase phases[4];
	struct ac_tensor planes[5];
	struct ac_launch *launches;
	uint64_t *words;
	struct ac_repeat repeat;
	struct ac_delta *deltas;
};

static void build(struct bench_model *b, uint32_t body, uint64_t iterations)
{
	memset(b, 0, sizeof(*b));
	for (int i = 0; i < 4; i++) {
		identities[i][0] = 0x9a;
		identities[i][1] = 0x03;
		identities[i][2] = 1;
		identities[i][3] = (uint8_t)('A' + i);
		names[i][0] = (uint8_t)('x' + i);
	}
	b->window = (struct ac_window){ .base = 0x100000, .size = 0x100000 };
	/* A: x fresh; B: x carried, y fresh; C: y carried; D: w fresh */
	b->planes[0] = (struct ac_tensor){ { names[0], 1 }, 0x100000, 0x1000, 0, {0} };
	b->planes[1] = (struct ac_tensor){ { names[0], 1 }, 0x100000, 0x1000, 1, {0} };
	b->planes[2] = (struct ac_tensor){ { names[1], 1 }, 0x101000, 0x1000, 0, {0} };
	b->planes[3] = (struct ac_tensor){ { names[1], 1 }, 0x101000, 0x1000, 1, {0} };
	b->planes[4] = (struct ac_tensor){ { names[2], 1 }, 0x102000, 0x1000, 0, {0} };
	uint32_t first[4] = { 0, 1, 3, 4 }, count[4] = { 1, 2, 1, 1 };
	for (int i = 0; i < 4; i++)
		b->phases[i] = (struct ac_phase){ { identities[i] + 3, 1 },
						  first[i], count[i] };
	b->launches = calloc(body, sizeof(*b->launches));
	b->words = calloc(body, sizeof(*b->words));
	b->deltas = calloc(body, sizeof(*b->deltas));
	uint64_t base[4] = { 0x100000, 0x101000, 0x101000, 0x102000 };
	for (uint32_t l = 0; l < body; l++) {
		b->launches[l] = (struct ac_launch){
			{ identities[l % 4], 4 }, l, 1, 0 };
		b->words[l] = base[l % 4];
		b->deltas[l] = (struct ac_delta){ l, 0, 0 };
	}
	b->repeat = (struct ac_repeat){ .first = 0, .count = body,
		.iterations = iterations, .delta_count = body };
	b->m = (struct ac_model){
		.alignment = 64, .n_windows = 1, .windows = &b->window,
		.n_phases = 4, .phases = b->phases, .n_planes = 5,
		.planes = b->planes, .n_launches = body,
		.launches = b->launches, .n_words = body, .words = b->words,
		.n_repeats = 1, .repeats = &b->repeat, .n_deltas = body,
		.deltas = b->deltas,
	};
}

static void release(struct bench_model *b)
{
	free(b->launches);
	free(b->words);
	free(b->deltas);
}

/* Seconds per certification of a schedule running the body once. */
static double time_repeat(uint64_t iterations, int reps)
{
	struct bench_model b;
	build(&b, 4096, iterations);
	struct ac_ref ref = { 0, 4096 };
	b.m.refs = &ref;
	b.m.n_refs = 1;
	uint64_t verdict = 1;
	double t0 = timing_now();
	for (int i = 0; i < reps; i++)
		if (ac_certify(&b.m, &verdict, NULL, NULL) != 0 || verdict != 0)
			abort();
	double t = (timing_now() - t0) / reps;
	release(&b);
	return t;
}

/* Seconds per append of one reference once `before` are appended. */
static double time_append(uint64_t before, int reps)
{
	struct bench_model b;
	build(&b, 8, 1);
	b.m.n_repeats = 0;
	ac_program *p = ac_program_new(&b.m, NULL);
	ac_schedule *s = ac_schedule_new(p);
	struct ac_ref ref = { 0, 8 };
	for (uint64_t i = 0; i < before; i++)
		ac_schedule_append(s, &ref, 1, NULL);
	double t0 = timing_now();
	for (int i = 0; i < reps; i++)
		ac_schedule_append(s, &ref, 1, NULL);
	double t = (timing_now() - t0) / reps;
	if (ac_schedule_verdict(s, NULL) != 0)
		abort();
	ac_schedule_free(s);
	ac_program_free(p);
	release(&b);
	return t;
}

void cost_model_run(int quick)
{
	int reps = quick ? 20 : 200;
	/* interleave so both sides see the same machine state */
	double small = 0, large = 0;
	for (int round = 0; round < 5; round++) {
		small += time_repeat(2, reps);
		large += time_repeat(4294967295u, reps);
	}
	printf("repeat: N=2 %.1f us, N=4294967295 %.1f us, ratio %.3f\n",
	       small / 5 * 1e6, large / 5 * 1e6, large / small);

	int areps = quick ? 10000 : 100000;
	double a10 = time_append(10, areps);
	double a1m = time_append(1000000, areps);
	printf("append: after 10 refs %.1f ns, after 1000000 refs %.1f ns, "
	       "ratio %.3f\n", a10 * 1e9, a1m * 1e9, a1m / a10);
}
