/* SPDX-License-Identifier: MIT */
/*
 * The driver's ioctl entry, shaped like drm_ioctl(): the argument struct
 * is copied in (as many bytes as both the caller's and the driver's
 * command say go in), zero-extended to the driver's size, handled, and
 * copied back out, EFAULT when either copy fails.  Core DRM ioctls: only
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

static const struct desc driver[] = {
	[DRM_ARENA_BO_CREATE] = { DRM_IOCTL_ARENA_BO_CREATE, h_bo_create },
	[DRM_ARENA_BO_MMAP] = { DRM_IOCTL_ARENA_BO_MMAP, h_bo_mmap },
	[DRM_ARENA_BO_WRITE] = { DRM_IOCTL_ARENA_BO_WRITE, h_bo_write },
	[DRM_ARENA_BO_READ] = { DRM_IOCTL_ARENA_BO_READ, h_bo_read },
	[DRM_ARENA_BO_DESTROY] = { DRM_IOCTL_ARENA_BO_DESTROY, h_bo_destroy },
	[DRM_ARENA_PROGRAM_CREATE] = { DRM_IOCTL_ARENA_PROGRAM_CREATE,
				       h_program_create },
	[DRM_ARENA_PROGRAM_DESTROY] = { DRM_IOCTL_ARENA_PROGRAM_DESTROY,
					h_program_destroy },
	[DRM_ARENA_SCHEDULE_CREATE] = { DRM_IOCTL_ARENA_SCHEDULE_CREATE,
					h_schedule_create },
	[DRM_ARENA_SCHEDULE_APPEND] = { DRM_IOCTL_ARENA_SCHEDULE_APPEND,
					h_schedule_append },
	[DRM_ARENA_SCHEDULE_SUBMIT] = { DRM_IOCTL_ARENA_SCHEDULE_SUBMIT,
					h_schedule_submit },
	[DRM_ARENA_WAIT] = { DRM_IOCTL_ARENA_WAIT, h_wait },
	[DRM_ARENA_SCHEDULE_DESTROY] = { DRM_IOCTL_ARENA_SCHEDULE_DESTROY,
					 h_schedule_destroy },
	[DRM_ARENA_SEAL] = { DRM_IOCTL_ARENA_SEAL, h_seal },
	[DRM_ARENA_SCHEDULE_SUBMIT_SEALED] = {
		DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED,
		h_schedule_submit_sealed },
};

#define IN (_IOC_WRITE << _IOC_DIRSHIFT)
#define OUT (_IOC_READ << _IOC_DIRSHIFT)

static int drm_call(struct sim_file *f, const struct desc *d,
		    unsigned int cmd, uint64_t arg)
{
	size_t in = _IOC_SIZE(cmd), out = in, ksize = _IOC_SIZE(d->cmd);
	if (!(cmd & d->cmd & IN))
		in = 0;
	if (!(cmd & d->cmd & OUT))
		out = 0;
	if (in > ksize)
		ksize = in;
	if (out > ksize)
		ksize = out;
	uint64_t stack[16];
	void *kdata = ksize <= sizeof(stack) ? (void *)stack : malloc(ksize);
	if (!kdata)
		return -ENOMEM;
	int rc = copy_from_user(kdata, arg, in);
	if (!rc) {
		memset((char *)kdata + in, 0, ksize - in);
		ctx_lock(f);
		rc = d->fn(f, kdata);
		ctx_unlock(f);
		if (copy_to_user(arg, kdata, out))
			rc = -EFAULT;
	}
	if (kdata != stack)
		free(kdata);
	return rc;
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
