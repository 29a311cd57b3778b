/* SPDX-License-Identifier: MIT */
/*
 * guard-launched: a small device client for the launcher's tests
 * (test_options.c; test_share.c its --vfork-leak): one failing schedule ((D), prog_bad_d_refs),
 * submitted once.  "ok: ..." / "FAIL: ..." lines; exit 0 when the
 * submission was refused with EPERM, 1 otherwise.
 *
 *   guard-launched [--drop] [--chdir DIR] [--close-all | --close-each]
 *
 * --drop: become nobody (65534) first, as a server drops its privileges
 * after start (the guard loaded while it was still root);
 * --chdir DIR: change directory first, as daemons do (chdir("/")) before
 * they close their descriptors;
 * --close-all: close_range(3, ~0U) first, as daemons do at start: every
 * descriptor but the standard streams, the guard's own among them;
 * --close-each: close(fd) for fd from 3 to 65535, as older daemons do.
 * --vfork-leak: (test_share.c, test_vfork_no_fd_leak) a vfork child that
 * calls close_range(3, ~0U) before _exit, as CPython's subprocess does
 * before exec, then a record, twice: the process must hold as many
 * descriptors at the end as before.
 * A copy of it with file capabilities is what ld.so runs in secure mode.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checks.h"

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n - 1;           /* the directory's own */
}

static int vfork_leak(void)
{
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t good = program(&d, PROG_GOOD);
	uint32_t bad_c = program(&d, PROG_BAD_C);
	uint32_t s1 = schedule(&d, good, prog_bad_d_refs, 4);
	uint32_t s2 = schedule(&d, bad_c, prog_good_refs, 2);
	uint32_t scheds[] = { s1, s2 };
	int before = open_fds();
	for (int i = 0; i < 2; i++) {
		pid_t pid = vfork();
		if (pid == 0) {
			close_range(3, ~0U, 0);
			_exit(0);
		}
		waitpid(pid, NULL, 0);
		uint64_t seqno = 0;
		int rc = cdev_submit(&d, scheds[i], &seqno);
		check(rc == -EPERM, "failing schedule %d refused: %d", i, rc);
	}
	int after = open_fds();
	check(after == before, "descriptors before %d, after %d", before,
	      after);
	cdev_close(&d);
	return atomic_load(&failures) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--vfork-leak"))
		return vfork_leak();
	if (argc > 1 && !strcmp(argv[1], "--drop")) {
		int rc = setgroups(0, NULL) || setgid(65534) || setuid(65534);
		check(rc == 0, "dropped to nobody: %s",
		      rc ? strerror(errno) : "done");
		argc--;
		argv++;
	}
	if (argc > 2 && !strcmp(argv[1], "--chdir")) {
		int rc = chdir(argv[2]);
		check(rc == 0, "chdir(%s): %s", argv[2],
		      rc ? strerror(errno) : "done");
		argc -= 2;
		argv += 2;
	}
	if (argc > 1 && !strcmp(argv[1], "--close-all")) {
		/* libc's close_range, which the guard interposes: it
		 * sees its descriptors taken. */
		int rc = close_range(3, ~0U, 0);
		check(rc == 0, "close_range(3, ~0U): %s",
		      rc ? strerror(errno) : "done");
	}
	if (argc > 1 && !strcmp(argv[1], "--close-each"))
		for (int fd = 3; fd <= 65535; fd++)
			close(fd);
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t good = program(&d, PROG_GOOD);
	uint32_t bad_d = schedule(&d, good, prog_bad_d_refs, 4);
	uint64_t seqno = 0;
	int rc = cdev_submit(&d, bad_d, &seqno);
	check(rc == -EPERM, "the failing schedule is refused: %d", rc);
	if (rc == 0)
		cdev_wait(&d, seqno);
	cdev_close(&d);
	return atomic_load(&failures) ? 1 : 0;
}
