/* SPDX-License-Identifier: MIT */
/* The model as a token generator (tokens.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tokens.h"

int tokens_vocabulary(const struct model_shape *shape)
{
	return shape->width;
}

/* A fixed number in [-0.5, 0.5) for (kind, a, b): splitmix64's mix. */
static float hashed(uint64_t kind, uint64_t a, uint64_t b)
{
	uint64_t z = kind * 0x9e3779b97f4a7c15ull ^ a * 0xbf58476d1ce4e5b9ull ^
		     b * 0x94d049bb133111ebull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (float)(z >> 40) / (float)(1u << 24) - 0.5f;
}

void tokens_embed(const struct model_shape *shape, const int *window,
		  float *input)
{
	int d = shape->width;
	for (int i = 0; i < shape->tokens; i++)
		for (int j = 0; j < d; j++)
			input[(size_t)i * d + j] =
				2.0f * hashed(1, (uint64_t)window[i], j) +
				0.5f * hashed(2, (uint64_t)i, j);
}

int tokens_next(const struct model_shape *shape, const float *output)
{
	int d = shape->width;
	const float *row = output + (size_t)(shape->tokens - 1) * d;
	int best = 0;
	for (int j = 1; j < d; j++)
		if (row[j] > row[best])
			best = j;
	return best;
}

int tokens_reference(struct model *m, const int *prompt, int n, int *out)
{
	const struct model_shape *s = &m->shape;
	int t = s->tokens;
	int *seq = malloc(((size_t)t + (size_t)n) * sizeof(int));
	float *y = malloc(model_io_floats(s) * sizeof(float));
	int rc = seq && y ? 0 : -1;
	if (rc == 0)
		memcpy(seq, prompt, (size_t)t * sizeof(int));
	for (int k = 0; k < n && rc == 0; k++) {
		tokens_embed(s, seq + k, m->input);
		rc = model_reference(m, y);
		if (rc == 0)
			out[k] = seq[t + k] = tokens_next(s, y);
	}
	free(seq);
	free(y);
	return rc;
}
