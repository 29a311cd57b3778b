/* SPDX-License-Identifier: MIT */
/*
 * guard-share-client: processes that share the guard's memory, and
 * signal handlers that submit while their thread is inside the guard
 * (test_share.c).  Each subcommand sets up a certified schedule and a
 * failing one on the device, does its thing, and then checks that the
 * certified one still runs and the failing one is still blocked (EPERM);
 * the test reads the records.  "ok: ..." / "FAIL: ..." lines (checks.h),
 * exit 1 if any failed.
 *
 *   vfork        a vfork child closes the device fd, then _exits
 *   vforkrange   a vfork child does what CPython's subprocess does before
 *                exec: dup2 onto 2, close_range(3, 4), close_range(6, ~0U)
 *   clonevm      the same in a clone(CLONE_VM) child (its own fd table)
 *   clonefiles   a clone(CLONE_VM|CLONE_FILES) child closes the device fd,
 *                which is the parent's: the parent's requests on it fail
 *                with EBADF, and a device opened again works
 *   vforkreopen  a vfork child closes the device fd, opens the device
 *                again at that number (an open file of its own: a new
 *                driver context, numbering its objects from 1 again) and
 *                creates a failing program there: nothing of it is the
 *                parent's, whose new schedule of its certified program
 *                (the same handle) runs
 *   vforkshared  a vfork child opens the device (an open file of its own)
 *                and, on the parent's fd, which it shares, creates a
 *                schedule of the parent's certified program: the guard
 *                learns it, and the parent's submit of it runs
 *   spawn        posix_spawn of /bin/true with close actions (addclose of
 *                the device fd, addclosefrom_np(3), adddup2 onto 2)
 *   handler      a SIGUSR1 handler submits (the failing schedule, then the
 *                certified one) while its thread is inside the guard: in a
 *                probe of a new descriptor, and in the driver's submit of
 *                the certified schedule (libguard-sighook.so, preloaded
 *                between guard and simulator, raises the signal there):
 *                refused, never run, never a hang (alarm: 10 s)
 *   handleruring the same in the probe, the handler submitting by io_uring
 *   handlerringinit  the handler submitting by io_uring while its thread
 *                sets up another ring (io_uring_queue_init)
 *
 *   vforkrecord  a vfork child closes every descriptor from 3 (the guard's
 *                log among them), opens the device and submits a schedule
 *                the guard never saw created: the refusal's record is
 *                written in the child; the parent's log is still its own
 *   rawfork      a child of a raw fork system call (no atfork handler runs):
 *                its memory is its own, so is the guard's state: it closes
 *                the device fd, opens the device again and its certified
 *                schedule there runs
 *   pidnsvfork   the vfork child's close, the child in a new pid namespace
 *                (run as pid 1, `unshare -pf --mount-proc`, with
 *                CAP_SYS_ADMIN, so that the child's pid, 1, is the
 *                parent's; the share suite does so as root)
 *   nokcmp-CMD   CMD under a seccomp filter that denies kcmp(2) (EPERM),
 *                as Docker's default profile does
 *
 * It is also a library (libguard-share.so) for python3's ctypes:
 * share_setup() then share_check(), with subprocess.run in between.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checks.h"
#include "nokcmp.h"

static struct cdev dev;
static uint32_t good_prog, good, failing;

/* The device open, a certified schedule and a failing (D) one. */
int share_setup(void)
{
	open_or_exit(&dev, CP_IOCTL);
	uint32_t prog = program(&dev, PROG_GOOD);
	good_prog = prog;
	good = schedule(&dev, prog, prog_good_refs, 2);
	failing = schedule(&dev, prog, prog_bad_d_refs, 4);
	return atomic_load(&failures) ? 1 : 0;
}

/* The certified schedule runs with the right output; the failing one is
 * refused (EPERM) and never runs.  0, or 1 if a check failed. */
int share_check(void)
{
	int before = atomic_load(&failures);
	cdev_zero(&dev);
	uint64_t seqno = 0;
	int rc = cdev_submit(&dev, failing, &seqno);
	check(rc == -EPERM, "the failing schedule is refused: %d", rc);
	if (rc == 0)
		cdev_wait(&dev, seqno);
	check(cdev_all(&dev, PROG_OUT, 16, 0.0f), "it never ran");
	rc = cdev_run(&dev, good);
	check(rc == 0, "the certified schedule runs: %d", rc);
	check(cdev_all(&dev, PROG_OUT, 64, 1.0f), "its output is right");
	return atomic_load(&failures) != before;
}

/* ---- children sharing the memory ---- */

/* CPython's child between vfork and exec (_posixsubprocess.c). */
static void like_subprocess(void)
{
	dup2(STDOUT_FILENO, STDERR_FILENO);
	close_range(3, 4, 0);
	close_range(6, ~0U, 0);
}

static void cmd_vfork(int range)
{
	int fd = dev.fd;
	pid_t pid = vfork();
	if (pid == 0) {
		if (range)
			like_subprocess();
		else
			close(fd);
		_exit(0);
	}
	int status = -1;
	check(pid > 0 && waitpid(pid, &status, 0) == pid && status == 0,
	      "vfork child done: %d", status);
}

/* The child's device is its own open file at the parent's number: the
 * guard must not take its requests for the parent's (its program would
 * replace the parent's program of the same handle in the mirror). */
static void cmd_vfork_reopen(void)
{
	int fd = dev.fd;
	size_t len;
	uint8_t *image = prog_image(PROG_BAD_C, &len);
	struct drm_arena_program_create c = { .image = (uintptr_t)image,
					      .size = len };
	volatile int child_fd = -1, child_rc = 1;
	pid_t pid = vfork();
	if (pid == 0) {
		close(fd);
		int nfd = open(ARENA_NODE_PATH, O_RDWR | O_CLOEXEC);
		if (nfd >= 0 && nfd != fd) {
			dup2(nfd, fd);
			close(nfd);
		}
		child_fd = nfd;
		child_rc = ioctl(fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, &c) ?
			-errno : 0;
		/* Closed before _exit, as exit would in the kernel: the
		 * simulator keys its fd table by number in this shared
		 * memory too, and forgets the child's file only so. */
		close(fd);
		_exit(0);
	}
	int status = -1;
	check(pid > 0 && waitpid(pid, &status, 0) == pid && status == 0,
	      "vfork child done: %d", status);
	check(child_fd >= 0 && child_rc == 0, "the child's program create "
	      "on its own open file: fd %d, %d, handle %u (the parent's "
	      "certified program is %u)", child_fd, child_rc, c.handle,
	      good_prog);
	free(image);
	uint32_t s = schedule(&dev, good_prog, prog_good_refs, 2);
	cdev_zero(&dev);
	int rc = cdev_run(&dev, s);
	check(rc == 0, "a new schedule of the parent's certified program "
	      "runs: %d", rc);
	check(rc != 0 || cdev_all(&dev, PROG_OUT, 64, 1.0f),
	      "its output is right");
}

/* A vfork child with a device of its own, working on the parent's open
 * file too: what it creates there is the parent's. */
static void cmd_vfork_shared(void)
{
	volatile uint32_t child_sched = 0;
	volatile int child_fd = -1;
	pid_t pid = vfork();
	if (pid == 0) {
		child_fd = open(ARENA_NODE_PATH, O_RDWR | O_CLOEXEC);
		struct drm_arena_handle h = { .handle = 0 };  /* none */
		ioctl(child_fd, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, &h);
		child_sched = schedule(&dev, good_prog, prog_good_refs, 2);
		close(child_fd);
		_exit(0);
	}
	int status = -1;
	check(pid > 0 && waitpid(pid, &status, 0) == pid && status == 0,
	      "vfork child done: %d", status);
	check(child_fd >= 0 && child_sched != 0, "the child opened the device "
	      "(fd %d) and made schedule %u on the parent's", child_fd,
	      child_sched);
	cdev_zero(&dev);
	int rc = cdev_run(&dev, child_sched);
	check(rc == 0, "the child's certified schedule runs in the parent: %d",
	      rc);
	check(rc != 0 || cdev_all(&dev, PROG_OUT, 64, 1.0f),
	      "its output is right");
}

static void cmd_raw_fork(void)
{
	pid_t pid = (pid_t)syscall(SYS_fork);
	if (pid == 0) {
		cdev_close(&dev);
		struct cdev own;
		open_or_exit(&own, CP_IOCTL);
		uint32_t prog = program(&own, PROG_GOOD);
		uint32_t s = schedule(&own, prog, prog_good_refs, 2);
		int rc = cdev_run(&own, s);
		check(rc == 0, "in the raw fork child, a certified schedule on "
		      "the device opened again runs: %d", rc);
		_exit(atomic_load(&failures) ? 1 : 0);
	}
	int status = -1;
	check(pid > 0 && waitpid(pid, &status, 0) == pid && status == 0,
	      "raw fork child done: %d", status);
}

static void cmd_vfork_record(void)
{
	volatile int child_rc = 0;
	pid_t pid = vfork();
	if (pid == 0) {
		close_range(3, ~0U, 0);
		int fd = open(ARENA_NODE_PATH, O_RDWR | O_CLOEXEC);
		struct drm_arena_schedule_submit sub = { .schedule = 1 };
		child_rc = ioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &sub) ?
			-errno : 0;
		close(fd);
		_exit(0);
	}
	int status = -1;
	check(pid > 0 && waitpid(pid, &status, 0) == pid && status == 0,
	      "vfork child done: %d", status);
	check(child_rc == -EPERM, "the child's submit of a schedule the "
	      "guard never saw is refused: %d", child_rc);
}

static char child_stack[256 * 1024] __attribute__((aligned(16)));

static int clone_child(void *arg)
{
	if (arg)
		close(*(int *)arg);
	else
		like_subprocess();
	return 0;
}

static void cmd_clone(int files)
{
	int flags = CLONE_VM | SIGCHLD | (files ? CLONE_FILES : 0);
	pid_t pid = clone(clone_child, child_stack + sizeof(child_stack),
			  flags, files ? &dev.fd : NULL);
	int status = -1;
	check(pid > 0 && waitpid(pid, &status, 0) == pid && status == 0,
	      "clone child done: %d", status);
	if (!files)
		return;
	/* The child closed the parent's fd: the driver says so. */
	uint64_t seqno;
	int rc = cdev_submit(&dev, good, &seqno);
	check(rc == -EBADF, "a submit on the fd the child closed: %d", rc);
	/* The device opened again (most likely at the same number): its
	 * own objects, as for any new open file. */
	share_setup();
}

static void cmd_spawn(void)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
	posix_spawn_file_actions_addclose(&fa, dev.fd);
#ifdef __GLIBC__
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
	char *argv[] = { "true", NULL };
	pid_t pid;
	int rc = posix_spawn(&pid, "/bin/true", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	int status = -1;
	check(rc == 0 && waitpid(pid, &status, 0) == pid && status == 0,
	      "posix_spawn /bin/true: %d, status %d", rc, status);
}

/* ---- a handler submitting while its thread is inside the guard ---- */

static volatile sig_atomic_t handled;
static int handler_rc[2];
/* What the handler submits on: the failing schedule, then the good one
 * (dev's, or another open file's whose path is io_uring). */
static struct cdev *handler_dev = &dev;
static uint32_t handler_sched[2];

static void submit_in_handler(int sig)
{
	(void)sig;
	int saved = errno;
	uint64_t seqno = 0;
	for (int i = 0; i < 2; i++)
		handler_rc[i] = cdev_submit(handler_dev, handler_sched[i],
					    &seqno);
	handled++;
	errno = saved;
}

/* libguard-sighook.so's sighook_arm, or NULL with a FAIL line. */
static void (*sighook(void))(int)
{
	void (*arm)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "sighook_arm");
	check(arm != NULL, "libguard-sighook.so is preloaded");
	if (arm) {
		struct sigaction sa = { .sa_handler = submit_in_handler };
		sigaction(SIGUSR1, &sa, NULL);
	}
	return arm;
}

/* The handler raised in the guard's probe of a new open file (the hook
 * raises in DRM_IOCTL_VERSION, asked at its first guarded request). */
static void raise_in_probe(void (*arm)(int))
{
	struct cdev other;
	open_or_exit(&other, CP_IOCTL);
	handled = 0;
	arm(1);
	program(&other, PROG_GOOD);
	arm(0);
	cdev_close(&other);
}

/* The handler ran once, in `where`, and both its submits were refused
 * undecided (EDEADLK: neither run nor blocked by a verdict). */
static void handler_refused(const char *where)
{
	check(handled == 1, "the handler ran in %s: %d", where, (int)handled);
	check(handler_rc[0] == -EDEADLK, "in %s, the failing submit is "
	      "refused, undecided: %d", where, handler_rc[0]);
	check(handler_rc[1] == -EDEADLK, "and so is the certified one: %d",
	      handler_rc[1]);
}

static void cmd_handler(void)
{
	void (*arm)(int) = sighook();
	if (!arm)
		return;
	alarm(10);                       /* a deadlock ends the run */
	handler_sched[0] = failing;
	handler_sched[1] = good;
	for (int round = 0; round < 10; round++) {
		raise_in_probe(arm);
		handler_refused("the probe");
		/* In the driver's submit of the certified schedule: its
		 * thread holds the guard's locks (the hook raises in the
		 * submit). */
		handled = 0;
		arm(2);
		uint64_t seqno;
		int rc = cdev_submit(&dev, good, &seqno);
		arm(0);
		check(rc == 0, "the interrupted certified submit runs: %d", rc);
		if (rc == 0)
			cdev_wait(&dev, seqno);
		handler_refused("the submit");
		check(share_check() == 0, "round %d: outside the handler, "
		      "decided as usual", round);
	}
	alarm(0);
}

/* The io_uring handler cases' device: a ring-path open with a failing
 * and a certified schedule for the handler to submit. */
static void handler_uring_setup(struct cdev *ring_dev)
{
	open_or_exit(ring_dev, CP_URING);
	uint32_t prog = program(ring_dev, PROG_GOOD);
	handler_sched[0] = schedule(ring_dev, prog, prog_bad_d_refs, 4);
	handler_sched[1] = schedule(ring_dev, prog, prog_good_refs, 2);
	handler_dev = ring_dev;
}

/* The same by io_uring: the handler's submits (liburing's
 * submit_and_wait of a URING_CMD) while its thread is in the probe. */
static void cmd_handler_uring(void)
{
	void (*arm)(int) = sighook();
	if (!arm)
		return;
	alarm(10);
	struct cdev ring_dev;
	handler_uring_setup(&ring_dev);
	raise_in_probe(arm);
	handler_refused("the probe, by io_uring");
	check(cdev_all(&ring_dev, PROG_OUT, 64, 0.0f), "neither ran");
	/* Its SQEs stay queued in that ring (liburing's way with a
	 * failed submit); the ring is not used again. */
	alarm(0);
}

/* The handler's io_uring submits while its thread sets up a ring of its
 * own (io_uring_queue_init: the guard makes the new ring's state under
 * its ring lock; the hook raises in that calloc).  The handler's submit
 * looks its ring up under that lock: it must be refused, not wait for
 * its own thread.  Without a sanitizer runtime taking calloc first, the
 * hook fires; with one, the handler never runs (said, not failed). */
static void cmd_handler_ring_init(void)
{
	void (*arm)(int) = sighook();
	if (!arm)
		return;
	alarm(10);
	struct cdev ring_dev;
	handler_uring_setup(&ring_dev);
	/* The ring this thread walked last is found without the lock:
	 * walk a third one, so that the handler's is looked up under it. */
	struct cdev third;
	open_or_exit(&third, CP_URING);
	schedule(&third, program(&third, PROG_GOOD), prog_good_refs, 2);
	handled = 0;
	struct io_uring other;
	arm(3);
	int rc = io_uring_queue_init(8, &other, IORING_SETUP_SQE128);
	arm(0);
	check(rc == 0, "the ring set up: %d", rc);
	if (rc == 0)
		io_uring_queue_exit(&other);
	if (handled == 0 && getenv("LD_PRELOAD") &&
	    strstr(getenv("LD_PRELOAD"), "san")) {
		printf("ok: a sanitizer's calloc came first: not tried\n");
	} else {
		handler_refused("a ring's set-up, by io_uring");
		check(cdev_all(&ring_dev, PROG_OUT, 64, 0.0f), "neither ran");
	}
	cdev_close(&third);
	alarm(0);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: guard-share-client SUBCOMMAND\n");
		return 2;
	}
	const char *cmd = argv[1];
	if (!strncmp(cmd, "nokcmp-", 7)) {
		deny_kcmp();
		cmd += 7;
	}
	share_setup();
	if (!strcmp(cmd, "vfork"))
		cmd_vfork(0);
	else if (!strcmp(cmd, "vforkrange"))
		cmd_vfork(1);
	else if (!strcmp(cmd, "vforkreopen"))
		cmd_vfork_reopen();
	else if (!strcmp(cmd, "vforkshared"))
		cmd_vfork_shared();
	else if (!strcmp(cmd, "pidnsvfork")) {
		/* Run as pid 1 of a pid namespace (unshare -pf), with
		 * CAP_SYS_ADMIN: the vfork child is pid 1 of a new one. */
		check(unshare(CLONE_NEWPID) == 0, "unshare(CLONE_NEWPID): %s",
		      strerror(errno));
		cmd_vfork(0);
	} else if (!strcmp(cmd, "vforkrecord"))
		cmd_vfork_record();
	else if (!strcmp(cmd, "rawfork"))
		cmd_raw_fork();
	else if (!strcmp(cmd, "clonevm"))
		cmd_clone(0);
	else if (!strcmp(cmd, "clonefiles"))
		cmd_clone(1);
	else if (!strcmp(cmd, "spawn"))
		cmd_spawn();
	else if (!strcmp(cmd, "handler"))
		cmd_handler();
	else if (!strcmp(cmd, "handlerringinit"))
		cmd_handler_ring_init();
	else if (!strcmp(cmd, "handleruring"))
		cmd_handler_uring();
	else {
		fprintf(stderr, "guard-share-client: no subcommand %s\n", cmd);
		return 2;
	}
	share_check();
	return atomic_load(&failures) ? 1 : 0;
}
