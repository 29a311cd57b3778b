/* SPDX-License-Identifier: MIT */
/* Parallel certification against serial, in wall-clock time (parallel.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arenaguard/certify.h>

#include "parallel.h"
#include "scaling.h"
#include "timing.h"
#include "workload.h"

#define ROUNDS 9
#define QUICK_ROUNDS 5

static double load_average(void)
{
	double load = -1;
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &load) != 1)
			load = -1;
		fclose(f);
	}
	return load;
}

/* One row: 1 thread against 2, alternately; 1 when a verdict differs. */
static int measure(const char *name, const struct workload_spec *spec,
		   int rounds)
{
	const char *why = NULL;
	struct workload *w = workload_new(spec, &why);
	if (!w) {
		fprintf(stderr, "bench-certify: %s\n", why);
		exit(2);
	}
	size_t len;
	uint8_t *image = ac_model_write_image(&w->model, &len, NULL);
	if (!image)
		abort();        /* the library's own writer, a generated model */
	uint64_t words = w->model.n_words, expected = w->verdict;
	workload_free(w);
	double t[2][ROUNDS];
	int differs = 0;
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < 2; k++) {
			struct ac_options opt = { .threads = k + 1 };
			uint64_t v;
			t[k][r] = time_view_certify(image, len, &opt,
						    timing_wall_now, &v);
			differs |= v != expected;
		}
	free(image);
	double one = timing_median(t[0], (size_t)rounds);
	double two = timing_median(t[1], (size_t)rounds);
	printf("%-11s %10llu %11.2f ms %11.2f ms %8.2f%s\n", name,
	       (unsigned long long)words, one * 1e3, two * 1e3, one / two,
	       differs ? "  VERDICTS DIFFER" : "");
	return differs;
}

int parallel_run(int quick, const char *only)
{
	int rounds = quick ? QUICK_ROUNDS : ROUNDS, differs = 0;
	printf("parallel certification, read + certify in wall-clock time, "
	       "medians of %d alternated rounds (load average %.2f)\n",
	       rounds, load_average());
	printf("%-11s %10s %14s %14s %8s\n", "workload", "words", "1 thread",
	       "2 threads", "speed-up");
	for (size_t i = 0; i < WORKLOAD_ROWS; i++) {
		const struct workload_row *row = &workload_rows[i];
		if (only && strcmp(only, row->name) != 0)
			continue;
		for (uint64_t n = 1000000; n <= (quick ? 1000000 : 10000000);
		     n *= 10) {
			struct workload_spec spec = {
				.kind = row->kind, .fault = WORKLOAD_SOUND,
				.words = n, .repeat = row->repeat,
			};
			differs += measure(row->name, &spec, rounds);
		}
	}
	return differs;
}
