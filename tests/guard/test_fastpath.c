/* SPDX-License-Identifier: MIT */
/*
 * The cheap paths of a cached submission (docs/guard.md, "Performance"),
 * and what they must still get right:
 *
 *   usercopy   a copy from the calling thread's live stack is a plain
 *              copy; up to a page elsewhere, a hardware transaction
 *              where the CPU has them; anything else goes through
 *              process_vm_readv on the cached thread id: bad pointers
 *              still give EFAULT (also just past the top of a stack, on
 *              a page unmapped or protected by another thread between
 *              two copies or while they run), every protection gets
 *              the kernel's own copy's answer (a PROT_WRITE-only page is
 *              read), and a child process, made
 *              by fork() or by a raw clone() that runs no atfork
 *              handler, reads its own memory, not its parent's; so do
 *              a parent after its vfork child exec'd and a thread after
 *              the main thread has exited.  Every case runs twice: with
 *              transactions as the CPU has them (usercopy), and with
 *              them off (usercopy-syscalls)
 *   heap arg   a submission whose argument another thread unmapped
 *              since the last one gets EFAULT, and nothing runs
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
#include <stdatomic.h>
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

/* What the system calls' way maps for itself (its tag page) mapped
 * now, not later into a hole a test made for a bad pointer: a
 * transaction maps nothing, and a bad pointer takes that way. */
static void warm_copies(void)
{
	char buf[1];
	ck_assert_int_eq(copy_from_user(buf, 8, 1), -EFAULT);
}

START_TEST(test_copy_bad_pointers)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char buf[16] = "";
	/* Whatever a first copy maps for itself, before the hole. */
	static const char warm[1];
	ck_assert_int_eq(copy_from_user(buf, (uintptr_t)warm, 1), 0);
	warm_copies();
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

/* A fresh page off the stack, 0x5a all through when `touched` (else
 * never faulted in), then given `prot`. */
static unsigned char *page_with(size_t page, int prot, int touched)
{
	unsigned char *m = mmap(NULL, page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	if (touched)
		memset(m, 0x5a, page);
	ck_assert_int_eq(mprotect(m, page, prot), 0);
	return m;
}

/* The driver's answer for [p, p + len): its copy_from_user (write 0)
 * or copy_to_user (out 1), as the kernel's pipe write() and read() make
 * them, 0 or -EFAULT. */
static int kernel_copy(unsigned char *p, size_t len, int out)
{
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	unsigned char buf[64];
	memset(buf, 0x3c, sizeof(buf));
	ssize_t n;
	if (out) {
		ck_assert_int_eq(write(fds[1], buf, len), (ssize_t)len);
		n = read(fds[0], p, len);
	} else {
		n = write(fds[1], p, len);
	}
	int rc = n == (ssize_t)len ? 0 : n < 0 && errno == EFAULT ? -EFAULT
								 : -EIO;
	close(fds[0]);
	close(fds[1]);
	ck_assert_int_ne(rc, -EIO);
	return rc;
}

/* Every protection a mapping can have, its page present or not: a copy
 * gives what the driver's copy_from_user/copy_to_user gives (on x86,
 * PROT_WRITE alone, and PROT_EXEC alone without protection keys, are
 * readable), with transactions and without, and the bytes are the
 * page's.  process_vm_readv refuses those pages; a transaction reads
 * them when they are present. */
START_TEST(test_copy_as_the_kernel_does)
{
	static const int prots[] = { PROT_NONE, PROT_READ, PROT_WRITE,
				     PROT_EXEC, PROT_READ | PROT_EXEC,
				     PROT_READ | PROT_WRITE };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	warm_copies();
	for (size_t i = 0; i < sizeof(prots) / sizeof(prots[0]); i++) {
		for (int k = 0; k < 4; k++) {
			int touched = k & 1, write = k >> 1;
			unsigned char *want = page_with(page, prots[i],
							touched);
			int rc_want = kernel_copy(want, 64, write);
			unsigned char *m = page_with(page, prots[i], touched);
			unsigned char buf[64], src[64];
			memset(buf, 0, sizeof(buf));
			memset(src, 0x3c, sizeof(src));
			int rc = write ? copy_to_user((uintptr_t)m, src, 64)
				       : copy_from_user(buf, (uintptr_t)m, 64);
			ck_assert_msg(rc == rc_want,
				      "prot %d, %s, %s: %d, the kernel %d",
				      prots[i], touched ? "present" : "absent",
				      write ? "write" : "read", rc, rc_want);
			if (rc == 0 && !write)
				for (int b = 0; b < 64; b++)
					ck_assert_int_eq(buf[b],
							 touched ? 0x5a : 0);
			if (rc == 0 && write) {
				ck_assert_int_eq(mprotect(m, page, PROT_READ),
						 0);
				ck_assert_mem_eq(m, src, 64);
			}
			munmap(want, page);
			munmap(m, page);
		}
	}
	/* Above the user address space (the vsyscall page, where
	 * vsyscall=emulate maps it readable): the driver's access_ok
	 * refuses it before any page is looked at. */
	unsigned char buf[8] = "";
	ck_assert_int_eq(copy_from_user(buf, UINT64_C(0xffffffffff600000),
					8), -EFAULT);
	ck_assert_int_eq(copy_to_user(UINT64_C(0xffffffffff600000), buf, 8),
			 -EFAULT);
}
END_TEST

/* Three pages of 0xa5 off the stack, the middle one's start at
 * pages + page. */
static unsigned char *pattern_pages(size_t page)
{
	unsigned char *m = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	memset(m, 0xa5, 3 * page);
	return m;
}

/* Every length up to two pages' worth that a request copies, at the
 * start of a page, inside it and across into the next: the bytes
 * read are the range's, and a write changes exactly the range. */
START_TEST(test_copy_sizes)
{
	static const size_t lens[] = { 1, 7, 8, 15, 16, 17, 56, 80, 100,
				       1000, 4095, 4096, 4097, 8192 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *m = pattern_pages(page);
	for (size_t i = 0; i < 3 * page; i++)
		m[i] = (unsigned char)(i * 7 + 1);
	unsigned char *expect = malloc(3 * page);
	memcpy(expect, m, 3 * page);
	unsigned char *buf = malloc(8192);
	unsigned char *in = malloc(8192);
	for (size_t k = 0; k < 8192; k++)
		in[k] = (unsigned char)(k * 13 + 5);
	const size_t offs[] = { 0, 1, page - 8, page - 1 };
	for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++) {
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			size_t at = page / 2 + offs[o], len = lens[l];
			if (at + len > 3 * page)
				continue;
			memset(buf, 0, 8192);
			ck_assert_int_eq(copy_from_user(buf, (uintptr_t)(m + at),
							len), 0);
			ck_assert_mem_eq(buf, expect + at, len);
			ck_assert_int_eq(copy_to_user((uintptr_t)(m + at), in,
						      len), 0);
			memcpy(expect + at, in, len);
			ck_assert_mem_eq(m, expect, 3 * page);
		}
	}
	free(in);
	free(buf);
	free(expect);
	munmap(m, 3 * page);
}
END_TEST

static void *unmap_page(void *page)
{
	munmap(page, (size_t)sysconf(_SC_PAGESIZE));
	return NULL;
}

/* Read and written once, then unmapped by another thread: EFAULT both
 * ways; mapped again read-only: read, not written (the page unchanged). */
START_TEST(test_copy_unmapped_between)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *m = pattern_pages(page);
	unsigned char *arg = m + page + 100;
	unsigned char buf[16];
	warm_copies();
	memset(buf, 0x5a, sizeof(buf));
	ck_assert_int_eq(copy_from_user(buf, (uintptr_t)arg, 16), 0);
	ck_assert_int_eq(copy_to_user((uintptr_t)arg, buf, 16), 0);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, unmap_page, m + page), 0);
	pthread_join(th, NULL);
	ck_assert_int_eq(copy_from_user(buf, (uintptr_t)arg, 16), -EFAULT);
	ck_assert_int_eq(copy_to_user((uintptr_t)arg, buf, 16), -EFAULT);
	void *again = mmap(m + page, page, PROT_READ,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ck_assert_ptr_eq(again, m + page);
	ck_assert_int_eq(copy_from_user(buf, (uintptr_t)arg, 16), 0);
	ck_assert_int_eq(buf[0], 0);
	memset(buf, 0x5a, sizeof(buf));
	ck_assert_int_eq(copy_to_user((uintptr_t)arg, buf, 16), -EFAULT);
	ck_assert_int_eq(arg[0], 0);
	munmap(m, 3 * page);
}
END_TEST

/* The page under a copy, made and unmade by another thread the whole
 * time: a memfd's page of 0xa5 mapped at a fixed address, then
 * protected, then unmapped. */
struct flipper {
	unsigned char *at;
	int memfd;
	atomic_int stop;
	long flips;
};

static void *flip_page(void *arg)
{
	struct flipper *f = arg;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	while (!atomic_load(&f->stop)) {
		void *m = mmap(f->at, page, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_FIXED, f->memfd, 0);
		if (m == MAP_FAILED)
			break;
		mprotect(f->at, page, PROT_READ);
		mprotect(f->at, page, PROT_NONE);
		munmap(f->at, page);
		f->flips++;
	}
	return NULL;
}

/* Each copy either succeeds with the page's bytes or gets EFAULT, and
 * the process takes no signal (a copy that faulted would end the
 * test); a write succeeds only while the page is writable, so the
 * page holds 0xa5 throughout. */
START_TEST(test_copy_racing_unmap)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	warm_copies();
	struct flipper f = { .memfd = memfd_create("flip", MFD_CLOEXEC) };
	ck_assert_int_ge(f.memfd, 0);
	ck_assert_int_eq(ftruncate(f.memfd, (off_t)page), 0);
	unsigned char fill[4096];
	memset(fill, 0xa5, sizeof(fill));
	ck_assert_int_eq(pwrite(f.memfd, fill, page < sizeof(fill) ? page
						 : sizeof(fill), 0),
			 (ssize_t)(page < sizeof(fill) ? page : sizeof(fill)));
	f.at = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	ck_assert_ptr_ne(f.at, MAP_FAILED);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, flip_page, &f), 0);
	long ok = 0, fault = 0;
	for (int i = 0; i < 4000; i++) {
		unsigned char buf[56];
		memset(buf, 0, sizeof(buf));
		int rc = copy_from_user(buf, (uintptr_t)(f.at + 8), sizeof(buf));
		ck_assert_msg(rc == 0 || rc == -EFAULT, "copy in: %d", rc);
		if (rc == 0) {
			for (size_t k = 0; k < sizeof(buf); k++)
				ck_assert_int_eq(buf[k], 0xa5);
			ok++;
		} else {
			fault++;
		}
		rc = copy_to_user((uintptr_t)(f.at + 8), fill, sizeof(buf));
		ck_assert_msg(rc == 0 || rc == -EFAULT, "copy out: %d", rc);
	}
	atomic_store(&f.stop, 1);
	pthread_join(th, NULL);
	ck_assert_int_gt(f.flips, 0);
	ck_assert_int_gt(fault, 0);
	munmap(f.at, page);
	close(f.memfd);
	(void)ok;
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

/* ---- a submission's argument off the stack ---- */

/* Submitted by ioctl with its argument on a page of its own, twice;
 * then another thread unmaps the page: EFAULT, and the driver ran
 * nothing; mapped again read-only, the driver runs it and the copy out
 * fails: EFAULT after it acted, as from drm_ioctl(). */
START_TEST(test_heap_arg_unmapped_between)
{
	fake_setup();
	struct ag_file *f = ag_file_new();
	uint32_t prog = fake_program(f, PROG_GOOD);
	uint32_t s = fake_schedule(f, prog, prog_good_refs, 2, 2);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *m = pattern_pages(page);
	struct drm_arena_schedule_submit *sub = (void *)(m + page + 64);
	warm_copies();
	memset(sub, 0, sizeof(*sub));
	sub->schedule = s;
	int ran = fake_ran().n;
	for (int i = 0; i < 2; i++) {
		sub->seqno = 0;
		ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT,
					   sub), 0);
		ck_assert_uint_eq(sub->seqno, 1);       /* the fake's */
	}
	ck_assert_int_eq(fake_ran().n, ran + 2);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, unmap_page, m + page), 0);
	pthread_join(th, NULL);
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, sub),
			 -EFAULT);
	ck_assert_int_eq(fake_ran().n, ran + 2);
	void *again = mmap(m + page, page, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ck_assert_ptr_eq(again, m + page);
	sub->schedule = s;
	sub->seqno = 0;
	ck_assert_int_eq(mprotect(m + page, page, PROT_READ), 0);
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, sub),
			 -EFAULT);
	ck_assert_int_eq(fake_ran().n, ran + 3);
	ck_assert_uint_eq(sub->seqno, 0);
	munmap(m, 3 * page);
	ag_file_unref(f);
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

/* The system calls' way alone, on a CPU with transactions too. */
static void without_transactions(void)
{
	usercopy_set_transactions(0);
}

static void add_copy_tests(TCase *t)
{
	tcase_add_test(t, test_copy_stack_and_heap);
	tcase_add_test(t, test_copy_bad_pointers);
	tcase_add_test(t, test_copy_as_the_kernel_does);
	tcase_add_test(t, test_copy_sizes);
	tcase_add_test(t, test_copy_unmapped_between);
	tcase_add_test(t, test_copy_racing_unmap);
	tcase_add_test(t, test_copy_past_stack_top);
	tcase_add_loop_test(t, test_copy_in_child_process, 0, 2);
	tcase_add_test(t, test_copy_after_vfork_child);
	tcase_add_test(t, test_copy_after_main_thread_exits);
}

Suite *suite_fastpath(void)
{
	Suite *s = suite_create("fastpath");
	TCase *c = tcase_create("usercopy");
	tcase_add_checked_fixture(c, NULL, teardown);
	add_copy_tests(c);
	tcase_add_test(c, test_heap_arg_unmapped_between);
	suite_add_tcase(s, c);
	c = tcase_create("usercopy-syscalls");
	tcase_add_checked_fixture(c, without_transactions, teardown);
	add_copy_tests(c);
	tcase_add_test(c, test_heap_arg_unmapped_between);
	suite_add_tcase(s, c);
	TCase *t = tcase_create("fastpath");
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_test(t, test_uring_append_after_cached_submit);
	tcase_add_test(t, test_ring_set_up_again);
	suite_add_tcase(s, t);
	return s;
}
