/* SPDX-License-Identifier: MIT */
/*
 * The model's weights and its reference forward pass, written the way the
 * maths reads (concatenated heads, one token at a time), not the way the
 * planner splits it: if the plan's decomposition were wrong, the two would
 * disagree.  Sums are accumulated in double so that the reference is the
 * more accurate side of the comparison.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

struct model_shape model_default_shape(int layers, int tokens)
{
	struct model_shape s = {
		.layers = layers,
		.tokens = tokens,
		.width = 64,
		.heads = 4,
		.head_dim = 16,
		.hidden = 256,
	};
	return s;
}

size_t model_io_floats(const struct model_shape *shape)
{
	return (size_t)shape->tokens * (size_t)shape->width;
}

struct layer_layout model_layout(const struct model_shape *s)
{
	size_t d = (size_t)s->width, f = (size_t)s->hidden;
	struct layer_layout l;
	l.ln_gamma = 0;
	l.ln_beta = l.ln_gamma + d;
	l.wq = l.ln_beta + d;
	l.wk = l.wq + d * d;
	l.wv = l.wk + d * d;
	l.wo = l.wv + d * d;
	l.w1 = l.wo + d * d;
	l.w2 = l.w1 + d * f;
	l.stride = l.w2 + f * d;
	return l;
}

/* ---- deterministic numbers: splitmix64 ---- */

uint64_t model_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [-scale, scale). */
static float uniform(uint64_t *state, float scale)
{
	double u = (double)(model_random(state) >> 11) / (double)(1ull << 53);
	return (float)((2.0 * u - 1.0) * scale);
}

static void fill(float *dst, size_t n, uint64_t *state, float center,
		 float scale)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = center + uniform(state, scale);
}

static void init_layer(float *w, const struct layer_layout *l,
		       const struct model_shape *s, uint64_t *state)
{
	size_t d = (size_t)s->width, f = (size_t)s->hidden;
	/* 1/sqrt(fan_in) keeps activations of order 1 through the layers. */
	float in_d = 1.0f / sqrtf((float)d), in_f = 1.0f / sqrtf((float)f);

	fill(w + l->ln_gamma, d, state, 1.0f, 0.1f);
	fill(w + l->ln_beta, d, state, 0.0f, 0.1f);
	fill(w + l->wq, d * d, state, 0.0f, in_d);
	fill(w + l->wk, d * d, state, 0.0f, in_d);
	fill(w + l->wv, d * d, state, 0.0f, in_d);
	fill(w + l->wo, d * d, state, 0.0f, in_d);
	fill(w + l->w1, d * f, state, 0.0f, in_d);
	fill(w + l->w2, f * d, state, 0.0f, in_f);
}

int model_init(struct model *m, const struct model_shape *shape,
	       uint64_t seed)
{
	size_t d = (size_t)shape->width;
	memset(m, 0, sizeof(*m));
	m->shape = *shape;
	m->layer = model_layout(shape);
	m->bank = malloc((size_t)shape->layers * m->layer.stride *
			 sizeof(float));
	m->final_norm = malloc(2 * d * sizeof(float));
	m->input = malloc(model_io_floats(shape) * sizeof(float));
	if (!m->bank || !m->final_norm || !m->input) {
		model_free(m);
		return -1;
	}

	uint64_t state = seed;
	for (int i = 0; i < shape->layers; i++)
		init_layer(m->bank + (size_t)i * m->layer.stride, &m->layer,
			   shape, &state);
	fill(m->final_norm, d, &state, 1.0f, 0.1f);
	fill(m->final_norm + d, d, &state, 0.0f, 0.1f);
	fill(m->input, model_io_floats(shape), &state, 0.0f, 1.0f);
	return 0;
}

void model_free(struct model *m)
{
	free(m->bank);
	free(m->final_norm);
	free(m->input);
	m->bank = m->final_norm = m->input = NULL;
}

/* ---- the reference ---- */

/* Per-row layer norm, epsilon 1e-5 (the device's). */
static void layernorm(float *dst, const float *x, const float *gamma,
		      const float *beta, int rows, int cols)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * cols;
		double mean = 0, var = 0;
		for (int c = 0; c < cols; c++)
			mean += xr[c];
		mean /= cols;
		for (int c = 0; c < cols; c++)
			var += (xr[c] - mean) * (xr[c] - mean);
		var /= cols;
		double inv = 1.0 / sqrt(var + 1e-5);
		for (int c = 0; c < cols; c++)
			dst[(size_t)r * cols + c] =
				(float)((xr[c] - mean) * inv * gamma[c] + beta[c]);
	}
}

/* The tanh approximation, as the device's GELU kernel. */
static double gelu(double x)
{
	const double k = 0.7978845608028654; /* sqrt(2 / pi) */
	return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
}

/* dst[m][n] = x[m][k] . w[k][n] */
static void matmul(float *dst, const float *x, const float *w, int m, int k,
		   int n)
{
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++) {
			double sum = 0;
			for (int p = 0; p < k; p++)
				sum += (double)x[(size_t)i * k + p] *
				       w[(size_t)p * n + j];
			dst[(size_t)i * n + j] = (float)sum;
		}
}

/*
 * Multi-head self-attention of one layer, without the output projection:
 * ctx[t][h * hd + e] is head h's context for token t.
 */
static void attention(float *ctx, const float *xn, const float *w,
		      const struct layer_layout *l, const struct model_shape *s,
		      float *q, float *k, float *v)
{
	int T = s->tokens, D = s->width, hd = s->head_dim;
	double scale = 1.0 / sqrt((double)hd);

	for (int h = 0; h < s->heads; h++) {
		size_t block = (size_t)h * D * hd;
		matmul(q, xn, w + l->wq + block, T, D, hd);
		matmul(k, xn, w + l->wk + block, T, D, hd);
		matmul(v, xn, w + l->wv + block, T, D, hd);
		for (int i = 0; i < T; i++) {
			double score[MODEL_MAX_TOKENS], max = -INFINITY, total = 0;
			for (int j = 0; j < T; j++) {
				double dot = 0;
				for (int e = 0; e < hd; e++)
					dot += (double)q[i * hd + e] * k[j * hd + e];
				score[j] = dot * scale;
				if (score[j] > max)
					max = score[j];
			}
			for (int j = 0; j < T; j++)
				total += (score[j] = exp(score[j] - max));
			for (int e = 0; e < hd; e++) {
				double sum = 0;
				for (int j = 0; j < T; j++)
					sum += score[j] / total * v[j * hd + e];
				ctx[(size_t)i * D + h * hd + e] = (float)sum;
			}
		}
	}
}

struct scratch {
	float *xn, *ctx, *attn, *up, *down, *q, *k, *v;
};

static void scratch_free(struct scratch *s)
{
	free(s->xn);
	free(s->ctx);
	free(s->attn);
	free(s->up);
	free(s->down);
	free(s->q);
	free(s->k);
	free(s->v);
}

static int scratch_alloc(struct scratch *s, const struct model_shape *m)
{
	size_t td = model_io_floats(m);
	size_t th = (size_t)m->tokens * m->head_dim;
	s->xn = malloc(td * sizeof(float));
	s->ctx = malloc(td * sizeof(float));
	s->attn = malloc(td * sizeof(float));
	s->up = malloc((size_t)m->tokens * m->hidden * sizeof(float));
	s->down = malloc(td * sizeof(float));
	s->q = malloc(th * sizeof(float));
	s->k = malloc(th * sizeof(float));
	s->v = malloc(th * sizeof(float));
	if (s->xn && s->ctx && s->attn && s->up && s->down && s->q && s->k &&
	    s->v)
		return 0;
	scratch_free(s);
	return -1;
}

static void layer_forward(float *x, const float *w, const struct model *m,
			  struct scratch *s)
{
	const struct model_shape *sh = &m->shape;
	const struct layer_layout *l = &m->layer;
	int T = sh->tokens, D = sh->width, F = sh->hidden;
	size_t td = model_io_floats(sh);

	layernorm(s->xn, x, w + l->ln_gamma, w + l->ln_beta, T, D);
	attention(s->ctx, s->xn, w, l, sh, s->q, s->k, s->v);
	matmul(s->attn, s->ctx, w + l->wo, T, D, D);
	matmul(s->up, s->xn, w + l->w1, T, D, F);
	for (size_t i = 0; i < (size_t)T * F; i++)
		s->up[i] = (float)gelu(s->up[i]);
	matmul(s->down, s->up, w + l->w2, T, F, D);
	for (size_t i = 0; i < td; i++)
		x[i] = (float)((double)x[i] + s->attn[i] + s->down[i]);
}

int model_reference(const struct model *m, float *out)
{
	const struct model_shape *sh = &m->shape;
	size_t td = model_io_floats(sh);
	struct scratch s;
	float *x = malloc(td * sizeof(float));
	if (!x || scratch_alloc(&s, sh) != 0) {
		free(x);
		return -1;
	}

	memcpy(x, m->input, td * sizeof(float));
	for (int i = 0; i < sh->layers; i++)
		layer_forward(x, m->bank + (size_t)i * m->layer.stride, m, &s);
	layernorm(out, x, m->final_norm, m->final_norm + sh->width,
		  sh->tokens, sh->width);

	scratch_free(&s);
	free(x);
	return 0;
}

/* ---- comparing with the reference ---- */

double model_max_abs_error(const float *out, const float *ref, size_t n)
{
	double worst = 0;
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)out[i] - (double)ref[i]);
		if (isnan(d))
			return NAN;
		if (d > worst)
			worst = d;
	}
	return worst;
}

double model_tolerance(const float *ref, size_t n)
{
	double scale = 1.0;
	for (size_t i = 0; i < n; i++)
		if (fabs(ref[i]) > scale)
			scale = fabs(ref[i]);
	return MODEL_TOLERANCE * scale;
}
