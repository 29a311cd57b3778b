/* SPDX-License-Identifier: MIT */
/* Adversarial plane orders (sort_order.h). */
#include <stdio.h>
#include <stdlib.h>

#include <arenaguard/certify.h>

#include "killer.h"
#include "sort_order.h"
#include "timing.h"

#define PLANE_BYTES 64
#define WINDOW_BASE 0x100000ull

/* Field 51 holding 'P': the one phase's identity. */
static const uint8_t identity[] = { 0x9a, 0x03, 0x01, 'P' };
static const uint8_t name[] = { 'p' };

/* Seconds to certify one launch of a phase whose plane i sits at slot
 * rank[i] (rank NULL: slot i, address order).  *verdict: the verdict. */
static double time_certify(const uint32_t *rank, uint32_t n, int reps,
			   uint64_t *verdict)
{
	struct ac_tensor *planes = calloc(n, sizeof(*planes));
	if (!planes)
		abort();
	for (uint32_t i = 0; i < n; i++)
		planes[i] = (struct ac_tensor){
			.name = { name, sizeof(name) },
			.offset = WINDOW_BASE +
				  (uint64_t)(rank ? rank[i] : i) * PLANE_BYTES,
			.size = PLANE_BYTES,
		};
	struct ac_window window = { .base = WINDOW_BASE,
				    .size = (uint64_t)n * PLANE_BYTES };
	struct ac_phase phase = { { identity + 3, 1 }, 0, n };
	struct ac_launch launch = { { identity, sizeof(identity) }, 0, 0, 0 };
	struct ac_ref ref = { 0, 1 };
	struct ac_model m = {
		.alignment = PLANE_BYTES, .n_windows = 1, .windows = &window,
		.n_phases = 1, .phases = &phase, .n_planes = n,
		.planes = planes, .n_launches = 1, .launches = &launch,
		.n_refs = 1, .refs = &ref,
	};
	double best = 0;
	for (int r = 0; r < reps; r++) {
		double t0 = timing_now();
		if (ac_certify(&m, verdict, NULL, NULL) != 0)
			abort();
		double t = timing_now() - t0;
		best = r == 0 || t < best ? t : best;
	}
	free(planes);
	return best;
}

int sort_order_run(int quick)
{
	uint32_t top = quick ? 100000 : 400000;
	int reps = quick ? 3 : 5, bad = 0;
	double previous = 0;
	for (uint32_t n = 25000; n <= top; n *= 2) {
		uint32_t *rank = malloc(n * sizeof(*rank));
		if (!rank)
			abort();
		killer_order(rank, n);
		uint64_t v_address = 1, v_killer = 1;
		double address = time_certify(NULL, n, reps, &v_address);
		double killer = time_certify(rank, n, reps, &v_killer);
		bad += (v_address != 0) + (v_killer != 0);
		printf("order: %u planes: address order %.2f ms, killer order "
		       "%.2f ms, ratio %.2f", n, address * 1e3, killer * 1e3,
		       killer / address);
		if (previous > 0)
			printf(", killer doubled %.2fx", killer / previous);
		printf("\n");
		previous = killer;
		free(rank);
	}
	return bad;
}
