/* SPDX-License-Identifier: MIT */
/*
 * guard-hostile-client: ordinary client code in a host that restricts or
 * hooks the process around the guard (test_hostile.c).  Each check
 * prints "ok: ..." or "FAIL: ..."; the exit status is 1 if any failed.
 *
 *   seccomp readv|both|enosys|kill|trap|kill-late|kill-pipe2|noclone
 *                a container's seccomp profile first (raw BPF): it
 *                denies process_vm_readv with EPERM (readv), and
 *                process_vm_writev too (both), or both with ENOSYS
 *                (enosys), or kills the process that makes either
 *                (kill: systemd's SystemCallFilter= without
 *                SystemCallErrorNumber=), or sends it SIGSYS (trap);
 *                or kills, installed only after copies off the stack
 *                went through the guard (kill-late: a filter that
 *                comes after the guard first asked finds it asking
 *                again); or kills the process that makes pipe2 and
 *                allows process_vm_* (kill-pipe2: the guard's pipe for
 *                a bad pointer's EFAULT must not end the process);
 *                or denies process_vm_* and clone with CLONE_VFORK
 *                with EPERM (noclone: the guard's pipe in the process's
 *                own table);
 *                then a certified program from an image on the
 *                stack runs (its argument and output on the heap too), a
 *                failing program and a failing schedule are blocked, bad
 *                pointers get EFAULT
 *   nocalls tx|notx
 *                process_vm_readv, process_vm_writev and pipe2 denied
 *                (EPERM): the guard has no system call to copy with, so
 *                a submission with its argument on the heap runs only
 *                where a hardware transaction copies it (tx: the runner's
 *                CPU has them), and gets EFAULT elsewhere (notx); a bad
 *                pointer gets EFAULT either way
 *   forkleak     process_vm_* denied, one thread's copies go through
 *                the guard's pipes while another forks: no child is born
 *                holding one
 *   atfork-storm handlers registered at run time build, run and
 *                destroy; two threads fork at once (not in the suite)
 *   fdrace [nosigpipe]
 *                process_vm_* denied, a thread dup2()s its file onto the
 *                pipe's numbers (repro/pipe_fd_race.sh)
 *   fdhook       the same, deterministic: every descriptor the guard
 *                makes by syscall() (this program's, below) while the
 *                reads run gets the application's file dup2()ed onto
 *                its number before the guard uses it, as another thread
 *                may: the guard must neither write into that file nor
 *                close it, and every read is served
 *   pidns        unshare(CLONE_NEWPID) (in a new user namespace where
 *                root's is refused), then a bad pointer's EFAULT, which
 *                the guard and the device check through a pipe, then a
 *                fork: the namespace's first child is its init, and a
 *                task of the guard's that took that place and exited
 *                would leave every later fork ENOMEM
 *   atfork       libguard-atfork.so (linked: its constructor runs before
 *                the guard's) submits in its fork handlers; the process
 *                forks: fork returns, the handlers' certified submits
 *                run, the failing one is blocked, the child works
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
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

/* A filter's start: other architectures' calls are allowed; then the
 * call's number is loaded. */
#define FILTER_PROLOGUE \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, \
		 offsetof(struct seccomp_data, arch)), \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH_HERE, 1, 0), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))

/* The filter code[0..len) on every later call of this process. */
static void install_filter(struct sock_filter *code, unsigned short len)
{
	struct sock_fprog prog = { len, code };
	int rc = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	check(rc == 0, "no_new_privs: %s", rc ? strerror(errno) : "set");
	rc = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
	check(rc == 0, "seccomp filter: %s", rc ? strerror(errno) : "set");
}

/* The calls nr[0..n) (at most 3) answer -err, or with action
 * (SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_TRAP) when it is not
 * SECCOMP_RET_ERRNO; every other call is allowed. */
static void deny_calls(const unsigned nr[], int n, int err, unsigned action)
{
	struct sock_filter code[] = {
		FILTER_PROLOGUE,
		/* nr[0], nr[1], nr[2] (the last one again for fewer) */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr[0], 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr[n > 1 ? 1 : 0], 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr[n > 2 ? 2 : n - 1], 1,
			 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, action != SECCOMP_RET_ERRNO
			 ? action
			 : SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
	};
	install_filter(code, sizeof(code) / sizeof(code[0]));
}

/* process_vm_readv (and process_vm_writev when both) answer -err, or
 * with action, as deny_calls. */
static void deny_vm_calls(int both, int err, unsigned action)
{
	const unsigned nr[] = { __NR_process_vm_readv,
				__NR_process_vm_writev };
	deny_calls(nr, both ? 2 : 1, err, action);
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

/* process_vm_readv/writev, and a clone with CLONE_VFORK (the guard's
 * pipe task, as vfork and posix_spawn), answer EPERM; other clones (a
 * thread, a fork, the sanitizers' own) are allowed. */
static void deny_vm_and_vfork(void)
{
	struct sock_filter code[] = {
		FILTER_PROLOGUE,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 4,
			 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 2),
		/* clone's flags: the low word of args[0] (little-endian) */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_VFORK, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	install_filter(code, sizeof(code) / sizeof(code[0]));
	/* Its own memory (no CLONE_VM), so a child made anyway just exits. */
	errno = 0;
	long pid = syscall(SYS_clone, (long)(CLONE_VFORK | SIGCHLD), 0L, 0L,
			   0L, 0L);
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	check(pid < 0 && errno == EPERM, "clone(CLONE_VFORK) denied: %s",
	      pid < 0 ? strerror(errno) : "made");
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

/* The good program, created from a copy of its image on the stack
 * (plain loads for the guard): its handle. */
static uint32_t program_from_stack(struct cdev *d)
{
	size_t len;
	uint8_t *heap = prog_image(PROG_GOOD, &len);
	uint8_t stack[8192];
	check(len <= sizeof(stack), "image of %zu bytes", len);
	memcpy(stack, heap, len < sizeof(stack) ? len : sizeof(stack));
	free(heap);
	uint32_t good = 0;
	int rc = cdev_program(d, stack, len, &good);
	check(rc == 0, "program from the stack: %d", rc);
	return good;
}

/* Before any filter: copies off the stack both ways, by the guard and
 * the device (a program from the heap, its references, a submission's
 * argument, the output read into the heap). */
static void copies_before_filter(void)
{
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t s = schedule(&d, program(&d, PROG_GOOD), prog_good_refs, 2);
	heap_copies(&d, s);
	cdev_close(&d);
}

static void cmd_seccomp(const char *variant)
{
	int both = strcmp(variant, "readv") != 0;
	int err = strcmp(variant, "enosys") == 0 ? ENOSYS : EPERM;
	int late = !strcmp(variant, "kill-late");
	unsigned action = !strcmp(variant, "kill") || late
			  ? SECCOMP_RET_KILL_PROCESS
			  : !strcmp(variant, "trap") ? SECCOMP_RET_TRAP
						     : SECCOMP_RET_ERRNO;
	if (late)
		copies_before_filter();
	if (!strcmp(variant, "kill-pipe2"))
		deny_calls((const unsigned[]){ __NR_pipe2 }, 1, 0,
			   SECCOMP_RET_KILL_PROCESS);
	else if (!strcmp(variant, "noclone"))
		deny_vm_and_vfork();
	else
		deny_vm_calls(both, err, action);

	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t good = program_from_stack(&d);

	/* The references from the heap, as the program's own copy. */
	struct ac_ref *refs = malloc(sizeof(prog_good_refs));
	memcpy(refs, prog_good_refs, sizeof(prog_good_refs));
	uint32_t s = schedule(&d, good, refs, 2);
	free(refs);
	cdev_zero(&d);
	int rc = cdev_run(&d, s);
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

	size_t len;
	uint8_t *image = prog_image(PROG_GOOD, &len);
	bad_pointers(&d, image, len);
	free(image);

	rc = cdev_run(&d, s);
	check(rc == 0, "the certified schedule again: %d", rc);
	cdev_close(&d);
}

/* ---- nocalls ---- */

static void cmd_nocalls(int transactions)
{
	const unsigned nr[] = { __NR_process_vm_readv,
				__NR_process_vm_writev, __NR_pipe2 };
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	struct ac_ref refs[2];
	memcpy(refs, prog_good_refs, sizeof(refs));
	uint32_t s = 0;
	int rc = cdev_schedule(&d, program_from_stack(&d), &s);
	if (rc == 0)
		rc = cdev_append(&d, s, refs, 2);
	check(rc == 0, "schedule from the stack: %d", rc);
	/* Before the filter: zeroing the device copies more than a page
	 * (a system call), and a copy the filter refuses is first tried in
	 * a child process, whose fork leaves every page copy-on-write: a
	 * write in a transaction aborts there until the page is written. */
	cdev_zero(&d);
	deny_calls(nr, 3, EPERM, SECCOMP_RET_ERRNO);

	struct drm_arena_schedule_submit *sub = calloc(1, sizeof(*sub));
	sub->schedule = s;
	rc = cdev_ioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, sub);
	if (transactions) {
		check(rc == 0 && sub->seqno != 0,
		      "submit with its argument on the heap, no system call "
		      "to copy it: %d, seqno %llu", rc,
		      (unsigned long long)sub->seqno);
		if (rc == 0)
			cdev_wait(&d, sub->seqno);
		check(cdev_all(&d, PROG_OUT, 64, 1.0f), "its output is right");
	} else {
		check(rc == -EFAULT, "submit with its argument on the heap, "
		      "nothing to copy it with: %d", rc);
	}
	free(sub);
	rc = cdev_ioctl(d.fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT,
			(void *)(uintptr_t)8);
	check(rc == -EFAULT, "submit with its argument at address 8: %d", rc);
	cdev_close(&d);
}

/* ---- fdrace ---- */

/*
 * A thread of the application puts its own file at descriptor numbers it
 * has not opened (dup2, as daemons and shells place descriptors), the
 * numbers where the guard's pipe lands (half the descriptor limit, or
 * 1000), while another thread's copies go through the pipe (process_vm_*
 * denied).  The guard must never write the application's memory into
 * the application's file, nor close it.
 */
static atomic_int fdrace_stop;
static int fdrace_file;

static void *fdrace_placer(void *arg)
{
	int base = *(int *)arg;
	long placed = 0, closed_under_us = 0;
	while (!atomic_load(&fdrace_stop)) {
		for (int n = base; n < base + 2; n++) {
			if (dup2(fdrace_file, n) != n)
				continue;
			placed++;
			for (volatile int i = 0; i < 200; i++)
				;
			struct stat a, b;
			if (fstat(n, &a) != 0 || fstat(fdrace_file, &b) != 0 ||
			    a.st_ino != b.st_ino)
				closed_under_us++;
			close(n);
		}
	}
	printf("%s: our descriptors at %d, %d placed %ld times, closed or "
	       "replaced under us %ld times\n",
	       closed_under_us ? "FAIL" : "ok", base, base + 1, placed,
	       closed_under_us);
	if (closed_under_us)
		atomic_fetch_add(&failures, 1);
	return NULL;
}

static void cmd_fdrace(int ignore_sigpipe)
{
	if (ignore_sigpipe)
		signal(SIGPIPE, SIG_IGN);
	deny_vm_calls(1, EPERM, SECCOMP_RET_ERRNO);
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	int base = rl.rlim_cur / 2 < 1000 ? (int)(rl.rlim_cur / 2) : 1000;
	char path[] = "/tmp/guard-fdrace-XXXXXX";
	fdrace_file = mkstemp(path);
	check(fdrace_file >= 0, "scratch file");
	unlink(path);

	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t good = program(&d, PROG_GOOD);
	uint32_t s = schedule(&d, good, prog_good_refs, 2);
	check(cdev_run(&d, s) == 0, "certified schedule runs");
	/* 8 KiB: more than a hardware transaction copies, so every read
	 * goes through the pipe on any CPU. */
	unsigned char *out = malloc(8192);
	pthread_t t;
	pthread_create(&t, NULL, fdrace_placer, &base);
	long bad = 0;
	for (int i = 0; i < 200000; i++)
		if (cdev_read(&d, PROG_BASE, out, 8192))
			bad++;
	atomic_store(&fdrace_stop, 1);
	pthread_join(t, NULL);
	free(out);
	struct stat st;
	fstat(fdrace_file, &st);
	check(st.st_size == 0, "bytes the guard wrote into our file: %lld",
	      (long long)st.st_size);
	printf("info: %ld of 200000 reads failed\n", bad);
	cdev_close(&d);
}

/* ---- fdhook ---- */

/*
 * libc's syscall(), interposed (an executable's definition comes first):
 * the guard and the simulator make their pipe and move it with it.
 * While armed (fdhook_file >= 0), a descriptor that pipe2 or an
 * F_DUPFD/F_DUPFD_CLOEXEC returns has the application's file dup2()ed
 * onto its number right after the call, as another thread of the
 * application may do at that moment (it owns the numbering); each such
 * number is recorded, to be checked afterwards.
 */
static atomic_int fdhook_file = -1;
static atomic_int fdhook_placed[64];
static atomic_int fdhook_count;

static void fdhook_place(int fd)
{
	int file = atomic_load(&fdhook_file);
	if (file < 0 || fd < 0 || fd == file || dup2(file, fd) != fd)
		return;
	int i = atomic_fetch_add(&fdhook_count, 1);
	if (i < 64)
		atomic_store(&fdhook_placed[i], fd);
}

long syscall(long number, ...)
{
	static long (*real)(long, ...);
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	va_list ap;
	va_start(ap, number);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	long rc = real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (rc >= 0 && atomic_load(&fdhook_file) >= 0) {
		int saved = errno;
		if (number == SYS_pipe2) {
			int *p = (int *)(uintptr_t)a[0];
			fdhook_place(p[0]);
			fdhook_place(p[1]);
		} else if (number == SYS_fcntl &&
			   (a[1] == F_DUPFD || a[1] == F_DUPFD_CLOEXEC)) {
			fdhook_place((int)rc);
		}
		errno = saved;
	}
	return rc;
}

/* process_vm_* denied (the copies need a pipe), 8 KiB of the device's
 * memory read into the heap 200 times (more than a page: never by a
 * hardware transaction). */
static void cmd_fdhook(void)
{
	deny_vm_calls(1, EPERM, SECCOMP_RET_ERRNO);
	char path[] = "/tmp/guard-fdhook-XXXXXX";
	int file = mkstemp(path);
	check(file >= 0, "scratch file");
	unlink(path);
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	cdev_zero(&d);
	size_t len = 8192;
	unsigned char *buf = malloc(len);
	atomic_store(&fdhook_file, file);
	int bad = 0;
	for (int i = 0; i < 200; i++) {
		memset(buf, 0xee, len);
		int rc = cdev_read(&d, PROG_BASE, buf, len);
		int zero = rc == 0;
		for (size_t k = 0; zero && k < len; k++)
			zero = buf[k] == 0;
		if (!zero)
			bad++;
	}
	atomic_store(&fdhook_file, -1);
	check(bad == 0, "reads of 8 KiB into the heap that failed or read "
	      "wrong bytes: %d of 200", bad);
	int placed = atomic_load(&fdhook_count);
	struct stat mine, there;
	fstat(file, &mine);
	int lost = 0;
	for (int i = 0; i < placed && i < 64; i++) {
		int fd = atomic_load(&fdhook_placed[i]);
		if (fstat(fd, &there) != 0 || there.st_ino != mine.st_ino ||
		    there.st_dev != mine.st_dev)
			lost++;
	}
	check(lost == 0, "our file placed at the guard's descriptor numbers "
	      "%d times, closed or replaced under us %d times", placed, lost);
	check(mine.st_size == 0, "bytes the guard wrote into our file: %lld",
	      (long long)mine.st_size);
	free(buf);
	cdev_close(&d);
}

/* ---- forkleak ---- */

/*
 * process_vm_* denied: one thread reads the device's output into the
 * heap in a loop (each read a copy through a pipe of the guard's) while
 * another forks 200 times; each child counts the pipes it holds that it never
 * made (descriptors of the guard's copy in flight when it forked) and
 * exits with that count.
 */
static atomic_int forkleak_stop;
static struct cdev forkleak_dev;

static void *forkleak_reader(void *arg)
{
	uint32_t s = *(uint32_t *)arg;
	float *out = malloc(PROG_FLOATS * sizeof(float));
	struct drm_arena_schedule_submit *sub = malloc(sizeof(*sub));
	struct drm_arena_wait *w = malloc(sizeof(*w));
	while (!atomic_load(&forkleak_stop)) {
		cdev_read(&forkleak_dev, PROG_OUT, out,
			  PROG_FLOATS * sizeof(float));
		/* arguments on the heap: the guard copies them in and out */
		*sub = (struct drm_arena_schedule_submit){ .schedule = s };
		if (cdev_ioctl(forkleak_dev.fd,
			       DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, sub) == 0) {
			*w = (struct drm_arena_wait){ .seqno = sub->seqno,
						      .timeout_ns = -1 };
			cdev_ioctl(forkleak_dev.fd, DRM_IOCTL_ARENA_WAIT, w);
		}
	}
	free(w);
	free(sub);
	free(out);
	return NULL;
}

static int pipes_held(void)
{
	int n = 0;
	for (int fd = 3; fd < 4096; fd++) {
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
			n++;
	}
	return n;
}

static void cmd_forkleak(void)
{
	deny_vm_calls(1, EPERM, SECCOMP_RET_ERRNO);
	open_or_exit(&forkleak_dev, CP_IOCTL);
	uint32_t good = program(&forkleak_dev, PROG_GOOD);
	uint32_t s = schedule(&forkleak_dev, good, prog_good_refs, 2);
	int before = pipes_held();
	pthread_t t;
	pthread_create(&t, NULL, forkleak_reader, &s);
	int leaked = 0, children = 0;
	for (int i = 0; i < 200; i++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(pipes_held() - before);
		int st = 0;
		if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st)) {
			children++;
			if (WEXITSTATUS(st))
				leaked++;
		}
	}
	atomic_store(&forkleak_stop, 1);
	pthread_join(t, NULL);
	check(leaked == 0, "children born holding the guard's pipe: %d of %d",
	      leaked, children);
	cdev_close(&forkleak_dev);
}

/* ---- atfork-storm ---- */

/*
 * Handlers registered at run time, from a thread, after the guard has
 * started; their prepare handler builds a program and a schedule, runs
 * it, and destroys both; parent and child handlers run it again.  Two
 * threads fork at once, many times, while a third submits.
 */
static struct cdev storm_dev;
static uint32_t storm_s;
static atomic_int storm_bad, storm_stop;

static void storm_prepare(void)
{
	int saved = errno;
	struct cdev *d = &storm_dev;
	uint32_t p = program(d, PROG_GOOD);
	uint32_t s = schedule(d, p, prog_good_refs, 2);
	if (cdev_run(d, s) != 0)
		atomic_fetch_add(&storm_bad, 1);
	if (cdev_destroy_schedule(d, s) != 0 || cdev_destroy_program(d, p))
		atomic_fetch_add(&storm_bad, 1);
	errno = saved;
}

static void storm_parent(void)
{
	if (cdev_run(&storm_dev, storm_s) != 0)
		atomic_fetch_add(&storm_bad, 1);
}

static void storm_child(void)
{
	if (cdev_run(&storm_dev, storm_s) != 0)
		_exit(3);
}

static void *storm_register(void *arg)
{
	(void)arg;
	pthread_atfork(storm_prepare, storm_parent, storm_child);
	return NULL;
}

static void *storm_forker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(cdev_run(&storm_dev, storm_s) == 0 ? 0 : 4);
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) != pid ||
		    !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			atomic_fetch_add(&storm_bad, 1);
	}
	return NULL;
}

static void *storm_submitter(void *arg)
{
	(void)arg;
	while (!atomic_load(&storm_stop))
		if (cdev_run(&storm_dev, storm_s) != 0)
			atomic_fetch_add(&storm_bad, 1);
	return NULL;
}

static void cmd_atfork_storm(void)
{
	alarm(60);
	open_or_exit(&storm_dev, CP_IOCTL);
	uint32_t good = program(&storm_dev, PROG_GOOD);
	storm_s = schedule(&storm_dev, good, prog_good_refs, 2);
	pthread_t r, f[2], sub;
	pthread_create(&r, NULL, storm_register, NULL);
	pthread_join(r, NULL);
	pthread_create(&sub, NULL, storm_submitter, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&f[i], NULL, storm_forker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(f[i], NULL);
	atomic_store(&storm_stop, 1);
	pthread_join(sub, NULL);
	check(atomic_load(&storm_bad) == 0, "200 forks from two threads, "
	      "handlers that build, run and destroy: %d failures",
	      atomic_load(&storm_bad));
	uint32_t bad_c = program(&storm_dev, PROG_BAD_C);
	uint32_t s_c = schedule(&storm_dev, bad_c, prog_good_refs, 2);
	uint64_t seqno;
	int rc = cdev_submit(&storm_dev, s_c, &seqno);
	check(rc == -EPERM, "(C) still blocked: %d", rc);
	cdev_close(&storm_dev);
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

/* ---- pidns ---- */

/* In a child of ours, which ends by _exit: the namespace it made is
 * over once its init exits, and an exit handler that makes a task (the
 * sanitizers' leak check) would fail there. */
static void pidns_checks(void)
{
	int rc = unshare(CLONE_NEWPID);
	if (rc != 0 && errno == EPERM)
		rc = unshare(CLONE_NEWUSER | CLONE_NEWPID);
	check(rc == 0, "unshare(CLONE_NEWPID): %s",
	      rc ? strerror(errno) : "done");
	if (rc != 0)
		return;
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	size_t len;
	uint8_t *image = prog_image(PROG_GOOD, &len);
	bad_pointers(&d, image, len);
	free(image);
	pid_t pid = fork();
	if (pid == 0)
		_exit(getpid() == 1 ? 0 : 3);
	int st = 0;
	check(pid > 0, "fork after the bad pointers: %s",
	      pid < 0 ? strerror(errno) : "made");
	if (pid > 0) {
		waitpid(pid, &st, 0);
		check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "the fork's child is the namespace's init: status %d",
		      st);
	}
	uint32_t s = schedule(&d, program(&d, PROG_GOOD), prog_good_refs, 2);
	cdev_zero(&d);
	rc = cdev_run(&d, s);
	check(rc == 0, "certified schedule runs: %d", rc);
	cdev_close(&d);
}

static void cmd_pidns(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		pidns_checks();
		_exit(atomic_load(&failures) ? 1 : 0);
	}
	int st = -1;
	if (pid > 0 && waitpid(pid, &st, 0) != pid)
		st = -1;
	check(pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "the namespace's checks: status %d", st);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "seccomp"))
		cmd_seccomp(argv[2]);
	else if (argc == 3 && !strcmp(argv[1], "nocalls"))
		cmd_nocalls(!strcmp(argv[2], "tx"));
	else if (argc == 2 && !strcmp(argv[1], "atfork"))
		cmd_atfork();
	else if (argc == 2 && !strcmp(argv[1], "forkleak"))
		cmd_forkleak();
	else if (argc == 2 && !strcmp(argv[1], "atfork-storm"))
		cmd_atfork_storm();
	else if (argc == 2 && !strcmp(argv[1], "fdhook"))
		cmd_fdhook();
	else if (argc == 2 && !strcmp(argv[1], "pidns"))
		cmd_pidns();
	else if (argc >= 2 && !strcmp(argv[1], "fdrace"))
		cmd_fdrace(argc == 3 && !strcmp(argv[2], "nosigpipe"));
	else {
		fprintf(stderr, "usage: guard-hostile-client seccomp "
			"readv|both|enosys|kill|trap|kill-late|kill-pipe2|noclone | nocalls tx|notx | atfork | atfork-storm | forkleak | fdrace [nosigpipe] | fdhook | pidns\n");
		return 2;
	}
	return atomic_load(&failures) ? 1 : 0;
}
