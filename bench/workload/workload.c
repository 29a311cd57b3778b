/* SPDX-License-Identifier: MIT */
/* workload_new(): checks the spec, runs its generator, derives the
 * verdict from where the generator says its fault breaks. */
#include <stdlib.h>
#include <string.h>

#include "generators.h"

static const char *const kind_names[WORKLOAD_KINDS] = {
	"vit", "decode", "adjoint",
};

static const char *const fault_names[WORKLOAD_FAULTS] = {
	"sound", "reuse", "stride",
};

const char *workload_kind_name(enum workload_kind kind)
{
	return (unsigned)kind < WORKLOAD_KINDS ? kind_names[kind] : "?";
}

const char *workload_fault_name(enum workload_fault fault)
{
	return (unsigned)fault < WORKLOAD_FAULTS ? fault_names[fault] : "?";
}

static int parse(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

int workload_kind_parse(const char *name)
{
	return parse(kind_names, WORKLOAD_KINDS, name);
}

int workload_fault_parse(const char *name)
{
	return parse(fault_names, WORKLOAD_FAULTS, name);
}

typedef void generator(struct wb *, const struct workload_spec *,
		       struct workload *);
static generator *const generators[WORKLOAD_KINDS] = {
	generate_vit, generate_decode, generate_adjoint,
};

void generator_breaks_c(struct workload *w, uint64_t launch)
{
	w->condition = AC_COND_C;
	w->launch = launch;
}

void generator_breaks_d(struct workload *w, uint64_t instance)
{
	w->condition = AC_COND_D;
	w->instance = instance;
}

static const char *spec_problem(const struct workload_spec *spec)
{
	if ((unsigned)spec->kind >= WORKLOAD_KINDS)
		return "unknown workload kind";
	if ((unsigned)spec->fault >= WORKLOAD_FAULTS)
		return "unknown fault";
	if (spec->words == 0)
		return "the target word count must be at least 1";
	if (spec->repeat && spec->kind != WORKLOAD_VIT)
		return "only vit has a Repeat variant";
	return NULL;
}

/* Spec section 3, from the failure the generator recorded. */
static uint64_t verdict_of(const struct workload *w)
{
	switch (w->condition) {
	case AC_COND_C:
		return 2 + w->launch;
	case AC_COND_D:
		return 2 + w->model.n_launches + w->instance;
	default:
		return 0;
	}
}

struct workload *workload_new(const struct workload_spec *spec,
			      const char **why)
{
	const char *problem = spec_problem(spec);
	if (problem) {
		if (why)
			*why = problem;
		return NULL;
	}
	struct workload *w = calloc(1, sizeof(*w));
	if (!w)
		abort();
	w->condition = AC_CERTIFIED;
	w->launch = w->instance = AC_NONE;
	struct wb *b = wb_new();
	generators[spec->kind](b, spec, w);
	wb_model(b, w);
	w->verdict = verdict_of(w);
	if (spec->fault != WORKLOAD_SOUND && w->condition == AC_CERTIFIED) {
		workload_free(w);       /* no generator size comes to this */
		if (why)
			*why = "the program is too small to hold the fault";
		return NULL;
	}
	return w;
}

void workload_free(struct workload *w)
{
	if (!w)
		return;
	wb_free(w->owner);
	free(w);
}
