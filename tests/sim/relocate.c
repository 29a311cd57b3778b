/* SPDX-License-Identifier: MIT */
/*
 * The relocation (relocate.h).  It reads a program through the model and
 * libarenacert's spec 1.2 helpers alone (a launch's phase, its repeat,
 * V(t)), never through what generated it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arenaguard/certify.h>

#include "relocate.h"

int same_key(const struct ac_tensor *a, const struct ac_tensor *b)
{
	return a->offset == b->offset && a->size == b->size &&
	       a->name.len == b->name.len &&
	       (a->name.len == 0 ||
		memcmp(a->name.data, b->name.data, a->name.len) == 0);
}

struct ctx {
	const struct ac_model *m;
	const ac_program *prog;
	struct relocation *r;
	char *why;
	size_t len;
};

static int refuse(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, c->len, fmt, ap);
	va_end(ap);
	return -1;
}

/* Private ranges, key by key in order of first appearance. */
static int place_keys(struct ctx *c, uint64_t base)
{
	const struct ac_model *m = c->m;
	uint64_t grain = m->alignment > 64 ? m->alignment : 64;
	uint64_t at = base;
	c->r->end = base;
	for (uint32_t i = 0; i < m->n_planes; i++) {
		uint32_t k = 0;
		while (!same_key(&m->planes[k], &m->planes[i]))
			k++;
		if (k < i) {
			c->r->planes[i].offset = c->r->planes[k].offset;
			continue;
		}
		at = (at + grain - 1) / grain * grain;
		if (at < base || m->planes[i].size > UINT64_MAX - grain - at)
			return refuse(c, "planes[%u]: no room above 0x%llx", i,
				      (unsigned long long)base);
		c->r->planes[i].offset = at;
		c->r->end = at + m->planes[i].size;
		at = c->r->end + grain;
	}
	return 0;
}

/* The plane of `phase` (an index into m->planes) holding `v`, or -1. */
static int64_t plane_at(const struct ac_model *m, uint64_t phase,
			struct ac_wide v)
{
	const struct ac_phase *ph = &m->phases[phase];
	for (uint32_t i = ph->plane_first; i < ph->plane_first + ph->plane_count; i++)
		if (v.high == 0 && v.low - m->planes[i].offset < m->planes[i].size)
			return i;
	return -1;
}

/*
 * Moves one source of word w of launch l: its values are V(t) for the
 * ordinals t = t0, t0 + step, ... below n.  All in one plane of the
 * launch's phase: moved with its key; in none: left alone.
 */
static int move_source(struct ctx *c, uint64_t phase, uint64_t l, uint64_t w,
		       uint64_t t0, uint64_t step, uint64_t n, uint64_t *value)
{
	if (t0 >= n)
		return 0;
	int64_t at = plane_at(c->m, phase,
			      ac_program_word_value(c->prog, l, w, t0));
	for (uint64_t t = t0 + step; t < n; t += step) {
		int64_t here = plane_at(c->m, phase,
					ac_program_word_value(c->prog, l, w, t));
		if (here != at)
			return refuse(c, "launch %llu word %llu: ordinal %llu "
				      "lies in plane %lld, ordinal %llu in %lld",
				      (unsigned long long)l, (unsigned long long)w,
				      (unsigned long long)t0, (long long)at,
				      (unsigned long long)t, (long long)here);
	}
	if (at >= 0)
		*value += c->r->planes[at].offset - c->m->planes[at].offset;
	return 0;
}

/* The slot (index within repeat r's slots) naming (l, w), or -1. */
static int64_t slot_of(const struct ac_model *m, const struct ac_repeat *r,
		       uint64_t l, uint64_t w)
{
	for (uint32_t s = 0; s < r->slot_count; s++) {
		const struct ac_slot *sl = &m->slots[r->slot_first + s];
		if (sl->launch == l && sl->word == w)
			return s;
	}
	return -1;
}

static int move_word(struct ctx *c, uint64_t l, uint64_t w)
{
	const struct ac_model *m = c->m;
	uint64_t phase = ac_program_launch_phase(c->prog, l);
	uint64_t rep = ac_program_repeat_of(c->prog, l);
	uint64_t *word = &c->r->words[m->launches[l].word_first + w];
	if (phase == AC_NONE)
		return 0;
	if (rep == AC_NONE)
		return move_source(c, phase, l, w, 0, 1, 1, word);
	const struct ac_repeat *r = &m->repeats[rep];
	int64_t s = slot_of(m, r, l, w);
	if (s < 0)
		return move_source(c, phase, l, w, 0, 1, r->iterations, word);
	for (uint64_t f = 0; f < r->frame_count; f++) {
		uint64_t *frame = &c->r->frame_values[r->frame_value_first +
						      f * r->slot_count + (uint64_t)s];
		if (move_source(c, phase, l, w, f, r->frame_count,
				r->iterations, frame))
			return -1;
	}
	return 0;
}

static void *copy_of(const void *src, size_t n, size_t size)
{
	void *p = calloc(n + 1, size);
	if (p && n)
		memcpy(p, src, n * size);
	return p;
}

int relocate(const struct ac_model *m, uint64_t base, struct relocation *out,
	     char *why, size_t len)
{
	memset(out, 0, sizeof(*out));
	struct ctx c = { .m = m, .r = out, .why = why, .len = len };
	struct ac_error err;
	ac_program *prog = ac_program_new(m, &err);
	if (!prog)
		return refuse(&c, "malformed: %s: %s", err.where, err.message);
	c.prog = prog;
	out->windows = copy_of(m->windows, m->n_windows, sizeof(*m->windows));
	out->planes = copy_of(m->planes, m->n_planes, sizeof(*m->planes));
	out->words = copy_of(m->words, m->n_words, sizeof(*m->words));
	out->frame_values = copy_of(m->frame_values, m->n_frame_values,
				    sizeof(*m->frame_values));
	int rc = !out->windows || !out->planes || !out->words ||
		 !out->frame_values ? refuse(&c, "out of memory") :
		 place_keys(&c, base);
	for (uint32_t l = 0; l < m->n_launches && !rc; l++)
		for (uint32_t w = 0; w < m->launches[l].word_count && !rc; w++)
			rc = move_word(&c, l, w);
	ac_program_free(prog);
	out->model = *m;
	if (rc)
		return rc;
	if (out->end > base)
		out->windows[out->model.n_windows++] = (struct ac_window){
			{ NULL, 0 }, base, out->end - base };
	out->model.windows = out->windows;
	out->model.planes = out->planes;
	out->model.words = out->words;
	out->model.frame_values = out->frame_values;
	return 0;
}

void relocation_free(struct relocation *r)
{
	free(r->windows);
	free(r->planes);
	free(r->words);
	free(r->frame_values);
}
