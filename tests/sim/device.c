/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "device.h"

int dev_open(void)
{
	int fd = open(ARENA_NODE_PATH, O_RDWR | O_CLOEXEC);
	ck_assert_msg(fd >= 0, "open %s: %s", ARENA_NODE_PATH, strerror(errno));
	return fd;
}

int dev_simulated(void)
{
	FILE *maps = fopen("/proc/self/maps", "re");
	ck_assert_ptr_nonnull(maps);
	char line[4096];
	int found = 0;
	while (!found && fgets(line, sizeof(line), maps))
		found = strstr(line, "/libarenasim.so") != NULL;
	fclose(maps);
	return found;
}

void not_applicable(const char *suite, const char *name, const char *why)
{
	printf("%s: %s: not applicable on a kernel driver: %s\n", suite, name,
	       why);
	fflush(stdout);
}

int xioctl(int fd, unsigned long request, void *arg)
{
	return ioctl(fd, request, arg) == 0 ? 0 : errno;
}

uint32_t bo_new(int fd, uint64_t address, uint64_t size)
{
	struct drm_arena_bo_create c = { .address = address, .size = size };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_CREATE, &c), 0);
	ck_assert_uint_ne(c.handle, 0);
	return c.handle;
}

void bo_put(int fd, uint32_t bo, uint64_t offset, const void *data, size_t len)
{
	struct drm_arena_bo_rw rw = { .handle = bo, .offset = offset,
				      .size = len, .data = (uintptr_t)data };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_WRITE, &rw), 0);
}

void bo_get(int fd, uint32_t bo, uint64_t offset, void *data, size_t len)
{
	struct drm_arena_bo_rw rw = { .handle = bo, .offset = offset,
				      .size = len, .data = (uintptr_t)data };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_READ, &rw), 0);
}

void *bo_map(int fd, uint32_t bo, size_t len)
{
	struct drm_arena_bo_mmap m = { .handle = bo };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_MMAP, &m), 0);
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       (off_t)m.offset);
	ck_assert_ptr_ne(p, MAP_FAILED);
	return p;
}

uint32_t prog_from_image(int fd, const void *image, size_t len)
{
	struct drm_arena_program_create c = { .image = (uintptr_t)image,
					      .size = len };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, &c), 0);
	ck_assert_uint_ne(c.handle, 0);
	return c.handle;
}

uint32_t prog_new(int fd, struct pb *b)
{
	size_t len;
	uint8_t *img = pb_image(b, &len);
	pb_free(b);
	uint32_t program = prog_from_image(fd, img, len);
	free(img);
	return program;
}

uint32_t sched_new(int fd, uint32_t program)
{
	struct drm_arena_schedule_create c = { .program = program };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_CREATE, &c), 0);
	ck_assert_uint_ne(c.handle, 0);
	return c.handle;
}

int sched_append(int fd, uint32_t schedule, const struct drm_arena_ref *refs,
		 uint32_t count)
{
	struct drm_arena_schedule_append a = { .schedule = schedule,
					       .count = count,
					       .refs = (uintptr_t)refs };
	return xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a);
}

uint64_t sched_submit(int fd, uint32_t schedule)
{
	struct drm_arena_schedule_submit s = { .schedule = schedule };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &s), 0);
	ck_assert_uint_ne(s.seqno, 0);
	return s.seqno;
}

int dev_seal(int fd, uint64_t *context)
{
	struct drm_arena_seal a = { 0 };
	int rc = xioctl(fd, DRM_IOCTL_ARENA_SEAL, &a);
	*context = a.context;
	return rc;
}

struct arena_seal_value seal_now(const struct arena_seal *s)
{
	struct arena_seal_value v;
	arena_seal_value(s, &v);
	return v;
}

struct arena_seal_value seal_wrong(struct arena_seal_value seal)
{
	seal.bytes[0] ^= 1;
	return seal;
}

int sched_submit_sealed(int fd, uint32_t schedule, struct arena_seal_value seal,
			uint64_t *seqno)
{
	struct drm_arena_schedule_submit_sealed a = {
		.schedule = schedule, .algorithm = ARENA_SEAL_SHA256 };
	memcpy(a.seal, seal.bytes, sizeof(a.seal));
	int rc = xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED, &a);
	*seqno = a.seqno;
	return rc;
}

uint8_t *two_fills_image(size_t *len)
{
	struct pb *b = pb_new();
	pb_phase(b, "P");
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, 0x10000, 1, f32_bits(1.0f)));
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, 0x10010, 1, f32_bits(2.0f)));
	uint8_t *img = pb_image(b, len);
	pb_free(b);
	return img;
}

int dev_wait(int fd, uint64_t seqno)
{
	struct drm_arena_wait w = { .seqno = seqno, .timeout_ns = -1 };
	return xioctl(fd, DRM_IOCTL_ARENA_WAIT, &w);
}

int run_ref(int fd, uint32_t program, uint64_t first, uint64_t count)
{
	uint32_t s = sched_new(fd, program);
	struct drm_arena_ref ref = { first, count };
	ck_assert_int_eq(sched_append(fd, s, &ref, 1), 0);
	int rc = dev_wait(fd, sched_submit(fd, s));
	struct drm_arena_handle h = { .handle = s };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, &h), 0);
	return rc;
}

uint64_t f32_bits(float v)
{
	uint32_t bits;
	memcpy(&bits, &v, sizeof(bits));
	return bits;
}
