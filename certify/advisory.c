/* SPDX-License-Identifier: MIT */
/*
 * Advisories (spec section 6): facts about a well-formed program that
 * leave its certificate weaker than it reads.  The one kind so far,
 * tensor-outside-windows: a non-empty global or plane with a byte in no
 * window, memory that (C) never checks.
 *
 * The windows' union is aci_window_union's (layout.c: disjoint closed ranges,
 * touching ones merged, so the byte after a range is outside every
 * window); each tensor then needs one binary search: O((W + T) log W).
 */
#include <assert.h>
#include <stdlib.h>

#include "program_impl.h"

/*
 * The first byte of [offset, offset + size) in no range of the union s
 * (n ranges), or sets *inside when there is none.  size > 0.
 */
static uint64_t first_outside(const struct range *s, uint32_t n,
			      uint64_t offset, uint64_t size, int *inside)
{
	assert(size > 0);
	uint64_t last = offset + (size - 1);
	/* the last range starting at or below offset */
	uint32_t lo;
	AC_PARTITION(uint32_t, lo, n, i, s[i].lo <= offset);
	*inside = 0;
	if (lo == 0 || s[lo - 1].last < offset)
		return offset;
	if (s[lo - 1].last >= last) {
		*inside = 1;
		return 0;
	}
	/* ranges do not touch: the byte after this one is in none */
	return s[lo - 1].last + 1;
}

const char *ac_advisory_kind_name(enum ac_advisory_kind kind)
{
	return kind == AC_ADVISORY_TENSOR_OUTSIDE_WINDOWS ?
		"tensor-outside-windows" : "?";
}

/* Appends an advisory for tensor t (named ref) if a byte lies outside. */
static void check_tensor(const struct range *s, uint32_t n,
			 const struct ac_tensor *t, struct ac_tensor_ref ref,
			 struct ac_advisory *out, uint64_t *count)
{
	if (t->size == 0)
		return;
	int inside;
	uint64_t at = first_outside(s, n, t->offset, t->size, &inside);
	if (!inside)
		out[(*count)++] = (struct ac_advisory){
			AC_ADVISORY_TENSOR_OUTSIDE_WINDOWS, ref, at };
}

int ac_program_advisories(const ac_program *program, struct ac_advisory **out,
			  uint64_t *count, struct ac_error *err)
{
	assert(program && out && count);
	const struct ac_model *m = ac_program_model(program);
	*out = NULL;
	*count = 0;
	uint32_t n = 0;
	struct range *s = aci_window_union(m, &n);
	/* at most one advisory per tensor */
	uint64_t tensors = (uint64_t)m->n_globals + m->n_planes;
	struct ac_advisory *adv = malloc((tensors ? tensors : 1) * sizeof(*adv));
	if (!s || !adv) {
		free(s);
		free(adv);
		return aci_fail(err, "", "out of memory");
	}
	uint64_t k = 0;
	for (uint32_t g = 0; g < m->n_globals; g++)
		check_tensor(s, n, &m->globals[g],
			     (struct ac_tensor_ref){ AC_NONE, g }, adv, &k);
	for (uint32_t p = 0; p < m->n_phases; p++) {
		const struct ac_phase *ph = &m->phases[p];
		for (uint32_t j = 0; j < ph->plane_count; j++)
			check_tensor(s, n, &m->planes[ph->plane_first + j],
				     (struct ac_tensor_ref){ p, j }, adv, &k);
	}
	free(s);
	if (k == 0) {
		free(adv);
		adv = NULL;
	}
	*out = adv;
	*count = k;
	return 0;
}
