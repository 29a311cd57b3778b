/* SPDX-License-Identifier: MIT */
/*
 * bench-certify: libarenacert's performance record (docs/performance.md).
 *
 *   bench-certify [--quick] [--tsv FILE] [--max-words N] [--naive-words N]
 *                 [--only WORKLOAD] [--no-cost-model] [--bounded]
 *                 [--orders] [--parallel]
 *
 * First the cost model's ratios (cost_model.h), the adversarial
 * families (bounded.h; --bounded: those alone) and the adversarial plane
 * orders (sort_order.h; --orders: those alone), then every workload at
 * every decade of size against the XXH3 floor and the naive checker
 * (scaling.h), with a summary of log-log slopes.  --quick (what `meson
 * test --benchmark` runs) stops at 1e6 words with fewer repetitions.
 * --bounded runs the adversarial families alone; --parallel, 1 thread
 * against 2 in wall-clock time (parallel.h), alone.  Exit status 1 when a
 * verdict differs from the constructed one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounded.h"
#include "cost_model.h"
#include "parallel.h"
#include "scaling.h"
#include "sort_order.h"

static void usage(void)
{
	fprintf(stderr, "usage: bench-certify [--quick] [--tsv FILE] "
		"[--max-words N] [--naive-words N] [--only vit|vit-repeat|"
		"decode|adjoint] [--no-cost-model] [--bounded] [--orders] "
		"[--parallel]\n");
	exit(2);
}

static uint64_t count_arg(const char *text)
{
	char *end;
	double v = strtod(text, &end);
	if (*end || v < 1000 || v > 1e12)
		usage();
	return (uint64_t)v;
}

int main(int argc, char **argv)
{
	struct scaling_options o = {
		.max_words = 100000000, .naive_words = 1000000, .reps = 5,
	};
	int quick = 0, cost_model = 1, bounded = 0, orders_only = 0;
	int parallel = 0;
	const char *tsv = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int has_value = i + 1 < argc;
		if (strcmp(a, "--quick") == 0)
			quick = 1;
		else if (strcmp(a, "--no-cost-model") == 0)
			cost_model = 0;
		else if (strcmp(a, "--bounded") == 0)
			bounded = 1;
		else if (strcmp(a, "--orders") == 0)
			orders_only = 1;
		else if (strcmp(a, "--parallel") == 0)
			parallel = 1;
		else if (strcmp(a, "--tsv") == 0 && has_value)
			tsv = argv[++i];
		else if (strcmp(a, "--max-words") == 0 && has_value)
			o.max_words = count_arg(argv[++i]);
		else if (strcmp(a, "--naive-words") == 0 && has_value)
			o.naive_words = count_arg(argv[++i]);
		else if (strcmp(a, "--only") == 0 && has_value)
			o.only = argv[++i];
		else
			usage();
	}
	if (quick) {
		o.max_words = o.max_words < 1000000 ? o.max_words : 1000000;
		o.naive_words = o.naive_words < 100000 ? o.naive_words : 100000;
		o.reps = 3;
	}
	if (tsv && !(o.tsv = fopen(tsv, "w"))) {
		perror(tsv);
		return 2;
	}
	if (bounded) {
		bounded_run(quick);
		return 0;
	}
	if (orders_only)
		return sort_order_run(quick) ? 1 : 0;
	if (parallel)
		return parallel_run(quick, o.only) ? 1 : 0;
	int differs = 0;
	if (cost_model) {
		cost_model_run(quick);
		bounded_run(quick);
		differs += sort_order_run(quick);
	}
	differs += scaling_run(&o);
	if (o.tsv)
		fclose(o.tsv);
	if (differs)
		fprintf(stderr, "bench-certify: %d verdicts differ from the "
			"constructed ones\n", differs);
	return differs ? 1 : 0;
}
