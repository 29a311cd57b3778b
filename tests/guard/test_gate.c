/* SPDX-License-Identifier: MIT */
/*
 * The guard as a gate (issue 11), on the fake driver with seals: one
 * handler per request for both front ends (the batch limit on both
 * paths), every approved submit sealed with the mirror's seal, and the
 * holes a mirror alone cannot close (an fd copy kcmp cannot match,
 * another process sharing the open file, an APPEND to a handle not made
 * yet, an SQE rewritten after its check) ending in a blocked or refused
 * submission, never in an uncertified run; and a mirror that follows
 * the driver through io_uring (an append its link chain may cancel
 * blocks its schedule, saying why, rather than certify a guess; an
 * append holds its schedule until the kernel has it).
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <arenaguard/guard_api.h>

#include "../../contract/image.h"  /* ARENA_MAX_APPEND: the batch limit */
#include "fake.h"
#include "attach.h"
#include "devices.h"
#include "driver.h"
#include "mirror.h"
#include "options.h"
#include "stats.h"
#include "uring.h"
#include "util.h"
#include "progs.h"
#include "spawn.h"
#include "suites.h"


/* A device file as the guard makes it when it first sees fd: sealed
 * (or matched by context), and in the fd table. */
static struct ag_file *attach(int fd)
{
	struct ag_file *f = ag_file_attach(fd);
	ck_assert_ptr_nonnull(f);
	ag_fd_set(fd, f);
	return f;
}

static void forget(int fd, struct ag_file *f)
{
	ag_fd_forget(fd);
	ag_file_unref(f);
}

/* The fake driver, a sealed file on FAKE_FD and a good program on it. */
static struct ag_file *start(uint32_t *prog)
{
	fake_setup();
	struct ag_file *f = attach(FAKE_FD);
	*prog = fake_program(f, PROG_GOOD);
	return f;
}

/* Through fd: schedule h destroyed and made again, failing (D), under
 * the same handle.  Whether it all succeeded (no ck_assert: a forked
 * child calls it too). */
static int remake_failing(struct ag_file *f, int fd, uint32_t prog,
			  uint32_t h)
{
	struct drm_arena_handle d = { .handle = h };
	struct drm_arena_schedule_create c = { .program = prog };
	if (fake_call_fd(f, fd, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, &d) != 0 ||
	    fake_call_fd(f, fd, DRM_IOCTL_ARENA_SCHEDULE_CREATE, &c) != 0 ||
	    c.handle != h)
		return 0;
	struct drm_arena_schedule_append a = {
		.schedule = h, .count = 4, .refs = (uintptr_t)prog_bad_d_refs };
	return fake_call_fd(f, fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a) == 0;
}

/* References the mirror holds for schedule h of f. */
static uint64_t mirrored(struct ag_file *f, uint32_t h)
{
	struct ag_sched *s = ag_sched_lock(f, h);
	ck_assert_ptr_nonnull(s);
	uint64_t n = ag_sched_length(s);
	ag_sched_unlock(s);
	return n;
}

/* ---- io_uring, the kernel played by the test ---- */

static void ring_open(struct io_uring *ring)
{
	ck_assert_int_eq(io_uring_queue_init(16, ring, IORING_SETUP_SQE128),
			 0);
}

static struct io_uring_sqe *cmd_sqe(struct io_uring *ring, int fd,
				    uint32_t op, const void *arg, size_t size)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	ck_assert_ptr_nonnull(sqe);
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = op;
	memcpy(sqe->cmd, arg, size);
	return sqe;
}

/* The pending SQEs are taken as if handed to the kernel, which has not
 * run them yet (the test does, with fake_run_sqe). */
static void handed_over(struct io_uring *ring, struct ag_held *held)
{
	ring->sq.sqe_head = ring->sq.sqe_tail;
	ag_uring_release(ring, held);
}

/* ---- one handler per request: uapi.h's batch limit on both paths ---- */

static struct ac_ref *many_refs(uint64_t n)
{
	struct ac_ref *v = malloc(n * sizeof(*v));
	ck_assert_ptr_nonnull(v);
	for (uint64_t i = 0; i < n; i++)
		v[i] = (struct ac_ref){ 0, 1 };     /* well formed: P */
	return v;
}

START_TEST(test_batch_limit_ioctl)
{
	uint32_t prog;
	struct ag_file *f = start(&prog);
	uint32_t h = fake_schedule(f, prog, prog_good_refs, 0, 1);
	struct ac_ref *v = many_refs(ARENA_MAX_APPEND + 1);
	const uint32_t counts[] = { ARENA_MAX_APPEND + 1, UINT32_MAX };
	for (int i = 0; i < 2; i++) {
		struct drm_arena_schedule_append a = {
			.schedule = h, .count = counts[i],
			.refs = (uintptr_t)v };
		ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_APPEND,
					   &a), -EINVAL);
		ck_assert_uint_eq(mirrored(f, h), 0);
	}
	free(v);
	/* The schedule is still what both hold: its good batch runs. */
	struct drm_arena_schedule_append a = {
		.schedule = h, .count = 2, .refs = (uintptr_t)prog_good_refs };
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a), 0);
	ck_assert_int_eq(fake_submit(f, h), 0);
	ck_assert_int_eq(fake_ran().n, 1);
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(!strstr(log, "out of memory"), "%s", log);
	free(log);
	forget(FAKE_FD, f);
}
END_TEST

/* Issue 11 hole 1: the io_uring append mirrored a batch the driver
 * refuses (2^20 + 1), and answered ENOMEM for 2^32 - 1. */
START_TEST(test_batch_limit_uring)
{
	uint32_t prog;
	struct ag_file *f = start(&prog);
	uint32_t h = fake_schedule(f, prog, prog_good_refs, 0, 1);
	struct ac_ref *v = many_refs(ARENA_MAX_APPEND + 1);
	struct io_uring ring;
	ring_open(&ring);
	const uint32_t counts[] = { ARENA_MAX_APPEND + 1, UINT32_MAX };
	for (int i = 0; i < 2; i++) {
		struct drm_arena_schedule_append a = {
			.schedule = h, .count = counts[i],
			.refs = (uintptr_t)v };
		struct io_uring_sqe *sqe = cmd_sqe(&ring, FAKE_FD,
						   ARENA_URING_CMD_APPEND,
						   &a, sizeof(a));
		struct ag_held *held = ag_uring_check(&ring);
		ck_assert_int_eq(fake_run_sqe(sqe), -EINVAL);
		handed_over(&ring, held);
		ck_assert_uint_eq(mirrored(f, h), 0);
	}
	free(v);
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(!strstr(log, "out of memory"), "%s", log);
	free(log);
	io_uring_queue_exit(&ring);
	forget(FAKE_FD, f);
}
END_TEST

/* ---- sealed submissions ---- */

/* A plain io_uring submit of schedule on FAKE_FD through the guard's
 * check, run by the fake driver: its result; *op is the command the
 * guard left in the SQE. */
static int uring_submit(uint32_t schedule, uint32_t *op)
{
	struct io_uring ring;
	ring_open(&ring);
	struct arena_uring_submit u = { .schedule = schedule };
	struct io_uring_sqe *sqe = cmd_sqe(&ring, FAKE_FD,
					   ARENA_URING_CMD_SUBMIT, &u,
					   sizeof(u));
	struct ag_held *held = ag_uring_check(&ring);
	*op = sqe->cmd_op;
	int rc = fake_run_sqe(sqe);
	handed_over(&ring, held);
	io_uring_queue_exit(&ring);
	return rc;
}

/* Every approved submit reaches the driver sealed with the mirror's
 * seal, whatever the application put in its own sealed request (which
 * it gets back as it was); a failing one is still blocked. */
START_TEST(test_submits_are_sealed)
{
	fake_setup();
	struct ag_file *f = attach(FAKE_FD);
	ck_assert(ag_file_sealed(f));
	uint32_t prog = fake_program(f, PROG_GOOD);
	uint32_t good = fake_schedule(f, prog, prog_good_refs, 2, 1);
	uint32_t bad = fake_schedule(f, prog, prog_bad_d_refs, 4, 2);
	ck_assert_int_eq(fake_submit(f, good), 0);
	ck_assert_int_eq(fake_calls[DRM_ARENA_SCHEDULE_SUBMIT], 0);
	ck_assert_int_eq(fake_calls[DRM_ARENA_SCHEDULE_SUBMIT_SEALED], 1);

	/* The application's own seal and algorithm (both wrong) are
	 * replaced by the mirror's for the driver, and given back. */
	struct drm_arena_schedule_submit_sealed own = { .schedule = good,
							.algorithm = 9 };
	memset(own.seal, 0x5a, sizeof(own.seal));
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED,
				   &own), 0);
	ck_assert_uint_eq(own.algorithm, 9);
	ck_assert_uint_eq(own.seal[0], 0x5a);
	ck_assert_uint_eq(own.seal[ARENA_SEAL_BYTES - 1], 0x5a);
	ck_assert_uint_eq(own.seqno, 1);
	own.schedule = bad;
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED,
				   &own), -EPERM);
	ck_assert_int_eq(fake_submit(f, bad), -EPERM);
	ck_assert_int_eq(fake_ran().n, 2);

	/* The same by io_uring: the SQE becomes the sealed submit. */
	uint32_t op;
	ck_assert_int_eq(uring_submit(good, &op), 0);
	ck_assert_uint_eq(op, ARENA_URING_CMD_SUBMIT_SEALED);
	ck_assert_int_eq(fake_ran().n, 3);
	forget(FAKE_FD, f);
}
END_TEST

/* A request the guard never saw (here straight to the driver) makes the
 * mirror diverge: the driver refuses the sealed submit, and the guard
 * writes one clear record and counts it blocked. */
START_TEST(test_divergence_refused)
{
	uint32_t prog;
	struct ag_file *f = start(&prog);
	uint32_t h = fake_schedule(f, prog, prog_good_refs, 2, 2);
	struct drm_arena_schedule_append raw = {
		.schedule = h, .count = 4, .refs = (uintptr_t)prog_bad_d_refs };
	ck_assert_int_eq(ag_driver_ioctl(FAKE_FD,
					 DRM_IOCTL_ARENA_SCHEDULE_APPEND, &raw),
			 0);
	unsigned long long blocked = atomic_load(&ag_stats.blocked);
	ck_assert_int_eq(fake_submit(f, h), -EKEYREJECTED);
	ck_assert_int_eq(fake_submit(f, h), -EKEYREJECTED);
	ck_assert_int_eq(fake_ran().n, 0);
	ck_assert_uint_eq(atomic_load(&ag_stats.blocked), blocked + 2);
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(count(log, "arenaguard: blocked submission of") == 1 &&
		      strstr(log, "the driver refused the sealed submission "
			     "(EKEYREJECTED)"), "%s", log);
	free(log);
	forget(FAKE_FD, f);
}
END_TEST

/* A driver that seals the open file but offers no seal algorithm the
 * guard computes (0: one from before algorithms, with the XXH64 seal;
 * bit 5: one unknown): the guard cannot seal, and the driver would
 * refuse an unsealed submit.  It blocks every submit (EPERM, the driver
 * not asked), a certified one too, with a record saying why; it never
 * falls back to an unsealed submit. */
START_TEST(test_no_known_seal_algorithm)
{
	const uint32_t offers[] = { 0, 1u << 5 };
	fake_setup();
	fake_seal_algorithms(offers[_i]);
	struct ag_file *f = attach(FAKE_FD);
	ck_assert(ag_file_sealed(f));
	uint32_t prog = fake_program(f, PROG_GOOD);
	uint32_t good = fake_schedule(f, prog, prog_good_refs, 2, 1);
	unsigned long long blocked = atomic_load(&ag_stats.blocked);
	ck_assert_int_eq(fake_submit(f, good), -EPERM);
	struct drm_arena_schedule_submit_sealed own = {
		.schedule = good, .algorithm = ARENA_SEAL_SHA256 };
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED,
				   &own), -EPERM);
	ck_assert_int_eq(fake_calls[DRM_ARENA_SCHEDULE_SUBMIT], 0);
	ck_assert_int_eq(fake_calls[DRM_ARENA_SCHEDULE_SUBMIT_SEALED], 0);
	ck_assert_int_eq(fake_ran().n, 0);
	ck_assert_uint_eq(atomic_load(&ag_stats.blocked), blocked + 2);

	/* The same by io_uring: the SQE never reaches the driver. */
	uint32_t op;
	ck_assert_int_eq(uring_submit(good, &op), -EPERM);
	ck_assert_int_eq(fake_ran().n, 0);

	char *log = slurp(scratch_path("log"));
	char want[160];
	snprintf(want, sizeof(want), "offers no seal algorithm the guard "
		 "computes (algorithms 0x%x", offers[_i]);
	ck_assert_msg(strstr(log, "arenaguard: blocked submission of") &&
		      strstr(log, want), "%s", log);
	ck_assert_msg(count(log, "offers no seal algorithm the guard computes "
			    "(DRM_IOCTL_ARENA_SEAL") == 1, "%s", log);
	free(log);
	forget(FAKE_FD, f);
}
END_TEST

/* A submit the seal blocks is a refusal like any other for
 * arenaguard_last_refusal (guard_api.h: "for every refusal"): the
 * thread's last refusal names it, not an earlier one.  Both seal paths:
 * a driver that offers no algorithm the guard computes (EPERM), and a
 * mirror the driver refused the seal of (EKEYREJECTED). */
START_TEST(test_seal_refusal_noted)
{
	char buf[8192];
	char want[64];
	fake_setup();
	fake_seal_algorithms(0);
	struct ag_file *f = attach(FAKE_FD);
	uint32_t prog = fake_program(f, PROG_GOOD);
	uint32_t bad = fake_schedule(f, prog, prog_bad_d_refs, 4, 1);
	uint32_t good = fake_schedule(f, prog, prog_good_refs, 2, 2);
	arenaguard_last_refusal(buf, sizeof(buf), 1);
	/* An earlier refusal of this thread: the failing schedule. */
	ck_assert_int_eq(fake_submit(f, bad), -EPERM);
	ck_assert_int_gt(arenaguard_last_refusal(buf, sizeof(buf), 0), 0);
	/* Then the certified one, blocked for want of an algorithm. */
	ck_assert_int_eq(fake_submit(f, good), -EPERM);
	ck_assert_int_gt(arenaguard_last_refusal(buf, sizeof(buf), 1), 0);
	snprintf(want, sizeof(want), "blocked submission of schedule %u ",
		 good);
	ck_assert_msg(strstr(buf, want) == buf &&
		      strstr(buf, "no seal algorithm the guard computes"),
		      "%s", buf);
	forget(FAKE_FD, f);

	/* Divergence: the driver refuses the guard's seal. */
	f = start(&prog);
	uint32_t h = fake_schedule(f, prog, prog_good_refs, 2, 2);
	struct drm_arena_schedule_append raw = {
		.schedule = h, .count = 4, .refs = (uintptr_t)prog_bad_d_refs };
	ck_assert_int_eq(ag_driver_ioctl(FAKE_FD,
					 DRM_IOCTL_ARENA_SCHEDULE_APPEND, &raw),
			 0);
	arenaguard_last_refusal(buf, sizeof(buf), 1);
	ck_assert_int_eq(fake_submit(f, h), -EKEYREJECTED);
	ck_assert_int_gt(arenaguard_last_refusal(buf, sizeof(buf), 1), 0);
	snprintf(want, sizeof(want), "blocked submission of schedule %u ", h);
	ck_assert_msg(strstr(buf, want) == buf &&
		      strstr(buf, "EKEYREJECTED"), "%s", buf);
	forget(FAKE_FD, f);
}
END_TEST

/* Warn mode on a driver that offers no algorithm the guard computes:
 * a failing submit cannot be let through (it cannot be sealed), so it is
 * blocked; it is one submission with one outcome, counted blocked, not
 * also warned, and its records do not say it was submitted. */
START_TEST(test_no_known_seal_algorithm_warn)
{
	fake_setup();
	fake_seal_algorithms(0);
	ag_cfg.mode = AG_WARN;
	struct ag_file *f = attach(FAKE_FD);
	uint32_t prog = fake_program(f, PROG_GOOD);
	uint32_t bad = fake_schedule(f, prog, prog_bad_d_refs, 4, 1);
	unsigned long long blocked = atomic_load(&ag_stats.blocked);
	unsigned long long warned = atomic_load(&ag_stats.warned);
	int rc = fake_submit(f, bad);
	unsigned long long now_blocked = atomic_load(&ag_stats.blocked);
	unsigned long long now_warned = atomic_load(&ag_stats.warned);
	ag_cfg.mode = AG_ENFORCE;
	ck_assert_int_eq(rc, -EPERM);
	ck_assert_int_eq(fake_ran().n, 0);
	ck_assert_uint_eq(now_blocked, blocked + 1);
	ck_assert_uint_eq(now_warned, warned);
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(!strstr(log, "warning: submitting") &&
		      count(log, "arenaguard: blocked submission of") == 1,
		      "%s", log);
	free(log);
	forget(FAKE_FD, f);
}
END_TEST

/* A driver without seals: said once, with what cannot be guaranteed;
 * submits go as before. */
START_TEST(test_driver_without_seals)
{
	fake_setup();
	fake_without_seals();
	struct ag_file *f = attach(FAKE_FD);
	struct ag_file *g = attach(FAKE_FD_OTHER);
	ck_assert(!ag_file_sealed(f) && !ag_file_sealed(g));
	uint32_t prog = fake_program(f, PROG_GOOD);
	uint32_t h = fake_schedule(f, prog, prog_good_refs, 2, 2);
	ck_assert_int_eq(fake_submit(f, h), 0);
	ck_assert_int_eq(fake_calls[DRM_ARENA_SCHEDULE_SUBMIT], 1);
	ck_assert_int_eq(fake_calls[DRM_ARENA_SCHEDULE_SUBMIT_SEALED], 0);
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(count(log, "the driver does not seal submissions") == 1,
		      "%s", log);
	ck_assert_msg(strstr(log, "another process sharing the open file"),
		      "%s", log);
	free(log);
	forget(FAKE_FD_OTHER, g);
	forget(FAKE_FD, f);
}
END_TEST

/* A driver with seals that refuses SEAL for another reason than having
 * none (a seccomp filter's EPERM, say): the guard says so, with the
 * error, not that the driver has no seals (attack30).  The open file
 * stays unsealed; submits go as on a driver without seals. */
START_TEST(test_seal_refused_says_why)
{
	fake_setup();
	fake_fail(DRM_IOCTL_ARENA_SEAL, EPERM, 1);
	struct ag_file *f = attach(FAKE_FD);
	ck_assert(!ag_file_sealed(f));
	uint32_t prog = fake_program(f, PROG_GOOD);
	uint32_t h = fake_schedule(f, prog, prog_good_refs, 2, 2);
	ck_assert_int_eq(fake_submit(f, h), 0);
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(count(log, "the driver refused to seal fd 42 "
			    "(DRM_IOCTL_ARENA_SEAL: Operation not "
			    "permitted)") == 1, "%s", log);
	ck_assert_msg(!strstr(log, "does not seal"), "%s", log);
	free(log);
	forget(FAKE_FD, f);
}
END_TEST

/* A driver that answers SEAL with EINTR every time: the guard asks
 * SEAL_TRIES (4) times, then gives up with EINTR, said once, keeping
 * nothing (at 97c4a30 it asked until the driver answered otherwise:
 * here 2^30 times, then sealed); a
 * driver interrupted fewer times seals the file. */
START_TEST(test_seal_eintr_bounded)
{
	fake_setup();
	fake_fail(DRM_IOCTL_ARENA_SEAL, EINTR, 1 << 30);
	errno = 0;
	ck_assert_ptr_null(ag_file_attach(FAKE_FD));
	ck_assert_int_eq(errno, EINTR);
	ck_assert_ptr_null(ag_file_attach(FAKE_FD));
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(count(log, "the driver answered DRM_IOCTL_ARENA_SEAL on "
			    "fd 42 with EINTR 4 times in a row") == 1,
		      "%s", log);
	free(log);
	fake_fail(DRM_IOCTL_ARENA_SEAL, EINTR, 3);
	struct ag_file *f = attach(FAKE_FD);
	ck_assert(ag_file_sealed(f));
	forget(FAKE_FD, f);
}
END_TEST

/* ---- the holes ---- */

/* Issue 11 hole 3: an F_DUPFD copy that kcmp cannot match (it is not
 * asked here: attach is what the guard does then) is matched by its
 * context id, so it shares the original's mirror: a schedule destroyed
 * and made again under the same handle through the copy is the one the
 * original's submit finds. */
START_TEST(test_fd_copy_shares_mirror)
{
	fake_setup();
	struct ag_file *f = attach(FAKE_FD);
	struct ag_file *copy = attach(FAKE_FD_COPY);
	ck_assert_ptr_eq(copy, f);
	ck_assert_uint_eq(ag_file_context(f), 1000);
	struct ag_file *other = attach(FAKE_FD_OTHER);
	ck_assert_ptr_ne(other, f);

	uint32_t prog = fake_program(f, PROG_GOOD);
	uint32_t h = fake_schedule(f, prog, prog_good_refs, 2, 2);
	ck_assert_int_eq(fake_submit(f, h), 0);
	ck_assert(remake_failing(copy, FAKE_FD_COPY, prog, h));
	ck_assert_int_eq(fake_submit(f, h), -EPERM);
	ck_assert_int_eq(fake_ran().n, 1);
	forget(FAKE_FD_OTHER, other);
	forget(FAKE_FD_COPY, copy);
	forget(FAKE_FD, f);
}
END_TEST

/* attach.c's teardown hook (ag_file_on_teardown, registered by
 * ag_file_attach): a file whose last reference is gone leaves no entry
 * of its context id behind.  Such an entry would point at the struct,
 * which the next ag_file_new reuses for another open file: a later fd of
 * that context (the fake's contexts recur: 1000 for FAKE_FD) would be
 * given the other open file's mirror. */
START_TEST(test_teardown_forgets_context)
{
	fake_setup();
	struct ag_file *f = attach(FAKE_FD);
	ck_assert_uint_eq(ag_file_context(f), 1000);
	forget(FAKE_FD, f);                 /* its last reference */
	/* The reusable files are taken until f's struct comes back, as
	 * another open file's (not sealed: context 0). */
	struct ag_file *kept[64], *other = NULL;
	int n = 0;
	while (n < 64 && (other = ag_file_new()) && other != f)
		kept[n++] = other;
	ck_assert_ptr_eq(other, f);
	struct ag_file *again = attach(FAKE_FD);
	ck_assert_ptr_ne(again, other);
	ck_assert_uint_eq(ag_file_context(again), 1000);
	ck_assert_uint_eq(ag_file_context(other), 0);
	forget(FAKE_FD, again);
	ag_file_unref(other);
	while (n > 0)
		ag_file_unref(kept[--n]);
}
END_TEST

/* Issue 11 hole 4: another process sharing the open file (a forked
 * child, the driver's state being shared) destroys a certified schedule
 * and makes a failing one, which the driver numbers the same; this
 * process's mirror still says certified, and the driver refuses it. */
START_TEST(test_other_process_refused)
{
	uint32_t prog;
	struct ag_file *f = start(&prog);
	uint32_t h = fake_schedule(f, prog, prog_good_refs, 2, 2);
	ck_assert_int_eq(fake_submit(f, h), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(remake_failing(f, FAKE_FD, prog, h) ? 0 : 1);
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the other process could not stage it");
	ck_assert_int_eq(fake_submit(f, h), -EKEYREJECTED);
	ck_assert_int_eq(fake_ran().n, 1);
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(strstr(log, "EKEYREJECTED"), "%s", log);
	free(log);
	forget(FAKE_FD, f);
}
END_TEST

/* Issue 11 hole 7: an io_uring APPEND to a handle the guard does not
 * know is answered ENOENT, not forwarded: a create in between (another
 * thread's) would otherwise give the handle a schedule whose driver
 * references the mirror lacks. */
START_TEST(test_uring_append_unknown)
{
	uint32_t prog;
	struct ag_file *f = start(&prog);
	struct io_uring ring;
	ring_open(&ring);
	uint32_t next = prog + 1;      /* the handle the next create gets */
	struct drm_arena_schedule_append a = {
		.schedule = next, .count = 4, .refs = (uintptr_t)prog_bad_d_refs };
	struct io_uring_sqe *sqe = cmd_sqe(&ring, FAKE_FD,
					   ARENA_URING_CMD_APPEND, &a,
					   sizeof(a));
	struct ag_held *held = ag_uring_check(&ring);
	uint32_t h = fake_schedule(f, prog, prog_good_refs, 2, 2);
	ck_assert_uint_eq(h, next);
	ck_assert_int_eq(fake_run_sqe(sqe), -ENOENT);
	handed_over(&ring, held);
	ck_assert_int_eq(fake_submit(f, h), 0);
	struct fake_ran ran = fake_ran();
	ck_assert_int_eq(ran.n, 1);
	ck_assert_uint_eq(ran.n_refs, 2);       /* what was certified */
	io_uring_queue_exit(&ring);
	forget(FAKE_FD, f);
}
END_TEST

/* The same race by ioctl: another thread's create lands while an
 * append to a handle the mirror does not know is in the driver.  The
 * append is forwarded with the file's lock held, so the create comes
 * after it and its schedule holds only what the mirror holds. */
static struct {
	struct ag_file *f;
	uint32_t prog, handle;
	int rc;
	atomic_int done;
	pthread_t thread;
} racer;

static void *create_racing(void *unused)
{
	(void)unused;
	struct drm_arena_schedule_create c = { .program = racer.prog };
	racer.rc = fake_call(racer.f, DRM_IOCTL_ARENA_SCHEDULE_CREATE, &c);
	racer.handle = c.handle;
	atomic_store(&racer.done, 1);
	return NULL;
}

/* Starts the create and gives it 200 ms to land (it cannot, with the
 * lock held: the wait is the test's whole cost). */
static void create_during_append(void)
{
	fake_on_append(NULL);
	ck_assert_int_eq(pthread_create(&racer.thread, NULL, create_racing,
					NULL), 0);
	for (int i = 0; i < 200 && !atomic_load(&racer.done); i++)
		usleep(1000);
}

START_TEST(test_ioctl_append_unknown_races_create)
{
	uint32_t prog;
	struct ag_file *f = start(&prog);
	racer.f = f;
	racer.prog = prog;
	atomic_store(&racer.done, 0);
	fake_on_append(create_during_append);
	uint32_t next = prog + 1;      /* the handle the next create gets */
	struct drm_arena_schedule_append a = {
		.schedule = next, .count = 4, .refs = (uintptr_t)prog_bad_d_refs };
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a), 0);
	ck_assert_int_eq(pthread_join(racer.thread, NULL), 0);
	ck_assert_int_eq(racer.rc, 0);
	ck_assert_uint_eq(racer.handle, next);
	a = (struct drm_arena_schedule_append){
		.schedule = next, .count = 2, .refs = (uintptr_t)prog_good_refs };
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a), 0);
	ck_assert_int_eq(fake_submit(f, next), 0);
	ck_assert_uint_eq(fake_ran().n_refs, 2);
	forget(FAKE_FD, f);
}
END_TEST

/* Issue 11 hole 8: another thread rewrites an approved SQE's schedule
 * after the check; the SQE carries the checked schedule's seal, and the
 * driver refuses the other. */
START_TEST(test_sqe_rewritten_after_check)
{
	uint32_t prog;
	struct ag_file *f = start(&prog);
	uint32_t good = fake_schedule(f, prog, prog_good_refs, 2, 2);
	uint32_t bad = fake_schedule(f, prog, prog_bad_d_refs, 4, 4);
	struct io_uring ring;
	ring_open(&ring);
	struct arena_uring_submit u = { .schedule = good };
	struct io_uring_sqe *sqe = cmd_sqe(&ring, FAKE_FD,
					   ARENA_URING_CMD_SUBMIT, &u,
					   sizeof(u));
	struct ag_held *held = ag_uring_check(&ring);
	ck_assert_int_eq(sqe->opcode, IORING_OP_URING_CMD);     /* approved */
	memcpy(sqe->cmd, &bad, sizeof(bad));        /* the other thread */
	ck_assert_int_eq(fake_run_sqe(sqe), -EKEYREJECTED);
	handed_over(&ring, held);
	ck_assert_int_eq(fake_ran().n, 0);
	io_uring_queue_exit(&ring);
	forget(FAKE_FD, f);
}
END_TEST

/* ---- the mirror follows the driver (io_uring) ---- */

/* A ring on a fresh fake driver, with seals or without (`sealed`): the
 * good program on FAKE_FD and an empty schedule of it, whose handles
 * are *prog and *h. */
static struct ag_file *start_ring(int sealed, struct io_uring *ring,
				  uint32_t *prog, uint32_t *h)
{
	fake_setup();
	if (!sealed)
		fake_without_seals();
	struct ag_file *f = attach(FAKE_FD);
	ck_assert_int_eq(ag_file_sealed(f), sealed);
	*prog = fake_program(f, PROG_GOOD);
	*h = fake_schedule(f, *prog, prog_good_refs, 0, 1);
	ring_open(ring);
	return f;
}

static struct io_uring_sqe *append_sqe(struct io_uring *ring, uint32_t h,
				       const struct ac_ref *refs, uint32_t n,
				       unsigned int flags)
{
	struct drm_arena_schedule_append a = {
		.schedule = h, .count = n, .refs = (uintptr_t)refs };
	struct io_uring_sqe *sqe = cmd_sqe(ring, FAKE_FD,
					   ARENA_URING_CMD_APPEND, &a,
					   sizeof(a));
	sqe->flags = (uint8_t)flags;
	return sqe;
}

/* The guard blocked h's submit (EPERM, the driver not asked) and said
 * why: an append it could not know taken. */
static void blocked_as_uncertain(struct ag_file *f, uint32_t h)
{
	ck_assert_int_eq(fake_submit(f, h), -EPERM);
	ck_assert_int_eq(fake_ran().n, 0);
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(strstr(log, "an io_uring append linked after a request "
			     "that may fail and cancel it"), "%s", log);
	free(log);
}

struct held_submit {
	struct ag_file *f;
	uint32_t h;
	int rc;
	atomic_int done;
};

static void *held_submit_thread(void *arg)
{
	struct held_submit *a = arg;
	a->rc = fake_submit(a->f, a->h);
	atomic_store(&a->done, 1);
	return NULL;
}

/* Another thread's io_uring append is between its check and the driver
 * (mirrored, its seal counted, not yet taken) when this thread submits
 * the schedule by ioctl.  The submit must not be sealed with references
 * the driver does not hold yet: it waits for the append to reach the
 * driver (as an ioctl append does), then runs; it is not refused
 * EKEYREJECTED with a record blaming "a request the guard did not see,
 * or another process". */
START_TEST(test_submit_waits_for_held_append)
{
	struct io_uring ring;
	uint32_t prog, h;
	struct ag_file *f = start_ring(1, &ring, &prog, &h);
	struct io_uring_sqe *sqe = append_sqe(&ring, h, prog_good_refs, 2, 0);
	struct ag_held *held = ag_uring_check(&ring);
	struct held_submit a = { f, h, 1, 0 };
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, held_submit_thread, &a), 0);
	usleep(200 * 1000);
	int early = atomic_load(&a.done);
	int early_rc = a.rc;
	ck_assert_int_eq(fake_run_sqe(sqe), 0);
	handed_over(&ring, held);
	pthread_join(th, NULL);
	ck_assert_msg(!early, "the submit did not wait for the held append: "
		      "%d", early_rc);
	ck_assert_int_eq(a.rc, 0);
	ck_assert_int_eq(fake_ran().n, 1);
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(!strstr(log, "EKEYREJECTED"), "%s", log);
	free(log);
	io_uring_queue_exit(&ring);
	forget(FAKE_FD, f);
}
END_TEST

/* fuzz_guard (fuzz/corpus/fuzz_guard/linked-append-cancelled.bin): an
 * append linked after a device command the driver fails (an unknown
 * cmd_op: ENOTTY) is cancelled by the kernel.  The guard cannot know
 * that: on a sealed file too, the schedule's submit is blocked with the
 * reason, not certified on a mirror longer than the driver's schedule
 * (which the seal then refused, with no word of why).  _i: sealed. */
START_TEST(test_linked_append_cancelled)
{
	struct io_uring ring;
	uint32_t prog, h;
	struct ag_file *f = start_ring(_i, &ring, &prog, &h);
	struct io_uring_sqe *fails = cmd_sqe(&ring, FAKE_FD, 99, &h,
					     sizeof(h));
	fails->flags = IOSQE_IO_LINK;
	append_sqe(&ring, h, prog_good_refs, 2, 0);
	struct ag_held *held = ag_uring_check(&ring);
	ck_assert_int_eq(fake_run_sqe(fails), -ENOTTY);
	/* ... and the kernel cancels the append: it never runs. */
	handed_over(&ring, held);
	blocked_as_uncertain(f, h);
	io_uring_queue_exit(&ring);
	forget(FAKE_FD, f);
}
END_TEST

/* The same for an append after an approved submit (which the kernel
 * may fail: a sequence number pointer that faults) and after an append
 * whose flags the kernel refuses (IOSQE_BUFFER_SELECT): neither is an
 * append the driver can only refuse for want of its own resources.
 * _i: sealed. */
START_TEST(test_linked_append_after_may_fail)
{
	for (int k = 0; k < 2; k++) {
		struct io_uring ring;
		uint32_t prog, h;
		struct ag_file *f = start_ring(_i, &ring, &prog, &h);
		struct io_uring_sqe *first;
		if (k == 0) {
			struct drm_arena_schedule_append a = {
				.schedule = h, .count = 1,
				.refs = (uintptr_t)prog_good_refs };
			ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_APPEND,
						   &a), 0);
			struct arena_uring_submit u = { .schedule = h,
							.seqno = 8 };
			first = cmd_sqe(&ring, FAKE_FD, ARENA_URING_CMD_SUBMIT,
					&u, sizeof(u));
			first->flags = IOSQE_IO_LINK;
			append_sqe(&ring, h, prog_good_refs + 1, 1, 0);
		} else {
			first = append_sqe(&ring, h, prog_good_refs, 1,
					   IOSQE_IO_LINK | IOSQE_BUFFER_SELECT);
			append_sqe(&ring, h, prog_good_refs + 1, 1, 0);
		}
		struct ag_held *held = ag_uring_check(&ring);
		ck_assert_int_eq(first->opcode, IORING_OP_URING_CMD);
		/* The kernel fails the first (not played) and cancels the
		 * second. */
		handed_over(&ring, held);
		blocked_as_uncertain(f, h);
		io_uring_queue_exit(&ring);
		forget(FAKE_FD, f);
	}
}
END_TEST

/* The ordinary chain, appends linked to appends and to the submit (the
 * submit runs only if every append was taken), certifies and runs, and
 * the schedule is still certified alone afterwards: an append the
 * mirror took can fail only for the driver's own want of resources.
 * Without seals this chain used to block its own submit.  _i: sealed. */
START_TEST(test_linked_chain_runs)
{
	struct io_uring ring;
	uint32_t prog, h;
	struct ag_file *f = start_ring(_i, &ring, &prog, &h);
	struct io_uring_sqe *sqe[3];
	sqe[0] = append_sqe(&ring, h, prog_good_refs, 1, IOSQE_IO_LINK);
	sqe[1] = append_sqe(&ring, h, prog_good_refs + 1, 1, IOSQE_IO_LINK);
	struct arena_uring_submit u = { .schedule = h };
	sqe[2] = cmd_sqe(&ring, FAKE_FD, ARENA_URING_CMD_SUBMIT, &u,
			 sizeof(u));
	struct ag_held *held = ag_uring_check(&ring);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(fake_run_sqe(sqe[i]), 0);
	handed_over(&ring, held);
	ck_assert_int_eq(fake_ran().n, 1);
	ck_assert_int_eq(fake_submit(f, h), 0);
	struct fake_ran ran = fake_ran();
	ck_assert_int_eq(ran.n, 2);
	ck_assert_uint_eq(ran.n_refs, 2);
	io_uring_queue_exit(&ring);
	forget(FAKE_FD, f);
}
END_TEST

/* An io_uring append holds its schedule until the kernel has it, as a
 * submit does: a destroy in between is refused (EBUSY), or the handle
 * would go to a new schedule, which the kernel's append would then
 * reach behind the mirror's back. */
START_TEST(test_append_held_against_destroy)
{
	struct io_uring ring;
	uint32_t prog, h;
	struct ag_file *f = start_ring(1, &ring, &prog, &h);
	struct io_uring_sqe *sqe = append_sqe(&ring, h, prog_bad_d_refs, 4, 0);
	struct ag_held *held = ag_uring_check(&ring);
	struct drm_arena_handle d = { .handle = h };
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, &d),
			 -EBUSY);
	ck_assert_int_eq(fake_run_sqe(sqe), 0);
	handed_over(&ring, held);
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, &d), 0);
	uint32_t again = fake_schedule(f, prog, prog_good_refs, 2, 2);
	ck_assert_uint_eq(again, h);
	ck_assert_int_eq(fake_submit(f, again), 0);
	ck_assert_uint_eq(fake_ran().n_refs, 2);
	io_uring_queue_exit(&ring);
	forget(FAKE_FD, f);
}
END_TEST

static atomic_int ioctl_append_reached;

static void note_append(void)
{
	atomic_store(&ioctl_append_reached, 1);
}

struct other_append {
	struct ag_file *f;
	uint32_t h;
	int rc;
};

static void *append_by_ioctl(void *arg)
{
	struct other_append *o = arg;
	struct drm_arena_schedule_append a = {
		.schedule = o->h, .count = 1,
		.refs = (uintptr_t)(prog_good_refs + 1) };
	o->rc = fake_call(o->f, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a);
	return NULL;
}

/* Two threads append to one schedule: one by io_uring (mirrored when
 * checked), the other by ioctl between that check and the kernel.  The
 * ioctl waits for the io_uring append to reach the driver, so that the
 * driver takes the batches in the mirror's order (else the certified
 * schedule is not the driver's: refused by the seal, and run unchecked
 * without one).  The other thread is given 200 ms to reach the driver
 * too early; with the hold it cannot, however long it is given. */
START_TEST(test_append_order_two_threads)
{
	struct io_uring ring;
	uint32_t prog, h;
	struct ag_file *f = start_ring(1, &ring, &prog, &h);
	struct io_uring_sqe *sqe = append_sqe(&ring, h, prog_good_refs, 1, 0);
	struct ag_held *held = ag_uring_check(&ring);
	atomic_store(&ioctl_append_reached, 0);
	fake_on_append(note_append);
	struct other_append o = { f, h, -1 };
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, append_by_ioctl, &o), 0);
	uint64_t until = ag_now_ns() + 200000000u;
	while (!atomic_load(&ioctl_append_reached) && ag_now_ns() < until)
		sched_yield();
	int early = atomic_load(&ioctl_append_reached);
	ck_assert_int_eq(fake_run_sqe(sqe), 0);
	handed_over(&ring, held);
	pthread_join(t, NULL);
	fake_on_append(NULL);
	ck_assert_msg(!early, "the ioctl append reached the driver before the "
		      "io_uring append mirrored first");
	ck_assert_int_eq(o.rc, 0);
	ck_assert_int_eq(fake_submit(f, h), 0);
	ck_assert_uint_eq(fake_ran().n_refs, 2);
	io_uring_queue_exit(&ring);
	forget(FAKE_FD, f);
}
END_TEST

/* ---- a submit racing a registration of the ring's files ---- */

/* The SQE at the ring's first position, the rest handed over: the
 * kernel is played by the test and never takes any. */
static struct io_uring_sqe *fixed_submit(struct io_uring *ring, uint32_t h)
{
	ring->sq.sqe_head = ring->sq.sqe_tail = 0;
	struct arena_uring_submit u = { .schedule = h };
	struct io_uring_sqe *sqe = cmd_sqe(ring, 0, ARENA_URING_CMD_SUBMIT,
					   &u, sizeof(u));
	sqe->flags |= IOSQE_FIXED_FILE;
	return sqe;
}

/* The kernel's registered slot 0: an fd of the fake's, or -1. */
static atomic_int kernel_slot0 = -1;

/* The kernel running a checked SQE: a FIXED_FILE command goes to the
 * file the kernel has in the slot, whatever the guard believed. */
static int kernel_runs(const struct io_uring_sqe *sqe)
{
	if (sqe->opcode != IORING_OP_URING_CMD || !(sqe->flags & IOSQE_FIXED_FILE))
		return fake_run_sqe(sqe);
	int fd = atomic_load(&kernel_slot0);
	if (fd < 0)
		return -EBADF;
	struct io_uring_sqe run[2];
	memcpy(run, sqe, sizeof(run));
	run[0].flags &= (uint8_t)~IOSQE_FIXED_FILE;
	run[0].fd = fd;
	return fake_run_sqe(run);
}

/* Slot 0 registered as the kernel does it, with the guard's hooks
 * around (interpose.c's io_uring_register_files). */
static void register_slot0(struct io_uring *ring, int fd)
{
	struct ag_reg g;
	ag_ring_reg_begin(&g, ring, 0, AG_REG_ALL);
	atomic_store(&kernel_slot0, fd);            /* the kernel's call */
	if (fd >= 0)
		ag_ring_files_set(ring, &fd, 1);
	else
		ag_ring_files_set(ring, NULL, 0);
	ag_ring_reg_end(&g);
}

/* Issue 11 hole 4 on a driver without seals: while a registration is
 * under way its slots are uncertain (blocked, with a record), an update
 * only its own; after it, the slot is decided by verdict.  The generic
 * io_uring_register hands the kernel the guard's copy of its struct. */
START_TEST(test_registration_window)
{
	fake_setup();
	fake_without_seals();
	struct ag_file *f = attach(FAKE_FD);
	uint32_t prog = fake_program(f, PROG_GOOD);
	uint32_t good = fake_schedule(f, prog, prog_good_refs, 2, 2);
	uint32_t bad = fake_schedule(f, prog, prog_bad_d_refs, 4, 4);
	struct io_uring ring;
	ring_open(&ring);
	struct ag_reg g;
	ag_ring_reg_begin(&g, &ring, 0, AG_REG_ALL);
	atomic_store(&kernel_slot0, FAKE_FD);       /* the kernel has it */
	struct io_uring_sqe *sqe = fixed_submit(&ring, bad);
	struct ag_held *held = ag_uring_check(&ring);
	ck_assert_int_eq(kernel_runs(sqe), -EPERM);
	handed_over(&ring, held);
	sqe = fixed_submit(&ring, good);            /* cannot know: blocked */
	held = ag_uring_check(&ring);
	ck_assert_int_eq(kernel_runs(sqe), -EPERM);
	handed_over(&ring, held);
	int fd = FAKE_FD;
	ag_ring_files_set(&ring, &fd, 1);
	ag_ring_reg_end(&g);
	ck_assert_int_eq(fake_ran().n, 0);
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(strstr(log, "registration of the ring's files may be "
			     "changing it"), "%s", log);
	free(log);
	/* Settled: decided by verdict. */
	sqe = fixed_submit(&ring, bad);
	held = ag_uring_check(&ring);
	ck_assert_int_eq(kernel_runs(sqe), -EPERM);
	handed_over(&ring, held);
	ck_assert_int_eq(fake_ran().n, 0);
	sqe = fixed_submit(&ring, good);
	held = ag_uring_check(&ring);
	ck_assert_int_eq(kernel_runs(sqe), 0);
	handed_over(&ring, held);
	ck_assert_int_eq(fake_ran().n, 1);
	/* An update of slot 5 leaves slot 0 decided. */
	ag_ring_reg_begin(&g, &ring, 5, 1);
	sqe = fixed_submit(&ring, good);
	held = ag_uring_check(&ring);
	ck_assert_int_eq(kernel_runs(sqe), 0);
	handed_over(&ring, held);
	ck_assert_int_eq(fake_ran().n, 2);
	ag_ring_reg_end(&g);
	/* The generic call's FILES_UPDATE on slot 0: the kernel reads the
	 * guard's copy, and slot 0 is pending meanwhile. */
	struct io_uring_files_update u = { .offset = 0,
					   .fds = (uintptr_t)&fd };
	const void *arg = ag_ring_register_begin(&g, (unsigned int)ring.ring_fd,
						 IORING_REGISTER_FILES_UPDATE,
						 &u, 1);
	ck_assert_ptr_ne(arg, &u);
	ck_assert_mem_eq(arg, &u, sizeof(u));
	sqe = fixed_submit(&ring, good);
	held = ag_uring_check(&ring);
	ck_assert_int_eq(kernel_runs(sqe), -EPERM);
	handed_over(&ring, held);
	ag_ring_register((unsigned int)ring.ring_fd,
			 IORING_REGISTER_FILES_UPDATE, arg, 1, 1);
	ag_ring_reg_end(&g);
	ck_assert_int_eq(fake_ran().n, 2);
	/* Two updates of slot 0 at once: the kernel ran them in an order
	 * the guard cannot know, whatever order they settle in. */
	struct ag_reg g2;
	ag_ring_reg_begin(&g, &ring, 0, 1);
	ag_ring_reg_begin(&g2, &ring, 0, 1);
	int none = -1;
	ag_ring_files_update(&ring, 0, &fd, 1);
	ag_ring_reg_end(&g);
	ag_ring_files_update(&ring, 0, &none, 1);
	ag_ring_reg_end(&g2);
	sqe = fixed_submit(&ring, good);
	held = ag_uring_check(&ring);
	ck_assert_int_eq(kernel_runs(sqe), -EPERM);
	handed_over(&ring, held);
	ck_assert_int_eq(fake_ran().n, 2);
	log = slurp(scratch_path("log"));
	ck_assert_msg(strstr(log, "two registrations of its files at once"),
		      "%s", log);
	free(log);
	register_slot0(&ring, -1);
	atomic_store(&kernel_slot0, -1);
	io_uring_queue_exit(&ring);
	forget(FAKE_FD, f);
}
END_TEST

#define REG_ROUNDS 2000

static struct io_uring race_ring;
static atomic_int race_done, race_submits;

/* Until the submitting thread has made n more submits. */
static void let_submit(int n)
{
	int until = atomic_load(&race_submits) + n;
	while (atomic_load(&race_submits) < until)
		sched_yield();
}

static void *registrar(void *unused)
{
	(void)unused;
	for (int i = 0; i < REG_ROUNDS; i++) {
		register_slot0(&race_ring, FAKE_FD);
		let_submit(2);
		register_slot0(&race_ring, -1);
		let_submit(2);
	}
	atomic_store(&race_done, 1);
	return NULL;
}

/* The same race with a thread: one registers and drops slot 0 (the
 * device) over and over while the other submits the failing and the
 * certified schedule on it (a yield between each check and the kernel,
 * to widen the window).  The failing one never runs; the certified one
 * does, on rounds where the slot is settled. */
START_TEST(test_registration_race_unsealed)
{
	fake_setup();
	fake_without_seals();
	struct ag_file *f = attach(FAKE_FD);
	uint32_t prog = fake_program(f, PROG_GOOD);
	uint32_t good = fake_schedule(f, prog, prog_good_refs, 2, 2);
	uint32_t bad = fake_schedule(f, prog, prog_bad_d_refs, 4, 4);
	ring_open(&race_ring);
	atomic_store(&race_done, 0);
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, registrar, NULL), 0);
	int runs_bad = 0, runs_good = 0, tries = 0, uncertain = 0;
	atomic_store(&race_submits, 0);
	while (!atomic_load(&race_done)) {
		uint32_t h = tries++ % 2 ? good : bad;
		struct io_uring_sqe *sqe = fixed_submit(&race_ring, h);
		struct ag_held *held = ag_uring_check(&race_ring);
		sched_yield();
		int ran = fake_ran().n;
		int rc = kernel_runs(sqe);
		handed_over(&race_ring, held);
		ck_assert(rc == 0 || rc == -EPERM || rc == -EBADF);
		if (fake_ran().n != ran) {
			runs_bad += h == bad;
			runs_good += h == good;
		}
		uncertain += h == good && rc == -EPERM;
		atomic_fetch_add(&race_submits, 1);
	}
	pthread_join(t, NULL);
	printf("registration race: %d submits, %d certified ran, %d certified "
	       "blocked as uncertain, %d failing ran\n", tries, runs_good,
	       uncertain, runs_bad);
	ck_assert_msg(runs_bad == 0, "the failing schedule ran %d times in %d "
		      "submits", runs_bad, tries);
	io_uring_queue_exit(&race_ring);
	atomic_store(&kernel_slot0, -1);
	forget(FAKE_FD, f);
}
END_TEST

/* ---- a driver slow to create ---- */

static atomic_int create_waiting, create_release, meanwhile_done;

static void slow_create(void)
{
	atomic_store(&create_waiting, 1);
	while (!atomic_load(&create_release))
		sched_yield();
}

struct slow {
	struct ag_file *f;
	uint32_t prog, sched;
	int append_rc, submit_rc;
};

static void *create_slowly(void *arg)
{
	struct slow *c = arg;
	c->prog = fake_program(c->f, PROG_GOOD);
	return NULL;
}

static void *use_meanwhile(void *arg)
{
	struct slow *c = arg;
	struct drm_arena_schedule_append a = {
		.schedule = c->sched, .count = 2,
		.refs = (uintptr_t)prog_good_refs };
	c->append_rc = fake_call(c->f, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a);
	c->submit_rc = fake_submit(c->f, c->sched);
	atomic_store(&meanwhile_done, 1);
	return NULL;
}

/* A PROGRAM_CREATE the driver takes its time over (held in the driver
 * until released) delays no append or submit of the file's schedules:
 * the file's maps are not locked across the driver's call, only its
 * creates and destroys are ordered.  Released after 2 s at most, so
 * that a regression fails rather than hangs. */
START_TEST(test_slow_create_stalls_no_submit)
{
	uint32_t prog;
	struct ag_file *f = start(&prog);
	atomic_store(&create_waiting, 0);
	atomic_store(&create_release, 0);
	atomic_store(&meanwhile_done, 0);
	struct slow c = { f, 0, fake_schedule(f, prog, prog_good_refs, 2, 2),
			  -1, -1 };
	fake_on_create(slow_create);
	pthread_t creator, user;
	ck_assert_int_eq(pthread_create(&creator, NULL, create_slowly, &c), 0);
	while (!atomic_load(&create_waiting))
		sched_yield();
	ck_assert_int_eq(pthread_create(&user, NULL, use_meanwhile, &c), 0);
	uint64_t until = ag_now_ns() + 2000000000u;
	while (!atomic_load(&meanwhile_done) && ag_now_ns() < until)
		sched_yield();
	int in_time = atomic_load(&meanwhile_done);
	atomic_store(&create_release, 1);
	pthread_join(user, NULL);
	pthread_join(creator, NULL);
	fake_on_create(NULL);
	ck_assert_msg(in_time, "an append and a submit waited for another "
		      "thread's PROGRAM_CREATE in the driver");
	ck_assert_int_eq(c.append_rc, 0);
	ck_assert_int_eq(c.submit_rc, 0);
	ck_assert_uint_ne(c.prog, 0);
	ck_assert_int_eq(fake_ran().n, 1);
	forget(FAKE_FD, f);
}
END_TEST

/* ---- the launcher ---- */

/* Issue 11 hole 6: a library path with a space or a colon, which ld.so
 * splits: the launcher refuses it (125, saying why) rather than run the
 * command unguarded. */
START_TEST(test_launcher_refuses_split_path)
{
	static const char *const dirs[] = { "with space", "with:colon" };
	for (int i = 0; i < 2; i++) {
		char dir[1024], lib[1100];
		snprintf(dir, sizeof(dir), "%s", scratch_path(dirs[i]));
		ck_assert_int_eq(mkdir(dir, 0755), 0);
		snprintf(lib, sizeof(lib), "%s/libarenaguard.so", dir);
		ck_assert_int_eq(symlink(AG_GUARD_LIB, lib), 0);
		struct run r;
		const char *env[] = { PRELOAD_SIM, NULL };
		const char *argv[] = { AG_ARENAGUARD, "--lib", lib, "--",
				       "/bin/sh", "-c", "echo ran", NULL };
		spawn(&r, env, argv);
		ck_assert_msg(r.status == 125, "exit %d\n%s\n%s", r.status,
			      r.out, r.err);
		ck_assert_msg(!strstr(r.out, "ran"), "%s", r.out);
		ck_assert_msg(strstr(r.err, "has a space or a colon"), "%s",
			      r.err);
		run_free(&r);
		unlink(lib);
	}
}
END_TEST

static void teardown(void)
{
	scratch_remove();
}

Suite *suite_gate(void)
{
	Suite *s = suite_create("gate");
	TCase *t = tcase_create("gate");
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, test_batch_limit_ioctl);
	tcase_add_test(t, test_batch_limit_uring);
	tcase_add_test(t, test_submits_are_sealed);
	tcase_add_test(t, test_divergence_refused);
	tcase_add_test(t, test_driver_without_seals);
	tcase_add_test(t, test_seal_refused_says_why);
	tcase_add_test(t, test_seal_eintr_bounded);
	tcase_add_loop_test(t, test_no_known_seal_algorithm, 0, 2);
	tcase_add_test(t, test_seal_refusal_noted);
	tcase_add_test(t, test_no_known_seal_algorithm_warn);
	tcase_add_test(t, test_submit_waits_for_held_append);
	tcase_add_test(t, test_fd_copy_shares_mirror);
	tcase_add_test(t, test_teardown_forgets_context);
	tcase_add_test(t, test_other_process_refused);
	tcase_add_test(t, test_uring_append_unknown);
	tcase_add_test(t, test_ioctl_append_unknown_races_create);
	tcase_add_test(t, test_sqe_rewritten_after_check);
	tcase_add_loop_test(t, test_linked_append_cancelled, 0, 2);
	tcase_add_loop_test(t, test_linked_append_after_may_fail, 0, 2);
	tcase_add_loop_test(t, test_linked_chain_runs, 0, 2);
	tcase_add_test(t, test_append_held_against_destroy);
	tcase_add_test(t, test_append_order_two_threads);
	tcase_add_test(t, test_registration_window);
	tcase_add_test(t, test_registration_race_unsealed);
	tcase_add_test(t, test_slow_create_stalls_no_submit);
	tcase_add_test(t, test_launcher_refuses_split_path);
	suite_add_tcase(s, t);
	return s;
}
