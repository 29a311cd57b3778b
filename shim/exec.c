/* SPDX-License-Identifier: MIT */
/*
 * Whether a program this process executes will load the guard
 * (exec.h, ag_exec_check): under the launcher only (summary_file set),
 * the exec family's and posix_spawn's wrappers (interpose.c) ask before
 * calling the real function, and a program that will run unguarded is
 * told to the launcher ("unguarded PID PATH REASON", summary.c), which
 * fails the run.  What the application's exec does is never changed.
 *
 * Everything here may run in a vfork child (CPython's subprocess, glibc's
 * posix_spawn) sharing the parent's memory: no allocation, no lock, no
 * stdio, nothing written but stack memory; system calls only (open,
 * pread, fstat, fgetxattr, close).  errno is kept.
 *
 * A program loads the guard when ld.so runs for it (ELF of this machine
 * with PT_INTERP, elf_kind.h; a #! script: its interpreter, up to the
 * kernel's depth), not in secure mode (AT_SECURE: it drops LD_PRELOAD
 * entries with a slash), and LD_PRELOAD in its environment names the
 * guard's own file, the path ld.so loaded it by.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#include "elf_kind.h"
#include "exec.h"
#include "options.h"
#include "outputs.h"
#include "report.h"
#include "summary.h"

/* The guard's file as ld.so loaded it (dladdr): set at load, read-only
 * after.  Empty: not under the launcher, no check. */
static char guard_path[PATH_MAX];

/* The kernel follows at most this many #! interpreters (BINPRM's). */
#define MAX_SCRIPT_DEPTH 5

void ag_exec_load(void)
{
	Dl_info info;
	guard_path[0] = 0;
	if (!ag_cfg.summary_file[0] || ag_cfg.mode == AG_OFF)
		return;
	if (dladdr((void *)ag_exec_load, &info) && info.dli_fname &&
	    strlen(info.dli_fname) < sizeof(guard_path))
		strcpy(guard_path, info.dli_fname);
}

/* Whether the LD_PRELOAD value v names the guard's file as one entry
 * (ld.so splits it at spaces and colons). */
static int names_guard(const char *v)
{
	size_t glen = strlen(guard_path);
	while (*v) {
		size_t n = strcspn(v, " :");
		if (n == glen && !memcmp(v, guard_path, n))
			return 1;
		v += n;
		v += *v != 0;
	}
	return 0;
}

/* Whether env's LD_PRELOAD names the guard: every LD_PRELOAD= entry
 * must (which one ld.so takes is its business, not the guard's). */
static int env_keeps_guard(char *const env[])
{
	int seen = 0;
	for (size_t i = 0; env && env[i]; i++) {
		if (strncmp(env[i], "LD_PRELOAD=", 11))
			continue;
		if (!names_guard(env[i] + 11))
			return 0;
		seen = 1;
	}
	return seen;
}

/* The reason ld.so would run fd's program in secure mode (AT_SECURE:
 * the real and effective ids differ after the exec, or capabilities are
 * gained), or NULL. */
static const char *secure_reason(int fd, const struct stat *st)
{
	if (getuid() != geteuid() || getgid() != getegid())
		return "caller-ids";
	struct statvfs vfs;
	int nosuid = fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_NOSUID);
	if (nosuid || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
		return NULL;         /* the bits and capabilities are ignored */
	if ((st->st_mode & S_ISUID) && st->st_uid != getuid())
		return "setuid";
	if ((st->st_mode & S_ISGID) && st->st_gid != getgid())
		return "setgid";
	if (getuid() != 0 &&
	    fgetxattr(fd, "security.capability", NULL, 0) > 0)
		return "capabilities";
	return NULL;
}

/* The interpreter's path of a #! script, into out[0, len): 0, or
 * -ENOEXEC when fd's file is not one (or its path does not fit). */
static int script_interpreter(int fd, char *out, size_t len)
{
	char line[256];
	ssize_t got = pread(fd, line, sizeof(line) - 1, 0);
	if (got < 3 || line[0] != '#' || line[1] != '!')
		return -ENOEXEC;
	line[got] = 0;
	char *p = line + 2;
	p += strspn(p, " \t");
	size_t n = strcspn(p, " \t\n");
	if (!n || n >= len)
		return -ENOEXEC;
	memcpy(out, p, n);
	out[n] = 0;
	return 0;
}

/* Why the program that execveat(dirfd, path, .., flags) runs will not
 * load the guard, or NULL (it will, or the exec will fail). */
static const char *file_reason(int dirfd, const char *path, int flags)
{
	char interp[256];
	for (int depth = 0; depth < MAX_SCRIPT_DEPTH; depth++) {
		int fd;
		if (!path[0] && (flags & AT_EMPTY_PATH))
			fd = (int)syscall(SYS_fcntl, dirfd, F_DUPFD_CLOEXEC, 0);
		else
			fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC |
				    O_NONBLOCK | O_NOCTTY |
				    (flags & AT_SYMLINK_NOFOLLOW ?
				     O_NOFOLLOW : 0));
		if (fd < 0) {
			/* Executable but not readable (mode 0711): not
			 * known, said; not there: the exec fails too. */
			if (errno == EACCES && path[0] &&
			    faccessat(dirfd, path, X_OK, AT_EACCESS) == 0)
				return "unreadable";
			return NULL;
		}
		struct stat st;
		const char *why = NULL;
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			ag_output_close(fd);
			return NULL;     /* the exec fails (EACCES) */
		}
		switch (elf_kind(fd)) {
		case ELF_DYNAMIC:
			why = secure_reason(fd, &st);
			break;
		case ELF_STATIC:
			why = "static";
			break;
		case ELF_FOREIGN:
			why = "foreign";
			break;
		case ELF_NOT:
			if (script_interpreter(fd, interp, sizeof(interp)) == 0) {
				ag_output_close(fd);
				path = interp;
				dirfd = AT_FDCWD;
				flags = 0;
				continue;
			}
			/* Not executable by the kernel (ENOEXEC), or run
			 * by execvp's fallback, /bin/sh: dynamic. */
			break;
		}
		ag_output_close(fd);
		return why;
	}
	return NULL;                 /* the kernel refuses deeper (ELOOP) */
}

const char *ag_exec_check_at(int dirfd, const char *path, int flags,
			     char *const env[])
{
	if (!guard_path[0] || !path)
		return NULL;
	int saved = errno;
	const char *why = env_keeps_guard(env) ? NULL : "preload";
	const char *file = file_reason(dirfd, path, flags);
	if (!why || file)
		why = file;
	/* A program that will not run at all is no unguarded one. */
	if (why && !strcmp(why, "preload") && !file &&
	    faccessat(dirfd, path, X_OK, AT_EACCESS |
		      (flags & (AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))) != 0)
		why = NULL;
	if (why)
		ag_report_unguarded(path[0] ? path : "(a descriptor)", why);
	errno = saved;
	return why;
}

/* The file execvp(3) would run for file, searched in PATH (of environ,
 * as glibc's execvpe does), into buf: buf, or NULL (none). */
static const char *search_path(const char *file, char *buf, size_t len)
{
	if (strchr(file, '/'))
		return file;
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	size_t flen = strlen(file);
	for (const char *p = path;;) {
		size_t n = strcspn(p, ":");
		const char *dir = n ? p : ".";
		size_t dlen = n ? n : 1;
		struct stat st;
		if (dlen + 1 + flen < len) {
			memcpy(buf, dir, dlen);
			buf[dlen] = '/';
			memcpy(buf + dlen + 1, file, flen + 1);
			if (faccessat(AT_FDCWD, buf, X_OK, AT_EACCESS) == 0 &&
			    stat(buf, &st) == 0 && S_ISREG(st.st_mode))
				return buf;
		}
		if (!p[n])
			return NULL;
		p += n + 1;
	}
}

const char *ag_exec_check_search(const char *file, char *const env[])
{
	if (!guard_path[0] || !file || !file[0])
		return NULL;
	int saved = errno;
	char buf[PATH_MAX];
	const char *path = search_path(file, buf, sizeof(buf));
	errno = saved;
	return path ? ag_exec_check_at(AT_FDCWD, path, 0, env) : NULL;
}
