/* SPDX-License-Identifier: MIT */
/*
 * The io_uring path's private types: a ring's state (rings.c, the
 * registry), its slot table (slots.c), a walk's holds (holds.c).  Used
 * by the files of the io_uring path only (slots.c, rings.c, holds.c,
 * slot_change.c, ring_reg.c, uring.c); each declares its functions in
 * a header of its own.  Not for the rest of the guard: uring.h declares
 * what it calls (ag_uring_*, ag_ring_*).
 *
 * Layering: devices.h (the fd table, files) <- ring.h <- slots.h <-
 * rings.h <- holds.h <- slot_change.h, ring_reg.c <- the SQ walk
 * (uring.c).
 */
#ifndef AG_RING_H
#define AG_RING_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "devices.h"

struct ag_sched;
struct io_uring;

/* What the processes sharing a ring share: the kernel tail after the
 * last checked submit, with the tag of the ring state that stored it,
 * in one word (tag << 32 | tail; a tag is never 0, so 0 is none): read
 * and written through ag_shared_tail and ag_shared_tail_set. */
struct ring_shared {
	_Atomic uint64_t seen;
};

/* What one walk keeps until its submit has gone to the kernel
 * (holds.c). */
struct ag_held {
	unsigned int n, cap;
	struct ag_sched **v;
	struct ring_state *slots;       /* counted in its slot_users, or
					 * NULL */
	unsigned int slots_parity;
	unsigned int nclosed, capclosed;
	int *closed;                    /* fds its close SQEs made
					 * volatile (ag_hold_closed) */
};

/* Registered slots: NULL (not the device), AG_SLOT_UNCERTAIN, or a file
 * that owns a reference.  Replaced whole on registration, changed in place
 * by updates. */
struct slot_table {
	unsigned int n;
	int lost;                       /* every slot is uncertain (no
					 * memory, or a registration the
					 * guard could not follow) */
	_Atomic(struct ag_file *) v[];
};

struct ring_state {
	_Atomic(const void *) sq_ring;  /* identity (preload/ring_id.h); NULL: known by fd only
					 * (io_uring_register), or free */
	atomic_int ring_fd;             /* -1: none known */
	atomic_int reg_tid;             /* the thread whose registered ring
					 * index liburing's
					 * io_uring_register_ring_fd gave it
					 * (enter_ring_fd), 0: none */
	atomic_int in_use;
	struct io_uring *ring;
	struct ring_shared *shared;     /* MAP_SHARED: survives fork */
	int shared_mapped;
	unsigned int shared_forks;      /* rings.c's fork count when
					 * shared was mapped (ring lock) */
	/* This state's tag in shared->seen, never 0: changed when the
	 * page is kept for the state's next ring (rings.c, state_forget),
	 * so that a tail stored for the ring before, by a process that
	 * shares the page and still has that ring, reads as none. */
	atomic_uint shared_tag;
	_Atomic(struct slot_table *) slots;
	atomic_uint readers;            /* inside slot_read */
	pthread_mutex_t slots_lock;     /* writers of the slot table */
	/* Registrations of files under way (ag_ring_reg_begin .. _end): the
	 * slots each may change read as uncertain, [lo, hi) packed as
	 * lo << 32 | hi (0: a free entry); reg_all counts those whose
	 * slots no entry could hold (every slot).  Written under the slots
	 * lock, read by slot_read. */
	atomic_uint reg_inflight;
	atomic_uint reg_all;
	unsigned int reg_seq;           /* registrations begun (slots lock) */
	_Atomic uint64_t reg_range[4];
	/* Walks that read slots, counted by the parity of the epoch they
	 * began in (slots_enter): a registration moves the epoch on and
	 * waits for the walks of the one before, which may have checked a
	 * slot it changes and not have handed it to the kernel yet.  One
	 * registration at a time moves it (epoch_lock, a leaf). */
	atomic_uint epoch;
	atomic_uint slot_users[2];
	pthread_mutex_t epoch_lock;
	/* Held by a thread from reading shared->seen to storing the tail
	 * it checked up to (check_unseen): two threads entering the ring
	 * at once (the kernel takes its SQEs once, whoever enters first)
	 * check each SQE once, and the one that finds them checked by the
	 * other enters only after they were.  Not shared with a process
	 * that shares the ring by fork (a known limit). */
	pthread_mutex_t walk_lock;
	_Atomic(struct ring_state *) next;
};

/*
 * Old slot values being replaced by one writer, dropped together after
 * one wait for the readers (slots lock held throughout).
 */
struct retired {
	unsigned int n;
	struct ag_file *v[64];
};

/* shared->seen holding tail for r. */
static inline uint64_t ag_shared_word(struct ring_state *r, unsigned int tail)
{
	return (uint64_t)atomic_load_explicit(&r->shared_tag,
					      memory_order_relaxed) << 32 | tail;
}

/* The kernel tail r's processes checked up to, in *tail: 1, or 0 when
 * none is known (none stored, or one stored under another tag: for
 * the ring this page served before). */
static inline int ag_shared_tail(struct ring_state *r, unsigned int *tail,
				 memory_order mo)
{
	uint64_t v = atomic_load_explicit(&r->shared->seen, mo);
	*tail = (unsigned int)v;
	return v >> 32 == atomic_load_explicit(&r->shared_tag,
					       memory_order_relaxed);
}

static inline void ag_shared_tail_set(struct ring_state *r,
				      unsigned int tail, memory_order mo)
{
	atomic_store_explicit(&r->shared->seen, ag_shared_word(r, tail), mo);
}

/* What an fd is for a slot (ag_fd_kind). */
enum fd_kind { FD_NOT, FD_DEVICE, FD_MAYBE };


#endif
