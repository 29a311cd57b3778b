/* SPDX-License-Identifier: MIT */
/*
 * guard-client's side of the arena driver: thin wrappers returning 0 or
 * a negative errno, so that a subcommand can say what it expected and
 * what it got.  Nothing here knows about the guard: the same calls run
 * with and without it preloaded.
 */
#ifndef GUARD_TESTS_CDEV_H
#define GUARD_TESTS_CDEV_H

#include <stddef.h>
#include <stdint.h>

#include <liburing.h>

#include <arenaguard/program.h>
#include <arenaguard/uapi.h>

enum cpath {
	CP_IOCTL,      /* append and submit by ioctl */
	CP_URING,      /* by URING_CMD on the fd */
	CP_FIXED,      /* by URING_CMD on a registered slot */
};

struct cdev {
	int fd;
	uint32_t bo;
	enum cpath path;
	int raw;           /* its requests by syscall(SYS_ioctl), which no
			    * preloaded library sees (the guard interposes
			    * libc's ioctl): tests/kernel/gate_raw.c */
	struct io_uring ring;
	int have_ring;
	uint64_t next_user_data;
};

/* Opens the node, makes the window's buffer (zeroed), and a 128-byte
 * SQE ring for the io_uring paths.  0 or -errno. */
int cdev_open(struct cdev *d, enum cpath path);
/* The same on fd, which the caller opened its own way (a raw openat),
 * its requests by raw system calls when raw; fd is d's (closed on
 * failure). */
int cdev_open_fd(struct cdev *d, int fd, enum cpath path, int raw);
void cdev_close(struct cdev *d);

/* ioctl(2) as 0 / -errno. */
int cdev_ioctl(int fd, unsigned long request, void *arg);
/* A request on d's fd as 0 / -errno: libc's ioctl, or the raw system
 * call when d->raw. */
int cdev_request(struct cdev *d, unsigned long request, void *arg);

int cdev_program(struct cdev *d, const uint8_t *image, size_t len,
		 uint32_t *handle);
int cdev_schedule(struct cdev *d, uint32_t program, uint32_t *handle);
int cdev_destroy_schedule(struct cdev *d, uint32_t handle);
int cdev_destroy_program(struct cdev *d, uint32_t handle);
/* By d->path. */
int cdev_append(struct cdev *d, uint32_t schedule, const struct ac_ref *refs,
		uint32_t n);
int cdev_submit(struct cdev *d, uint32_t schedule, uint64_t *seqno);
int cdev_wait(struct cdev *d, uint64_t seqno);
/* submit + wait. */
int cdev_run(struct cdev *d, uint32_t schedule);

/* A URING_CMD of `size` argument bytes (at most 80) in the 128-byte SQE
 * sqe, on fd (a registered slot with IOSQE_FIXED_FILE in flags), with
 * the other SQE flags given; the rest of the SQE zero. */
void cdev_prep_cmd(struct io_uring_sqe *sqe, int fd, unsigned int flags,
		   uint32_t op, const void *arg, size_t size, uint64_t user_data);

/* One URING_CMD on d's ring (by fd or slot 0 per d->path), waited for:
 * the CQE's res, after checking its user_data came back. */
int cdev_uring_cmd(struct cdev *d, uint32_t op, const void *arg, size_t size);

int cdev_read(struct cdev *d, uint64_t address, void *out, size_t size);
int cdev_write(struct cdev *d, uint64_t address, const void *in, size_t size);
int cdev_zero(struct cdev *d);

/* Whether the floats at address are all v. */
int cdev_all(struct cdev *d, uint64_t address, size_t n, float v);

#endif
