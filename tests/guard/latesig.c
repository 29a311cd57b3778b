/* SPDX-License-Identifier: MIT */
/*
 * libguard-latesig.so, preloaded into the arenaguard launcher
 * (test_options.c, test_launcher_late_signal): the first waitpid that
 * reaps a child raises SIGTERM in the launcher right after, as a signal
 * sent by someone else at that moment would arrive; a kill() of the
 * pid just reaped is then a signal forwarded to whatever process
 * reuses that pid: it is said on standard error ("latesig: ...") and
 * not made.  Only the process named arenaguard is hooked (its child,
 * which inherits LD_PRELOAD, is left alone).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t reaped;

static int hooked(void)
{
	return strcmp(program_invocation_short_name, "arenaguard") == 0;
}

pid_t waitpid(pid_t pid, int *status, int options)
{
	pid_t (*next)(pid_t, int *, int) =
		(pid_t(*)(pid_t, int *, int))dlsym(RTLD_NEXT, "waitpid");
	pid_t rc = next(pid, status, options);
	if (rc > 0 && !reaped && hooked()) {
		int saved = errno;
		reaped = rc;
		raise(SIGTERM);
		errno = saved;
	}
	return rc;
}

int kill(pid_t pid, int sig)
{
	if (reaped && pid == reaped) {
		char msg[96];
		int n = snprintf(msg, sizeof(msg), "latesig: signal %d sent "
				 "to the reaped pid %d\n", sig, (int)pid);
		if (write(STDERR_FILENO, msg, (size_t)n) < 0)
			return -1;
		errno = ESRCH;
		return -1;
	}
	int (*next)(pid_t, int) = (int (*)(pid_t, int))dlsym(RTLD_NEXT,
							    "kill");
	return next(pid, sig);
}
