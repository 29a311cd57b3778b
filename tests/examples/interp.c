/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <arenaguard/uapi.h>

#include "interp.h"

struct host {
	const struct plan *plan;
	ac_program *program;
	uint8_t *mem[WIN_COUNT];
	uint64_t phase;         /* of the instance running now */
	int poison;
};

/* The host bytes of device range [address, address + floats), or NULL. */
static float *at(struct host *h, uint64_t address, uint64_t floats)
{
	uint64_t bytes = floats * sizeof(float);
	for (int w = 0; w < WIN_COUNT; w++) {
		const struct ac_window *win = &h->plan->windows[w];
		if (address >= win->base && address - win->base <= win->size &&
		    bytes <= win->size - (address - win->base))
			return (float *)(h->mem[w] + (address - win->base));
	}
	return NULL;
}

static int k_matmul(struct host *h, const uint64_t *w)
{
	uint64_t m = w[4], k = w[5], n = w[6];
	float *dst = at(h, w[1], m * n), *x = at(h, w[2], m * k);
	float *b = at(h, w[3], k * n);
	if (!dst || !x || !b)
		return -1;
	float *tmp = malloc(m * n * sizeof(float));
	if (!tmp)
		return -1;
	for (uint64_t i = 0; i < m; i++)
		for (uint64_t j = 0; j < n; j++) {
			double sum = 0;
			for (uint64_t p = 0; p < k; p++)
				sum += (double)x[i * k + p] *
				       (w[7] ? b[j * k + p] : b[p * n + j]);
			tmp[i * n + j] = (float)sum;
		}
	memcpy(dst, tmp, m * n * sizeof(float));
	free(tmp);
	return 0;
}

static int k_softmax(struct host *h, const uint64_t *w)
{
	uint64_t rows = w[3], cols = w[4];
	float *dst = at(h, w[1], rows * cols), *x = at(h, w[2], rows * cols);
	uint32_t bits = (uint32_t)w[5];
	float scale;
	memcpy(&scale, &bits, sizeof(scale));
	if (!dst || !x)
		return -1;
	for (uint64_t r = 0; r < rows; r++) {
		float *xr = x + r * cols, *dr = dst + r * cols;
		double max = -INFINITY, total = 0;
		for (uint64_t c = 0; c < cols; c++)
			if (scale * xr[c] > max)
				max = scale * xr[c];
		for (uint64_t c = 0; c < cols; c++)
			total += exp(scale * xr[c] - max);
		for (uint64_t c = 0; c < cols; c++)
			dr[c] = (float)(exp(scale * xr[c] - max) / total);
	}
	return 0;
}

static int k_layernorm(struct host *h, const uint64_t *w)
{
	uint64_t rows = w[5], cols = w[6];
	float *dst = at(h, w[1], rows * cols), *x = at(h, w[2], rows * cols);
	float *g = at(h, w[3], cols), *b = at(h, w[4], cols);
	if (!dst || !x || !g || !b)
		return -1;
	for (uint64_t r = 0; r < rows; r++) {
		float *xr = x + r * cols;
		double mean = 0, var = 0;
		for (uint64_t c = 0; c < cols; c++)
			mean += xr[c];
		mean /= (double)cols;
		for (uint64_t c = 0; c < cols; c++)
			var += (xr[c] - mean) * (xr[c] - mean);
		var /= (double)cols;
		double inv = 1.0 / sqrt(var + 1e-5);
		for (uint64_t c = 0; c < cols; c++)
			dst[r * cols + c] = (float)((xr[c] - mean) * inv * g[c] + b[c]);
	}
	return 0;
}

static int k_elementwise(struct host *h, const uint64_t *w)
{
	uint64_t kernel = w[0];
	if (kernel == ARENA_K_COPY || kernel == ARENA_K_GELU) {
		uint64_t n = w[3];
		float *dst = at(h, w[1], n), *x = at(h, w[2], n);
		if (!dst || !x)
			return -1;
		for (uint64_t i = 0; i < n; i++) {
			double v = x[i];
			if (kernel == ARENA_K_GELU)
				v = 0.5 * v * (1.0 + tanh(0.7978845608028654 *
						 (v + 0.044715 * v * v * v)));
			dst[i] = (float)v;
		}
		return 0;
	}
	uint64_t n = w[4];
	float *dst = at(h, w[1], n), *x = at(h, w[2], n), *y = at(h, w[3], n);
	if (!dst || !x || !y)
		return -1;
	for (uint64_t i = 0; i < n; i++)
		dst[i] = kernel == ARENA_K_ADD ? x[i] + y[i] : x[i] * y[i];
	return 0;
}

static int execute(struct host *h, const uint64_t *w, uint32_t count)
{
	static const uint32_t words[] = {
		[ARENA_K_COPY] = 4, [ARENA_K_FILL] = 4, [ARENA_K_ADD] = 5,
		[ARENA_K_MUL] = 5, [ARENA_K_MATMUL] = 8, [ARENA_K_GELU] = 4,
		[ARENA_K_SOFTMAX] = 6, [ARENA_K_LAYERNORM] = 7,
	};
	if (count == 0 || w[0] < ARENA_K_COPY || w[0] > ARENA_K_LAYERNORM ||
	    count < words[w[0]])
		return -1;
	switch (w[0]) {
	case ARENA_K_MATMUL: return k_matmul(h, w);
	case ARENA_K_SOFTMAX: return k_softmax(h, w);
	case ARENA_K_LAYERNORM: return k_layernorm(h, w);
	case ARENA_K_FILL: return -1;   /* the example never fills */
	default: return k_elementwise(h, w);
	}
}

/* A new instance starts whenever the phase changes: poison its fresh
 * planes, as the simulator does. */
static int enter_phase(struct host *h, uint64_t phase)
{
	if (phase == h->phase)
		return 0;
	h->phase = phase;
	if (!h->poison || phase == AC_NONE)
		return 0;
	const struct ac_phase *p = &h->plan->model.phases[phase];
	for (uint32_t i = 0; i < p->plane_count; i++) {
		const struct ac_tensor *t = &h->plan->model.planes[p->plane_first + i];
		float *bytes = at(h, t->offset, t->size / sizeof(float));
		if (!bytes)
			return -1;
		if (!t->carried)
			memset(bytes, 0xFF, t->size);
	}
	return 0;
}

/* Launch l at ordinal t: its words with the Repeat's deltas applied. */
static int launch(struct host *h, uint64_t l, uint64_t t)
{
	const struct ac_model *m = &h->plan->model;
	const struct ac_launch *ln = &m->launches[l];
	uint64_t w[16] = { 0 };
	if (ln->word_count > 16)
		return -1;
	memcpy(w, m->words + ln->word_first, ln->word_count * sizeof(*w));
	for (uint32_t d = 0; d < m->n_deltas; d++)
		if (m->deltas[d].launch == l)
			w[m->deltas[d].word] += t * (uint64_t)m->deltas[d].delta;
	if (enter_phase(h, ac_program_launch_phase(h->program, l)) != 0)
		return -1;
	return execute(h, w, ln->word_count);
}

static int run_schedule(struct host *h)
{
	const struct ac_model *m = &h->plan->model;
	const struct ac_repeat *r = &m->repeats[0];
	for (uint64_t i = 0; i < m->n_refs; i++) {
		uint64_t l = m->refs[i].first, end = l + m->refs[i].count;
		while (l < end) {
			if (l != r->first) {
				if (launch(h, l++, 0) != 0)
					return -1;
				continue;
			}
			for (uint64_t t = 0; t < r->iterations; t++)
				for (uint64_t b = 0; b < r->count; b++)
					if (launch(h, l + b, t) != 0)
						return -1;
			l += r->count;
		}
	}
	return 0;
}

static int upload(struct host *h, enum plan_global g, const float *data)
{
	const struct ac_tensor *t = &h->plan->globals[g];
	float *dst = at(h, t->offset, t->size / sizeof(float));
	if (!dst)
		return -1;
	memcpy(dst, data, t->size);
	return 0;
}

int interp_run(const struct plan *plan, const struct model *m, int poison,
	       float *out)
{
	struct host h = { .plan = plan, .phase = AC_NONE, .poison = poison };
	struct ac_error err;
	int rc = -1;
	h.program = ac_program_new(&plan->model, &err);
	for (int w = 0; w < WIN_COUNT; w++)
		h.mem[w] = calloc(1, plan->windows[w].size);
	if (!h.program || !h.mem[WIN_PARAMS] || !h.mem[WIN_IO] ||
	    !h.mem[WIN_WORKSPACE])
		goto done;
	if (upload(&h, G_WEIGHTS, m->bank) || upload(&h, G_FINAL_NORM, m->final_norm) ||
	    upload(&h, G_INPUT, m->input) || run_schedule(&h))
		goto done;
	const struct ac_tensor *o = &plan->globals[G_OUTPUT];
	memcpy(out, at(&h, o->offset, o->size / sizeof(float)), o->size);
	rc = 0;
done:
	for (int w = 0; w < WIN_COUNT; w++)
		free(h.mem[w]);
	ac_program_free(h.program);
	return rc;
}
