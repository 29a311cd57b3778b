/* SPDX-License-Identifier: MIT */
/*
 * The ring registry (rings.c): a state per io_uring ring the guard
 * knows, by SQ mapping or by fd.  What the io_uring path's own files
 * call; the rest of the guard's calls (ag_ring_forget,
 * ag_uring_lock_all, ...) are declared in uring.h, but for
 * ag_uring_note_unseen_rings, which the fd table (devices.c) calls too.
 *
 * Layering: ring.h, slots.h <- this <- holds.c, slot_change.c,
 * ring_reg.c, the SQ walk (uring.c).
 */
#ifndef AG_RINGS_H
#define AG_RINGS_H

#include "ring.h"

#pragma GCC visibility push(hidden)

/* The ring known by ring_fd, or NULL (takes the ring lock). */
struct ring_state *ag_ring_by_fd(int ring_fd);
/* Every known ring's slots made uncertain. */
void ag_all_slots_lost(void);
/* The state of a liburing ring (made if new; NULL: no memory), and of a
 * ring fd seen only by io_uring_register (known by its fd). */
struct ring_state *ag_ring_of(struct io_uring *ring);
struct ring_state *ag_ring_of_fd(int ring_fd);
/* The state of ring for a walk or a release (found without the ring
 * lock when it is the one this thread walked last; made if new, every
 * slot uncertain; NULL: no memory). */
struct ring_state *ag_ring_enter(struct io_uring *ring);
/* The ring io_uring_enter(ring_fd) enters (a registered ring index,
 * when `registered`), with its liburing ring in *ring (NULL: not known,
 * or known by its fd only). */
struct ring_state *ag_ring_entered(int ring_fd, int registered,
				   struct io_uring **ring);

/* Reports every io_uring fd of this process that no liburing function
 * the guard interposes set up (its SQEs are never checked), each ring
 * once per process tree (by its inode number, a bounded set: rings.c).
 * Looked for when a device file is first seen (devices.c), and at exit
 * (interpose.c). */
void ag_uring_note_unseen_rings(void);

#pragma GCC visibility pop

#endif
