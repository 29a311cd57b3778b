/* SPDX-License-Identifier: MIT */
/*
 * The audit's catchable bug classes as programs (audit.h).  Each program
 * is written once, by a function of the plan: where each workspace value
 * lies comes from a table (the right plan's offset, the buggy plan's; the
 * private plan packs every value into bytes of its own), and the few
 * differences of structure (a copy left out, a word computed another
 * way) are said where they happen.
 *
 * The derivations follow the spec (shared/spec/certificate.md): n is the
 * number of launches as written (a repeat's body once), instances are
 * numbered as (D) numbers them, k = 0, 1, ...; a verdict is 2 + i for
 * (C) at launch i, 2 + n + k for (D) at instance k.  Every buggy plan
 * satisfies (A) and (B) (its globals and each phase's planes are aligned,
 * non-empty and pairwise disjoint: the tables show it), and (C) unless
 * said otherwise: each word is a kernel number, a count or f32 bits below
 * 0x10000 or above 0x20000, or an address inside a global or a plane of
 * its launch's phase.  Where the spec allows several intervening
 * instances, libarenacert names the first (certify/schedule.c).
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arenaguard/uapi.h>

#include "../sim/builder.h"
#include "../sim/device.h"
#include "audit.h"

#define WS 0x10000ull          /* the window, and the workspace in it */
#define WS_SIZE 0x10000ull
#define G 0x18000ull           /* the globals */
#define ALIGN 0x40ull          /* the plan's alignment (pb_new's) */
#define MAT 0x40ull            /* a 4 x 4 f32 matrix */
#define MAT_FLOATS 16
#define ROWS2 0x20ull          /* two of its rows */
#define NONE { AC_NONE, AC_NONE }

/* A workspace value: its size and where each plan puts it (from WS). */
struct value {
	const char *name;
	uint64_t size, right, buggy;
};

struct plan {
	struct pb *b;
	enum audit_plan plan;
	const struct value *values;
	size_t n_values;
	uint64_t next_global;
};

#define START(plan, values) \
	start(plan, values, sizeof(values) / sizeof(values[0]))

static struct plan start(enum audit_plan plan, const struct value *values,
			 size_t n_values)
{
	struct plan p = { pb_new(), plan, values, n_values, G };
	pb_window(p.b, WS, WS_SIZE);
	return p;
}

static uint64_t aligned(uint64_t size)
{
	return (size + ALIGN - 1) & ~(ALIGN - 1);
}

/* The value's address under the plan, and its size. */
static uint64_t place(const struct plan *p, const char *name, uint64_t *size)
{
	uint64_t packed = 0;
	for (size_t i = 0; i < p->n_values; i++) {
		const struct value *v = &p->values[i];
		if (!strcmp(v->name, name)) {
			*size = v->size;
			return WS + (p->plan == AUDIT_PRIVATE ? packed
				     : p->plan == AUDIT_BUGGY ? v->buggy
							       : v->right);
		}
		packed += aligned(v->size);
	}
	ck_abort_msg("no workspace value '%s'", name);
	return 0;
}

static uint64_t at(const struct plan *p, const char *name)
{
	uint64_t size;
	return place(p, name, &size);
}

/* A global after the last one; its address. */
static uint64_t global(struct plan *p, const char *name, uint64_t size)
{
	uint64_t address = p->next_global;
	pb_global(p->b, name, address, size);
	p->next_global += aligned(size);
	return address;
}

/* A phase and its planes: value names, NULL-terminated, a carried one
 * marked with a '*' after its name. */
static void phase(const struct plan *p, const char *identity, ...)
{
	pb_phase(p->b, identity);
	va_list ap;
	va_start(ap, identity);
	for (const char *s; (s = va_arg(ap, const char *)) != NULL;) {
		char name[16];
		size_t len = strcspn(s, "*");
		snprintf(name, sizeof(name), "%.*s", (int)len, s);
		uint64_t size, address = place(p, name, &size);
		pb_plane(p->b, name, address, size, s[len] == '*');
	}
	va_end(ap);
}

/* The schedule: one reference over the launches written. */
static uint8_t *finish(struct plan *p, uint32_t last, size_t *len)
{
	pb_ref(p->b, 0, last + 1);
	uint8_t *image = pb_image(p->b, len);
	pb_free(p->b);
	return image;
}

/* ---- kernels (include/arenaguard/uapi.h) ---- */

static uint32_t k_fill(struct pb *b, const char *phase, uint64_t dst,
		       uint64_t n, float v)
{
	return pb_launch(b, phase, PB_WORDS(ARENA_K_FILL, dst, n, f32_bits(v)));
}

static uint32_t k_copy(struct pb *b, const char *phase, uint64_t dst,
		       uint64_t src, uint64_t n)
{
	return pb_launch(b, phase, PB_WORDS(ARENA_K_COPY, dst, src, n));
}

/* ARENA_K_ADD or ARENA_K_MUL. */
static uint32_t k_binary(struct pb *b, const char *phase,
			 enum arena_kernel kernel, uint64_t dst, uint64_t x,
			 uint64_t y, uint64_t n)
{
	return pb_launch(b, phase, PB_WORDS(kernel, dst, x, y, n));
}

/* 4 x 4 matrices: dst = x . w, or x . w^T. */
static uint32_t k_matmul(struct pb *b, const char *phase, uint64_t dst,
			 uint64_t x, uint64_t w, int trans)
{
	return pb_launch(b, phase, PB_WORDS(ARENA_K_MATMUL, dst, x, w, 4, 4,
					    4, (uint64_t)trans));
}

static uint32_t k_gelu(struct pb *b, const char *phase, uint64_t dst,
		       uint64_t x, uint64_t n)
{
	return pb_launch(b, phase, PB_WORDS(ARENA_K_GELU, dst, x, n));
}

/* A global the program's first phase, "load", fills with v. */
static uint64_t input(struct plan *p, const char *name, uint64_t size,
		      float v)
{
	uint64_t address = global(p, name, size);
	k_fill(p->b, "load", address, size / 4, v);
	return address;
}

/* ---- repeat-yield ----
 *
 * A recurrent cell over 3 steps.  The body first computes the Repeat's
 * yield, the next state y = gelu(h . W) + x, then adds gelu(y * g) to out,
 * and at the back-edge copies y into h.  The buggy planner ended y's life
 * at its last use inside the body (score), not at the back-edge, and put
 * act's a over it: back copies a, not y, into h, and out goes wrong from
 * the second step.  The right plan reuses bytes too: s over h, which is
 * dead from cell until back writes it.
 *
 *   phases    0 load, 1 init {h}, 2 cell {h*, y}, 3 score {y*, s},
 *             4 act {s*, a}, 5 emit {a*}, 6 back {y*, h}   (* carried)
 *   launches  0-3 load, 4 init, body 5-11 x3: 5-7 cell, 8 score, 9 act,
 *             10 emit, 11 back; n = 12
 *   instances 0 load, 1 init, then cell, score, act, emit, back per
 *             iteration: 2-6 at iteration 0
 *
 * Buggy: instances 2-5 carry a plane the instance just before declared.
 * Instance 6 (back, launch 11, iteration 0) carries y (phases[6].planes[0])
 * [0x10040, 0x10080), last declared by instance 3 (score, which carries
 * it; every plane of a phase is declared); since then instance 4 (act)
 * declared a (phases[4].planes[1]) over the same bytes.  (D) fails first
 * at k = 6: verdict 2 + 12 + 6 = 20, carried-overwritten.
 */
static const struct value yield_values[] = {
	{ "h", MAT, 0x000, 0x000 },
	{ "y", MAT, 0x040, 0x040 },
	{ "s", MAT, 0x000, 0x000 },
	{ "a", MAT, 0x080, 0x040 },
};

static uint8_t *yield_image(enum audit_plan plan, size_t *len)
{
	struct plan p = START(plan, yield_values);
	struct pb *b = p.b;
	uint64_t W = input(&p, "W", MAT, 0.25f), x = input(&p, "x", MAT, 0.5f),
		 g = input(&p, "g", MAT, 0.75f),
		 out = input(&p, "out", MAT, 0.0f);
	uint64_t h = at(&p, "h"), y = at(&p, "y"), s = at(&p, "s"),
		 a = at(&p, "a");
	phase(&p, "load", NULL);
	phase(&p, "init", "h", NULL);
	phase(&p, "cell", "h*", "y", NULL);
	phase(&p, "score", "y*", "s", NULL);
	phase(&p, "act", "s*", "a", NULL);
	phase(&p, "emit", "a*", NULL);
	phase(&p, "back", "y*", "h", NULL);

	k_fill(b, "init", h, MAT_FLOATS, 1.0f);
	uint32_t first = k_matmul(b, "cell", y, h, W, 0);
	k_gelu(b, "cell", y, y, MAT_FLOATS);
	k_binary(b, "cell", ARENA_K_ADD, y, y, x, MAT_FLOATS);
	k_binary(b, "score", ARENA_K_MUL, s, y, g, MAT_FLOATS);
	k_gelu(b, "act", a, s, MAT_FLOATS);
	k_binary(b, "emit", ARENA_K_ADD, out, out, a, MAT_FLOATS);
	uint32_t last = k_copy(b, "back", h, y, MAT_FLOATS);
	pb_repeat(b, first, last - first + 1, 3);
	return finish(&p, last, len);
}

/* ---- shared-init ----
 *
 * x = inp . E is the initial value of the Repeat's state h (3 steps of
 * h = gelu(h . W)) and is read again after it: out = h + x.  The buggy
 * planner took x as donated to the Repeat, its storage the loop's from
 * entry on (the reader after the loop missed), and put the body's n over
 * it; the right plan keeps x apart while it is live.
 *
 *   phases    0 load, 1 embed {x}, 2 enter {x*, h}, 3 step {h*, n},
 *             4 back {n*, h}, 5 resid {h*, x*}
 *   launches  0-2 load, 3 embed, 4 enter, body 5-7 x3: 5-6 step,
 *             7 back, 8 resid; n = 9
 *   instances 0 load, 1 embed, 2 enter, 3 step, 4 back, 5 step, 6 back,
 *             7 step, 8 back, 9 resid
 *
 * Buggy: instances 2-8 carry planes the instance just before declared.
 * Instance 9 (resid, launch 8) carries h (fine: instance 8) and x
 * (phases[5].planes[1]) [0x10000, 0x10040), last declared by instance 2
 * (enter, which carries it); instances 3, 5 and 7 (step) each declared n
 * (phases[3].planes[1]) over those bytes since, the first being 3.  (D)
 * fails first at k = 9: verdict 2 + 9 + 9 = 20, carried-overwritten.
 */
static const struct value shared_values[] = {
	{ "x", MAT, 0x000, 0x000 },
	{ "h", MAT, 0x040, 0x040 },
	{ "n", MAT, 0x080, 0x000 },
};

static uint8_t *shared_image(enum audit_plan plan, size_t *len)
{
	struct plan p = START(plan, shared_values);
	struct pb *b = p.b;
	uint64_t inp = input(&p, "inp", MAT, 0.5f),
		 E = input(&p, "E", MAT, 0.75f),
		 W = input(&p, "W", MAT, 0.375f), out = global(&p, "out", MAT);
	uint64_t x = at(&p, "x"), h = at(&p, "h"), n = at(&p, "n");
	phase(&p, "load", NULL);
	phase(&p, "embed", "x", NULL);
	phase(&p, "enter", "x*", "h", NULL);
	phase(&p, "step", "h*", "n", NULL);
	phase(&p, "back", "n*", "h", NULL);
	phase(&p, "resid", "h*", "x*", NULL);

	k_matmul(b, "embed", x, inp, E, 0);
	k_copy(b, "enter", h, x, MAT_FLOATS);
	uint32_t first = k_matmul(b, "step", n, h, W, 0);
	k_gelu(b, "step", n, n, MAT_FLOATS);
	uint32_t back = k_copy(b, "back", h, n, MAT_FLOATS);
	pb_repeat(b, first, back - first + 1, 3);
	uint32_t last = k_binary(b, "resid", ARENA_K_ADD, out, h, x,
				 MAT_FLOATS);
	return finish(&p, last, len);
}

/* ---- iterated-address ----
 *
 * Three layers, each h = h * scale + bias with its own parameters: a
 * slice [scale | bias] of P, which unpack dequantizes from the global
 * bank into the workspace.  Each iteration stages its slice into st
 * (stage's source word walks P by delta 0x80), and layer reads the bias
 * through a Sum alias of the staged slice, st + 0x40, in a local copy to
 * bb.  The buggy planner assembled that copy's address apart from the
 * kernels' storage chain: the absolute address of the alias at the first
 * iteration, in the parameter's home, P + 0x40, with no relocation.  Every
 * layer then adds the first layer's bias.
 *
 *   phases    0 load, 1 unpack {P}, 2 init {h}, 3 stage {P*, st},
 *             4 layer {st*, h*, u, bb}, 5 back {u*, h}, 6 emit {h*}
 *   launches  0 load, body 1-2 x3 load (slice t's scale and bias),
 *             3 unpack, 4 init, body 5-9 x3: 5 stage, 6-8 layer, 9 back;
 *             10 emit; n = 11
 *
 * Buggy: launches 0-6 are fine (the deltas walk inside the bank and P).
 * Launch 7 (layer) word 2 = 0x10040 (no delta: one interval
 * [0x10040, 0x10040]) lies in window 0 and in no global (those start at
 * 0x18000) and no plane of layer, which names st [0x10180, 0x10200), h,
 * u and bb above it: nothing below, st (phases[4].planes[0]) nearest
 * above.  (C) fails first at i = 7: verdict 2 + 7 = 9, word-unnamed.
 *
 * Caught because layer does not name P: were the home a global (a weight
 * bank read in place), the stale address would lie in it and (C) hold.
 */
#define SLICE 0x80ull          /* one layer's [scale | bias] */

static const struct value iterated_values[] = {
	{ "P", 3 * SLICE, 0x000, 0x000 },
	{ "st", SLICE, 0x180, 0x180 },
	{ "h", MAT, 0x200, 0x200 },
	{ "u", MAT, 0x240, 0x240 },
	{ "bb", MAT, 0x280, 0x280 },
};

static uint8_t *iterated_image(enum audit_plan plan, size_t *len)
{
	struct plan p = START(plan, iterated_values);
	struct pb *b = p.b;
	uint64_t bank = global(&p, "bank", 3 * SLICE),
		 dq = input(&p, "dq", 3 * SLICE, 0.5f),
		 out = global(&p, "out", MAT);
	uint64_t P = at(&p, "P"), st = at(&p, "st"), h = at(&p, "h"),
		 u = at(&p, "u"), bb = at(&p, "bb");
	phase(&p, "load", NULL);
	phase(&p, "unpack", "P", NULL);
	phase(&p, "init", "h", NULL);
	phase(&p, "stage", "P*", "st", NULL);
	phase(&p, "layer", "st*", "h*", "u", "bb", NULL);
	phase(&p, "back", "u*", "h", NULL);
	phase(&p, "emit", "h*", NULL);

	uint32_t floats = (uint32_t)(3 * SLICE / 4);
	/* Layer t's scale 1 + t/8 and bias 1/4 + t/32: f32 bits + t << 20. */
	uint32_t scale = k_fill(b, "load", bank, MAT_FLOATS, 1.0f);
	k_fill(b, "load", bank + MAT, MAT_FLOATS, 0.25f);
	pb_repeat(b, scale, 2, 3);
	for (uint32_t l = scale; l < scale + 2; l++) {
		pb_delta(b, l, 1, (int64_t)SLICE);
		pb_delta(b, l, 3, 1 << 20);
	}
	k_binary(b, "unpack", ARENA_K_MUL, P, bank, dq, floats);
	k_fill(b, "init", h, MAT_FLOATS, 1.0f);
	uint32_t stage = k_copy(b, "stage", st, P, SLICE / 4);
	k_binary(b, "layer", ARENA_K_MUL, u, h, st, MAT_FLOATS);
	k_copy(b, "layer", bb, plan == AUDIT_BUGGY ? P + MAT : st + MAT,
	       MAT_FLOATS);
	k_binary(b, "layer", ARENA_K_ADD, u, u, bb, MAT_FLOATS);
	uint32_t back = k_copy(b, "back", h, u, MAT_FLOATS);
	pb_repeat(b, stage, back - stage + 1, 3);
	pb_delta(b, stage, 2, (int64_t)SLICE);
	uint32_t last = k_copy(b, "emit", out, h, MAT_FLOATS);
	return finish(&p, last, len);
}

/* ---- placeholder and rebound ----
 *
 * Attention over 4 rows; the program's result is a subview of o, its
 * last two rows, which the right plan gives storage of its own and fills
 * (a copy) before anything reads it there:
 *
 *   placeholder  the subview is the program's output.  Right: slice
 *                materializes it into v2, export copies v2 out.  The
 *                buggy planner let it reuse o's storage and never
 *                allocated it: it escapes as a placeholder at the offset
 *                an unallocated storage record has, 0, where the scores
 *                lie; export copies two rows of probabilities out.
 *   rebound      the subview also accumulates a residual in place (a
 *                reduction), which needs writable storage: acc, over s
 *                (dead once attn is done).  Right: bind moves the rows
 *                into acc.  The buggy planner rebound the subview to acc
 *                without moving its data: accum adds the residual to the
 *                scores.
 *
 *   phases    buggy placeholder: 0 load, 1 attn {s, o}, 2 export {v2*};
 *             buggy rebound: 0 load, 1 attn {s, o}, 2 accum {acc*},
 *             3 export {acc*}
 *   launches  buggy placeholder: 0-2 load, 3-5 attn, 6 export; n = 7;
 *             buggy rebound: 0-3 load, 4-6 attn, 7 accum, 8 export; n = 9
 *   instances 0 load, 1 attn, 2 export or accum, ...
 *
 * Buggy placeholder: instance 2 (export, launch 6) carries v2
 * (phases[2].planes[0]) [0x10000, 0x10020), a key no earlier instance
 * declared (attn declared s there, another name and size).  (D) fails
 * first at k = 2: verdict 2 + 7 + 2 = 11, carried-undeclared.
 * Buggy rebound: instance 2 (accum, launch 7) carries acc
 * (phases[2].planes[0]) [0x10000, 0x10020), likewise never declared.
 * (D) fails first at k = 2: verdict 2 + 9 + 2 = 13, carried-undeclared.
 */
enum subview_use { SUBVIEW_EXPORTED, SUBVIEW_ACCUMULATED };

static const struct value subview_values[] = {
	{ "s", MAT, 0x000, 0x000 },
	{ "o", MAT, 0x040, 0x040 },
	{ "v2", ROWS2, 0x080, 0x000 },
	{ "acc", ROWS2, 0x000, 0x000 },
};

static uint8_t *subview_image(enum audit_plan plan, enum subview_use use,
			      size_t *len)
{
	struct plan p = START(plan, subview_values);
	struct pb *b = p.b;
	int reduce = use == SUBVIEW_ACCUMULATED;
	/* The subview's storage of its own, as its readers carry it. */
	const char *own = reduce ? "acc" : "v2";
	char carried[8];
	snprintf(carried, sizeof(carried), "%s*", own);
	uint64_t q = input(&p, "q", MAT, 0.5f), k = input(&p, "k", MAT, 0.25f),
		 v = input(&p, "v", MAT, 2.0f), out = global(&p, "out", ROWS2),
		 res = reduce ? input(&p, "res", ROWS2, 0.125f) : 0;
	uint64_t s = at(&p, "s"), o = at(&p, "o"), sub = at(&p, own);
	phase(&p, "load", NULL);
	phase(&p, "attn", "s", "o", NULL);
	if (plan != AUDIT_BUGGY)
		phase(&p, reduce ? "bind" : "slice", "o*", own, NULL);
	if (reduce)
		phase(&p, "accum", carried, NULL);
	phase(&p, "export", carried, NULL);

	k_matmul(b, "attn", s, q, k, 1);
	pb_launch(b, "attn", PB_WORDS(ARENA_K_SOFTMAX, s, s, 4, 4,
				      f32_bits(0.5f)));
	k_matmul(b, "attn", o, s, v, 0);
	if (plan != AUDIT_BUGGY)
		k_copy(b, reduce ? "bind" : "slice", sub, o + ROWS2, ROWS2 / 4);
	if (reduce)
		k_binary(b, "accum", ARENA_K_ADD, sub, sub, res, ROWS2 / 4);
	uint32_t last = k_copy(b, "export", out, sub, ROWS2 / 4);
	return finish(&p, last, len);
}

static uint8_t *placeholder_image(enum audit_plan plan, size_t *len)
{
	return subview_image(plan, SUBVIEW_EXPORTED, len);
}

static uint8_t *rebound_image(enum audit_plan plan, size_t *len)
{
	return subview_image(plan, SUBVIEW_ACCUMULATED, len);
}

/* ---- the table ---- */

#define WIDE(x) { 0, (x) }

const struct audit_prog audit_progs[] = {
	{ "repeat-yield", yield_image,
	  { .verdict = 20, .condition = AC_COND_D,
	    .reason = AC_CARRIED_OVERWRITTEN,
	    .tensor = { { 6, 0 }, { 4, 1 } }, .instance = 6, .phase = 6,
	    .start_launch = 11, .start_ordinal = 0, .earlier = 3,
	    .earlier_phase = 3, .intervening = 4 } },
	{ "shared-init", shared_image,
	  { .verdict = 20, .condition = AC_COND_D,
	    .reason = AC_CARRIED_OVERWRITTEN,
	    .tensor = { { 5, 1 }, { 3, 1 } }, .instance = 9, .phase = 5,
	    .start_launch = 8, .start_ordinal = AC_NONE, .earlier = 2,
	    .earlier_phase = 2, .intervening = 3 } },
	{ "iterated-address", iterated_image,
	  { .verdict = 9, .condition = AC_COND_C, .reason = AC_WORD_UNNAMED,
	    .launch = 7, .word = 2, .lo = WIDE(0x10040), .hi = WIDE(0x10040),
	    .ordinal = AC_NONE, .window = 0, .near = { NONE, { 4, 0 } },
	    .phase = 4 } },
	{ "placeholder", placeholder_image,
	  { .verdict = 11, .condition = AC_COND_D,
	    .reason = AC_CARRIED_UNDECLARED,
	    .tensor = { { 2, 0 }, NONE }, .instance = 2, .phase = 2,
	    .start_launch = 6, .start_ordinal = AC_NONE, .earlier = AC_NONE,
	    .earlier_phase = AC_NONE, .intervening = AC_NONE } },
	{ "rebound", rebound_image,
	  { .verdict = 13, .condition = AC_COND_D,
	    .reason = AC_CARRIED_UNDECLARED,
	    .tensor = { { 2, 0 }, NONE }, .instance = 2, .phase = 2,
	    .start_launch = 7, .start_ordinal = AC_NONE, .earlier = AC_NONE,
	    .earlier_phase = AC_NONE, .intervening = AC_NONE } },
};

const size_t audit_n_progs = sizeof(audit_progs) / sizeof(audit_progs[0]);
