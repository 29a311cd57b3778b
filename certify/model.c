/* SPDX-License-Identifier: MIT */
/* Ownership of reader-built models and error text (the format dispatch
 * is format.c's). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"

int aci_fail(struct ac_error *err, const char *where, const char *fmt, ...)
{
	if (!err)
		return -1;
	snprintf(err->where, sizeof(err->where), "%s", where ? where : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return -1;
}

const char *ac_error_text(const struct ac_error *err, char *buf, size_t len)
{
	if (err->where[0])
		snprintf(buf, len, "%s: %s", err->where, err->message);
	else
		snprintf(buf, len, "%s", err->message);
	return buf;
}

const struct ac_tensor *aci_model_tensor(const struct ac_model *m,
					 struct ac_tensor_ref r)
{
	if (r.phase == AC_NONE)
		return r.index < m->n_globals ? &m->globals[r.index] : NULL;
	if (r.phase >= m->n_phases)
		return NULL;
	const struct ac_phase *p = &m->phases[r.phase];
	if (r.index >= p->plane_count ||
	    (uint64_t)p->plane_first + r.index >= m->n_planes)
		return NULL;
	return &m->planes[p->plane_first + r.index];
}

struct model_owned *aci_model_owned_new(void)
{
	return calloc(1, sizeof(struct model_owned));
}

/* Adds n elements of size sz, aligned to 8, to *total; 0 on overflow. */
static int reserve(uint64_t *total, uint64_t n, uint64_t sz, uint64_t *at)
{
	if (n > (UINT64_MAX / 2) / sz)
		return 0;
	*at = (*total + 7) & ~(uint64_t)7;
	if (*at > UINT64_MAX / 2 - n * sz)
		return 0;
	*total = *at + n * sz;
	return 1;
}

/* The count of an array, or 0 when the model borrows it. */
static uint64_t owned(uint64_t n, unsigned borrow, unsigned which)
{
	return borrow & which ? 0 : n;
}

static int alloc_arrays(struct model_owned *o, unsigned borrow, int zero,
			struct ac_error *err)
{
	struct ac_model *m = &o->m;
	struct { uint64_t n, sz, at; } t[] = {
		{ m->n_windows, sizeof(struct ac_window), 0 },
		{ m->n_globals, sizeof(struct ac_tensor), 0 },
		{ m->n_phases, sizeof(struct ac_phase), 0 },
		{ m->n_planes, sizeof(struct ac_tensor), 0 },
		{ m->n_launches, sizeof(struct ac_launch), 0 },
		{ owned(m->n_words, borrow, BORROW_WORDS), sizeof(uint64_t), 0 },
		{ m->n_repeats, sizeof(struct ac_repeat), 0 },
		{ m->n_deltas, sizeof(struct ac_delta), 0 },
		{ m->n_slots, sizeof(struct ac_slot), 0 },
		{ owned(m->n_frame_values, borrow, BORROW_FRAME_VALUES),
		  sizeof(uint64_t), 0 },
		{ owned(m->n_refs, borrow, BORROW_REFS), sizeof(struct ac_ref), 0 },
		{ owned(o->bytes_len, borrow, BORROW_BYTES), 1, 0 },
	};
	uint64_t total = 0;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!reserve(&total, t[i].n, t[i].sz, &t[i].at))
			return aci_fail(err, "", "program too large to hold in memory");
	if (total > SIZE_MAX)
		return aci_fail(err, "", "program too large to hold in memory");
	uint8_t *b = zero ? aci_big_calloc(1, (size_t)total)
			  : aci_big_alloc(1, (size_t)total);
	if (!b)
		return aci_fail(err, "", "out of memory (%llu bytes)",
				(unsigned long long)total);
	o->block = b;
	o->block_len = total;
	m->windows = (void *)(b + t[0].at);
	m->globals = (void *)(b + t[1].at);
	m->phases = (void *)(b + t[2].at);
	m->planes = (void *)(b + t[3].at);
	m->launches = (void *)(b + t[4].at);
	m->words = (void *)(b + t[5].at);
	m->repeats = (void *)(b + t[6].at);
	m->deltas = (void *)(b + t[7].at);
	m->slots = (void *)(b + t[8].at);
	m->frame_values = (void *)(b + t[9].at);
	m->refs = (void *)(b + t[10].at);
	o->bytes = b + t[11].at;
	return 0;
}

int aci_model_owned_alloc(struct model_owned *o, unsigned borrow,
			  struct ac_error *err)
{
	return alloc_arrays(o, borrow, 1, err);
}

int aci_model_owned_alloc_raw(struct model_owned *o, unsigned borrow,
			      struct ac_error *err)
{
	return alloc_arrays(o, borrow, 0, err);
}

void ac_model_free(struct ac_model *model)
{
	if (!model)
		return;
	struct model_owned *o = (struct model_owned *)model;
	aci_big_free(o->block);
	free(o->words_block);
	free(o);
}

int aci_model_is_image(const void *data, size_t len)
{
	return len >= AC_IMAGE_MAGIC_LEN &&
	       memcmp(data, AC_IMAGE_MAGIC, AC_IMAGE_MAGIC_LEN) == 0;
}

