/* SPDX-License-Identifier: MIT */
/*
 * The honest-kernel program generator (honest.h).
 *
 * Three steps: the plan (globals; which phase declares which value fresh
 * or carried; where each value lies), the launch table phase by phase
 * with its repeat bodies, then a schedule.  Everything goes through the
 * builder (builder.h), and the model handed out is the image read back:
 * exactly what the device is given.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gen.h"
#include "device.h"
#include "honest.h"

#define MAX_PHASES 5
#define MAX_VALUES 20
#define MAX_GLOBALS 3
#define MAX_PLANES 6                  /* a phase declares at most */
#define MAX_TENSORS (MAX_GLOBALS + MAX_PLANES)
#define MAX_BODIES 2
#define MAX_FRAMES 3
#define MAX_PENDING 48                /* deltas or slots of one body */
#define MAX_WORDS 12
#define ALIGN 64                      /* the builder's alignment */

enum { NONE, FRESH, CARRIED };

/* A plane key and the phases that declare it. */
struct value {
	char name[8];
	uint64_t off;
	uint32_t elems;                   /* size: 4 * elems bytes */
	int decl[MAX_PHASES];             /* NONE, FRESH or CARRIED */
	int first, last;                  /* first and last declaring phase */
	int placed;
};

/* What a launch of the current phase may name: a global or a plane. */
struct tensor {
	uint64_t off;
	uint32_t elems;
	int carried, written, read;
};

struct delta_rec {
	uint32_t launch, word;
	int64_t delta;
};

struct slot_rec {
	uint32_t launch, word;
	uint64_t frame[MAX_FRAMES];
};

/* A repeat body: launches [first, first + count), `iters` iterations. */
struct body {
	uint32_t first, count;
	uint64_t iters;
	int frames;                       /* F of its table, if it gets slots */
	int nd, ns;
	struct delta_rec d[MAX_PENDING];
	struct slot_rec s[MAX_PENDING];
};

/* What a launch does with the tensor an address word points into. */
enum { READ, WRITE, IGNORED };

/* A launch being built: for each address word, the tensor it points into,
 * how many f32 the kernel touches from there and how (t NULL: a scalar). */
struct lb {
	uint32_t n;
	uint64_t w[MAX_WORDS];
	const struct tensor *t[MAX_WORDS];
	uint32_t count[MAX_WORDS];
	int role[MAX_WORDS];
};

struct hg {
	struct gen_rng r;
	struct pb *b;
	int nph, nv, ng;
	struct value v[MAX_VALUES];
	struct tensor g[MAX_GLOBALS];
	uint64_t ws_lo, ws_size;
	int bad, victim;                  /* a value placed over another that
					   * is still needed, or -1 */
	int64_t stale;                    /* the launch with a stale pointer */
	uint32_t seg_first[MAX_PHASES], seg_count[MAX_PHASES];
	uint32_t nl;                      /* launches built so far */
	int nbody;
	struct body body[MAX_BODIES];
	/* The current phase: the tensors it names (globals, then its planes)
	 * and other phases' planes that share no byte with its own. */
	int nt, nforeign;
	struct tensor t[MAX_TENSORS];
	struct tensor foreign[MAX_VALUES];
};

static uint64_t below(struct hg *h, uint64_t n)
{
	return gen_rng_below(&h->r, n);
}

static int chance(struct hg *h, int percent)
{
	return (int)below(h, 100) < percent;
}

static uint64_t range(struct hg *h, uint64_t lo, uint64_t hi)
{
	return lo + below(h, hi - lo + 1);
}

static uint32_t min_u32(uint32_t a, uint32_t c)
{
	return a < c ? a : c;
}

/* A plausible f32 in [-2, 2], as the bits a word carries. */
static uint64_t f32_word(struct hg *h)
{
	return f32_bits((float)((int)below(h, 4001) - 2000) / 1000.0f);
}

/* ---- the plan -------------------------------------------------------------- */

static void choose_globals(struct hg *h)
{
	static const char *names[MAX_GLOBALS] = { "resid", "w", "bias" };
	uint64_t at = HONEST_BASE;
	h->ng = (int)range(h, 1, MAX_GLOBALS);
	for (int i = 0; i < h->ng; i++) {
		uint32_t elems = (uint32_t)range(h, 8, 32);
		h->g[i] = (struct tensor){ .off = at, .elems = elems,
					   .written = 1 };
		pb_global(h->b, names[i], at, 4 * elems);
		at += (4 * elems + ALIGN - 1) / ALIGN * ALIGN;
	}
	h->ws_lo = at + (chance(h, 30) ? ALIGN : 0);
}

static int planes_of(const struct hg *h, int phase)
{
	int n = 0;
	for (int i = 0; i < h->nv; i++)
		n += h->v[i].decl[phase] != NONE;
	return n;
}

static void new_value(struct hg *h, int phase)
{
	if (h->nv == MAX_VALUES || planes_of(h, phase) == MAX_PLANES)
		return;
	struct value *v = &h->v[h->nv];
	/* Now and then a name again: keys are (name, offset, size). */
	if (h->nv && chance(h, 10))
		memcpy(v->name, h->v[below(h, (uint64_t)h->nv)].name,
		       sizeof(v->name));
	else
		snprintf(v->name, sizeof(v->name), "v%d", h->nv);
	v->elems = (uint32_t)range(h, 2, 24);
	v->decl[phase] = FRESH;
	h->nv++;
}

/* Phase p declares values produced before it: carried mostly, now and
 * then fresh again (the same key, rewritten). */
static void declare_earlier(struct hg *h, int p)
{
	for (int i = 0; i < h->nv; i++) {
		struct value *v = &h->v[i];
		int born_before = 0;
		for (int q = 0; q < p; q++)
			born_before |= v->decl[q] != NONE;
		if (!born_before || v->decl[p] != NONE ||
		    planes_of(h, p) == MAX_PLANES)
			continue;
		if (chance(h, 35))
			v->decl[p] = CARRIED;
		else if (chance(h, 4))
			v->decl[p] = FRESH;
	}
}

static void choose_declarations(struct hg *h)
{
	for (int p = 0; p < h->nph; p++) {
		declare_earlier(h, p);
		for (int k = (int)range(h, p == 0, 3); k > 0; k--)
			new_value(h, p);
		if (planes_of(h, p) == 0)
			new_value(h, p);
	}
	for (int i = 0; i < h->nv; i++) {
		struct value *v = &h->v[i];
		v->first = -1;
		for (int p = 0; p < h->nph; p++) {
			if (v->decl[p] == NONE)
				continue;
			if (v->first < 0)
				v->first = p;
			v->last = p;
		}
	}
}

/* Their natural lifetimes (first to last declaring phase) meet. */
static int lives_meet(const struct value *a, const struct value *c)
{
	return a->first <= c->last && c->first <= a->last;
}

/* Both are planes of one phase: they must not share a byte, ever (B). */
static int share_phase(const struct hg *h, const struct value *a,
		       const struct value *c)
{
	for (int p = 0; p < h->nph; p++)
		if (a->decl[p] != NONE && c->decl[p] != NONE)
			return 1;
	return 0;
}

static int fits(const struct hg *h, int i, uint64_t off)
{
	const struct value *v = &h->v[i];
	for (int j = 0; j < h->nv; j++) {
		const struct value *o = &h->v[j];
		if (j == i || !o->placed || off >= o->off + 4 * o->elems ||
		    o->off >= off + 4 * v->elems)
			continue;
		if (share_phase(h, o, v) || (i != h->bad && lives_meet(o, v)))
			return 0;
	}
	return 1;
}

/* A planner's classic: value v, born while an older value o is still
 * needed (a phase after v's birth carries o), takes o's place. */
static void choose_bad(struct hg *h)
{
	h->bad = h->victim = -1;
	if (!chance(h, 20))
		return;
	for (int tries = 0; tries < 16; tries++) {
		int i = (int)below(h, (uint64_t)h->nv), j = (int)below(h, (uint64_t)h->nv);
		struct value *v = &h->v[i], *o = &h->v[j];
		if (o->first >= v->first || v->first + 1 >= h->nph ||
		    share_phase(h, o, v))
			continue;
		int q = (int)range(h, (uint64_t)v->first + 1, (uint64_t)h->nph - 1);
		if (v->decl[q] != NONE || o->decl[q] == FRESH ||
		    (o->decl[q] == NONE && planes_of(h, q) == MAX_PLANES))
			continue;
		o->decl[q] = CARRIED;
		if (q > o->last)
			o->last = q;
		h->bad = i;
		h->victim = j;
		return;
	}
}

/* A random place in the workspace, else the first that fits past it. */
static void place_value(struct hg *h, int i)
{
	struct value *v = &h->v[i];
	uint64_t size = 4 * v->elems;
	uint64_t slots = h->ws_size > size ? (h->ws_size - size) / ALIGN + 1 : 1;
	v->placed = 1;
	if (i == h->bad && fits(h, i, h->v[h->victim].off)) {
		v->off = h->v[h->victim].off;
		return;
	}
	for (int tries = 0; tries < 12; tries++) {
		v->off = h->ws_lo + below(h, slots) * ALIGN;
		if (fits(h, i, v->off))
			return;
	}
	for (v->off = h->ws_lo; !fits(h, i, v->off); v->off += ALIGN)
		;
	if (v->off + size > HONEST_BASE + HONEST_SPAN)
		ck_abort_msg("the workspace outgrew the window");
}

/* The workspace is a third of what the values need: reuse is forced. */
static void place_values(struct hg *h)
{
	uint64_t total = 0;
	for (int i = 0; i < h->nv; i++)
		total += 4 * h->v[i].elems;
	h->ws_size = total / 3 > 4 * 24 ? total / 3 : 4 * 24;
	for (int i = 0; i < h->nv; i++)
		place_value(h, i);
}

static void emit_plan(struct hg *h)
{
	pb_window(h->b, HONEST_BASE, HONEST_SPAN);
	for (int p = 0; p < h->nph; p++) {
		char id[16];
		snprintf(id, sizeof(id), "ph%d", p);
		pb_phase(h->b, id);
		for (int i = 0; i < h->nv; i++) {
			const struct value *v = &h->v[i];
			if (v->decl[p] != NONE)
				pb_plane(h->b, v->name, v->off, 4 * v->elems,
					 v->decl[p] == CARRIED);
		}
	}
}

/* ---- the table's shape: phase segments and repeat bodies ----------------------- */

static void choose_segments(struct hg *h)
{
	uint32_t at = 0;
	for (int p = 0; p < h->nph; p++) {
		h->seg_first[p] = at;
		h->seg_count[p] = 2 + (uint32_t)below(h, 4);
		at += h->seg_count[p];
	}
}

static uint32_t table_size(const struct hg *h)
{
	return h->seg_first[h->nph - 1] + h->seg_count[h->nph - 1];
}

static struct body *body_of(struct hg *h, uint32_t launch)
{
	for (int k = 0; k < h->nbody; k++)
		if (launch >= h->body[k].first &&
		    launch < h->body[k].first + h->body[k].count)
			return &h->body[k];
	return NULL;
}

/* Up to two bodies of one to three launches anywhere in the table (across
 * a phase boundary too); a few of 129 iterations, past spec 2 (C)'s
 * per-iteration limit of 128. */
static void choose_bodies(struct hg *h)
{
	uint32_t n = table_size(h);
	int want = chance(h, 45) ? 0 : chance(h, 70) ? 1 : 2;
	for (int tries = 0; h->nbody < want && tries < 8; tries++) {
		uint32_t first = (uint32_t)below(h, n);
		uint32_t count = min_u32((uint32_t)range(h, 1, 3), n - first);
		int clash = 0;
		for (uint32_t l = first; l < first + count; l++)
			clash |= body_of(h, l) != NULL;
		if (clash)
			continue;
		struct body *bd = &h->body[h->nbody++];
		*bd = (struct body){ .first = first, .count = count,
				     .iters = chance(h, 6) ? 129 : range(h, 2, 5),
				     .frames = (int)range(h, 1, MAX_FRAMES) };
	}
}

/* A launch in no body, for the stale pointer. */
static void choose_stale(struct hg *h)
{
	h->stale = -1;
	if (!chance(h, 12))
		return;
	uint32_t l = (uint32_t)below(h, table_size(h));
	if (!body_of(h, l))
		h->stale = l;
}

static void flush_body(struct hg *h, const struct body *bd)
{
	pb_repeat(h->b, bd->first, bd->count, bd->iters);
	for (int k = 0; k < bd->nd; k++)
		pb_delta(h->b, bd->d[k].launch, bd->d[k].word, bd->d[k].delta);
	if (!bd->ns)
		return;
	for (int k = 0; k < bd->ns; k++)
		pb_slot(h->b, bd->s[k].launch, bd->s[k].word);
	for (int f = 0; f < bd->frames; f++) {
		uint64_t values[MAX_PENDING];
		for (int k = 0; k < bd->ns; k++)
			values[k] = bd->s[k].frame[f];
		pb_frame(h->b, values);
	}
}

/* ---- address words ------------------------------------------------------------- */

static void add_delta(struct body *bd, uint32_t launch, uint32_t word,
		      int64_t delta)
{
	if (bd->nd == MAX_PENDING)
		ck_abort_msg("too many deltas");
	bd->d[bd->nd++] = (struct delta_rec){ launch, word, delta };
}

/* A tensor of the current phase with room for `count` f32 that a kernel
 * may write (dst) or read (written already). */
static const struct tensor *alternative(struct hg *h, uint32_t count, int dst)
{
	for (int tries = 0; tries < 8; tries++) {
		const struct tensor *t = &h->t[below(h, (uint64_t)h->nt)];
		if (t->elems >= count && (dst || t->written))
			return t;
	}
	return NULL;
}

/* Frames of a table: each a tensor (maybe another) and a place in it. */
static uint64_t table_word(struct hg *h, struct body *bd, uint32_t launch,
			   uint32_t word, const struct tensor *t,
			   uint32_t count, int dst)
{
	if (bd->ns == MAX_PENDING)
		ck_abort_msg("too many slots");
	struct slot_rec *s = &bd->s[bd->ns++];
	*s = (struct slot_rec){ launch, word, { 0 } };
	for (int f = 0; f < bd->frames; f++) {
		/* Frames in other tensors: honest, but (C) takes the hull of
		 * a table's values, which then spans several tensors. */
		const struct tensor *a = f && chance(h, 20) ?
			alternative(h, count, dst) : t;
		if (!a)
			a = t;
		s->frame[f] = a->off + 4 * below(h, a->elems - count + 1);
	}
	if (chance(h, 15))
		add_delta(bd, launch, word, 0);   /* named by a delta, D = 0 */
	return s->frame[0];
}

/* Walks `step` elements an iteration, up or down, inside the tensor; the
 * step is sometimes the sum of two deltas. */
static uint64_t walking_word(struct hg *h, struct body *bd, uint32_t launch,
			     uint32_t word, const struct tensor *t,
			     uint32_t count)
{
	uint64_t room = t->elems - count, span_per = room / (bd->iters - 1);
	uint64_t step = range(h, 1, span_per), span = step * (bd->iters - 1);
	uint64_t start = below(h, room - span + 1);
	int64_t delta = 4 * (int64_t)step;
	if (chance(h, 50)) {
		start += span;
		delta = -delta;
	}
	if (chance(h, 25)) {
		int64_t part = (int64_t)range(h, 0, 128) - 64;
		add_delta(bd, launch, word, part);
		delta -= part;
	}
	add_delta(bd, launch, word, delta);
	return t->off + 4 * start;
}

/* The value of an address word for `count` f32 of tensor t: inside t at
 * every iteration of its body, if it is in one. */
static uint64_t address_word(struct hg *h, uint32_t launch, uint32_t word,
			     const struct tensor *t, uint32_t count, int dst)
{
	struct body *bd = body_of(h, launch);
	if (bd && chance(h, 20))
		return table_word(h, bd, launch, word, t, count, dst);
	if (bd && (t->elems - count) / (bd->iters - 1) >= 1 && chance(h, 60))
		return walking_word(h, bd, launch, word, t, count);
	if (bd && chance(h, 10))
		add_delta(bd, launch, word, 0);
	return t->off + 4 * (chance(h, 60) ? 0 : below(h, t->elems - count + 1));
}

/* ---- kernels ------------------------------------------------------------------- */

static void scalar(struct lb *l, uint64_t x)
{
	if (l->n == MAX_WORDS)
		ck_abort_msg("too many words");
	l->t[l->n] = NULL;
	l->w[l->n++] = x;
}

static void addr(struct lb *l, const struct tensor *t, uint32_t count, int role)
{
	if (l->n == MAX_WORDS)
		ck_abort_msg("too many words");
	l->t[l->n] = t;
	l->count[l->n] = count;
	l->role[l->n++] = role;
}

/* Up to cap elements, often all of them. */
static uint32_t count_upto(struct hg *h, uint32_t cap)
{
	return chance(h, 60) ? cap : (uint32_t)range(h, 1, cap);
}

/* The first unwritten fresh plane, else any tensor of the phase. */
static struct tensor *pick_dst(struct hg *h)
{
	for (int i = 0; i < h->nt; i++)
		if (!h->t[i].written)
			return &h->t[i];
	return &h->t[below(h, (uint64_t)h->nt)];
}

/* A tensor the phase may read; unread carried planes first, so that a
 * value that did not survive shows.  The stale launch reads another
 * phase's plane instead. */
static const struct tensor *pick_src(struct hg *h)
{
	if ((int64_t)h->nl == h->stale && h->nforeign) {
		h->stale = -2;                    /* done */
		return &h->foreign[below(h, (uint64_t)h->nforeign)];
	}
	for (int i = 0; i < h->nt; i++)
		if (h->t[i].carried && !h->t[i].read && chance(h, 70))
			return &h->t[i];
	struct tensor *t;
	do
		t = &h->t[below(h, (uint64_t)h->nt)];
	while (!t->written);
	return t;
}

static void k_elementwise(struct hg *h, struct lb *l, const struct tensor *d,
			  uint64_t kernel, int inputs)
{
	const struct tensor *x = pick_src(h);
	const struct tensor *y = inputs == 2 ? pick_src(h) : x;
	uint32_t n = count_upto(h, min_u32(d->elems, min_u32(x->elems, y->elems)));
	scalar(l, kernel);
	addr(l, d, n, WRITE);
	addr(l, x, n, READ);
	if (inputs == 2)
		addr(l, y, n, READ);
	scalar(l, n);
}

/* A plane's first write fills all of it: fewer NaN from poison to hide
 * the values that matter. */
static void k_fill(struct hg *h, struct lb *l, const struct tensor *d)
{
	uint32_t n = d->written ? count_upto(h, d->elems) : d->elems;
	scalar(l, ARENA_K_FILL);
	addr(l, d, n, WRITE);
	scalar(l, n);
	scalar(l, f32_word(h));
}

static void k_softmax(struct hg *h, struct lb *l, const struct tensor *d)
{
	const struct tensor *x = pick_src(h);
	uint32_t all = count_upto(h, min_u32(d->elems, x->elems));
	uint32_t cols = (uint32_t)range(h, 1, min_u32(all, 8)), rows = all / cols;
	scalar(l, ARENA_K_SOFTMAX);
	addr(l, d, rows * cols, WRITE);
	addr(l, x, rows * cols, READ);
	scalar(l, rows);
	scalar(l, cols);
	scalar(l, f32_word(h));
}

static void k_layernorm(struct hg *h, struct lb *l, const struct tensor *d)
{
	const struct tensor *x = pick_src(h), *gamma = pick_src(h),
			    *beta = pick_src(h);
	uint32_t most = min_u32(d->elems, x->elems);
	uint32_t cols = (uint32_t)range(h, 1, min_u32(min_u32(most, 8),
			 min_u32(gamma->elems, beta->elems)));
	uint32_t rows = (uint32_t)range(h, 1, most / cols);
	scalar(l, ARENA_K_LAYERNORM);
	addr(l, d, rows * cols, WRITE);
	addr(l, x, rows * cols, READ);
	addr(l, gamma, cols, READ);
	addr(l, beta, cols, READ);
	scalar(l, rows);
	scalar(l, cols);
}

static void k_matmul(struct hg *h, struct lb *l, const struct tensor *d)
{
	const struct tensor *x = pick_src(h), *w = pick_src(h);
	uint32_t k = (uint32_t)range(h, 1, min_u32(min_u32(x->elems, w->elems), 4));
	uint32_t m = (uint32_t)range(h, 1, min_u32(min_u32(d->elems, x->elems / k), 4));
	uint32_t n = (uint32_t)range(h, 1, min_u32(min_u32(d->elems / m, w->elems / k), 4));
	scalar(l, ARENA_K_MATMUL);
	addr(l, d, m * n, WRITE);
	addr(l, x, m * k, READ);
	addr(l, w, k * n, READ);
	scalar(l, m);
	scalar(l, k);
	scalar(l, n);
	scalar(l, below(h, 2));
}

static void kernel_words(struct hg *h, struct lb *l, const struct tensor *d)
{
	switch (!d->written && chance(h, 50) ? 0 : below(h, 8)) {
	case 0: k_fill(h, l, d); break;
	case 1: k_elementwise(h, l, d, ARENA_K_COPY, 1); break;
	case 2: k_elementwise(h, l, d, ARENA_K_GELU, 1); break;
	case 3: k_elementwise(h, l, d, ARENA_K_ADD, 2); break;
	case 4: k_elementwise(h, l, d, ARENA_K_MUL, 2); break;
	case 5: k_softmax(h, l, d); break;
	case 6: k_layernorm(h, l, d); break;
	default: k_matmul(h, l, d); break;
	}
	/* Words past the kernel's layout: ignored by the device, but still
	 * checked by (C) and moved by the relocation. */
	for (int k = chance(h, 20) ? (int)range(h, 1, 2) : 0; k > 0; k--) {
		if (chance(h, 70))
			addr(l, &h->t[below(h, (uint64_t)h->nt)], 1, IGNORED);
		else
			scalar(l, below(h, 1u << 20));
	}
}

/* Marks what the launch reads and writes, then gives it its words. */
static void emit_launch(struct hg *h, int phase, struct lb *l)
{
	char id[16];
	snprintf(id, sizeof(id), "ph%d", phase);
	for (uint32_t i = 0; i < l->n; i++) {
		struct tensor *t = (struct tensor *)l->t[i];
		if (!t)
			continue;
		l->w[i] = address_word(h, h->nl, i, t, l->count[i],
				       l->role[i] != READ);
		if (l->role[i] == WRITE)
			t->written = 1;
		if (l->role[i] == READ)
			t->read = 1;
	}
	pb_launch(h->b, id, l->n, l->w);
	struct body *bd = body_of(h, h->nl);
	h->nl++;
	if (bd && h->nl == bd->first + bd->count)
		flush_body(h, bd);
}

/* ---- the launch table ---------------------------------------------------------- */

static int bytes_meet(uint64_t a, uint64_t an, uint64_t c, uint64_t cn)
{
	return a < c + cn && c < a + an;
}

/* The tensors phase p names, and the planes of others it could point at
 * by mistake without landing in one of its own. */
static void phase_tensors(struct hg *h, int p)
{
	h->nt = h->nforeign = 0;
	for (int i = 0; i < h->ng; i++)
		h->t[h->nt++] = h->g[i];
	for (int i = 0; i < h->nv; i++) {
		const struct value *v = &h->v[i];
		if (v->decl[p] != NONE)
			h->t[h->nt++] = (struct tensor){
				.off = v->off, .elems = v->elems,
				.carried = v->decl[p] == CARRIED,
				.written = v->decl[p] == CARRIED };
	}
	for (int i = 0; i < h->nv; i++) {
		const struct value *v = &h->v[i];
		int clear = v->decl[p] == NONE;
		for (int j = h->ng; j < h->nt && clear; j++)
			clear = !bytes_meet(v->off, 4 * v->elems, h->t[j].off,
					    4 * h->t[j].elems);
		if (clear)
			h->foreign[h->nforeign++] = (struct tensor){
				.off = v->off, .elems = v->elems, .written = 1 };
	}
}

/* Each fresh plane is written before it is read; the phase's last launch
 * writes a global, so that what the phase computed reaches the output. */
static void phase_launches(struct hg *h, int p)
{
	phase_tensors(h, p);
	for (uint32_t k = 0; k < h->seg_count[p]; k++) {
		struct lb l = { 0 };
		const struct tensor *d = k + 1 < h->seg_count[p] ? pick_dst(h) :
			&h->t[below(h, (uint64_t)h->ng)];
		kernel_words(h, &l, d);
		emit_launch(h, p, &l);
	}
}

/* ---- the schedule -------------------------------------------------------------- */

/* x moved out of any body (a reference never cuts one, spec 1.3). */
static uint32_t snap(struct hg *h, uint32_t x, int up)
{
	for (int k = 0; k < h->nbody; k++) {
		const struct body *bd = &h->body[k];
		if (x > bd->first && x < bd->first + bd->count)
			return up ? bd->first + bd->count : bd->first;
	}
	return x;
}

static void ref(struct hg *h, uint32_t a, uint32_t b)
{
	a = snap(h, a, 0);
	b = snap(h, b, 1);
	if (b > a)
		pb_ref(h->b, a, b - a);
}

/* The table in order, in one to four references: the natural run. */
static void natural(struct hg *h)
{
	uint32_t at = 0, n = table_size(h);
	for (int k = (int)below(h, 4); k > 0 && at < n; k--) {
		uint32_t cut = snap(h, (uint32_t)range(h, at, n), 1);
		ref(h, at, cut);
		at = cut;
	}
	ref(h, at, n);
}

/* Phases from a to b, whole. */
static void phases(struct hg *h, int a, int b)
{
	ref(h, h->seg_first[a], h->seg_first[b] + h->seg_count[b]);
}

static int some_phase(struct hg *h)
{
	return (int)below(h, (uint64_t)h->nph);
}

/* Natural runs (about half), the natural run with a phase again (right
 * after itself: one longer instance; or later), or references at random:
 * whole phases out of order, or any launches. */
static void choose_schedule(struct hg *h)
{
	int kind = (int)below(h, 100);
	if (kind < 35) {
		natural(h);
	} else if (kind < 50) {
		int p = some_phase(h);
		phases(h, 0, p);
		if (chance(h, 50))
			phases(h, p, p);
		phases(h, chance(h, 50) ? p : 0, h->nph - 1);
		if (chance(h, 30))
			phases(h, some_phase(h), h->nph - 1);
	} else {
		for (int k = (int)range(h, 1, 6); k > 0; k--) {
			int a = some_phase(h), b = some_phase(h);
			uint32_t x = (uint32_t)below(h, table_size(h));
			if (chance(h, 60))
				phases(h, a < b ? a : b, a < b ? b : a);
			else
				ref(h, x, x + 1 + (uint32_t)below(h, table_size(h) - x));
		}
	}
}

/* ---- the program --------------------------------------------------------------- */

struct ac_model *honest_program(struct pb *b, uint64_t seed, uint64_t index)
{
	struct hg *h = calloc(1, sizeof(*h));
	ck_assert_ptr_nonnull(h);
	gen_rng_seed(&h->r, seed ^ (index * 0x9E3779B97F4A7C15ull));
	pb_reset(b);
	h->b = b;
	h->nph = (int)range(h, 2, MAX_PHASES);
	choose_globals(h);
	choose_declarations(h);
	choose_bad(h);
	place_values(h);
	emit_plan(h);
	choose_segments(h);
	choose_bodies(h);
	choose_stale(h);
	for (int p = 0; p < h->nph; p++)
		phase_launches(h, p);
	choose_schedule(h);
	struct ac_model *m = pb_read_back(h->b);
	free(h);
	return m;
}
