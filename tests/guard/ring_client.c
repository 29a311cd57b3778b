/* SPDX-License-Identifier: MIT */
/*
 * guard-ring-client: the guard's view of io_uring rings and of the fd
 * table, staged by ordinary client code on the simulated device
 * (test_ring.c runs it under the guard).  Each subcommand prints "ok:"
 * or "FAIL:" lines and exits 0 unless it could not run at all.
 *
 *   stale       a non-device char device registered, closed unseen
 *               (fclose), its number reused by the node: every path
 *               still checked
 *   probefail E a probe that fails with errno E (libprobefail.so):
 *               EINTR once, or EACCES always
 *   register    files registered by the generic io_uring_register()
 *   directopen  a direct open of a symlink to the node into a slot
 *   sqarray     the SQ index array pointed at an SQE never queued
 *   newsubmit   liburing 2.8 / 2.9 submit functions (ring_stub.c)
 *   resize      io_uring_resize_rings (ring_stub.c) keeps the slots
 *   regrace     submits on a slot while another thread re-registers
 *   ringdup     ring fd dup'ed, the original closed, set up again
 *   nofd        two threads' rings with ring_fd -1
 *   acrossfork  one ring (and its liburing state) shared across fork
 *   rawring     a ring set up without liburing, then the device used
 *   rawforkpage a ring torn down by the parent while a child of a raw
 *               fork system call still uses it; the parent's next ring
 *               (the same state, its shared page kept) and the child's
 *               submits never take each other's tail for their own
 *   rawforks    a ring set up without liburing, then 20 children forked
 *               that exit (their exit handlers run), the parent last
 *   rawchild    a raw ring said by the parent (the device opened), then
 *               a forked child that sets up a raw ring of its own
 *   rawtwo      two raw rings in one process
 *   rawmany     70 raw rings in one process (more than the guard's set)
 *   msgring     a device slot sent to another ring (IORING_MSG_SEND_FD)
 *   noprobe     /dev/null and /dev/zero registered, updated into a slot,
 *               sent a URING_CMD and an arena ioctl: none is probed
 *               (libprobefail.so's PROBEFAIL_LOG lists the probes)
 *   slowprobe   a registration whose probe takes 1.5 s
 *               (PROBEFAIL_SLEEP_MS) does not stall another thread's
 *               slot-changing SQE on the same ring
 *   rawwait     a raw io_uring_enter that submits a command on a
 *               registered slot and waits 1.5 s for completions does
 *               not hold another thread's registration of the ring's
 *               files for its wait
 *
 * A submission the guard must block is a schedule (D) fails; "blocked"
 * is a CQE (or ioctl) of -EPERM.  On the simulator a command the guard
 * does not see on these paths reaches the kernel, which answers for
 * /dev/null (not -EPERM), or the simulated device, which runs it (0).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arenaguard/guard_api.h>

#include "cdev.h"
#include "checks.h"
#include "progs.h"
#include "liburing_newer.h"


static void die(const char *what, int rc)
{
	printf("FAIL: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
	exit(1);
}

static void open_dev(struct cdev *d, enum cpath path)
{
	int rc = cdev_open(d, path);
	if (rc)
		die("cannot open the device", rc);
}

/* A schedule (D) fails: the guard must block every submit of it. */
static uint32_t bad_schedule(struct cdev *d)
{
	size_t len;
	uint8_t *image = prog_image(PROG_GOOD, &len);
	uint32_t prog = 0, s = 0;
	int rc = cdev_program(d, image, len, &prog);
	free(image);
	if (rc == 0)
		rc = cdev_schedule(d, prog, &s);
	if (rc == 0) {
		struct drm_arena_schedule_append a = {
			.schedule = s, .count = 4,
			.refs = (uintptr_t)prog_bad_d_refs };
		rc = cdev_ioctl(d->fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a);
	}
	if (rc)
		die("bad schedule", rc);
	return s;
}

/* A SUBMIT of schedule s in the next SQE of ring, on fd (or slot fd
 * with IOSQE_FIXED_FILE in flags); user_data 0x5eed. */
static struct io_uring_sqe *put_submit(struct io_uring *ring, int fd,
				       unsigned int flags, uint32_t s)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	if (!sqe)
		die("no SQE", EBUSY);
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->flags = (uint8_t)flags;
	sqe->cmd_op = ARENA_URING_CMD_SUBMIT;
	sqe->user_data = 0x5eed;
	struct arena_uring_submit u = { .schedule = s };
	memcpy((uint8_t *)sqe + offsetof(struct io_uring_sqe, cmd), &u,
	       sizeof(u));
	return sqe;
}

/* The res of the CQE with this user_data, reaping the others. */
static int reap(struct io_uring *ring, uint64_t user_data)
{
	for (;;) {
		struct io_uring_cqe *cqe;
		int rc = io_uring_wait_cqe(ring, &cqe);
		if (rc < 0)
			return rc;
		uint64_t u = cqe->user_data;
		int res = cqe->res;
		io_uring_cqe_seen(ring, cqe);
		if (u == user_data)
			return res;
	}
}

/* One SUBMIT through io_uring_submit: the CQE's res. */
static int uring_submit(struct io_uring *ring, int fd, unsigned int flags,
			uint32_t s)
{
	put_submit(ring, fd, flags, s);
	int rc = io_uring_submit(ring);
	if (rc != 1)
		return rc < 0 ? rc : -EIO;
	return reap(ring, 0x5eed);
}

static int ioctl_submit(int fd, uint32_t s)
{
	struct drm_arena_schedule_submit sub = { .schedule = s };
	return cdev_ioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &sub);
}

/* ---- stale ---- */

static void cmd_stale(void)
{
	struct io_uring ring;
	if (io_uring_queue_init(8, &ring, IORING_SETUP_SQE128))
		die("ring", EIO);
	FILE *zero = fopen("/dev/zero", "r");
	if (!zero)
		die("/dev/zero", errno);
	int z = fileno(zero);
	/* Registered: the guard probes it, not the device. */
	int rc = io_uring_register_files(&ring, &z, 1);
	check(rc == 0, "register /dev/zero: %d", rc);
	io_uring_unregister_files(&ring);
	fclose(zero);                     /* a close the guard never sees */
	struct cdev d;
	open_dev(&d, CP_IOCTL);
	check(d.fd == z, "the node took /dev/zero's number %d: %d", z, d.fd);
	uint32_t s = bad_schedule(&d);
	rc = ioctl_submit(d.fd, s);
	check(rc == -EPERM, "ioctl submit on the reused number: %d", rc);
	rc = uring_submit(&ring, d.fd, 0, s);
	check(rc == -EPERM, "io_uring submit by fd: %d", rc);
	rc = io_uring_register_files(&ring, &d.fd, 1);
	check(rc == 0, "register the node: %d", rc);
	rc = uring_submit(&ring, 0, IOSQE_FIXED_FILE, s);
	check(rc == -EPERM, "io_uring submit on its slot: %d", rc);
	io_uring_queue_exit(&ring);
	cdev_close(&d);
}

/* ---- probefail ---- */

/* libprobefail.so makes DRM_IOCTL_VERSION fail: once with EINTR (the
 * request is refused with it and goes through when retried, checked),
 * or always with EACCES (nothing reaches the device unchecked); or
 * makes DRM_IOCTL_ARENA_SEAL fail with EINTR always ("EINTR-always":
 * every request is refused with it, none hangs). */
static void cmd_probefail(const char *err)
{
	struct cdev d;
	open_dev(&d, CP_IOCTL);
	size_t len;
	uint8_t *image = prog_image(PROG_GOOD, &len);
	uint32_t prog = 0;
	int rc = cdev_program(&d, image, len, &prog);
	int always = !strcmp(err, "EACCES") ? EACCES
		     : !strcmp(err, "EINTR-always") ? EINTR : 0;
	if (always) {
		free(image);
		check(rc == -always, "program create with no probe: %d", rc);
		rc = ioctl_submit(d.fd, 1);
		check(rc == -always, "submit with no probe: %d", rc);
		cdev_close(&d);
		return;
	}
	check(rc == -EINTR, "program create, the probe interrupted: %d", rc);
	rc = cdev_program(&d, image, len, &prog);
	free(image);
	check(rc == 0, "program create retried: %d", rc);
	uint32_t s = 0;
	rc = cdev_schedule(&d, prog, &s);
	struct drm_arena_schedule_append a = {
		.schedule = s, .count = 4, .refs = (uintptr_t)prog_bad_d_refs };
	if (rc == 0)
		rc = cdev_ioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a);
	check(rc == 0, "schedule: %d", rc);
	rc = ioctl_submit(d.fd, s);
	check(rc == -EPERM, "submit after the failed probe: %d", rc);
	cdev_close(&d);
}

/* ---- register ---- */

static void cmd_register(void)
{
	struct cdev d;
	open_dev(&d, CP_URING);
	uint32_t s = bad_schedule(&d);
	int rc = io_uring_register(d.ring.ring_fd, IORING_REGISTER_FILES,
				   &d.fd, 1);
	check(rc == 0, "IORING_REGISTER_FILES: %d", rc);
	rc = uring_submit(&d.ring, 0, IOSQE_FIXED_FILE, s);
	check(rc == -EPERM, "submit on a slot of REGISTER_FILES: %d", rc);
	rc = io_uring_register(d.ring.ring_fd, IORING_UNREGISTER_FILES, NULL, 0);
	check(rc == 0, "IORING_UNREGISTER_FILES: %d", rc);
	struct io_uring_rsrc_register g = { .nr = 8,
					    .flags = IORING_RSRC_REGISTER_SPARSE };
	rc = io_uring_register(d.ring.ring_fd, IORING_REGISTER_FILES2, &g,
			       sizeof(g));
	check(rc == 0, "IORING_REGISTER_FILES2, sparse: %d", rc);
	struct io_uring_files_update u = { .offset = 5,
					   .fds = (uintptr_t)&d.fd };
	rc = io_uring_register(d.ring.ring_fd, IORING_REGISTER_FILES_UPDATE,
			       &u, 1);
	check(rc == 1, "IORING_REGISTER_FILES_UPDATE into slot 5: %d", rc);
	rc = uring_submit(&d.ring, 5, IOSQE_FIXED_FILE, s);
	check(rc == -EPERM, "submit on slot 5: %d", rc);
	struct io_uring_rsrc_update2 u2 = { .offset = 6, .nr = 1,
					    .data = (uintptr_t)&d.fd };
	rc = io_uring_register(d.ring.ring_fd, IORING_REGISTER_FILES_UPDATE2,
			       &u2, sizeof(u2));
	check(rc == 1, "IORING_REGISTER_FILES_UPDATE2 into slot 6: %d", rc);
	rc = uring_submit(&d.ring, 6, IOSQE_FIXED_FILE, s);
	check(rc == -EPERM, "submit on slot 6: %d", rc);
	cdev_close(&d);
}

/* ---- directopen ---- */

static void cmd_directopen(const char *dir)
{
	struct cdev d;
	open_dev(&d, CP_URING);
	uint32_t s = bad_schedule(&d);
	int rc = io_uring_register_files_sparse(&d.ring, 4);
	check(rc == 0, "sparse table: %d", rc);
	char link[4096], fdpath[64];
	snprintf(link, sizeof(link), "%s/accel", dir);
	if (symlink(ARENA_NODE_PATH, link) != 0)
		die("symlink", errno);
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", d.fd);
	const char *paths[] = { link, fdpath };
	for (unsigned int i = 0; i < 2; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&d.ring);
		if (!sqe)
			die("no SQE", EBUSY);
		memset(sqe, 0, 2 * sizeof(*sqe));
		io_uring_prep_openat_direct(sqe, AT_FDCWD, paths[i], O_RDWR, 0,
					    1 + i);
		sqe->user_data = 0x09e4;
		rc = io_uring_submit(&d.ring);
		check(rc == 1, "direct open of %s: %d", paths[i], rc);
		reap(&d.ring, 0x09e4);
		rc = uring_submit(&d.ring, (int)(1 + i), IOSQE_FIXED_FILE, s);
		check(rc == -EPERM, "submit on the slot %s went to: %d",
		      paths[i], rc);
	}
	unlink(link);
	cdev_close(&d);
}

/* ---- sqarray ---- */

/* A NOP queued through liburing at position p, and the SQ index array
 * entry for p pointed at a SUBMIT written into another SQE by hand: the
 * kernel runs the SUBMIT. */
static void cmd_sqarray(void)
{
	struct cdev d;
	open_dev(&d, CP_URING);
	uint32_t s = bad_schedule(&d);
	struct io_uring *ring = &d.ring;
	unsigned int mask = *ring->sq.kring_mask;
	unsigned int pos = ring->sq.sqe_tail;
	struct io_uring_sqe *nop = io_uring_get_sqe(ring);
	if (!nop)
		die("no SQE", EBUSY);
	memset(nop, 0, 2 * sizeof(*nop));
	io_uring_prep_nop(nop);
	nop->user_data = 0x909;
	/* Two entries on (128-byte SQEs: index i is sqes[2 i]). */
	unsigned int other = (pos + 2) & mask;
	struct io_uring_sqe *hidden = &ring->sq.sqes[other << 1];
	memset(hidden, 0, 2 * sizeof(*hidden));
	hidden->opcode = IORING_OP_URING_CMD;
	hidden->fd = d.fd;
	hidden->cmd_op = ARENA_URING_CMD_SUBMIT;
	hidden->user_data = 0x5eed;
	struct arena_uring_submit u = { .schedule = s };
	memcpy((uint8_t *)hidden + offsetof(struct io_uring_sqe, cmd), &u,
	       sizeof(u));
	ring->sq.array[pos & mask] = other;
	int rc = io_uring_submit(ring);
	check(rc == 1, "submit: %d", rc);
	rc = reap(ring, 0x5eed);
	check(rc == -EPERM, "the SQE the index array names: %d", rc);
	ring->sq.array[pos & mask] = pos & mask;
	cdev_close(&d);
}

/* ---- newsubmit ---- */

static void cmd_newsubmit(void)
{
	struct cdev d;
	open_dev(&d, CP_URING);
	uint32_t s = bad_schedule(&d);
	for (int i = 0; i < 2; i++) {
		put_submit(&d.ring, d.fd, 0, s);
		struct io_uring_cqe *cqe = NULL;
		int rc = i == 0
			? io_uring_submit_and_wait_min_timeout(&d.ring, &cqe, 1,
							       NULL, 0, NULL)
			: io_uring_submit_and_wait_reg(&d.ring, &cqe, 1, 0);
		const char *fn = i == 0 ? "io_uring_submit_and_wait_min_timeout"
					: "io_uring_submit_and_wait_reg";
		check(rc == 1, "%s: %d", fn, rc);
		rc = reap(&d.ring, 0x5eed);
		check(rc == -EPERM, "%s of a failing schedule: %d", fn, rc);
	}
	cdev_close(&d);
}

/* ---- resize ---- */

static void cmd_resize(void)
{
	struct cdev d;
	open_dev(&d, CP_FIXED);
	uint32_t s = bad_schedule(&d);
	int rc = uring_submit(&d.ring, 0, IOSQE_FIXED_FILE, s);
	check(rc == -EPERM, "submit on slot 0: %d", rc);
	void *old = d.ring.sq.ring_ptr;
	rc = io_uring_resize_rings(&d.ring, NULL);
	check(rc == 0 && d.ring.sq.ring_ptr != old, "resize: %d", rc);
	rc = uring_submit(&d.ring, 0, IOSQE_FIXED_FILE, s);
	check(rc == -EPERM, "submit on slot 0 after the resize: %d", rc);
	cdev_close(&d);
}

/* ---- regrace ---- */

#define RACE_ROUNDS 2000

struct regrace {
	struct cdev *d;
	atomic_int done;
};

static void *reregister(void *arg)
{
	struct regrace *g = arg;
	for (int i = 0; i < RACE_ROUNDS && !atomic_load(&g->done); i++) {
		io_uring_unregister_files(&g->d->ring);
		io_uring_register_files(&g->d->ring, &g->d->fd, 1);
	}
	atomic_store(&g->done, 1);
	return NULL;
}

/* One thread submits a good schedule on slot 0 while another drops and
 * registers the files again: every result is the run (0), the kernel's
 * for an empty slot, or the guard's block while a registration is under
 * way, and nothing crashes or hangs. */
static void cmd_regrace(void)
{
	struct cdev d;
	open_dev(&d, CP_FIXED);
	size_t len;
	uint8_t *image = prog_image(PROG_GOOD, &len);
	uint32_t prog = 0, s = 0;
	int rc = cdev_program(&d, image, len, &prog);
	free(image);
	struct drm_arena_schedule_append a = {
		.count = 2, .refs = (uintptr_t)prog_good_refs };
	if (rc == 0)
		rc = cdev_schedule(&d, prog, &s);
	a.schedule = s;
	if (rc == 0)
		rc = cdev_ioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a);
	if (rc)
		die("good schedule", rc);
	struct regrace g = { &d, 0 };
	pthread_t t;
	pthread_create(&t, NULL, reregister, &g);
	int bad = 0, n = 0, other = 0;
	while (!atomic_load(&g.done)) {
		rc = uring_submit(&d.ring, 0, IOSQE_FIXED_FILE, s);
		/* -EPERM: submitted while the other thread's registration
		 * was under way, when the guard cannot know which file the
		 * kernel has in the slot: blocked.  Never -ENOKEY (a submit
		 * the guard let go unsealed, believing the slot empty, that
		 * reached the kernel after the registration) nor -EOPNOTSUPP
		 * (the same instant for the simulator, whose slot table is
		 * learnt inside the guard's registration window). */
		int allowed = rc == 0 || rc == -EBADF || rc == -ENXIO ||
			      rc == -EPERM;
		bad += !allowed;
		other = allowed ? other : rc;
		n++;
	}
	pthread_join(t, NULL);
	check(bad == 0, "%d submits during re-registration: %d refused "
	      "(the last: %d)", n, bad, other);
	cdev_close(&d);
}

/* ---- ringdup ---- */

/* NOPs through liburing: n of them, reaped. */
static void nops(struct io_uring *ring, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
		if (!sqe)
			die("no SQE", EBUSY);
		io_uring_prep_nop(sqe);
		sqe->user_data = 0x909;
		if (io_uring_submit(ring) != 1)
			die("nop submit", EIO);
		reap(ring, 0x909);
	}
}

/* liburing's sq-poll-dup: the ring fd dup'ed and the original closed,
 * the ring used on, torn down and set up again (the same number and,
 * most likely, the same mapping). */
static void cmd_ringdup(void)
{
	for (int round = 0; round < 4; round++) {
		struct io_uring ring;
		if (io_uring_queue_init(8, &ring, 0))
			die("ring", EIO);
		nops(&ring, 100);
		int dup_fd = dup(ring.ring_fd);
		close(ring.ring_fd);
		ring.ring_fd = ring.enter_ring_fd = dup_fd;
		nops(&ring, 3);
		io_uring_queue_exit(&ring);
	}
	check(1, "four rings set up again after a dup");
}

/* ---- nofd ---- */

/* Two threads' rings, both with ring_fd -1 (what liburing 2.4's
 * io_uring_close_ring_fd leaves), used in turn: A, then B, then A. */
static pthread_barrier_t nofd_turn;

static void *nofd_thread(void *arg)
{
	int first = arg != NULL;
	struct io_uring ring;
	if (io_uring_queue_init(8, &ring, 0))
		die("ring", EIO);
	if (io_uring_register_ring_fd(&ring) != 1)
		die("register ring fd", EIO);
	close(ring.ring_fd);
	ring.ring_fd = -1;
	for (int turn = 0; turn < 3; turn++) {
		if ((turn != 1) == first)
			nops(&ring, first ? 100 : 7);
		pthread_barrier_wait(&nofd_turn);
	}
	io_uring_queue_exit(&ring);
	return NULL;
}

static void cmd_nofd(void)
{
	pthread_barrier_init(&nofd_turn, NULL, 2);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, nofd_thread, i ? NULL : "first");
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	check(1, "two rings with ring_fd -1");
}

/* ---- msgring ---- */

/* The device's slot of one ring sent into another's sparse table by
 * IORING_MSG_SEND_FD: a slot the guard never saw filled. */
static void cmd_msgring(void)
{
	struct cdev d;
	open_dev(&d, CP_FIXED);
	uint32_t s = bad_schedule(&d);
	struct io_uring other;
	if (io_uring_queue_init(8, &other, IORING_SETUP_SQE128))
		die("ring", EIO);
	int rc = io_uring_register_files_sparse(&other, 4);
	check(rc == 0, "sparse table: %d", rc);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d.ring);
	if (!sqe)
		die("no SQE", EBUSY);
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_MSG_RING;
	sqe->fd = other.ring_fd;
	sqe->addr = IORING_MSG_SEND_FD;
	sqe->addr3 = 0;                  /* the device's slot here */
	sqe->file_index = 3;             /* slot 2 there */
	sqe->user_data = 0x3e5;
	rc = io_uring_submit(&d.ring);
	check(rc == 1, "MSG_RING submit: %d", rc);
	rc = reap(&d.ring, 0x3e5);
	check(rc == 0, "IORING_MSG_SEND_FD: %d", rc);
	arenaguard_last_refusal_fn *last = (arenaguard_last_refusal_fn *)
		dlsym(RTLD_DEFAULT, ARENAGUARD_LAST_REFUSAL);
	char why[256];
	if (last)
		last(why, sizeof(why), 1);
	rc = uring_submit(&other, 2, IOSQE_FIXED_FILE, s);
	check(rc == -EPERM, "submit on the slot sent to: %d", rc);
	/* The guard's refusal, said as one (arena-serve tells it from a
	 * driver's EPERM by this). */
	check(last && last(why, sizeof(why), 1) > 0 &&
	      strstr(why, "blocked submission of schedule"),
	      "the thread's last refusal says the blocked submit");
	io_uring_queue_exit(&other);
	cdev_close(&d);
}

/* ---- rawring ---- */

/* A ring set up by a raw io_uring_setup (8 entries): its fd. */
static int raw_ring(void)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	int fd = (int)syscall(__NR_io_uring_setup, 8, &p);
	check(fd >= 0, "raw io_uring_setup: %d", fd);
	return fd;
}

/* A ring set up by a raw io_uring_setup (as a statically linked
 * liburing, or fio, does), then the device opened and used: the guard
 * cannot check that ring's SQEs, and must say so. */
static void cmd_rawring(void)
{
	int fd = raw_ring();
	struct cdev d;
	open_dev(&d, CP_IOCTL);
	uint32_t s = bad_schedule(&d);
	int rc = ioctl_submit(d.fd, s);
	check(rc == -EPERM, "ioctl submit: %d", rc);
	cdev_close(&d);
	close(fd);
}

/* A raw ring inherited by 20 forked children, each exiting through
 * exit(3) (the guard's exit-time look for unseen rings runs in each),
 * then the parent: the process tree says it once (issue 32: it was
 * said by every child and the parent, 21 times). */
static void cmd_rawforks(void)
{
	raw_ring();
	for (int i = 0; i < 20; i++) {
		pid_t pid = fork();
		check(pid >= 0, "fork: %d", errno);
		if (pid == 0)
			exit(0);
		int status;
		check(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0, "child %d", i);
	}
}

/* A raw ring of the parent's, said when the device is opened, then a
 * forked child that sets up a raw ring of its own and exits: the
 * child's ring is a new one and is said too (2 notices in all). */
static void cmd_rawchild(void)
{
	raw_ring();
	struct cdev d;
	open_dev(&d, CP_IOCTL);
	cdev_close(&d);
	pid_t pid = fork();
	check(pid >= 0, "fork: %d", errno);
	if (pid == 0) {
		raw_ring();
		exit(0);
	}
	int status;
	check(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "child");
}

/* Two raw rings in one process: each is said (2 notices). */
static void cmd_rawtwo(void)
{
	for (int i = 0; i < 2; i++) {
		raw_ring();
	}
}

/* 70 raw rings in one process: 63 said, then "and more" once. */
static void cmd_rawmany(void)
{
	for (int i = 0; i < 70; i++)
		raw_ring();
}

/* Ring a set up, a child made by the raw fork system call (no fork
 * handler runs, so the guard keeps a's shared page for the parent's
 * next ring), a torn down by the parent and b set up on the same state:
 * b submits 10 nops, then the child 2 on its copy of a (its tail, 2,
 * stored on the page b now uses), then b one more.  Had b taken the
 * child's tail for its own, 8 of its SQEs would be called unseen
 * ("reached the kernel without"); the test reads the log for it. */
static void cmd_rawforkpage(void)
{
	struct io_uring a, b;
	int go[2];
	if (pipe(go) || io_uring_queue_init(8, &a, 0))
		die("ring a", EIO);
	pid_t pid = (pid_t)syscall(SYS_fork);
	check(pid >= 0, "raw fork: %d", errno);
	if (pid == 0) {
		char c;
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		nops(&a, 2);
		_exit(0);
	}
	io_uring_queue_exit(&a);
	if (io_uring_queue_init(8, &b, 0))
		die("ring b", EIO);
	nops(&b, 10);
	check(write(go[1], "g", 1) == 1, "write: %d", errno);
	int status;
	check(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "child: %d", status);
	nops(&b, 1);
	io_uring_queue_exit(&b);
}

/* ---- acrossfork ---- */

/* liburing's across-fork: the ring and liburing's state of it in
 * shared memory, submitted to by the parent, then the child, then the
 * parent again. */
static void cmd_acrossfork(void)
{
	struct io_uring *ring = mmap(NULL, sizeof(*ring),
				     PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ring == MAP_FAILED || io_uring_queue_init(8, ring, 0))
		die("shared ring", EIO);
	nops(ring, 2);
	pid_t pid = fork();
	if (pid == 0) {
		nops(ring, 5);
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "child: %#x", status);
	nops(ring, 2);
	io_uring_queue_exit(ring);
}

/* ---- noprobe ---- */

static void cmd_noprobe(void)
{
	int null = open("/dev/null", O_RDWR), zero = open("/dev/zero", O_RDWR);
	int null2 = open("/dev/null", O_RDWR), null3 = open("/dev/null", O_RDWR);
	int null4 = open("/dev/null", O_RDWR);
	struct io_uring ring;
	if (null < 0 || zero < 0 || null2 < 0 || null3 < 0 || null4 < 0 ||
	    io_uring_queue_init(8, &ring, IORING_SETUP_SQE128) != 0)
		die("set-up", errno);
	int fds[2] = { null, zero };
	check(io_uring_register_files(&ring, fds, 2) == 0, "registered");
	check(io_uring_register_files_update(&ring, 1, &null2, 1) == 1,
	      "updated");
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	io_uring_prep_files_update(sqe, &null3, 1, 0);
	sqe->user_data = 1;
	check(io_uring_submit(&ring) == 1 && reap(&ring, 1) == 1,
	      "FILES_UPDATE SQE");
	int rc = uring_submit(&ring, null4, 0, 1);
	check(rc != -EPERM, "a URING_CMD on /dev/null is not the guard's "
	      "(%d)", rc);
	struct drm_arena_schedule_submit sub = { .schedule = 1 };
	check(cdev_ioctl(null4, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &sub) ==
	      -ENOTTY, "an arena ioctl on /dev/null is /dev/null's");
	io_uring_queue_exit(&ring);
	/* The device is probed. */
	struct cdev d;
	open_dev(&d, CP_IOCTL);
	bad_schedule(&d);
	cdev_close(&d);
	close(null);
	close(zero);
	close(null2);
	close(null3);
	close(null4);
}

/* ---- slowprobe ---- */

struct slowreg {
	struct io_uring *ring;
	int fd;
	atomic_int inside;
	int rc;
};

static void *slow_register(void *arg)
{
	struct slowreg *g = arg;
	atomic_store(&g->inside, 1);
	g->rc = io_uring_register_files_update(g->ring, 0, &g->fd, 1);
	return NULL;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void cmd_slowprobe(void)
{
	struct io_uring ring;
	int dev = open(ARENA_NODE_PATH, O_RDWR);    /* not seen yet */
	if (dev < 0 || io_uring_queue_init(8, &ring, 0) != 0 ||
	    io_uring_register_files_sparse(&ring, 4) != 0)
		die("set-up", errno);
	struct slowreg g = { &ring, dev, 0, 0 };
	pthread_t t;
	pthread_create(&t, NULL, slow_register, &g);
	while (!atomic_load(&g.inside))
		sched_yield();
	usleep(200 * 1000);             /* inside its probe (1.5 s) */
	uint64_t t0 = now_ms();
	int none = -1;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	io_uring_prep_files_update(sqe, &none, 1, 2);
	sqe->user_data = 1;
	int rc = io_uring_submit(&ring);
	uint64_t took = now_ms() - t0;
	check(rc == 1, "submitted (%d)", rc);
	check(took < 600, "a slot-changing SQE took %llu ms while another "
	      "thread's registration probed a slow device", (unsigned long long)took);
	check(reap(&ring, 1) == 1, "its CQE");
	pthread_join(t, NULL);
	check(g.rc == 1, "the slow registration (%d)", g.rc);
	io_uring_queue_exit(&ring);
	close(dev);
}

/* ---- rawwait ---- */

struct rawwait {
	struct io_uring *ring;
	atomic_int inside;
	int rc;
};

/* A command on slot 0 and a 1.5 s timeout, published by hand and
 * entered raw with a wait for both. */
static void *raw_enter_wait(void *arg)
{
	struct rawwait *w = arg;
	struct io_uring_sq *sq = &w->ring->sq;
	put_submit(w->ring, 0, IOSQE_FIXED_FILE, 0x7777);
	struct __kernel_timespec ts = { .tv_sec = 1, .tv_nsec = 500000000 };
	struct io_uring_sqe *sqe = io_uring_get_sqe(w->ring);
	io_uring_prep_timeout(sqe, &ts, 0, 0);
	sqe->user_data = 0x7;
	sq->sqe_head = sq->sqe_tail;
	io_uring_smp_store_release(sq->ktail, sq->sqe_tail);
	atomic_store(&w->inside, 1);
	w->rc = io_uring_enter((unsigned int)w->ring->ring_fd, 2, 2,
			       IORING_ENTER_GETEVENTS, NULL);
	return NULL;
}

static void cmd_rawwait(void)
{
	struct cdev d;
	open_dev(&d, CP_FIXED);
	struct rawwait w = { &d.ring, 0, 0 };
	pthread_t t;
	pthread_create(&t, NULL, raw_enter_wait, &w);
	while (!atomic_load(&w.inside))
		sched_yield();
	usleep(200 * 1000);             /* inside its wait (1.5 s) */
	uint64_t t0 = now_ms();
	int rc = io_uring_register_files_update(&d.ring, 0, &d.fd, 1);
	uint64_t took = now_ms() - t0;
	check(rc == 1, "the registration (%d)", rc);
	check(took < 500, "a registration took %llu ms while another thread "
	      "waited for completions in a raw io_uring_enter",
	      (unsigned long long)took);
	pthread_join(t, NULL);
	check(w.rc == 2, "the raw enter's result: submitted 2 (%d)", w.rc);
	check(reap(&d.ring, 0x5eed) == -EPERM, "the command on slot 0 "
	      "(an unknown schedule): blocked");
	cdev_close(&d);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: guard-ring-client COMMAND [ARG]\n");
		return 2;
	}
	const char *cmd = argv[1];
	const char *arg = argc > 2 ? argv[2] : "";
	alarm(60);           /* a walk that never ends fails the test */
	if (!strcmp(cmd, "stale"))
		cmd_stale();
	else if (!strcmp(cmd, "probefail"))
		cmd_probefail(arg);
	else if (!strcmp(cmd, "register"))
		cmd_register();
	else if (!strcmp(cmd, "directopen"))
		cmd_directopen(arg);
	else if (!strcmp(cmd, "sqarray"))
		cmd_sqarray();
	else if (!strcmp(cmd, "newsubmit"))
		cmd_newsubmit();
	else if (!strcmp(cmd, "resize"))
		cmd_resize();
	else if (!strcmp(cmd, "regrace"))
		cmd_regrace();
	else if (!strcmp(cmd, "ringdup"))
		cmd_ringdup();
	else if (!strcmp(cmd, "nofd"))
		cmd_nofd();
	else if (!strcmp(cmd, "acrossfork"))
		cmd_acrossfork();
	else if (!strcmp(cmd, "rawring"))
		cmd_rawring();
	else if (!strcmp(cmd, "rawforks"))
		cmd_rawforks();
	else if (!strcmp(cmd, "rawchild"))
		cmd_rawchild();
	else if (!strcmp(cmd, "rawtwo"))
		cmd_rawtwo();
	else if (!strcmp(cmd, "rawmany"))
		cmd_rawmany();
	else if (!strcmp(cmd, "rawforkpage"))
		cmd_rawforkpage();
	else if (!strcmp(cmd, "msgring"))
		cmd_msgring();
	else if (!strcmp(cmd, "noprobe"))
		cmd_noprobe();
	else if (!strcmp(cmd, "rawwait"))
		cmd_rawwait();
	else if (!strcmp(cmd, "slowprobe"))
		cmd_slowprobe();
	else {
		fprintf(stderr, "unknown command %s\n", cmd);
		return 2;
	}
	printf("%d failures\n", atomic_load(&failures));
	return 0;
}
