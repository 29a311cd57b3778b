/* SPDX-License-Identifier: MIT */
/*
 * A walk's holds (holds.c): the schedules it approved and its count
 * among its ring's slot readers, kept until ag_uring_release (uring.h).
 *
 * Layering: mirror.h, ring.h <- this <- slot_change.c, the SQ walk
 * (uring.c).
 */
#ifndef AG_HOLDS_H
#define AG_HOLDS_H

#include "ring.h"

#pragma GCC visibility push(hidden)

/* The walk holding *hp (made if NULL) is counted as a reader of r's
 * slots until its release; 0, or -ENOMEM. */
int ag_slots_enter(struct ring_state *r, struct ag_held **hp);
/* How many holds on s h has (h may be NULL). */
unsigned int ag_own_holds(const struct ag_held *h, const struct ag_sched *s);
/* s held (ag_sched_hold) until *hp's release (*hp made if NULL); 0, or
 * -ENOMEM (s not held). */
int ag_hold(struct ag_held **hp, struct ag_sched *s);
/* fd, made volatile by a close SQE of the walk holding *hp (made if
 * NULL), is settled at its release if the close completed by then
 * (ag_fd_volatile_settle); 0, or -ENOMEM (fd stays volatile until its
 * next request). */
int ag_hold_closed(struct ag_held **hp, int fd);

#pragma GCC visibility pop

#endif
