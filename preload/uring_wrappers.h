/* SPDX-License-Identifier: MIT */
/*
 * liburing's functions every preload module interposes
 * (PRELOAD_URING_SYMBOLS, interposed.h), written once
 * (uring_wrappers.inc), with the module as their client: a module that
 * lists them in its symbols.h includes uring_wrappers.inc in one of its
 * files, which defines the four hooks named below as static functions
 * of that file (so that the compiler may inline them into the wrappers:
 * the guard's checked submit costs what it cost with wrappers of its
 * own); adding a liburing entry point to the list and to
 * uring_wrappers.inc gives it to every module.
 *
 * Each wrapper calls the client's start-up (preload_uring_client_init),
 * answers -ENOSYS when liburing's function cannot be found (an older
 * liburing, or none in the global scope), packs its arguments and hands
 * them to the hook of its family with `call`, the call of liburing's
 * function on them: the hook does what the module must around the call
 * and makes it (or not), and its result is the wrapper's.
 *
 *   submit    io_uring_submit, _and_wait, _and_wait_timeout,
 *             _and_get_events, _and_wait_min_timeout (liburing 2.8),
 *             _and_wait_reg (2.9); io_uring_wait_cqes and
 *             _wait_cqe_timeout when they submit (preload_wait_submits;
 *             else they go straight to liburing): the SQEs not yet
 *             handed to the kernel are there to walk (sq.h)
 *   files     io_uring_register_files, _tags, _sparse, _update,
 *             _update_tag, io_uring_unregister_files: what a ring's
 *             registered files are (preload_files_done)
 *   ring      io_uring_queue_init, _init_params, _queue_mmap (a ring
 *             mapped), io_uring_queue_exit (unmapped): ring_id.h
 *
 * The functions only one module interposes stay in that module and may
 * call its hooks themselves with calls of their own.
 */
#ifndef PRELOAD_URING_WRAPPERS_H
#define PRELOAD_URING_WRAPPERS_H

#include <signal.h>

#include <liburing.h>

/* ---- submit ---- */

/* Which submit function, for the client's policy. */
enum preload_submit_fn {
	PRELOAD_SUBMIT,                  /* io_uring_submit */
	PRELOAD_SUBMIT_AND_WAIT,         /* io_uring_submit_and_wait */
	PRELOAD_SUBMIT_AND_WAIT_TIMEOUT, /* io_uring_submit_and_wait_timeout */
	PRELOAD_SUBMIT_AND_GET_EVENTS,   /* io_uring_submit_and_get_events */
	PRELOAD_SUBMIT_AND_WAIT_MIN_TIMEOUT, /* _submit_and_wait_min_timeout */
	PRELOAD_SUBMIT_AND_WAIT_REG,     /* io_uring_submit_and_wait_reg */
	PRELOAD_WAIT_CQES,               /* io_uring_wait_cqes, submitting */
	PRELOAD_WAIT_CQE_TIMEOUT,        /* io_uring_wait_cqe_timeout, the same */
};

/* Whether a wait with the time-out ts submits the pending SQEs itself:
 * liburing does so without IORING_FEAT_EXT_ARG (kernels before 5.11),
 * to queue its time-out SQE. */
static inline int preload_wait_submits(const struct io_uring *ring,
				       const struct __kernel_timespec *ts)
{
	return ts && !(ring->features & IORING_FEAT_EXT_ARG);
}

/* The arguments of any submit or wait variant (those a variant does not
 * take are zero). */
struct preload_submit {
	struct io_uring *ring;
	struct io_uring_cqe **cqe_ptr;
	unsigned int wait_nr;
	struct __kernel_timespec *ts;
	unsigned int min_wait_usec;
	sigset_t *sigmask;
	int reg_index;
};

/* A call of a variant's next definition with a's arguments. */
typedef int (*preload_submit_call)(const struct preload_submit *a);

/* The hook (uring_wrappers.inc):
 *   int preload_uring_client_submit(const struct preload_submit *a,
 *                                   preload_submit_call call,
 *                                   enum preload_submit_fn fn);
 * the variant's result.  The next definitions are the including file's
 * next_<name> (PRELOAD_NEXT_DECLARE): a client may call
 * next_io_uring_submit itself (a plain submit before a variant's wait). */

/* ---- registered files ---- */

enum preload_files_fn {
	PRELOAD_FILES_REGISTER,          /* io_uring_register_files */
	PRELOAD_FILES_REGISTER_TAGS,     /* io_uring_register_files_tags */
	PRELOAD_FILES_REGISTER_SPARSE,   /* io_uring_register_files_sparse */
	PRELOAD_FILES_UPDATE,            /* io_uring_register_files_update */
	PRELOAD_FILES_UPDATE_TAG,        /* io_uring_register_files_update_tag */
	PRELOAD_FILES_UNREGISTER,        /* io_uring_unregister_files */
};

/* A registration's arguments: slots off .. off + nr from the
 * application's fd array files (NULL: none, sparse or unregistered). */
struct preload_files {
	struct io_uring *ring;
	enum preload_files_fn fn;
	const int *files;
	const __u64 *tags;
	unsigned int off, nr;
};

typedef int (*preload_files_call)(const struct preload_files *f);

/* The hook: int preload_uring_client_files(const struct preload_files *f,
 * preload_files_call call); the registration's result. */

/* Whether f replaces the ring's whole table (a registration, or none
 * left), not slots off .. off + nr of it. */
static inline int preload_files_whole(const struct preload_files *f)
{
	return f->fn != PRELOAD_FILES_UPDATE &&
	       f->fn != PRELOAD_FILES_UPDATE_TAG;
}

/* What the registration f did, given its result rc (liburing's: 0 for a
 * whole table, the count of slots updated for an update, or -errno):
 * PRELOAD_FILES_SET, the table is now f->nr slots from f->files (NULL:
 * all empty); PRELOAD_FILES_UPDATED, slots f->off .. f->off + rc are
 * now from f->files; PRELOAD_FILES_GONE, the ring has no table; 0:
 * nothing changed (refused). */
enum { PRELOAD_FILES_SET = 1, PRELOAD_FILES_UPDATED, PRELOAD_FILES_GONE };

static inline int preload_files_done(const struct preload_files *f, int rc)
{
	if (!preload_files_whole(f))
		return rc > 0 ? PRELOAD_FILES_UPDATED : 0;
	if (rc != 0)
		return 0;
	return f->fn == PRELOAD_FILES_UNREGISTER ? PRELOAD_FILES_GONE
						 : PRELOAD_FILES_SET;
}

/* Follows what the registration f did (result rc) with the client's own
 * functions, by name: set(ring, files, nr), update(ring, off, files, n),
 * gone(ring). */
#define PRELOAD_FILES_FOLLOW(f, rc, set, update, gone)                      \
	do {                                                                \
		switch (preload_files_done((f), (rc))) {                    \
		case PRELOAD_FILES_SET:                                     \
			set((f)->ring, (f)->files, (f)->nr);                \
			break;                                              \
		case PRELOAD_FILES_UPDATED:                                 \
			update((f)->ring, (f)->off, (f)->files,             \
			       (unsigned int)(rc));                         \
			break;                                              \
		case PRELOAD_FILES_GONE:                                    \
			gone((f)->ring);                                    \
			break;                                              \
		}                                                           \
	} while (0)

/* ---- ring set-up and exit ---- */

enum preload_ring_fn {
	PRELOAD_RING_INIT,               /* io_uring_queue_init */
	PRELOAD_RING_INIT_PARAMS,        /* io_uring_queue_init_params */
	PRELOAD_RING_MMAP,               /* io_uring_queue_mmap */
	PRELOAD_RING_EXIT,               /* io_uring_queue_exit */
};

struct preload_ring {
	struct io_uring *ring;
	enum preload_ring_fn fn;
	unsigned int entries, flags;
	struct io_uring_params *p;
	int fd;
};

/* 0 or -errno for a set-up (0: the ring is mapped); 0 for the exit. */
typedef int (*preload_ring_call)(const struct preload_ring *r);

/* The hook: int preload_uring_client_ring(const struct preload_ring *r,
 * preload_ring_call call); a set-up's result (0: ring mapped, or
 * -errno), or 0 for the exit. */

/* ---- start-up ----
 *
 * The hook: void preload_uring_client_init(void), first in every
 * wrapper: the client's start-up, which calls preload_uring_resolve
 * (uring_wrappers.inc: the next definitions of the wrapped functions)
 * once, under its pthread_once, before it first returns. */

#endif
