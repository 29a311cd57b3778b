/* SPDX-License-Identifier: MIT */
/*
 * The ioctl front end, shaped like drm_ioctl(): the guarded requests are
 * recognised by their DRM number (as the kernel dispatches them, so a
 * request encoded with another size cannot slip past), the argument is
 * copied in once (as many bytes as the request says go in, zero
 * extended), handled with the guard's copies of whatever it points to,
 * forwarded to the driver with the canonical request number, and copied
 * back out (as many bytes as the request says come out), with the
 * application's own pointers put back first.  A bad pointer anywhere
 * gets EFAULT, as from the driver, never a signal.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "guard.h"
#include "usercopy.h"

/* Set by interpose.c to the next ioctl; by tests to a fake driver. */
int (*ag_driver_ioctl)(int fd, unsigned int cmd, void *arg);

#define IN (_IOC_WRITE << _IOC_DIRSHIFT)
#define OUT (_IOC_READ << _IOC_DIRSHIFT)

/* uapi.h: a batch of more references is refused (EINVAL). */
#define MAX_BATCH (1u << 20)

/* The references could not be read (or are too many to be taken): let
 * the driver give its own error (ENOENT, EINVAL, EFAULT come in its
 * order); if it takes the batch after all, the guard does not know what
 * it took. */
static int append_unread(struct ag_sched *s, int fd,
			 struct drm_arena_schedule_append *a)
{
	int rc = ag_driver_ioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, a);
	if (rc == 0 && a->count)
		ag_sched_poison(s, "the guard could not read appended "
				"references the driver took");
	return rc;
}

/* The driver is handed the guard's copy, which the mirror then takes
 * in (room for it was made first). */
static int append_read(struct ag_sched *s, int fd,
		       struct drm_arena_schedule_append *a,
		       const struct ac_ref *refs)
{
	uint64_t user_refs = a->refs;
	a->refs = (uintptr_t)refs;
	int rc = ag_driver_ioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, a);
	a->refs = user_refs;
	struct ac_error err;
	char text[512], why[600];
	if (rc == 0 && ag_sched_append(s, refs, a->count, &err) == -EINVAL) {
		snprintf(why, sizeof(why), "the driver accepted references "
			 "the certificate calls malformed: %s",
			 ac_error_text(&err, text, sizeof(text)));
		ag_sched_poison(s, why);
	}
	return rc;
}

/* An append by ioctl: the references are copied once, and the driver
 * is handed that copy.  Without memory for the copy, or for the mirror
 * to take it in, the driver is not asked: ENOMEM. */
static int append(struct ag_file *f, int fd,
		  struct drm_arena_schedule_append *a)
{
	struct ag_sched *s = ag_sched_lock(f, a->schedule);
	if (!s)        /* unknown here: the driver decides; submits blocked */
		return ag_driver_ioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, a);
	ag_sched_wait_holds(s, 0);

	size_t bytes = (size_t)a->count * sizeof(struct ac_ref);
	struct ac_ref *refs = NULL;
	int rc = 0;
	if (a->count <= MAX_BATCH) {
		refs = malloc(bytes ? bytes : 1);
		if (!refs || ag_sched_reserve(s, a->count) != 0)
			rc = ag_no_memory("SCHEDULE_APPEND");
	}
	if (rc == 0 && refs && copy_from_user(refs, a->refs, bytes) == 0)
		rc = append_read(s, fd, a, refs);
	else if (rc == 0)
		rc = append_unread(s, fd, a);
	free(refs);
	ag_sched_unlock(s);
	return rc;
}

/* The schedule's lock is held from the decision to the driver's
 * answer: nothing is appended in between. */
static int submit(struct ag_file *f, int fd,
		  struct drm_arena_schedule_submit *a)
{
	struct ag_sched *s = ag_sched_lock(f, a->schedule);
	struct ag_submit sub = { fd, a->schedule, AG_PATH_IOCTL };
	int rc = ag_decide(s, &sub);
	if (rc == 0)
		rc = ag_driver_ioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, a);
	if (s)
		ag_sched_unlock(s);
	return rc;
}

/* The driver's size of each guarded request's argument. */
static size_t driver_size(unsigned int nr)
{
	switch (nr - DRM_COMMAND_BASE) {
	case DRM_ARENA_PROGRAM_CREATE:
		return sizeof(struct drm_arena_program_create);
	case DRM_ARENA_SCHEDULE_CREATE:
		return sizeof(struct drm_arena_schedule_create);
	case DRM_ARENA_SCHEDULE_APPEND:
		return sizeof(struct drm_arena_schedule_append);
	case DRM_ARENA_SCHEDULE_SUBMIT:
		return sizeof(struct drm_arena_schedule_submit);
	default:
		return sizeof(struct drm_arena_handle);
	}
}

static int dispatch(struct ag_file *f, int fd, unsigned int nr, void *k)
{
	switch (nr - DRM_COMMAND_BASE) {
	case DRM_ARENA_PROGRAM_CREATE:
		return ag_mirror_program_create(f, fd, k);
	case DRM_ARENA_PROGRAM_DESTROY:
		return ag_mirror_program_destroy(f, fd, k);
	case DRM_ARENA_SCHEDULE_CREATE:
		return ag_mirror_schedule_create(f, fd, k);
	case DRM_ARENA_SCHEDULE_APPEND:
		return append(f, fd, k);
	case DRM_ARENA_SCHEDULE_SUBMIT:
		return submit(f, fd, k);
	case DRM_ARENA_SCHEDULE_DESTROY:
		return ag_mirror_schedule_destroy(f, fd, k);
	default:
		return -ENOTTY;
	}
}

int ag_ioctl(struct ag_file *f, int fd, unsigned int cmd, uint64_t arg)
{
	unsigned int nr = _IOC_NR(cmd);
	size_t in = cmd & IN ? _IOC_SIZE(cmd) : 0;
	size_t out = cmd & OUT ? _IOC_SIZE(cmd) : 0;
	size_t ksize = driver_size(nr);
	if (in > ksize)
		ksize = in;
	if (out > ksize)
		ksize = out;

	uint64_t stack[16];
	void *k = ksize <= sizeof(stack) ? (void *)stack : malloc(ksize);
	if (!k)
		return ag_no_memory("a request with a large argument");
	int rc = copy_from_user(k, arg, in);
	if (rc == 0) {
		memset((char *)k + in, 0, ksize - in);
		rc = dispatch(f, fd, nr, k);
		if (copy_to_user(arg, k, out) != 0)
			rc = -EFAULT;
	}
	if (k != stack)
		free(k);
	return rc;
}
