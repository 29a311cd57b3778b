/* SPDX-License-Identifier: MIT */
/*
 * report_live.c - boxes of live plane values (see report_live.h).
 */
#include <stdlib.h>
#include <string.h>

#include <arenaguard/certify.h>

#include "common/partition.h"   /* AC_PARTITION, the one binary search */
#include "report_live.h"

#define NONE32 UINT32_MAX

struct live {
	const struct ac_model *m;
	live_close_fn *close;
	void *ctx;

	uint32_t n_keys;
	uint32_t *key_of;      /* per plane */
	uint64_t *key_plane;   /* per key: a plane with it */
	uint32_t *seg_first;   /* per key: its elementary intervals ... */
	uint32_t *seg_end;     /* ... [first, end) */

	uint32_t *owner;       /* per elementary interval: key, or NONE32 */
	uint32_t *open;        /* per key: its open box, or NONE32 */

	struct live_box *boxes;
	uint32_t n_boxes, cap_boxes;
	uint32_t *free_list;
	uint32_t n_free;
};

static const struct ac_model *sort_model;

static int cmp_bytes(struct ac_bytes a, struct ac_bytes b)
{
	uint32_t n = a.len < b.len ? a.len : b.len;
	int c = n ? memcmp(a.data, b.data, n) : 0;
	if (c)
		return c;
	return (a.len > b.len) - (a.len < b.len);
}

/* Planes by key: offset, size, name. */
static int cmp_plane(const void *pa, const void *pb)
{
	const struct ac_tensor *a = &sort_model->planes[*(const uint32_t *)pa];
	const struct ac_tensor *b = &sort_model->planes[*(const uint32_t *)pb];
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	return cmp_bytes(a->name, b->name);
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return (a > b) - (a < b);
}

/* Index of the elementary interval holding v: last position <= v. */
static uint32_t find_seg(const uint64_t *pos, uint32_t n, uint64_t v)
{
	uint32_t above;
	AC_PARTITION(uint32_t, above, n, i, pos[i] <= v);
	return above ? above - 1 : 0;
}

/* Keys, and each key's elementary intervals. */
static int build_keys(struct live *l)
{
	const struct ac_model *m = l->m;
	uint32_t n = m->n_planes;
	uint32_t *order = malloc(((size_t)n + 1) * sizeof(*order));
	uint64_t *pos = malloc(((size_t)2 * n + 1) * sizeof(*pos));
	l->key_of = malloc(((size_t)n + 1) * sizeof(*l->key_of));
	l->key_plane = malloc(((size_t)n + 1) * sizeof(*l->key_plane));
	l->seg_first = malloc(((size_t)n + 1) * sizeof(*l->seg_first));
	l->seg_end = malloc(((size_t)n + 1) * sizeof(*l->seg_end));
	if (!order || !pos || !l->key_of || !l->key_plane || !l->seg_first ||
	    !l->seg_end) {
		free(order);
		free(pos);
		return -1;
	}
	uint32_t n_pos = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct ac_tensor *t = &m->planes[i];
		order[i] = i;
		pos[n_pos++] = t->offset;
		if (t->size && t->size - 1 < UINT64_MAX - t->offset)
			pos[n_pos++] = t->offset + t->size;
	}
	sort_model = m;
	qsort(order, n, sizeof(*order), cmp_plane);
	qsort(pos, n_pos, sizeof(*pos), cmp_u64);
	uint32_t uniq = 0;
	for (uint32_t i = 0; i < n_pos; i++)
		if (uniq == 0 || pos[i] != pos[uniq - 1])
			pos[uniq++] = pos[i];

	for (uint32_t i = 0; i < n; i++) {
		if (i == 0 || cmp_plane(&order[i - 1], &order[i]) != 0) {
			const struct ac_tensor *t = &m->planes[order[i]];
			uint32_t k = l->n_keys++;
			l->key_plane[k] = order[i];
			l->seg_first[k] = l->seg_end[k] = 0;
			if (t->size) {
				l->seg_first[k] = find_seg(pos, uniq, t->offset);
				l->seg_end[k] = find_seg(pos, uniq,
					t->offset + (t->size - 1)) + 1;
			}
		}
		l->key_of[order[i]] = l->n_keys - 1;
	}
	free(order);
	free(pos);
	l->owner = malloc(((size_t)uniq + 1) * sizeof(*l->owner));
	l->open = malloc(((size_t)l->n_keys + 1) * sizeof(*l->open));
	if (!l->owner || !l->open)
		return -1;
	memset(l->owner, 0xff, ((size_t)uniq + 1) * sizeof(*l->owner));
	memset(l->open, 0xff, ((size_t)l->n_keys + 1) * sizeof(*l->open));
	return 0;
}

struct live *live_new(const struct ac_model *m, live_close_fn *close,
		      void *ctx)
{
	struct live *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->m = m;
	l->close = close;
	l->ctx = ctx;
	if (build_keys(l) != 0) {
		live_free(l);
		return NULL;
	}
	return l;
}

void live_free(struct live *l)
{
	if (!l)
		return;
	free(l->key_of);
	free(l->key_plane);
	free(l->seg_first);
	free(l->seg_end);
	free(l->owner);
	free(l->open);
	free(l->boxes);
	free(l->free_list);
	free(l);
}

uint32_t live_keys(const struct live *l)
{
	return l->n_keys;
}

uint32_t live_key_of(const struct live *l, uint64_t plane)
{
	return l->key_of[plane];
}

uint64_t live_key_plane(const struct live *l, uint32_t key)
{
	return l->key_plane[key];
}

static void end_box(struct live *l, uint32_t b)
{
	l->close(l->ctx, &l->boxes[b]);
	l->open[l->boxes[b].key] = NONE32;
	l->free_list[l->n_free++] = b;
}

static uint32_t new_box(struct live *l, uint32_t key, uint32_t flags,
			uint64_t column)
{
	uint32_t b;
	if (l->n_free) {
		b = l->free_list[--l->n_free];
	} else {
		if (l->n_boxes == l->cap_boxes) {
			uint32_t cap = l->cap_boxes ? 2 * l->cap_boxes : 256;
			struct live_box *nb = realloc(l->boxes, cap * sizeof(*nb));
			uint32_t *nf = realloc(l->free_list, cap * sizeof(*nf));
			if (nb)
				l->boxes = nb;
			if (nf)
				l->free_list = nf;
			if (!nb || !nf)
				return NONE32;
			l->cap_boxes = cap;
		}
		b = l->n_boxes++;
	}
	l->boxes[b] = (struct live_box){ key, flags, column, column };
	l->open[key] = b;
	return b;
}

/*
 * Gives the key's bytes to it, ending the boxes of other keys there.  A
 * box this same instance declared stays: planes of one phase overlap
 * only when (B) fails, and then both should be seen.
 */
static void take(struct live *l, uint32_t key, uint64_t column)
{
	for (uint32_t s = l->seg_first[key]; s < l->seg_end[key]; s++) {
		uint32_t o = l->owner[s];
		if (o != NONE32 && o != key && l->open[o] != NONE32 &&
		    l->boxes[l->open[o]].last != column)
			end_box(l, l->open[o]);
		l->owner[s] = key;
	}
}

static int declare(struct live *l, const struct ac_tensor *t, uint32_t key,
		   uint64_t column)
{
	uint32_t b = l->open[key];
	if (t->carried && b != NONE32) {
		l->boxes[b].last = column;
		l->boxes[b].flags |= LIVE_USED;
		return 0;
	}
	if (b != NONE32)
		end_box(l, b);
	uint32_t flags = t->carried ? LIVE_CARRIED | LIVE_BROKEN : 0;
	if (new_box(l, key, flags, column) == NONE32)
		return -1;
	take(l, key, column);
	return 0;
}

int live_declare(struct live *l, uint64_t phase, uint64_t column)
{
	if (phase == AC_NONE || phase >= l->m->n_phases)
		return 0;
	const struct ac_phase *p = &l->m->phases[phase];
	for (uint32_t i = 0; i < p->plane_count; i++) {
		uint64_t plane = (uint64_t)p->plane_first + i;
		if (declare(l, &l->m->planes[plane], l->key_of[plane], column) != 0)
			return -1;
	}
	return 0;
}

void live_finish(struct live *l)
{
	for (uint32_t k = 0; k < l->n_keys; k++)
		if (l->open[k] != NONE32)
			end_box(l, l->open[k]);
}
