/* SPDX-License-Identifier: MIT */
/*
 * attack29-kproc (issue 29): descriptors, refusals and hostile arguments
 * on arena.ko, run in the VM under the guard (and without it for fuzz).
 *
 *   attack29-kproc dup2       dup2 of another device file over a device fd
 *   attack29-kproc reuse      a device fd closed (libc and raw) and its
 *                             number reused by /dev/null and a new open
 *   attack29-kproc refusals   the driver's refusals (EFAULT, ENOENT,
 *                             EINVAL, EBUSY, ENOMEM) through the guard:
 *                             its errno, no fail-open, good work after
 *   attack29-kproc bigbo      a buffer of a size the VM cannot hold but
 *                             the driver's limits let through: ENOMEM,
 *                             not the OOM killer (run in a child)
 *   attack29-kproc killwait   a process waiting for the file's lock
 *                             (another process executing a long
 *                             schedule on the shared file) dies at
 *                             SIGKILL, by ioctl and by URING_CMD
 *   attack29-kproc closerange close_range calls that leave the device fd
 *                             open (EINVAL; CLOSE_RANGE_UNSHARE in another
 *                             thread): its certified work still runs
 *   attack29-kproc unsharefiles  a thread with its own fd table
 *                             (unshare(CLONE_FILES)) closes the device fd
 *                             there: the other threads' certified work
 *   attack29-kproc mapunload  a buffer mapped, destroyed, its fd closed:
 *                             the mapping works and holds the module
 *   attack29-kproc fuzz N     N random ioctls and URING_CMDs of random
 *                             sizes, handles and pointers, from two
 *                             processes sharing the file
 *
 * Each check prints "ok: ..." or "FAIL: ..."; exit 1 when any failed.
 * "ran UNCERTIFIED" is a failing schedule (bad_d) whose output reached
 * the device.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include <check.h>
#include <unistd.h>

#include "cdev.h"
#include "checks.h"
#include "progs.h"
#include "../sim/builder.h"

/* out[0..16) = 2.0: bad_d ran; out[0..64) = 1.0: good ran. */
static int bad_ran(struct cdev *d)
{
	return cdev_all(d, PROG_OUT, 16, 2.0f);
}

static int good_ran(struct cdev *d)
{
	return cdev_all(d, PROG_OUT, PROG_FLOATS, 1.0f);
}

/* A (good prog 1, sched 1 good, sched 2 good) and B (good prog 1, sched 1
 * good, sched 2 bad_d); dup2(B, A): submits on A's number reach B. */
static void attack_dup2(void)
{
	struct cdev a, b;
	open_or_exit(&a, CP_IOCTL);
	open_or_exit(&b, CP_IOCTL);
	uint32_t pa = program(&a, PROG_GOOD);
	uint32_t a1 = schedule(&a, pa, prog_good_refs, 2);
	uint32_t a2 = schedule(&a, pa, prog_good_refs, 2);
	uint32_t pb = program(&b, PROG_GOOD);
	uint32_t b1 = schedule(&b, pb, prog_good_refs, 2);
	uint32_t b2 = schedule(&b, pb, prog_bad_d_refs, 4);
	check(a1 == b1 && a2 == b2, "same handles in both files (%u %u / %u %u)",
	      a1, a2, b1, b2);
	check(cdev_run(&a, a2) == 0 && good_ran(&a), "A's good schedule ran");
	int afd = a.fd;
	check(dup2(b.fd, afd) == afd, "dup2(B, A)");
	/* a.fd is now B's file */
	cdev_zero(&b);
	uint64_t seq = 0;
	int rc = cdev_submit(&a, a2, &seq);
	check(rc != 0 && !bad_ran(&b),
	      "dup2: B's failing schedule under A's certified handle: %s (%d)",
	      bad_ran(&b) ? "ran UNCERTIFIED" : "not run", rc);
	cdev_zero(&b);
	rc = cdev_run(&a, a1);
	check(rc == 0 && good_ran(&b),
	      "dup2: B's certified schedule through A's number runs: %d", rc);
	/* new work on the dup'ed number */
	uint32_t s = schedule(&a, pb, prog_good_refs, 2);
	cdev_zero(&b);
	rc = cdev_run(&a, s);
	check(rc == 0 && good_ran(&b),
	      "dup2: a schedule made through the number runs: %d", rc);
	uint32_t bad = schedule(&a, pb, prog_bad_d_refs, 4);
	cdev_zero(&b);
	rc = cdev_submit(&a, bad, &seq);
	check(rc == -EPERM && !bad_ran(&b),
	      "dup2: a failing one made through the number: %d, %s", rc,
	      bad_ran(&b) ? "ran UNCERTIFIED" : "not run");
	cdev_close(&a);
	cdev_close(&b);
}

static int open_at(const char *path, int fd)
{
	int got = open(path, O_RDWR | O_CLOEXEC);
	if (got >= 0 && got != fd) {
		dup2(got, fd);
		close(got);
		got = fd;
	}
	return got;
}

/* The device fd's number reused: by /dev/null after a libc close and a
 * raw one; by another device file after a raw close. */
static void attack_reuse(void)
{
	for (int raw = 0; raw < 2; raw++) {
		struct cdev a;
		open_or_exit(&a, CP_IOCTL);
		uint32_t p = program(&a, PROG_GOOD);
		uint32_t s = schedule(&a, p, prog_good_refs, 2);
		check(cdev_run(&a, s) == 0 && good_ran(&a), "good ran");
		int n = a.fd;
		if (raw)
			syscall(SYS_close, n);
		else
			close(n);
		check(open_at("/dev/null", n) == n, "/dev/null at %d", n);
		struct drm_arena_schedule_submit sub = { .schedule = s };
		errno = 0;
		int rc = ioctl(n, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &sub);
		int e = errno;
		check(rc == -1 && e == ENOTTY,
		      "%s close, /dev/null at the number: SUBMIT -> %d %s (want ENOTTY, /dev/null's)",
		      raw ? "raw" : "libc", rc, strerror(e));
		struct drm_arena_handle h = { .handle = s };
		errno = 0;
		rc = ioctl(n, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, &h);
		e = errno;
		check(rc == -1 && e == ENOTTY,
		      "%s close, /dev/null: DESTROY -> %d %s", raw ? "raw" : "libc",
		      rc, strerror(e));
		close(n);
	}
	/* raw close, a new device file at the number: its own schedules */
	for (int raw = 0; raw < 2; raw++) {
		struct cdev a, b;
		open_or_exit(&a, CP_IOCTL);
		uint32_t p = program(&a, PROG_GOOD);
		uint32_t s1 = schedule(&a, p, prog_good_refs, 2);
		uint32_t s2 = schedule(&a, p, prog_good_refs, 2);
		check(cdev_run(&a, s2) == 0, "A's schedule ran");
		int n = a.fd;
		if (raw)
			syscall(SYS_close, n);
		else
			close(n);
		int fd = open_at(ARENA_NODE_PATH, n);
		check(fd == n, "device again at %d", n);
		/* B's objects made by raw ioctls: the guard never saw them */
		int rc = cdev_open_fd(&b, fd, CP_IOCTL, 1);
		check(rc == 0, "B set up raw: %d", rc);
		b.raw = 1;
		uint32_t pb = 0, b1 = 0, b2 = 0;
		size_t len;
		uint8_t *img = prog_image(PROG_GOOD, &len);
		rc = cdev_program(&b, img, len, &pb);
		free(img);
		rc = rc ? rc : cdev_schedule(&b, pb, &b1);
		rc = rc ? rc : cdev_append(&b, b1, prog_good_refs, 2);
		rc = rc ? rc : cdev_schedule(&b, pb, &b2);
		rc = rc ? rc : cdev_append(&b, b2, prog_bad_d_refs, 4);
		check(rc == 0 && b1 == s1 && b2 == s2, "B's raw objects: %d", rc);
		b.raw = 0;
		cdev_zero(&b);
		uint64_t seq;
		rc = cdev_submit(&b, s2, &seq);
		check(rc != 0 && !bad_ran(&b),
		      "%s close, B's raw failing schedule under A's certified handle: %d, %s",
		      raw ? "raw" : "libc", rc,
		      bad_ran(&b) ? "ran UNCERTIFIED" : "not run");
		/* good work through the guard on B */
		uint32_t p2 = program(&b, PROG_GOOD);
		uint32_t g = schedule(&b, p2, prog_good_refs, 2);
		cdev_zero(&b);
		rc = cdev_run(&b, g);
		check(rc == 0 && good_ran(&b),
		      "%s close, B's own certified schedule runs: %d",
		      raw ? "raw" : "libc", rc);
		cdev_close(&b);
	}
}

static int xioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) == 0 ? 0 : -errno;
}

static void attack_refusals(void)
{
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *none = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
	uint8_t *ro = mmap(NULL, page, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t p = program(&d, PROG_GOOD);
	uint32_t s = 0;
	check(cdev_schedule(&d, p, &s) == 0, "schedule");

	struct drm_arena_schedule_append a = { .schedule = s, .count = 2,
					       .refs = (uintptr_t)none };
	int rc = xioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a);
	check(rc == -EFAULT, "append, refs unmapped: %d (EFAULT)", rc);
	a.refs = 0;
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a);
	check(rc == -EFAULT, "append, refs NULL: %d (EFAULT)", rc);
	a.refs = 0xffff888000000000ull;
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a);
	check(rc == -EFAULT, "append, refs a kernel address: %d (EFAULT)", rc);
	a.schedule = 999;
	a.refs = (uintptr_t)none;
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a);
	check(rc == -ENOENT, "append to no schedule, refs unmapped: %d (ENOENT)", rc);
	a.schedule = s;
	a.count = (1u << 20) + 1;
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a);
	check(rc == -EINVAL, "append beyond the limit, refs unmapped: %d (EINVAL)", rc);
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND,
		    (void *)none);
	check(rc == -EFAULT, "append, the argument unmapped: %d (EFAULT)", rc);
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, NULL);
	check(rc == -EFAULT, "append, the argument NULL: %d (EFAULT)", rc);

	/* the schedule is still empty; its good batch now */
	rc = cdev_append(&d, s, prog_good_refs, 2);
	check(rc == 0, "append good: %d", rc);

	struct drm_arena_program_create pc = { .image = (uintptr_t)none,
					       .size = 4096 };
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, &pc);
	check(rc == -EFAULT, "program, image unmapped: %d (EFAULT)", rc);
	static uint8_t small[64];
	pc.image = (uintptr_t)small;
	pc.size = 3ull << 30;
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, &pc);
	check(rc == -ENOMEM, "program of 3 GiB: %d (ENOMEM, the driver's)", rc);
	pc.size = (1ull << 31) - 8;
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, &pc);
	check(rc == -ENOMEM, "program of 2 GiB - 8: %d (ENOMEM, the driver's)", rc);
	pc.size = 0;
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, &pc);
	check(rc == -EINVAL, "program of 0 bytes: %d (EINVAL)", rc);

	struct drm_arena_handle h = { .handle = p };
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_PROGRAM_DESTROY, &h);
	check(rc == -EBUSY, "program destroy with a schedule: %d (EBUSY)", rc);
	struct drm_arena_bo_create bo = { .address = PROG_BASE, .size = 4096 };
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_BO_CREATE, &bo);
	check(rc == -EBUSY, "overlapping buffer: %d (EBUSY)", rc);
	struct drm_arena_schedule_create sc = { .program = 777 };
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_CREATE, &sc);
	check(rc == -ENOENT, "schedule of no program: %d (ENOENT)", rc);
	struct drm_arena_wait w = { .seqno = 0 };
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_WAIT, &w);
	check(rc == -EINVAL, "wait 0: %d (EINVAL)", rc);
	w.seqno = 1ull << 60;
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_WAIT, &w);
	check(rc == -EINVAL, "wait beyond: %d (EINVAL)", rc);
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, none);
	check(rc == -EFAULT, "submit, the argument unmapped: %d (EFAULT)", rc);
	struct drm_arena_schedule_submit sub = { .schedule = s, .flags = 1 };
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &sub);
	check(rc == -EINVAL, "submit with flags: %d (EINVAL)", rc);
	struct drm_arena_bo_rw rw = { .handle = d.bo, .offset = 0, .size = 64,
				      .data = (uintptr_t)none };
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_BO_WRITE, &rw);
	check(rc == -EFAULT, "bo write from unmapped: %d (EFAULT)", rc);
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_BO_READ, &rw);
	check(rc == -EFAULT, "bo read to unmapped: %d (EFAULT)", rc);

	/* the certified schedule still runs, after every refusal */
	cdev_zero(&d);
	rc = cdev_run(&d, s);
	check(rc == 0 && good_ran(&d), "good schedule after the refusals: %d", rc);
	/* a submit whose argument is read-only: it runs, the copy out fails */
	memset(ro, 0, page);
	struct drm_arena_schedule_submit *rs = (void *)ro;
	rs->schedule = s;
	mprotect(ro, page, PROT_READ);
	cdev_zero(&d);
	rc = xioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, rs);
	check(rc == -EFAULT, "submit, argument read-only: %d (EFAULT, ran=%d)",
	      rc, good_ran(&d));
	/* a failing schedule is still blocked */
	uint32_t bad = schedule(&d, p, prog_bad_d_refs, 4);
	cdev_zero(&d);
	uint64_t seq;
	rc = cdev_submit(&d, bad, &seq);
	check(rc != 0 && !bad_ran(&d), "failing schedule after the refusals: %d, %s",
	      rc, bad_ran(&d) ? "ran UNCERTIFIED" : "not run");
	cdev_close(&d);
}

/* A buffer the VM cannot hold (2 GiB of RAM): sizes the driver's limits
 * let through. */
static void attack_bigbo(void)
{
	static const unsigned long long sizes[] = {
		3ull << 30, 16ull << 30, 1ull << 39,
	};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		pid_t child = fork();
		if (child == 0) {
			int fd = open(ARENA_NODE_PATH, O_RDWR);
			struct drm_arena_bo_create bo = { .address = 1ull << 40,
							  .size = sizes[i] };
			int rc = xioctl(fd, DRM_IOCTL_ARENA_BO_CREATE, &bo);
			_exit(rc == -ENOMEM ? 0 : rc == 0 ? 2 : 3);
		}
		int st = 0;
		waitpid(child, &st, 0);
		check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "buffer of %llu bytes: %s %d (want ENOMEM)", sizes[i],
		      WIFSIGNALED(st) ? "killed by signal" : "exit",
		      WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	}
}

/* ---- closerange ---- */

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif

static unsigned int unshare_fd;

static void *unshare_close(void *arg)
{
	(void)arg;
	/* this thread's own copy of the table, the range closed in it */
	long rc = close_range(unshare_fd, unshare_fd, CLOSE_RANGE_UNSHARE);
	return (void *)rc;
}

/*
 * close_range calls after which the device fd is still open in the
 * calling thread's table: one the kernel refuses (EINVAL: an unknown
 * flag), and CLOSE_RANGE_UNSHARE in another thread (which closes the fd
 * in its private copy only).  The certified schedule made before must
 * still run, and a failing one still be blocked.
 */
static void attack_closerange(void)
{
	for (int how = 0; how < 2; how++) {
		const char *what = how ? "CLOSE_RANGE_UNSHARE in another thread"
				       : "close_range refused (EINVAL)";
		struct cdev d;
		open_or_exit(&d, CP_IOCTL);
		uint32_t p = program(&d, PROG_GOOD);
		uint32_t s = schedule(&d, p, prog_good_refs, 2);
		uint32_t bad = schedule(&d, p, prog_bad_d_refs, 4);
		check(cdev_run(&d, s) == 0 && good_ran(&d), "good ran");
		if (!how) {
			errno = 0;
			int rc = close_range(d.fd, d.fd, 0x40);
			check(rc == -1 && errno == EINVAL, "%s: %d %s", what,
			      rc, strerror(errno));
		} else {
			pthread_t t;
			void *res;
			unshare_fd = (unsigned int)d.fd;
			pthread_create(&t, NULL, unshare_close, NULL);
			pthread_join(t, &res);
			check(res == NULL, "%s: %ld", what, (long)res);
		}
		check(fcntl(d.fd, F_GETFD) >= 0, "%s: fd %d still open here",
		      what, d.fd);
		cdev_zero(&d);
		int rc = cdev_run(&d, s);
		check(rc == 0 && good_ran(&d),
		      "%s: the certified schedule made before runs: %d (%s)",
		      what, rc, rc == -EPERM ? "refused by the guard" : "");
		cdev_zero(&d);
		uint64_t seq;
		rc = cdev_submit(&d, bad, &seq);
		check(rc != 0 && !bad_ran(&d), "%s: the failing one: %d, %s",
		      what, rc, bad_ran(&d) ? "ran UNCERTIFIED" : "not run");
		cdev_close(&d);
	}
}

/* ---- unsharefiles ---- */

static void *unshare_then_close(void *arg)
{
	(void)arg;
	if (unshare(CLONE_FILES) != 0)
		return (void *)(long)-errno;
	/* libc's close, which the guard sees: this thread's copy only */
	return (void *)(long)close((int)unshare_fd);
}

/* A thread unshares its fd table and closes the device fd in it; the
 * other threads still have the fd and the certified schedule. */
static void attack_unsharefiles(void)
{
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t p = program(&d, PROG_GOOD);
	uint32_t s = schedule(&d, p, prog_good_refs, 2);
	uint32_t bad = schedule(&d, p, prog_bad_d_refs, 4);
	pthread_t t;
	void *res;
	unshare_fd = (unsigned int)d.fd;
	pthread_create(&t, NULL, unshare_then_close, NULL);
	pthread_join(t, &res);
	check(res == NULL, "unshare(CLONE_FILES) and close in a thread: %ld",
	      (long)res);
	check(fcntl(d.fd, F_GETFD) >= 0, "fd %d still open here", d.fd);
	cdev_zero(&d);
	int rc = cdev_run(&d, s);
	check(rc == 0 && good_ran(&d),
	      "unshare+close in another thread: the certified schedule runs: %d%s",
	      rc, rc == -EPERM ? " (refused by the guard)" : "");
	cdev_zero(&d);
	uint64_t seq;
	rc = cdev_submit(&d, bad, &seq);
	check(rc != 0 && !bad_ran(&d), "unshare+close: the failing one: %d, %s",
	      rc, bad_ran(&d) ? "ran UNCERTIFIED" : "not run");
	cdev_close(&d);
}

/* ---- mapunload ---- */

static void attack_mapunload(void)
{
	int fd = open(ARENA_NODE_PATH, O_RDWR);
	struct drm_arena_bo_create bo = { .address = 0x10000, .size = 8192 };
	int rc = xioctl(fd, DRM_IOCTL_ARENA_BO_CREATE, &bo);
	struct drm_arena_bo_mmap mm = { .handle = bo.handle };
	rc = rc ? rc : xioctl(fd, DRM_IOCTL_ARENA_BO_MMAP, &mm);
	float *m = rc ? MAP_FAILED : mmap(NULL, 8192, PROT_READ | PROT_WRITE,
					  MAP_SHARED, fd, mm.offset);
	check(m != MAP_FAILED, "buffer mapped: %d", rc);
	if (m == MAP_FAILED)
		return;
	struct drm_arena_handle h = { .handle = bo.handle };
	check(xioctl(fd, DRM_IOCTL_ARENA_BO_DESTROY, &h) == 0, "destroyed");
	close(fd);
	m[0] = 3.0f;
	m[2047] = 4.0f;
	check(m[0] == 3.0f && m[2047] == 4.0f, "the mapping outlives the fd");
	check(system("rmmod arena 2>/dev/null") != 0,
	      "rmmod refused while the mapping holds the file");
	munmap(m, 8192);
	int unloaded = 0;
	for (int i = 0; i < 10 && !unloaded; i++) {
		unloaded = system("rmmod arena 2>/dev/null") == 0;
		if (!unloaded)
			sleep(1);
	}
	check(unloaded, "rmmod once the mapping is gone");
	check(system("insmod /lib/modules/arena.ko") == 0, "insmod again");
}

/* ---- killwait ---- */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

/* The builder asserts with Check, whose calls need a runner: it runs
 * in one test, in this process. */
static uint8_t *long_img;
static size_t long_len;

START_TEST(build_long)
{
	struct pb *b = pb_new();
	pb_phase(b, "P");
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, 0x10000, 1024,
				   f32_bits(1.0f)));
	pb_repeat(b, 0, 1, 0xffffffffull);
	long_img = pb_image(b, &long_len);
	pb_free(b);
}
END_TEST

/* A program of one launch repeated 2^32 - 1 times (hours on the VM). */
static uint8_t *long_image(size_t *len)
{
	Suite *s = suite_create("long");
	TCase *tc = tcase_create("long");
	tcase_add_test(tc, build_long);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_set_log(sr, NULL);
	srunner_run_all(sr, CK_SILENT);
	srunner_free(sr);
	*len = long_len;
	return long_img;
}

/* Whether pid exits within seconds; reaped if so. */
static int dies_within(pid_t pid, double seconds)
{
	double until = now() + seconds;
	int st;
	while (now() < until) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return 1;
		usleep(20 * 1000);
	}
	return 0;
}

/*
 * A fork child executes a schedule of 2^32 - 1 launches on the shared
 * file (hours), holding the context's lock; another child then makes a
 * request on the file (WAIT by ioctl, or a URING_CMD SUBMIT) and is sent
 * SIGKILL: it must die within seconds, not when the first child's
 * execution ends (an unkillable task in D state; after 120 s the hung
 * task detector's trace).
 */
static void attack_killwait(void)
{
	for (int uring = 0; uring < 2; uring++) {
		int fd = open(ARENA_NODE_PATH, O_RDWR);
		struct drm_arena_bo_create bo = { .address = 0x10000,
						  .size = 4096 };
		int rc = xioctl(fd, DRM_IOCTL_ARENA_BO_CREATE, &bo);
		struct drm_arena_bo_mmap mm = { .handle = bo.handle };
		rc = rc ? rc : xioctl(fd, DRM_IOCTL_ARENA_BO_MMAP, &mm);
		volatile float *p = rc ? MAP_FAILED
			: mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, mm.offset);
		size_t len;
		uint8_t *img = long_image(&len);
		struct drm_arena_program_create pc = { .image = (uintptr_t)img,
						       .size = len };
		rc = rc ? rc : xioctl(fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, &pc);
		struct drm_arena_schedule_create sc = { .program = pc.handle };
		rc = rc ? rc : xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_CREATE, &sc);
		struct drm_arena_ref ref = { 0, 1 };
		struct drm_arena_schedule_append a = {
			.schedule = sc.handle, .count = 1,
			.refs = (uintptr_t)&ref };
		rc = rc ? rc : xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a);
		if (rc || p == MAP_FAILED) {
			check(0, "killwait set-up: %d (needs require_seal=0)", rc);
			return;
		}
		pid_t runner = fork();
		if (runner == 0) {
			struct drm_arena_schedule_submit s = {
				.schedule = sc.handle };
			ioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &s);
			_exit(0);
		}
		double until = now() + 60.0;
		while (p[0] != 1.0f && now() < until)
			usleep(10 * 1000);
		check(p[0] == 1.0f, "the long schedule is executing");
		pid_t waiter = fork();
		if (waiter == 0) {
			if (!uring) {
				struct drm_arena_wait w = { .seqno = 1 };
				ioctl(fd, DRM_IOCTL_ARENA_WAIT, &w);
			} else {
				struct io_uring ring;
				if (io_uring_queue_init(4, &ring,
							IORING_SETUP_SQE128))
					_exit(3);
				struct arena_uring_submit s = {
					.schedule = sc.handle };
				struct io_uring_sqe *sqe =
					io_uring_get_sqe(&ring);
				cdev_prep_cmd(sqe, fd, 0,
					      ARENA_URING_CMD_SUBMIT, &s,
					      sizeof(s), 1);
				io_uring_submit(&ring);
			}
			_exit(0);
		}
		usleep(500 * 1000);
		kill(waiter, SIGKILL);
		double t0 = now();
		int died = dies_within(waiter, 10.0);
		check(died, "%s: a process waiting for the context's lock dies at SIGKILL: %s (%.1f s)",
		      uring ? "URING_CMD" : "ioctl",
		      died ? "died" : "still alive after 10 s (unkillable)",
		      now() - t0);
		kill(runner, SIGKILL);
		waitpid(runner, NULL, 0);
		if (!died)
			waitpid(waiter, NULL, 0);
		munmap((void *)p, 4096);
		free(img);
		close(fd);
	}
}

/* ---- fuzz ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint8_t *pool;      /* 4 pages rw, then one PROT_NONE */
static uint8_t *ro_page;

static uint64_t rnd_ptr(void)
{
	switch (rnd() % 8) {
	case 0: return 0;
	case 1: return (uintptr_t)pool + 4 * 4096 + rnd() % 4096; /* none */
	case 2: return 0xffff888000000000ull + (rnd() % 4096);
	case 3: return (uintptr_t)ro_page + rnd() % 64;
	case 4: return rnd();
	default: return (uintptr_t)pool + rnd() % (4 * 4096);
	}
}

static uint64_t rnd_val(void)
{
	switch (rnd() % 8) {
	case 0: return 0;
	case 1: return rnd() % 8;
	case 2: return rnd_ptr();
	case 3: return 1ull << (rnd() % 64);
	case 4: return (1ull << (rnd() % 64)) - 1;
	case 5: return 4096 * (rnd() % 64);
	case 6: return rnd();
	default: return rnd() % 0x20000;
	}
}

static void fill_arg(uint64_t *w, int n)
{
	for (int i = 0; i < n; i++)
		w[i] = rnd_val();
}

static void fuzz_one(int fd, struct io_uring *ring)
{
	/* the driver copies out as many bytes as the request's size says */
	static uint64_t arg[16384 / 8];
	fill_arg(arg, 16);
	/* keep buffer sizes small: a big one pins pages */
	unsigned int nr = 0x40 + rnd() % 16;
	unsigned int size = rnd() % 4 ? rnd() % 72 : rnd() % 16384;
	unsigned int dir = rnd() % 4;
	if ((nr == 0x40 || nr == 0x45) && arg[1] > (16u << 20))
		arg[1] = 4096 * (1 + rnd() % 64);
	/* the pool's memory may be named as refs or images */
	fill_arg((uint64_t *)pool + rnd() % 2044, 4);
	unsigned long req = _IOC(dir, 'd', nr, size);
	void *p = rnd() % 16 ? (void *)arg : (void *)rnd_ptr();
	ioctl(fd, req, p);
	if (ring && rnd() % 3 == 0) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
		if (sqe) {
			uint32_t op = rnd() % 4 ? rnd() % 4 : (uint32_t)rnd();
			cdev_prep_cmd(sqe, fd, rnd() % 4 ? 0 : IOSQE_ASYNC, op,
				      arg, 8 + rnd() % 73, 1);
			io_uring_submit(ring);
			struct io_uring_cqe *cqe;
			if (io_uring_wait_cqe(ring, &cqe) == 0)
				io_uring_cqe_seen(ring, cqe);
		}
	}
}

static void attack_fuzz(long n)
{
	pool = mmap(NULL, 5 * 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	mprotect(pool + 4 * 4096, 4096, PROT_NONE);
	int fd = open(ARENA_NODE_PATH, O_RDWR);
	if (fd < 0) {
		check(0, "open: %s", strerror(errno));
		return;
	}
	/* something to name: a buffer, a program, schedules */
	struct cdev d;
	check(cdev_open_fd(&d, fd, CP_IOCTL, 0) == 0, "fuzz set-up");
	uint32_t p = program(&d, PROG_GOOD);
	schedule(&d, p, prog_good_refs, 2);
	struct io_uring ring;
	int have = io_uring_queue_init(8, &ring, IORING_SETUP_SQE128) == 0;
	pid_t child = fork();
	rng ^= (uint64_t)getpid() * 0x2545f4914f6cdd1dull;
	for (long i = 0; i < n; i++) {
		fuzz_one(fd, have && child != 0 ? &ring : NULL);
		if (i % 997 == 0 && child == 0) {
			/* the child drops and reopens: the parent's file lives */
			int fd2 = open(ARENA_NODE_PATH, O_RDWR);
			for (int k = 0; k < 50 && fd2 >= 0; k++)
				fuzz_one(fd2, NULL);
			if (fd2 >= 0)
				close(fd2);
		}
	}
	if (child == 0)
		_exit(0);
	int st;
	waitpid(child, &st, 0);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fuzz child: %x", st);
	/* the device still works */
	cdev_zero(&d);
	uint32_t p2 = program(&d, PROG_GOOD);
	uint32_t s2 = schedule(&d, p2, prog_good_refs, 2);
	int rc = cdev_run(&d, s2);
	/* EIO: the fuzzed requests destroyed or moved the window's buffer */
	check(rc == 0 || rc == -ENOKEY || rc == -EIO,
	      "after %ld fuzzed requests the file still answers: %d", n, rc);
	if (have)
		io_uring_queue_exit(&ring);
	close(fd);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: attack29-kproc dup2|reuse|refusals|bigbo|closerange|unsharefiles|mapunload|killwait|fuzz N\n");
		return 2;
	}
	if (!strcmp(argv[1], "dup2"))
		attack_dup2();
	else if (!strcmp(argv[1], "reuse"))
		attack_reuse();
	else if (!strcmp(argv[1], "refusals"))
		attack_refusals();
	else if (!strcmp(argv[1], "bigbo"))
		attack_bigbo();
	else if (!strcmp(argv[1], "closerange"))
		attack_closerange();
	else if (!strcmp(argv[1], "unsharefiles"))
		attack_unsharefiles();
	else if (!strcmp(argv[1], "mapunload"))
		attack_mapunload();
	else if (!strcmp(argv[1], "killwait"))
		attack_killwait();
	else if (!strcmp(argv[1], "fuzz"))
		attack_fuzz(argc > 2 ? atol(argv[2]) : 20000);
	else
		return 2;
	printf("%s: %d failed\n", argv[1], failures);
	return failures ? 1 : 0;
}
