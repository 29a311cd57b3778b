/* SPDX-License-Identifier: MIT */
/*
 * The io_uring path.  liburing's submit functions (interposed in
 * interpose.c) call ag_uring_check first, which walks the SQEs the
 * application queued since the last submit (sq.sqe_head .. sq.sqe_tail,
 * as liburing's own flush will hand them over, through the SQ index
 * array as the kernel reads them) and handles every IORING_OP_URING_CMD
 * aimed at the device, by fd or by registered slot:
 *
 *   APPEND  the references are copied once into a block the schedule
 *           keeps, certified, and the SQE is pointed at that block: the
 *           driver reads exactly what was checked
 *   SUBMIT, SUBMIT_SEALED  decided like the ioctl; an approved one is
 *           rewritten into the sealed submit of the schedule that was
 *           checked, with the mirror's seal; a blocked one becomes a NOP
 *           whose completion carries -EPERM (IORING_NOP_INJECT_RESULT)
 *           and the application's user_data, an ordinary failed CQE
 *
 * The handling of each command is request.c's, shared with the ioctl
 * path; this file is its front end (struct ag_front): which SQEs are
 * device commands, and what forwarding means here (rewriting the SQE).
 *
 * A CQE is never seen here, so an append is mirrored when it is handed
 * over, not when the driver has done it; references the certificate
 * calls malformed are answered -EINVAL here (the driver's answer); an
 * append linked after a request that may fail and cancel it poisons its
 * schedule, sealed file or not (an append mirrored in good health is
 * no such request: appends linked to appends and the submit keep their
 * schedule); anything else the driver refuses (EBUSY, ENOMEM) leaves the
 * mirror longer than the device's schedule, and a sealed driver then
 * refuses its submits (EKEYREJECTED in the CQE, which the guard does not
 * see); an unsealed one runs them (docs/guard.md: a known limit).  An
 * approved submit or append holds its schedule until the next function
 * returns, so that no other thread's append or destroy slips in between
 * the check and the driver.
 *
 * Registered files: the registration functions are interposed too (the
 * liburing ones and the generic io_uring_register); a slot holds the
 * file it had when registered.  While a registration is under way the
 * slots it may change are pending (uncertain), and it first waits for
 * the walks that read the ring's slots before (counted per epoch from
 * their first slot read to their release): no command checked against
 * a slot's old file reaches the kernel after the new one.  SQEs that change slots themselves
 * (direct opens, IORING_OP_FILES_UPDATE, direct close) have results the
 * guard does not see: a slot they may have made the device is
 * "uncertain", and device commands on it are blocked (fail closed:
 * slot_change.c).  So
 * is a slot registered from an fd the guard last knew as another file
 * (not rechecked, to keep registration free of system calls: the fd may
 * have been closed and reused unseen).  An IORING_OP_CLOSE of a plain fd
 * makes the fd volatile in the fd table (fd_closed_by_sqe).  The slot table
 * is read without a lock: a reader announces itself (readers) around the few loads and
 * the reference it takes, and a writer, after swapping a slot or the
 * table, waits for the readers of the moment to leave before it drops
 * what it replaced.
 *
 * Rings are known by their SQ mapping (preload/ring_id.h: sq.ring_ptr,
 * unique while mapped); the fd is only a way to reach one (io_uring_enter,
 * io_uring_register), forgotten when it is closed: liburing 2.4's
 * io_uring_close_ring_fd leaves every ring with fd -1, and a dup'ed ring
 * lives on under another number.  A state is never freed, only emptied
 * and reused, so that a stale pointer to one is harmless.  The kernel
 * tail is remembered after each submit, in memory shared with the
 * children forked since (a ring shared across fork is submitted to by
 * both): if it moved without passing here, someone wrote the SQ ring by
 * hand; those SQEs are checked if the kernel has not taken them yet, and
 * reported otherwise.  Every walk is bounded by the ring's size.
 *
 * This file is the URING_CMD front end and the SQ walk; the rest of the
 * io_uring path is beside it: ring.h (the types), slots.c (the slot
 * table and its readers), rings.c (the ring registry, fork), holds.c (a
 * walk's holds and its release), slot_change.c (slots changed by SQEs),
 * ring_reg.c (registrations under way).
 *
 * Layering: devices.h, report.h <- ring.h <- slots.c <- rings.c <-
 * holds.c <- slot_change.c, ring_reg.c <- the SQ walk, here.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <liburing.h>

#include "api.h"
#include "devices.h"
#include "mirror.h"
#include "options.h"
#include "report.h"
#include "request.h"
#include "stats.h"
#include "submit.h"
#include "uring.h"
#include "holds.h"
#include "ring.h"
#include "rings.h"
#include "slots.h"
#include "slot_change.h"
#include "sq.h"
#include "sqe_inject.h"
#include "uring_abi.h"
#include "usercopy.h"
#include "../contract/requests.h"  /* the URING_CMD argument rule */

/* ---- one SQE ---- */


struct walk {
	struct io_uring *ring;
	struct ring_state *r;           /* NULL: no memory for it */
	struct ag_held *held;
	int chain_blocked;              /* an earlier SQE of this link chain */
	int chain_may_fail;             /* an earlier SQE of this chain has
					 * IOSQE_IO_LINK and may fail (all
					 * but appends mirrored in good
					 * health): the kernel would then
					 * cancel the rest */
	int in_chain;                   /* the SQE before had IOSQE_IO_LINK
					 * or IOSQE_IO_HARDLINK: this one is
					 * issued when that one completes */
};

/* ---- the URING_CMD front end (request.c has the handlers) ---- */

/* One device command being checked. */
struct uring_call {
	struct walk *w;
	struct io_uring_sqe *sqe;
	int mirrored;           /* an append the mirror took in good health */
};

/* The SQE flags with which the kernel hands a URING_CMD to the driver:
 * with any other (IOSQE_BUFFER_SELECT, a bit it does not know) or a
 * personality (which may not exist) it may fail the SQE first. */
#define PASSED_FLAGS (IOSQE_FIXED_FILE | IOSQE_IO_DRAIN | IOSQE_IO_LINK | \
		      IOSQE_IO_HARDLINK | IOSQE_ASYNC | IOSQE_CQE_SKIP_SUCCESS)

/*
 * The SQE becomes exactly the request the handler approved: its command
 * and the whole argument the guard checked (an approved submit carries
 * the mirror's seal, so that a thread rewriting the SQE after this gets
 * a refused submission, never another schedule run).  An append linked
 * after a request that may fail and cancel it cannot be known taken:
 * its schedule is then blocked, sealed file or not.  An append the
 * mirror took in good health, with flags the kernel passes, is one the
 * driver refuses only for want of its own resources (docs/guard.md, a
 * known limit): it does not count as a request that may fail, so that
 * appends linked to appends and to the submit (the ordinary way to run
 * the submit only if every append was taken) keep their schedule.
 */
static int uring_forward(struct ag_call *c, struct ag_sched *s,
			 unsigned int cmd, void *arg)
{
	struct uring_call *u = c->ctx;
	const struct ag_request *req = ag_request_by_nr(_IOC_NR(cmd));
	assert(req && req->uring_op && req->uring_size <= URING_CMD_BYTES);
	u->sqe->cmd_op = req->uring_op;
	memcpy(u->sqe->cmd, arg, req->uring_size);
	memset(u->sqe->cmd + req->uring_size, 0, URING_CMD_BYTES - req->uring_size);
	/* A command linked after another is issued when that one
	 * completes, after the submit returned (on a DEFER_TASKRUN ring at
	 * the next wait): Linux 6.12's io_uring copies a URING_CMD's SQE at
	 * prep only with IOSQE_ASYNC, so without it the driver reads the
	 * SQ slot then, which the application may have filled again
	 * (gate-ring link-reuse: a certified submit read a NOP's bytes).
	 * IOSQE_ASYNC keeps the chain's order; the command runs from io-wq
	 * with the copy taken at the submit. */
	if (u->w->in_chain)
		u->sqe->flags |= IOSQE_ASYNC;
	/* No CQE is seen here: mirrored, but maybe never taken, and later
	 * appends would then be certified with references the driver does
	 * not have (fuzz_guard).  A seal would refuse such a schedule's
	 * submits, but only after the guard certified a mirror it cannot
	 * vouch for (fuzz_guard: a linked append cancelled on a sealed
	 * file, its mirror longer than the driver's schedule). */
	if (s && req->uring_op == ARENA_URING_CMD_APPEND) {
		if (((const struct drm_arena_schedule_append *)arg)->count &&
		    u->w->chain_may_fail)
			ag_sched_poison(s, "an io_uring append linked after a "
					"request that may fail and cancel it: "
					"the guard cannot know whether the "
					"driver took it");
		u->mirrored = ag_sched_recorded(s) &&
			      !(u->sqe->flags & ~PASSED_FLAGS) &&
			      !u->sqe->personality;
	}
	return 0;
}

/* Another thread's submit or append of s is between its check and the
 * driver.  Wait for it, unless this walk holds schedules itself: two
 * walks could then wait for each other.  EBUSY is the driver's answer
 * to an append while the schedule executes, which it may be about to. */
static int uring_wait_holds(struct ag_call *c, struct ag_sched *s)
{
	struct walk *w = ((struct uring_call *)c->ctx)->w;
	unsigned int own = ag_own_holds(w->held, s);
	if (ag_sched_held_by_others(s, own) && w->held && w->held->n > 0)
		return -EBUSY;
	ag_sched_wait_holds(s, own);
	return 0;
}

static int uring_keep(struct ag_call *c, struct ag_sched *s)
{
	struct walk *w = ((struct uring_call *)c->ctx)->w;
	if (ag_hold(&w->held, s) != 0)
		return ag_no_memory("a URING_CMD");  /* cannot keep it
						      * checked */
	return 0;
}

static const struct ag_front uring_front = {
	.path = AG_PATH_URING,
	.deferred = 1,
	.forward = uring_forward,
	.wait_holds = uring_wait_holds,
	.keep = uring_keep,
};

/* The command's argument copied out of the SQE, zero extended, and
 * handled: 0 or -errno (the SQE then fails with it); *mirrored: an
 * append the mirror took in good health (uring_forward). */
static int handle_cmd(struct walk *w, struct ag_file *f,
		      struct io_uring_sqe *sqe, const struct ag_request *req,
		      int *mirrored)
{
	uint64_t arg[URING_CMD_BYTES / 8] = { 0 };
	assert(req->size <= sizeof(arg));
	memcpy(arg, sqe->cmd, req->uring_size);
	struct uring_call u = { w, sqe, 0 };
	/* A registered slot has no fd: name one the file was seen on. */
	int fd = sqe->flags & IOSQE_FIXED_FILE ? ag_file_fd(f) : sqe->fd;
	struct ag_call c = { &uring_front, f, fd, &u };
	int rc = req->handle(&c, arg);
	*mirrored = rc == 0 && u.mirrored;
	return rc;
}

/* The device file an SQE is aimed at: 0 with *f the file (referenced),
 * NULL, or AG_SLOT_UNCERTAIN; or -errno (*f NULL) when it may be the
 * device but cannot be checked (no memory to know it, a probe that did
 * not answer): refuse with it. */
static int target(struct walk *w, const struct io_uring_sqe *sqe,
		  struct ag_file **f)
{
	*f = NULL;
	if (!(sqe->flags & IOSQE_FIXED_FILE))
		return sqe->fd >= 0 ? ag_fd_file(sqe->fd, f) : 0;
	if (!w->r) {
		*f = AG_SLOT_UNCERTAIN;
		return 0;
	}
	if (sqe->fd < 0)
		return 0;
	if (ag_slots_enter(w->r, &w->held) != 0)
		return -ENOMEM;
	*f = ag_slot_read(w->r, (unsigned int)sqe->fd);
	return 0;
}

/* A command answered here, never handed to the driver: the kernel
 * cancels the rest of its link chain, and so does the walk. */
static void fail_cmd(struct walk *w, struct io_uring_sqe *sqe, int rc)
{
	sqe_complete_with(sqe, rc);
	if (sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK))
		w->chain_blocked = 1;
}

/* A device command refused before its handler ran, its slot uncertain
 * (why): a submit among them is a refused submission, which the thread's
 * last refusal (arenaguard_last_refusal) says, as for decide.c's, so
 * that an application tells the guard's EPERM from a driver's.  (Both
 * submit structs begin with the schedule handle.) */
static void slot_refused(const struct io_uring_sqe *sqe, const char *why)
{
	if (sqe->cmd_op != ARENA_URING_CMD_SUBMIT &&
	    sqe->cmd_op != ARENA_URING_CMD_SUBMIT_SEALED)
		return;
	struct ag_submit sub = { .fd = sqe->fd, .path = AG_PATH_URING };
	memcpy(&sub.schedule, sqe->cmd, sizeof(sub.schedule));
	ag_api_note_refusal(&sub, NULL, NULL, why, 1);
}

/* A URING_CMD checked, and handled if it is the device's.  Returns
 * whether it is an append the mirror took in good health (handle_cmd):
 * one that does not make the rest of its link chain uncertain. */
static int check_cmd(struct walk *w, struct io_uring_sqe *sqe)
{
	const struct ag_request *req = ag_request_by_uring_op(sqe->cmd_op);
	if (!req)
		return 0;
	struct ag_file *f;
	int err = target(w, sqe, &f);
	if (err)
		fail_cmd(w, sqe, err == -ENOMEM ? ag_no_memory("a URING_CMD")
						: err);
	if (!f)
		return 0;
	int rc, mirrored = 0;
	if (f == AG_SLOT_UNCERTAIN &&
	    ag_slot_pending(w->r, (unsigned int)sqe->fd)) {
		ag_report_once("registration under way", "a URING_CMD on "
			       "registered file slot %d of ring fd %d while "
			       "another thread's registration of the ring's "
			       "files may be changing it: the guard cannot know "
			       "which file the kernel will use; %s", sqe->fd,
			       w->ring->ring_fd, ag_cfg.mode == AG_ENFORCE
					? "blocked" : "not checked");
		if (ag_cfg.mode == AG_ENFORCE) {
			slot_refused(sqe, "a URING_CMD on a registered file "
				     "slot while another thread's "
				     "registration of the ring's files may "
				     "be changing it");
			fail_cmd(w, sqe, -EPERM);
		}
		return 0;
	}
	if (f == AG_SLOT_UNCERTAIN) {
		ag_report_once("uncertain slot", "a URING_CMD on registered "
			       "file slot %d of ring fd %d: an earlier SQE may "
			       "have put the device there, or it was registered "
			       "in a way the guard could not follow (no memory, "
			       "a registered ring index, two registrations of "
			       "its files at once), and the guard cannot "
			       "know; %s", sqe->fd, w->ring->ring_fd,
			       ag_cfg.mode == AG_ENFORCE ? "blocked"
							 : "not checked");
		if (ag_cfg.mode == AG_ENFORCE) {
			slot_refused(sqe, "a URING_CMD on a registered file "
				     "slot that may be the device: the guard "
				     "cannot know which file it holds");
			fail_cmd(w, sqe, -EPERM);
		}
		return 0;
	}
	if (!(w->ring->flags & IORING_SETUP_SQE128))
		rc = 0;    /* no payload: the driver refuses it unread */
	else if (w->chain_blocked)
		rc = -ECANCELED;   /* what the kernel will say anyway */
	else if (sqe->__pad1 || sqe->uring_cmd_flags ||
		 !arena_uring_cmd_tail_zero(sqe->cmd, req->uring_size))
		rc = -EINVAL;      /* uapi.h: nonzero padding (the contract's rule) */
	else
		rc = handle_cmd(w, f, sqe, req, &mirrored);
	ag_file_unref(f);
	if (rc < 0)
		fail_cmd(w, sqe, rc);
	return mirrored;
}

/*
 * An IORING_OP_CLOSE of a plain fd (file_index 0; a direct close is
 * slot_change.c's): the close completes after the submit, at a time the
 * guard does not see, so the fd table no longer trusts what it held for
 * the number, which a later open may give to another open file of the
 * device (whose requests must not be judged by the closed one's
 * mirror): a device fd becomes volatile (each request proves its open
 * file again, by kcmp against a copy the guard keeps), any other is
 * forgotten (ag_fd_volatile; docs/guard.md, "Recognising the device").
 * A volatile fd is settled again when the walk is released, if the
 * close completed during the submit (ag_hold_closed): the guard's copy
 * then does not keep the closed file open.
 */
static void fd_closed_by_sqe(struct walk *w, const struct io_uring_sqe *sqe)
{
	if (sqe->file_index == 0 && sqe->fd >= 0 && ag_fd_volatile(sqe->fd))
		(void)ag_hold_closed(&w->held, sqe->fd);
}

static void check_sqe(struct walk *w, struct io_uring_sqe *sqe)
{
	int linked = sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK);
	int mirrored = 0;
	if (sqe->opcode == IORING_OP_URING_CMD) {
		mirrored = check_cmd(w, sqe);
	} else {
		if (sqe->opcode == IORING_OP_CLOSE)
			fd_closed_by_sqe(w, sqe);
		if (w->r)
			ag_note_slot_change(w->r, sqe, &w->held);
	}
	if ((sqe->flags & IOSQE_IO_LINK) && !mirrored)
		w->chain_may_fail = 1;
	if (!linked)
		w->chain_blocked = w->chain_may_fail = 0;
	w->in_chain = linked != 0;
}

/* ---- walking ---- */

/* SQ positions from .. to, at most one ring's worth (the kernel never
 * takes more from one tail). */
static void check_range(struct walk *w, unsigned int from, unsigned int to)
{
	unsigned int n = to - from;
	if (n == 0)
		return;
	unsigned int entries = *w->ring->sq.kring_entries;
	if (n > entries)
		n = entries;
	for (unsigned int i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = preload_sqe_at(w->ring, from + i);
		if (sqe)
			check_sqe(w, sqe);
	}
}

/*
 * SQEs in the kernel's ring that did not pass here (the application
 * wrote the SQ ring itself): those the kernel has not taken yet are
 * checked, the others counted and reported.
 */
static void check_unseen_locked(struct walk *w)
{
	struct io_uring *ring = w->ring;
	unsigned int ktail = io_uring_smp_load_acquire(ring->sq.ktail);
	unsigned int khead = io_uring_smp_load_acquire(ring->sq.khead);
	unsigned int tail;
	if (!ag_shared_tail(w->r, &tail, memory_order_relaxed) ||
	    (int)(ktail - tail) < 0) {
		/* First sight, or a tail ahead of the kernel's, which
		 * cannot be this ring's (a state left by a ring the guard
		 * did not see go): what the kernel has not taken yet is
		 * still to be checked, even if it was published by hand
		 * before (fuzz_guard). */
		tail = khead;
		ag_shared_tail_set(w->r, tail, memory_order_relaxed);
	}
	if (ktail == tail)
		return;
	unsigned int from = tail;
	if ((int)(khead - from) > 0) {
		atomic_fetch_add(&ag_stats.unchecked_sqes, khead - from);
		ag_report_once("unseen sqes", "ring fd %d: %u SQEs reached the "
			       "kernel without passing liburing's submit "
			       "functions (a hand-written SQ ring, raw "
			       "io_uring_enter, or a liburing linked statically); "
			       "the guard did not check them",
			       ring->ring_fd, khead - from);
		from = khead;
	}
	check_range(w, from, ktail);
	ag_shared_tail_set(w->r, ktail, memory_order_release);
}

/*
 * No SQE unseen (the tail checked up to is the kernel's: every submit by
 * liburing's functions) is decided without walk_lock: the tail is stored
 * (release) only after the SQEs before it were checked, so a thread that
 * reads it equal to the kernel's (acquire) enters after those checks, as
 * it would have after waiting for the lock; anything else takes the lock.
 * The lock cost a cached io_uring submit 71 of 8289 instructions
 * (docs/performance.md, "Cached submit").
 */
static void check_unseen(struct walk *w)
{
	unsigned int tail;
	if (ag_shared_tail(w->r, &tail, memory_order_acquire) &&
	    tail == io_uring_smp_load_acquire(w->ring->sq.ktail))
		return;
	pthread_mutex_lock(&w->r->walk_lock);
	check_unseen_locked(w);
	pthread_mutex_unlock(&w->r->walk_lock);
}

int ag_uring_pending_cmd(struct io_uring *ring)
{
	unsigned int from = io_uring_smp_load_acquire(ring->sq.khead);
	unsigned int n = ring->sq.sqe_tail - from;
	unsigned int entries = *ring->sq.kring_entries;
	for (unsigned int i = 0; i < n && i < entries; i++) {
		struct io_uring_sqe *sqe = preload_sqe_at(ring, from + i);
		if (sqe && sqe->opcode == IORING_OP_URING_CMD)
			return 1;
	}
	return 0;
}

struct ag_held *ag_uring_check(struct io_uring *ring)
{
	struct walk w = { ring, ag_ring_enter(ring), NULL, 0, 0, 0 };
	if (w.r)
		check_unseen(&w);
	/* liburing's pending SQEs, less any the application has already
	 * handed to the kernel itself (by moving the tail): those were
	 * checked, or counted, above. */
	struct io_uring_sq *sq = &ring->sq;
	unsigned int from = sq->sqe_head;
	unsigned int ktail = io_uring_smp_load_acquire(sq->ktail);
	if ((int)(ktail - from) > 0 && (int)(sq->sqe_tail - ktail) >= 0)
		from = ktail;
	check_range(&w, from, sq->sqe_tail);
	return w.held;
}

struct ag_held *ag_uring_enter_check(int ring_fd, unsigned int to_submit,
				     int registered)
{
	if (!to_submit)
		return NULL;
	struct io_uring *ring;
	struct ring_state *r = ag_ring_entered(ring_fd, registered, &ring);
	if (!ring && registered) {
		ag_report_once("unknown ring enter", "io_uring_enter() on "
			       "registered ring index %d, which liburing's "
			       "io_uring_register_ring_fd did not register in "
			       "this thread: the guard cannot name the ring, "
			       "and its SQEs are not checked", ring_fd);
		return NULL;
	}
	if (!ring) {
		ag_report_once("unknown ring enter", "io_uring_enter() on ring "
			       "fd %d, which never passed liburing's submit "
			       "functions: its SQEs are not checked", ring_fd);
		return NULL;
	}
	struct walk w = { ring, r, NULL, 0, 0, 0 };
	check_unseen(&w);
	return w.held;
}
