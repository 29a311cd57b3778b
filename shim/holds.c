/* SPDX-License-Identifier: MIT */
/*
 * Holds: what one walk of a ring's SQEs keeps until the submit it
 * checked has gone to the kernel (struct ag_held in ring.h): the
 * schedules of approved submits and appends (so that no other thread's
 * append or destroy slips in between the check and the driver), and
 * its count among the readers of the ring's slots (the epoch a
 * registration waits for: ag_slots_enter), and the fds its close SQEs
 * made volatile.  ag_uring_release lets them go (settling each fd whose
 * close the kernel completed during the submit) and remembers where
 * liburing's flush left the kernel tail.
 *
 * Layering: devices.h (volatile fds), mirror.h (schedules), ring.h <-
 * rings.h (the registry) <-
 * this <- slot_change.c, the SQ walk (uring.c).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <liburing.h>

#include "devices.h"
#include "holds.h"
#include "mirror.h"
#include "ring.h"
#include "rings.h"
#include "uring.h"

/* *hp, made (empty) if NULL: 0, or -ENOMEM. */
static int held_made(struct ag_held **hp)
{
	if (!*hp)
		*hp = calloc(1, sizeof(**hp));
	return *hp ? 0 : -ENOMEM;
}

/* v (n elements of size bytes, capacity *cap) with room for one more:
 * v itself, or v moved to twice the capacity (first when none), or NULL
 * (no memory: v unchanged). */
static void *with_room(void *v, unsigned int n, unsigned int *cap,
		       size_t size, unsigned int first)
{
	if (n < *cap)
		return v;
	unsigned int c = *cap ? 2 * *cap : first;
	void *w = realloc(v, c * size);
	if (w)
		*cap = c;
	return w;
}

/*
 * The walk holding *hp reads r's slots: it is counted in the current
 * epoch's slot_users until its release (ag_uring_release, once the
 * kernel has its SQEs), so that a registration begun meanwhile waits
 * for it before its own call goes to the kernel (ag_ring_reg_begin).
 * Once per walk; -ENOMEM when there is no memory to keep the count.
 */
int ag_slots_enter(struct ring_state *r, struct ag_held **hp)
{
	if (*hp && (*hp)->slots) {
		assert((*hp)->slots == r);
		return 0;
	}
	if (held_made(hp) != 0)
		return -ENOMEM;
	struct ag_held *h = *hp;
	for (;;) {
		unsigned int e = atomic_load(&r->epoch);
		atomic_fetch_add(&r->slot_users[e & 1], 1);
		/* Counted before a registration moved the epoch on (it then
		 * waits for this walk), or after (this walk then sees its
		 * pending slots): seq_cst, both sides. */
		if (atomic_load(&r->epoch) == e) {
			h->slots = r;
			h->slots_parity = e & 1;
			return 0;
		}
		atomic_fetch_sub(&r->slot_users[e & 1], 1);
	}
}

/* ---- holds ---- */

unsigned int ag_own_holds(const struct ag_held *h, const struct ag_sched *s)
{
	unsigned int n = 0;
	for (unsigned int i = 0; h && i < h->n; i++)
		n += h->v[i] == s;
	return n;
}

int ag_hold(struct ag_held **hp, struct ag_sched *s)
{
	if (held_made(hp) != 0)
		return -ENOMEM;
	struct ag_held *h = *hp;
	struct ag_sched **v = with_room(h->v, h->n, &h->cap, sizeof(*v), 8);
	if (!v)
		return -ENOMEM;
	h->v = v;
	ag_sched_hold(s);
	h->v[h->n++] = s;
	return 0;
}

int ag_hold_closed(struct ag_held **hp, int fd)
{
	if (held_made(hp) != 0)
		return -ENOMEM;
	struct ag_held *h = *hp;
	int *v = with_room(h->closed, h->nclosed, &h->capclosed, sizeof(*v), 4);
	if (!v)
		return -ENOMEM;
	h->closed = v;
	h->closed[h->nclosed++] = fd;
	return 0;
}

void ag_uring_release(struct io_uring *ring, struct ag_held *h)
{
	/* First: a registration may be waiting for this walk. */
	if (h && h->slots)
		atomic_fetch_sub(&h->slots->slot_users[h->slots_parity], 1);
	for (unsigned int i = 0; h && i < h->n; i++)
		ag_sched_release(h->v[i]);
	/* The kernel has the walk's SQEs: a close among them that
	 * completed inline leaves no copy behind (none: one test). */
	if (h && h->closed) {
		for (unsigned int i = 0; i < h->nclosed; i++)
			ag_fd_volatile_settle(h->closed[i]);
		free(h->closed);
	}
	if (h) {
		free(h->v);
		free(h);
	}
	if (!ring)
		return;
	/* Where liburing's flush left the kernel tail: anything beyond it
	 * next time did not come through here. */
	struct ring_state *r = ag_ring_enter(ring);
	if (r) {
		/* A plain store (relaxed): one word, shared with other
		 * processes, which needs no order with anything else. */
		ag_shared_tail_set(r, io_uring_smp_load_acquire(ring->sq.ktail),
				   memory_order_relaxed);
	}
}
