/* SPDX-License-Identifier: MIT */
/* The (D) and live-schedule families of issue 13 (bounded.h). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arenaguard/certify.h>

#include "bounded.h"
#include "timing.h"

/*
 * A program of `phases` phases of `planes` planes of 64 bytes each, one
 * launch per phase (no words), the planes of phase p at
 * (p / 2 * planes + k) * 64 when `pairs` (phases 2i and 2i + 1 share
 * their places) or at k * 64 for every phase; odd phases carry their
 * planes when `carry`.  Phase p's identity is field 51 holding p's four
 * bytes.
 */
struct family {
	struct ac_model m;
	struct ac_phase *phase;
	struct ac_tensor *plane;
	struct ac_launch *launch;
	uint8_t (*identity)[7];
	struct ac_ref *refs;
};

static const uint8_t plane_name[2] = { 'x', 'y' };

static void build(struct family *f, uint32_t phases, uint32_t planes,
		  int pairs, int carry)
{
	memset(f, 0, sizeof(*f));
	f->phase = calloc(phases, sizeof(*f->phase));
	f->plane = calloc((size_t)phases * planes, sizeof(*f->plane));
	f->launch = calloc(phases, sizeof(*f->launch));
	f->identity = calloc(phases, sizeof(*f->identity));
	if (!f->phase || !f->plane || !f->launch || !f->identity)
		abort();
	for (uint32_t p = 0; p < phases; p++) {
		uint8_t *id = f->identity[p];
		id[0] = 0x9a;
		id[1] = 0x03;
		id[2] = 4;
		memcpy(id + 3, &p, 4);
		f->phase[p] = (struct ac_phase){ { id + 3, 4 }, p * planes,
						 planes };
		f->launch[p] = (struct ac_launch){ { id, 7 }, 0, 0, 0 };
		uint64_t base = pairs ? (uint64_t)(p / 2) * planes : 0;
		for (uint32_t k = 0; k < planes; k++)
			f->plane[(size_t)p * planes + k] = (struct ac_tensor){
				{ &plane_name[pairs ? 0 : p % 2], 1 },
				(base + k) * 64, 64, (uint8_t)(carry && p % 2),
				{ 0 } };
	}
	f->m = (struct ac_model){
		.alignment = 64, .n_phases = phases, .phases = f->phase,
		.n_planes = (uint64_t)phases * planes, .planes = f->plane,
		.n_launches = phases, .launches = f->launch,
	};
}

static void release(struct family *f)
{
	free(f->phase);
	free(f->plane);
	free(f->launch);
	free(f->identity);
	free(f->refs);
}

enum alternation {
	OVER,       /* B's planes over A's, other names: nothing watched */
	CARRIED,    /* B carries A's planes */
	WATCHED,    /* as OVER, and a third phase C (never run) carries A's
		     * planes: every instance changes whom K planes belong to */
};

/* Seconds to certify A, B of K planes each with M alternating references
 * (launches 0 and 1). */
static double time_alternating(uint32_t k, uint32_t m, enum alternation how)
{
	struct family f;
	build(&f, how == WATCHED ? 3 : 2, k, how == CARRIED, how == CARRIED);
	if (how == WATCHED)          /* C: A's names, carried */
		for (uint32_t i = 0; i < k; i++) {
			f.plane[2 * (size_t)k + i].name = f.plane[i].name;
			f.plane[2 * (size_t)k + i].carried = 1;
		}
	f.refs = calloc(m, sizeof(*f.refs));
	if (!f.refs)
		abort();
	for (uint32_t i = 0; i < m; i++)
		f.refs[i] = (struct ac_ref){ i % 2, 1 };
	f.m.refs = f.refs;
	f.m.n_refs = m;
	uint64_t verdict = 1;
	double t0 = timing_now();
	if (ac_certify(&f.m, &verdict, NULL, NULL) != 0 || verdict != 0)
		abort();
	double t = timing_now() - t0;
	release(&f);
	return t;
}

static void alternating(const char *what, uint32_t k, uint32_t m,
			enum alternation how)
{
	double small[5], large[5];
	for (int round = 0; round < 5; round++) {  /* interleaved */
		small[round] = time_alternating(k, m, how);
		large[round] = time_alternating(2 * k, 2 * m, how);
	}
	double s = timing_median(small, 5), l = timing_median(large, 5);
	printf("(D) %s: K=%u M=%u %.3f s, K=%u M=%u %.3f s, ratio %.2f\n",
	       what, k, m, s, 2 * k, 2 * m, l, l / s);
}

static size_t heap_in_use(void)
{
	return mallinfo2().uordblks;
}

/*
 * 2,000 phases of 100 planes (200,000 planes, phase 2i + 1 carrying phase
 * 2i's, so every key is one (D) keeps state for); schedules of the two
 * references [2i, 2i + 1), [2i + 1, 2i + 2) for i = 0, 1, ...: the heap
 * one schedule holds, and what 99 more add.
 */
static void live_schedules(void)
{
	enum { PHASES = 2000, PLANES = 100, LIVE = 100 };
	struct family f;
	build(&f, PHASES, PLANES, 1, 1);
	ac_program *p = ac_program_new(&f.m, NULL);
	if (!p)
		abort();
	ac_schedule *s[LIVE];
	size_t before = heap_in_use(), one = 0;
	for (uint32_t i = 0; i < LIVE; i++) {
		struct ac_ref refs[2] = { { 2 * i, 1 }, { 2 * i + 1, 1 } };
		if (!(s[i] = ac_schedule_new(p)) ||
		    ac_schedule_append(s[i], refs, 2, NULL) != 0 ||
		    ac_schedule_verdict(s[i], NULL) != 0)
			abort();
		if (i == 0)
			one = heap_in_use() - before;
	}
	size_t all = heap_in_use() - before;
	printf("live schedules: program of %u planes; one schedule %zu bytes, "
	       "%u schedules %zu bytes (%.1f kB over one; %zu bytes each)\n",
	       PHASES * PLANES, one, LIVE, all, (double)(all - one) / 1024,
	       all / LIVE);
	for (uint32_t i = 0; i < LIVE; i++)
		ac_schedule_free(s[i]);
	ac_program_free(p);
	release(&f);
}

void bounded_run(int quick)
{
	uint32_t k = quick ? 5000 : 20000, m = quick ? 50000 : 200000;
	alternating("fresh over fresh", k, m, OVER);
	alternating("carried", k, m, CARRIED);
	alternating("fresh over watched", k, m, WATCHED);
	live_schedules();
}
