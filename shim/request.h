/* SPDX-License-Identifier: MIT */
/*
 * One handler per guarded request, for both front ends (request.c).
 */
#ifndef ARENAGUARD_SHIM_REQUEST_H
#define ARENAGUARD_SHIM_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "submit.h"

struct ag_file;
struct ag_sched;

struct ag_call;

/*
 * What differs between the ioctl and the URING_CMD front end; everything
 * else about a request (its copy-in, checks, mirror update and what is
 * forwarded) is the request's handler, written once.
 */
struct ag_front {
	enum ag_path path;
	/* The driver acts only after the handler has returned, and the
	 * guard never sees its answer (io_uring): the mirror is updated
	 * when the request is handed over, and what the guard cannot
	 * mirror then is answered by the guard. */
	int deferred;
	/* Hands the driver request `cmd` (a DRM_IOCTL_ARENA_* number) with
	 * argument `arg`, the guard's own copy (s: its schedule, locked, or
	 * NULL).  ioctl: the driver's answer; io_uring: the SQE now holds
	 * exactly that request, 0. */
	int (*forward)(struct ag_call *c, struct ag_sched *s, unsigned int cmd,
		       void *arg);
	/* s locked: waits until no other submit or append holds it: 0, or
	 * -EBUSY when this caller must not wait. */
	int (*wait_holds)(struct ag_call *c, struct ag_sched *s);
	/* An approved submit or append of s (locked) stays checked until
	 * the driver has it: 0 or -ENOMEM.  NULL: the lock held across the
	 * forward does that. */
	int (*keep)(struct ag_call *c, struct ag_sched *s);
};

struct ag_call {
	const struct ag_front *front;
	struct ag_file *f;
	int fd;                     /* the driver's fd; the one reported */
	void *ctx;                  /* the front end's own (the SQE's walk) */
};

/*
 * A guarded request: the argument the handler reads is `size` bytes, the
 * caller's bytes zero extended (the submits all read the sealed layout,
 * whose first fields are the plain submit's).  uring_op is its
 * URING_CMD cmd_op (0: none) and uring_size the bytes of sqe->cmd it
 * takes there.
 */
struct ag_request {
	const char *name;
	unsigned int cmd;           /* the canonical DRM_IOCTL_ARENA_* */
	size_t size;
	uint32_t uring_op;
	size_t uring_size;
	int (*handle)(struct ag_call *c, void *arg);
};

/* By DRM number (as drm_ioctl dispatches), or NULL. */
const struct ag_request *ag_request_by_nr(unsigned int nr);
/* By URING_CMD cmd_op, or NULL. */
const struct ag_request *ag_request_by_uring_op(uint32_t op);

#endif
