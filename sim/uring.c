/* SPDX-License-Identifier: MIT */
/*
 * io_uring: IORING_OP_URING_CMD on the device.  liburing 2.3 makes its
 * io_uring_enter syscalls inline, so there is no libc function to catch;
 * instead liburing's exported submit functions are interposed (by the
 * preload core's wrappers, preload/uring_wrappers.inc, which call this
 * file's hooks, preload_uring_client_*).  Before the real one runs, the SQEs not yet handed to the kernel (sq.sqe_head ..
 * sq.sqe_tail) are walked; a URING_CMD aimed at the device (by fd, or by
 * registered slot with IOSQE_FIXED_FILE) is executed here, then rewritten
 * in place into a NOP carrying IORING_NOP_INJECT_RESULT (Linux 6.10+), so
 * the kernel itself posts the CQE with the driver's result and the
 * application's user_data, in order with everything else on the ring.
 * Every other SQE, and every other fd, is left untouched.
 *
 * Links: a command that fails with IOSQE_IO_LINK set makes the kernel
 * cancel the rest of its chain; the NOP carrying the failure does the
 * same, and the device commands later in that chain are not executed
 * either.  A non-device SQE's failure is not known before submission, so
 * device commands linked after one run anyway (documented limit).
 *
 * To know which registered slot is the device, the file registration
 * functions are interposed too; a slot holds a reference to the device
 * file, as a registered file holds a reference in the kernel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <liburing.h>

#include "next.h"
#include "ring_id.h"
#include "sim.h"
#include "sq.h"
#include "sqe_inject.h"
#include "uring_wrappers.inc"
#include "uring_abi.h"
#include "usercopy.h"
#include "../contract/requests.h"  /* the URING_CMD argument rule */


/* ---- the real liburing, found when first needed ---- */

static pthread_once_t resolved = PTHREAD_ONCE_INIT;

/* The preload core's liburing wrappers (preload/uring_wrappers.h) start
 * the device first, then find the real liburing. */
static void preload_uring_client_init(void)
{
	sim_init();
	pthread_once(&resolved, preload_uring_resolve);
}

/* ---- registered files ---- */

/* A ring's registered files, the ring known as ring_id.h says. */
struct ring_files {
	const void *id;
	unsigned int n;
	struct sim_file **slot;       /* NULL: not the device */
	struct ring_files *next;
};

static struct ring_files *rings;  /* under sim_lock */

static struct ring_files *ring_find(const struct io_uring *ring)
{
	for (struct ring_files *r = rings; r; r = r->next)
		if (r->id == preload_ring_id(ring))
			return r;
	return NULL;
}

static void slot_set(struct sim_file **slot, struct sim_file *f)
{
	if (f)
		file_get(f);
	if (*slot)
		file_put(*slot);
	*slot = f;
}

static void ring_forget(const struct io_uring *ring)
{
	for (struct ring_files **p = &rings; *p; p = &(*p)->next) {
		struct ring_files *r = *p;
		if (r->id != preload_ring_id(ring))
			continue;
		for (unsigned int i = 0; i < r->n; i++)
			slot_set(&r->slot[i], NULL);
		*p = r->next;
		free(r->slot);
		free(r);
		return;
	}
}

static void forget(const struct io_uring *ring)
{
	sim_lock();
	ring_forget(ring);
	sim_unlock();
}

/* uring_files_each's callback: slot of ring_files ctx now holds fd. */
static void slot_fd(void *ctx, unsigned int slot, int fd)
{
	struct ring_files *r = ctx;
	slot_set(&r->slot[slot], fd >= 0 ? fd_file(fd) : NULL);
}

/* Sets slots off .. off + nr from the application's fd array `files`
 * (NULL: all unset), as uring_files_each reads it.  Called after the
 * kernel accepted the same update, so the array is readable; it is
 * still read as an application pointer. */
static void slots_update(struct ring_files *r, unsigned int off,
			 const int *files, unsigned int nr)
{
	uring_files_each((uintptr_t)files, off, nr, r->n, slot_fd, r);
}

/* A new table of nr slots replaces any old one. */
static void ring_register(const struct io_uring *ring, const int *files,
			  unsigned int nr)
{
	sim_lock();
	ring_forget(ring);
	struct ring_files *r = calloc(1, sizeof(*r));
	if (r)
		r->slot = calloc(nr ? nr : 1, sizeof(*r->slot));
	if (r && r->slot) {
		r->id = preload_ring_id(ring);
		r->n = nr;
		r->next = rings;
		rings = r;
		slots_update(r, 0, files, nr);
	} else if (r) {
		free(r);
	}
	sim_unlock();
}

static void ring_update(const struct io_uring *ring, unsigned int off,
			const int *files, unsigned int nr)
{
	sim_lock();
	struct ring_files *r = ring_find(ring);
	if (r)
		slots_update(r, off, files, nr);
	sim_unlock();
}

/* The preload core's registrations of files (preload/uring_wrappers.inc):
 * followed once the kernel accepted them. */
static int preload_uring_client_files(const struct preload_files *f,
				      preload_files_call call)
{
	int rc = call(f);
	PRELOAD_FILES_FOLLOW(f, rc, ring_register, ring_update, forget);
	return rc;
}

/* The preload core's ring set-ups and exit (preload/uring_wrappers.inc).
 * A new ring may be mapped where one unmapped without
 * io_uring_queue_exit was: it starts with no registered files. */
static int preload_uring_client_ring(const struct preload_ring *r,
				     preload_ring_call call)
{
	if (r->fn == PRELOAD_RING_EXIT) {
		forget(r->ring);
		return call(r);
	}
	int rc = call(r);
	if (rc == 0)
		forget(r->ring);
	return rc;
}

/* ---- executing commands ---- */

/* Each command's struct is read from sqe->cmd, whose bytes after it
 * contract/requests.h's rule (arena_uring_cmd_arg) found zero; a
 * command's handler is cmd_ and its row's name in requests.inc. */
static int cmd_schedule_append(struct sim_file *f, const uint8_t *cmd)
{
	struct drm_arena_schedule_append a;
	memcpy(&a, cmd, sizeof(a));
	return schedule_append(f, &a);
}

static int cmd_schedule_submit(struct sim_file *f, const uint8_t *cmd)
{
	struct arena_uring_submit s;
	const struct sim_seal_check unsealed = { 0, 0, 0, NULL };
	uint64_t seqno;
	memcpy(&s, cmd, sizeof(s));
	return schedule_submit(f, s.schedule, s.flags, &unsealed, &seqno,
			       s.seqno);
}

static int cmd_schedule_submit_sealed(struct sim_file *f, const uint8_t *cmd)
{
	struct arena_uring_submit_sealed s;
	uint64_t seqno;
	memcpy(&s, cmd, sizeof(s));
	const struct sim_seal_check check = { 1, s.algorithm, s.pad, s.seal };
	return schedule_submit(f, s.schedule, s.flags, &check, &seqno,
			       s.seqno);
}

/* The commands of contract/requests.inc, indexed by op. */
static int (*const cmds[])(struct sim_file *f, const uint8_t *cmd) = {
#define ARENA_URING_REQUEST(uop, name, ...) [uop] = cmd_##name,
#include "../contract/requests.inc"
};

/* The driver's uring_cmd: 0 or -errno, as the matching ioctl. */
static int uring_cmd(struct sim_file *f, const struct io_uring *ring,
		     const struct io_uring_sqe *sqe)
{
	/* Without SQE128 there is no room for the argument. */
	if (!(ring->flags & IORING_SETUP_SQE128))
		return -EINVAL;
	if (sqe->__pad1 || sqe->uring_cmd_flags)
		return -EINVAL;
	int rc = arena_uring_cmd_arg(sqe->cmd_op, sqe->cmd);
	if (rc < 0)
		return rc;
	if (sqe->cmd_op >= sizeof(cmds) / sizeof(cmds[0]) || !cmds[sqe->cmd_op])
		return -ENOTTY;
	return cmds[sqe->cmd_op](f, sqe->cmd);
}

/* The device file a URING_CMD is aimed at, or NULL. */
static struct sim_file *target(const struct io_uring *ring,
			       const struct io_uring_sqe *sqe)
{
	if (!(sqe->flags & IOSQE_FIXED_FILE))
		return fd_file(sqe->fd);
	struct ring_files *r = ring_find(ring);
	if (!r || sqe->fd < 0 || (unsigned int)sqe->fd >= r->n)
		return NULL;
	return r->slot[sqe->fd];
}


/* The SQEs liburing has not handed to the kernel yet (SQ positions
 * sqe_head .. sqe_tail), each the one the kernel will take there
 * (preload_sqe_at: through sq.array), in the kernel's order. */
static void run_pending(struct io_uring *ring)
{
	struct io_uring_sq *sq = &ring->sq;
	int locked = 0, chain_failed = 0;
	for (unsigned int i = sq->sqe_head; i != sq->sqe_tail; i++) {
		struct io_uring_sqe *sqe = preload_sqe_at(ring, i);
		if (!sqe)
			continue;         /* the kernel drops it */
		int linked = sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK);
		if (sqe->opcode == IORING_OP_URING_CMD) {
			if (!locked) {
				sim_lock();
				locked = 1;
			}
			struct sim_file *f = target(ring, sqe);
			if (f) {
				int res = -ECANCELED;
				if (!chain_failed) {
					ctx_lock(f);
					res = uring_cmd(f, ring, sqe);
					ctx_unlock(f);
				}
				if (res < 0 && (sqe->flags & IOSQE_IO_LINK))
					chain_failed = 1;
				sqe_complete_with(sqe, res);
			}
		}
		if (!linked)
			chain_failed = 0;
	}
	if (locked)
		sim_unlock();
}

/* The preload core's submit variants (preload/uring_wrappers.inc): the
 * device's commands among the pending SQEs are run first (not from the
 * device's own code), then the real function. */
static int preload_uring_client_submit(const struct preload_submit *a,
				       preload_submit_call call,
				       enum preload_submit_fn fn)
{
	(void)fn;
	if (!preload_inside())
		run_pending(a->ring);
	return call(a);
}
