/* SPDX-License-Identifier: MIT */
/*
 * The cheap paths of a cached submission (docs/guard.md, "Performance"),
 * and what they must still get right:
 *
 *   usercopy   a copy from the calling thread's live stack is a plain
 *              copy, anything else goes through process_vm_readv on the
 *              cached thread id: bad pointers still give EFAULT (also
 *              just past the top of a stack), and a child process, made
 *              by fork() or by a raw clone() that runs no atfork
 *              handler, reads its own memory, not its parent's; so do
 *              a parent after its vfork child exec'd and a thread after
 *              the main thread has exited
 *   uring      a schedule appended after a cached io_uring submit is
 *              decided again and blocked; a ring exited and set up again
 *              at the same address is not taken for the old one
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devices.h"
#include "fake.h"
#include "mirror.h"
#include "spawn.h"
#include "suites.h"
#include "uring.h"
#include "usercopy.h"

/* ---- usercopy ---- */

START_TEST(test_copy_stack_and_heap)
{
	char stack[32] = "on the stack, as ioctl args are";
	char *heap = strdup("on the heap, as image bytes are");
	char out[32];
	ck_assert_int_eq(copy_from_user(out, (uintptr_t)stack, 32), 0);
	ck_assert_mem_eq(out, stack, 32);
	ck_assert_int_eq(copy_from_user(out, (uintptr_t)heap, 32), 0);
	ck_assert_mem_eq(out, heap, 32);
	ck_assert_int_eq(copy_to_user((uintptr_t)stack, "written", 8), 0);
	ck_assert_str_eq(stack, "written");
	ck_assert_int_eq(copy_to_user((uintptr_t)heap, "written", 8), 0);
	ck_assert_str_eq(heap, "written");
	free(heap);
}
END_TEST

START_TEST(test_copy_bad_pointers)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char buf[16] = "";
	/* Whatever a first copy maps for itself, before the hole. */
	static const char warm[1];
	ck_assert_int_eq(copy_from_user(buf, (uintptr_t)warm, 1), 0);
	char *m = mmap(NULL, 3 * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(mprotect(m + page, page, PROT_NONE), 0);
	ck_assert_int_eq(munmap(m + 2 * page, page), 0);
	ck_assert_int_eq(copy_from_user(buf, 8, sizeof(buf)), -EFAULT);
	ck_assert_int_eq(copy_from_user(buf, (uintptr_t)(m + page),
					sizeof(buf)), -EFAULT);
	ck_assert_int_eq(copy_from_user(buf, (uintptr_t)(m + 2 * page),
					sizeof(buf)), -EFAULT);
	ck_assert_int_eq(copy_from_user(buf, (uintptr_t)(m + page - 8),
					sizeof(buf)), -EFAULT);
	ck_assert_int_eq(copy_from_user(buf, UINT64_MAX - 4, sizeof(buf)),
			 -EFAULT);
	ck_assert_int_eq(copy_from_user(buf, (uintptr_t)m, sizeof(buf)), 0);
	ck_assert_int_eq(copy_to_user((uintptr_t)m, buf, sizeof(buf)),
			 -EFAULT);
	munmap(m, 2 * page);
}
END_TEST

/* A thread on a stack of its own, with a protected page right above its
 * top: a range that runs past the top is not the live stack. */
struct top_probe {
	char *top;
	int across, inside;
};

static void *probe_top(void *arg)
{
	struct top_probe *t = arg;
	char buf[16];
	t->across = copy_from_user(buf, (uintptr_t)(t->top - 8), 16);
	t->inside = copy_from_user(buf, (uintptr_t)(t->top - 16), 16);
	return NULL;
}

START_TEST(test_copy_past_stack_top)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size = 256 * page;       /* room for a sanitizer's frames */
	char *m = mmap(NULL, size + page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(mprotect(m + size, page, PROT_NONE), 0);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	ck_assert_int_eq(pthread_attr_setstack(&attr, m, size), 0);
	struct top_probe t = { m + size, 1, 1 };
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, &attr, probe_top, &t), 0);
	pthread_join(th, NULL);
	pthread_attr_destroy(&attr);
	ck_assert_int_eq(t.across, -EFAULT);
	ck_assert_int_eq(t.inside, 0);
	munmap(m, size + page);
}
END_TEST

/* In a child process: the buffer changed after the fork must be read
 * as the child sees it, and a bad pointer must still fail.  The exit
 * status says which check failed. */
static int child_copies(char *heap)
{
	char out[16];
	strcpy(heap, "child's bytes");
	if (copy_from_user(out, (uintptr_t)heap, sizeof(out)) != 0)
		return 1;
	if (strcmp(out, "child's bytes"))
		return 2;
	if (copy_from_user(out, 8, sizeof(out)) != -EFAULT)
		return 3;
	if (copy_to_user((uintptr_t)heap, "written back", 13) != 0 ||
	    strcmp(heap, "written back"))
		return 4;
	return 0;
}

/* fork(), then a raw clone() that runs no atfork handler (_i 1). */
START_TEST(test_copy_in_child_process)
{
	char *heap = strdup("parent's bytes");
	char out[16];
	/* The parent's thread id is cached now. */
	ck_assert_int_eq(copy_from_user(out, (uintptr_t)heap, sizeof(out)),
			 0);
	pid_t pid = _i == 0 ? fork()
			    : (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL,
					     NULL, NULL);
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(child_copies(heap));
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "child status %#x", status);
	ck_assert_str_eq(heap, "parent's bytes");
	free(heap);
}
END_TEST

/* A vfork child shares its parent's TLS: the id it caches there is its
 * own, and names another program once it has exec'd. */
START_TEST(test_copy_after_vfork_child)
{
	char *heap = strdup("parent's bytes");
	char out[16];
	pid_t pid = vfork();
	if (pid == 0) {
		copy_from_user(out, (uintptr_t)heap, sizeof(out));
		execl("/bin/sleep", "sleep", "60", (char *)NULL);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	memset(out, 0, sizeof(out));
	int in = copy_from_user(out, (uintptr_t)heap, sizeof(out));
	int back = copy_to_user((uintptr_t)heap, "written back", 13);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ck_assert_int_eq(in, 0);
	ck_assert_str_eq(out, "parent's bytes");
	ck_assert_int_eq(back, 0);
	ck_assert_str_eq(heap, "written back");
	free(heap);
}
END_TEST

/* Whether the thread group's leader has gone: process_vm_readv by the
 * process id then fails (ESRCH), as copies by getpid() used to. */
static int leader_gone(void)
{
	char byte, out;
	struct iovec l = { &out, 1 }, r = { &byte, 1 };
	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) < 0 &&
	       errno == ESRCH;
}

static void *copy_after_main(void *unused)
{
	(void)unused;
	for (int i = 0; i < 10000 && !leader_gone(); i++)
		usleep(1000);
	char *heap = strdup("still readable");
	char out[16];
	int rc = copy_from_user(out, (uintptr_t)heap, sizeof(out));
	_exit(!leader_gone() ? 2 : rc != 0 || strcmp(out, "still readable"));
}

/* pthread_exit in main leaves the thread group's leader a zombie. */
START_TEST(test_copy_after_main_thread_exits)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		pthread_t th;
		if (pthread_create(&th, NULL, copy_after_main, NULL))
			_exit(9);
		pthread_exit(NULL);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "child status %#x", status);
}
END_TEST

/* ---- io_uring: what the walk decides, on a real ring ---- */

struct uring_fixture {
	struct io_uring ring;
	int dev;                        /* /dev/null, taken for the device */
	struct ag_file *f;
	uint32_t prog;
};

static void uring_open(struct uring_fixture *u)
{
	fake_setup();
	ck_assert_int_eq(io_uring_queue_init(8, &u->ring, IORING_SETUP_SQE128),
			 0);
	u->dev = open("/dev/null", O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(u->dev, 0);
	u->f = ag_file_new();
	ag_fd_set(u->dev, u->f);
	u->prog = fake_program(u->f, PROG_GOOD);
}

static void uring_close(struct uring_fixture *u)
{
	ag_ring_forget(&u->ring);
	io_uring_queue_exit(&u->ring);
	ag_fd_forget(u->dev);
	close(u->dev);
	ag_file_unref(u->f);
}

/* One URING_CMD through the guard's walk (fd -1: registered slot 0),
 * then the kernel: the CQE's result.  A command the guard lets through
 * reaches /dev/null, which has no commands: not EPERM. */
static int uring_cmd(struct uring_fixture *u, int fd, uint32_t op,
		     const void *arg, size_t size)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	ck_assert_ptr_nonnull(sqe);
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd < 0 ? 0 : fd;
	sqe->flags = fd < 0 ? IOSQE_FIXED_FILE : 0;
	sqe->cmd_op = op;
	memcpy((uint8_t *)sqe + offsetof(struct io_uring_sqe, cmd), arg, size);
	struct ag_held *held = ag_uring_check(&u->ring);
	ck_assert_int_eq(io_uring_submit(&u->ring), 1);
	ag_uring_release(&u->ring, held);
	struct io_uring_cqe *cqe;
	ck_assert_int_eq(io_uring_wait_cqe(&u->ring, &cqe), 0);
	int res = cqe->res;
	io_uring_cqe_seen(&u->ring, cqe);
	return res;
}

static int uring_submit(struct uring_fixture *u, int fd, uint32_t s)
{
	struct arena_uring_submit sub = { .schedule = s };
	return uring_cmd(u, fd, ARENA_URING_CMD_SUBMIT, &sub, sizeof(sub));
}

static int uring_append(struct uring_fixture *u, uint32_t s,
			const struct ac_ref *refs, uint32_t n)
{
	struct drm_arena_schedule_append a = { .schedule = s, .count = n,
					       .refs = (uintptr_t)refs };
	return uring_cmd(u, u->dev, ARENA_URING_CMD_APPEND, &a, sizeof(a));
}

START_TEST(test_uring_append_after_cached_submit)
{
	struct uring_fixture u;
	uring_open(&u);
	/* P alone: certified; resubmitted, the verdict is a lookup. */
	uint32_t s = fake_schedule(u.f, u.prog, prog_bad_d_refs, 1, 1);
	for (int i = 0; i < 3; i++)
		ck_assert_int_ne(uring_submit(&u, u.dev, s), -EPERM);
	/* R overwrites a before Q reads it: (D) fails from now on. */
	ck_assert_int_ne(uring_append(&u, s, prog_bad_d_refs + 1, 3),
			 -EINVAL);
	ck_assert_int_eq(uring_submit(&u, u.dev, s), -EPERM);
	ck_assert_int_eq(uring_submit(&u, u.dev, s), -EPERM);
	char *log = slurp(scratch_path("log"));
	ck_assert_int_eq(count(log, "verdict 8 (D)"), 1);
	free(log);
	uring_close(&u);
}
END_TEST

/* Registered slot 0 holds `fd` (the device, or a pipe). */
static void register_slot(struct uring_fixture *u, int fd)
{
	ck_assert_int_eq(io_uring_register_files(&u->ring, &fd, 1), 0);
	ag_ring_files_set(&u->ring, &fd, 1);
}

/* Set up again in the same struct, by the same thread: the same
 * address, and most likely the same fd and mapping. */
static void ring_again(struct uring_fixture *u)
{
	ag_ring_forget(&u->ring);
	io_uring_queue_exit(&u->ring);
	ck_assert_int_eq(io_uring_queue_init(8, &u->ring, IORING_SETUP_SQE128),
			 0);
}

START_TEST(test_ring_set_up_again)
{
	struct uring_fixture u;
	uring_open(&u);
	uint32_t bad = fake_schedule(u.f, u.prog, prog_bad_d_refs, 4, 4);
	register_slot(&u, u.dev);
	ck_assert_int_eq(uring_submit(&u, -1, bad), -EPERM);

	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	ring_again(&u);
	register_slot(&u, p[0]);
	ck_assert_int_ne(uring_submit(&u, -1, bad), -EPERM);

	ring_again(&u);
	register_slot(&u, u.dev);
	ck_assert_int_eq(uring_submit(&u, -1, bad), -EPERM);
	close(p[0]);
	close(p[1]);
	uring_close(&u);
}
END_TEST

static void teardown(void)
{
	scratch_remove();
}

Suite *suite_fastpath(void)
{
	Suite *s = suite_create("fastpath");
	TCase *t = tcase_create("fastpath");
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_test(t, test_copy_stack_and_heap);
	tcase_add_test(t, test_copy_bad_pointers);
	tcase_add_test(t, test_copy_past_stack_top);
	tcase_add_loop_test(t, test_copy_in_child_process, 0, 2);
	tcase_add_test(t, test_copy_after_vfork_child);
	tcase_add_test(t, test_copy_after_main_thread_exits);
	tcase_add_test(t, test_uring_append_after_cached_submit);
	tcase_add_test(t, test_ring_set_up_again);
	suite_add_tcase(s, t);
	return s;
}
