/* SPDX-License-Identifier: MIT */
/*
 * Registrations of files under way (uring.h: ag_ring_reg_begin, _end,
 * ag_ring_register_begin, ag_ring_register, ag_ring_register_follows):
 * the slots a registration may change read as pending (uncertain) from
 * before its call until its slots are settled, and it first waits for
 * the walks that read the ring's slots before (refused, fail closed,
 * when one is still counted after a second).  Moved from uring.c,
 * which owns the rings and the slot table (ring.h).
 *
 * Layering: devices.h, report.h and ring.h (the rings and slot table, uring.c) <-
 * this; interpose.c's registration wrappers call it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <liburing.h>

#include "devices.h"
#include "report.h"
#include "uring.h"
#include "util.h"
#include "ring.h"
#include "rings.h"
#include "slots.h"
#include "usercopy.h"

#ifndef IORING_REGISTER_USE_REGISTERED_RING
#define IORING_REGISTER_USE_REGISTERED_RING (1U << 31)   /* Linux 6.3 */
#endif

/*
 * Waits for the walks that began before this call and read r's slots
 * (ag_slots_enter): they may have checked a slot this registration
 * changes, and not have handed their SQEs to the kernel yet.  New walks
 * see the slots pending (marked before this).  A walk is counted only
 * from its check to its submit's return (a raw io_uring_enter that also
 * waits for completions is split by interpose.c, so that its count goes
 * before the wait), so this is short.  Returns 0, or -EAGAIN when a walk
 * is still counted after a second (a thread stopped between its check
 * and the kernel: a signal handler, a submit the kernel holds): going
 * ahead could let a command checked against a slot's old file reach the
 * new one, so the registration is refused instead (fail closed), and
 * said.
 */
static int reg_wait_walks(struct ring_state *r)
{
	pthread_mutex_lock(&r->epoch_lock);
	unsigned int e = atomic_fetch_add(&r->epoch, 1);
	atomic_uint *users = &r->slot_users[e & 1];
	uint64_t until = 0;
	int rc = 0;
	while (atomic_load(users) != 0) {
		uint64_t now = ag_now_ns();
		if (!until) {
			until = now + 1000000000u;
		} else if (now >= until) {
			ag_report_once("registration refused", "a registration "
				       "of ring fd %d's files waited a second for "
				       "another thread's submit, checked against "
				       "the slots before it, to reach the kernel, "
				       "and was refused with EAGAIN (fail closed: "
				       "going ahead could send a command checked "
				       "against a slot's old file to its new one)",
				       atomic_load(&r->ring_fd));
			rc = -EAGAIN;
			break;
		}
		sched_yield();
	}
	pthread_mutex_unlock(&r->epoch_lock);
	return rc;
}

/* Slots off .. off + nr of r (nr AG_REG_ALL from 0: every slot, also
 * those beyond the table) pending in g, then the walks that may have
 * read them before waited for. */
static void reg_mark(struct ag_reg *g, struct ring_state *r,
		     unsigned int off, unsigned int nr)
{
	g->state = NULL;
	g->refused = 0;
	if (!r || nr == 0)
		return;           /* no memory: its slots are uncertain */
	uint64_t hi = (uint64_t)off + nr;
	if (hi > UINT_MAX)
		hi = UINT_MAX;
	uint64_t v = off == 0 && nr == AG_REG_ALL ? 0
						  : (uint64_t)off << 32 | hi;
	pthread_mutex_lock(&r->slots_lock);
	g->entry = -1;
	for (int k = 0; v && k < 4 && g->entry < 0; k++)
		if (!atomic_load(&r->reg_range[k])) {
			atomic_store(&r->reg_range[k], v);
			g->entry = k;
		}
	if (g->entry < 0)
		atomic_fetch_add(&r->reg_all, 1);
	g->overlap = atomic_fetch_add(&r->reg_inflight, 1) > 0;
	g->seq = ++r->reg_seq;
	g->range = v;
	pthread_mutex_unlock(&r->slots_lock);
	g->state = r;
	g->refused = reg_wait_walks(r);
}

void ag_ring_reg_begin(struct ag_reg *g, struct io_uring *ring,
		       unsigned int off, unsigned int nr)
{
	preload_enter();
	reg_mark(g, ag_ring_of(ring), off, nr);
}

/* Another registration of r was under way during g's (slots lock held):
 * the kernel ran the two in an order the guard cannot know, so the
 * slots g changed are uncertain, whatever it settled them to. */
static void reg_overlapped(struct ring_state *r, const struct ag_reg *g)
{
	struct slot_table *t = atomic_load(&r->slots);
	if (!g->range) {
		ag_table_replace(r, ag_table_lost());
		return;
	}
	if (!t || t->lost)
		return;
	struct retired d = { 0 };
	unsigned int lo = (unsigned int)(g->range >> 32);
	unsigned int hi = (unsigned int)g->range;
	for (unsigned int i = lo; i < hi && i < t->n; i++)
		ag_slot_set(r, t, i, AG_SLOT_UNCERTAIN, &d);
	ag_retired_drop(r, &d);
}

void ag_ring_reg_end(struct ag_reg *g)
{
	struct ring_state *r = g->state;
	if (!r) {
		preload_leave();         /* from ag_ring_reg_begin: no lock left */
		return;
	}
	pthread_mutex_lock(&r->slots_lock);
	if (g->overlap || r->reg_seq != g->seq)
		reg_overlapped(r, g);
	if (g->entry >= 0)
		atomic_store(&r->reg_range[g->entry], 0);
	else if (atomic_load(&r->reg_all))
		atomic_fetch_sub(&r->reg_all, 1);
	if (atomic_load(&r->reg_inflight))     /* not cleared by a fork */
		atomic_fetch_sub(&r->reg_inflight, 1);
	pthread_mutex_unlock(&r->slots_lock);
	g->state = NULL;
	preload_leave();                 /* from ag_ring_reg_begin: the slots
				      * lock held until here */
}

static int files_op(unsigned int op)
{
	return op == IORING_REGISTER_FILES || op == IORING_UNREGISTER_FILES ||
	       op == IORING_REGISTER_FILES2 ||
	       op == IORING_REGISTER_FILES_UPDATE ||
	       op == IORING_REGISTER_FILES_UPDATE2;
}

/* A files registration on a registered ring index (IORING_REGISTER_
 * USE_REGISTERED_RING): the guard cannot tell which ring it changes, so
 * every registered slot of every ring becomes uncertain.  Says so once. */
static void registered_ring_files(void)
{
	ag_report_once("registered ring register", "io_uring_register() "
		       "of files on a registered ring index: the guard "
		       "cannot tell which ring; every registered slot of "
		       "every ring is uncertain (device commands on them "
		       "are blocked)");
	ag_all_slots_lost();
}

int ag_ring_register_follows(unsigned int opcode)
{
	return files_op(opcode & ~IORING_REGISTER_USE_REGISTERED_RING);
}

const void *ag_ring_register_begin(struct ag_reg *g, unsigned int fd,
				   unsigned int opcode, const void *arg,
				   unsigned int nr_args)
{
	_Static_assert(sizeof(g->copy) >= sizeof(struct io_uring_rsrc_update2) &&
		       sizeof(g->copy) >= sizeof(struct io_uring_rsrc_register) &&
		       sizeof(g->copy) >= sizeof(struct io_uring_files_update),
		       "the argument structs fit the copy");
	unsigned int op = opcode & ~IORING_REGISTER_USE_REGISTERED_RING;
	preload_enter();                 /* until ag_ring_reg_end */
	g->state = NULL;
	g->refused = 0;
	g->arg = arg;
	if (!files_op(op))
		return arg;
	if (opcode & IORING_REGISTER_USE_REGISTERED_RING) {
		registered_ring_files();
		return arg;
	}
	/* The kernel is handed the guard's copy of the argument struct, so
	 * that the slots it changes are the ones marked and settled. */
	unsigned int off = 0, nr = AG_REG_ALL;
	size_t size = op == IORING_REGISTER_FILES_UPDATE
		? sizeof(struct io_uring_files_update)
		: op == IORING_REGISTER_FILES_UPDATE2 ||
		  op == IORING_REGISTER_FILES2 ? nr_args : 0;
	if (size && size <= sizeof(g->copy) &&
	    copy_from_user(g->copy, (uintptr_t)arg, size) == 0) {
		g->arg = g->copy;
		if (op == IORING_REGISTER_FILES_UPDATE) {
			const struct io_uring_files_update *u = (void *)g->copy;
			off = u->offset;
			nr = nr_args;
		} else if (op == IORING_REGISTER_FILES_UPDATE2 &&
			   size == sizeof(struct io_uring_rsrc_update2)) {
			const struct io_uring_rsrc_update2 *u = (void *)g->copy;
			off = u->offset;
			nr = u->nr;
		}
	}
	reg_mark(g, ag_ring_of_fd((int)fd), off, nr);
	return g->arg;
}

void ag_ring_register(unsigned int fd, unsigned int opcode, const void *arg,
		      unsigned int nr_args, int rc)
{
	unsigned int op = opcode & ~IORING_REGISTER_USE_REGISTERED_RING;
	if (rc < 0 || !files_op(op))
		return;
	if (opcode & IORING_REGISTER_USE_REGISTERED_RING) {
		registered_ring_files();
		return;
	}
	struct ring_state *r = ag_ring_of_fd((int)fd);
	if (!r)
		return;
	switch (op) {
	case IORING_REGISTER_FILES:
		ag_files_set(r, (uintptr_t)arg, nr_args);
		break;
	case IORING_UNREGISTER_FILES:
		ag_files_set(r, 0, 0);
		break;
	case IORING_REGISTER_FILES2: {
		struct io_uring_rsrc_register g;
		if (nr_args != sizeof(g) ||
		    copy_from_user(&g, (uintptr_t)arg, sizeof(g)) != 0)
			break;
		ag_files_set(r, g.flags & IORING_RSRC_REGISTER_SPARSE ? 0 : g.data,
			  g.nr);
		break;
	}
	case IORING_REGISTER_FILES_UPDATE: {
		struct io_uring_files_update u;
		if (copy_from_user(&u, (uintptr_t)arg, sizeof(u)) == 0)
			ag_files_update(r, u.offset, u.fds, (unsigned int)rc);
		break;
	}
	case IORING_REGISTER_FILES_UPDATE2: {
		struct io_uring_rsrc_update2 u;
		if (nr_args == sizeof(u) &&
		    copy_from_user(&u, (uintptr_t)arg, sizeof(u)) == 0)
			ag_files_update(r, u.offset, u.data, (unsigned int)rc);
		break;
	}
	}
}
