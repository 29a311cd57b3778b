/* SPDX-License-Identifier: MIT */
/*
 * gate-ring: io_uring's own paths to arena.ko, run in the kernel stage's
 * VM under LD_PRELOAD=libarenaguard.so (issue 29; docs/guard.md, "The
 * guard as a gate").  One subcommand per path; each tries a certified
 * schedule (tests/guard/progs.h's good references: out = 1.0) and a
 * failing one (its bad_d references, verdict 8: out[0, 16) = 2.0)
 * through the path, reads the outcome on the device (the CQE's result,
 * the output buffer) and prints one line for each:
 *
 *   gate-ring[require_seal=N] PATH good|bad: OUTCOME
 *
 * where OUTCOME is "blocked by the guard", "refused by the driver
 * (ERRNO)", "cancelled by the kernel (ECANCELED)", "ran (certified)" or
 * "ran UNCERTIFIED".  The invariants asserted (exit 1 and a FAIL line
 * otherwise): a failing schedule never runs (the guard seals every open
 * file it attaches, so this holds with require_seal=0 too on arena.ko);
 * a refused one leaves the output untouched; a certified one runs
 * wherever the path lets the guard see its commands, and where it does
 * not (SQEs published by hand) is refused with the reason, never run
 * unsealed.  No assertion depends on whether the driver runs a
 * URING_CMD inline or from io-wq.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <liburing.h>

#include <arenaguard/guard_api.h>

#include "cdev.h"
#include "checks.h"
#include "progs.h"
#include "sqe_inject.h"

#ifndef IORING_SETUP_NO_SQARRAY
#define IORING_SETUP_NO_SQARRAY (1U << 16)   /* Linux 6.6; liburing 2.5 */
#endif

static int require_seal;

/* ---- outcomes ---- */

enum outcome {
	RAN,            /* the submit's CQE 0, the output the schedule's */
	BLOCKED,        /* -EPERM with the guard's refusal recorded */
	REFUSED,        /* another -errno (or EPERM without a record) */
	CANCELLED,      /* -ECANCELED: a link chain broken before it */
};

#define O(x) (1u << (x))

static const char *outcome_text(enum outcome o, int err, char *buf,
				size_t size, int bad)
{
	switch (o) {
	case RAN:
		return bad ? "ran UNCERTIFIED" : "ran (certified)";
	case BLOCKED:
		return "blocked by the guard";
	case CANCELLED:
		return "cancelled by the kernel (ECANCELED)";
	case REFUSED:
		break;
	}
	snprintf(buf, size, "refused by the driver (%s)",
		 strerrorname_np(err) ? strerrorname_np(err) : "?");
	return buf;
}

/* The guard's last refusal in this thread, forgotten: its length (0:
 * none), and whether it named a verdict (*verdict, if not NULL). */
static long refusal(int *verdict)
{
	arenaguard_last_refusal_fn *fn = (arenaguard_last_refusal_fn *)
		dlsym(RTLD_DEFAULT, ARENAGUARD_LAST_REFUSAL);
	char buf[512];
	long n = fn ? fn(buf, sizeof(buf), 1) : 0;
	if (verdict)
		*verdict = n > 0 && strstr(buf, ": verdict ") != NULL;
	return n;
}

static long last_refusal(void)
{
	return refusal(NULL);
}

/* What a submit whose CQE said res did, read on the device d. */
static enum outcome judge(struct cdev *d, int bad, int res)
{
	int refused_by_guard = last_refusal() > 0;
	if (res == 0) {
		int ran = bad ? cdev_all(d, PROG_OUT, 16, 2.0f)
			      : cdev_all(d, PROG_OUT, PROG_FLOATS, 1.0f);
		check(ran, "the submit succeeded and the output is the "
		      "%s schedule's", bad ? "failing" : "certified");
		return RAN;
	}
	check(cdev_all(d, PROG_OUT, PROG_FLOATS, 0.0f),
	      "refused (%d), and the output untouched", res);
	/* arena.ko never answers EPERM: it is the guard's, which must say
	 * so (arena-serve tells its refusals from a driver's that way). */
	check(res != -EPERM || refused_by_guard,
	      "an EPERM the guard refused is its last refusal");
	if (res == -EPERM)
		return BLOCKED;
	return res == -ECANCELED ? CANCELLED : REFUSED;
}

/* Prints the line and checks the outcome is one of `allowed`; a failing
 * schedule never runs, whatever `allowed` says. */
static void report(const char *path, int bad, enum outcome o, int res,
		   unsigned int allowed, const char *why)
{
	char buf[64];
	printf("gate-ring[require_seal=%d] %s %s: %s%s%s\n", require_seal,
	       path, bad ? "bad" : "good",
	       outcome_text(o, -res, buf, sizeof(buf), bad),
	       why ? " -- " : "", why ? why : "");
	fflush(stdout);
	check(!(bad && o == RAN), "%s: a failing schedule never runs", path);
	check((allowed & O(o)) != 0, "%s %s: an expected outcome", path,
	      bad ? "bad" : "good");
}

/* ---- the device side (ioctl: the guard sees all of it) ---- */

struct attempt {
	struct cdev d;          /* opened CP_IOCTL: no ring of its own */
	uint32_t schedule;      /* created, nothing appended */
	const struct ac_ref *refs;
	uint32_t n;
	int bad;
	uint64_t seqno;
};

static void attempt_open(struct attempt *a, int bad)
{
	memset(a, 0, sizeof(*a));
	open_or_exit(&a->d, CP_IOCTL);
	uint32_t prog = program(&a->d, PROG_GOOD);
	int rc = cdev_schedule(&a->d, prog, &a->schedule);
	check(rc == 0, "schedule create: %d", rc);
	check(cdev_zero(&a->d) == 0, "output zeroed");
	a->bad = bad;
	a->refs = bad ? prog_bad_d_refs : prog_good_refs;
	a->n = bad ? 4 : 2;
	last_refusal();
}

static void put_append(struct io_uring_sqe *sqe, struct attempt *a, int fd,
		       unsigned int flags, uint64_t user_data)
{
	struct drm_arena_schedule_append ap = {
		.schedule = a->schedule, .count = a->n,
		.refs = (uintptr_t)a->refs };
	cdev_prep_cmd(sqe, fd, flags, ARENA_URING_CMD_APPEND, &ap, sizeof(ap),
		      user_data);
}

static void put_submit(struct io_uring_sqe *sqe, struct attempt *a, int fd,
		       unsigned int flags, uint64_t user_data)
{
	struct arena_uring_submit s = { .schedule = a->schedule,
					.seqno = (uintptr_t)&a->seqno };
	cdev_prep_cmd(sqe, fd, flags, ARENA_URING_CMD_SUBMIT, &s, sizeof(s),
		      user_data);
}

/* ---- rings and how their SQEs reach the kernel ---- */

enum push {
	PUSH_LIBURING,  /* io_uring_submit: the guard checks first */
	PUSH_HAND,      /* the SQ tail written by hand (and, without
			 * SQPOLL, a raw io_uring_enter system call) */
	PUSH_REGRING,   /* the tail by hand, then liburing's io_uring_enter
			 * on the registered ring index */
};

static struct io_uring_sqe *get_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	if (!sqe) {
		printf("FAIL: no SQE free\n");
		exit(1);
	}
	return sqe;
}

/* Hands the SQEs queued on ring to the kernel by `how`. */
static void push(struct io_uring *ring, enum push how)
{
	if (how == PUSH_LIBURING) {
		int rc = io_uring_submit(ring);
		check(rc >= 0, "io_uring_submit: %d", rc);
		return;
	}
	unsigned int n = ring->sq.sqe_tail - ring->sq.sqe_head;
	ring->sq.sqe_head = ring->sq.sqe_tail;
	io_uring_smp_store_release(ring->sq.ktail, ring->sq.sqe_tail);
	long rc;
	if (how == PUSH_REGRING)
		rc = io_uring_enter((unsigned int)ring->enter_ring_fd, n, 0,
				    IORING_ENTER_REGISTERED_RING, NULL);
	else if (!(ring->flags & IORING_SETUP_SQPOLL))
		rc = syscall(__NR_io_uring_enter, ring->ring_fd, n, 0, 0,
			     NULL, 0);
	else if (IO_URING_READ_ONCE(*ring->sq.kflags) & IORING_SQ_NEED_WAKEUP)
		rc = syscall(__NR_io_uring_enter, ring->ring_fd, 0, 0,
			     IORING_ENTER_SQ_WAKEUP, NULL, 0);
	else
		rc = 0;          /* the SQ thread takes them: no call */
	check(rc >= 0, "the hand-written submission: %ld", rc);
}

/* Waits (30 s at most each) for n CQEs of user_data 1 to 8; res[user_data - 1] gets each
 * result.  Others (user_data 0: what IORING_MSG_SEND_FD posts to its
 * target ring) are passed over. */
static void reap(struct io_uring *ring, unsigned int n, int *res)
{
	for (unsigned int i = 0; i < n;) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = { .tv_sec = 30 };   /* bounded */
		int rc = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
		if (rc < 0) {
			printf("FAIL: io_uring_wait_cqe_timeout: %d\n", rc);
			exit(1);
		}
		if (cqe->user_data >= 1 && cqe->user_data <= 8) {
			res[cqe->user_data - 1] = cqe->res;
			i++;
		}
		io_uring_cqe_seen(ring, cqe);
	}
}

/*
 * The append and then the submit of a, each by itself (two SQEs handed
 * over at once may both go to io-wq and run in either order), on fd
 * (a slot with IOSQE_FIXED_FILE in flags) of ring, pushed by `how`:
 * the submit's result.  An append refused is said, and its submit
 * still tried.
 */
static int run_on(struct io_uring *ring, struct attempt *a, int fd,
		  unsigned int flags, enum push how)
{
	int res[2] = { 1, 1 };
	put_append(get_sqe(ring), a, fd, flags, 1);
	push(ring, how);
	reap(ring, 1, res);
	if (res[0] != 0)
		printf("  (its append: %d)\n", res[0]);
	put_submit(get_sqe(ring), a, fd, flags, 2);
	push(ring, how);
	reap(ring, 1, res);
	return res[1];
}

/* One attempt of each kind on a ring made by init(ring) and torn down
 * with io_uring_queue_exit. */
static void both(const char *path, int (*init)(struct io_uring *ring),
		 unsigned int flags, enum push how, unsigned int good_allowed,
		 const char *why)
{
	for (int bad = 0; bad <= 1; bad++) {
		struct io_uring ring;
		int rc = init(&ring);
		if (rc) {
			printf("FAIL: %s: ring set-up: %d\n", path, rc);
			exit(1);
		}
		struct attempt a;
		attempt_open(&a, bad);
		rc = run_on(&ring, &a, a.d.fd, flags, how);
		report(path, bad, judge(&a.d, bad, rc), rc,
		       bad ? O(BLOCKED) | O(REFUSED) : good_allowed,
		       bad ? NULL : why);
		io_uring_queue_exit(&ring);
		cdev_close(&a.d);
	}
}

static int ring_plain(struct io_uring *ring)
{
	return io_uring_queue_init(8, ring, IORING_SETUP_SQE128);
}

static int ring_sqpoll(struct io_uring *ring)
{
	return io_uring_queue_init(8, ring,
				   IORING_SETUP_SQE128 | IORING_SETUP_SQPOLL);
}

static int ring_registered(struct io_uring *ring)
{
	int rc = ring_plain(ring);
	if (rc == 0 && (rc = io_uring_register_ring_fd(ring)) == 1)
		rc = 0;
	return rc < 0 ? rc : rc == 0 ? 0 : -EIO;
}

/*
 * A ring set up without liburing (a raw io_uring_setup and mmap), its
 * struct io_uring filled as liburing 2.5 would (so that liburing's
 * inline SQE and CQE functions and io_uring_submit work on it), with
 * `flags`: IORING_SETUP_NO_SQARRAY leaves sq.array NULL (Debian's
 * liburing 2.3 would write its identity map over the ring's head).
 */
static int hand_ring(struct io_uring *ring, unsigned int flags)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	p.flags = flags;
	int fd = (int)syscall(__NR_io_uring_setup, 8, &p);
	if (fd < 0)
		return -errno;
	if (!(p.features & IORING_FEAT_SINGLE_MMAP)) {
		close(fd);
		return -ENOSYS;
	}
	size_t sqe_size = sizeof(struct io_uring_sqe) *
			  (flags & IORING_SETUP_SQE128 ? 2 : 1);
	size_t ring_sz = p.cq_off.cqes +
			 p.cq_entries * sizeof(struct io_uring_cqe);
	if (!(flags & IORING_SETUP_NO_SQARRAY) &&
	    p.sq_off.array + p.sq_entries * sizeof(unsigned) > ring_sz)
		ring_sz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	uint8_t *map = mmap(NULL, ring_sz, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
	void *sqes = mmap(NULL, sqe_size * p.sq_entries,
			  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
			  fd, IORING_OFF_SQES);
	if (map == MAP_FAILED || sqes == MAP_FAILED) {
		close(fd);
		return -ENOMEM;
	}
	memset(ring, 0, sizeof(*ring));
	struct io_uring_sq *sq = &ring->sq;
	sq->khead = (unsigned *)(map + p.sq_off.head);
	sq->ktail = (unsigned *)(map + p.sq_off.tail);
	sq->kring_mask = (unsigned *)(map + p.sq_off.ring_mask);
	sq->kring_entries = (unsigned *)(map + p.sq_off.ring_entries);
	sq->kflags = (unsigned *)(map + p.sq_off.flags);
	sq->kdropped = (unsigned *)(map + p.sq_off.dropped);
	if (!(flags & IORING_SETUP_NO_SQARRAY)) {
		sq->array = (unsigned *)(map + p.sq_off.array);
		for (unsigned int i = 0; i < p.sq_entries; i++)
			sq->array[i] = i;
	}
	sq->sqes = sqes;
	sq->ring_sz = ring_sz;
	sq->ring_ptr = map;
	sq->ring_mask = *sq->kring_mask;
	sq->ring_entries = *sq->kring_entries;
	struct io_uring_cq *cq = &ring->cq;
	cq->khead = (unsigned *)(map + p.cq_off.head);
	cq->ktail = (unsigned *)(map + p.cq_off.tail);
	cq->kring_mask = (unsigned *)(map + p.cq_off.ring_mask);
	cq->kring_entries = (unsigned *)(map + p.cq_off.ring_entries);
	cq->kflags = (unsigned *)(map + p.cq_off.flags);
	cq->koverflow = (unsigned *)(map + p.cq_off.overflow);
	cq->cqes = (struct io_uring_cqe *)(map + p.cq_off.cqes);
	cq->ring_sz = ring_sz;
	cq->ring_ptr = map;
	cq->ring_mask = *cq->kring_mask;
	cq->ring_entries = *cq->kring_entries;
	ring->flags = p.flags;
	ring->ring_fd = ring->enter_ring_fd = fd;
	ring->features = p.features;
	return 0;
}

static int ring_nosqarray(struct io_uring *ring)
{
	return hand_ring(ring, IORING_SETUP_SQE128 | IORING_SETUP_NO_SQARRAY);
}

/* ---- the paths ---- */

static void cmd_sqpoll(void)
{
	both("sqpoll", ring_sqpoll, 0, PUSH_LIBURING, O(RAN), NULL);
}

static void cmd_sqpoll_hand(void)
{
	both("sqpoll-hand", ring_sqpoll, 0, PUSH_HAND, O(REFUSED),
	     "documented limit: SQEs the SQ thread takes from a tail "
	     "written by hand never pass the guard, so they are unsealed");
}

/* The failing references appended by a hand-written tail the SQ thread
 * takes, the submit then through liburing: the guard certifies its
 * mirror (no references) and seals it; the driver holds other ones. */
static void cmd_sqpoll_mixed(void)
{
	struct io_uring ring;
	check(ring_sqpoll(&ring) == 0, "SQPOLL ring");
	struct attempt a;
	attempt_open(&a, 1);
	int res[2] = { 1, 1 };
	put_append(get_sqe(&ring), &a, a.d.fd, 0, 1);
	push(&ring, PUSH_HAND);
	reap(&ring, 1, res);
	check(res[0] == 0, "the unchecked append taken: %d", res[0]);
	put_submit(get_sqe(&ring), &a, a.d.fd, 0, 2);
	push(&ring, PUSH_LIBURING);
	reap(&ring, 1, res);
	report("sqpoll-mixed", 1, judge(&a.d, 1, res[1]), res[1],
	       O(BLOCKED) | O(REFUSED), NULL);
	io_uring_queue_exit(&ring);
	cdev_close(&a.d);
}

static void cmd_async(void)
{
	both("async", ring_plain, IOSQE_ASYNC, PUSH_LIBURING, O(RAN), NULL);
}

/*
 * A link chain: an SQE that fails (a NOP completing with -EIO), then the
 * append, then the submit, each linked to the next (`link`): with
 * IOSQE_IO_LINK the kernel cancels the rest; with IOSQE_IO_HARDLINK it
 * goes on.  Then the schedule submitted again, alone.
 */
static void chain(const char *path, unsigned int link, unsigned int again_good)
{
	for (int bad = 0; bad <= 1; bad++) {
		struct io_uring ring;
		check(ring_plain(&ring) == 0, "ring");
		struct attempt a;
		attempt_open(&a, bad);
		int res[4] = { 1, 1, 1, 1 };
		struct io_uring_sqe *sqe = get_sqe(&ring);
		io_uring_prep_nop(sqe);
		sqe_complete_with(sqe, -EIO);
		sqe->flags |= (uint8_t)link;
		sqe->user_data = 1;
		put_append(get_sqe(&ring), &a, a.d.fd, link, 2);
		put_submit(get_sqe(&ring), &a, a.d.fd, 0, 3);
		push(&ring, PUSH_LIBURING);
		reap(&ring, 3, res);
		check(res[0] == -EIO, "%s: the first SQE failed: %d", path,
		      res[0]);
		if (link == IOSQE_IO_LINK)
			check(res[1] == -ECANCELED,
			      "%s: the append cancelled: %d", path, res[1]);
		enum outcome o = judge(&a.d, bad, res[2]);
		report(path, bad, o, res[2],
		       link == IOSQE_IO_LINK ? O(CANCELLED) | O(BLOCKED)
		       : bad ? O(BLOCKED) : O(RAN), NULL);
		/* Again, alone. */
		check(cdev_zero(&a.d) == 0, "output zeroed");
		put_submit(get_sqe(&ring), &a, a.d.fd, 0, 4);
		push(&ring, PUSH_LIBURING);
		reap(&ring, 1, res);
		char again[64];
		snprintf(again, sizeof(again), "%s-again", path);
		report(again, bad, judge(&a.d, bad, res[3]), res[3],
		       bad ? O(BLOCKED) : again_good,
		       link == IOSQE_IO_LINK && !bad
			       ? "documented: an append linked after an SQE "
				 "that may fail leaves its schedule blocked "
				 "(the guard cannot know it was taken)"
			       : NULL);
		io_uring_queue_exit(&ring);
		cdev_close(&a.d);
	}
}

static void cmd_link(void)
{
	chain("link-cancel", IOSQE_IO_LINK, O(BLOCKED));
	chain("hardlink", IOSQE_IO_HARDLINK, O(RAN));
}

/*
 * A device command linked after another is issued when that one
 * completes.  Linux 6.12's io_uring copies a URING_CMD's SQE at prep
 * only for IOSQE_ASYNC (and drains, which imply it): a linked one keeps
 * pointing at its SQ slot, which the application may fill again as soon
 * as the submit returns, and the driver reads the slot when the command
 * is issued.  On a ring with IORING_SETUP_DEFER_TASKRUN the linked
 * submit is issued at the next wait for events: here after both slots
 * of a two-entry ring were reused for NOPs.  The certified submit must
 * still run (not read a NOP's bytes as its argument), the failing one
 * never.
 */
static void cmd_link_reuse(void)
{
	for (int bad = 0; bad <= 1; bad++) {
		struct io_uring ring;
		int rc = io_uring_queue_init(2, &ring,
					     IORING_SETUP_SQE128 |
					     IORING_SETUP_SINGLE_ISSUER |
					     IORING_SETUP_DEFER_TASKRUN);
		check(rc == 0, "link-reuse: ring: %d", rc);
		if (rc)
			return;
		struct attempt a;
		attempt_open(&a, bad);
		int res[4] = { 1, 1, 1, 1 };
		put_append(get_sqe(&ring), &a, a.d.fd, IOSQE_IO_LINK, 1);
		put_submit(get_sqe(&ring), &a, a.d.fd, 0, 2);
		push(&ring, PUSH_LIBURING);
		/* Both slots are free again: an application reuses them. */
		for (uint64_t i = 0; i < 2; i++) {
			struct io_uring_sqe *sqe = get_sqe(&ring);
			io_uring_prep_nop(sqe);
			sqe->user_data = 3 + i;
		}
		push(&ring, PUSH_LIBURING);
		reap(&ring, 4, res);
		if (res[0] != 0)
			printf("  (its append: %d)\n", res[0]);
		report("link-reuse", bad, judge(&a.d, bad, res[1]), res[1],
		       bad ? O(BLOCKED) | O(REFUSED) : O(RAN), NULL);
		io_uring_queue_exit(&ring);
		cdev_close(&a.d);
	}
}

/*
 * SQEs published by hand and entered by two threads at once: the kernel
 * takes each once, whichever thread's io_uring_enter (the guard
 * interposes liburing's) comes first; the other finds nothing.  Each
 * round appends the certified references to a fresh schedule this way,
 * then submits it by ioctl: every submit must run (an append the guard
 * mirrored twice would leave its mirror longer than the driver's
 * schedule: EKEYREJECTED).
 */
struct enter_race {
	struct io_uring *ring;
	pthread_barrier_t bar;
	atomic_int stop;
};

static void *enter_racer(void *arg)
{
	struct enter_race *e = arg;
	for (;;) {
		pthread_barrier_wait(&e->bar);
		if (atomic_load(&e->stop))
			return NULL;
		io_uring_enter((unsigned int)e->ring->ring_fd, 1, 0, 0, NULL);
		pthread_barrier_wait(&e->bar);
	}
}

static void cmd_enter_race(void)
{
	struct io_uring ring;
	check(ring_plain(&ring) == 0, "enter-race: ring");
	struct attempt a;
	attempt_open(&a, 0);
	uint32_t prog = program(&a.d, PROG_GOOD);
	struct enter_race e = { .ring = &ring };
	pthread_barrier_init(&e.bar, NULL, 3);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, enter_racer, &e);
	int ran = 0, refused = 0, first = 0;
	for (int round = 0; round < 200; round++) {
		int res[1] = { 1 };
		check(cdev_schedule(&a.d, prog, &a.schedule) == 0, "schedule");
		put_append(get_sqe(&ring), &a, a.d.fd, 0, 1);
		ring.sq.sqe_head = ring.sq.sqe_tail;
		io_uring_smp_store_release(ring.sq.ktail, ring.sq.sqe_tail);
		pthread_barrier_wait(&e.bar);   /* both enter */
		pthread_barrier_wait(&e.bar);   /* both returned */
		reap(&ring, 1, res);
		if (cdev_zero(&a.d) != 0)
			check(0, "output zeroed");
		int rc = res[0] ? res[0] : cdev_run(&a.d, a.schedule);
		if (rc == 0 && cdev_all(&a.d, PROG_OUT, PROG_FLOATS, 1.0f)) {
			ran++;
		} else {
			if (!refused++)
				first = rc;
		}
		cdev_destroy_schedule(&a.d, a.schedule);
	}
	atomic_store(&e.stop, 1);
	pthread_barrier_wait(&e.bar);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("gate-ring[require_seal=%d] enter-race good: %d of 200 ran, "
	       "%d refused (first: %d)\n", require_seal, ran, refused, first);
	check(refused == 0, "enter-race: every certified schedule ran");
	io_uring_queue_exit(&ring);
	cdev_close(&a.d);
}

/*
 * The driver against io_uring's teardown: certified submits in flight
 * on io-wq (IOSQE_ASYNC) and on an SQPOLL thread, some with a seqno
 * address the driver cannot write (unmapped, a kernel address: EFAULT),
 * the device slot registered in both rings; then both rings and the
 * device fd closed without waiting.  The kernel log must stay clean and
 * the module unload once io_uring let go of the file (tests.list's next
 * line).
 */
static void cmd_teardown(void)
{
	static const uint64_t bad_seqno[] = { 0, 8, 0xffff880000000000ull,
					       0xfffffffffffff000ull };
	for (int round = 0; round < 20; round++) {
		struct io_uring rings[2];
		check(ring_plain(&rings[0]) == 0, "teardown: ring");
		check(ring_sqpoll(&rings[1]) == 0, "teardown: sqpoll ring");
		struct attempt a;
		attempt_open(&a, 0);
		check(cdev_append(&a.d, a.schedule, a.refs, a.n) == 0,
		      "teardown: append");
		for (int r = 0; r < 2; r++) {
			check(io_uring_register_files(&rings[r], &a.d.fd, 1) ==
				      0, "teardown: register");
			for (unsigned int i = 0; i < 6; i++) {
				struct io_uring_sqe *sqe =
					io_uring_get_sqe(&rings[r]);
				if (!sqe)
					break;
				int fixed = i & 1;
				put_submit(sqe, &a, fixed ? 0 : a.d.fd,
					   (fixed ? IOSQE_FIXED_FILE : 0) |
					   (r ? 0 : IOSQE_ASYNC), 1 + i);
				if (i >= 2) {
					struct arena_uring_submit sub;
					memcpy(&sub, sqe->cmd, sizeof(sub));
					sub.seqno = bad_seqno[i - 2];
					memcpy(sqe->cmd, &sub, sizeof(sub));
				}
			}
			check(io_uring_submit(&rings[r]) >= 0,
			      "teardown: submit");
		}
		if (round & 1) {
			cdev_close(&a.d);
			io_uring_queue_exit(&rings[1]);
			io_uring_queue_exit(&rings[0]);
		} else {
			io_uring_queue_exit(&rings[0]);
			io_uring_queue_exit(&rings[1]);
			cdev_close(&a.d);
		}
	}
	printf("gate-ring[require_seal=%d] teardown: 20 rounds closed with "
	       "submits in flight\n", require_seal);
}

/*
 * IORING_OP_MSG_RING (IORING_MSG_SEND_FD): slot 0 of ring `from` (the
 * device) installed in slot 2 of the ring `to_fd`.
 */
static void send_slot(struct io_uring *from, int to_fd)
{
	struct io_uring_sqe *sqe = get_sqe(from);
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_MSG_RING;
	sqe->fd = to_fd;
	sqe->addr = IORING_MSG_SEND_FD;
	sqe->addr3 = 0;
	sqe->file_index = 3;       /* slot 2: the index is 1-based */
	sqe->user_data = 1;
	int res[1] = { 1 };
	push(from, PUSH_LIBURING);
	reap(from, 1, res);
	check(res[0] == 0, "IORING_MSG_SEND_FD: %d", res[0]);
}

/* A ring with the device fd of `a` in slot 0. */
static void device_ring(struct io_uring *ring, struct attempt *a)
{
	check(ring_plain(ring) == 0, "ring");
	check(io_uring_register_files(ring, &a->d.fd, 1) == 0,
	      "device registered in slot 0");
}

/* To a ring liburing set up (the guard watches it): the target slot is
 * uncertain, and commands on it blocked. */
static void cmd_msg_ring(void)
{
	for (int bad = 0; bad <= 1; bad++) {
		struct attempt a;
		attempt_open(&a, bad);
		struct io_uring from, to;
		device_ring(&from, &a);
		check(ring_plain(&to) == 0, "target ring");
		check(io_uring_register_files_sparse(&to, 4) == 0,
		      "target's sparse table");
		send_slot(&from, to.ring_fd);
		int rc = run_on(&to, &a, 2, IOSQE_FIXED_FILE, PUSH_LIBURING);
		report("msg-ring", bad, judge(&a.d, bad, rc), rc, O(BLOCKED),
		       bad ? NULL : "documented: a slot an SQE may have made "
				    "the device is uncertain, its commands "
				    "blocked");
		io_uring_queue_exit(&from);
		io_uring_queue_exit(&to);
		cdev_close(&a.d);
	}
}

/* To a ring set up and given its table without liburing (the guard
 * cannot name it): every slot of every ring is uncertain, the sender's
 * own device slot too; the target's commands, submitted through
 * liburing, are then the guard's first sight of that ring. */
static void cmd_msg_ring_unwatched(void)
{
	for (int bad = 0; bad <= 1; bad++) {
		struct attempt a;
		attempt_open(&a, bad);
		struct io_uring from, to;
		device_ring(&from, &a);
		check(hand_ring(&to, IORING_SETUP_SQE128) == 0, "raw ring");
		int sparse[4] = { -1, -1, -1, -1 };
		long rc = syscall(__NR_io_uring_register, to.ring_fd,
				  IORING_REGISTER_FILES, sparse, 4);
		check(rc == 0, "raw sparse table: %ld", rc);
		send_slot(&from, to.ring_fd);
		int res = run_on(&to, &a, 2, IOSQE_FIXED_FILE, PUSH_LIBURING);
		report("msg-ring-unwatched", bad, judge(&a.d, bad, res), res,
		       O(BLOCKED), bad ? NULL
		       : "documented: a ring first met at a submit may have "
			 "had files registered unseen, its slots are "
			 "uncertain");
		/* The sender's own slot 0, on a fresh schedule. */
		struct attempt b;
		attempt_open(&b, bad);
		check(io_uring_register_files_update(&from, 0, &b.d.fd, 1) == 1,
		      "sender's slot 0 set again");
		res = run_on(&from, &b, 0, IOSQE_FIXED_FILE, PUSH_LIBURING);
		report("msg-ring-unwatched-sender", bad, judge(&b.d, bad, res),
		       res, O(BLOCKED), bad ? NULL
		       : "documented: a slot sent to a ring the guard cannot "
			 "name leaves every slot of every ring uncertain "
			 "until a whole registration");
		io_uring_queue_exit(&from);
		io_uring_queue_exit(&to);
		cdev_close(&a.d);
		cdev_close(&b.d);
	}
}

static void cmd_regring(void)
{
	both("regring", ring_registered, 0, PUSH_LIBURING, O(RAN), NULL);
	both("regring-enter", ring_registered, 0, PUSH_REGRING, O(RAN), NULL);
}

static void cmd_nosqarray(void)
{
	both("nosqarray", ring_nosqarray, 0, PUSH_LIBURING, O(RAN), NULL);
}

/* ---- fixed files changed while commands are in flight ---- */

struct race {
	struct io_uring ring;
	int fds[3];             /* the failing schedule's device, the
				 * certified one's, /dev/null */
	atomic_int stop;
	atomic_uint flips;      /* updates made */
};

static void *flip_slot(void *arg)
{
	struct race *r = arg;
	for (unsigned int i = 0; !atomic_load(&r->stop); i++) {
		usleep(1000);   /* windows between registrations */
		int fd = r->fds[i % 3];
		int rc = io_uring_register_files_update(&r->ring, 0, &fd, 1);
		atomic_fetch_add(&r->flips, 1);
		if (rc != 1) {
			printf("FAIL: files update: %d\n", rc);
			atomic_fetch_add(&failures, 1);
			break;
		}
	}
	return NULL;
}

/* Whether anything ran on the failing schedule's file (its output is
 * no longer the zeroes it was given). */
static int bad_ran_here(struct attempt *bad)
{
	return !cdev_all(&bad->d, PROG_OUT, PROG_FLOATS, 0.0f);
}

/* A check said only when it fails (one a submit, 150 submits). */
#define quiet_check(ok, ...) \
	do { \
		if (!(ok)) \
			check(0, __VA_ARGS__); \
	} while (0)

/* What the submits on slot 0 came to. */
struct slot_counts {
	unsigned int ran;       /* numbered by the driver: the certified
				 * schedule ran on its file */
	unsigned int blocked;   /* by the guard, by the failing verdict */
	unsigned int uncertain; /* by the guard, the slot uncertain */
	unsigned int refused;   /* by the driver (EKEYREJECTED, ENOKEY) */
	unsigned int notdev;    /* answered by /dev/null, unnumbered */
};

/*
 * One submit of handle h on slot 0 of r's ring, told apart by what the
 * driver itself says, not by the CQE's result alone: arena.ko stores a
 * submission's number at the SQE's seqno pointer only when it runs it,
 * every refusal coming before (driver/arena_schedule.c), while Linux
 * 6.12's /dev/null answers every URING_CMD with 0 (drivers/char/mem.c,
 * uring_cmd_null; a kernel without it says EOPNOTSUPP).  A CQE of 0
 * unnumbered is /dev/null's, and ran nothing.  Each submit's effect is
 * checked on both devices at once: a run left the certified schedule's
 * output on the good file (zeroed again after, so that the next run is
 * judged by itself) and the bad file untouched; anything else left both
 * untouched.  Counted in c; i names the submit in a FAIL line.
 */
static void slot_submit(struct race *r, struct attempt *good,
			struct attempt *bad, struct slot_counts *c,
			unsigned int i)
{
	static const float zeros[PROG_FLOATS];
	int res[2] = { 1, 1 };
	good->seqno = 0;
	put_submit(get_sqe(&r->ring), good, 0, IOSQE_FIXED_FILE, 2);
	push(&r->ring, PUSH_LIBURING);
	reap(&r->ring, 1, res);
	unsigned long long seqno = good->seqno;
	int verdict = 0;
	long refused_here = res[1] == -EPERM ? refusal(&verdict) : 0;
	if (getenv("GATE_RING_TRACE"))
		printf("  files-update %u: %d, seqno %llu, after %u updates\n",
		       i, res[1], seqno, atomic_load(&r->flips));
	quiet_check(!bad_ran_here(bad), "files-update %u: the failing "
		    "schedule never ran", i);
	if (seqno) {
		quiet_check(res[1] == 0, "files-update %u: numbered (%llu) "
			    "and refused (%d)", i, seqno, res[1]);
		quiet_check(cdev_all(&good->d, PROG_OUT, PROG_FLOATS, 1.0f) &&
			    cdev_wait(&good->d, seqno) == 0,
			    "files-update %u: what ran (seqno %llu) is the "
			    "certified schedule, complete", i, seqno);
		quiet_check(cdev_write(&good->d, PROG_OUT, zeros,
				       sizeof(zeros)) == 0, "output zeroed");
		c->ran++;
		return;
	}
	quiet_check(cdev_all(&good->d, PROG_OUT, PROG_FLOATS, 0.0f),
		    "files-update %u: unnumbered (%d), and the output "
		    "untouched", i, res[1]);
	if (res[1] == 0 || res[1] == -EOPNOTSUPP)
		c->notdev++;
	else if (res[1] == -EPERM && refused_here > 0)
		*(verdict ? &c->blocked : &c->uncertain) += 1;
	else if (res[1] == -EKEYREJECTED || res[1] == -ENOKEY)
		c->refused++;
	else
		check(0, "files-update %u: unexpected %d", i, res[1]);
}

/* Slot 0 of r's ring set to fd, nobody else touching it. */
static void slot_settle(struct race *r, int fd)
{
	check(io_uring_register_files_update(&r->ring, 0, &fd, 1) == 1,
	      "slot 0 set to fd %d", fd);
}

/*
 * Slot 0 swapped between two device files and /dev/null by another
 * thread while this one submits schedule handle h on slot 0: h is the
 * failing schedule on the first file and the certified one on the
 * second.  Whichever file the kernel finds in the slot, the failing
 * schedule never runs, and every submit the driver ran ran the certified
 * one.  First each file alone in the slot, one submit each, its outcome
 * exact: /dev/null's 0 (what a loaded run, whose other thread made a few
 * updates only, left in the slot for most of its submits) ran nothing.
 */
static void cmd_files_update(void)
{
	struct attempt bad, good;
	attempt_open(&bad, 1);
	attempt_open(&good, 0);
	check(bad.schedule == good.schedule, "one handle on both files: %u",
	      bad.schedule);
	check(cdev_append(&bad.d, bad.schedule, bad.refs, bad.n) == 0 &&
	      cdev_append(&good.d, good.schedule, good.refs, good.n) == 0,
	      "appended by ioctl");
	struct race r = { .fds = { bad.d.fd, good.d.fd,
				   open("/dev/null", O_RDWR | O_CLOEXEC) } };
	check(ring_plain(&r.ring) == 0 &&
	      io_uring_register_files(&r.ring, r.fds, 1) == 0, "ring");

	struct slot_counts settled = { 0 };
	slot_settle(&r, r.fds[2]);
	slot_submit(&r, &good, &bad, &settled, 0);
	check(settled.notdev == 1, "files-update: /dev/null in the slot "
	      "answers unnumbered and runs nothing");
	slot_settle(&r, r.fds[1]);
	slot_submit(&r, &good, &bad, &settled, 0);
	check(settled.ran == 1, "files-update: the certified file in the "
	      "slot runs");
	slot_settle(&r, r.fds[0]);
	slot_submit(&r, &good, &bad, &settled, 0);
	check(settled.blocked == 1, "files-update: the failing file in the "
	      "slot is blocked by its verdict");
	printf("gate-ring[require_seal=%d] files-update settled: /dev/null "
	       "answered unnumbered (ran nothing), good ran (certified), bad "
	       "blocked by the guard\n", require_seal);

	pthread_t t;
	pthread_create(&t, NULL, flip_slot, &r);
	struct slot_counts c = { 0 };
	for (unsigned int i = 0; i < 150; i++) {
		/* Every other submit waits (20 ms at most) for the other
		 * thread's next update: 150 submits otherwise end within
		 * its first (after its 1 ms sleep), racing none. */
		unsigned int seen = atomic_load(&r.flips);
		for (int w = 0; (i & 1) && w < 200 &&
				atomic_load(&r.flips) == seen; w++)
			usleep(100);
		slot_submit(&r, &good, &bad, &c, i);
	}
	atomic_store(&r.stop, 1);
	pthread_join(t, NULL);
	printf("gate-ring[require_seal=%d] files-update bad: %s (of 150 "
	       "submits, %u slot updates made meanwhile: %u blocked by the "
	       "guard by verdict, %u blocked by the guard as the slot was "
	       "uncertain, %u refused by the driver (EKEYREJECTED/ENOKEY), "
	       "%u answered by /dev/null, unnumbered)\n",
	       require_seal, bad_ran_here(&bad) ? "ran UNCERTIFIED"
						: "never ran",
	       atomic_load(&r.flips), c.blocked, c.uncertain, c.refused,
	       c.notdev);
	printf("gate-ring[require_seal=%d] files-update good: ran (certified) "
	       "%u times\n", require_seal, c.ran);
	fflush(stdout);
	check(!bad_ran_here(&bad), "files-update: the failing schedule never "
	      "ran");
	io_uring_queue_exit(&r.ring);
	close(r.fds[2]);
	cdev_close(&bad.d);
	cdev_close(&good.d);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cmds[] = {
	{ "sqpoll", cmd_sqpoll },
	{ "sqpoll-hand", cmd_sqpoll_hand },
	{ "sqpoll-mixed", cmd_sqpoll_mixed },
	{ "async", cmd_async },
	{ "link", cmd_link },
	{ "link-reuse", cmd_link_reuse },
	{ "enter-race", cmd_enter_race },
	{ "teardown", cmd_teardown },
	{ "msg-ring", cmd_msg_ring },
	{ "msg-ring-unwatched", cmd_msg_ring_unwatched },
	{ "regring", cmd_regring },
	{ "files-update", cmd_files_update },
	{ "nosqarray", cmd_nosqarray },
};

static int phase(void)
{
	char c = 'N';
	FILE *f = fopen("/sys/module/arena/parameters/require_seal", "r");
	if (f) {
		if (fread(&c, 1, 1, f) != 1)
			c = 'N';
		fclose(f);
	}
	return c == 'Y';
}

int main(int argc, char **argv)
{
	require_seal = phase();
	if (!dlsym(RTLD_DEFAULT, ARENAGUARD_LAST_REFUSAL)) {
		printf("FAIL: the guard is not loaded (LD_PRELOAD)\n");
		return 1;
	}
	int ran = 0;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (argc < 2 || strcmp(argv[1], "all") == 0 ||
		    strcmp(argv[1], cmds[i].name) == 0) {
			cmds[i].fn();
			ran = 1;
		}
	if (!ran) {
		fprintf(stderr, "usage: gate-ring [all");
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			fprintf(stderr, " | %s", cmds[i].name);
		fprintf(stderr, "]\n");
		return 2;
	}
	return atomic_load(&failures) ? 1 : 0;
}
