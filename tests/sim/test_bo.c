/* SPDX-License-Identifier: MIT */
/* Buffer objects: create, mmap, read/write, destroy; every error path. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "device.h"

START_TEST(create_happy)
{
	int fd = dev_open();
	uint32_t a = bo_new(fd, 0x10000, 4096);
	uint32_t b = bo_new(fd, 0x11000, 8192);      /* adjacent: fine */
	uint32_t c = bo_new(fd, 0xfffffffffffff000ull, 4096); /* ends at 2^64 */
	ck_assert_uint_ne(a, b);
	ck_assert_uint_ne(b, c);
	/* Fresh buffers read as zero. */
	uint8_t buf[8192];
	memset(buf, 0xAA, sizeof(buf));
	bo_get(fd, b, 0, buf, sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i++)
		ck_assert_uint_eq(buf[i], 0);
	close(fd);
}
END_TEST

START_TEST(create_einval)
{
	int fd = dev_open();
	struct drm_arena_bo_create bad[] = {
		{ .address = 0x10000, .size = 4096, .flags = 1 },
		{ .address = 0x10800, .size = 4096 },
		{ .address = 0x10000, .size = 4095 },
		{ .address = 0x10000, .size = 6000 },
		{ .address = 0x10000, .size = 0 },
		{ .address = 0xfffffffffffff000ull, .size = 8192 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_CREATE, &bad[i]),
				 EINVAL);
	close(fd);
}
END_TEST

START_TEST(create_overlap_ebusy)
{
	int fd = dev_open();
	uint32_t a = bo_new(fd, 0x20000, 0x4000);
	uint64_t ranges[][2] = {
		{ 0x20000, 0x4000 }, { 0x1f000, 0x2000 }, { 0x23000, 0x1000 },
		{ 0x21000, 0x1000 }, { 0x10000, 0x20000 },
	};
	for (size_t i = 0; i < 5; i++) {
		struct drm_arena_bo_create c = { .address = ranges[i][0],
						 .size = ranges[i][1] };
		ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_CREATE, &c), EBUSY);
	}
	struct drm_arena_handle h = { .handle = a };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_DESTROY, &h), 0);
	bo_new(fd, 0x21000, 0x1000);    /* the range is free again */
	close(fd);
}
END_TEST

START_TEST(efault_args)
{
	int fd = dev_open();
	unsigned long reqs[] = {
		DRM_IOCTL_ARENA_BO_CREATE, DRM_IOCTL_ARENA_BO_MMAP,
		DRM_IOCTL_ARENA_BO_WRITE, DRM_IOCTL_ARENA_BO_READ,
		DRM_IOCTL_ARENA_BO_DESTROY, DRM_IOCTL_ARENA_PROGRAM_CREATE,
		DRM_IOCTL_ARENA_PROGRAM_DESTROY, DRM_IOCTL_ARENA_SCHEDULE_CREATE,
		DRM_IOCTL_ARENA_SCHEDULE_APPEND, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT,
		DRM_IOCTL_ARENA_WAIT, DRM_IOCTL_ARENA_SCHEDULE_DESTROY,
	};
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		ck_assert_int_eq(xioctl(fd, reqs[i], BAD), EFAULT);
		ck_assert_int_eq(xioctl(fd, reqs[i], NULL), EFAULT);
	}
	/* A struct that ends on an unmapped page. */
	uint8_t *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(page, MAP_FAILED);
	ck_assert_int_eq(munmap(page + 4096, 4096), 0);
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_CREATE, page + 4096 - 8),
			 EFAULT);
	munmap(page, 4096);
	close(fd);
}
END_TEST

START_TEST(mmap_offset)
{
	int fd = dev_open();
	uint32_t bo = bo_new(fd, 0x10000, 8192);
	struct drm_arena_bo_mmap m = { .handle = bo };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_MMAP, &m), 0);
	ck_assert_uint_eq(m.offset % 4096, 0);
	struct drm_arena_bo_mmap unknown = { .handle = bo + 100 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_MMAP, &unknown), ENOENT);
	struct drm_arena_bo_mmap zero = { .handle = 0 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_MMAP, &zero), ENOENT);
	struct drm_arena_bo_mmap pad = { .handle = bo, .pad = 1 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_MMAP, &pad), EINVAL);
	close(fd);
}
END_TEST

START_TEST(mmap_shares_memory)
{
	int fd = dev_open();
	uint32_t bo = bo_new(fd, 0x10000, 8192);
	struct drm_arena_bo_mmap m = { .handle = bo };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_MMAP, &m), 0);
	uint8_t *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			  (off_t)m.offset);
	ck_assert_ptr_ne(p, MAP_FAILED);
	bo_put(fd, bo, 4100, "ioctl", 5);
	ck_assert_int_eq(memcmp(p + 4100, "ioctl", 5), 0);
	memcpy(p + 10, "mapped", 6);
	char back[6];
	bo_get(fd, bo, 10, back, 6);
	ck_assert_int_eq(memcmp(back, "mapped", 6), 0);
	/* A second, partial-length mapping of the same buffer. */
	uint8_t *q = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)m.offset);
	ck_assert_ptr_ne(q, MAP_FAILED);
	ck_assert_int_eq(memcmp(q + 10, "mapped", 6), 0);
	munmap(q, 4096);
	/* The mapping outlives the buffer, as a GEM mapping does. */
	struct drm_arena_handle h = { .handle = bo };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_DESTROY, &h), 0);
	ck_assert_int_eq(memcmp(p + 4100, "ioctl", 5), 0);
	munmap(p, 8192);
	close(fd);
}
END_TEST

START_TEST(mmap_errors)
{
	int fd = dev_open();
	uint32_t bo = bo_new(fd, 0x10000, 4096);
	struct drm_arena_bo_mmap m = { .handle = bo };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_MMAP, &m), 0);
	void *p = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, (off_t)m.offset);
	ck_assert_ptr_eq(p, MAP_FAILED);
	ck_assert_int_eq(errno, EINVAL);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)m.offset + 4096);
	ck_assert_ptr_eq(p, MAP_FAILED);
	ck_assert_int_eq(errno, EINVAL);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
		 (off_t)m.offset);
	ck_assert_ptr_eq(p, MAP_FAILED);
	ck_assert_int_eq(errno, EINVAL);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	ck_assert_ptr_eq(p, MAP_FAILED);
	ck_assert_int_eq(errno, EINVAL);
	/* mmap64 is the same entry point on LP64, but its own symbol. */
	p = mmap64(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off64_t)m.offset);
	ck_assert_ptr_ne(p, MAP_FAILED);
	munmap(p, 4096);
	close(fd);
}
END_TEST

START_TEST(rw_errors)
{
	int fd = dev_open();
	uint32_t bo = bo_new(fd, 0x10000, 4096);
	char buf[16] = "0123456789abcdef";
	struct drm_arena_bo_rw ok = { .handle = bo, .offset = 4080, .size = 16,
				      .data = (uintptr_t)buf };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_WRITE, &ok), 0);
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_READ, &ok), 0);
	struct drm_arena_bo_rw empty = { .handle = bo, .offset = 4096 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_WRITE, &empty), 0);

	unsigned long reqs[] = { DRM_IOCTL_ARENA_BO_WRITE,
				 DRM_IOCTL_ARENA_BO_READ };
	for (int i = 0; i < 2; i++) {
		struct drm_arena_bo_rw rw = ok;
		rw.pad = 1;
		ck_assert_int_eq(xioctl(fd, reqs[i], &rw), EINVAL);
		rw = ok;
		rw.handle = bo + 1;
		ck_assert_int_eq(xioctl(fd, reqs[i], &rw), ENOENT);
		rw = ok;
		rw.offset = 4081;
		ck_assert_int_eq(xioctl(fd, reqs[i], &rw), EINVAL);
		rw = ok;
		rw.offset = 8192;
		rw.size = 0;
		ck_assert_int_eq(xioctl(fd, reqs[i], &rw), EINVAL);
		rw = ok;
		rw.offset = 16;
		rw.size = UINT64_MAX - 8;   /* offset + size wraps */
		ck_assert_int_eq(xioctl(fd, reqs[i], &rw), EINVAL);
		rw = ok;
		rw.data = BADU;
		ck_assert_int_eq(xioctl(fd, reqs[i], &rw), EFAULT);
	}
	/* Read into read-only memory: EFAULT, not a crash. */
	struct drm_arena_bo_rw ro = ok;
	ro.data = (uintptr_t)"a string literal in .rodata";
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_READ, &ro), EFAULT);
	close(fd);
}
END_TEST

START_TEST(destroy_errors)
{
	int fd = dev_open();
	uint32_t bo = bo_new(fd, 0x10000, 4096);
	struct drm_arena_handle pad = { .handle = bo, .pad = 1 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_DESTROY, &pad), EINVAL);
	struct drm_arena_handle h = { .handle = bo };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_DESTROY, &h), 0);
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_DESTROY, &h), ENOENT);
	struct drm_arena_handle none = { .handle = 0 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_DESTROY, &none), ENOENT);
	struct drm_arena_bo_rw rw = { .handle = bo };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_READ, &rw), ENOENT);
	close(fd);
}
END_TEST

Suite *suite_bo(void)
{
	Suite *s = suite_create("bo");
	TCase *tc = tcase_create("bo");
	tcase_add_test(tc, create_happy);
	tcase_add_test(tc, create_einval);
	tcase_add_test(tc, create_overlap_ebusy);
	tcase_add_test(tc, efault_args);
	tcase_add_test(tc, mmap_offset);
	tcase_add_test(tc, mmap_shares_memory);
	tcase_add_test(tc, mmap_errors);
	tcase_add_test(tc, rw_errors);
	tcase_add_test(tc, destroy_errors);
	suite_add_tcase(s, tc);
	return s;
}
