/* SPDX-License-Identifier: MIT */
/*
 * Execution: the kernels on known data, schedule order, repeats with
 * deltas and frame tables per spec 1.2 V(t), faults, and poisoning
 * (which needs a process of its own per setting: see poison_demo).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device.h"

extern char **environ;

#define BASE 0x10000ull       /* one 64 KiB buffer for most tests */
#define SIZE 0x10000ull

/* A program whose launches are all of phase "P", which names the whole
 * buffer as one plane: the device ignores the plan, so this is enough. */
static struct pb *plain(void)
{
	struct pb *b = pb_new();
	pb_window(b, BASE, SIZE);
	pb_phase(b, "P");
	pb_plane(b, "all", BASE, SIZE, 0);
	return b;
}

static void put_f32(int fd, uint32_t bo, uint64_t address, const float *v,
		    size_t n)
{
	bo_put(fd, bo, address - BASE, v, n * sizeof(*v));
}

static void get_f32(int fd, uint32_t bo, uint64_t address, float *v, size_t n)
{
	bo_get(fd, bo, address - BASE, v, n * sizeof(*v));
}

static void assert_f32(const float *got, const float *want, size_t n,
		       float tol)
{
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(fabsf(got[i] - want[i]) <= tol,
			      "[%zu]: got %.9g, want %.9g", i, got[i], want[i]);
}

START_TEST(elementwise)
{
	int fd = dev_open();
	uint32_t bo = bo_new(fd, BASE, SIZE);
	float x[] = { 1, 2, 3, 4 }, y[] = { 10, 20, 30, 40 };
	put_f32(fd, bo, BASE, x, 4);
	put_f32(fd, bo, BASE + 0x100, y, 4);
	struct pb *b = plain();
	pb_launch(b, "P", PB_WORDS(ARENA_K_COPY, BASE + 0x200, BASE, 4));
	pb_launch(b, "P", PB_WORDS(ARENA_K_ADD, BASE + 0x300, BASE,
				   BASE + 0x100, 4));
	pb_launch(b, "P", PB_WORDS(ARENA_K_MUL, BASE + 0x400, BASE,
				   BASE + 0x100, 4));
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, BASE + 0x500, 4,
				   f32_bits(2.5f)));
	/* Unaligned device addresses are fine. */
	pb_launch(b, "P", PB_WORDS(ARENA_K_COPY, BASE + 0x601, BASE, 4));
	ck_assert_int_eq(run_ref(fd, prog_new(fd, b), 0, 5), 0);
	float got[4];
	get_f32(fd, bo, BASE + 0x200, got, 4);
	assert_f32(got, x, 4, 0);
	get_f32(fd, bo, BASE + 0x300, got, 4);
	assert_f32(got, (float[]){ 11, 22, 33, 44 }, 4, 0);
	get_f32(fd, bo, BASE + 0x400, got, 4);
	assert_f32(got, (float[]){ 10, 40, 90, 160 }, 4, 0);
	get_f32(fd, bo, BASE + 0x500, got, 4);
	assert_f32(got, (float[]){ 2.5f, 2.5f, 2.5f, 2.5f }, 4, 0);
	get_f32(fd, bo, BASE + 0x601, got, 4);
	assert_f32(got, x, 4, 0);
	close(fd);
}
END_TEST

START_TEST(matmul)
{
	int fd = dev_open();
	uint32_t bo = bo_new(fd, BASE, SIZE);
	float x[] = { 1, 2, 3, 4, 5, 6 };             /* 2 x 3 */
	float w[] = { 7, 8, 9, 10, 11, 12 };          /* 3 x 2 */
	float wt[] = { 7, 9, 11, 8, 10, 12 };         /* the same, 2 x 3 */
	put_f32(fd, bo, BASE, x, 6);
	put_f32(fd, bo, BASE + 0x100, w, 6);
	put_f32(fd, bo, BASE + 0x200, wt, 6);
	struct pb *b = plain();
	pb_launch(b, "P", PB_WORDS(ARENA_K_MATMUL, BASE + 0x300, BASE,
				   BASE + 0x100, 2, 3, 2, 0));
	pb_launch(b, "P", PB_WORDS(ARENA_K_MATMUL, BASE + 0x400, BASE,
				   BASE + 0x200, 2, 3, 2, 1));
	ck_assert_int_eq(run_ref(fd, prog_new(fd, b), 0, 2), 0);
	float want[] = { 58, 64, 139, 154 }, got[4];
	get_f32(fd, bo, BASE + 0x300, got, 4);
	assert_f32(got, want, 4, 0);
	get_f32(fd, bo, BASE + 0x400, got, 4);
	assert_f32(got, want, 4, 0);
	close(fd);
}
END_TEST

START_TEST(nonlinear)
{
	int fd = dev_open();
	uint32_t bo = bo_new(fd, BASE, SIZE);
	float x[] = { -1, 0, 1, 2 };
	float gamma[] = { 1, 1, 2, 2 }, beta[] = { 0, 0, 1, 1 };
	put_f32(fd, bo, BASE, x, 4);
	put_f32(fd, bo, BASE + 0x100, gamma, 4);
	put_f32(fd, bo, BASE + 0x200, beta, 4);
	struct pb *b = plain();
	pb_launch(b, "P", PB_WORDS(ARENA_K_GELU, BASE + 0x300, BASE, 4));
	pb_launch(b, "P", PB_WORDS(ARENA_K_SOFTMAX, BASE + 0x400, BASE, 2, 2,
				   f32_bits(0.5f)));
	pb_launch(b, "P", PB_WORDS(ARENA_K_LAYERNORM, BASE + 0x500, BASE,
				   BASE + 0x100, BASE + 0x200, 1, 4));
	ck_assert_int_eq(run_ref(fd, prog_new(fd, b), 0, 3), 0);

	float want[4], got[4];
	for (int i = 0; i < 4; i++) {
		double v = x[i];
		want[i] = (float)(0.5 * v * (1 + tanh(sqrt(2 / M_PI) *
						      (v + 0.044715 * v * v * v))));
	}
	get_f32(fd, bo, BASE + 0x300, got, 4);
	assert_f32(got, want, 4, 1e-5f);
	for (int r = 0; r < 2; r++) {
		double a = exp(0.5 * x[2 * r]), c = exp(0.5 * x[2 * r + 1]);
		want[2 * r] = (float)(a / (a + c));
		want[2 * r + 1] = (float)(c / (a + c));
	}
	get_f32(fd, bo, BASE + 0x400, got, 4);
	assert_f32(got, want, 4, 1e-6f);
	double mean = 0.5, var = (2.25 + 0.25 + 0.25 + 2.25) / 4;
	for (int i = 0; i < 4; i++)
		want[i] = (float)((x[i] - mean) / sqrt(var + 1e-5) * gamma[i] +
				  beta[i]);
	get_f32(fd, bo, BASE + 0x500, got, 4);
	assert_f32(got, want, 4, 1e-5f);
	close(fd);
}
END_TEST

/* Spec 1.2: V(t) = B(t) + t * D, B(t) from frame t mod F for a slot. */
START_TEST(repeat_v_of_t)
{
	int fd = dev_open();
	uint32_t bo = bo_new(fd, BASE, SIZE);
	struct pb *b = plain();
	/* 0: dst += 16 per t; value from the table (slot A). */
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, BASE, 1, 0));
	/* 1: two deltas on dst add up (+4 +4); src follows launch 0. */
	pb_launch(b, "P", PB_WORDS(ARENA_K_COPY, BASE + 0x800, BASE, 1));
	/* 2: dst from the table (slot B) plus a delta of +4. */
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, 0, 1, f32_bits(7.0f)));
	pb_repeat(b, 0, 3, 5);
	pb_delta(b, 0, 1, 16);
	pb_delta(b, 1, 1, 4);
	pb_delta(b, 1, 2, 16);
	pb_delta(b, 1, 1, 4);
	pb_delta(b, 2, 1, 4);
	pb_slot(b, 0, 3);
	pb_slot(b, 2, 1);
	pb_frame(b, (uint64_t[]){ f32_bits(1.0f), BASE + 0x200 });
	pb_frame(b, (uint64_t[]){ f32_bits(2.0f), BASE + 0x300 });
	pb_frame(b, (uint64_t[]){ f32_bits(3.0f), BASE + 0x400 });
	ck_assert_int_eq(run_ref(fd, prog_new(fd, b), 0, 3), 0);

	float frame[] = { 1, 2, 3 };
	for (uint64_t t = 0; t < 5; t++) {
		float v;
		get_f32(fd, bo, BASE + 16 * t, &v, 1);
		ck_assert(v == frame[t % 3]);
		get_f32(fd, bo, BASE + 0x800 + 8 * t, &v, 1);
		ck_assert(v == frame[t % 3]);
		uint64_t at = BASE + 0x200 + 0x100 * (t % 3) + 4 * t;
		get_f32(fd, bo, at, &v, 1);
		ck_assert_msg(v == 7.0f, "t=%d at %#llx", (int)t,
			      (unsigned long long)at);
	}
	/* And nothing else in those areas. */
	float area[192];
	get_f32(fd, bo, BASE + 0x200, area, 192);
	int sevens = 0;
	for (int i = 0; i < 192; i++)
		sevens += area[i] == 7.0f;
	ck_assert_int_eq(sevens, 5);
	get_f32(fd, bo, BASE, area, 64);
	int nonzero = 0;
	for (int i = 0; i < 64; i++)
		nonzero += area[i] != 0;
	ck_assert_int_eq(nonzero, 5);
	close(fd);
}
END_TEST

START_TEST(schedule_order)
{
	int fd = dev_open();
	uint32_t bo = bo_new(fd, BASE, SIZE);
	float one = 1;
	put_f32(fd, bo, BASE + 0x100, &one, 1);
	struct pb *b = plain();
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, BASE, 1, f32_bits(1.0f)));
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, BASE, 1, f32_bits(2.0f)));
	/* 2: acc += one, 10 times, then 3: out = acc, once. */
	pb_launch(b, "P", PB_WORDS(ARENA_K_ADD, BASE + 0x200, BASE + 0x200,
				   BASE + 0x100, 1));
	pb_launch(b, "P", PB_WORDS(ARENA_K_COPY, BASE + 0x300, BASE + 0x200, 1));
	pb_repeat(b, 2, 1, 10);
	uint32_t p = prog_new(fd, b);

	uint32_t s = sched_new(fd, p);
	struct drm_arena_ref r1[] = { { 1, 1 }, { 0, 1 } };
	ck_assert_int_eq(sched_append(fd, s, r1, 2), 0);
	ck_assert_int_eq(dev_wait(fd, sched_submit(fd, s)), 0);
	float v;
	get_f32(fd, bo, BASE, &v, 1);
	ck_assert(v == 1.0f);
	/* Appending more and submitting again runs the whole schedule. */
	struct drm_arena_ref r2 = { 1, 1 };
	ck_assert_int_eq(sched_append(fd, s, &r2, 1), 0);
	ck_assert_int_eq(dev_wait(fd, sched_submit(fd, s)), 0);
	get_f32(fd, bo, BASE, &v, 1);
	ck_assert(v == 2.0f);

	ck_assert_int_eq(run_ref(fd, p, 2, 2), 0);
	get_f32(fd, bo, BASE + 0x300, &v, 1);
	ck_assert(v == 10.0f);
	close(fd);
}
END_TEST

START_TEST(mmap_sees_kernels)
{
	int fd = dev_open();
	uint32_t bo = bo_new(fd, BASE, SIZE);
	struct drm_arena_bo_mmap m = { .handle = bo };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_MMAP, &m), 0);
	float *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			(off_t)m.offset);
	ck_assert_ptr_ne(p, MAP_FAILED);
	p[0] = 3;
	p[1] = 4;
	struct pb *b = plain();
	pb_launch(b, "P", PB_WORDS(ARENA_K_MUL, BASE + 8, BASE, BASE + 4, 1));
	ck_assert_int_eq(run_ref(fd, prog_new(fd, b), 0, 1), 0);
	ck_assert(p[2] == 12.0f);
	munmap(p, SIZE);
	close(fd);
}
END_TEST

/* Each launch alone faults; `before` ran, `after` did not. */
START_TEST(faults)
{
	int fd = dev_open();
	uint32_t bo = bo_new(fd, BASE, SIZE);
	bo_new(fd, BASE + SIZE, 0x1000);           /* adjacent, separate */
	struct pb *b = plain();
	uint64_t fill1 = f32_bits(1.0f);
	struct {
		uint32_t n;
		uint64_t w[8];
	} bad[] = {
		{ 4, { 99, BASE, 1, fill1 } },                     /* unknown */
		{ 0, { 0 } },                                      /* no words */
		{ 3, { ARENA_K_COPY, BASE, BASE + 4 } },           /* too few */
		{ 4, { ARENA_K_FILL, 0x1000, 1, fill1 } },         /* no buffer */
		{ 4, { ARENA_K_FILL, BASE + SIZE - 4, 2, fill1 } },/* straddles */
		{ 4, { ARENA_K_FILL, BASE, 1ull << 62, fill1 } },  /* n*4 wraps */
		{ 8, { ARENA_K_MATMUL, BASE, BASE, BASE, 1ull << 32, 1ull << 32,
		       1, 0 } },                                   /* m*k huge */
		{ 5, { ARENA_K_ADD, BASE, BASE, BASE + SIZE + 0x1000, 1 } },
	};
	size_t n = sizeof(bad) / sizeof(bad[0]);
	uint32_t before = pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, BASE + 0x100,
						     1, fill1));
	for (size_t i = 0; i < n; i++)
		pb_launch(b, "P", bad[i].n, bad[i].w);
	uint32_t after = pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, BASE + 0x200,
						    1, fill1));
	uint32_t p = prog_new(fd, b);
	for (size_t i = 0; i < n; i++) {
		uint32_t s = sched_new(fd, p);
		struct drm_arena_ref refs[] = { { before, 1 }, { i + 1, 1 },
						{ after, 1 } };
		ck_assert_int_eq(sched_append(fd, s, refs, 3), 0);
		float zero[2] = { 0, 0 };
		put_f32(fd, bo, BASE + 0x100, zero, 1);
		put_f32(fd, bo, BASE + 0x200, zero, 1);
		uint64_t q = sched_submit(fd, s);
		ck_assert_msg(dev_wait(fd, q) == EIO, "launch %zu", i);
		ck_assert_int_eq(dev_wait(fd, q), EIO);   /* and stays so */
		float v[2];
		get_f32(fd, bo, BASE + 0x100, &v[0], 1);
		get_f32(fd, bo, BASE + 0x200, &v[1], 1);
		ck_assert(v[0] == 1.0f);
		ck_assert(v[1] == 0.0f);
	}
	/* A later submission is unaffected. */
	ck_assert_int_eq(run_ref(fd, p, after, 1), 0);
	close(fd);
}
END_TEST

/* Words whose V(t) leaves [0, 2^64) fault at that iteration. */
START_TEST(faults_v_of_t)
{
	int fd = dev_open();
	uint32_t bo = bo_new(fd, BASE, SIZE);
	struct pb *b = plain();
	/* n = 1 - t: 1, 0, then -1 at t = 2. */
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, BASE, 1, f32_bits(5.0f)));
	pb_repeat(b, 0, 1, 4);
	pb_delta(b, 0, 2, -1);
	/* value bits 2^64 - 1 + t: fine at t = 0, 2^64 at t = 1. */
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, BASE + 0x100, 1, UINT64_MAX));
	pb_repeat(b, 1, 1, 2);
	pb_delta(b, 1, 3, 1);
	/* dst = BASE + 0x200 + 4t, three deltas of INT64_MAX ... and the
	 * wrap a 64-bit sum would hide: must fault at t = 1. */
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, BASE + 0x200, 1,
				   f32_bits(6.0f)));
	pb_repeat(b, 2, 1, 2);
	pb_delta(b, 2, 1, INT64_MAX);
	pb_delta(b, 2, 1, INT64_MAX);
	pb_delta(b, 2, 1, 2);          /* sum = 2^64: 64-bit wraps to 0 */
	uint32_t p = prog_new(fd, b);
	ck_assert_int_eq(run_ref(fd, p, 0, 1), EIO);
	ck_assert_int_eq(run_ref(fd, p, 1, 1), EIO);
	ck_assert_int_eq(run_ref(fd, p, 2, 1), EIO);
	float v[3];
	get_f32(fd, bo, BASE, &v[0], 1);
	get_f32(fd, bo, BASE + 0x100, &v[1], 1);
	get_f32(fd, bo, BASE + 0x200, &v[2], 1);
	ck_assert(v[0] == 5.0f);                 /* t = 0 ran */
	ck_assert(isnan(v[1]));                  /* bits 0xffffffff */
	ck_assert(v[2] == 6.0f);
	close(fd);
}
END_TEST

/* ---- poisoning ---- */

#define PBASE 0x20000ull
#define PSIZE 0x20000ull
#define PLANE_A 0x20000ull
#define OUT 0x30000ull

/*
 * Phase P writes plane a (fresh); phase Q reads it.  Correct: Q declares
 * a carried.  Buggy: Q declares a fresh too, so the value Q reads is not
 * guaranteed (any workspace reuse may have overwritten it); only
 * poisoning makes that visible.  Q also has a fresh plane z that runs
 * past the end of the buffer: poisoning must clip it.
 */
static struct pb *reader_program(int q_carries_a)
{
	struct pb *b = pb_new();
	pb_window(b, PBASE, PSIZE);
	pb_global(b, "out", OUT, 0x100);
	pb_phase(b, "P");
	pb_plane(b, "a", PLANE_A, 0x40, 0);
	pb_phase(b, "Q");
	pb_plane(b, "a", PLANE_A, 0x40, q_carries_a);
	pb_plane(b, "z", PBASE + PSIZE - 0x1000, 0x4000, 0);
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, PLANE_A, 1, f32_bits(1.0f)));
	pb_launch(b, "Q", PB_WORDS(ARENA_K_COPY, OUT, PLANE_A, 1));
	/* 2: P reads a again (same phase: same instance if consecutive). */
	pb_launch(b, "P", PB_WORDS(ARENA_K_COPY, OUT + 0x10, PLANE_A, 1));
	pb_repeat(b, 2, 1, 3);
	pb_delta(b, 2, 1, 4);
	return b;
}

static uint32_t out_bits(int fd, uint32_t bo, uint64_t address)
{
	uint32_t v;
	bo_get(fd, bo, address - PBASE, &v, sizeof(v));
	return v;
}

int poison_demo(const char *name)
{
	int fd = open(ARENA_NODE_PATH, O_RDWR);
	ck_assert_int_ge(fd, 0);
	uint32_t bo = bo_new(fd, PBASE, PSIZE);
	uint32_t p = prog_new(fd, reader_program(strcmp(name, "correct") == 0));
	if (strcmp(name, "instances") == 0) {
		/* P, then P again in another reference and across the
		 * iterations of a repeat: one instance, a survives. */
		uint32_t s = sched_new(fd, p);
		struct drm_arena_ref r[] = { { 0, 1 }, { 2, 1 } };
		if (sched_append(fd, s, r, 2) || dev_wait(fd, sched_submit(fd, s)))
			return 3;
		for (int t = 0; t < 3; t++)
			printf("%08x ", out_bits(fd, bo, OUT + 0x10 + 4 * t));
		fflush(stdout);
		/* P, Q, P: the second P instance declares a fresh again. */
		if (run_ref(fd, p, 0, 3))
			return 3;
		printf("%08x\n", out_bits(fd, bo, OUT + 0x10));
	} else {
		if (run_ref(fd, p, 0, 2))
			return 3;
		printf("%08x\n", out_bits(fd, bo, OUT));
	}
	fflush(stdout);
	close(fd);
	return 0;
}

/* Runs this program as `--poison-demo name`, poisoned or not. */
static void demo(const char *name, int poison, char *out, size_t len)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 2, sizeof(*env));
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "ARENASIM_POISON=", 16) != 0)
			env[k++] = environ[i];
	if (poison)
		env[k++] = "ARENASIM_POISON=1";
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	char *argv[] = { "sim-tests", "--poison-demo", (char *)name, NULL };
	pid_t pid;
	ck_assert_int_eq(posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv,
				     env), 0);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	close(p[1]);
	size_t got = 0;
	ssize_t r;
	while (got + 1 < len && (r = read(p[0], out + got, len - 1 - got)) > 0)
		got += (size_t)r;
	out[got] = 0;
	close(p[0]);
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "demo %s exited with %d", name, status);
}

START_TEST(poison_exposes_bug)
{
	char off[64], on[64];
	demo("buggy", 0, off, sizeof(off));
	demo("buggy", 1, on, sizeof(on));
	ck_assert_str_eq(off, "3f800000\n");      /* the bug hides */
	ck_assert_str_eq(on, "ffffffff\n");       /* the bug shows */
}
END_TEST

START_TEST(poison_spares_correct)
{
	char off[64], on[64];
	demo("correct", 0, off, sizeof(off));
	demo("correct", 1, on, sizeof(on));
	ck_assert_str_eq(off, "3f800000\n");
	ck_assert_str_eq(on, "3f800000\n");
}
END_TEST

START_TEST(poison_instances)
{
	char off[128], on[128];
	demo("instances", 0, off, sizeof(off));
	demo("instances", 1, on, sizeof(on));
	ck_assert_str_eq(off, "3f800000 3f800000 3f800000 3f800000\n");
	ck_assert_str_eq(on, "3f800000 3f800000 3f800000 ffffffff\n");
}
END_TEST

Suite *suite_execute(void)
{
	Suite *s = suite_create("execute");
	TCase *tc = tcase_create("kernels");
	tcase_add_test(tc, elementwise);
	tcase_add_test(tc, matmul);
	tcase_add_test(tc, nonlinear);
	tcase_add_test(tc, mmap_sees_kernels);
	suite_add_tcase(s, tc);
	tc = tcase_create("schedule");
	tcase_add_test(tc, repeat_v_of_t);
	tcase_add_test(tc, schedule_order);
	tcase_add_test(tc, faults);
	tcase_add_test(tc, faults_v_of_t);
	suite_add_tcase(s, tc);
	tc = tcase_create("poison");
	tcase_add_test(tc, poison_exposes_bug);
	tcase_add_test(tc, poison_spares_correct);
	tcase_add_test(tc, poison_instances);
	suite_add_tcase(s, tc);
	return s;
}
