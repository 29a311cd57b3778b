/* SPDX-License-Identifier: MIT */
/*
 * guard-attack: ordinary client code trying to run a schedule the
 * certificate fails on the simulated device past the preloaded guard, or
 * to make the guard refuse a schedule it certified (issue 11, reviewed
 * as a hostile reviewer would: test_attack.c runs each subcommand with
 * and without ARENASIM_REQUIRE_SEAL=1).  Each check prints "ok: ..." or
 * "FAIL: ..."; the exit status is 1 when any failed.
 *
 *   forkworkers  a server dups its fd and forks workers, each building,
 *                running and being refused its own schedules
 *   uringioctl   appended by io_uring, submitted by ioctl, and back
 *   scm          an fd passed to itself by SCM_RIGHTS: the received one
 *                shares the mirror both ways
 *   appseal      the application's own SUBMIT_SEALED, carrying the right
 *                seal of a failing schedule (ioctl and io_uring)
 *   reprogram    a program destroyed and made again, failing, under the
 *                same handle, then a schedule of it
 *   reprogramfork  the same, the program remade by another process
 *   linked       io_uring appends linked to each other and to the submit
 *   procfd       the open file reached again through /proc/self/fd/N
 *   storm [SEED] threads on rings and ioctls, dups, closes and forks
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cdev.h"
#include "checks.h"
#include "progs.h"
#include "seal.h"

/* Submits s on d (by d->path): the good schedule must run, any other
 * must be refused with EPERM (blocked by the guard).  Alone on the
 * context, the window is zeroed first and the good one must leave
 * out = 1.0, the others untouched memory; processes sharing the context
 * (and so its buffer) check the answers only. */
static void submit_answer(struct cdev *d, uint32_t s, int good,
			  const char *what, int alone)
{
	if (alone)
		cdev_zero(d);
	uint64_t seqno = 0;
	int rc = cdev_submit(d, s, &seqno);
	if (rc == 0)
		rc = cdev_wait(d, seqno);
	if (!alone) {
		check(rc == (good ? 0 : -EPERM), "%s: %s schedule: %d", what,
		      good ? "certified" : "failing", rc);
	} else if (good) {
		check(rc == 0 && cdev_all(d, PROG_OUT, PROG_FLOATS, 1.0f),
		      "%s: certified schedule ran (%d)", what, rc);
	} else {
		check(rc == -EPERM, "%s: failing schedule refused (%d)", what,
		      rc);
		check(cdev_all(d, PROG_OUT, PROG_FLOATS, 0.0f) &&
		      cdev_all(d, PROG_CANARY, PROG_FLOATS, 0.0f),
		      "%s: memory untouched", what);
	}
}

static void expect_run(struct cdev *d, uint32_t s, int good, const char *what)
{
	submit_answer(d, s, good, what, 1);
}

/* ---- forkworkers ---- */

static void worker(struct cdev *d, uint32_t prog, uint32_t parents_good,
		   int id)
{
	uint32_t mine = schedule(d, prog, prog_good_refs, 2);
	uint32_t bad = schedule(d, prog, prog_bad_d_refs, 4);
	for (int i = 0; i < 20; i++) {
		char what[64];
		snprintf(what, sizeof(what), "worker %d round %d", id, i);
		submit_answer(d, mine, 1, what, 0);
		submit_answer(d, parents_good, 1, what, 0);
		submit_answer(d, bad, 0, what, 0);
	}
	check(cdev_destroy_schedule(d, mine) == 0, "worker %d destroy", id);
	check(cdev_destroy_schedule(d, bad) == 0, "worker %d destroy bad", id);
}

static void cmd_forkworkers(int workers)
{
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t prog = program(&d, PROG_GOOD);
	uint32_t good = schedule(&d, prog, prog_good_refs, 2);
	int listen_fd = dup(d.fd);    /* a server keeps a copy */
	check(listen_fd >= 0, "dup");
	pid_t pids[8];
	for (int w = 0; w < workers; w++) {
		fflush(stdout);
		pids[w] = fork();
		if (pids[w] == 0) {
			struct cdev mine = d;
			mine.fd = listen_fd;
			worker(&mine, prog, good, w);
			fflush(stdout);
			_exit(atomic_load(&failures) ? 1 : 0);
		}
	}
	for (int w = 0; w < workers; w++) {
		int status = 0;
		waitpid(pids[w], &status, 0);
		check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "worker %d exited %d", w, status);
	}
	expect_run(&d, good, 1, "server after its workers");
	uint32_t later = schedule(&d, prog, prog_good_refs, 2);
	expect_run(&d, later, 1, "server's new schedule");
	close(listen_fd);
	cdev_close(&d);
}

/* ---- uringioctl ---- */

static void cmd_uringioctl(void)
{
	struct cdev d;
	open_or_exit(&d, CP_URING);
	uint32_t prog = program(&d, PROG_GOOD);
	/* Appended by io_uring (the mirror takes it before the kernel). */
	uint32_t good = schedule(&d, prog, prog_good_refs, 2);
	uint32_t bad = schedule(&d, prog, prog_bad_d_refs, 4);
	d.path = CP_IOCTL;
	expect_run(&d, good, 1, "uring append, ioctl submit");
	expect_run(&d, bad, 0, "uring append, ioctl submit");
	/* Appended by ioctl, in two batches, submitted by io_uring. */
	uint32_t two = schedule(&d, prog, prog_good_refs, 1);
	check(cdev_append(&d, two, &prog_good_refs[1], 1) == 0,
	      "second batch");
	d.path = CP_URING;
	expect_run(&d, two, 1, "ioctl append, uring submit");
	/* Half by each path. */
	uint32_t mixed = schedule(&d, prog, prog_bad_d_refs, 2);
	d.path = CP_IOCTL;
	check(cdev_append(&d, mixed, &prog_bad_d_refs[2], 2) == 0,
	      "ioctl half");
	d.path = CP_URING;
	expect_run(&d, mixed, 0, "mixed append, uring submit");
	d.path = CP_IOCTL;
	expect_run(&d, mixed, 0, "mixed append, ioctl submit");
	cdev_close(&d);
}

/* ---- scm ---- */

static int pass_fd(int fd)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return -1;
	char byte = 0;
	struct iovec iov = { &byte, 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	int got = -1;
	if (sendmsg(sv[0], &m, 0) == 1 && recvmsg(sv[1], &m, 0) == 1 &&
	    (c = CMSG_FIRSTHDR(&m)) && c->cmsg_type == SCM_RIGHTS)
		memcpy(&got, CMSG_DATA(c), sizeof(int));
	close(sv[0]);
	close(sv[1]);
	return got;
}

static void cmd_scm(void)
{
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t prog = program(&d, PROG_GOOD);
	uint32_t good = schedule(&d, prog, prog_good_refs, 2);
	uint32_t bad = schedule(&d, prog, prog_bad_d_refs, 4);
	struct cdev r = d;
	r.fd = pass_fd(d.fd);
	check(r.fd >= 0 && r.fd != d.fd, "received fd %d", r.fd);
	expect_run(&r, good, 1, "received fd");
	expect_run(&r, bad, 0, "received fd");
	/* Made on the received fd, run on the original. */
	uint32_t there = schedule(&r, prog, prog_good_refs, 2);
	uint32_t there_bad = schedule(&r, prog, prog_bad_d_refs, 4);
	expect_run(&d, there, 1, "made on the received fd");
	expect_run(&d, there_bad, 0, "made on the received fd");
	/* The original closed: the received one goes on. */
	close(d.fd);
	expect_run(&r, good, 1, "original closed");
	expect_run(&r, bad, 0, "original closed");
	cdev_close(&r);
}

/* ---- appseal ---- */

static uint64_t seal_of(enum prog_kind kind, const struct ac_ref *refs,
			uint32_t n)
{
	size_t len;
	uint8_t *image = prog_image(kind, &len);
	struct arena_seal s;
	arena_seal_program(&s, image, len);
	arena_seal_refs(&s, (const struct drm_arena_ref *)refs, n);
	free(image);
	return arena_seal_value(&s);
}

static void cmd_appseal(void)
{
	struct cdev d;
	open_or_exit(&d, CP_URING);
	uint32_t prog = program(&d, PROG_GOOD);
	uint32_t bad = schedule(&d, prog, prog_bad_d_refs, 4);
	uint32_t good = schedule(&d, prog, prog_good_refs, 2);
	uint64_t seal = seal_of(PROG_GOOD, prog_bad_d_refs, 4);

	cdev_zero(&d);
	struct drm_arena_schedule_submit_sealed s = { .schedule = bad,
						      .seal = seal };
	int rc = cdev_ioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED, &s);
	check(rc == -EPERM, "ioctl SUBMIT_SEALED with the right seal of a "
	      "failing schedule: %d", rc);
	struct arena_uring_submit_sealed u = { .schedule = bad, .seal = seal };
	rc = cdev_uring_cmd(&d, ARENA_URING_CMD_SUBMIT_SEALED, &u, sizeof(u));
	check(rc == -EPERM, "URING SUBMIT_SEALED with the right seal of a "
	      "failing schedule: %d", rc);
	check(cdev_all(&d, PROG_OUT, PROG_FLOATS, 0.0f),
	      "nothing ran");
	/* A wrong seal on a certified schedule: the guard gives its own. */
	struct drm_arena_schedule_submit_sealed g = { .schedule = good,
						      .seal = 12345 };
	rc = cdev_ioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED, &g);
	check(rc == 0 && g.seal == 12345, "ioctl SUBMIT_SEALED with a wrong "
	      "seal of a certified schedule: %d (seal given back %llu)", rc,
	      (unsigned long long)g.seal);
	cdev_close(&d);
}

/* ---- reprogram ---- */

static void cmd_reprogram(void)
{
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t prog = program(&d, PROG_GOOD);
	uint32_t good = schedule(&d, prog, prog_good_refs, 2);
	expect_run(&d, good, 1, "first program");
	check(cdev_destroy_program(&d, prog) == -EBUSY,
	      "a program with a schedule is not destroyed");
	check(cdev_destroy_schedule(&d, good) == 0, "schedule destroyed");
	check(cdev_destroy_program(&d, prog) == 0, "program destroyed");
	uint32_t again = program(&d, PROG_BAD_C);
	check(again == prog, "the handle is reused (%u)", again);
	uint32_t s = schedule(&d, again, prog_good_refs, 2);
	expect_run(&d, s, 0, "failing program under the old handle");
	cdev_close(&d);
}

/* Another process sharing the open file destroys the program and makes
 * a failing one under the same handle; this process then builds a
 * schedule of that handle with certified references: its guard
 * certified the old image, the driver holds the new one, and the seal
 * refuses the submit. */
static void cmd_reprogramfork(void)
{
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t prog = program(&d, PROG_GOOD);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int rc = cdev_destroy_program(&d, prog);
		if (rc == 0 && program(&d, PROG_BAD_C) != prog)
			rc = -1;
		_exit(rc == 0 ? 0 : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the other process remade program %u failing", prog);
	uint32_t s = schedule(&d, prog, prog_good_refs, 2);
	cdev_zero(&d);
	uint64_t seqno = 0;
	int rc = cdev_submit(&d, s, &seqno);
	check(rc == -EKEYREJECTED, "submit refused by the seal: %d", rc);
	check(cdev_all(&d, PROG_CANARY, PROG_FLOATS, 0.0f) &&
	      cdev_all(&d, PROG_OUT, PROG_FLOATS, 0.0f), "nothing ran");
	cdev_close(&d);
}

/* ---- linked ---- */

static struct io_uring_sqe *cmd_sqe(struct cdev *d, uint32_t op,
				    const void *arg, size_t size,
				    unsigned int flags, uint64_t user_data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);
	if (!sqe) {
		printf("FAIL: the ring is full\n");
		exit(1);
	}
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = d->fd;
	sqe->flags = flags;
	sqe->cmd_op = op;
	sqe->user_data = user_data;
	memcpy(sqe->cmd, arg, size);
	return sqe;
}

/* One link chain: the schedule's references appended in one batch each
 * (every SQE but the last linked to the next), then submitted: the
 * chain's CQEs, in order, in res[]. */
static void run_chain(struct cdev *d, uint32_t s, const struct ac_ref *refs,
		      uint32_t n, uint64_t *seqno, int *res)
{
	struct drm_arena_schedule_append a[4];
	for (uint32_t i = 0; i < n; i++) {
		a[i] = (struct drm_arena_schedule_append){
			.schedule = s, .count = 1,
			.refs = (uintptr_t)&refs[i] };
		cmd_sqe(d, ARENA_URING_CMD_APPEND, &a[i], sizeof(a[i]),
			IOSQE_IO_LINK, 100 + i);
	}
	struct arena_uring_submit sub = { .schedule = s,
					  .seqno = (uintptr_t)seqno };
	cmd_sqe(d, ARENA_URING_CMD_SUBMIT, &sub, sizeof(sub), 0, 100 + n);
	check(io_uring_submit(&d->ring) == (int)n + 1, "chain submitted");
	for (uint32_t i = 0; i <= n; i++) {
		struct io_uring_cqe *cqe;
		res[i] = -EPROTO;
		if (io_uring_wait_cqe(&d->ring, &cqe) == 0) {
			if (cqe->user_data >= 100 && cqe->user_data <= 100 + n)
				res[cqe->user_data - 100] = cqe->res;
			io_uring_cqe_seen(&d->ring, cqe);
		}
	}
}

/* An application that links its appends and the submit, so that the
 * submit runs only if every append was taken: the certified schedule
 * runs, the failing one is blocked. */
static void cmd_linked(void)
{
	struct cdev d;
	open_or_exit(&d, CP_URING);
	uint32_t prog = program(&d, PROG_GOOD);
	uint32_t good = 0, bad = 0;
	check(cdev_schedule(&d, prog, &good) == 0 &&
	      cdev_schedule(&d, prog, &bad) == 0, "schedules");
	int res[5];
	uint64_t seqno = 0;
	cdev_zero(&d);
	run_chain(&d, good, prog_good_refs, 2, &seqno, res);
	check(res[0] == 0 && res[1] == 0 && res[2] == 0,
	      "linked appends and submit of a certified schedule: %d %d %d",
	      res[0], res[1], res[2]);
	check(res[2] != 0 || (cdev_wait(&d, seqno) == 0 &&
			      cdev_all(&d, PROG_OUT, PROG_FLOATS, 1.0f)),
	      "it ran");
	/* Submitted again, alone: still certified. */
	d.path = CP_IOCTL;
	expect_run(&d, good, 1, "resubmitted by ioctl");
	d.path = CP_URING;
	cdev_zero(&d);
	run_chain(&d, bad, prog_bad_d_refs, 4, &seqno, res);
	check(res[4] == -EPERM, "linked appends and submit of a failing "
	      "schedule: submit %d", res[4]);
	check(cdev_all(&d, PROG_OUT, PROG_FLOATS, 0.0f), "nothing ran");
	cdev_close(&d);
}

/* ---- procfd ---- */

/* The device's open file reached again by /proc/self/fd/N, which libc's
 * open does not recognise as the node: on the simulator it is the same
 * context (its memfd), and the guard must match it to its mirror by the
 * context id the seal gives. */
static void cmd_procfd(void)
{
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t prog = program(&d, PROG_GOOD);
	uint32_t good = schedule(&d, prog, prog_good_refs, 2);
	uint32_t bad = schedule(&d, prog, prog_bad_d_refs, 4);
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", d.fd);
	struct cdev again = d;
	again.fd = open(path, O_RDWR | O_CLOEXEC);
	check(again.fd >= 0, "open %s: %d", path, again.fd);
	expect_run(&again, good, 1, "/proc/self/fd");
	expect_run(&again, bad, 0, "/proc/self/fd");
	uint32_t there = schedule(&again, prog, prog_bad_d_refs, 4);
	expect_run(&d, there, 0, "made through /proc/self/fd");
	close(again.fd);
	cdev_close(&d);
}

/* ---- storm ---- */

/* Threads, each with its own ring on the one open file, building,
 * running and destroying schedules by random paths (seeded, printed),
 * while another thread dups and closes the fd and forks children that
 * submit what they inherited: every certified submit runs (or gets
 * EBUSY, the driver's word for one executing), every failing one is
 * refused, and nothing hangs or crashes. */
struct storm {
	int fd;
	uint32_t prog;
	unsigned int seed;
	atomic_int *stop;
};

static void *storm_thread(void *arg)
{
	struct storm *st = arg;
	struct cdev d = { .fd = st->fd, .path = CP_URING,
			  .next_user_data = 0x1000 };
	if (io_uring_queue_init(8, &d.ring, IORING_SETUP_SQE128) != 0) {
		check(0, "ring");
		return NULL;
	}
	d.have_ring = 1;
	unsigned int r = st->seed;
	for (int i = 0; i < 60; i++) {
		int good = rand_r(&r) & 1;
		d.path = rand_r(&r) & 1 ? CP_URING : CP_IOCTL;
		uint32_t s = 0;
		int rc = cdev_schedule(&d, st->prog, &s);
		if (rc == 0)
			rc = good ? cdev_append(&d, s, prog_good_refs, 2)
				  : cdev_append(&d, s, prog_bad_d_refs, 4);
		check(rc == 0, "storm: build %d", rc);
		d.path = rand_r(&r) & 1 ? CP_URING : CP_IOCTL;
		uint64_t seqno = 0;
		rc = cdev_submit(&d, s, &seqno);
		if (rc == 0)
			rc = cdev_wait(&d, seqno);
		check(good ? rc == 0 || rc == -EBUSY : rc == -EPERM,
		      "storm: %s schedule %u: %d", good ? "certified"
		      : "failing", s, rc);
		do
			rc = cdev_destroy_schedule(&d, s);
		while (rc == -EBUSY);
		check(rc == 0, "storm: destroy %d", rc);
	}
	io_uring_queue_exit(&d.ring);
	return NULL;
}

static void *storm_forker(void *arg)
{
	struct storm *st = arg;
	struct cdev d = { .fd = st->fd, .path = CP_IOCTL };
	uint32_t good = schedule(&d, st->prog, prog_good_refs, 2);
	while (!atomic_load(st->stop)) {
		int copy = dup(st->fd);
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			struct cdev c = { .fd = copy, .path = CP_IOCTL };
			uint64_t seqno = 0;
			int rc = cdev_submit(&c, good, &seqno);
			_exit(rc == 0 || rc == -EBUSY ? 0 : 1);
		}
		int status = 0;
		waitpid(pid, &status, 0);
		check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "storm: forked child %d", status);
		close(copy);
	}
	return NULL;
}

static void cmd_storm(unsigned int seed)
{
	printf("storm: seed %u\n", seed);
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t prog = program(&d, PROG_GOOD);
	atomic_int stop = 0;
	struct storm st[4];
	pthread_t t[4], forker;
	for (int i = 0; i < 4; i++) {
		st[i] = (struct storm){ d.fd, prog, seed + (unsigned int)i,
					&stop };
		pthread_create(&t[i], NULL, storm_thread, &st[i]);
	}
	pthread_create(&forker, NULL, storm_forker, &st[0]);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	atomic_store(&stop, 1);
	pthread_join(forker, NULL);
	cdev_close(&d);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: guard-attack SUBCOMMAND\n");
		return 2;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "forkworkers"))
		cmd_forkworkers(3);
	else if (!strcmp(cmd, "uringioctl"))
		cmd_uringioctl();
	else if (!strcmp(cmd, "scm"))
		cmd_scm();
	else if (!strcmp(cmd, "appseal"))
		cmd_appseal();
	else if (!strcmp(cmd, "reprogram"))
		cmd_reprogram();
	else if (!strcmp(cmd, "reprogramfork"))
		cmd_reprogramfork();
	else if (!strcmp(cmd, "linked"))
		cmd_linked();
	else if (!strcmp(cmd, "storm"))
		cmd_storm(argc > 2 ? (unsigned int)atoi(argv[2]) : 1);
	else if (!strcmp(cmd, "procfd"))
		cmd_procfd();
	else {
		fprintf(stderr, "guard-attack: unknown subcommand %s\n", cmd);
		return 2;
	}
	return atomic_load(&failures) ? 1 : 0;
}
