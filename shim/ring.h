/* SPDX-License-Identifier: MIT */
/*
 * The io_uring path's private types and the slot table's functions,
 * owned by uring.c (the ring registry, the slot table and its readers,
 * registrations under way) and used by the files of the io_uring path
 * beside it (slot_change.c, ring_reg.c).  Not for the rest of the
 * guard: uring.h declares what it calls (ag_uring_*, ag_ring_*).
 *
 * Layering: devices.h (the fd table, files) <- ring.h (uring.c)
 * <- slot_change.c, ring_reg.c <- the SQ walk (uring.c).  The
 * declarations below are hidden, so that uring.c's own calls compile as
 * when they were static.
 */
#ifndef AG_RING_H
#define AG_RING_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "devices.h"

struct ag_held;
struct io_uring;
struct ring_shared;

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
	/* Held by a thread from reading shared->tail to storing the tail
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

/* What an fd is for a slot (ag_fd_kind). */
enum fd_kind { FD_NOT, FD_DEVICE, FD_MAYBE };

#pragma GCC visibility push(hidden)

/* What slot i of r holds: NULL, AG_SLOT_UNCERTAIN, or a referenced file
 * (the caller unrefs it).  Lock-free: r's readers count covers it. */
struct ag_file *ag_slot_read(struct ring_state *r, unsigned int i);
/* The walk holding *hp (made if NULL) is counted as a reader of r's
 * slots until its release; 0, or -ENOMEM. */
int ag_slots_enter(struct ring_state *r, struct ag_held **hp);
/* Slot i of t (r's table, slots lock held) set to f; the file it held,
 * if any, is kept in d until ag_retired_drop. */
void ag_slot_set(struct ring_state *r, struct slot_table *t,
		 unsigned int i, struct ag_file *f, struct retired *d);
/* The files d keeps unreferenced, once r's readers of the moment have
 * left (slots lock held). */
void ag_retired_drop(struct ring_state *r, struct retired *d);
/* What fd is for a slot: FD_DEVICE with *f referenced, FD_NOT or
 * FD_MAYBE (*f NULL); `exact` rechecks an fd known as not the device. */
enum fd_kind ag_fd_kind(int fd, struct ag_file **f, int exact);
/* The ring known by ring_fd, or NULL (takes the ring lock). */
struct ring_state *ag_ring_by_fd(int ring_fd);
/* Every known ring's slots made uncertain. */
void ag_all_slots_lost(void);
/* The state of a liburing ring (made if new; NULL: no memory), and of a
 * ring fd seen only by io_uring_register (known by its fd). */
struct ring_state *ag_ring_of(struct io_uring *ring);
struct ring_state *ag_ring_of_fd(int ring_fd);
/* r's slot table replaced by t (slots lock held), the old one freed once
 * no reader is in it; ag_table_lost, a table whose every slot is
 * uncertain (NULL: no memory). */
void ag_table_replace(struct ring_state *r, struct slot_table *t);
struct slot_table *ag_table_lost(void);
/* r's slots set from the fd array at `files` (nr slots; 0: all unset),
 * and nr slots from off updated from the fd array at `files`. */
void ag_files_set(struct ring_state *r, uint64_t files, unsigned int nr);
void ag_files_update(struct ring_state *r, unsigned int off,
		     uint64_t files, unsigned int nr);

#pragma GCC visibility pop

#endif
