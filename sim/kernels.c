/* SPDX-License-Identifier: MIT */
/*
 * The f32 kernels of enum arena_kernel.  Word 0 names the kernel; the
 * others are device addresses and element counts in the order uapi.h
 * lists them.  Every range a kernel touches must lie inside one buffer;
 * otherwise, and for too few words or an unknown kernel, the launch
 * faults (-EFAULT) before it writes anything.  Words beyond a kernel's
 * layout are ignored; a f32 parameter is the low 32 bits of its word and
 * any nonzero `trans` means transposed (the ABI faults on nothing else).
 * Element loads and stores go through memcpy: device addresses need not
 * be 4-byte aligned.  Overlapping inputs and outputs give what a device
 * would: whatever the loop order yields (elementwise kernels, softmax and
 * layernorm are safe in place).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <string.h>

#include "sim.h"

static float ld(const uint8_t *base, uint64_t i)
{
	float v;
	memcpy(&v, base + 4 * i, sizeof(v));
	return v;
}

static void st(uint8_t *base, uint64_t i, float v)
{
	memcpy(base + 4 * i, &v, sizeof(v));
}

static float from_bits(uint64_t word)
{
	uint32_t bits = (uint32_t)word;
	float v;
	memcpy(&v, &bits, sizeof(v));
	return v;
}

/* Host memory for `count` f32 at device address `address`, or NULL.
 * An empty range is never touched, so it needs no buffer. */
static uint8_t *f32s(struct sim_file *f, uint64_t address,
		     unsigned __int128 count)
{
	static uint8_t nothing[4];
	if (count == 0)
		return nothing;
	if (count > UINT64_MAX / 4)
		return NULL;
	return bo_range(f, address, (uint64_t)count * 4);
}

static int k_copy(struct sim_file *f, const uint64_t *w)
{
	uint8_t *dst = f32s(f, w[1], w[3]), *src = f32s(f, w[2], w[3]);
	if (!dst || !src)
		return -EFAULT;
	if (w[3])
		memmove(dst, src, w[3] * 4);
	return 0;
}

static int k_fill(struct sim_file *f, const uint64_t *w)
{
	uint8_t *dst = f32s(f, w[1], w[2]);
	if (!dst)
		return -EFAULT;
	float v = from_bits(w[3]);
	for (uint64_t i = 0; i < w[2]; i++)
		st(dst, i, v);
	return 0;
}

static int k_binary(struct sim_file *f, const uint64_t *w, int mul)
{
	uint64_t n = w[4];
	uint8_t *dst = f32s(f, w[1], n), *x = f32s(f, w[2], n),
		*y = f32s(f, w[3], n);
	if (!dst || !x || !y)
		return -EFAULT;
	for (uint64_t i = 0; i < n; i++)
		st(dst, i, mul ? ld(x, i) * ld(y, i) : ld(x, i) + ld(y, i));
	return 0;
}

/* dst[m,n] = x[m,k] . w[k,n], or x[m,k] . w[n,k]^T when transposed. */
static int k_matmul(struct sim_file *f, const uint64_t *w)
{
	uint64_t m = w[4], k = w[5], n = w[6];
	int trans = w[7] != 0;
	unsigned __int128 mn = (unsigned __int128)m * n,
			  mk = (unsigned __int128)m * k,
			  kn = (unsigned __int128)k * n;
	uint8_t *dst = f32s(f, w[1], mn), *x = f32s(f, w[2], mk),
		*wt = f32s(f, w[3], kn);
	if (!dst || !x || !wt)
		return -EFAULT;
	for (uint64_t i = 0; i < m; i++) {
		for (uint64_t j = 0; j < n; j++) {
			float acc = 0.0f;
			for (uint64_t p = 0; p < k; p++)
				acc += ld(x, i * k + p) *
				       ld(wt, trans ? j * k + p : p * n + j);
			st(dst, i * n + j, acc);
		}
	}
	return 0;
}

static int k_gelu(struct sim_file *f, const uint64_t *w)
{
	uint8_t *dst = f32s(f, w[1], w[3]), *x = f32s(f, w[2], w[3]);
	if (!dst || !x)
		return -EFAULT;
	for (uint64_t i = 0; i < w[3]; i++) {
		float v = ld(x, i);
		float inner = 0.7978845608f * (v + 0.044715f * v * v * v);
		st(dst, i, 0.5f * v * (1.0f + tanhf(inner)));
	}
	return 0;
}

static int k_softmax(struct sim_file *f, const uint64_t *w)
{
	uint64_t rows = w[3], cols = w[4];
	float scale = from_bits(w[5]);
	unsigned __int128 all = (unsigned __int128)rows * cols;
	uint8_t *dst = f32s(f, w[1], all), *x = f32s(f, w[2], all);
	if (!dst || !x)
		return -EFAULT;
	for (uint64_t r = 0; r < rows && cols; r++) {
		uint64_t o = r * cols;
		float mx = -INFINITY;
		for (uint64_t j = 0; j < cols; j++)
			mx = fmaxf(mx, scale * ld(x, o + j));
		double sum = 0.0;
		for (uint64_t j = 0; j < cols; j++) {
			float e = expf(scale * ld(x, o + j) - mx);
			st(dst, o + j, e);
			sum += e;
		}
		for (uint64_t j = 0; j < cols; j++)
			st(dst, o + j, (float)(ld(dst, o + j) / sum));
	}
	return 0;
}

static int k_layernorm(struct sim_file *f, const uint64_t *w)
{
	uint64_t rows = w[5], cols = w[6];
	unsigned __int128 all = (unsigned __int128)rows * cols;
	uint8_t *dst = f32s(f, w[1], all), *x = f32s(f, w[2], all),
		*gamma = f32s(f, w[3], cols), *beta = f32s(f, w[4], cols);
	if (!dst || !x || !gamma || !beta)
		return -EFAULT;
	for (uint64_t r = 0; r < rows && cols; r++) {
		uint64_t o = r * cols;
		double mean = 0.0, var = 0.0;
		for (uint64_t j = 0; j < cols; j++)
			mean += ld(x, o + j);
		mean /= (double)cols;
		for (uint64_t j = 0; j < cols; j++) {
			double d = ld(x, o + j) - mean;
			var += d * d;
		}
		var /= (double)cols;
		double inv = 1.0 / sqrt(var + 1e-5);
		for (uint64_t j = 0; j < cols; j++)
			st(dst, o + j, (float)((ld(x, o + j) - mean) * inv *
					       ld(gamma, j) + ld(beta, j)));
	}
	return 0;
}

/* Words each kernel needs, word 0 included. */
static uint32_t words_needed(uint64_t kernel)
{
	switch (kernel) {
	case ARENA_K_COPY:      return 4;
	case ARENA_K_FILL:      return 4;
	case ARENA_K_ADD:       return 5;
	case ARENA_K_MUL:       return 5;
	case ARENA_K_MATMUL:    return 8;
	case ARENA_K_GELU:      return 4;
	case ARENA_K_SOFTMAX:   return 6;
	case ARENA_K_LAYERNORM: return 7;
	default:                return 0;
	}
}

int kernel_run(struct sim_file *f, const uint64_t *w, uint32_t n)
{
	if (n == 0)
		return -EFAULT;
	uint32_t need = words_needed(w[0]);
	if (need == 0 || n < need)
		return -EFAULT;
	switch (w[0]) {
	case ARENA_K_COPY:      return k_copy(f, w);
	case ARENA_K_FILL:      return k_fill(f, w);
	case ARENA_K_ADD:       return k_binary(f, w, 0);
	case ARENA_K_MUL:       return k_binary(f, w, 1);
	case ARENA_K_MATMUL:    return k_matmul(f, w);
	case ARENA_K_GELU:      return k_gelu(f, w);
	case ARENA_K_SOFTMAX:   return k_softmax(f, w);
	default:                return k_layernorm(f, w);
	}
}
