/* SPDX-License-Identifier: MIT */
/*
 * Executing a schedule: its references in order, each launch of a
 * reference in table order, a repeat body all its iterations (ordinal 0
 * of the whole body, then 1, ...) before the launch after it (spec 1.3).
 * A body word at ordinal t has the value V(t) = B(t) + t * D of spec 1.2
 * (libarenacert's ac_word_values): a value outside [0, 2^64) cannot be a
 * device word and faults the submission, as an address outside every
 * buffer does.
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

#include "sim.h"

struct execution {
	struct sim_file *f;
	const struct sim_program *p;
	uint64_t *words;              /* the current launch's words at t */
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

static int run_launch(struct execution *r, uint64_t launch,
		      const uint64_t *words)
{
	enter(r, launch);
	return kernel_run(r->f, words, r->p->model->launches[launch].word_count);
}

static int run_body(struct execution *r, const struct ac_repeat *rep)
{
	for (uint64_t t = 0; t < rep->iterations; t++) {
		for (uint64_t l = rep->first; l < rep->first + rep->count; l++) {
			int rc = ac_word_values_at(r->p->words, l, t, r->words)
				 ? -EFAULT : 0;
			if (!rc)
				rc = run_launch(r, l, r->words);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int run_ref(struct execution *r, const struct ac_ref *ref)
{
	const struct ac_model *m = r->p->model;
	uint64_t l = ref->first, end = ref->first + ref->count;
	while (l < end) {
		/* A checked reference cuts no body: one holding l starts at l. */
		uint64_t body = ac_program_repeat_of(r->p->prog, l);
		int rc;
		if (body != AC_NONE) {
			const struct ac_repeat *rep = &m->repeats[body];
			assert(rep->first == l);
			rc = run_body(r, rep);
			l += rep->count;
		} else {
			const struct ac_launch *la = &m->launches[l];
			rc = run_launch(r, l, la->word_count ?
					&m->words[la->word_first] : NULL);
			l++;
		}
		if (rc)
			return rc;
	}
	return 0;
}

int execute(struct sim_file *f, const struct sim_program *p,
	    const struct ac_ref *refs, uint64_t n_refs)
{
	struct execution r = { .f = f, .p = p, .words = p->scratch };
	int rc = 0;
	for (uint64_t i = 0; i < n_refs && !rc; i++)
		rc = run_ref(&r, &refs[i]);
	return rc;
}
