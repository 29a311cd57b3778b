/* SPDX-License-Identifier: MIT */
/*
 * Talking to the arena driver, as an application would: libdrm for the
 * device check and the ioctls (drmIoctl restarts on EINTR), liburing for
 * the asynchronous submission path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xf86drm.h>

#include <arenaguard/uapi.h>

#include "device.h"

/* A wait longer than this is a hung device, not a slow one. */
#define WAIT_TIMEOUT_NS (30ll * 1000 * 1000 * 1000)
#define RING_ENTRIES 8

static int fail(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what,
		strerror(err));
	return -err;
}

/* A submission the guard blocked (EPERM) is printed unless `quiet`: a
 * server says what it means in its response instead. */
static int fail_unless(int quiet, const char *what, int err)
{
	if (quiet && err == EPERM)
		return -err;
	return fail(what, err);
}

static int fd_ioctl_q(int fd, unsigned long request, void *arg,
		      const char *what, int quiet)
{
	if (drmIoctl(fd, request, arg) != 0)
		return fail_unless(quiet, what, errno);
	return 0;
}

static int fd_ioctl(int fd, unsigned long request, void *arg,
		    const char *what)
{
	return fd_ioctl_q(fd, request, arg, what, 0);
}

static int arena_ioctl(struct device *dev, unsigned long request, void *arg,
		       const char *what)
{
	return fd_ioctl(dev->fd, request, arg, what);
}

static int check_driver(struct device *dev)
{
	drmVersionPtr v = drmGetVersion(dev->fd);
	if (!v)
		return fail("DRM_IOCTL_VERSION", errno ? errno : ENODEV);
	int ours = v->name && strcmp(v->name, ARENA_DRIVER_NAME) == 0;
	snprintf(dev->version, sizeof(dev->version), "%s %d.%d.%d (%s)",
		 v->name ? v->name : "?", v->version_major, v->version_minor,
		 v->version_patchlevel, v->desc ? v->desc : "");
	drmFreeVersion(v);
	if (!ours) {
		fprintf(stderr, "arena-infer: %s is %s, not an arena device\n",
			ARENA_NODE_PATH, dev->version);
		return -ENODEV;
	}
	return 0;
}

int device_ring_init(struct io_uring *ring)
{
	/* URING_CMD payloads live in the second half of 128-byte SQEs. */
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };
	int rc = io_uring_queue_init_params(RING_ENTRIES, ring, &p);
	if (rc < 0)
		return fail("io_uring_queue_init_params", -rc);
	return 0;
}

static int setup_ring(struct device *dev)
{
	int rc = device_ring_init(&dev->ring);
	if (rc == 0)
		dev->have_ring = 1;
	return rc;
}

int device_open(struct device *dev, enum device_path path)
{
	memset(dev, 0, sizeof(*dev));
	dev->path = path;
	dev->fd = open(ARENA_NODE_PATH, O_RDWR | O_CLOEXEC);
	if (dev->fd < 0)
		return fail("open " ARENA_NODE_PATH, errno);
	int rc = check_driver(dev);
	if (rc == 0 && path == DEVICE_URING)
		rc = setup_ring(dev);
	if (rc != 0)
		device_close(dev);
	return rc;
}

/* ---- buffers ---- */

int device_add_bo(struct device *dev, uint64_t address, uint64_t size)
{
	if (dev->n_bos == WIN_COUNT)
		return fail("DRM_IOCTL_ARENA_BO_CREATE", ENOSPC);
	struct drm_arena_bo_create create = {
		.address = address,
		.size = size,
	};
	int rc = arena_ioctl(dev, DRM_IOCTL_ARENA_BO_CREATE, &create,
			     "DRM_IOCTL_ARENA_BO_CREATE");
	if (rc != 0)
		return rc;
	dev->bo[dev->n_bos] = create.handle;
	dev->bo_base[dev->n_bos] = address;
	dev->bo_size[dev->n_bos] = size;
	dev->n_bos++;
	return 0;
}

static int create_bo(struct device *dev, const struct ac_window *w)
{
	return device_add_bo(dev, w->base, w->size);
}

/* The buffer holding [address, address + size), or -1. */
static int bo_at(const struct device *dev, uint64_t address, size_t size)
{
	for (int i = 0; i < dev->n_bos; i++)
		if (address >= dev->bo_base[i] &&
		    address - dev->bo_base[i] + size <= dev->bo_size[i])
			return i;
	return -1;
}

static int bo_copy(struct device *dev, unsigned long request,
		   uint64_t address, const void *data, size_t size,
		   const char *what)
{
	int i = bo_at(dev, address, size);
	if (i < 0)
		return fail(what, EINVAL);
	struct drm_arena_bo_rw rw = {
		.handle = dev->bo[i],
		.offset = address - dev->bo_base[i],
		.size = size,
		.data = (uint64_t)(uintptr_t)data,
	};
	return arena_ioctl(dev, request, &rw, what);
}

static int upload(struct device *dev, const struct ac_tensor *global,
		  const float *data)
{
	return bo_copy(dev, DRM_IOCTL_ARENA_BO_WRITE, global->offset, data,
		       global->size, "DRM_IOCTL_ARENA_BO_WRITE");
}

int device_write(struct device *dev, uint64_t address, const void *data,
		 size_t size)
{
	return bo_copy(dev, DRM_IOCTL_ARENA_BO_WRITE, address, data, size,
		       "DRM_IOCTL_ARENA_BO_WRITE");
}

int device_read(struct device *dev, uint64_t address, void *out, size_t size)
{
	return bo_copy(dev, DRM_IOCTL_ARENA_BO_READ, address, out, size,
		       "DRM_IOCTL_ARENA_BO_READ");
}

/* ---- program and schedule ---- */

int device_program_on(int fd, const struct plan *plan, uint32_t *handle)
{
	struct ac_error err;
	size_t len;
	uint8_t *image = plan_device_image(plan, &len, &err);
	if (!image) {
		char text[512];
		fprintf(stderr, "%s: program image: %s\n",
			program_invocation_short_name,
			ac_error_text(&err, text, sizeof(text)));
		return -EINVAL;
	}
	struct drm_arena_program_create create = {
		.image = (uint64_t)(uintptr_t)image,
		.size = len,
	};
	int rc = fd_ioctl(fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, &create,
			  "DRM_IOCTL_ARENA_PROGRAM_CREATE");
	free(image);
	if (rc == 0)
		*handle = create.handle;
	return rc;
}

static int create_program(struct device *dev, const struct plan *plan)
{
	int rc = device_program_on(dev->fd, plan, &dev->program);
	if (rc == 0)
		dev->have_program = 1;
	return rc;
}

/* One URING_CMD on fd through ring, waited for: its CQE's res is the
 * command's result. */
static int ring_cmd(struct io_uring *ring, int fd, uint32_t op,
		    const void *arg, size_t size, const char *what, int quiet)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	if (!sqe)
		return fail(what, EBUSY);

	/* Zero all 128 bytes: the payload's padding must be zero. */
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = op;
	memcpy((uint8_t *)sqe + offsetof(struct io_uring_sqe, cmd), arg, size);

	int rc = io_uring_submit(ring);
	if (rc < 0)
		return fail("io_uring_submit", -rc);
	rc = io_uring_wait_cqe(ring, &cqe);
	if (rc < 0)
		return fail("io_uring_wait_cqe", -rc);
	rc = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return rc < 0 ? fail_unless(quiet, what, -rc) : 0;
}

int device_append_on(int fd, struct io_uring *ring, uint32_t schedule,
		     const struct ac_ref *refs, size_t count)
{
	struct drm_arena_ref batch[16];
	if (count > sizeof(batch) / sizeof(batch[0]))
		return fail("schedule append", E2BIG);
	for (size_t i = 0; i < count; i++)
		batch[i] = (struct drm_arena_ref){ refs[i].first, refs[i].count };
	struct drm_arena_schedule_append append = {
		.schedule = schedule,
		.count = (uint32_t)count,
		.refs = (uint64_t)(uintptr_t)batch,
	};
	if (ring)
		return ring_cmd(ring, fd, ARENA_URING_CMD_APPEND, &append,
				sizeof(append), "ARENA_URING_CMD_APPEND", 0);
	return fd_ioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &append,
			"DRM_IOCTL_ARENA_SCHEDULE_APPEND");
}

static struct io_uring *ring_of(struct device *dev)
{
	return dev->path == DEVICE_URING ? &dev->ring : NULL;
}

static int append_refs(struct device *dev, const struct ac_ref *refs,
		       size_t count)
{
	return device_append_on(dev->fd, ring_of(dev), dev->schedule, refs,
				count);
}

int device_schedule_on(int fd, uint32_t program, uint32_t *handle)
{
	struct drm_arena_schedule_create create = { .program = program };
	int rc = fd_ioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_CREATE, &create,
			  "DRM_IOCTL_ARENA_SCHEDULE_CREATE");
	if (rc == 0)
		*handle = create.handle;
	return rc;
}

static int create_schedule(struct device *dev, const struct plan *plan)
{
	int rc = device_schedule_on(dev->fd, dev->program, &dev->schedule);
	if (rc != 0)
		return rc;
	dev->have_schedule = 1;

	size_t count;
	const struct ac_ref *refs = plan_schedule(plan, &count);
	return append_refs(dev, refs, count);
}

int device_load(struct device *dev, const struct plan *plan,
		const struct model *m)
{
	const struct ac_tensor *g = plan->globals;
	int rc = 0;
	for (int w = 0; w < WIN_COUNT && rc == 0; w++)
		rc = create_bo(dev, &plan->windows[w]);
	if (rc == 0)
		rc = upload(dev, &g[G_WEIGHTS], m->bank);
	if (rc == 0)
		rc = upload(dev, &g[G_FINAL_NORM], m->final_norm);
	if (rc == 0)
		rc = upload(dev, &g[G_INPUT], m->input);
	if (rc == 0)
		rc = create_program(dev, plan);
	if (rc == 0)
		rc = create_schedule(dev, plan);
	return rc;
}

/* ---- running ---- */

static int submit(int fd, struct io_uring *ring, uint32_t schedule,
		  uint64_t *seqno, int quiet)
{
	if (ring) {
		struct arena_uring_submit s = {
			.schedule = schedule,
			.seqno = (uint64_t)(uintptr_t)seqno,
		};
		return ring_cmd(ring, fd, ARENA_URING_CMD_SUBMIT, &s, sizeof(s),
				"ARENA_URING_CMD_SUBMIT", quiet);
	}
	struct drm_arena_schedule_submit s = { .schedule = schedule };
	int rc = fd_ioctl_q(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &s,
			    "DRM_IOCTL_ARENA_SCHEDULE_SUBMIT", quiet);
	*seqno = s.seqno;
	return rc;
}

int device_forward_on(int fd, struct io_uring *ring, uint32_t schedule,
		      int quiet)
{
	uint64_t seqno = 0;
	int rc = submit(fd, ring, schedule, &seqno, quiet);
	/* A driver told to require sealed submissions (uapi.h, "Sealed
	 * submissions") runs only what a checker certified and sealed:
	 * this client does not seal, libarenaguard does. */
	if (rc == -ENOKEY)
		fprintf(stderr, "%s: the driver requires sealed "
			"submissions: run under the guard (tools/arenaguard "
			"%s ...)\n", program_invocation_short_name,
			program_invocation_short_name);
	if (rc != 0)
		return rc;
	/* EIO here is the device faulting on a launch (uapi.h). */
	struct drm_arena_wait wait = {
		.seqno = seqno,
		.timeout_ns = WAIT_TIMEOUT_NS,
	};
	return fd_ioctl(fd, DRM_IOCTL_ARENA_WAIT, &wait,
			"DRM_IOCTL_ARENA_WAIT");
}

int device_forward(struct device *dev)
{
	return device_forward_on(dev->fd, ring_of(dev), dev->schedule, 0);
}

/* ---- teardown ---- */

void device_destroy_on(int fd, unsigned long request, uint32_t handle)
{
	struct drm_arena_handle h = { .handle = handle };
	drmIoctl(fd, request, &h);
}

static void destroy(struct device *dev, unsigned long request,
		    uint32_t handle)
{
	device_destroy_on(dev->fd, request, handle);
}

void device_close(struct device *dev)
{
	if (dev->fd < 0)
		return;
	/* Schedules before their program: a program with live schedules is
	 * busy. */
	if (dev->have_schedule)
		destroy(dev, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, dev->schedule);
	if (dev->have_program)
		destroy(dev, DRM_IOCTL_ARENA_PROGRAM_DESTROY, dev->program);
	for (int i = 0; i < dev->n_bos; i++)
		destroy(dev, DRM_IOCTL_ARENA_BO_DESTROY, dev->bo[i]);
	if (dev->have_ring)
		io_uring_queue_exit(&dev->ring);
	close(dev->fd);
	memset(dev, 0, sizeof(*dev));
	dev->fd = -1;
}
