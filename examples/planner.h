/* SPDX-License-Identifier: MIT */
/*
 * planner.h - turns the model into a program for the arena device: a plan
 * (windows, globals, phases with their planes), a launch table whose
 * layer body is one Repeat, and a schedule.
 *
 * Device memory is three windows, one buffer object each:
 *
 *   params     the weight bank (every layer's weights, a fixed stride
 *              apart) and the final norm: globals
 *   io         the input, the residual stream and the output: globals
 *   workspace  every intermediate value, as planes of the phases that
 *              touch them; values whose lifetimes do not meet share bytes
 *
 * Each layer runs these phases, in this order:
 *
 *   norm      xn = layernorm(x)                          fresh xn
 *   qkv       q, k, v = xn . Wq, Wk, Wv (per head)       carried xn
 *   scores    s = q . k^T; p = softmax(s / sqrt(hd))     carried q, k
 *   context   o = p . v                                  carried p, v
 *   attn_out  x += o . Wo (per head, through t)          carried o
 *   mlp_up    g = gelu(xn . W1)  (through h)             carried xn
 *   mlp_down  x += g . W2  (through t2)                  carried g
 *
 * xn is the one value with readers in two phases far apart (qkv and
 * mlp_up): it must survive scores, context and attn_out.  The buggy
 * planner frees every value after its first reader, so it hands xn's
 * bytes to an attention phase (scores, in the default shape: its fresh
 * s lands on xn): a plane handed to a later phase while a later phase
 * still needs it.  The certificate fails it (condition (D) at the first
 * mlp_up instance), and on the device, under poison, mlp_up reads NaN.
 */
#ifndef ARENA_EXAMPLE_PLANNER_H
#define ARENA_EXAMPLE_PLANNER_H

#include <stddef.h>
#include <stdint.h>

#include <arenaguard/certify.h>
#include <arenaguard/program.h>

#include "model.h"

enum plan_kind {
	PLAN_CORRECT,
	PLAN_BUGGY,   /* frees each workspace value after its first reader */
};

/* The windows' device addresses: far above every small number a launch
 * word holds (a count, a flag, a float's bits), so none falls in one. */
#define PLAN_PARAMS_BASE    0x100000000ull
#define PLAN_IO_BASE        0x200000000ull
#define PLAN_WORKSPACE_BASE 0x300000000ull
#define PLAN_ALIGNMENT      64
#define PLAN_PAGE           4096  /* buffer objects come in whole pages */

enum plan_window { WIN_PARAMS, WIN_IO, WIN_WORKSPACE, WIN_COUNT };

enum plan_global {
	G_WEIGHTS, G_FINAL_NORM,       /* params */
	G_INPUT, G_RESIDUAL, G_OUTPUT, /* io */
	G_COUNT
};

enum plan_phase {
	PH_EMBED,                      /* x = input */
	PH_NORM, PH_QKV, PH_SCORES, PH_CONTEXT, PH_ATTN_OUT,
	PH_MLP_UP, PH_MLP_DOWN,        /* the layer body */
	PH_FINAL,                      /* output = layernorm(x) */
	PH_COUNT
};

struct plan {
	struct ac_model model;       /* the program, schedule included */
	enum plan_kind kind;
	uint64_t workspace_bytes;    /* bytes the workspace planes span */

	/* What `model` points into. */
	struct ac_window windows[WIN_COUNT];
	struct ac_tensor globals[G_COUNT];
	struct ac_phase phases[PH_COUNT];
	struct ac_tensor *planes;
	struct ac_launch *launches;
	uint64_t *words;
	struct ac_repeat repeat;
	struct ac_delta *deltas;
	struct ac_ref ref;
	uint8_t *identities;
};

/* Plans the model.  0, or -1 when memory runs out. */
int plan_build(struct plan *plan, const struct model_shape *shape,
	       enum plan_kind kind);
void plan_free(struct plan *plan);

/* The binary program image the driver takes: the program without its
 * schedule (schedules are built with the schedule ioctls).  Free with
 * free(); NULL with *err filled on failure. */
uint8_t *plan_device_image(const struct plan *plan, size_t *len,
			   struct ac_error *err);

/* The schedule: one reference over the whole launch table. */
const struct ac_ref *plan_schedule(const struct plan *plan, size_t *count);

/*
 * Decides the plan's certificate.  Returns the verdict and renders the
 * diagnostic into text (ac_diag_render); AC_NONE with the error in text
 * when the program is malformed (a planner bug of another kind).
 * diag may be NULL.
 */
uint64_t plan_certify(const struct plan *plan, struct ac_diag *diag,
		      char *text, size_t len);

#endif
