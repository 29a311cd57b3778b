/* SPDX-License-Identifier: MIT */
/*
 * guard-client: drives the arena device the way applications do, for
 * guard-tests to run with libarenaguard.so (and the simulator) preloaded.
 *
 *   guard-client [--path ioctl|uring|fixed] [--expect block|run]
 *                SUBCOMMAND [N [M]]
 *
 * --expect says what the environment is meant to do with a failing
 * submission: block (the guard in enforce mode: EPERM, never executed)
 * or run (warn, off, or no guard: executed, visibly).  Each check prints
 * "ok: ..." or "FAIL: ..."; the exit status is 1 if any failed.
 *
 *   basic        a certified schedule runs; a (D) schedule and a (C)
 *                program are blocked before the device runs them
 *   resubmit N   one schedule submitted N times; N identical rebuilds
 *   threads T N  T threads, N submissions each, good and bad, all paths
 *   mixed T N    T threads on one schedule: appends by ioctl, submits by
 *                io_uring (the holds between check and driver)
 *   race N       other threads rewrite the image and the references
 *                while they are being submitted
 *   badptr       bad pointers everywhere: EFAULT, never a crash
 *   passthrough  unrelated ioctls and io_uring I/O: a transcript
 *   dupfork      dup, F_DUPFD, dup2, close, fork: the mirror follows
 *   unknown      a schedule handle nobody created
 *   link         a blocked submit in an io_uring link chain
 *   handwritten  SQEs written to the ring by hand: io_uring_enter()
 *                (checked) and the raw system call (reported)
 *   malformed    an image that does not parse; an append of references
 *                outside the launch table (by the path given)
 *   nomem        under libarenaguard-failalloc.so: each allocation of
 *                the guard on the way to a certified and a blocked
 *                submission fails in turn; ENOMEM, and the same requests
 *                work with memory back
 *   teardown N   N times a schedule destroyed, and a failing one made
 *                under its handle, while another thread submits it;
 *                then the fd closed under that thread
 *   forkhalf N   N forks with schedules half built and another thread
 *                busy: each child finishes them; the context is shared,
 *                so the seal refuses all but the first to finish
 *   daemon FILE [fill]
 *                as a daemon does: standard error closed, then FILE
 *                opened (it gets fd 2) and written around a blocked
 *                submission; with fill, every other fd closed first
 *                (closefrom, behind the guard's back) and the numbers up
 *                to 1100 taken by dups of FILE: the guard's records go
 *                to none of them
 *   image FILE   the program image FILE (as arena-certify reads it: plan,
 *                launches and schedule) run as a driver user runs it: the
 *                program without its schedule, then the schedule's
 *                references appended and submitted; prints the verdict,
 *                the submission's result and every global's floats
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <xf86drm.h>

#include "../util.h"
#include "cdev.h"
#include "checks.h"
#include "failalloc.h"
#include "progs.h"

static enum cpath path = CP_IOCTL;
static int expect_block = 1;

/* What a failing submission returns here: EPERM, or 0 (it ran). */
static int failing_rc(void)
{
	return expect_block ? -EPERM : 0;
}

static void open_dev(struct cdev *d)
{
	open_or_exit(d, path);
}

/* ---- basic ---- */

/* A submission the device must not run: it fails, or it runs visibly. */
static void bad_submission(struct cdev *d, uint32_t s, const char *what,
			   uint64_t address, size_t n, float ran)
{
	cdev_zero(d);
	uint64_t seqno = 0;
	int rc = cdev_submit(d, s, &seqno);
	check(rc == failing_rc(), "%s: submit returned %d", what, rc);
	if (expect_block) {
		/* Never handed a sequence number, never executed. */
		struct drm_arena_wait w = { .seqno = 1, .timeout_ns = 0 };
		int never = cdev_ioctl(d->fd, DRM_IOCTL_ARENA_WAIT, &w);
		check(never == -EINVAL, "%s: the device never ran anything "
		      "(wait 1: %d)", what, never);
		check(cdev_all(d, address, n, 0.0f), "%s: memory untouched",
		      what);
	} else {
		cdev_wait(d, seqno);
		check(cdev_all(d, address, n, ran), "%s: ran on the device",
		      what);
	}
}

static void cmd_basic(void)
{
	struct cdev d;
	open_dev(&d);
	uint32_t good = program(&d, PROG_GOOD);
	uint32_t bad_d = schedule(&d, good, prog_bad_d_refs, 4);
	bad_submission(&d, bad_d, "(D) schedule", PROG_OUT, 16, 2.0f);
	for (int i = 0; i < 3; i++) {
		uint64_t seqno;
		int rc = cdev_submit(&d, bad_d, &seqno);
		check(rc == failing_rc(), "(D) schedule resubmitted: %d", rc);
		if (rc == 0)
			cdev_wait(&d, seqno);
	}

	uint32_t bad_c = program(&d, PROG_BAD_C);
	uint32_t s_c = schedule(&d, bad_c, prog_good_refs, 2);
	bad_submission(&d, s_c, "(C) program", PROG_CANARY, 64, 1.0f);

	cdev_zero(&d);
	uint32_t s = schedule(&d, good, prog_good_refs, 2);
	int rc = cdev_run(&d, s);
	check(rc == 0, "certified schedule runs: %d", rc);
	check(cdev_all(&d, PROG_OUT, 64, 1.0f), "its output is right");
	cdev_close(&d);
}

/* ---- resubmit ---- */

static void cmd_resubmit(int n)
{
	struct cdev d;
	open_dev(&d);
	uint32_t prog = program(&d, PROG_GOOD);
	uint32_t s = schedule(&d, prog, prog_good_refs, 2);
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += cdev_run(&d, s) != 0;
	check(!bad, "the same schedule submitted %d times", n);

	/* Rebuilt from scratch: the same program image again (a second
	 * handle), a new schedule with the same references. */
	uint32_t prog2 = program(&d, PROG_GOOD);
	for (int i = 0; i < n; i++) {
		uint32_t t;
		bad += cdev_schedule(&d, prog2, &t) != 0 ||
		       cdev_append(&d, t, &prog_good_refs[0], 1) != 0 ||
		       cdev_append(&d, t, &prog_good_refs[1], 1) != 0 ||
		       cdev_run(&d, t) != 0 || cdev_destroy_schedule(&d, t) != 0;
	}
	check(!bad, "an identical schedule rebuilt %d times", n);
	check(cdev_all(&d, PROG_OUT, 64, 1.0f), "output right");

	/* A failing one, in a loop: one record, many blocks. */
	uint32_t f = schedule(&d, prog, prog_bad_d_refs, 4);
	for (int i = 0; i < n; i++) {
		uint64_t seqno;
		int rc = cdev_submit(&d, f, &seqno);
		bad += rc != failing_rc();
		if (rc == 0)
			cdev_wait(&d, seqno);
	}
	check(!bad, "a failing schedule resubmitted %d times", n);
	cdev_close(&d);
}

/* ---- threads ---- */

struct worker {
	pthread_t thread;
	int index, n;
	uint32_t program, shared;
	struct cdev *shared_dev;
	int errors;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct cdev d;
	/* Each thread its own fd and ring, on all three paths; and every
	 * thread also submits one schedule shared by all. */
	if (cdev_open(&d, (enum cpath)(w->index % 3)) != 0) {
		w->errors++;
		return NULL;
	}
	size_t len;
	uint8_t *image = prog_image(PROG_GOOD, &len);
	uint32_t prog;
	if (cdev_program(&d, image, len, &prog) != 0)
		w->errors++;
	free(image);
	for (int i = 0; i < w->n; i++) {
		int bad = (i + w->index) % 2;
		uint32_t s;
		uint64_t seqno;
		int rc = cdev_schedule(&d, prog, &s);
		if (rc == 0)
			rc = bad ? cdev_append(&d, s, prog_bad_d_refs, 4)
				 : cdev_append(&d, s, prog_good_refs, 2);
		if (rc == 0) {
			rc = cdev_submit(&d, s, &seqno);
			if (rc != (bad ? failing_rc() : 0))
				w->errors++;
			if (rc == 0)
				cdev_wait(&d, seqno);
			rc = cdev_destroy_schedule(&d, s);
		}
		if (rc != 0)
			w->errors++;
		struct drm_arena_schedule_submit sub = { .schedule = w->shared };
		if (cdev_ioctl(w->shared_dev->fd,
			       DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &sub) != 0)
			w->errors++;
	}
	cdev_close(&d);
	return NULL;
}

static void cmd_threads(int threads, int n)
{
	struct cdev d;
	open_dev(&d);
	uint32_t prog = program(&d, PROG_GOOD);
	uint32_t shared = schedule(&d, prog, prog_good_refs, 2);
	struct worker *w = calloc((size_t)threads, sizeof(*w));
	for (int i = 0; i < threads; i++) {
		w[i] = (struct worker){ .index = i, .n = n, .program = prog,
					.shared = shared, .shared_dev = &d };
		pthread_create(&w[i].thread, NULL, work, &w[i]);
	}
	int errors = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(w[i].thread, NULL);
		errors += w[i].errors;
	}
	check(errors == 0, "%d threads x %d submissions: %d unexpected "
	      "results", threads, n, errors);
	free(w);
	cdev_close(&d);
}

/* ---- mixed: one schedule, appended by ioctl, submitted by io_uring ---- */

struct mixer {
	pthread_t thread;
	struct cdev *shared;
	uint32_t schedule;
	int appender, n, errors;
	int last;          /* the last error's -errno */
};

static void *mix(void *arg)
{
	struct mixer *m = arg;
	struct cdev own = { .fd = -1 };
	/* Submitters: their own ring on the shared fd (and file). */
	if (!m->appender) {
		own = *m->shared;
		own.path = CP_URING;
		if (io_uring_queue_init(8, &own.ring, IORING_SETUP_SQE128)) {
			m->errors++;
			return NULL;
		}
	}
	for (int i = 0; i < m->n; i++) {
		if (m->appender) {
			/* Certified however many times it is repeated. */
			struct drm_arena_schedule_append a = {
				.schedule = m->schedule, .count = 2,
				.refs = (uintptr_t)prog_good_refs };
			int rc = cdev_ioctl(m->shared->fd,
					    DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a);
			if (rc) {
				m->errors++;
				m->last = rc;
			}
		} else {
			uint64_t seqno;
			int rc = cdev_submit(&own, m->schedule, &seqno);
			if (rc) {
				m->errors++;
				m->last = rc;
			}
		}
	}
	if (!m->appender)
		io_uring_queue_exit(&own.ring);
	return NULL;
}

static void cmd_mixed(int threads, int n)
{
	struct cdev d;
	open_dev(&d);
	uint32_t prog = program(&d, PROG_GOOD);
	uint32_t s = schedule(&d, prog, prog_good_refs, 2);
	struct mixer *m = calloc((size_t)threads, sizeof(*m));
	for (int i = 0; i < threads; i++) {
		m[i] = (struct mixer){ .shared = &d, .schedule = s,
				       .appender = i % 2, .n = n };
		pthread_create(&m[i].thread, NULL, mix, &m[i]);
	}
	int errors = 0, append_rc = 0, submit_rc = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(m[i].thread, NULL);
		errors += m[i].errors;
		if (m[i].last)
			*(m[i].appender ? &append_rc : &submit_rc) = m[i].last;
	}
	check(errors == 0, "%d threads appending by ioctl and submitting by "
	      "io_uring one schedule: %d errors (last append %d, last "
	      "submit %d)", threads, errors, append_rc, submit_rc);
	free(m);
	cdev_close(&d);
}

/* ---- race ---- */

struct flipper {
	pthread_t thread;
	atomic_int stop;
	volatile uint64_t *word;
	uint64_t a, b;
	volatile uint64_t *word2;     /* a second word flipped with it */
	uint64_t a2, b2;
};

static void *flip(void *arg)
{
	struct flipper *f = arg;
	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		*f->word = f->a;
		if (f->word2)
			*f->word2 = f->a2;
		*f->word = f->b;
		if (f->word2)
			*f->word2 = f->b2;
	}
	return NULL;
}

/* The u64 at which two images differ. */
static size_t differing_word(const uint8_t *x, const uint8_t *y, size_t len)
{
	for (size_t i = 0; i + 8 <= len; i += 8)
		if (memcmp(x + i, y + i, 8))
			return i;
	return len;
}

static void race_image(struct cdev *d, int n)
{
	size_t len, len2;
	uint8_t *good = prog_image(PROG_GOOD, &len);
	uint8_t *bad = prog_image(PROG_BAD_C, &len2);
	size_t at = differing_word(good, bad, len);
	if (len != len2 || at == len) {
		check(0, "images differ in one word");
		return;
	}
	struct flipper f = { .word = (uint64_t *)(good + at) };
	memcpy(&f.a, good + at, 8);
	memcpy(&f.b, bad + at, 8);
	pthread_create(&f.thread, NULL, flip, &f);
	int ran = 0, blocked = 0, slipped = 0;
	for (int i = 0; i < n; i++) {
		uint32_t prog, s;
		cdev_write(d, PROG_CANARY, (float[64]){ 0 }, 256);
		if (cdev_program(d, good, len, &prog) != 0 ||
		    cdev_schedule(d, prog, &s) != 0 ||
		    cdev_append(d, s, prog_good_refs, 2) != 0) {
			slipped++;
			continue;
		}
		int rc = cdev_run(d, s);
		ran += rc == 0;
		blocked += rc == -EPERM;
		if (!cdev_all(d, PROG_CANARY, 64, 0.0f))
			slipped++;
		cdev_destroy_schedule(d, s);
		cdev_destroy_program(d, prog);
	}
	atomic_store(&f.stop, 1);
	pthread_join(f.thread, NULL);
	check(slipped == 0, "image rewritten during %d creates: %d ran, "
	      "%d blocked, %d failing programs reached the device", n, ran,
	      blocked, slipped);
	free(good);
	free(bad);
}

static void race_refs(struct cdev *d, int n)
{
	uint32_t prog = program(d, PROG_GOOD);
	/* P, Q, Q, Q (certified) against P, R, Q, Q ((D) fails): ref 1
	 * flips between [1, 2) and [2, 3). */
	struct ac_ref refs[4] = { { 0, 1 }, { 1, 1 }, { 1, 1 }, { 3, 1 } };
	struct flipper f = { .word = &refs[1].first, .a = 1, .b = 2 };
	pthread_create(&f.thread, NULL, flip, &f);
	int ran = 0, blocked = 0, slipped = 0;
	for (int i = 0; i < n; i++) {
		uint32_t s;
		cdev_zero(d);
		if (cdev_schedule(d, prog, &s) != 0 ||
		    cdev_append(d, s, refs, 4) != 0) {
			slipped++;
			continue;
		}
		int rc = cdev_run(d, s);
		ran += rc == 0;
		blocked += rc == -EPERM;
		if (rc == 0 && !cdev_all(d, PROG_OUT, 64, 1.0f))
			slipped++;
		cdev_destroy_schedule(d, s);
	}
	atomic_store(&f.stop, 1);
	pthread_join(f.thread, NULL);
	check(slipped == 0, "references rewritten during %d appends: %d ran, "
	      "%d blocked, %d failing schedules reached the device", n, ran,
	      blocked, slipped);
}

static void cmd_race(int n)
{
	struct cdev d;
	open_dev(&d);
	race_image(&d, n);
	race_refs(&d, n);
	cdev_close(&d);
}

/* ---- bad pointers ---- */

static void cmd_badptr(void)
{
	struct cdev d;
	open_dev(&d);
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *map = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(map + page, (size_t)page, PROT_NONE);
	size_t len;
	uint8_t *image = prog_image(PROG_GOOD, &len);

	int rc = cdev_ioctl(d.fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, (void *)8);
	check(rc == -EFAULT, "program create, argument at 0x8: %d", rc);
	rc = cdev_ioctl(d.fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, map + page);
	check(rc == -EFAULT, "program create, argument unmapped: %d", rc);
	uint32_t h;
	rc = cdev_program(&d, (const uint8_t *)8, len, &h);
	check(rc == -EFAULT, "program create, image at 0x8: %d", rc);
	/* The image's tail on the inaccessible page. */
	uint8_t *tail = map + page - len / 2;
	memcpy(tail, image, len / 2);
	rc = cdev_program(&d, tail, len, &h);
	check(rc == -EFAULT, "program create, image running into a "
	      "protected page: %d", rc);
	rc = cdev_program(&d, image, (uint64_t)1 << 62, &h);
	check(rc == -ENOMEM || rc == -EFAULT, "program create, size 2^62: %d",
	      rc);

	uint32_t prog = program(&d, PROG_GOOD), s;
	cdev_schedule(&d, prog, &s);
	rc = cdev_append(&d, s, (const struct ac_ref *)8, 2);
	check(rc == -EFAULT, "append, references at 0x8: %d", rc);
	struct ac_ref *at_edge = (struct ac_ref *)(map + page) - 1;
	at_edge[0] = prog_good_refs[0];
	rc = cdev_append(&d, s, at_edge, 2);
	check(rc == -EFAULT, "append, references running into a protected "
	      "page: %d", rc);
	rc = cdev_ioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, NULL);
	check(rc == -EFAULT, "submit, argument NULL: %d", rc);
	/* Nothing bad was appended: the schedule is still empty, fine. */
	rc = cdev_append(&d, s, prog_good_refs, 2);
	check(rc == 0, "append after the faults: %d", rc);
	rc = cdev_run(&d, s);
	check(rc == 0, "the schedule runs: %d", rc);
	check(cdev_all(&d, PROG_OUT, 64, 1.0f), "with the right output");

	/* The argument in read-only memory: copied in, the driver acts,
	 * the copy out fails, as in a kernel. */
	struct drm_arena_schedule_submit *ro = (void *)map;
	memset(map, 0, (size_t)page);
	ro->schedule = s;
	mprotect(map, (size_t)page, PROT_READ);
	rc = cdev_ioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, ro);
	check(rc == -EFAULT, "submit, argument read-only: %d", rc);
	munmap(map, 2 * (size_t)page);
	free(image);
	cdev_close(&d);
	check(1, "survived");
}

/* ---- pass-through ---- */

static void say(const char *what, int rc, int err)
{
	printf("%s: rc %d errno %s\n", what, rc, rc < 0 ? strerror(err) : "-");
}

/* Waits for n completions and prints them in user_data order: the
 * kernel completes a buffered file write inline or from its workers as
 * it likes, so the arrival order is not part of the transcript. */
static void print_cqes(struct io_uring *ring, int n)
{
	struct { unsigned long long user_data; int res; } got[8];

	for (int i = 0; i < n && i < 8; i++) {
		struct io_uring_cqe *cqe;
		io_uring_wait_cqe(ring, &cqe);
		got[i].user_data = cqe->user_data;
		got[i].res = cqe->res;
		io_uring_cqe_seen(ring, cqe);
		for (int j = i; j > 0 && got[j - 1].user_data > got[j].user_data; j--) {
			__typeof__(got[0]) t = got[j];
			got[j] = got[j - 1];
			got[j - 1] = t;
		}
	}
	for (int i = 0; i < n && i < 8; i++)
		printf("cqe user_data %llu res %d\n", got[i].user_data,
		       got[i].res);
}

static void uring_io(unsigned int flags)
{
	struct io_uring ring;
	int rc = io_uring_queue_init(8, &ring, flags);
	printf("ring (flags %#x): %d\n", flags, rc);
	if (rc)
		return;
	char name[] = "/tmp/guard-client-XXXXXX";
	int file = mkstemp(name);
	unlink(name);
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	char out[] = "hello, arena", in[32] = { 0 }, rin[32] = { 0 };
	int fixed[2] = { file, sv[1] };
	printf("register files: %d\n", io_uring_register_files(&ring, fixed, 2));

	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, file, out, sizeof(out), 0);
	sqe->user_data = 1;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_send(sqe, sv[0], out, sizeof(out), 0);
	sqe->user_data = 2;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = 3;
	/* A URING_CMD of the arena's numbers on a socket: not the device,
	 * whatever the kernel says is the answer. */
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, sv[0], NULL, 0, 0);
	sqe->cmd_op = ARENA_URING_CMD_SUBMIT;
	sqe->user_data = 4;
	printf("submit: %d\n", io_uring_submit_and_wait(&ring, 4));
	print_cqes(&ring, 4);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, 0, in, sizeof(out), 0);    /* slot 0 */
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe->user_data = 5;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_recv(sqe, 1, rin, sizeof(out), 0);    /* slot 1 */
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe->user_data = 6;
	printf("submit: %d\n", io_uring_submit(&ring));
	print_cqes(&ring, 2);
	printf("read back: '%s' '%s'\n", in, rin);
	io_uring_queue_exit(&ring);
	close(file);
	close(sv[0]);
	close(sv[1]);
}

static void cmd_passthrough(void)
{
	int p[2];
	pipe(p);
	write(p[1], "12345", 5);
	int n = -1;
	int rc = ioctl(p[0], FIONREAD, &n);
	say("FIONREAD on a pipe", rc, errno);
	printf("  bytes: %d\n", n);
	errno = 1234;
	rc = ioctl(p[0], FIONREAD, &n);
	printf("errno after a successful ioctl: %d\n", errno);
	struct termios t;
	rc = ioctl(p[0], TCGETS, &t);
	say("TCGETS on a pipe", rc, errno);
	struct drm_arena_schedule_submit s = { .schedule = 1 };
	rc = ioctl(p[0], DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &s);
	say("SCHEDULE_SUBMIT on a pipe", rc, errno);
	int null = open("/dev/null", O_RDWR);
	struct drm_arena_program_create c = { .image = 8, .size = 100 };
	rc = ioctl(null, DRM_IOCTL_ARENA_PROGRAM_CREATE, &c);
	say("PROGRAM_CREATE on /dev/null", rc, errno);
	rc = ioctl(-1, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &s);
	say("SCHEDULE_APPEND on fd -1", rc, errno);
	rc = ioctl(999, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &s);
	say("SCHEDULE_SUBMIT on a closed fd", rc, errno);

	struct cdev d;
	open_dev(&d);
	drmVersionPtr v = drmGetVersion(d.fd);
	printf("device: %s\n", v && v->name ? v->name : "?");
	drmFreeVersion(v);
	int flags = fcntl(d.fd, F_GETFD);
	printf("device fd flags: %d\n", flags);
	rc = ioctl(d.fd, FIONBIO, &(int){ 1 });
	say("FIONBIO on the device", rc, errno);
	cdev_close(&d);

	uring_io(0);
	uring_io(IORING_SETUP_SQE128);
	close(p[0]);
	close(p[1]);
	close(null);
}

/* ---- dup and fork ---- */

static void submit_via(int fd, uint32_t s, int want, const char *what)
{
	struct drm_arena_schedule_submit sub = { .schedule = s };
	int rc = cdev_ioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &sub);
	check(rc == want, "%s: %d", what, rc);
	if (rc == 0) {
		struct drm_arena_wait w = { .seqno = sub.seqno,
					    .timeout_ns = -1 };
		cdev_ioctl(fd, DRM_IOCTL_ARENA_WAIT, &w);
	}
}

static void cmd_dupfork(void)
{
	struct cdev d;
	open_dev(&d);
	uint32_t prog = program(&d, PROG_GOOD);
	uint32_t good = schedule(&d, prog, prog_good_refs, 2);
	uint32_t bad = schedule(&d, prog, prog_bad_d_refs, 4);

	int fd2 = dup(d.fd);
	submit_via(fd2, good, 0, "dup: good");
	submit_via(fd2, bad, failing_rc(), "dup: bad");
	int fd3 = fcntl(d.fd, F_DUPFD_CLOEXEC, 100);
	submit_via(fd3, good, 0, "F_DUPFD: good");
	submit_via(fd3, bad, failing_rc(), "F_DUPFD: bad");
	int fd4 = dup2(d.fd, 60);
	submit_via(fd4, good, 0, "dup2: good");
	submit_via(fd4, bad, failing_rc(), "dup2: bad");

	/* The original closed: the file lives on in its dups. */
	close(d.fd);
	d.fd = fd2;
	submit_via(fd2, good, 0, "after close: good");
	submit_via(fd3, bad, failing_rc(), "after close: bad");

	/* dup2 over a device fd with a pipe: that fd is no device now. */
	int p[2];
	pipe(p);
	dup2(p[0], fd4);
	struct drm_arena_schedule_submit sub = { .schedule = good };
	int rc = cdev_ioctl(fd4, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &sub);
	check(rc == -ENOTTY, "dup2 of a pipe over a device fd: %d", rc);
	close(p[0]);
	close(p[1]);
	close(fd4);

	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		submit_via(fd2, good, 0, "child: good");
		submit_via(fd3, bad, failing_rc(), "child: bad");
		uint32_t s2 = 0;
		int rc2 = cdev_schedule(&d, prog, &s2);
		if (rc2 == 0)
			rc2 = cdev_append(&d, s2, prog_bad_d_refs, 4);
		check(rc2 == 0, "child: new schedule %d", rc2);
		submit_via(fd2, s2, failing_rc(), "child: its own bad");
		fflush(stdout);
		_exit(atomic_load(&failures) ? 1 : 0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exited %d",
	      status);
	submit_via(fd2, good, 0, "parent after fork: good");
	close(fd3);
	cdev_close(&d);
}

/* ---- SQEs written to the ring by hand ---- */

static struct io_uring_sqe *hand_sqe(struct cdev *d, uint32_t schedule,
				     uint64_t user_data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = d->fd;
	sqe->cmd_op = ARENA_URING_CMD_SUBMIT;
	sqe->user_data = user_data;
	struct arena_uring_submit s = { .schedule = schedule };
	memcpy(sqe->cmd, &s, sizeof(s));
	/* The tail moved by the application, not by liburing's submit. */
	io_uring_smp_store_release(d->ring.sq.ktail, *d->ring.sq.ktail + 1);
	return sqe;
}

static int reap(struct cdev *d, uint64_t user_data)
{
	struct io_uring_cqe *cqe;
	int rc = io_uring_wait_cqe(&d->ring, &cqe);
	if (rc == 0) {
		rc = cqe->user_data == user_data ? cqe->res : -EPROTO;
		io_uring_cqe_seen(&d->ring, cqe);
	}
	return rc;
}

static void cmd_handwritten(void)
{
	struct cdev d;
	if (cdev_open(&d, CP_URING) != 0) {
		check(0, "open");
		return;
	}
	uint32_t prog = program(&d, PROG_GOOD);
	uint32_t bad = schedule(&d, prog, prog_bad_d_refs, 4);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d.ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = 1;
	check(io_uring_submit(&d.ring) == 1 && reap(&d, 1) == 0,
	      "the ring is known to the guard");

	/* By hand, entered with liburing's io_uring_enter: checked. */
	hand_sqe(&d, bad, 2);
	int rc = io_uring_enter(d.ring.ring_fd, 1, 1, IORING_ENTER_GETEVENTS,
				NULL);
	check(rc == 1, "io_uring_enter: %d", rc);
	rc = reap(&d, 2);
	check(rc == -EPERM, "a failing submit written by hand and entered "
	      "with io_uring_enter(): %d", rc);

	/* By hand, entered with the raw system call: nobody saw it, and
	 * the next submit says so. */
	hand_sqe(&d, bad, 3);
	rc = (int)syscall(__NR_io_uring_enter, d.ring.ring_fd, 1, 1,
			  IORING_ENTER_GETEVENTS, NULL, 0);
	check(rc == 1, "raw io_uring_enter: %d", rc);
	/* The kernel got it (the simulator never did: /dev/null answers
	 * URING_CMD itself); a device would have run it unchecked. */
	rc = reap(&d, 3);
	check(rc != -EPROTO, "its completion: %d", rc);
	sqe = io_uring_get_sqe(&d.ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = 4;
	check(io_uring_submit(&d.ring) == 1 && reap(&d, 4) == 0,
	      "a later submit");
	cdev_close(&d);
}

/* ---- the rest ---- */

static void cmd_unknown(void)
{
	struct cdev d;
	open_dev(&d);
	uint64_t seqno;
	int rc = cdev_submit(&d, 77, &seqno);
	check(rc == (expect_block ? -EPERM : -ENOENT),
	      "submit of a schedule nobody created: %d", rc);
	rc = cdev_append(&d, 77, prog_good_refs, 2);
	check(rc == -ENOENT, "append to it: %d", rc);
	cdev_close(&d);
}

static void cmd_link(void)
{
	struct cdev d;
	if (cdev_open(&d, CP_URING) != 0) {
		check(0, "open");
		return;
	}
	uint32_t prog = program(&d, PROG_GOOD);
	uint32_t bad = schedule(&d, prog, prog_bad_d_refs, 4);
	uint32_t good = schedule(&d, prog, prog_good_refs, 2);
	cdev_zero(&d);
	uint64_t seq[2] = { 0, 0 };
	uint32_t which[2] = { bad, good };
	for (int i = 0; i < 2; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&d.ring);
		memset(sqe, 0, 2 * sizeof(*sqe));
		sqe->opcode = IORING_OP_URING_CMD;
		sqe->fd = d.fd;
		sqe->cmd_op = ARENA_URING_CMD_SUBMIT;
		sqe->user_data = 100 + (uint64_t)i;
		if (i == 0)
			sqe->flags = IOSQE_IO_LINK;
		struct arena_uring_submit s = { .schedule = which[i],
						.seqno = (uintptr_t)&seq[i] };
		memcpy(sqe->cmd, &s, sizeof(s));
	}
	int rc = io_uring_submit_and_wait(&d.ring, 2);
	check(rc == 2, "submitted a linked pair: %d", rc);
	int res[2] = { 1, 1 };
	for (int i = 0; i < 2; i++) {
		struct io_uring_cqe *cqe;
		io_uring_wait_cqe(&d.ring, &cqe);
		if (cqe->user_data >= 100 && cqe->user_data < 102)
			res[cqe->user_data - 100] = cqe->res;
		io_uring_cqe_seen(&d.ring, cqe);
	}
	if (expect_block) {
		check(res[0] == -EPERM, "the failing head: %d", res[0]);
		check(res[1] == -ECANCELED, "the certified one linked after "
		      "it is cancelled: %d", res[1]);
		check(cdev_all(&d, PROG_OUT, 64, 0.0f), "nothing ran");
	} else {
		check(res[0] == 0 && res[1] == 0, "both ran: %d %d", res[0],
		      res[1]);
	}
	cdev_close(&d);
}

static void cmd_malformed(void)
{
	struct cdev d;
	open_dev(&d);
	size_t len;
	uint8_t *image = prog_image(PROG_GOOD, &len);
	image[9] = 7;                   /* version 7 */
	uint32_t h;
	int rc = cdev_program(&d, image, len, &h);
	check(rc == -EINVAL, "a malformed image is refused by the driver: %d",
	      rc);
	free(image);
	/* References outside the launch table: refused (EINVAL) by the
	 * driver (ioctl) or by the guard for it (io_uring). */
	uint32_t good = program(&d, PROG_GOOD);
	uint32_t s;
	check(cdev_schedule(&d, good, &s) == 0, "a schedule");
	const struct ac_ref bad = { .first = 1000, .count = 1 };
	rc = cdev_append(&d, s, &bad, 1);
	check(rc == -EINVAL, "a malformed append is refused: %d", rc);
	cdev_close(&d);
}

/* ---- image: a program from a file ---- */

static void print_globals(struct cdev *d, const struct ac_model *m)
{
	for (uint32_t g = 0; g < m->n_globals; g++) {
		const struct ac_tensor *t = &m->globals[g];
		size_t n = (size_t)t->size / sizeof(float);
		float *v = calloc(n ? n : 1, sizeof(float));
		int rc = v ? cdev_read(d, t->offset, v, n * sizeof(float))
			   : -ENOMEM;
		if (rc)
			check(0, "read global %u: %d", g, rc);
		printf("global %.*s:", (int)t->name.len,
		       (const char *)t->name.data);
		for (size_t i = 0; rc == 0 && i < n; i++)
			printf(" %.9g", v[i]);
		printf("\n");
		free(v);
	}
}

static void cmd_image(const char *file)
{
	size_t len;
	char *data = util_read_file(file, &len);
	struct ac_model *m = NULL;
	if (!data || ac_model_read_image(data, len, &m, NULL) != 0) {
		check(0, "read the program image %s", file);
		free(data);
		return;
	}
	free(data);
	/* The driver takes the schedule by append, not in the image. */
	const struct ac_ref *refs = m->refs;
	size_t n_refs = m->n_refs;
	m->refs = NULL;
	m->n_refs = 0;
	uint8_t *image = ac_model_write_image(m, &len, NULL);
	m->refs = refs;
	m->n_refs = n_refs;
	uint64_t verdict = image ? prog_verdict(image, len, refs, n_refs)
				 : UINT64_MAX;
	printf("verdict %" PRIu64 "\n", verdict);

	struct cdev d;
	open_dev(&d);
	uint32_t prog = 0;
	int rc = image ? cdev_program(&d, image, len, &prog) : -ENOMEM;
	check(rc == 0, "program create: %d", rc);
	uint32_t s = schedule(&d, prog, refs, (uint32_t)n_refs);
	uint64_t seqno = 0;
	rc = cdev_submit(&d, s, &seqno);
	printf("submit: %d (%s)\n", rc, strerror(-rc));
	check(rc == (verdict ? failing_rc() : 0), "submit returned %d", rc);
	if (rc == 0)
		check(cdev_wait(&d, seqno) == 0, "it ran to the end");
	print_globals(&d, m);
	cdev_close(&d);
	free(image);
	ac_model_free(m);
}

/* ---- nomem: allocation failure in the guard ---- */

/* PROG_GOOD with launch 0 filling v instead of 1.0: an image that no
 * earlier pass has certified, whose output says it ran. */
static uint8_t *image_filling(float v, size_t *len)
{
	uint8_t *image = prog_image(PROG_GOOD, len);
	uint64_t one = 0x3f800000, bits = 0;
	memcpy(&bits, &v, sizeof(v));
	for (size_t i = 0; i + 8 <= *len; i += 8)
		if (!memcmp(image + i, &one, 8)) {
			memcpy(image + i, &bits, 8);
			return image;
		}
	free(image);
	return NULL;
}

struct sweep {
	unsigned long nth, counted;
	int every, armed, refused, errors;
};

/* rc is a request's answer.  Having met the failure it must be ENOMEM,
 * and is to be asked again with memory back: whether to. */
static int met_failure(struct sweep *w, int rc)
{
	if (rc != -ENOMEM || !w->armed)
		return 0;
	w->counted = failalloc_disarm();
	w->armed = 0;
	w->refused++;
	return 1;
}

/* The answer to expect, memory or not. */
static void expect(struct sweep *w, int rc, int want, const char *what)
{
	if (rc == want)
		return;
	check(0, "allocation %lu of the pass failing%s: %s: %d, not %d",
	      w->nth, w->every ? " and every one after it" : "", what, rc,
	      want);
	w->errors++;
}

/* A request of the pass, asked again if it met the failure. */
#define REQUEST(w, rc, call, want, what)                \
	do {                                            \
		(rc) = (call);                          \
		if (met_failure((w), (rc)))             \
			(rc) = (call);                  \
		expect((w), (rc), (want), (what));      \
	} while (0)

/* A good and a failing schedule of a new program, with allocation nth
 * of the guard's failing; after that, the same requests with memory. */
static void nomem_pass(struct cdev *d, struct sweep *w, float v)
{
	size_t len;
	uint8_t *image = image_filling(v, &len);
	if (!image) {
		check(0, "no 1.0 fill in the image");
		w->errors++;
		return;
	}
	uint32_t prog = 0, good = 0, bad = 0;
	uint64_t seqno = 0;
	cdev_zero(d);
	failalloc_arm(w->nth, w->every);
	w->armed = 1;
	int rc;
	REQUEST(w, rc, cdev_program(d, image, len, &prog), 0, "program create");
	REQUEST(w, rc, cdev_schedule(d, prog, &good), 0, "schedule create");
	REQUEST(w, rc, cdev_append(d, good, &prog_good_refs[0], 1), 0,
		"append");
	REQUEST(w, rc, cdev_append(d, good, &prog_good_refs[1], 1), 0,
		"second append");
	REQUEST(w, rc, cdev_submit(d, good, &seqno), 0, "certified submit");
	if (rc == 0)
		cdev_wait(d, seqno);
	REQUEST(w, rc, cdev_schedule(d, prog, &bad), 0, "schedule create");
	REQUEST(w, rc, cdev_append(d, bad, prog_bad_d_refs, 4), 0, "append");
	REQUEST(w, rc, cdev_submit(d, bad, &seqno), -EPERM, "failing submit");
	if (w->armed)
		w->counted = failalloc_disarm();
	w->armed = 0;
	/* The certified one ran, the failing one did not. */
	expect(w, cdev_all(d, PROG_OUT, 64, v), 1, "output");
	cdev_destroy_schedule(d, good);
	cdev_destroy_schedule(d, bad);
	cdev_destroy_program(d, prog);
	free(image);
}

/* The malformed append under libarenaguard-failalloc.so, allocation 1,
 * 2, ... of the append failing alone, a program of its own each pass
 * (a record per program): one pass fails the allocation of the
 * malformed append's record, which the guard writes all the same by
 * its one fallback.  Refused either way (EINVAL, or ENOMEM). */
static void cmd_malformed_nomem(void)
{
	enum { MAX_PASSES = 200 };
	static struct cdev devs[MAX_PASSES];
	const struct ac_ref bad = { .first = 1000, .count = 1 };
	int n = 0, wrong = 0;
	for (unsigned long nth = 1; n < MAX_PASSES; nth++) {
		struct cdev *d = &devs[n++];
		size_t len;
		uint8_t *image = image_filling(5.0f + (float)nth, &len);
		uint32_t prog = 0, s = 0;
		open_dev(d);
		if (!image || cdev_program(d, image, len, &prog) != 0 ||
		    cdev_schedule(d, prog, &s) != 0) {
			check(0, "pass %lu: a program and a schedule", nth);
			free(image);
			break;
		}
		free(image);
		failalloc_arm(nth, 0);
		int rc = cdev_append(d, s, &bad, 1);
		unsigned long counted = failalloc_disarm();
		wrong += rc != -EINVAL && rc != -ENOMEM;
		if (counted < nth)
			break;
	}
	for (int i = 0; i < n; i++)
		cdev_close(&devs[i]);
	check(wrong == 0, "%d passes: every malformed append refused (%d "
	      "otherwise)", n, wrong);
}

/*
 * Malformed appends under libarenaguard-failalloc.so, each to a program
 * of its own (a record each): the first passes count the allocations an
 * append makes; in every later one, the last of them fails (the
 * record's, which it is written without), and so, in a pass where the
 * guard's table of records said (dedup.c) grows, the growth: the record
 * must be written all the same while the table has room (attack30).
 * The test counts the records.
 */
static void cmd_dedup_nomem(void)
{
	enum { PASSES = 50 };
	const struct ac_ref bad = { .first = 1000, .count = 1 };
	struct cdev d;
	open_dev(&d);
	unsigned long base = 0, last = 0;
	int wrong = 0;
	for (int pass = 0; pass < PASSES; pass++) {
		size_t len;
		uint8_t *image = image_filling(7.0f + (float)pass, &len);
		uint32_t prog = 0, s = 0;
		if (!image || cdev_program(&d, image, len, &prog) != 0 ||
		    cdev_schedule(&d, prog, &s) != 0) {
			check(0, "pass %d: a program and a schedule", pass);
			free(image);
			break;
		}
		free(image);
		failalloc_arm(pass < 3 ? ULONG_MAX : base, 0);
		int rc = cdev_append(&d, s, &bad, 1);
		unsigned long counted = failalloc_disarm();
		wrong += rc != -EINVAL;
		if (pass == 2) {
			check(counted == last && counted > 0, "an append "
			      "makes %lu allocations, then %lu", last, counted);
			base = counted;
		}
		last = counted;
	}
	cdev_close(&d);
	check(wrong == 0, "%d passes: every malformed append refused with "
	      "EINVAL (%d otherwise)", PASSES, wrong);
}

/*
 * Under libarenaguard-failalloc.so: allocation 1, 2, ... of a pass
 * fails, alone and then with every one after it, until a pass makes
 * fewer allocations than that.  Each pass opens a device of its own
 * (left open: its first request finds a new file).
 */
static void cmd_nomem(void)
{
	enum { MAX_PASSES = 1000 };
	static struct cdev devs[2 * MAX_PASSES];
	int n_devs = 0, refused = 0, errors = 0;
	unsigned long sites[2] = { 0, 0 };
	for (int every = 0; every < 2; every++) {
		struct sweep w = { .every = every };
		for (w.nth = 1; w.nth <= MAX_PASSES; w.nth++) {
			struct cdev *d = &devs[n_devs++];
			open_dev(d);
			nomem_pass(d, &w, 3.0f + (float)n_devs);
			if (w.counted < w.nth)
				break;
		}
		sites[every] = w.nth - 1;
		refused += w.refused;
		errors += w.errors;
	}
	for (int i = 0; i < n_devs; i++)
		cdev_close(&devs[i]);
	check(errors == 0 && refused > 0,
	      "swept the guard's allocations of a pass, each failing alone "
	      "(%lu) and with all after it (%lu): %d requests refused with "
	      "ENOMEM, %d errors", sites[0], sites[1], refused, errors);
}

/* ---- teardown: destroy and close while another thread submits ---- */

struct submitter {
	pthread_t thread;
	struct cdev *d;
	uint32_t schedule;
	atomic_int stop;
	atomic_int ok, refused, closed, unexpected, last_unexpected;
};

/* 0; or the guard has no such schedule (EPERM: destroyed) or is about
 * to run it (EBUSY); or the driver has none (ENOENT), or the fd is
 * closed (EBADF; ENOTTY while the simulator closes it: it forgets the
 * fd before the file underneath is closed). */
static void *submit_loop(void *arg)
{
	struct submitter *s = arg;
	while (!atomic_load(&s->stop)) {
		uint64_t seqno;
		int rc = cdev_submit(s->d, s->schedule, &seqno);
		if (rc == 0)
			atomic_fetch_add(&s->ok, 1);
		else if (rc == -EBADF || rc == -ENOTTY)
			atomic_fetch_add(&s->closed, 1);
		else if (rc == -EPERM || rc == -ENOENT || rc == -EBUSY)
			atomic_fetch_add(&s->refused, 1);
		else if (atomic_fetch_add(&s->unexpected, 1) == 0)
			atomic_store(&s->last_unexpected, rc);
	}
	return NULL;
}

/* Until the counter passes `from` (the other thread is never blocked
 * for long: it only submits). */
static int await_more(atomic_int *counter, int from)
{
	for (long spins = 0; spins < 10000000; spins++) {
		if (atomic_load(counter) > from)
			return 1;
		sched_yield();
	}
	return 0;
}

static int destroy_when_idle(struct cdev *d, uint32_t s)
{
	int rc;
	while ((rc = cdev_destroy_schedule(d, s)) == -EBUSY)
		sched_yield();
	return rc;
}

/* A schedule of prog with refs, or 0 (counted in *failed). */
static uint32_t quiet_schedule(struct cdev *d, uint32_t prog,
			       const struct ac_ref *refs, uint32_t n,
			       int *failed)
{
	uint32_t s = 0;
	if (cdev_schedule(d, prog, &s) != 0 || cdev_append(d, s, refs, n) != 0)
		(*failed)++;
	return s;
}

/*
 * One thread submits the same handle again and again (by --path) while
 * this one, `cycles` times, makes a certified schedule under it, sees it
 * run, destroys it, makes a failing schedule under the same handle (the
 * driver hands out the lowest free one), sees it refused and destroys it
 * too; then closes the fd under the submitting thread.
 */
static void cmd_teardown(int cycles)
{
	struct cdev d;
	open_dev(&d);
	/* This thread's requests by ioctl on the same fd: a ring is the
	 * submitting thread's alone. */
	struct cdev ctl = d;
	ctl.path = CP_IOCTL;
	uint32_t prog = program(&ctl, PROG_GOOD);
	int failed = 0, ran_bad = 0, stalled = 0;
	uint32_t handle = quiet_schedule(&ctl, prog, prog_good_refs, 2, &failed);
	cdev_zero(&ctl);
	struct submitter sub = { .d = &d, .schedule = handle };
	pthread_create(&sub.thread, NULL, submit_loop, &sub);
	for (int c = 0; c < cycles; c++) {
		uint32_t good = c ? quiet_schedule(&ctl, prog, prog_good_refs,
						   2, &failed) : handle;
		stalled += !await_more(&sub.ok, atomic_load(&sub.ok));
		failed += destroy_when_idle(&ctl, good) != 0;
		uint32_t bad = quiet_schedule(&ctl, prog, prog_bad_d_refs, 4,
					      &failed);
		stalled += !await_more(&sub.refused, atomic_load(&sub.refused));
		failed += destroy_when_idle(&ctl, bad) != 0;
		/* The last to run was the certified one. */
		ran_bad += !cdev_all(&ctl, PROG_OUT, 16, 1.0f);
		failed += good != handle || bad != handle;
	}
	quiet_schedule(&ctl, prog, prog_good_refs, 2, &failed);
	close(d.fd);
	stalled += !await_more(&sub.closed, 0);
	atomic_store(&sub.stop, 1);
	pthread_join(sub.thread, NULL);
	d.fd = -1;
	cdev_close(&d);
	check(!failed && !ran_bad && !stalled && !atomic_load(&sub.unexpected),
	      "%d times a schedule destroyed and a failing one made under its "
	      "handle while another thread submits it, then the fd closed: "
	      "%d ran, %d refused, %d EBADF, %d other errors (%d); %d "
	      "requests failed, %d failing ran, %d stalled", cycles,
	      atomic_load(&sub.ok), atomic_load(&sub.refused),
	      atomic_load(&sub.closed), atomic_load(&sub.unexpected),
	      atomic_load(&sub.last_unexpected), failed, ran_bad, stalled);
}

/* ---- forkhalf: fork with schedules half built ---- */

struct builder {
	pthread_t thread;
	atomic_int stop;
	int errors;
};

/* Builds, submits and destroys schedules on a device of its own, by
 * io_uring and by ioctl, while the main thread forks. */
static void *build_loop(void *arg)
{
	struct builder *b = arg;
	struct cdev d;
	if (cdev_open(&d, CP_URING) != 0) {
		b->errors++;
		return NULL;
	}
	size_t len;
	uint8_t *image = prog_image(PROG_GOOD, &len);
	uint32_t prog;
	b->errors += cdev_program(&d, image, len, &prog) != 0;
	free(image);
	for (int i = 0; !atomic_load(&b->stop); i++) {
		int bad = i % 2;
		d.path = i % 4 < 2 ? CP_URING : CP_IOCTL;
		uint32_t s;
		int rc = cdev_schedule(&d, prog, &s);
		if (rc == 0)
			rc = bad ? cdev_append(&d, s, prog_bad_d_refs, 4)
				 : cdev_append(&d, s, prog_good_refs, 2);
		if (rc == 0)
			b->errors += cdev_run(&d, s) != (bad ? -EPERM : 0);
		b->errors += rc != 0 || cdev_destroy_schedule(&d, s) != 0;
	}
	cdev_close(&d);
	return NULL;
}

/*
 * The half-built schedules finished by ioctl, in `who`.  The device's
 * context is shared with every process that forked from the one that
 * opened it (as a kernel driver's is), so only the first to finish the
 * certified schedule has a mirror that matches the device: `first` says
 * whether `who` is that one.  The others' seal no longer matches what
 * the device holds and the driver refuses to run it (EKEYREJECTED), with
 * the device's memory untouched; the failing one is blocked either way.
 */
static void finish_half_built(struct cdev *d, uint32_t prog, uint32_t good,
			      uint32_t bad, const char *who, int first)
{
	cdev_zero(d);
	int rc = cdev_append(d, good, &prog_good_refs[1], 1);
	check(rc == 0, "%s: the rest appended: %d", who, rc);
	rc = cdev_run(d, good);
	if (first)
		check(rc == 0 && cdev_all(d, PROG_OUT, 64, 1.0f),
		      "%s: the certified schedule finished runs: %d", who, rc);
	else
		check(rc == -EKEYREJECTED && cdev_all(d, PROG_OUT, 64, 0.0f),
		      "%s: the certified schedule another process finished "
		      "first is refused by the seal: %d", who, rc);
	cdev_zero(d);
	rc = cdev_append(d, bad, prog_bad_d_refs + 2, 2);
	check(rc == 0, "%s: the rest of the failing one appended: %d",
	      who, rc);
	rc = cdev_run(d, bad);
	check(rc == -EPERM && cdev_all(d, PROG_OUT, 64, 0.0f),
	      "%s: the failing schedule finished is blocked: %d",
	      who, rc);
	uint32_t s = schedule(d, prog, prog_good_refs, 2);
	rc = cdev_run(d, s);
	check(rc == 0, "%s: a new schedule runs: %d", who, rc);
}

/*
 * Schedules half built (a certified one and a failing one), another
 * thread building, submitting and destroying its own, and `forks`
 * children that each finish the half-built ones in turn; the first
 * child's certified schedule runs, every later process's copy of it is
 * refused by the driver's seal (the first child changed it under them),
 * the failing one is blocked everywhere, and new schedules run.
 */
static void cmd_forkhalf(int forks)
{
	struct cdev d;
	open_dev(&d);
	uint32_t prog = program(&d, PROG_GOOD);
	uint32_t good = schedule(&d, prog, prog_good_refs, 1);
	uint32_t bad = schedule(&d, prog, prog_bad_d_refs, 2);
	struct builder b = { .errors = 0 };
	pthread_create(&b.thread, NULL, build_loop, &b);
	int children = 0;
	for (int i = 0; i < forks; i++) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			finish_half_built(&d, prog, good, bad, "child", i == 0);
			fflush(stdout);
			_exit(atomic_load(&failures) ? 1 : 0);
		}
		int status = 1;
		waitpid(pid, &status, 0);
		children += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	atomic_store(&b.stop, 1);
	pthread_join(b.thread, NULL);
	check(children == forks && b.errors == 0, "%d of %d children finished "
	      "the half-built schedules; the other thread: %d errors",
	      children, forks, b.errors);
	/* The parent's prefix runs only if no child changed it. */
	int rc = cdev_run(&d, good);
	check(rc == (forks ? -EKEYREJECTED : 0),
	      "parent: the half-built one runs unless a child changed it: %d",
	      rc);
	finish_half_built(&d, prog, good, bad, "parent", forks == 0);
	cdev_close(&d);
}

/* ---- daemon ---- */

static void cmd_daemon(const char *file, int fill)
{
	close(STDERR_FILENO);
	if (fill)
		closefrom(3);
	int data = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	check(data == STDERR_FILENO, "the data file is fd 2: %d", data);
	check(write(data, "app record 1\n", 13) == 13, "app record 1");
	struct rlimit rl;
	int last = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1116
		   ? (int)rl.rlim_cur - 16 : 1100;
	for (int fd = 3; fill && fd >= 0 && fd < last;)
		fd = fcntl(data, F_DUPFD, 3);
	struct cdev d;
	open_dev(&d);
	uint32_t good = program(&d, PROG_GOOD);
	uint32_t bad_d = schedule(&d, good, prog_bad_d_refs, 4);
	uint64_t seqno;
	int rc = cdev_submit(&d, bad_d, &seqno);
	check(rc == -EPERM, "(D) schedule blocked: %d", rc);
	cdev_close(&d);
	check(write(data, "app record 2\n", 13) == 13, "app record 2");
}

int main(int argc, char **argv)
{
	int i = 1;
	for (; i + 1 < argc && !strncmp(argv[i], "--", 2); i += 2) {
		if (!strcmp(argv[i], "--path"))
			path = !strcmp(argv[i + 1], "uring") ? CP_URING
			       : !strcmp(argv[i + 1], "fixed") ? CP_FIXED
							       : CP_IOCTL;
		else if (!strcmp(argv[i], "--expect"))
			expect_block = !strcmp(argv[i + 1], "block");
	}
	if (i >= argc) {
		fprintf(stderr, "usage: guard-client [--path P] [--expect E] "
			"SUBCOMMAND [N [M]]\n");
		return 2;
	}
	const char *cmd = argv[i];
	int n = i + 1 < argc ? atoi(argv[i + 1]) : 10;
	int m = i + 2 < argc ? atoi(argv[i + 2]) : 10;
	if (!strcmp(cmd, "basic"))
		cmd_basic();
	else if (!strcmp(cmd, "resubmit"))
		cmd_resubmit(n);
	else if (!strcmp(cmd, "threads"))
		cmd_threads(n, m);
	else if (!strcmp(cmd, "mixed"))
		cmd_mixed(n, m);
	else if (!strcmp(cmd, "race"))
		cmd_race(n);
	else if (!strcmp(cmd, "badptr"))
		cmd_badptr();
	else if (!strcmp(cmd, "passthrough"))
		cmd_passthrough();
	else if (!strcmp(cmd, "dupfork"))
		cmd_dupfork();
	else if (!strcmp(cmd, "unknown"))
		cmd_unknown();
	else if (!strcmp(cmd, "handwritten"))
		cmd_handwritten();
	else if (!strcmp(cmd, "link"))
		cmd_link();
	else if (!strcmp(cmd, "malformed"))
		cmd_malformed();
	else if (!strcmp(cmd, "nomem"))
		cmd_nomem();
	else if (!strcmp(cmd, "malformed-nomem"))
		cmd_malformed_nomem();
	else if (!strcmp(cmd, "dedup-nomem"))
		cmd_dedup_nomem();
	else if (!strcmp(cmd, "teardown"))
		cmd_teardown(n);
	else if (!strcmp(cmd, "forkhalf"))
		cmd_forkhalf(n);
	else if (!strcmp(cmd, "daemon") && i + 1 < argc)
		cmd_daemon(argv[i + 1], i + 2 < argc);
	else if (!strcmp(cmd, "image") && i + 1 < argc)
		cmd_image(argv[i + 1]);
	else {
		fprintf(stderr, "guard-client: unknown subcommand %s\n", cmd);
		return 2;
	}
	return atomic_load(&failures) ? 1 : 0;
}
