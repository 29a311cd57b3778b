/* SPDX-License-Identifier: MIT */
/*
 * guard-hostile-client: ordinary client code in a host that restricts or
 * hooks the process around the guard (test_hostile.c).  Each check
 * prints "ok: ..." or "FAIL: ..."; the exit status is 1 if any failed.
 *
 *   seccomp readv|both|enosys|kill|trap
 *                a container's seccomp profile first (raw BPF): it
 *                denies process_vm_readv with EPERM (readv), and
 *                process_vm_writev too (both), or both with ENOSYS
 *                (enosys), or kills the process that makes either
 *                (kill: systemd's SystemCallFilter= without
 *                SystemCallErrorNumber=), or sends it SIGSYS (trap);
 *                then a certified program from an image on the
 *                stack runs (its argument and output on the heap too), a
 *                failing program and a failing schedule are blocked, bad
 *                pointers get EFAULT
 *   atfork       libguard-atfork.so (linked: its constructor runs before
 *                the guard's) submits in its fork handlers; the process
 *                forks: fork returns, the handlers' certified submits
 *                run, the failing one is blocked, the child works
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atfork_lib.h"
#include "cdev.h"
#include "checks.h"
#include "progs.h"

#if defined(__x86_64__)
#define ARCH_HERE AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH_HERE AUDIT_ARCH_AARCH64
#else
#error "the seccomp test knows x86_64 and aarch64"
#endif

/* ---- seccomp ---- */

/* process_vm_readv (and process_vm_writev when both) answer -err, or
 * with action (SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_TRAP) when it is not
 * SECCOMP_RET_ERRNO; every other call is allowed. */
static void deny_vm_calls(int both, int err, unsigned action)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH_HERE, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv,
			 2, 0),
		/* readv again when only readv is denied: no match */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			 both ? __NR_process_vm_writev : __NR_process_vm_readv,
			 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, action != SECCOMP_RET_ERRNO
			 ? action
			 : SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };
	int rc = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	check(rc == 0, "no_new_privs: %s", rc ? strerror(errno) : "set");
	rc = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
	check(rc == 0, "seccomp filter: %s", rc ? strerror(errno) : "set");
	if (action != SECCOMP_RET_ERRNO)
		return;      /* trying them would end the process */

	char byte = 0, seen = 1;
	struct iovec l = { &seen, 1 }, r = { &byte, 1 };
	errno = 0;
	check(process_vm_readv(getpid(), &l, 1, &r, 1, 0) < 0 && errno == err,
	      "process_vm_readv denied: %s", strerror(errno));
	errno = 0;
	ssize_t w = process_vm_writev(getpid(), &l, 1, &r, 1, 0);
	check(both ? w < 0 && errno == err : w == 1,
	      "process_vm_writev %s: %s", both ? "denied" : "allowed",
	      strerror(errno));
}

/* A create from each bad place: nothing mapped, a page without access,
 * an image whose last bytes run into such a page. */
static void bad_pointers(struct cdev *d, const uint8_t *image, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *two = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	check(two != MAP_FAILED, "mmap");
	if (two == MAP_FAILED)
		return;
	uint8_t *tail = two + page - len / 2;
	memcpy(tail, image, len / 2);
	mprotect(two + page, (size_t)page, PROT_NONE);
	uint32_t h;
	int rc = cdev_program(d, (const uint8_t *)(uintptr_t)8, len, &h);
	check(rc == -EFAULT, "image at an unmapped address: %d", rc);
	rc = cdev_program(d, two + page, len, &h);
	check(rc == -EFAULT, "image on a page without access: %d", rc);
	rc = cdev_program(d, tail, len, &h);
	check(rc == -EFAULT, "image running into it: %d", rc);
	uint32_t s = 0;
	rc = cdev_schedule(d, program(d, PROG_GOOD), &s);
	check(rc == 0, "schedule: %d", rc);
	rc = cdev_append(d, s, (const struct ac_ref *)(two + page), 2);
	check(rc == -EFAULT, "references on a page without access: %d", rc);
	munmap(two, 2 * (size_t)page);
}

/* Off the stack, both ways: the submit's argument (copied in and out by
 * the guard, and read by the device from the guard's copy) and the
 * output read into the heap (written by the device); into a page
 * without access, EFAULT. */
static void heap_copies(struct cdev *d, uint32_t s)
{
	struct drm_arena_schedule_submit *sub = calloc(1, sizeof(*sub));
	sub->schedule = s;
	int rc = cdev_ioctl(d->fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, sub);
	check(rc == 0 && sub->seqno != 0,
	      "submit with its argument on the heap: %d, seqno %llu", rc,
	      (unsigned long long)sub->seqno);
	if (rc == 0)
		cdev_wait(d, sub->seqno);
	free(sub);
	float *out = malloc(PROG_FLOATS * sizeof(float));
	rc = cdev_read(d, PROG_OUT, out, PROG_FLOATS * sizeof(float));
	int all = rc == 0;
	for (int i = 0; all && i < PROG_FLOATS; i++)
		all = out[i] == 1.0f;
	check(all, "output read into the heap: %d", rc);
	free(out);
	long page = sysconf(_SC_PAGESIZE);
	void *none = mmap(NULL, (size_t)page, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rc = cdev_read(d, PROG_OUT, none, 64);
	check(rc == -EFAULT, "output read into a page without access: %d",
	      rc);
	munmap(none, (size_t)page);
}

static void cmd_seccomp(const char *variant)
{
	int both = strcmp(variant, "readv") != 0;
	int err = strcmp(variant, "enosys") == 0 ? ENOSYS : EPERM;
	unsigned action = !strcmp(variant, "kill") ? SECCOMP_RET_KILL_PROCESS
			  : !strcmp(variant, "trap") ? SECCOMP_RET_TRAP
						     : SECCOMP_RET_ERRNO;
	deny_vm_calls(both, err, action);

	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	size_t len;
	uint8_t *heap = prog_image(PROG_GOOD, &len);
	uint8_t stack[8192];
	check(len <= sizeof(stack), "image of %zu bytes", len);
	memcpy(stack, heap, len);
	free(heap);
	uint32_t good = 0;
	int rc = cdev_program(&d, stack, len, &good);
	check(rc == 0, "program from the stack: %d", rc);

	/* The references from the heap, as the program's own copy. */
	struct ac_ref *refs = malloc(sizeof(prog_good_refs));
	memcpy(refs, prog_good_refs, sizeof(prog_good_refs));
	uint32_t s = schedule(&d, good, refs, 2);
	free(refs);
	cdev_zero(&d);
	rc = cdev_run(&d, s);
	check(rc == 0, "certified schedule runs: %d", rc);
	check(cdev_all(&d, PROG_OUT, 64, 1.0f), "its output is right");
	heap_copies(&d, s);

	uint32_t bad_d = schedule(&d, good, prog_bad_d_refs, 4);
	uint64_t seqno = 0;
	cdev_zero(&d);
	rc = cdev_submit(&d, bad_d, &seqno);
	check(rc == -EPERM, "(D) schedule blocked: %d", rc);
	uint32_t bad_c = program(&d, PROG_BAD_C);
	uint32_t s_c = schedule(&d, bad_c, prog_good_refs, 2);
	rc = cdev_submit(&d, s_c, &seqno);
	check(rc == -EPERM, "(C) program blocked: %d", rc);
	check(cdev_all(&d, PROG_OUT, 64, 0.0f) &&
	      cdev_all(&d, PROG_CANARY, 64, 0.0f), "nothing ran");

	uint8_t *image = prog_image(PROG_GOOD, &len);
	bad_pointers(&d, image, len);
	free(image);

	rc = cdev_run(&d, s);
	check(rc == 0, "the certified schedule again: %d", rc);
	cdev_close(&d);
}

/* ---- atfork ---- */

static void cmd_atfork(void)
{
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t good = program(&d, PROG_GOOD);
	uint32_t s = schedule(&d, good, prog_good_refs, 2);
	uint32_t bad_c = program(&d, PROG_BAD_C);
	uint32_t s_c = schedule(&d, bad_c, prog_good_refs, 2);
	cdev_zero(&d);
	atfork_lib_arm(d.fd, s, s_c);

	/* The test's timeout is what fails a fork that never returns. */
	pid_t pid = fork();
	if (pid == 0) {
		int ok = atfork_results.child == 0;
		struct cdev c = d;   /* the same fd, inherited */
		int rc = cdev_run(&c, s);
		printf("%s: child: its handler's submit %d, its own %d\n",
		       ok && rc == 0 ? "ok" : "FAIL", atfork_results.child,
		       rc);
		fflush(stdout);
		_exit(ok && rc == 0 ? 0 : 1);
	}
	check(pid > 0, "fork returned: %d", (int)pid);
	check(atfork_results.prepared == 1, "prepare handlers ran: %d",
	      atfork_results.prepared);
	check(atfork_results.prepare_certified == 0,
	      "prepare: certified submit ran: %d",
	      atfork_results.prepare_certified);
	check(atfork_results.prepare_failing == -EPERM,
	      "prepare: failing submit blocked: %d",
	      atfork_results.prepare_failing);
	check(atfork_results.parent == 0, "parent: certified submit ran: %d",
	      atfork_results.parent);
	check(cdev_all(&d, PROG_CANARY, 64, 0.0f), "the canary untouched");
	int status = 0;
	if (pid > 0) {
		waitpid(pid, &status, 0);
		check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "child exited 0: %d", status);
	}
	int rc = cdev_run(&d, s);
	check(rc == 0, "parent after fork: %d", rc);
	check(cdev_all(&d, PROG_OUT, 64, 1.0f), "output right");
	cdev_close(&d);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "seccomp"))
		cmd_seccomp(argv[2]);
	else if (argc == 2 && !strcmp(argv[1], "atfork"))
		cmd_atfork();
	else {
		fprintf(stderr, "usage: guard-hostile-client seccomp "
			"readv|both|enosys|kill|trap | atfork\n");
		return 2;
	}
	return atomic_load(&failures) ? 1 : 0;
}
