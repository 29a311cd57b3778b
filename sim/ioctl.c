/* SPDX-License-Identifier: MIT */
/*
 * The driver's ioctl entry, shaped like drm_ioctl(): the argument struct
 * is copied in (as many bytes as both the caller's and the driver's
 * command say go in), zero-extended to the driver's size, handled, and
 * copied back out, EFAULT when either copy fails (contract/drm_call.h);
 * the requests are contract/requests.inc's.  Core DRM ioctls: only
 * DRM_IOCTL_VERSION (what libdrm's drmGetVersion needs).  Unknown numbers
 * in the driver range are EINVAL, as drm_ioctl() says; others ENOTTY.  The VFS answers a few generic ioctls itself on
 * any fd (FIOCLEX, FIONBIO, ...); those go to the real fd underneath.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "sim.h"
#include "usercopy.h"
#include "../contract/drm_call.h"  /* the copy in, zero-extend, copy out */

#define NAME "arena"
#define DATE "0"              /* what kernels report since 6.14 */
#define DESC "arena accelerator (simulated by libarenasim)"

typedef int (*handler)(struct sim_file *f, void *arg);

struct desc {
	unsigned int cmd;
	handler fn;
};

/* drm_copy_field(): copy what fits, report the full length. */
static int copy_field(uint64_t buf, __kernel_size_t *len, const char *value)
{
	size_t n = strlen(value), copy = n < *len ? n : *len;
	*len = n;
	if (copy && buf)
		return copy_to_user(buf, value, copy);
	return 0;
}

static int h_version(struct sim_file *f, void *arg)
{
	struct drm_version *v = arg;
	(void)f;
	v->version_major = 1;
	v->version_minor = 0;
	v->version_patchlevel = 0;
	int rc = copy_field((uintptr_t)v->name, &v->name_len, NAME);
	if (!rc)
		rc = copy_field((uintptr_t)v->date, &v->date_len, DATE);
	if (!rc)
		rc = copy_field((uintptr_t)v->desc, &v->desc_len, DESC);
	return rc;
}

static int h_bo_create(struct sim_file *f, void *arg)
{
	return bo_create(f, arg);
}

static int h_bo_mmap(struct sim_file *f, void *arg)
{
	return bo_mmap_offset(f, arg);
}

static int h_bo_write(struct sim_file *f, void *arg)
{
	return bo_rw(f, arg, 1);
}

static int h_bo_read(struct sim_file *f, void *arg)
{
	return bo_rw(f, arg, 0);
}

static int h_bo_destroy(struct sim_file *f, void *arg)
{
	return bo_destroy(f, arg);
}

static int h_program_create(struct sim_file *f, void *arg)
{
	return program_create(f, arg);
}

static int h_program_destroy(struct sim_file *f, void *arg)
{
	return program_destroy(f, arg);
}

static int h_schedule_create(struct sim_file *f, void *arg)
{
	return schedule_create(f, arg);
}

static int h_schedule_append(struct sim_file *f, void *arg)
{
	return schedule_append(f, arg);
}

static int h_schedule_submit(struct sim_file *f, void *arg)
{
	struct drm_arena_schedule_submit *s = arg;
	const struct sim_seal_check unsealed = { 0, 0, 0, NULL };
	uint64_t seqno = 0;
	int rc = schedule_submit(f, s->schedule, s->flags, &unsealed,
				 &seqno, 0);
	if (!rc)
		s->seqno = seqno;
	return rc;
}

static int h_seal(struct sim_file *f, void *arg)
{
	return file_seal(f, arg);
}

static int h_schedule_submit_sealed(struct sim_file *f, void *arg)
{
	struct drm_arena_schedule_submit_sealed *s = arg;
	const struct sim_seal_check check = { 1, s->algorithm, s->pad,
					      s->seal };
	uint64_t seqno = 0;
	int rc = schedule_submit(f, s->schedule, s->flags, &check, &seqno, 0);
	if (!rc)
		s->seqno = seqno;
	return rc;
}

static int h_wait(struct sim_file *f, void *arg)
{
	return schedule_wait(f, arg);
}

static int h_schedule_destroy(struct sim_file *f, void *arg)
{
	return schedule_destroy(f, arg);
}

static const struct desc version = { DRM_IOCTL_VERSION, h_version };

/* The driver's requests, indexed by number (contract/requests.inc). */
static const struct desc driver[] = {
#define ARENA_REQUEST(name, NAME, ...) \
	[DRM_ARENA_##NAME] = { DRM_IOCTL_ARENA_##NAME, h_##name },
#include "../contract/requests.inc"
};

/* One driver ioctl, for arena_drm_call's callbacks. */
struct sim_call {
	struct sim_file *f;
	const struct desc *d;
};

/* The request's handler on the kernel copy, under the context's lock. */
static int handle(void *ctx, void *kdata)
{
	struct sim_call *c = ctx;
	ctx_lock(c->f);
	int rc = c->d->fn(c->f, kdata);
	ctx_unlock(c->f);
	return rc;
}

/* No memory for a large argument's copy: ENOMEM, as a driver's. */
static int no_memory(void *ctx)
{
	(void)ctx;
	return -ENOMEM;
}

static int drm_call(struct sim_file *f, const struct desc *d,
		    unsigned int cmd, uint64_t arg)
{
	struct sim_call c = { f, d };
	return arena_drm_call(cmd, d->cmd, _IOC_SIZE(d->cmd), arg, handle,
			      no_memory, &c);
}

/* What the VFS does before a driver sees the ioctl. */
static int vfs_ioctl(int fd, unsigned int cmd, uint64_t arg)
{
	switch (cmd) {
	case FIOCLEX:
	case FIONCLEX:
	case FIONBIO:
	case FIOASYNC:
		return sim_real.ioctl(fd, cmd, (void *)(uintptr_t)arg) < 0 ?
		       -errno : 0;
	default:
		return -ENOTTY;
	}
}

int sim_ioctl(struct sim_file *f, int fd, unsigned int cmd, uint64_t arg)
{
	if (_IOC_TYPE(cmd) != DRM_IOCTL_BASE)
		return vfs_ioctl(fd, cmd, arg);
	unsigned int nr = _IOC_NR(cmd);
	if (nr >= DRM_COMMAND_BASE && nr < DRM_COMMAND_END) {
		unsigned int index = nr - DRM_COMMAND_BASE;
		if (index >= sizeof(driver) / sizeof(driver[0]))
			return -EINVAL;       /* as drm_ioctl() answers */
		return drm_call(f, &driver[index], cmd, arg);
	}
	if (nr == _IOC_NR(DRM_IOCTL_VERSION))
		return drm_call(f, &version, cmd, arg);
	return -ENOTTY;
}
