/* SPDX-License-Identifier: MIT */
/*
 * guard-launched: a small device client for the launcher's tests
 * (test_options.c): one failing schedule ((D), prog_bad_d_refs),
 * submitted once.  "ok: ..." / "FAIL: ..." lines; exit 0 when the
 * submission was refused with EPERM, 1 otherwise.
 *
 *   guard-launched [--chdir DIR] [--close-all | --close-each]
 *
 * --chdir DIR: change directory first, as daemons do (chdir("/")) before
 * they close their descriptors;
 * --close-all: close_range(3, ~0U) first, as daemons do at start: every
 * descriptor but the standard streams, the guard's own among them;
 * --close-each: close(fd) for fd from 3 to 65535, as older daemons do.
 * A copy of it with file capabilities is what ld.so runs in secure mode.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "checks.h"

int main(int argc, char **argv)
{
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
