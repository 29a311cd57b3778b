/* SPDX-License-Identifier: MIT */
/*
 * Programs, schedules, submissions and waits: the happy path and every
 * error path of each ioctl.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "device.h"

/* Three launches, a repeat over launches [1, 3). */
static struct pb *small_program(void)
{
	struct pb *b = pb_new();
	pb_window(b, 0x10000, 0x10000);
	pb_phase(b, "P");
	pb_plane(b, "a", 0x10000, 0x1000, 0);
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, 0x10000, 4, f32_bits(1.0f)));
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, 0x10010, 4, f32_bits(2.0f)));
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, 0x10020, 4, f32_bits(3.0f)));
	pb_repeat(b, 1, 2, 3);
	return b;
}

static int create_image(int fd, const void *img, uint64_t len, uint32_t *h)
{
	struct drm_arena_program_create c = { .image = (uintptr_t)img,
					      .size = len };
	int rc = xioctl(fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, &c);
	*h = c.handle;
	return rc;
}

START_TEST(program_happy)
{
	int fd = dev_open();
	size_t len;
	struct pb *b = small_program();
	uint8_t *img = pb_image(b, &len);
	pb_free(b);
	uint32_t h1, h2;
	ck_assert_int_eq(create_image(fd, img, len, &h1), 0);
	ck_assert_int_eq(create_image(fd, img, len, &h2), 0);
	ck_assert_uint_ne(h1, 0);
	ck_assert_uint_ne(h1, h2);
	struct drm_arena_handle d = { .handle = h1 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_PROGRAM_DESTROY, &d), 0);
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_PROGRAM_DESTROY, &d), ENOENT);
	free(img);
	close(fd);
}
END_TEST

START_TEST(program_einval)
{
	int fd = dev_open();
	size_t len;
	struct pb *b = small_program();
	uint8_t *img = pb_image(b, &len);
	pb_free(b);
	uint32_t h;
	struct drm_arena_program_create flags = { .image = (uintptr_t)img,
						  .size = len, .flags = 1 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, &flags),
			 EINVAL);
	ck_assert_int_eq(create_image(fd, img, 0, &h), EINVAL);
	ck_assert_int_eq(create_image(fd, img, len - 8, &h), EINVAL);
	ck_assert_int_eq(create_image(fd, "not an image at all", 20, &h), EINVAL);
	/* One flipped byte in the header's reserved field. */
	uint8_t *bad = malloc(len);
	memcpy(bad, img, len);
	bad[32] = 1;
	ck_assert_int_eq(create_image(fd, bad, len, &h), EINVAL);
	free(bad);
	free(img);

	/* Well-formed image with its own schedule: refused. */
	b = small_program();
	pb_ref(b, 0, 3);
	img = pb_image(b, &len);
	pb_free(b);
	ck_assert_int_eq(create_image(fd, img, len, &h), EINVAL);
	free(img);

	/* An image that parses but is malformed (spec 1): a repeat body
	 * leaving the table, and two phases with one identity. */
	b = small_program();
	pb_repeat(b, 2, 5, 2);
	img = pb_image(b, &len);
	pb_free(b);
	ck_assert_int_eq(create_image(fd, img, len, &h), EINVAL);
	free(img);
	b = small_program();
	pb_phase(b, "P");
	img = pb_image(b, &len);
	pb_free(b);
	ck_assert_int_eq(create_image(fd, img, len, &h), EINVAL);
	free(img);
	close(fd);
}
END_TEST

START_TEST(program_efault)
{
	int fd = dev_open();
	uint32_t h;
	ck_assert_int_eq(create_image(fd, BAD, 4096, &h), EFAULT);
	/* An image that runs off the end of its mapping. */
	size_t len;
	struct pb *b = small_program();
	uint8_t *img = pb_image(b, &len);
	pb_free(b);
	uint8_t *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(page, MAP_FAILED);
	ck_assert_int_eq(munmap(page + 4096, 4096), 0);
	uint8_t *at = page + 4096 - (len - 8);
	memcpy(at, img, len - 8);
	ck_assert_int_eq(create_image(fd, at, len, &h), EFAULT);
	memmove(page, img, len);     /* the same bytes, all mapped: fine */
	ck_assert_int_eq(create_image(fd, page, len, &h), 0);
	munmap(page, 4096);
	free(img);
	close(fd);
}
END_TEST

START_TEST(program_destroy_errors)
{
	int fd = dev_open();
	uint32_t p = prog_new(fd, small_program());
	uint32_t s = sched_new(fd, p);
	struct drm_arena_handle d = { .handle = p };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_PROGRAM_DESTROY, &d), EBUSY);
	struct drm_arena_handle pad = { .handle = p, .pad = 7 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_PROGRAM_DESTROY, &pad),
			 EINVAL);
	struct drm_arena_handle none = { .handle = p + 1 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_PROGRAM_DESTROY, &none),
			 ENOENT);
	struct drm_arena_handle ds = { .handle = s };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, &ds), 0);
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_PROGRAM_DESTROY, &d), 0);
	close(fd);
}
END_TEST

START_TEST(schedule_create_errors)
{
	int fd = dev_open();
	struct drm_arena_schedule_create c = { .program = 1 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_CREATE, &c), ENOENT);
	uint32_t p = prog_new(fd, small_program());
	c.program = p;
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_CREATE, &c), 0);
	uint32_t first = c.handle;
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_CREATE, &c), 0);
	ck_assert_uint_ne(first, c.handle);
	close(fd);   /* closing with live objects frees them */
}
END_TEST

START_TEST(append_happy)
{
	int fd = dev_open();
	uint32_t p = prog_new(fd, small_program());
	uint32_t s = sched_new(fd, p);
	struct drm_arena_ref refs[] = { { 0, 1 }, { 1, 2 }, { 0, 3 } };
	ck_assert_int_eq(sched_append(fd, s, refs, 3), 0);
	ck_assert_int_eq(sched_append(fd, s, NULL, 0), 0);    /* empty batch */
	close(fd);
}
END_TEST

START_TEST(append_einval)
{
	int fd = dev_open();
	uint32_t p = prog_new(fd, small_program());
	uint32_t s = sched_new(fd, p);
	struct drm_arena_ref bad[] = {
		{ 0, 0 },                   /* empty */
		{ 3, 1 },                   /* outside the table */
		{ 0, 4 },
		{ 2, UINT64_MAX },          /* first + count wraps */
		{ 0, 2 },                   /* cuts the body [1, 3) */
		{ 2, 1 },                   /* likewise, from inside */
		{ 1, 1 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(sched_append(fd, s, &bad[i], 1) == EINVAL,
			      "ref %zu", i);
	/* Atomic: the good first reference of a bad batch is not kept. */
	uint32_t bo = bo_new(fd, 0x10000, 4096);
	struct drm_arena_ref batch[] = { { 0, 1 }, { 0, 2 } };
	ck_assert_int_eq(sched_append(fd, s, batch, 2), EINVAL);
	ck_assert_int_eq(dev_wait(fd, sched_submit(fd, s)), 0);
	float v = -1;
	bo_get(fd, bo, 0, &v, sizeof(v));
	ck_assert(v == 0.0f);
	/* More than a batch may hold: EINVAL before the refs are read. */
	struct drm_arena_schedule_append big = { .schedule = s,
						 .count = (1u << 20) + 1,
						 .refs = BADU };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &big),
			 EINVAL);
	close(fd);
}
END_TEST

START_TEST(append_enoent_efault)
{
	int fd = dev_open();
	uint32_t p = prog_new(fd, small_program());
	uint32_t s = sched_new(fd, p);
	struct drm_arena_ref ok = { 0, 1 };
	ck_assert_int_eq(sched_append(fd, s + 1, &ok, 1), ENOENT);
	ck_assert_int_eq(sched_append(fd, 0, &ok, 1), ENOENT);
	ck_assert_int_eq(sched_append(fd, s, BAD, 1), EFAULT);
	ck_assert_int_eq(sched_append(fd, s, BAD, 1u << 20), EFAULT);
	close(fd);
}
END_TEST

/* 2^62 executed launches make a schedule malformed (spec 1.3). */
START_TEST(append_too_long)
{
	int fd = dev_open();
	struct pb *b = pb_new();
	pb_phase(b, "P");
	for (int i = 0; i < 1025; i++)
		pb_launch(b, "P", PB_WORDS(0));
	pb_repeat(b, 0, 1025, 0xffffffffull);
	uint32_t s = sched_new(fd, prog_new(fd, b));
	uint32_t n = 1u << 19;
	struct drm_arena_ref *refs = malloc(n * sizeof(*refs));
	for (uint32_t i = 0; i < n; i++)
		refs[i] = (struct drm_arena_ref){ 0, 1025 };
	ck_assert_int_eq(sched_append(fd, s, refs, n), 0);      /* < 2^62 */
	ck_assert_int_eq(sched_append(fd, s, refs, n), EINVAL); /* >= 2^62 */
	free(refs);
	close(fd);
}
END_TEST

START_TEST(submit_and_wait)
{
	int fd = dev_open();
	uint32_t p = prog_new(fd, small_program());
	uint32_t s = sched_new(fd, p);
	/* An empty schedule runs (nothing) too. */
	uint64_t q1 = sched_submit(fd, s);
	uint64_t q2 = sched_submit(fd, s);
	ck_assert_uint_eq(q2, q1 + 1);
	ck_assert_int_eq(dev_wait(fd, q1), 0);
	ck_assert_int_eq(dev_wait(fd, q2), 0);
	ck_assert_int_eq(dev_wait(fd, q2), 0);     /* already complete */
	struct drm_arena_wait w = { .seqno = q2, .timeout_ns = 0 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_WAIT, &w), 0);
	ck_assert_int_eq(dev_wait(fd, 0), EINVAL);
	ck_assert_int_eq(dev_wait(fd, q2 + 1), EINVAL);
	ck_assert_int_eq(dev_wait(fd, UINT64_MAX), EINVAL);

	struct drm_arena_schedule_submit flags = { .schedule = s, .flags = 1 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &flags),
			 EINVAL);
	struct drm_arena_schedule_submit none = { .schedule = s + 1 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &none),
			 ENOENT);
	/* Failed submissions hand out no sequence number. */
	ck_assert_uint_eq(sched_submit(fd, s), q2 + 1);
	close(fd);
}
END_TEST

START_TEST(schedule_destroy_errors)
{
	int fd = dev_open();
	uint32_t p = prog_new(fd, small_program());
	uint32_t s = sched_new(fd, p);
	struct drm_arena_handle pad = { .handle = s, .pad = 1 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, &pad),
			 EINVAL);
	struct drm_arena_handle h = { .handle = s };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, &h), 0);
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, &h), ENOENT);
	struct drm_arena_ref ok = { 0, 1 };
	ck_assert_int_eq(sched_append(fd, s, &ok, 1), ENOENT);
	struct drm_arena_schedule_submit sub = { .schedule = s };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &sub),
			 ENOENT);
	close(fd);
}
END_TEST

/* An older, shorter struct (the caller's size in the command) is
 * zero-extended, as drm_ioctl does. */
START_TEST(short_struct)
{
	int fd = dev_open();
	struct drm_arena_bo_create c = { .address = 0x10000, .size = 4096 };
	unsigned long req = DRM_IOWR(DRM_COMMAND_BASE + DRM_ARENA_BO_CREATE,
				     struct drm_arena_handle);   /* 8 bytes */
	uint64_t addr = 0x10000;
	ck_assert_int_eq(xioctl(fd, req, &addr), EINVAL);       /* size 0 */
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_CREATE, &c), 0);
	close(fd);
}
END_TEST

Suite *suite_program(void)
{
	Suite *s = suite_create("program");
	TCase *tc = tcase_create("program");
	tcase_add_test(tc, program_happy);
	tcase_add_test(tc, program_einval);
	tcase_add_test(tc, program_efault);
	tcase_add_test(tc, program_destroy_errors);
	tcase_add_test(tc, schedule_create_errors);
	tcase_add_test(tc, append_happy);
	tcase_add_test(tc, append_einval);
	tcase_add_test(tc, append_enoent_efault);
	tcase_add_test(tc, submit_and_wait);
	tcase_add_test(tc, schedule_destroy_errors);
	tcase_add_test(tc, short_struct);
	suite_add_tcase(s, tc);
	/* 2^20 references appended: a second alone, 3.5 to 5.4 s under TSan
	 * on a loaded 2-core machine, past Check's 4 s default. */
	tc = tcase_create("program-long");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, append_too_long);
	suite_add_tcase(s, tc);
	return s;
}
