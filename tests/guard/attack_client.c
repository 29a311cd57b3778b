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
 *   forge        another process remakes the certified schedule and its
 *                program (handles reused) from a forged image with the
 *                same XXH64 (the retired seal) and length, failing (C)
 *   linked       io_uring appends linked to each other and to the submit
 *   procfd       the open file reached again through /proc/self/fd/N
 *   storm [SEED] threads on rings and ioctls, dups, closes and forks
 *   heldrace     one thread appends by io_uring to a new schedule while
 *                another submits it by ioctl, again and again: every
 *                submit runs (before or after the append), none is
 *                refused by the seal
 *   dup2race     another open file of the device dup2'd (dup3'd) onto
 *                the fd while a thread submits on it, by ioctl and by
 *                io_uring: the submit is decided on the file the fd
 *                becomes (preloaded libguard-duphook.so makes the
 *                request inside the guard's dup2, after the kernel's)
 *   uclose       a device fd whose schedule is certified closed by an
 *                IORING_OP_CLOSE SQE, its number given to another open
 *                file of the device (an fcntl F_DUPFD the guard does not
 *                see), whose schedule of the same handle fails: a submit
 *                on the number is decided on the file it is now; once
 *                the close completed, no descriptor (the guard's copy
 *                included) keeps the closed file open
 *   uclosewin    as uclose, with a request on the fd made between the
 *                close SQE's submission and its completion (the close
 *                hard-linked after a 500 ms timeout), the file also
 *                reachable by a dup: the request in the window runs,
 *                the one after the reuse is decided on the new file
 *   uclosecopy   a device fd named by an IORING_OP_CLOSE that is
 *                cancelled, the number of the guard's copy of its file
 *                then taken by the application (dup2 of a pipe): the
 *                pipe stays the application's, and the fd's certified
 *                schedule still runs
 *   rawclose     as uclose, the fd closed (or replaced) by glibc's
 *                syscall() function: SYS_close, SYS_close_range,
 *                SYS_dup2, SYS_dup3
 *   regstall     a submit on a registered slot held between the guard's
 *                check and the driver for 1.5 s (libguard-duphook.so)
 *                while another thread registers another open file of
 *                the device, whose schedule of the same handle fails,
 *                into that slot: the registration is refused (EAGAIN),
 *                the submit runs on the file it was checked against
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cdev.h"
#include "checks.h"
#include "fdpass.h"
#include "progs.h"

#include <xxhash.h>

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

/* fd again, received from this process itself over a socket pair. */
static int pass_fd(int fd)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return -1;
	int got = fd_send(sv[0], fd) == 0 ? fd_recv(sv[1]) : -1;
	close(sv[0]);
	close(sv[1]);
	return got < 0 ? -1 : got;
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

static void cmd_appseal(void)
{
	struct cdev d;
	open_or_exit(&d, CP_URING);
	uint32_t prog = program(&d, PROG_GOOD);
	uint32_t bad = schedule(&d, prog, prog_bad_d_refs, 4);
	uint32_t good = schedule(&d, prog, prog_good_refs, 2);
	uint8_t seal[ARENA_SEAL_BYTES];
	prog_seal(PROG_GOOD, prog_bad_d_refs, 4, seal);

	cdev_zero(&d);
	struct drm_arena_schedule_submit_sealed s = {
		.schedule = bad, .algorithm = ARENA_SEAL_SHA256 };
	memcpy(s.seal, seal, sizeof(s.seal));
	int rc = cdev_ioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED, &s);
	check(rc == -EPERM, "ioctl SUBMIT_SEALED with the right seal of a "
	      "failing schedule: %d", rc);
	struct arena_uring_submit_sealed u = {
		.schedule = bad, .algorithm = ARENA_SEAL_SHA256 };
	memcpy(u.seal, seal, sizeof(u.seal));
	rc = cdev_uring_cmd(&d, ARENA_URING_CMD_SUBMIT_SEALED, &u, sizeof(u));
	check(rc == -EPERM, "URING SUBMIT_SEALED with the right seal of a "
	      "failing schedule: %d", rc);
	check(cdev_all(&d, PROG_OUT, PROG_FLOATS, 0.0f),
	      "nothing ran");
	/* A wrong seal on a certified schedule: the guard gives its own. */
	struct drm_arena_schedule_submit_sealed g = {
		.schedule = good, .algorithm = 7, .pad = 3 };
	memset(g.seal, 0x5a, sizeof(g.seal));
	rc = cdev_ioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED, &g);
	int given_back = g.algorithm == 7 && g.pad == 3;
	for (size_t i = 0; i < sizeof(g.seal); i++)
		given_back &= g.seal[i] == 0x5a;
	check(rc == 0 && given_back, "ioctl SUBMIT_SEALED with a wrong "
	      "seal (and algorithm) of a certified schedule: %d (given back: "
	      "%d)", rc, given_back);
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

/* ---- forge ---- */

/* main's ARENA_SEAL_SEED: the XXH64 seal this attack forges. */
#define XXH64_SEAL_SEED 0x6172656e61736c31ull
#define XXH_P1 0x9E3779B185EBCA87ull
#define XXH_P2 0xC2B2AE3D27D4EB4Full

static uint64_t rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* The inverse of an odd number modulo 2^64 (Newton's iteration). */
static uint64_t inverse64(uint64_t a)
{
	uint64_t x = a;                  /* right to 3 bits */
	for (int i = 0; i < 5; i++)
		x *= 2 - a * x;
	return x;
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void set_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* XXH64's accumulator of lane `lane` after the stripes [0, stripes) of
 * s: acc = rotl(acc + word * P2, 31) * P1 per stripe, a bijection in
 * the word. */
static uint64_t xxh64_lane(const uint8_t *s, int lane, size_t stripes)
{
	const uint64_t start[4] = { XXH64_SEAL_SEED + XXH_P1 + XXH_P2,
				    XXH64_SEAL_SEED + XXH_P2, XXH64_SEAL_SEED,
				    XXH64_SEAL_SEED - XXH_P1 };
	uint64_t acc = start[lane];
	for (size_t t = 0; t < stripes; t++)
		acc = rotl64(acc + get_le64(s + 32 * t + 8 * lane) * XXH_P2,
			     31) * XXH_P1;
	return acc;
}

/* The word that takes lane accumulator `from` to `to` in one stripe. */
static uint64_t xxh64_solve(uint64_t from, uint64_t to)
{
	uint64_t rotated = to * inverse64(XXH_P1);
	return (rotl64(rotated, 33) - from) * inverse64(XXH_P2);
}

/* The main-era seal (XXH64 of le64(size) || image || refs). */
static uint64_t xxh64_seal(const uint8_t *image, size_t len,
			   const struct ac_ref *refs, uint32_t n)
{
	XXH64_state_t *st = XXH64_createState();
	uint8_t size[8];
	set_le64(size, len);
	XXH64_reset(st, XXH64_SEAL_SEED);
	XXH64_update(st, size, sizeof(size));
	XXH64_update(st, image, len);
	XXH64_update(st, refs, n * sizeof(*refs));
	uint64_t v = XXH64_digest(st);
	XXH64_freeState(st);
	return v;
}

/*
 * The second preimage of PROG_GOOD's image: launch 0's FILL
 * address (words[1]) becomes the canary's, PROG_BAD_C's change (fails
 * (C)); launch 3's destination (words[13], the same XXH64 lane three
 * stripes later) is solved so that the lane's accumulator after its
 * stripe is the good image's again: same length, same XXH64 state, same
 * tail, so the same XXH64 seal with any references.  (Launch 3 then
 * faults on the device, after launch 0 filled the canary.)
 */
static uint8_t *forge_image(const uint8_t *good, size_t len)
{
	/* The byte string XXH64 read: le64(len) || image. */
	uint8_t *s = malloc(len + 8);
	uint8_t *f = malloc(len + 8);
	if (!s || !f)
		exit(1);
	set_le64(s, len);
	memcpy(s + 8, good, len);
	/* Find the words section: launch 0's words are FILL 0x10000 64
	 * 1.0f, then launch 1's COPY 0x10100 0x10000. */
	uint8_t pattern[8 * 7];
	const uint64_t words[7] = { ARENA_K_FILL, 0x10000, 64, 0x3f800000,
				    ARENA_K_COPY, 0x10100, 0x10000 };
	for (int i = 0; i < 7; i++)
		set_le64(pattern + 8 * i, words[i]);
	uint8_t *at = memmem(s, len + 8, pattern, sizeof(pattern));
	check(at && (at - s) % 8 == 0, "forge: the words found");
	if (!at)
		exit(1);
	size_t bad = (size_t)(at - s) + 8 * 1;      /* words[1] */
	size_t fix = bad + 3 * 32;                  /* words[13] */
	check(fix + 8 <= (len + 8) / 32 * 32, "forge: both in full stripes");
	int lane = (int)(bad % 32 / 8);
	memcpy(f, s, len + 8);
	set_le64(f + bad, PROG_CANARY);
	uint64_t want = xxh64_lane(s, lane, fix / 32 + 1);
	uint64_t from = xxh64_lane(f, lane, fix / 32);
	set_le64(f + fix, xxh64_solve(from, want));
	uint8_t *image = malloc(len);
	if (!image)
		exit(1);
	memcpy(image, f + 8, len);
	free(s);
	free(f);
	return image;
}

/* A forked child, every request through its own guard, destroys the
 * certified schedule and its program and makes both again (the handles
 * reused) from the forged image; this process then submits its
 * certified schedule again.  Its guard's picture is the good program;
 * the driver holds the forged one: the seal must tell them apart. */
static void cmd_forge(void)
{
	size_t len;
	uint8_t *good = prog_image(PROG_GOOD, &len);
	uint8_t *forged = forge_image(good, len);
	check(memcmp(good, forged, len) != 0, "forge: the images differ");
	check(xxh64_seal(good, len, prog_good_refs, 2) ==
	      xxh64_seal(forged, len, prog_good_refs, 2),
	      "forge: the same XXH64 seal");
	uint64_t verdict = prog_verdict(forged, len, prog_good_refs, 2);
	check(verdict != UINT64_MAX && (verdict & PROG_BAD_C_VERDICT),
	      "forge: the forged image fails (C) (verdict %llu)",
	      (unsigned long long)verdict);

	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t prog = program(&d, PROG_GOOD);
	uint32_t s = schedule(&d, prog, prog_good_refs, 2);
	expect_run(&d, s, 1, "forge: before");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		uint32_t p2 = 0, s2 = 0;
		int rc = cdev_destroy_schedule(&d, s);
		if (rc == 0)
			rc = cdev_destroy_program(&d, prog);
		if (rc == 0)
			rc = cdev_program(&d, forged, len, &p2);
		if (rc == 0)
			rc = cdev_schedule(&d, p2, &s2);
		if (rc == 0)
			rc = cdev_append(&d, s2, prog_good_refs, 2);
		_exit(rc == 0 && p2 == prog && s2 == s ? 0 : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "forge: the other process remade program %u and schedule %u "
	      "from the forged image", prog, s);
	cdev_zero(&d);
	uint64_t seqno = 0;
	int rc = cdev_submit(&d, s, &seqno);
	if (rc == 0)
		rc = cdev_wait(&d, seqno);
	check(rc == -EKEYREJECTED, "forge: the resubmission refused by the "
	      "seal: %d (EIO: the forged program ran and faulted)", rc);
	check(cdev_all(&d, PROG_CANARY, PROG_FLOATS, 0.0f) &&
	      cdev_all(&d, PROG_OUT, PROG_FLOATS, 0.0f), "forge: nothing ran");
	cdev_close(&d);
	free(good);
	free(forged);
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

/* ---- heldrace ---- */

struct heldrace {
	int fd;
	uint32_t prog;
	atomic_uint cur;        /* the schedule being appended to, or 0 */
	atomic_int phase;       /* 1: appending, 2: appended, 3: seen */
	atomic_int stop;
	int rejected, other;
};

static void *heldrace_submitter(void *arg)
{
	struct heldrace *h = arg;
	struct cdev d = { .fd = h->fd, .path = CP_IOCTL };
	while (!atomic_load(&h->stop)) {
		int phase = atomic_load(&h->phase);
		if (phase != 1 && phase != 2)
			continue;
		uint32_t s = atomic_load(&h->cur);
		uint64_t seqno = 0;
		int rc = cdev_submit(&d, s, &seqno);
		if (rc == -EKEYREJECTED)
			h->rejected++;
		else if (rc != 0 && rc != -EBUSY)
			h->other++;
		if (phase == 2)
			atomic_store(&h->phase, 3);
	}
	return NULL;
}

static void cmd_heldrace(void)
{
	struct cdev d;
	open_or_exit(&d, CP_URING);
	struct heldrace h = { .fd = d.fd, .prog = program(&d, PROG_GOOD) };
	pthread_t t;
	pthread_create(&t, NULL, heldrace_submitter, &h);
	for (int i = 0; i < 3000; i++) {
		uint32_t s = 0;
		int rc = cdev_schedule(&d, h.prog, &s);
		if (rc != 0)
			check(0, "heldrace: schedule %d", rc);
		atomic_store(&h.cur, s);
		atomic_store(&h.phase, 1);
		rc = cdev_append(&d, s, prog_good_refs, 2);
		if (rc != 0)
			check(0, "heldrace: append %d", rc);
		atomic_store(&h.phase, 2);
		while (atomic_load(&h.phase) != 3)
			;
		atomic_store(&h.phase, 0);
		do
			rc = cdev_destroy_schedule(&d, s);
		while (rc == -EBUSY);
		if (rc != 0)
			check(0, "heldrace: destroy %d", rc);
	}
	atomic_store(&h.stop, 1);
	pthread_join(t, NULL);
	printf("heldrace: %d certified submits refused by the seal, %d "
	       "other errors\n", h.rejected, h.other);
	check(h.rejected == 0 && h.other == 0, "heldrace: every certified "
	      "submit racing an io_uring append ran");
	cdev_close(&d);
}

/* ---- dup2race ---- */

/* x opened (by path) with a certified schedule, y (by ioctl) with a
 * failing one of the same handle, which is returned: another open file
 * of the device the fd x will become (what names the attack). */
static uint32_t two_contexts(struct cdev *x, struct cdev *y, enum cpath path,
			     const char *what)
{
	open_or_exit(x, path);
	open_or_exit(y, CP_IOCTL);
	uint32_t good = schedule(x, program(x, PROG_GOOD), prog_good_refs, 2);
	uint32_t bad = schedule(y, program(y, PROG_GOOD), prog_bad_d_refs, 4);
	check(good == bad, "%s: the same handle in both contexts (%u, %u)",
	      what, good, bad);
	return good;
}

struct dup2race {
	struct cdev *d;         /* its fd the one replaced */
	uint32_t s;
	atomic_int go, done;
	int rc;
};

static void *dup2race_submitter(void *arg)
{
	struct dup2race *r = arg;
	while (!atomic_load(&r->go))
		sched_yield();
	r->rc = cdev_run(r->d, r->s);
	atomic_store(&r->done, 1);
	return NULL;
}

/* Inside the guard's dup2, after the kernel's (libguard-duphook.so):
 * the submit is made, and waited for up to 300 ms (a guard that holds
 * it until its dup2 is over makes it wait all of them). */
static void dup2race_during(void *arg)
{
	struct dup2race *r = arg;
	atomic_store(&r->go, 1);
	for (int i = 0; i < 300 && !atomic_load(&r->done); i++)
		usleep(1000);
}

/* fd x (a context whose schedule s is certified) replaced by y (another
 * context, whose schedule of the same handle fails (D)) while a thread
 * submits s on x: the submit reaches y's schedule, so it must be decided
 * on y's (refused), and y's memory stays untouched. */
static void dup2race_round(enum cpath path, int three)
{
	void (*arm)(void (*)(void *), void *) =
		(void (*)(void (*)(void *), void *))dlsym(RTLD_DEFAULT,
							   "duphook_arm");
	check(arm != NULL, "dup2race: libguard-duphook.so preloaded");
	if (!arm)
		return;
	struct cdev x, y;
	uint32_t good = two_contexts(&x, &y, path, "dup2race");
	struct dup2race r = { .d = &x, .s = good };
	pthread_t t;
	pthread_create(&t, NULL, dup2race_submitter, &r);
	arm(dup2race_during, &r);
	int rc = three ? dup3(y.fd, x.fd, O_CLOEXEC) : dup2(y.fd, x.fd);
	check(rc == x.fd, "dup2race: %s %d", three ? "dup3" : "dup2", rc);
	pthread_join(t, NULL);
	const char *how = path == CP_IOCTL ? "ioctl" : "io_uring";
	check(r.rc == -EPERM, "dup2race (%s, %s): the submit racing it is "
	      "decided on the new file: refused (%d)",
	      three ? "dup3" : "dup2", how, r.rc);
	check(cdev_all(&y, PROG_OUT, PROG_FLOATS, 0.0f),
	      "dup2race (%s, %s): the new file's failing schedule never ran",
	      three ? "dup3" : "dup2", how);
	/* x's fd is y's file now: a submit on it is y's, refused. */
	check(cdev_run(&x, good) == -EPERM, "dup2race: refused after");
	cdev_close(&x);
	cdev_close(&y);
}

static void cmd_dup2race(void)
{
	dup2race_round(CP_IOCTL, 0);
	dup2race_round(CP_URING, 0);
	dup2race_round(CP_IOCTL, 1);
	dup2race_round(CP_URING, 1);
}

/* ---- uclose ---- */

/* A descriptor of this process but other open on the node st describes
 * (the guard's included), or -1.  The simulator's open files are nodes
 * of their own; the driver's share the device's, so other (another open
 * file of it) is left out. */
static int still_open(const struct stat *st, int other)
{
	DIR *d = opendir("/proc/self/fd");
	int found = -1;
	struct dirent *e;
	while (d && found < 0 && (e = readdir(d))) {
		int fd = atoi(e->d_name);
		struct stat o;
		if (e->d_name[0] != '.' && fd != dirfd(d) && fd != other &&
		    fstat(fd, &o) == 0 && o.st_dev == st->st_dev &&
		    o.st_ino == st->st_ino)
			found = fd;
	}
	if (d)
		closedir(d);
	return found;
}

/* x's fd (schedule good certified) closed by io_uring, then made y's
 * open file (schedule bad, the same handle, fails (D)) by F_DUPFD: a
 * submit of the handle on the number reaches y's schedule, so it must
 * be refused, and y's memory stays untouched. */
static void uclose_round(enum cpath path)
{
	struct cdev x, y;
	uint32_t good = two_contexts(&x, &y, path, "uclose");
	expect_run(&x, good, 1, "uclose: before the close");
	struct io_uring ring;
	if (io_uring_queue_init(4, &ring, 0) != 0) {
		check(0, "uclose: a ring");
		return;
	}
	struct stat xs;
	check(fstat(x.fd, &xs) == 0, "uclose: fstat of x (%d)", errno);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	io_uring_prep_close(sqe, x.fd);
	sqe->user_data = 1;
	struct io_uring_cqe *cqe = NULL;
	int rc = io_uring_submit_and_wait(&ring, 1);
	if (rc == 1)
		rc = io_uring_wait_cqe(&ring, &cqe);
	check(rc == 0 && cqe && cqe->res == 0, "uclose: IORING_OP_CLOSE "
	      "closed fd %d (%d, %d)", x.fd, rc, cqe ? cqe->res : 0);
	io_uring_queue_exit(&ring);
	/* x's last descriptor is closed: no copy of the guard's keeps its
	 * open file (and the driver's context) alive. */
	int held = still_open(&xs, y.fd);
	check(held < 0, "uclose: x's open file, closed by IORING_OP_CLOSE, "
	      "still held open by fd %d (the driver's release never runs)",
	      held);
	rc = fcntl(y.fd, F_DUPFD, x.fd);
	check(rc == x.fd, "uclose: y's file under x's number (%d)", rc);
	cdev_zero(&y);
	const char *how = path == CP_IOCTL ? "ioctl" : "io_uring";
	rc = cdev_run(&x, good);
	check(rc == -EPERM, "uclose (%s): the submit on the reused number is "
	      "decided on its new file: refused (%d)", how, rc);
	check(cdev_all(&y, PROG_OUT, PROG_FLOATS, 0.0f),
	      "uclose (%s): the new file's failing schedule never ran", how);
	cdev_close(&x);
	cdev_close(&y);
}

static void cmd_uclose(void)
{
	uclose_round(CP_IOCTL);
	uclose_round(CP_URING);
}

/* ---- uclosewin ---- */

/* x's fd (schedule good certified; a dup of it open too) named by an
 * IORING_OP_CLOSE hard-linked after a 500 ms timeout; in that window a
 * submit of good on the fd runs (it is still x's file); after the
 * close, the number given to y (schedule bad under the same handle)
 * by F_DUPFD: a submit there reaches y's schedule and must be refused.
 * At 2fc1b58 the request in the window attached the number to x's file
 * again (found through the dup), kept after the close: the submit
 * after the reuse was decided on x's mirror and y's failing schedule
 * ran without seals. */
static void uclosewin_round(enum cpath path)
{
	struct cdev x, y;
	uint32_t good = two_contexts(&x, &y, path, "uclosewin");
	int alias = dup(x.fd);
	check(alias >= 0, "uclosewin: a dup of x (%d)", errno);
	expect_run(&x, good, 1, "uclosewin: before the close");
	struct io_uring ring;
	if (io_uring_queue_init(4, &ring, 0) != 0) {
		check(0, "uclosewin: a ring");
		return;
	}
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 500000000 };
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	io_uring_prep_timeout(sqe, &ts, 0, 0);
	sqe->flags |= IOSQE_IO_HARDLINK;
	sqe->user_data = 1;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_close(sqe, x.fd);
	sqe->user_data = 2;
	int rc = io_uring_submit(&ring);
	check(rc == 2, "uclosewin: the timeout and the close submitted (%d)",
	      rc);
	const char *how = path == CP_IOCTL ? "ioctl" : "io_uring";
	char what[64];
	snprintf(what, sizeof(what), "uclosewin (%s): in the window", how);
	expect_run(&x, good, 1, what);
	struct io_uring_cqe *cqe = NULL;
	check(io_uring_peek_cqe(&ring, &cqe) == -EAGAIN, "uclosewin (%s): "
	      "the request came before the close completed", how);
	int closed = -1;
	for (int i = 0; i < 2; i++) {
		if (io_uring_wait_cqe(&ring, &cqe) != 0)
			break;
		if (cqe->user_data == 2)
			closed = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
	}
	check(closed == 0, "uclosewin: IORING_OP_CLOSE closed fd %d (%d)",
	      x.fd, closed);
	io_uring_queue_exit(&ring);
	rc = fcntl(y.fd, F_DUPFD, x.fd);
	check(rc == x.fd, "uclosewin: y's file under x's number (%d)", rc);
	cdev_zero(&y);
	rc = cdev_run(&x, good);
	check(rc == -EPERM, "uclosewin (%s): the submit on the reused number "
	      "is decided on its new file: refused (%d)", how, rc);
	check(cdev_all(&y, PROG_OUT, PROG_FLOATS, 0.0f),
	      "uclosewin (%s): the new file's failing schedule never ran",
	      how);
	close(alias);
	cdev_close(&x);
	cdev_close(&y);
}

static void cmd_uclosewin(void)
{
	uclosewin_round(CP_IOCTL);
	uclosewin_round(CP_URING);
}

/* ---- uclosecopy ---- */

/* x's fd (schedule good certified) named by an IORING_OP_CLOSE that
 * never runs (linked after a read of fd -1, which fails): x stays open,
 * volatile, and the guard keeps a copy of its open file at a high
 * number.  The application then takes that number for a pipe of its own
 * (dup2: the number is free as far as it knows, the guard's being
 * none of its business): the pipe stays the application's, untouched by
 * the guard, and a submit on x still runs (x is the certified file).  At
 * ebdbf26 the submit's kcmp found the number another file, the guard
 * closed it (the application's pipe) and probed x again: a new mirror,
 * and the certified schedule refused. */
static void cmd_uclosecopy(void)
{
	struct cdev x, y;
	uint32_t good = two_contexts(&x, &y, CP_IOCTL, "uclosecopy");
	struct stat xs;
	check(fstat(x.fd, &xs) == 0, "uclosecopy: fstat of x (%d)", errno);
	struct io_uring ring;
	if (io_uring_queue_init(4, &ring, 0) != 0) {
		check(0, "uclosecopy: a ring");
		return;
	}
	static char buf[8];
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, -1, buf, sizeof(buf), 0);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 1;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_close(sqe, x.fd);
	sqe->user_data = 2;
	int rc = io_uring_submit_and_wait(&ring, 2);
	check(rc == 2, "uclosecopy: the read and the close submitted (%d)",
	      rc);
	int closed = 0;
	for (int i = 0; i < 2; i++) {
		struct io_uring_cqe *cqe;
		if (io_uring_wait_cqe(&ring, &cqe) != 0)
			break;
		if (cqe->user_data == 2)
			closed = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
	}
	check(closed == -ECANCELED, "uclosecopy: the close never ran (%d)",
	      closed);
	io_uring_queue_exit(&ring);
	/* The guard's copy: x's node under another number (not y's). */
	int copy = -1;
	for (int fd = 3; fd < 4096 && copy < 0; fd++) {
		struct stat o;
		if (fd != x.fd && fd != y.fd && fstat(fd, &o) == 0 &&
		    o.st_dev == xs.st_dev && o.st_ino == xs.st_ino)
			copy = fd;
	}
	check(copy >= 0, "uclosecopy: the guard keeps a copy of x");
	int p[2];
	check(pipe(p) == 0, "uclosecopy: a pipe (%d)", errno);
	rc = copy >= 0 ? dup2(p[1], copy) : -1;
	check(rc == copy, "uclosecopy: the pipe under the copy's number %d "
	      "(%d)", copy, rc);
	expect_run(&x, good, 1, "uclosecopy: x after the number was taken");
	check(copy >= 0 && write(copy, "ok", 2) == 2, "uclosecopy: the "
	      "application's fd %d is still its pipe (%d)", copy, errno);
	rc = cdev_run(&y, good);
	check(rc == -EPERM, "uclosecopy: y's failing schedule refused (%d)",
	      rc);
	if (copy >= 0)
		close(copy);
	close(p[0]);
	close(p[1]);
	cdev_close(&x);
	cdev_close(&y);
}

/* ---- rawclose ---- */

enum rawclose_how { RC_CLOSE, RC_CLOSE_RANGE, RC_DUP2, RC_DUP3, RC_N };

static const char *const rawclose_name[RC_N] = {
	"SYS_close", "SYS_close_range", "SYS_dup2", "SYS_dup3" };

/* x's fd (schedule good certified) closed by syscall(), then made y's
 * open file (schedule bad, the same handle, fails (D)): by F_DUPFD
 * after a close, by the call itself for dup2/dup3.  A submit of the
 * handle on the number reaches y's schedule: refused, y untouched. */
static void rawclose_round(enum cpath path, enum rawclose_how how)
{
	struct cdev x, y;
	uint32_t good = two_contexts(&x, &y, path, "rawclose");
	expect_run(&x, good, 1, "rawclose: before the close");
	long rc = 0;
	switch (how) {
	case RC_CLOSE:
		rc = syscall(SYS_close, x.fd);
		break;
	case RC_CLOSE_RANGE:
		rc = syscall(SYS_close_range, x.fd, x.fd, 0);
		break;
	case RC_DUP2:
		rc = syscall(SYS_dup2, y.fd, x.fd) == x.fd ? 0 : -1;
		break;
	default:
		rc = syscall(SYS_dup3, y.fd, x.fd, 0) == x.fd ? 0 : -1;
		break;
	}
	check(rc == 0, "rawclose: %s (%d)", rawclose_name[how], errno);
	if (how == RC_CLOSE || how == RC_CLOSE_RANGE) {
		int fd = fcntl(y.fd, F_DUPFD, x.fd);
		check(fd == x.fd, "rawclose: y's file under x's number (%d)",
		      fd);
	}
	cdev_zero(&y);
	const char *p = path == CP_IOCTL ? "ioctl" : "io_uring";
	int r = cdev_run(&x, good);
	check(r == -EPERM, "rawclose (%s, %s): the submit on the reused "
	      "number is decided on its new file: refused (%d)",
	      rawclose_name[how], p, r);
	check(cdev_all(&y, PROG_OUT, PROG_FLOATS, 0.0f),
	      "rawclose (%s, %s): the new file's failing schedule never ran",
	      rawclose_name[how], p);
	/* Other numbers pass as they are, errno and all. */
	errno = 0;
	check(syscall(SYS_close, -1) == -1 && errno == EBADF,
	      "rawclose: a bad close's errno (%d)", errno);
	check(syscall(SYS_getpid) == getpid(), "rawclose: getpid");
	cdev_close(&x);
	cdev_close(&y);
}

static void cmd_rawclose(void)
{
	for (int how = 0; how < RC_N; how++) {
		rawclose_round(CP_IOCTL, (enum rawclose_how)how);
		rawclose_round(CP_URING, (enum rawclose_how)how);
	}
}

/* ---- regstall ---- */

struct regstall {
	struct cdev *d;
	uint32_t s;
	atomic_int go;
	int rc;
};

/* Inside the hook's io_uring_submit, after the guard's check: the
 * registration is let go, and the submit held 1.5 s. */
static void regstall_before(void *arg)
{
	struct regstall *r = arg;
	atomic_store(&r->go, 1);
	usleep(1500 * 1000);
}

static void *regstall_submitter(void *arg)
{
	struct regstall *r = arg;
	r->rc = cdev_run(r->d, r->s);
	return NULL;
}

/* x's schedule good certified on x's ring's slot 0, submitted and held
 * between the guard's check and the driver while the main thread
 * registers y (whose schedule of the same handle fails) into slot 0: a
 * registration that went ahead would send the command checked against
 * x to y's failing schedule (at 2fc1b58 it waited a second and went
 * ahead, and y's schedule ran without seals).  It must be refused, and
 * the submit run on x. */
static void cmd_regstall(void)
{
	void (*arm)(void (*)(void *), void *) =
		(void (*)(void (*)(void *), void *))dlsym(RTLD_DEFAULT,
							   "duphook_arm_submit");
	check(arm != NULL, "regstall: libguard-duphook.so preloaded");
	if (!arm)
		return;
	struct cdev x, y;
	uint32_t good = two_contexts(&x, &y, CP_FIXED, "regstall");
	cdev_zero(&x);
	cdev_zero(&y);
	struct regstall r = { .d = &x, .s = good };
	arm(regstall_before, &r);
	pthread_t t;
	pthread_create(&t, NULL, regstall_submitter, &r);
	while (!atomic_load(&r.go))
		sched_yield();
	int rc = io_uring_register_files_update(&x.ring, 0, &y.fd, 1);
	pthread_join(t, NULL);
	check(rc == -EAGAIN, "regstall: the registration over a held "
	      "submit's slot is refused (%d)", rc);
	check(r.rc == 0 && cdev_all(&x, PROG_OUT, PROG_FLOATS, 1.0f),
	      "regstall: the held submit ran on the file it was checked "
	      "against (%d)", r.rc);
	check(cdev_all(&y, PROG_OUT, PROG_FLOATS, 0.0f),
	      "regstall: the new file's failing schedule never ran");
	/* Nothing held now: the same registration goes through. */
	rc = io_uring_register_files_update(&x.ring, 0, &y.fd, 1);
	check(rc == 1, "regstall: the registration, nothing held (%d)", rc);
	check(cdev_run(&x, good) == -EPERM, "regstall: slot 0 is y's now: "
	      "its failing schedule refused");
	cdev_close(&x);
	cdev_close(&y);
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
	else if (!strcmp(cmd, "forge"))
		cmd_forge();
	else if (!strcmp(cmd, "linked"))
		cmd_linked();
	else if (!strcmp(cmd, "heldrace"))
		cmd_heldrace();
	else if (!strcmp(cmd, "dup2race"))
		cmd_dup2race();
	else if (!strcmp(cmd, "uclose"))
		cmd_uclose();
	else if (!strcmp(cmd, "uclosewin"))
		cmd_uclosewin();
	else if (!strcmp(cmd, "uclosecopy"))
		cmd_uclosecopy();
	else if (!strcmp(cmd, "rawclose"))
		cmd_rawclose();
	else if (!strcmp(cmd, "regstall"))
		cmd_regstall();
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
