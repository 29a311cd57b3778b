/* SPDX-License-Identifier: MIT */
/*
 * model.h - the example's small transformer: shapes, weights and the
 * plain-C reference forward pass that the device's output is checked
 * against.
 *
 * Each layer is a "parallel" block (as in GPT-J): one layer norm feeds
 * both the attention and the MLP, and both add into the residual stream:
 *
 *     xn = layernorm(x)
 *     x  = x + attention(xn) + mlp(xn)
 *
 * followed, after the last layer, by a final layer norm.  The attention
 * has no mask and no biases; the MLP is gelu(xn . W1) . W2.
 */
#ifndef ARENA_EXAMPLE_MODEL_H
#define ARENA_EXAMPLE_MODEL_H

#include <stddef.h>
#include <stdint.h>

/* Limits the example accepts (the reference keeps a row of scores on the
 * stack). */
#define MODEL_MAX_TOKENS 64
#define MODEL_MAX_LAYERS 64

struct model_shape {
	int layers;
	int tokens;    /* T: rows of every activation */
	int width;     /* D */
	int heads;     /* H; head_dim = width / heads */
	int head_dim;
	int hidden;    /* F: the MLP's inner width */
};

/*
 * Where one layer's tensors sit in that layer's block of the weight bank,
 * in floats.  Layer l's block starts at l * stride, so the same offsets
 * name every layer's tensors (that is what lets one Repeat run all layers).
 *
 * The Q/K/V weights are stored head-major: head h's [D, head_dim] matrix
 * is contiguous, because the device's kernels take no strides and the
 * heads are computed by one matmul each.  wo is plain [D, D] row-major:
 * its rows h * head_dim .. are exactly the block head h's output needs.
 */
struct layer_layout {
	size_t ln_gamma, ln_beta;   /* [D] */
	size_t wq, wk, wv;          /* [H][D][head_dim] */
	size_t wo;                  /* [D][D] */
	size_t w1;                  /* [D][F] */
	size_t w2;                  /* [F][D] */
	size_t stride;              /* floats per layer */
};

struct model {
	struct model_shape shape;
	struct layer_layout layer;
	float *bank;          /* layers * layer.stride floats */
	float *final_norm;    /* gamma [D] then beta [D] */
	float *input;         /* [T][D] */
};

/* The default shape: width 64, 4 heads of 16, MLP 4x. */
struct model_shape model_default_shape(int layers, int tokens);

/* The example's deterministic numbers (splitmix64): the next of the
 * sequence *state starts, *state advanced.  The weights are drawn from
 * it; the server's tests and load generator draw prompts from it. */
uint64_t model_random(uint64_t *state);

/* Where each layer's tensors sit in its block of the bank. */
struct layer_layout model_layout(const struct model_shape *shape);

/* Allocates and fills the weights and input from a fixed-seed PRNG, so
 * every run (and every process) sees the same numbers.  0 or -1 (no
 * memory). */
int model_init(struct model *m, const struct model_shape *shape,
	       uint64_t seed);
void model_free(struct model *m);

/* Floats in one [T][D] activation (the input, the output). */
size_t model_io_floats(const struct model_shape *shape);

/* The reference forward pass: out gets [T][D] floats.  0 or -1 (no
 * memory). */
int model_reference(const struct model *m, float *out);

/*
 * How close a device's output must be: the largest absolute difference
 * (NaN if either side has a NaN, so that a NaN never passes), and the
 * tolerance, MODEL_TOLERANCE relative to the reference's largest
 * magnitude (at least 1).
 */
#define MODEL_TOLERANCE 1e-3
double model_max_abs_error(const float *out, const float *ref, size_t n);
double model_tolerance(const float *ref, size_t n);

#endif
