/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "suites.h"
#include "spawn.h"

static char dir[64];

const char *scratch(void)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/guard-tests-XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(dir));
	}
	return dir;
}

const char *scratch_path(const char *name)
{
	static char paths[8][256];
	static int next;
	char *p = paths[next++ % 8];
	snprintf(p, sizeof(paths[0]), "%s/%s", scratch(), name);
	return p;
}

void scratch_remove(void)
{
	if (!dir[0])
		return;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			char p[512];
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			if (unlink(p) != 0)
				rmdir(p);   /* an empty directory a test made */
		}
	}
	if (d)
		closedir(d);
	rmdir(dir);
	dir[0] = 0;
}

char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	ck_assert_ptr_nonnull(buf);
	while (f) {
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n < cap)
			break;
		cap *= 2;
		buf = realloc(buf, cap + 1);
		ck_assert_ptr_nonnull(buf);
	}
	if (f)
		fclose(f);
	buf[n] = 0;
	return buf;
}

void spawn(struct run *r, const char *const env[], const char *const argv[])
{
	spawn_setup(r, env, argv, NULL, NULL);
}

/* GUARD_TESTS_DEVICE=kernel (the kernel stage, tests/kernel/tests.list):
 * the device is arena.ko's node, so libarenasim.so leaves the child's
 * LD_PRELOAD and its requests reach the real driver; the rest of the
 * preload (the guard first) stays as the test asked. */
static void device_preload(void)
{
	const char *device = getenv("GUARD_TESTS_DEVICE");
	const char *preload = getenv("LD_PRELOAD");
	if (!device || strcmp(device, "kernel") != 0 || !preload)
		return;
	char kept[4096] = "";
	size_t n = 0;
	const char *p = preload;
	while (*p) {
		size_t len = strcspn(p, " :");
		if (len && !(len == strlen(AG_ARENASIM) &&
			     strncmp(p, AG_ARENASIM, len) == 0) &&
		    n + len + 2 < sizeof(kept)) {
			if (n)
				kept[n++] = ' ';
			memcpy(kept + n, p, len);
			n += len;
			kept[n] = '\0';
		}
		p += len;
		p += strspn(p, " :");
	}
	if (n)
		setenv("LD_PRELOAD", kept, 1);
	else
		unsetenv("LD_PRELOAD");
}

void spawn_setup(struct run *r, const char *const env[],
		 const char *const argv[], void (*setup)(void *), void *arg)
{
	static int seq;
	char out[256], err[256];
	snprintf(out, sizeof(out), "%s/stdout-%d", scratch(), seq);
	snprintf(err, sizeof(err), "%s/stderr-%d", scratch(), seq++);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(o, STDOUT_FILENO);
		dup2(e, STDERR_FILENO);
		unsetenv("LD_PRELOAD");
		unsetenv("ARENAGUARD");
		unsetenv("ARENAGUARD_LOG");
		unsetenv("ARENAGUARD_DUMP");
		unsetenv("ARENAGUARD_STATS");
		unsetenv("ARENAGUARD_LIB");
		unsetenv("ARENAGUARD_OPTIONS");
		unsetenv("ARENAGUARD_LAUNCHER_OPTIONS");
		unsetenv("ARENAGUARD_STRICT");
		unsetenv("ARENAGUARD_CACHE_MB");
		unsetenv("ARENAGUARD_THREADS");
		unsetenv("ARENASIM_POISON");
		/* Sanitized builds: a huge malloc is ENOMEM, not an abort,
		 * as without them (badptr asks for 2^62 bytes). */
		setenv("TSAN_OPTIONS", "allocator_may_return_null=1", 1);
		setenv("ASAN_OPTIONS", "allocator_may_return_null=1", 1);
		for (int i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		device_preload();
		if (setup)
			setup(arg);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status)
				      : 128 + WTERMSIG(status);
	r->out = slurp(out);
	r->err = slurp(err);
}

void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

void client(struct run *r, const char *const env[], const char *const args[])
{
	const char *argv[16] = { AG_GUARD_CLIENT };
	int n = 1;
	for (int i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	spawn(r, env, argv);
}

void assert_clean(const struct run *r)
{
	ck_assert_msg(r->status == 0, "guard-client exited %d\nstdout:\n%s\n"
		      "stderr:\n%s", r->status, r->out, r->err);
	ck_assert_msg(!strstr(r->out, "FAIL"), "%s", r->out);
}

int count(const char *haystack, const char *needle)
{
	int n = 0;
	for (const char *p = haystack; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Everything in the pipe's read end (non-blocking), NUL-terminated. */
char *pipe_drain(int fd)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	ck_assert_ptr_nonnull(buf);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (ssize_t got; (got = read(fd, buf + n, cap - n)) > 0;) {
		n += (size_t)got;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			ck_assert_ptr_nonnull(buf);
		}
	}
	buf[n] = 0;
	return buf;
}
