/* SPDX-License-Identifier: MIT */
/*
 * The io_uring front end (uring.c, ring_reg.c).
 */
#ifndef ARENAGUARD_SHIM_URING_H
#define ARENAGUARD_SHIM_URING_H

#include <stdint.h>

struct io_uring;
struct ag_held;

/*
 * Checks the SQEs the next submit will hand the kernel, rewriting blocked
 * ones into NOPs that complete with -EPERM.  Returns the schedules held
 * until the submit is done (release with ag_uring_release), or NULL.
 */
struct ag_held *ag_uring_check(struct io_uring *ring);
void ag_uring_release(struct io_uring *ring, struct ag_held *held);
/* io_uring_enter() called by the application itself: the SQEs it wrote
 * to the ring by hand, if the ring is known: by its fd, or (registered
 * nonzero: IORING_ENTER_REGISTERED_RING) by the registered ring index
 * ag_ring_index_registered saw this thread's liburing give it. */
struct ag_held *ag_uring_enter_check(int ring_fd, unsigned int to_submit,
				     int registered);
/* liburing's io_uring_register_ring_fd registered ring's fd in the
 * calling thread (ring->enter_ring_fd is the index). */
void ag_ring_index_registered(struct io_uring *ring);

/*
 * A registration of a ring's files under way: begun before the call
 * goes to the kernel, ended after it returned (success or failure) and
 * the slots were settled (ag_ring_files_set / _update, ag_ring_register).
 * Meanwhile the slots it may change, off .. off + nr (AG_REG_ALL from
 * 0: every one), are uncertain to every walk, and the begin has waited
 * (a second at most) for the walks that read them before, so that no
 * device command checked against a slot's old file reaches the kernel
 * after it has the new one.
 */
#define AG_REG_ALL 0xffffffffu
struct ag_reg {
	void *state;            /* the ring's, NULL: nothing to end */
	int entry;
	int overlap;            /* another was under way when it began */
	unsigned int seq;
	uint64_t range;         /* lo << 32 | hi, 0: every slot */
	const void *arg;        /* io_uring_register: what the kernel reads */
	uint64_t copy[4];
	int refused;            /* -errno: the registration must not go to
				 * the kernel (the caller returns it) */
};
/* ag_ring_reg_begin (and ag_ring_register_begin) to ag_ring_reg_end
 * count as inside the guard (preload/reentry.h).  When begin leaves
 * g->refused nonzero (another thread's submit has been between its
 * check of the ring's slots and the kernel for a second), the caller
 * does not make the registration and returns g->refused; it still
 * calls ag_ring_reg_end. */
void ag_ring_reg_begin(struct ag_reg *g, struct io_uring *ring,
		       unsigned int off, unsigned int nr);
void ag_ring_reg_end(struct ag_reg *g);
/* The same for the generic io_uring_register(): the argument to hand
 * the kernel (the guard's copy of a files update or registration
 * struct, or arg). */
const void *ag_ring_register_begin(struct ag_reg *g, unsigned int fd,
				   unsigned int opcode, const void *arg,
				   unsigned int nr_args);
/* Whether io_uring_register's opcode changes the registered files,
 * which the guard follows (the others pass untouched). */
int ag_ring_register_follows(unsigned int opcode);

/* Registered files (called after the next function succeeded). */
void ag_ring_files_set(struct io_uring *ring, const int *files,
		       unsigned int nr);
void ag_ring_files_update(struct io_uring *ring, unsigned int off,
			  const int *files, unsigned int nr);
/* Around a liburing set-up (io_uring_queue_init*, io_uring_queue_mmap:
 * end with the ring, known from then on, or NULL when it failed) or
 * tear-down (io_uring_queue_exit: end with NULL), so that no scan takes
 * a ring fd for an unseen one while either is under way. */
void ag_ring_life_begin(void);
void ag_ring_life_end(struct io_uring *ring);
/* A ring that liburing unmaps (io_uring_queue_exit). */
void ag_ring_forget(struct io_uring *ring);
/* fds first .. last were closed: a ring known by one of them is no
 * longer reachable so (a walk of the few rings, no lock). */
void ag_ring_fds_closed(unsigned int first, unsigned int last);
/* Whether the SQEs ring has not handed to the kernel yet hold a
 * URING_CMD (lock-free, async-signal-safe). */
int ag_uring_pending_cmd(struct io_uring *ring);
/* io_uring_resize_rings moved ring's SQ ring from old_sq_ring. */
void ag_ring_moved(const void *old_sq_ring, struct io_uring *ring);
/* The generic io_uring_register(), after the kernel answered rc: the
 * file registrations among its opcodes. */
void ag_ring_register(unsigned int fd, unsigned int opcode, const void *arg,
		      unsigned int nr_args, int rc);

void ag_uring_lock_all(void);
void ag_uring_unlock_all(int child);
/* Before every fork, locks taken or not (interpose.c's prepare
 * handler): what the process tree shares is mapped (rings.c: the
 * "unseen ring" notice said once per tree). */
void ag_uring_forking(void);

#endif
