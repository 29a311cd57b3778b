/* SPDX-License-Identifier: MIT */
/*
 * tokens.h - the example model as a token generator, for arena-serve and
 * its tests.
 *
 * The vocabulary is the model's width: a token is an integer in
 * [0, width).  A window of T tokens becomes the model's [T][D] input as
 * the sum of a token embedding and a position embedding (fixed numbers,
 * from a hash of the token or position and the column: no table).  The
 * next token is the argmax of the last row of the model's output (the
 * lowest index on a tie).  Generating from a prompt of T tokens runs the
 * model on the last T tokens of the sequence at every step, so that
 * every step of a request has the prompt's shape: T is the request's
 * batch shape.
 */
#ifndef ARENA_EXAMPLE_TOKENS_H
#define ARENA_EXAMPLE_TOKENS_H

#include <stddef.h>

#include "model.h"

/* Tokens a request may ask for, at most. */
#define TOKENS_MAX_NEW 64

/* The vocabulary's size for the shape (its width). */
int tokens_vocabulary(const struct model_shape *shape);

/* Fills input[T][D] (T = shape->tokens) from window[0, T). */
void tokens_embed(const struct model_shape *shape, const int *window,
		  float *input);

/* The next token from the model's output [T][D]. */
int tokens_next(const struct model_shape *shape, const float *output);

/*
 * The plain-C reference: generates n tokens after prompt[0, T) with
 * model_reference (m's shape has T tokens; m->input is overwritten) into
 * out[0, n).  0, or -1 when memory runs out.
 */
int tokens_reference(struct model *m, const int *prompt, int n, int *out);

#endif
