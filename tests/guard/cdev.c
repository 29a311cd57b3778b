/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cdev.h"
#include "progs.h"

int cdev_ioctl(int fd, unsigned long request, void *arg)
{
	return ioctl(fd, request, arg) == 0 ? 0 : -errno;
}

int cdev_request(struct cdev *d, unsigned long request, void *arg)
{
	if (!d->raw)
		return cdev_ioctl(d->fd, request, arg);
	return syscall(SYS_ioctl, d->fd, request, arg) == 0 ? 0 : -errno;
}

int cdev_open(struct cdev *d, enum cpath path)
{
	int fd = open(ARENA_NODE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		memset(d, 0, sizeof(*d));
		d->fd = -1;
		return -errno;
	}
	return cdev_open_fd(d, fd, path, 0);
}

int cdev_open_fd(struct cdev *d, int fd, enum cpath path, int raw)
{
	memset(d, 0, sizeof(*d));
	d->fd = fd;
	d->path = path;
	d->raw = raw;
	d->next_user_data = 0x1000;
	struct drm_arena_bo_create c = { .address = PROG_BASE,
					 .size = PROG_SIZE };
	int rc = cdev_request(d, DRM_IOCTL_ARENA_BO_CREATE, &c);
	d->bo = c.handle;
	if (rc == 0 && path != CP_IOCTL) {
		rc = io_uring_queue_init(8, &d->ring, IORING_SETUP_SQE128);
		d->have_ring = rc == 0;
		if (rc == 0 && path == CP_FIXED)
			rc = io_uring_register_files(&d->ring, &d->fd, 1);
	}
	if (rc != 0)
		cdev_close(d);
	return rc;
}

void cdev_close(struct cdev *d)
{
	if (d->have_ring)
		io_uring_queue_exit(&d->ring);
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	d->have_ring = 0;
}

int cdev_program(struct cdev *d, const uint8_t *image, size_t len,
		 uint32_t *handle)
{
	struct drm_arena_program_create c = { .image = (uintptr_t)image,
					      .size = len };
	int rc = cdev_request(d, DRM_IOCTL_ARENA_PROGRAM_CREATE, &c);
	*handle = c.handle;
	return rc;
}

int cdev_schedule(struct cdev *d, uint32_t program, uint32_t *handle)
{
	struct drm_arena_schedule_create c = { .program = program };
	int rc = cdev_request(d, DRM_IOCTL_ARENA_SCHEDULE_CREATE, &c);
	*handle = c.handle;
	return rc;
}

static int destroy(struct cdev *d, unsigned long request, uint32_t handle)
{
	struct drm_arena_handle h = { .handle = handle };
	return cdev_request(d, request, &h);
}

int cdev_destroy_schedule(struct cdev *d, uint32_t handle)
{
	return destroy(d, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, handle);
}

int cdev_destroy_program(struct cdev *d, uint32_t handle)
{
	return destroy(d, DRM_IOCTL_ARENA_PROGRAM_DESTROY, handle);
}

void cdev_prep_cmd(struct io_uring_sqe *sqe, int fd, unsigned int flags,
		   uint32_t op, const void *arg, size_t size, uint64_t user_data)
{
	assert(size <= 80);
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->flags = (uint8_t)flags;
	sqe->cmd_op = op;
	sqe->user_data = user_data;
	memcpy((uint8_t *)sqe + offsetof(struct io_uring_sqe, cmd), arg, size);
}

int cdev_uring_cmd(struct cdev *d, uint32_t op, const void *arg, size_t size)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);
	if (!sqe)
		return -EBUSY;
	uint64_t user_data = d->next_user_data++;
	if (d->path == CP_FIXED)
		cdev_prep_cmd(sqe, 0, IOSQE_FIXED_FILE, op, arg, size, user_data);
	else
		cdev_prep_cmd(sqe, d->fd, 0, op, arg, size, user_data);
	/* submit_and_wait: the guard splits it when a submit is held. */
	int rc = io_uring_submit_and_wait(&d->ring, 1);
	if (rc != 1)
		return rc < 0 ? rc : -EIO;
	struct io_uring_cqe *cqe;
	rc = io_uring_wait_cqe(&d->ring, &cqe);
	if (rc < 0)
		return rc;
	rc = cqe->user_data == user_data ? cqe->res : -EPROTO;
	io_uring_cqe_seen(&d->ring, cqe);
	return rc;
}

int cdev_append(struct cdev *d, uint32_t schedule, const struct ac_ref *refs,
		uint32_t n)
{
	struct drm_arena_schedule_append a = { .schedule = schedule,
					       .count = n,
					       .refs = (uintptr_t)refs };
	if (d->path == CP_IOCTL)
		return cdev_request(d, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a);
	return cdev_uring_cmd(d, ARENA_URING_CMD_APPEND, &a, sizeof(a));
}

int cdev_submit(struct cdev *d, uint32_t schedule, uint64_t *seqno)
{
	if (d->path == CP_IOCTL) {
		struct drm_arena_schedule_submit s = { .schedule = schedule };
		int rc = cdev_request(d, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &s);
		*seqno = s.seqno;
		return rc;
	}
	struct arena_uring_submit s = { .schedule = schedule,
					.seqno = (uintptr_t)seqno };
	*seqno = 0;
	return cdev_uring_cmd(d, ARENA_URING_CMD_SUBMIT, &s, sizeof(s));
}

int cdev_wait(struct cdev *d, uint64_t seqno)
{
	struct drm_arena_wait w = { .seqno = seqno, .timeout_ns = -1 };
	return cdev_request(d, DRM_IOCTL_ARENA_WAIT, &w);
}

int cdev_run(struct cdev *d, uint32_t schedule)
{
	uint64_t seqno;
	int rc = cdev_submit(d, schedule, &seqno);
	return rc ? rc : cdev_wait(d, seqno);
}

static int rw(struct cdev *d, unsigned long request, uint64_t address,
	      const void *data, size_t size)
{
	struct drm_arena_bo_rw r = { .handle = d->bo,
				     .offset = address - PROG_BASE,
				     .size = size,
				     .data = (uintptr_t)data };
	return cdev_request(d, request, &r);
}

int cdev_read(struct cdev *d, uint64_t address, void *out, size_t size)
{
	return rw(d, DRM_IOCTL_ARENA_BO_READ, address, out, size);
}

int cdev_write(struct cdev *d, uint64_t address, const void *in, size_t size)
{
	return rw(d, DRM_IOCTL_ARENA_BO_WRITE, address, in, size);
}

int cdev_zero(struct cdev *d)
{
	void *z = calloc(1, PROG_SIZE);
	int rc = z ? cdev_write(d, PROG_BASE, z, PROG_SIZE) : -ENOMEM;
	free(z);
	return rc;
}

int cdev_all(struct cdev *d, uint64_t address, size_t n, float v)
{
	float buf[256];
	if (n > 256 || cdev_read(d, address, buf, n * sizeof(float)) != 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (buf[i] != v)
			return 0;
	return 1;
}
