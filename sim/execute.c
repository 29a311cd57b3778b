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
 * Poisoning (ARENASIM_POISON): a phase instance is a maximal run of
 * consecutive executed launches of one phase, across references and
 * iterations (spec 2 (D)).  When one starts, its fresh planes are filled
 * with 0xFF bytes (f32 NaN), so a value that was never written in this
 * instance, or was overwritten since, shows up in the results instead of
 * surviving by luck in reused workspace.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <stddef.h>

#include "sim.h"

struct execution {
	struct arena_walker walker;
	struct sim_file *f;
	const struct sim_program *p;
	int in_instance;
	uint64_t phase;               /* the current instance's phase */
};

static void poison_fresh_planes(struct execution *r, uint64_t phase)
{
	const struct ac_model *m = r->p->model;
	const struct ac_phase *ph = &m->phases[phase];
	for (uint32_t i = 0; i < ph->plane_count; i++) {
		const struct ac_tensor *pl = &m->planes[ph->plane_first + i];
		if (!pl->carried)
			bo_fill(r->f, pl->offset, pl->size, 0xFF);
	}
}

/* A launch is about to run: does it start a new instance? */
static void enter(struct execution *r, uint64_t launch)
{
	if (!sim_poison)
		return;
	uint64_t phase = ac_program_launch_phase(r->p->prog, launch);
	if (r->in_instance && phase == r->phase)
		return;
	r->in_instance = 1;
	r->phase = phase;
	if (phase != AC_NONE)
		poison_fresh_planes(r, phase);
}

/* The walk's launch: poison, then the kernel. */
static int run_launch(struct arena_walker *w, uint64_t launch,
		      const uint64_t *words, uint32_t n)
{
	struct execution *r = (struct execution *)((char *)w -
						   offsetof(struct execution,
							    walker));
	enter(r, launch);
	return kernel_run(r->f, words, n);
}

int execute(struct sim_file *f, const struct sim_program *p,
	    const struct ac_ref *refs, uint64_t n_refs)
{
	struct execution r = {
		.walker = { .launch = run_launch, .scratch = p->scratch },
		.f = f, .p = p,
	};
	_Static_assert(sizeof(struct arena_ref) == sizeof(struct ac_ref),
		       "a contract reference is a model reference");
	return arena_walk(&p->cp, (const struct arena_ref *)refs, n_refs,
			  &r.walker) ? -EFAULT : 0;
}
