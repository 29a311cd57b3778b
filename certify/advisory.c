/* SPDX-License-Identifier: MIT */
/*
 * Advisories (spec section 6): facts about a well-formed program that
 * leave its certificate weaker than it reads.  The one kind so far,
 * tensor-outside-windows: a non-empty global or plane with a byte in no
 * window, memory that (C) never checks.
 *
 * The windows' union is sorted and merged into disjoint closed spans
 * (touching spans merged too, so the byte after a span is outside every
 * window); each tensor then needs one binary search: O((W + T) log W).
 */
#include <assert.h>
#include <stdlib.h>

#include "internal.h"

/* A closed span [lo, last] of the windows' union. */
struct span {
	uint64_t lo, last;
};

static int span_order(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The union of the model's windows as n disjoint, non-touching spans in
 * increasing order (windows are non-empty and end by 2^64: validated). */
static struct span *window_union(const struct ac_model *m, uint32_t *n)
{
	struct span *s = malloc((m->n_windows ? m->n_windows : 1) * sizeof(*s));
	if (!s)
		return NULL;
	for (uint32_t i = 0; i < m->n_windows; i++) {
		assert(m->windows[i].size > 0);
		s[i] = (struct span){ m->windows[i].base,
			m->windows[i].base + (m->windows[i].size - 1) };
	}
	qsort(s, m->n_windows, sizeof(*s), span_order);
	uint32_t k = 0;
	for (uint32_t i = 0; i < m->n_windows; i++) {
		/* s[k-1].last == UINT64_MAX: nothing can start after it */
		if (k && (s[k - 1].last == UINT64_MAX ||
			  s[i].lo <= s[k - 1].last + 1)) {
			if (s[i].last > s[k - 1].last)
				s[k - 1].last = s[i].last;
		} else {
			s[k++] = s[i];
		}
	}
	*n = k;
	return s;
}

/*
 * The first byte of [offset, offset + size) in no span, or sets *inside
 * when there is none.  size > 0.
 */
static uint64_t first_outside(const struct span *s, uint32_t n,
			      uint64_t offset, uint64_t size, int *inside)
{
	assert(size > 0);
	uint64_t last = offset + (size - 1);
	/* the last span starting at or below offset */
	uint32_t lo;
	AC_PARTITION(uint32_t, lo, n, i, s[i].lo <= offset);
	*inside = 0;
	if (lo == 0 || s[lo - 1].last < offset)
		return offset;
	if (s[lo - 1].last >= last) {
		*inside = 1;
		return 0;
	}
	/* spans do not touch: the byte after this one is in none */
	return s[lo - 1].last + 1;
}

const char *ac_advisory_kind_name(enum ac_advisory_kind kind)
{
	return kind == AC_ADVISORY_TENSOR_OUTSIDE_WINDOWS ?
		"tensor-outside-windows" : "?";
}

/* Appends an advisory for tensor t (named ref) if a byte lies outside. */
static void check_tensor(const struct span *s, uint32_t n,
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
	struct span *s = window_union(m, &n);
	/* at most one advisory per tensor */
	uint64_t tensors = (uint64_t)m->n_globals + m->n_planes;
	struct ac_advisory *adv = malloc((tensors ? tensors : 1) * sizeof(*adv));
	if (!s || !adv) {
		free(s);
		free(adv);
		return ac_fail(err, "", "out of memory");
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
