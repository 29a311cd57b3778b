/* SPDX-License-Identifier: MIT */
/*
 * Spec 2 (A) and (B): tensors aligned, non-empty, and disjoint where they
 * live at the same time.  Disjointness is found by sorting by offset: in
 * sorted order, if any two non-empty ranges intersect then two neighbours
 * do, so one pass over neighbours suffices.
 */
#include <assert.h>
#include <stdlib.h>

#include "program_impl.h"

/* A tensor's sort record: by offset, ties by index (input order). */
struct tensor_key {
	uint64_t offset;
	uint32_t index;
};

/* The n tensors t by offset, ties by index, into order[0 .. n), with
 * keys[0 .. n) as scratch: 0, or -1 out of memory (a large sort's). */
static int order_tensors(const struct ac_tensor *t, uint32_t n,
			 struct tensor_key *keys, uint32_t *order)
{
	assert(n == 0 || (t && keys && order));
	for (uint32_t i = 0; i < n; i++)
		keys[i] = (struct tensor_key){ t[i].offset, i };
	if (aci_sort_by_key(keys, n, sizeof(*keys)) != 0)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		order[i] = keys[i].index;
	return 0;
}

uint32_t *aci_sort_tensors(const struct ac_tensor *t, uint32_t n,
			   uint64_t extra)
{
	if (extra > SIZE_MAX / sizeof(uint32_t) - n - 1)
		return NULL;
	struct tensor_key small[64], *keys = small;
	if (n > 64 && !(keys = malloc(n * sizeof(*keys))))
		return NULL;
	uint32_t *order = malloc(((size_t)n + extra + 1) * sizeof(*order));
	if (order && order_tensors(t, n, keys, order) != 0) {
		free(order);
		order = NULL;
	}
	if (keys != small)
		free(keys);
	return order;
}

static int range_order(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

struct range *aci_window_union(const struct ac_model *m, uint32_t *n)
{
	assert(m && n);
	struct range *s = malloc((m->n_windows ? m->n_windows : 1) *
				 sizeof(*s));
	if (!s)
		return NULL;
	for (uint32_t i = 0; i < m->n_windows; i++) {
		assert(m->windows[i].size > 0);
		s[i] = (struct range){ m->windows[i].base,
			m->windows[i].base + (m->windows[i].size - 1) };
	}
	aci_sort(s, m->n_windows, sizeof(*s), range_order);
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

/* Does [a.offset, +size) intersect [b.offset, +size), given a.offset <=
 * b.offset?  Overflow-free: compares distances. */
static int overlaps_from_below(const struct ac_tensor *a,
			       const struct ac_tensor *b)
{
	return b->size && b->offset - a->offset < a->size;
}

static void set_pair(struct ac_diag *d, enum ac_reason reason, uint64_t phase_a,
		     uint64_t a, uint64_t phase_b, uint64_t b)
{
	d->reason = reason;
	d->tensor[0] = (struct ac_tensor_ref){ phase_a, a };
	d->tensor[1] = (struct ac_tensor_ref){ phase_b, b };
}

/* Aligned and non-empty, tensor by tensor in written order. */
static int check_shapes(const struct ac_model *m, const struct ac_tensor *t,
			uint32_t n, uint64_t phase, struct ac_diag *d,
			enum ac_reason misaligned, enum ac_reason empty)
{
	for (uint32_t i = 0; i < n; i++) {
		if (t[i].offset & (m->alignment - 1)) {
			set_pair(d, misaligned, phase, i, AC_NONE, AC_NONE);
			return 1;
		}
		if (t[i].size == 0) {
			set_pair(d, empty, phase, i, AC_NONE, AC_NONE);
			return 1;
		}
	}
	return 0;
}

/* Pairwise disjoint, given t sorted as `order`; reports the pair with the
 * lower index first. */
static int check_disjoint(const struct ac_tensor *t, const uint32_t *order,
			  uint32_t n, uint64_t phase, struct ac_diag *d,
			  enum ac_reason reason)
{
	for (uint32_t i = 1; i < n; i++) {
		uint32_t a = order[i - 1], b = order[i];
		if (overlaps_from_below(&t[a], &t[b])) {
			set_pair(d, reason, phase, a < b ? a : b, phase,
				 a < b ? b : a);
			return 1;
		}
	}
	return 0;
}

/* The last of the sorted tensors whose offset is <= x, or -1. */
static int64_t tensor_floor(const struct ac_tensor *t, const uint32_t *order,
		     uint32_t n, uint64_t x)
{
	uint32_t above;
	AC_PARTITION(uint32_t, above, n, i, t[order[i]].offset <= x);
	return (int64_t)above - 1;
}

/* Every plane disjoint from every global; globals are sorted and disjoint,
 * so only the last global starting below the plane's end can meet it. */
static int check_planes_vs_globals(const struct ac_model *m,
				   const uint32_t *globals, struct ac_diag *d)
{
	if (m->n_globals == 0)
		return 0;
	/* the globals' hull, [first's offset, hull_last]: sorted and disjoint,
	 * so the last one ends last.  A plane outside it meets none and
	 * needs no search (a model's planes and globals mostly live in
	 * different windows) */
	const struct ac_tensor *top = &m->globals[globals[m->n_globals - 1]];
	uint64_t hull_lo = m->globals[globals[0]].offset;
	uint64_t hull_last = top->offset + (top->size - 1);
	for (uint32_t p = 0; p < m->n_phases; p++) {
		const struct ac_phase *ph = &m->phases[p];
		for (uint32_t j = 0; j < ph->plane_count; j++) {
			const struct ac_tensor *pl = &m->planes[ph->plane_first + j];
			uint64_t last = pl->offset + (pl->size - 1);
			if (last < hull_lo || pl->offset > hull_last)
				continue;
			int64_t g = tensor_floor(m->globals, globals, m->n_globals,
						 last);
			if (g < 0)
				continue;
			const struct ac_tensor *gl = &m->globals[globals[g]];
			if (gl->offset >= pl->offset ||
			    overlaps_from_below(gl, pl)) {
				set_pair(d, AC_PLANE_OVERLAPS_GLOBAL, p, j,
					 AC_NONE, globals[g]);
				return 1;
			}
		}
	}
	return 0;
}

static int check_globals(const struct ac_model *m, const uint32_t *globals,
			 struct ac_diag *d)
{
	d->condition = AC_COND_A;
	if (check_shapes(m, m->globals, m->n_globals, AC_NONE, d,
			 AC_GLOBAL_MISALIGNED, AC_GLOBAL_EMPTY))
		return 1;
	return check_disjoint(m->globals, globals, m->n_globals, AC_NONE, d,
			      AC_GLOBALS_OVERLAP);
}

uint64_t aci_planes_listed(const struct ac_model *m)
{
	uint64_t total = 0;
	for (uint32_t p = 0; p < m->n_phases; p++)
		total += m->phases[p].plane_count;
	return total;
}

/* (B).  order: room for each phase's planes by offset, phase after
 * phase (aci_planes_listed). */
static int check_planes(const struct ac_model *m, const uint32_t *globals,
			uint32_t *order, struct ac_diag *d)
{
	d->condition = AC_COND_B;
	for (uint32_t p = 0; p < m->n_phases; p++) {
		const struct ac_phase *ph = &m->phases[p];
		if (check_shapes(m, phase_planes(m, ph), ph->plane_count,
				 p, d, AC_PLANE_MISALIGNED, AC_PLANE_EMPTY))
			return 1;
	}
	/* one scratch for every phase's sort, sized by the largest: a
	 * phase holds a few planes, and an allocation each cost more than
	 * its sort; the orders are kept, for (C) */
	uint32_t most = 0;
	for (uint32_t p = 0; p < m->n_phases; p++)
		if (m->phases[p].plane_count > most)
			most = m->phases[p].plane_count;
	struct tensor_key small[64], *keys = small;
	if (most > 64 && !(keys = malloc(most * sizeof(*keys))))
		return -1;
	int r = 0;
	for (uint32_t p = 0; p < m->n_phases && r == 0; p++) {
		const struct ac_phase *ph = &m->phases[p];
		const struct ac_tensor *t = phase_planes(m, ph);
		r = order_tensors(t, ph->plane_count, keys, order);
		if (r == 0)
			r = check_disjoint(t, order, ph->plane_count, p, d,
					   AC_PLANES_OVERLAP);
		order += ph->plane_count;
	}
	if (keys != small)
		free(keys);
	if (r)
		return r;
	return check_planes_vs_globals(m, globals, d);
}

int aci_check_layout(const struct ac_model *m, const uint32_t *globals,
		     uint32_t *planes, struct ac_diag *d)
{
	int r = check_globals(m, globals, d);
	if (r == 0)
		r = check_planes(m, globals, planes, d);
	if (r == 0)
		d->condition = AC_CERTIFIED;
	else if (r > 0)
		d->verdict = 1;
	return r;
}
