/* SPDX-License-Identifier: MIT */
/*
 * Executing a schedule: the contract's walk (contract/execute.c, the one
 * arena.ko runs): its references in order, each launch of a reference in
 * table order, a repeat body all its iterations (ordinal 0 of the whole
 * body, then 1, ...) before the launch after it (spec 1.3), a body word
 * at ordinal t valued V(t) = B(t) + t * D of spec 1.2: a value outside
 * [0, 2^64) cannot be a device word and faults the submission, as an
 * address outside every buffer does.
 *
 * Poisoning (ARENASIM_POISON): the contract's rule (contract/execute.h:
 * each phase instance's fresh planes filled with ARENA_POISON_BYTE before
 * its first launch), arena.ko's poison=1; this file only fills the
 * simulated device's memory.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <stddef.h>

#include "sim.h"

struct execution {
	struct arena_walker walker;
	struct sim_file *f;
};

static struct execution *of_walker(struct arena_walker *w)
{
	return (struct execution *)((char *)w - offsetof(struct execution,
							  walker));
}

/* The walk's poison: buffer bytes of the range, the rest skipped. */
static int poison_range(struct arena_walker *w, uint64_t address,
			uint64_t size)
{
	bo_fill(of_walker(w)->f, address, size, ARENA_POISON_BYTE);
	return 0;
}

/* The walk's launch: the kernel. */
static int run_launch(struct arena_walker *w, uint64_t launch,
		      const uint64_t *words, uint32_t n)
{
	(void)launch;
	return kernel_run(of_walker(w)->f, words, n);
}

int execute(struct sim_file *f, const struct sim_program *p,
	    const struct ac_ref *refs, uint64_t n_refs)
{
	struct execution r = {
		.walker = { .launch = run_launch,
			    .poison = sim_poison ? poison_range : NULL,
			    .scratch = p->scratch },
		.f = f,
	};
	_Static_assert(sizeof(struct arena_ref) == sizeof(struct ac_ref),
		       "a contract reference is a model reference");
	return arena_walk(&p->cp, (const struct arena_ref *)refs, n_refs,
			  &r.walker) ? -EFAULT : 0;
}
