/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"
#include "spawn.h"

int fake_calls[16];

static uint32_t fake_next;
static struct {
	unsigned int cmd;
	int err, times;
} failing;

static int fake_ioctl(int fd, unsigned int cmd, void *arg)
{
	(void)fd;
	if (cmd == failing.cmd && failing.times > 0) {
		failing.times--;
		return -failing.err;
	}
	fake_calls[_IOC_NR(cmd) - DRM_COMMAND_BASE]++;
	switch (cmd) {
	case DRM_IOCTL_ARENA_PROGRAM_CREATE:
		((struct drm_arena_program_create *)arg)->handle = ++fake_next;
		return 0;
	case DRM_IOCTL_ARENA_SCHEDULE_CREATE:
		((struct drm_arena_schedule_create *)arg)->handle = ++fake_next;
		return 0;
	case DRM_IOCTL_ARENA_SCHEDULE_SUBMIT:
		((struct drm_arena_schedule_submit *)arg)->seqno = 1;
		return 0;
	default:
		return 0;
	}
}

void fake_setup(void)
{
	ag_driver_ioctl = fake_ioctl;
	fake_next = 0;
	failing.times = 0;
	memset(fake_calls, 0, sizeof(fake_calls));
	unsetenv("ARENAGUARD");
	unsetenv("ARENAGUARD_DUMP");
	setenv("ARENAGUARD_LOG", scratch_path("log"), 1);
	ag_config_load();
	ag_cache_trim();
	ag_report_reset();
}

void fake_fail(unsigned int cmd, int err, int times)
{
	failing.cmd = cmd;
	failing.err = err;
	failing.times = times;
}

int fake_call(struct ag_file *f, unsigned int cmd, void *arg)
{
	return ag_ioctl(f, 42, cmd, (uintptr_t)arg);
}

uint32_t fake_program(struct ag_file *f, enum prog_kind kind)
{
	size_t len;
	uint8_t *image = prog_image(kind, &len);
	struct drm_arena_program_create c = { .image = (uintptr_t)image,
					      .size = len };
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_PROGRAM_CREATE, &c), 0);
	/* The application's struct is its own again. */
	ck_assert_uint_eq(c.image, (uintptr_t)image);
	free(image);
	return c.handle;
}

uint32_t fake_schedule(struct ag_file *f, uint32_t prog,
		       const struct ac_ref *refs, uint32_t n, uint32_t batch)
{
	struct drm_arena_schedule_create c = { .program = prog };
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_CREATE, &c), 0);
	for (uint32_t i = 0; i < n; i += batch) {
		struct drm_arena_schedule_append a = {
			.schedule = c.handle, .count = batch,
			.refs = (uintptr_t)(refs + i) };
		ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_APPEND,
					   &a), 0);
	}
	return c.handle;
}

int fake_submit(struct ag_file *f, uint32_t s)
{
	struct drm_arena_schedule_submit sub = { .schedule = s };
	return fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &sub);
}

uint32_t fake_bad_d(struct ag_file *f)
{
	uint32_t prog = fake_program(f, PROG_GOOD);
	return fake_schedule(f, prog, prog_bad_d_refs, 4, 1);
}
