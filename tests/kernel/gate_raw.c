/* SPDX-License-Identifier: MIT */
/*
 * gate-raw: the guard as a gate on arena.ko, on the paths where requests
 * leave libc's interposable functions (issue 29, the raw paths).  Run in
 * the kernel stage (tests/kernel/tests.list) under
 * LD_PRELOAD=libarenaguard.so, once with the module's require_seal=0 and
 * once with =1 (read from /sys/module/arena/parameters/require_seal).
 *
 * Each subcommand attempts the failing schedule of tests/guard/progs.h
 * (bad_d, verdict 8: out[0, 16) = 2.0 when it runs) and the certified
 * one (out = 1.0) through its path, and prints one line per attempt,
 *
 *   PATH: blocked by the guard | refused by the driver (ERRNO)
 *       | ran (certified) | ran UNCERTIFIED (documented limit: WHY)
 *
 * judged on the device: a refusal leaves the window untouched, a run is
 * the submit's seqno waited for and the output buffer read back.  The
 * line is checked against the outcome docs/guard.md ("The guard as a
 * gate") gives the path in that phase ("ok:"/"FAIL:" after it, exit 1 on
 * any FAIL).  What must hold: with the guard loaded and require_seal=1,
 * no failing schedule runs unless the process computed the seal itself.
 *
 *   raw-ioctl     an fd the guard attached (libc open), requests by
 *                 syscall(SYS_ioctl) mixed with libc's
 *   raw-openat    the node opened by syscall(SYS_openat) (and by libc's
 *                 open), every request raw; then requests by libc on a
 *                 raw-opened fd (the guard recognises it by
 *                 DRM_IOCTL_VERSION)
 *   self-seal     the seal computed by the process (common/seal.c) and
 *                 given by a raw SUBMIT_SEALED: the documented exception
 *   static-uring  URING_CMDs through liburing.a, linked into this program
 *                 (the guard interposes liburing's shared library only);
 *                 gate-raw-static, the same source linked -static (libc
 *                 too), runs it with no guard loaded at all
 *   raw-ring      URING_CMDs on a ring set up and driven by raw
 *                 io_uring_setup/io_uring_enter and mmap, as fio does
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <arenaguard/guard_api.h>

#include "cdev.h"
#include "checks.h"
#include "progs.h"

/* The phase: whether the module seals every context from its open. */
static int require_seal;

static int read_require_seal(void)
{
	FILE *f = fopen("/sys/module/arena/parameters/require_seal", "r");
	int c = f ? fgetc(f) : EOF;
	if (f)
		fclose(f);
	if (c != 'Y' && c != 'N') {
		printf("FAIL: cannot read arena's require_seal (is arena.ko "
		       "loaded?)\n");
		exit(1);
	}
	return c == 'Y';
}

/* The guard's arenaguard_last_refusal, NULL when no guard is loaded. */
static arenaguard_last_refusal_fn *last_refusal;

static void find_guard(void)
{
#ifndef GATE_RAW_STATIC
	last_refusal = (arenaguard_last_refusal_fn *)dlsym(
		RTLD_DEFAULT, ARENAGUARD_LAST_REFUSAL);
#endif
}

/* Whether the guard refused something in this thread since the last
 * call (and forgets it). */
static int guard_refused(void)
{
	char buf[64];
	return last_refusal && last_refusal(buf, sizeof(buf), 1) > 0;
}

/* The one path where a failing schedule runs on a driver requiring seals
 * with the guard loaded: the documented exception. */
static const char self_sealed[] =
	"the process computed the seal itself and left the guard out";

/*
 * The outcomes a row may expect, by phase: "blocked", "refused ERRNO"
 * (ENOKEY, EKEYREJECTED), "ran" (certified: the guard saw the submit),
 * "uncertified" (ran without the guard's check, a documented limit).
 */
struct expect {
	const char *seal0, *seal1;
};

/*
 * Judges one attempt: rc and seqno are its submit's, on d (whose buffer
 * was zeroed before it, read back here with d's own kind of request);
 * good says which schedule it was; limit is the documented limit that
 * lets this submit run without the guard's check (NULL: none, so a run
 * is certified, or for a failing schedule a hole).  Prints the row and
 * checks it against the phase's expectation.
 */
static void judge(struct cdev *d, const char *path, int good, int rc,
		  uint64_t seqno, const char *limit, struct expect e)
{
	char outcome[256];
	const char *kind;
	int refused_by_guard = guard_refused();
	if (rc == 0)
		rc = cdev_wait(d, seqno);
	int ran_good = cdev_all(d, PROG_OUT, PROG_FLOATS, 1.0f);
	int ran_bad = cdev_all(d, PROG_OUT, 16, 2.0f);
	int untouched = cdev_all(d, PROG_OUT, PROG_FLOATS, 0.0f);
	if (rc == -EPERM && refused_by_guard && untouched) {
		kind = "blocked";
		snprintf(outcome, sizeof(outcome), "blocked by the guard");
	} else if (rc < 0 && rc != -EPERM && untouched) {
		kind = rc == -ENOKEY ? "refused ENOKEY"
		     : rc == -EKEYREJECTED ? "refused EKEYREJECTED"
		     : "refused";
		snprintf(outcome, sizeof(outcome),
			 "refused by the driver (%s)", strerrorname_np(-rc));
	} else if (rc == 0 && (good ? ran_good : ran_bad) && !limit) {
		kind = good ? "ran" : "ran unchecked";
		snprintf(outcome, sizeof(outcome), good ? "ran (certified)"
			 : "ran UNCERTIFIED (no documented limit)");
	} else if (rc == 0 && (good ? ran_good : ran_bad)) {
		kind = "uncertified";
		snprintf(outcome, sizeof(outcome),
			 "ran UNCERTIFIED (documented limit: %s)", limit);
	} else {
		kind = "wrong";
		snprintf(outcome, sizeof(outcome), "neither refused cleanly nor "
			 "ran: rc %d, guard refusal %d, output good %d bad %d "
			 "untouched %d", rc, refused_by_guard, ran_good, ran_bad,
			 untouched);
	}
	const char *want = require_seal ? e.seal1 : e.seal0;
	printf("%s (%s schedule, require_seal=%d): %s\n", path,
	       good ? "certified" : "failing", require_seal, outcome);
	check(strcmp(kind, want) == 0, "%s: expected %s", path, want);
	/* What the issue asks of every path: nothing failing runs
	 * unchecked where the driver requires seals, but what the process
	 * sealed itself. */
	if (require_seal && !good && limit != self_sealed)
		check(strcmp(kind, "uncertified") != 0, "%s: no failing "
		      "schedule ran unchecked on a driver requiring seals",
		      path);
}

/* A zeroed window, then d's schedule s submitted by its path. */
static void attempt(struct cdev *d, const char *path, uint32_t s, int good,
		    const char *limit, struct expect e)
{
	check(cdev_zero(d) == 0, "window zeroed");
	guard_refused();
	uint64_t seqno = 0;
	int rc = cdev_submit(d, s, &seqno);
	judge(d, path, good, rc, seqno, limit, e);
}

/* An empty schedule of prog by d's requests (the guard's mirror of it,
 * when it sees them, holds no reference). */
static uint32_t empty_schedule(struct cdev *d, uint32_t prog)
{
	uint32_t s = 0;
	check(cdev_schedule(d, prog, &s) == 0, "schedule create");
	return s;
}

/* Appends refs to s by d's path, checked. */
static void append(struct cdev *d, uint32_t s, const struct ac_ref *refs,
		   uint32_t n)
{
	int rc = cdev_append(d, s, refs, n);
	check(rc == 0, "append: %d", rc);
}

static const struct expect refused_nokey = { "refused ENOKEY",
					     "refused ENOKEY" };
static const struct expect refused_rejected = { "refused EKEYREJECTED",
						"refused EKEYREJECTED" };
static const struct expect blocked = { "blocked", "blocked" };
static const struct expect ran = { "ran", "ran" };
/* What the guard never saw, on a context it never sealed. */
static const struct expect unseen = { "uncertified", "refused ENOKEY" };

/* The limit of a submit the guard does not see on a context it sealed:
 * none, since the driver refuses it (ENOKEY: a plain submit on a sealed
 * context, certified or not; uapi.h "Sealed submissions"). */
#define SEALED_BY_GUARD NULL

/* ---- raw-ioctl ---- */

static void cmd_raw_ioctl(void)
{
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t prog = program(&d, PROG_GOOD);

	uint32_t s = schedule(&d, prog, prog_bad_d_refs, 4);
	d.raw = 1;
	attempt(&d, "raw-ioctl SUBMIT", s, 0, SEALED_BY_GUARD, refused_nokey);
	d.raw = 0;
	uint32_t good = schedule(&d, prog, prog_good_refs, 2);
	d.raw = 1;
	attempt(&d, "raw-ioctl SUBMIT", good, 1, SEALED_BY_GUARD,
		refused_nokey);

	/* Made by raw requests: a handle the guard does not know. */
	s = schedule(&d, prog, prog_bad_d_refs, 4);
	d.raw = 0;
	attempt(&d, "raw-ioctl CREATE+APPEND, libc SUBMIT", s, 0, NULL,
		blocked);

	/* Created where the guard sees it, filled where it does not: its
	 * mirror (empty) is certified, and its seal is not the driver's. */
	s = empty_schedule(&d, prog);
	d.raw = 1;
	append(&d, s, prog_bad_d_refs, 4);
	d.raw = 0;
	attempt(&d, "raw-ioctl APPEND, libc SUBMIT", s, 0, NULL,
		refused_rejected);

	attempt(&d, "libc ioctl (the baseline)", good, 1, NULL, ran);
	attempt(&d, "libc ioctl (the baseline)",
		schedule(&d, prog, prog_bad_d_refs, 4), 0, NULL, blocked);
	cdev_close(&d);
}

/* ---- raw-openat ---- */

/* d on the node opened by syscall(SYS_openat) (by libc's open when
 * libc_open), its requests raw or not. */
static void open_node(struct cdev *d, int libc_open, int raw)
{
	int fd = libc_open ? open(ARENA_NODE_PATH, O_RDWR | O_CLOEXEC)
			   : (int)syscall(SYS_openat, AT_FDCWD,
					  ARENA_NODE_PATH, O_RDWR | O_CLOEXEC);
	int rc = fd < 0 ? -errno : cdev_open_fd(d, fd, CP_IOCTL, raw);
	if (rc != 0) {
		printf("FAIL: open of %s: %s\n", ARENA_NODE_PATH,
		       strerror(-rc));
		exit(1);
	}
}

/* Every request of d raw: a failing and a certified schedule, which the
 * guard never hears of. */
static void raw_only(struct cdev *d, const char *path, const char *why)
{
	uint32_t prog = program(d, PROG_GOOD);
	attempt(d, path, schedule(d, prog, prog_bad_d_refs, 4), 0, why,
		unseen);
	attempt(d, path, schedule(d, prog, prog_good_refs, 2), 1, why,
		unseen);
	cdev_close(d);
}

static void cmd_raw_openat(void)
{
	/* Every request raw: the guard never hears of this open file. */
	struct cdev d;
	open_node(&d, 0, 1);
	raw_only(&d, "raw openat, raw ioctls", "the guard saw neither the "
		 "open nor a request; a process that leaves the guard out is "
		 "not checked");
	/* The same after libc's open: the guard attaches an fd at the
	 * first request it sees on it, not at its open. */
	open_node(&d, 1, 1);
	raw_only(&d, "libc open, raw ioctls", "the guard attaches a device "
		 "fd at the first request it sees, and saw none");

	/* Requests by libc on a raw-opened fd: the guard recognises the
	 * device at the first one (DRM_IOCTL_VERSION) and seals it. */
	open_node(&d, 0, 0);
	uint32_t prog = program(&d, PROG_GOOD);
	attempt(&d, "raw openat, libc ioctls",
		schedule(&d, prog, prog_bad_d_refs, 4), 0, NULL, blocked);
	attempt(&d, "raw openat, libc ioctls",
		schedule(&d, prog, prog_good_refs, 2), 1, NULL, ran);
	cdev_close(&d);
}

/* ---- self-seal ---- */

static int submit_sealed(struct cdev *d, uint32_t s, uint64_t *seqno)
{
	struct drm_arena_schedule_submit_sealed ss = {
		.schedule = s, .algorithm = ARENA_SEAL_SHA256 };
	prog_seal(PROG_GOOD, prog_bad_d_refs, 4, ss.seal);
	int rc = cdev_request(d, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED, &ss);
	*seqno = ss.seqno;
	return rc;
}

static void cmd_self_seal(void)
{
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t s = empty_schedule(&d, program(&d, PROG_GOOD));
	append(&d, s, prog_bad_d_refs, 4);
	/* By libc, where the guard sees it: the seal changes nothing. */
	static const char *const path[2] = { "self-seal libc SUBMIT_SEALED",
					     "self-seal raw SUBMIT_SEALED" };
	static const struct expect want[2] = {
		{ "blocked", "blocked" }, { "uncertified", "uncertified" } };
	for (int raw = 0; raw < 2; raw++) {
		check(cdev_zero(&d) == 0, "window zeroed");
		guard_refused();
		uint64_t seqno = 0;
		d.raw = raw;
		int rc = submit_sealed(&d, s, &seqno);
		judge(&d, path[raw], 0, rc, seqno, raw ? self_sealed : NULL,
		      want[raw]);
	}
	cdev_close(&d);
}

/* ---- static-uring ---- */

static void cmd_static_uring(void)
{
	struct cdev d;
	open_or_exit(&d, CP_URING);
	uint32_t prog = program(&d, PROG_GOOD);
	uint32_t bad = empty_schedule(&d, prog);
	append(&d, bad, prog_bad_d_refs, 4);
	uint32_t good = empty_schedule(&d, prog);
	append(&d, good, prog_good_refs, 2);
#ifdef GATE_RAW_STATIC
	const char *why = "a static program loads no guard (the launcher "
			  "refuses to run one)";
	attempt(&d, "static libc and liburing URING_CMD", bad, 0, why, unseen);
	attempt(&d, "static libc and liburing URING_CMD", good, 1, why,
		unseen);
#else
	attempt(&d, "static liburing URING_CMD", bad, 0, SEALED_BY_GUARD,
		refused_nokey);
	attempt(&d, "static liburing URING_CMD", good, 1, SEALED_BY_GUARD,
		refused_nokey);
	/* The appends the guard did not see: its mirror of the failing
	 * schedule is empty, certified, and not what the driver holds. */
	d.path = CP_IOCTL;
	attempt(&d, "static liburing APPEND, libc SUBMIT", bad, 0, NULL,
		refused_rejected);
#endif
	cdev_close(&d);
}

/* ---- raw-ring ---- */

/* A ring of io_uring_setup's, mapped and driven by hand (no liburing
 * call), with 128-byte SQEs for URING_CMD. */
struct hand_ring {
	int fd;
	void *sq, *cq, *sqes;
	size_t sq_len, cq_len, sqes_len;
	unsigned *sq_tail, *sq_mask, *sq_array;
	unsigned *cq_head, *cq_tail, *cq_mask;
	struct io_uring_cqe *cqes;
};

static void *ring_map(int fd, size_t len, off_t offset)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, fd, offset);
	if (p == MAP_FAILED) {
		printf("FAIL: mmap of the ring: %s\n", strerror(errno));
		exit(1);
	}
	return p;
}

static void hand_ring_setup(struct hand_ring *r)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQE128;
	r->fd = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (r->fd < 0) {
		printf("FAIL: io_uring_setup: %s\n", strerror(errno));
		exit(1);
	}
	r->sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	r->cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	r->sqes_len = p.sq_entries * 2 * sizeof(struct io_uring_sqe);
	r->sq = ring_map(r->fd, r->sq_len, IORING_OFF_SQ_RING);
	r->cq = ring_map(r->fd, r->cq_len, IORING_OFF_CQ_RING);
	r->sqes = ring_map(r->fd, r->sqes_len, IORING_OFF_SQES);
	r->sq_tail = (unsigned *)((char *)r->sq + p.sq_off.tail);
	r->sq_mask = (unsigned *)((char *)r->sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)((char *)r->sq + p.sq_off.array);
	r->cq_head = (unsigned *)((char *)r->cq + p.cq_off.head);
	r->cq_tail = (unsigned *)((char *)r->cq + p.cq_off.tail);
	r->cq_mask = (unsigned *)((char *)r->cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)((char *)r->cq + p.cq_off.cqes);
}

static void hand_ring_close(struct hand_ring *r)
{
	munmap(r->sq, r->sq_len);
	munmap(r->cq, r->cq_len);
	munmap(r->sqes, r->sqes_len);
	close(r->fd);
}

/* One URING_CMD on fd through r, entered and reaped by hand: the CQE's
 * res, or -errno of io_uring_enter. */
static int hand_ring_cmd(struct hand_ring *r, int fd, uint32_t op,
			 const void *arg, size_t size)
{
	unsigned tail = *r->sq_tail, index = tail & *r->sq_mask;
	struct io_uring_sqe *sqe =
		(struct io_uring_sqe *)r->sqes + 2 * (size_t)index;
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = op;
	sqe->user_data = 0x7a11;
	memcpy((uint8_t *)sqe + offsetof(struct io_uring_sqe, cmd), arg, size);
	r->sq_array[index] = index;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	long n = syscall(__NR_io_uring_enter, r->fd, 1, 1,
			 IORING_ENTER_GETEVENTS, NULL, 0);
	if (n < 0)
		return -errno;
	unsigned head = __atomic_load_n(r->cq_head, __ATOMIC_ACQUIRE);
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return -EIO;
	struct io_uring_cqe *cqe = &r->cqes[head & *r->cq_mask];
	int res = cqe->user_data == 0x7a11 ? cqe->res : -EPROTO;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

/* s submitted on the hand-written ring, judged. */
static void ring_attempt(struct cdev *d, struct hand_ring *r,
			 const char *path, uint32_t s, int good,
			 struct expect e)
{
	check(cdev_zero(d) == 0, "window zeroed");
	guard_refused();
	uint64_t seqno = 0;
	struct arena_uring_submit sub = { .schedule = s,
					  .seqno = (uintptr_t)&seqno };
	int rc = hand_ring_cmd(r, d->fd, ARENA_URING_CMD_SUBMIT, &sub,
			       sizeof(sub));
	judge(d, path, good, rc, seqno, SEALED_BY_GUARD, e);
}

static void ring_append(struct cdev *d, struct hand_ring *r, uint32_t s,
			const struct ac_ref *refs, uint32_t n)
{
	struct drm_arena_schedule_append a = { .schedule = s, .count = n,
					       .refs = (uintptr_t)refs };
	int rc = hand_ring_cmd(r, d->fd, ARENA_URING_CMD_APPEND, &a,
			       sizeof(a));
	check(rc == 0, "hand-written ring APPEND: %d", rc);
}

static void cmd_raw_ring(void)
{
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	struct hand_ring r;
	hand_ring_setup(&r);
	uint32_t prog = program(&d, PROG_GOOD);
	uint32_t bad = empty_schedule(&d, prog);
	ring_append(&d, &r, bad, prog_bad_d_refs, 4);
	uint32_t good = empty_schedule(&d, prog);
	ring_append(&d, &r, good, prog_good_refs, 2);
	ring_attempt(&d, &r, "hand-written ring URING_CMD", bad, 0,
		     refused_nokey);
	ring_attempt(&d, &r, "hand-written ring URING_CMD", good, 1,
		     refused_nokey);
	attempt(&d, "hand-written ring APPEND, libc SUBMIT", bad, 0, NULL,
		refused_rejected);
	hand_ring_close(&r);
	cdev_close(&d);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *cmd = argc == 2 ? argv[1] : "";
	void (*run)(void) = !strcmp(cmd, "raw-ioctl") ? cmd_raw_ioctl
		: !strcmp(cmd, "raw-openat") ? cmd_raw_openat
		: !strcmp(cmd, "self-seal") ? cmd_self_seal
		: !strcmp(cmd, "static-uring") ? cmd_static_uring
		: !strcmp(cmd, "raw-ring") ? cmd_raw_ring : NULL;
	if (!run) {
		fprintf(stderr, "usage: gate-raw raw-ioctl|raw-openat|"
			"self-seal|static-uring|raw-ring\n");
		return 2;
	}
	require_seal = read_require_seal();
	find_guard();
#ifndef GATE_RAW_STATIC
	if (!last_refusal) {
		printf("FAIL: run gate-raw under the guard "
		       "(LD_PRELOAD=libarenaguard.so)\n");
		return 1;
	}
#endif
	run();
	return atomic_load(&failures) ? 1 : 0;
}
