/* SPDX-License-Identifier: MIT */
/* The three generators behind workload_new(), and how they say where
 * their fault breaks the certificate. */
#ifndef ARENAGUARD_BENCH_GENERATORS_H
#define ARENAGUARD_BENCH_GENERATORS_H

#include "builder.h"
#include "workload.h"

/* Each builds spec's program into b and records its fault in w. */
void generate_vit(struct wb *b, const struct workload_spec *spec,
		  struct workload *w);
void generate_decode(struct wb *b, const struct workload_spec *spec,
		     struct workload *w);
void generate_adjoint(struct wb *b, const struct workload_spec *spec,
		      struct workload *w);

/* The program's first failure: launch `launch` breaks (C), or instance
 * `instance` breaks (D) (with (A), (B), (C) holding). */
void generator_breaks_c(struct workload *w, uint64_t launch);
void generator_breaks_d(struct workload *w, uint64_t instance);

#endif
