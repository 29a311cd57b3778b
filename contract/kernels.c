// SPDX-License-Identifier: MIT
/*
 * The f32 kernels (uapi.h, enum arena_kernel).
 * Word 0 names the kernel; the others are device addresses and element
 * counts in the order uapi.h lists them.  Every range a kernel touches
 * must lie inside one buffer; otherwise, and for too few words or an
 * unknown kernel, the launch faults (-EFAULT) before it writes anything.
 * Words beyond a kernel's layout are ignored; an f32 parameter is the low
 * 32 bits of its word and any nonzero `trans` means transposed.  Element
 * loads and stores are byte copies: device addresses need not be 4-byte
 * aligned.  Overlapping inputs and outputs give whatever the loop order
 * yields (elementwise kernels, softmax and layernorm are safe in place).
 *
 * Freestanding (types.h): exp, tanh and sqrt are computed here in double
 * precision, so every build of this file (kernel or user space) gives the
 * same bits on the same instruction set.  This is the only file of the
 * contract that uses floating point; the kernel driver builds it with
 * CC_FLAGS_FPU and calls it between kernel_fpu_begin() and _end().
 */
#include "kernels.h"

#define ROW_ELEMENTS 65536   /* elementwise work between two pauses */

static float ld(const u8 *base, u64 i)
{
	float v;

	__builtin_memcpy(&v, base + 4 * i, sizeof(v));
	return v;
}

static void st(u8 *base, u64 i, float v)
{
	__builtin_memcpy(base + 4 * i, &v, sizeof(v));
}

static float from_bits(u64 word)
{
	u32 bits = (u32)word;
	float v;

	__builtin_memcpy(&v, &bits, sizeof(v));
	return v;
}

static double from_u64_bits(u64 bits)
{
	double v;

	__builtin_memcpy(&v, &bits, sizeof(v));
	return v;
}

/* 2^k for k in [-1022, 1023]. */
static double pow2(long k)
{
	return from_u64_bits((u64)(k + 1023) << 52);
}

/* e^x in double: x = k ln2 + r, |r| <= ln2 / 2, e^r by its Taylor series
 * to degree 13 (error below 2^-60 of the result).
 */
static double exp_d(double x)
{
	const double ln2_hi = 6.93147180369123816490e-01;
	const double ln2_lo = 1.90821492927058770002e-10;
	double kd, r, p;
	long k;

	if (x != x)
		return x;
	if (x > 709.78)
		return __builtin_inf();
	if (x < -745.2)
		return 0.0;
	kd = x * 1.44269504088896338700;
	k = (long)(kd < 0 ? kd - 0.5 : kd + 0.5);
	r = (x - (double)k * ln2_hi) - (double)k * ln2_lo;
	p = 1.0 / 6227020800.0;                     /* 1/13! */
	p = p * r + 1.0 / 479001600.0;
	p = p * r + 1.0 / 39916800.0;
	p = p * r + 1.0 / 3628800.0;
	p = p * r + 1.0 / 362880.0;
	p = p * r + 1.0 / 40320.0;
	p = p * r + 1.0 / 5040.0;
	p = p * r + 1.0 / 720.0;
	p = p * r + 1.0 / 120.0;
	p = p * r + 1.0 / 24.0;
	p = p * r + 1.0 / 6.0;
	p = p * r + 0.5;
	p = p * r + 1.0;
	p = p * r + 1.0;
	if (k < -1021)                               /* subnormal results */
		return p * pow2(k + 600) * pow2(-600);
	if (k > 1023)
		return p * pow2(k - 1) * 2.0;
	return p * pow2(k);
}

static float expf_c(float x)
{
	return (float)exp_d((double)x);
}

static float tanhf_c(float x)
{
	double d = x, e;

	if (x != x)
		return x;
	if (d > 20.0)
		return 1.0f;
	if (d < -20.0)
		return -1.0f;
	if (d > -1e-4 && d < 1e-4)
		return (float)(d - d * d * d / 3.0);
	e = exp_d(2.0 * d);
	return (float)((e - 1.0) / (e + 1.0));
}

/* sqrt(x) for x > 0 by Newton's method from the exponent's half. */
static double sqrt_d(double x)
{
	u64 bits;
	double y;

	if (!(x > 0.0))
		return x == 0.0 ? 0.0 : __builtin_nan("");
	if (x == __builtin_inf())
		return x;
	__builtin_memcpy(&bits, &x, sizeof(bits));
	y = from_u64_bits((bits >> 1) + ((u64)1023 << 51));
	for (int i = 0; i < 8; i++)
		y = 0.5 * (y + x / y);
	return y;
}

/* fmaxf: the other operand when one is NaN. */
static float maxf(float a, float b)
{
	if (a != a)
		return b;
	if (b != b)
		return a;
	return a > b ? a : b;
}

/* Host memory for `count` f32 at device address `address`, or NULL.  An
 * empty range is never touched, so it needs no buffer.
 */
static u8 *f32s(struct arena_device_mem *mem, u64 address, u128 count)
{
	static u8 nothing[4];

	if (count == 0)
		return nothing;
	if (count > ARENA_U64_MAX / 4)
		return (u8 *)0;
	return mem->range(mem, address, (u64)count * 4);
}

static void pause(struct arena_device_mem *mem)
{
	if (mem->pause)
		mem->pause(mem);
}

static int k_copy(struct arena_device_mem *mem, const u64 *w)
{
	u8 *dst = f32s(mem, w[1], w[3]), *src = f32s(mem, w[2], w[3]);

	if (!dst || !src)
		return -EFAULT;
	if (w[3])
		__builtin_memmove(dst, src, w[3] * 4);
	return 0;
}

static int k_fill(struct arena_device_mem *mem, const u64 *w)
{
	u8 *dst = f32s(mem, w[1], w[2]);
	float v = from_bits(w[3]);

	if (!dst)
		return -EFAULT;
	for (u64 i = 0; i < w[2]; i++) {
		st(dst, i, v);
		if ((i + 1) % ROW_ELEMENTS == 0)
			pause(mem);
	}
	return 0;
}

static int k_binary(struct arena_device_mem *mem, const u64 *w, int mul)
{
	u64 n = w[4];
	u8 *dst = f32s(mem, w[1], n), *x = f32s(mem, w[2], n),
	      *y = f32s(mem, w[3], n);

	if (!dst || !x || !y)
		return -EFAULT;
	for (u64 i = 0; i < n; i++) {
		st(dst, i, mul ? ld(x, i) * ld(y, i) : ld(x, i) + ld(y, i));
		if ((i + 1) % ROW_ELEMENTS == 0)
			pause(mem);
	}
	return 0;
}

/* dst[m,n] = x[m,k] . w[k,n], or x[m,k] . w[n,k]^T when transposed. */
static int k_matmul(struct arena_device_mem *mem, const u64 *w)
{
	u64 m = w[4], k = w[5], n = w[6];
	int trans = w[7] != 0;
	u8 *dst = f32s(mem, w[1], (u128)m * n),
	      *x = f32s(mem, w[2], (u128)m * k),
	      *wt = f32s(mem, w[3], (u128)k * n);

	if (!dst || !x || !wt)
		return -EFAULT;
	for (u64 i = 0; i < m; i++) {
		for (u64 j = 0; j < n; j++) {
			float acc = 0.0f;

			for (u64 p = 0; p < k; p++)
				acc += ld(x, i * k + p) *
				       ld(wt, trans ? j * k + p : p * n + j);
			st(dst, i * n + j, acc);
		}
		pause(mem);
	}
	return 0;
}

static int k_gelu(struct arena_device_mem *mem, const u64 *w)
{
	u8 *dst = f32s(mem, w[1], w[3]), *x = f32s(mem, w[2], w[3]);

	if (!dst || !x)
		return -EFAULT;
	for (u64 i = 0; i < w[3]; i++) {
		float v = ld(x, i);
		float inner = 0.7978845608f * (v + 0.044715f * v * v * v);

		st(dst, i, 0.5f * v * (1.0f + tanhf_c(inner)));
		if ((i + 1) % ROW_ELEMENTS == 0)
			pause(mem);
	}
	return 0;
}

static int k_softmax(struct arena_device_mem *mem, const u64 *w)
{
	u64 rows = w[3], cols = w[4];
	float scale = from_bits(w[5]);
	u128 all = (u128)rows * cols;
	u8 *dst = f32s(mem, w[1], all), *x = f32s(mem, w[2], all);

	if (!dst || !x)
		return -EFAULT;
	for (u64 r = 0; r < rows && cols; r++) {
		u64 o = r * cols;
		float mx = -__builtin_inff();
		double sum = 0.0;

		for (u64 j = 0; j < cols; j++)
			mx = maxf(mx, scale * ld(x, o + j));
		for (u64 j = 0; j < cols; j++) {
			float e = expf_c(scale * ld(x, o + j) - mx);

			st(dst, o + j, e);
			sum += e;
		}
		for (u64 j = 0; j < cols; j++)
			st(dst, o + j, (float)(ld(dst, o + j) / sum));
		pause(mem);
	}
	return 0;
}

static int k_layernorm(struct arena_device_mem *mem, const u64 *w)
{
	u64 rows = w[5], cols = w[6];
	u128 all = (u128)rows * cols;
	u8 *dst = f32s(mem, w[1], all), *x = f32s(mem, w[2], all),
	      *gamma = f32s(mem, w[3], cols), *beta = f32s(mem, w[4], cols);

	if (!dst || !x || !gamma || !beta)
		return -EFAULT;
	for (u64 r = 0; r < rows && cols; r++) {
		u64 o = r * cols;
		double mean = 0.0, var = 0.0, inv;

		for (u64 j = 0; j < cols; j++)
			mean += ld(x, o + j);
		mean /= (double)cols;
		for (u64 j = 0; j < cols; j++) {
			double d = ld(x, o + j) - mean;

			var += d * d;
		}
		var /= (double)cols;
		inv = 1.0 / sqrt_d(var + 1e-5);
		for (u64 j = 0; j < cols; j++)
			st(dst, o + j, (float)((ld(x, o + j) - mean) * inv *
					       ld(gamma, j) + ld(beta, j)));
		pause(mem);
	}
	return 0;
}

u32 arena_kernel_words(u64 kernel)
{
	switch (kernel) {
	case 1: return 4;   /* ARENA_K_COPY */
	case 2: return 4;   /* ARENA_K_FILL */
	case 3: return 5;   /* ARENA_K_ADD */
	case 4: return 5;   /* ARENA_K_MUL */
	case 5: return 8;   /* ARENA_K_MATMUL */
	case 6: return 4;   /* ARENA_K_GELU */
	case 7: return 6;   /* ARENA_K_SOFTMAX */
	case 8: return 7;   /* ARENA_K_LAYERNORM */
	default: return 0;
	}
}

/**
 * arena_kernel_run() - run one launch
 * @mem: the device's memory
 * @w: the launch's words at this iteration
 * @n: how many
 *
 * Return: 0, or -EFAULT before anything is written.
 */
int arena_kernel_run(struct arena_device_mem *mem, const u64 *w, u32 n)
{
	u32 need;

	if (n == 0)
		return -EFAULT;
	need = arena_kernel_words(w[0]);
	if (need == 0 || n < need)
		return -EFAULT;
	switch (w[0]) {
	case 1: return k_copy(mem, w);
	case 2: return k_fill(mem, w);
	case 3: return k_binary(mem, w, 0);
	case 4: return k_binary(mem, w, 1);
	case 5: return k_matmul(mem, w);
	case 6: return k_gelu(mem, w);
	case 7: return k_softmax(mem, w);
	default: return k_layernorm(mem, w);
	}
}
