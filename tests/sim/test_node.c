/* SPDX-License-Identifier: MIT */
/*
 * The node: open and its variants, stat, dup/close bookkeeping,
 * DRM_IOCTL_VERSION through libdrm, unknown ioctls, and everything that
 * must pass through untouched while the simulator is loaded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <xf86drm.h>

#include "device.h"

extern char **environ;

static void assert_node_stat(const struct stat *st)
{
	ck_assert(S_ISCHR(st->st_mode));
	ck_assert_uint_eq(major(st->st_rdev), ARENA_ACCEL_MAJOR);
	ck_assert_uint_eq(minor(st->st_rdev), 0);
}

START_TEST(stat_node)
{
	struct stat st;
	ck_assert_int_eq(stat(ARENA_NODE_PATH, &st), 0);
	assert_node_stat(&st);
	ck_assert_int_eq(lstat(ARENA_NODE_PATH, &st), 0);
	assert_node_stat(&st);
	ck_assert_int_eq(fstatat(AT_FDCWD, ARENA_NODE_PATH, &st, 0), 0);
	assert_node_stat(&st);
	struct statx stx;
	ck_assert_int_eq(statx(AT_FDCWD, ARENA_NODE_PATH, 0, STATX_BASIC_STATS,
			       &stx), 0);
	ck_assert(S_ISCHR(stx.stx_mode));
	ck_assert_uint_eq(stx.stx_rdev_major, ARENA_ACCEL_MAJOR);
	ck_assert_int_eq(access(ARENA_NODE_PATH, R_OK | W_OK), 0);
	char xattr[64];
	ck_assert_int_eq(lgetxattr(ARENA_NODE_PATH, "security.selinux", xattr,
				   sizeof(xattr)), -1);
	ck_assert_int_eq(errno, ENODATA);
	ck_assert_int_eq(listxattr(ARENA_NODE_PATH, xattr, sizeof(xattr)), 0);
	/* Other paths are the real file system's. */
	ck_assert_int_eq(stat("/dev/accel/accel1", &st), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(stat("/dev/null", &st), 0);
	ck_assert_uint_eq(major(st.st_rdev), 1);
	/* A bad path pointer is the real function's EFAULT, not a crash. */
	ck_assert_int_eq(stat(BAD, &st), -1);
	ck_assert_int_eq(errno, EFAULT);
}
END_TEST

START_TEST(fstat_fd)
{
	int fd = dev_open();
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	assert_node_stat(&st);
	ck_assert_int_eq(fstatat(fd, "", &st, AT_EMPTY_PATH), 0);
	assert_node_stat(&st);
	struct statx stx;
	ck_assert_int_eq(statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx), 0);
	ck_assert_uint_eq(stx.stx_rdev_major, ARENA_ACCEL_MAJOR);
	close(fd);
	/* The same number, now a pipe: the real fstat again. */
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(fstat(p[0], &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	close(p[0]);
	close(p[1]);
}
END_TEST

START_TEST(open_variants)
{
	int fds[4];
	fds[0] = open(ARENA_NODE_PATH, O_RDWR);
	fds[1] = openat(AT_FDCWD, ARENA_NODE_PATH, O_RDWR | O_CLOEXEC);
	fds[2] = open64(ARENA_NODE_PATH, O_RDWR);
	fds[3] = openat64(-1, ARENA_NODE_PATH, O_RDONLY);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_ge(fds[i], 0);
		struct stat st;
		ck_assert_int_eq(fstat(fds[i], &st), 0);
		assert_node_stat(&st);
	}
	ck_assert_int_ne(fcntl(fds[1], F_GETFD) & FD_CLOEXEC, 0);
	ck_assert_int_eq(fcntl(fds[0], F_GETFD) & FD_CLOEXEC, 0);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(close(fds[i]), 0);
	/* The node exists: O_EXCL creation fails as it would. */
	ck_assert_int_eq(open(ARENA_NODE_PATH, O_RDWR | O_CREAT | O_EXCL, 0600), -1);
	ck_assert_int_eq(errno, EEXIST);
	/* Pass-through: real paths, real errors, bad pointers. */
	ck_assert_int_eq(open("/nonexistent/arena", O_RDONLY), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(open(BAD, O_RDONLY), -1);
	ck_assert_int_eq(errno, EFAULT);
	int fd = open("/dev/zero", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	char c = 1;
	ck_assert_int_eq(read(fd, &c, 1), 1);
	ck_assert_int_eq(c, 0);
	close(fd);
}
END_TEST

/* A fortified caller reaches __open_2 / __openat_2 instead of open. */
int __open_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

START_TEST(open_fortified)
{
	int fds[4] = {
		__open_2(ARENA_NODE_PATH, O_RDWR),
		__open64_2(ARENA_NODE_PATH, O_RDWR),
		__openat_2(AT_FDCWD, ARENA_NODE_PATH, O_RDWR),
		__openat64_2(AT_FDCWD, ARENA_NODE_PATH, O_RDWR),
	};
	for (int i = 0; i < 4; i++) {
		ck_assert_int_ge(fds[i], 0);
		struct drm_arena_bo_create c = { .address = 0x1000, .size = 4096 };
		ck_assert_int_eq(xioctl(fds[i], DRM_IOCTL_ARENA_BO_CREATE, &c), 0);
		close(fds[i]);
	}
}
END_TEST

START_TEST(version_libdrm)
{
	int fd = dev_open();
	drmVersionPtr v = drmGetVersion(fd);
	ck_assert_ptr_nonnull(v);
	ck_assert_str_eq(v->name, ARENA_DRIVER_NAME);
	ck_assert_int_eq(v->name_len, 5);
	ck_assert_int_eq(v->version_major, 1);
	ck_assert_int_gt(v->desc_len, 0);
	drmFreeVersion(v);
	close(fd);
}
END_TEST

START_TEST(version_lengths)
{
	int fd = dev_open();
	char name[8];
	memset(name, 'x', sizeof(name));
	struct drm_version v = { .name_len = 2, .name = name };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_VERSION, &v), 0);
	/* What fits is copied, unterminated; the length is the full one. */
	ck_assert_int_eq(v.name_len, 5);
	ck_assert_int_eq(memcmp(name, "arxxxxxx", 8), 0);
	ck_assert_uint_gt(v.date_len, 0);
	ck_assert_uint_gt(v.desc_len, 0);
	/* Bad buffers and a bad struct pointer: EFAULT, no crash. */
	struct drm_version bad = { .name_len = 5, .name = BAD };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_VERSION, &bad), EFAULT);
	struct drm_version bad_desc = { .desc_len = 5, .desc = BAD };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_VERSION, &bad_desc), EFAULT);
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_VERSION, BAD), EFAULT);
	close(fd);
}
END_TEST

START_TEST(dup_shares_file)
{
	int fd = dev_open();
	uint32_t bo = bo_new(fd, 0x10000, 4096);
	int d1 = dup(fd);
	int d2 = fcntl(fd, F_DUPFD_CLOEXEC, 100);
	int d3 = dup2(fd, 200);
	int d4 = dup3(fd, 201, O_CLOEXEC);
	ck_assert_int_ge(d1, 0);
	ck_assert_int_ge(d2, 100);
	ck_assert_int_eq(d3, 200);
	ck_assert_int_eq(d4, 201);
	ck_assert_int_eq(close(fd), 0);
	int fds[] = { d1, d2, d3, d4 };
	for (int i = 0; i < 4; i++) {
		/* The same open file: the handle is known on every dup. */
		struct drm_arena_bo_mmap m = { .handle = bo };
		ck_assert_int_eq(xioctl(fds[i], DRM_IOCTL_ARENA_BO_MMAP, &m), 0);
	}
	/* dup2 over a device fd: that number is now the pipe. */
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(dup2(p[0], d3), d3);
	ck_assert_int_eq(write(p[1], "abc", 3), 3);
	int n = -1;
	ck_assert_int_eq(ioctl(d3, FIONREAD, &n), 0);
	ck_assert_int_eq(n, 3);
	for (int i = 0; i < 4; i++)
		close(fds[i]);
	close(p[0]);
	close(p[1]);
}
END_TEST

START_TEST(opens_are_separate)
{
	int a = dev_open(), b = dev_open();
	uint32_t bo = bo_new(a, 0x10000, 4096);
	struct drm_arena_bo_mmap m = { .handle = bo };
	ck_assert_int_eq(xioctl(b, DRM_IOCTL_ARENA_BO_MMAP, &m), ENOENT);
	/* Each open has its own address space. */
	bo_new(b, 0x10000, 4096);
	close(a);
	close(b);
}
END_TEST

START_TEST(unknown_ioctls)
{
	int fd = dev_open();
	char buf[64] = { 0 };
	unsigned long unknown_driver =
		DRM_IOWR(DRM_COMMAND_BASE + 0x0e, struct drm_arena_handle);
	ck_assert_int_eq(xioctl(fd, unknown_driver, buf), EINVAL);
	/* The simulator implements no core DRM ioctl; the kernel's DRM
	 * core answers DRM_IOCTL_GET_CAP itself (EOPNOTSUPP on an accel
	 * node), as any DRM driver's node does. */
	if (dev_simulated())
		ck_assert_int_eq(xioctl(fd, DRM_IOCTL_GET_CAP, buf), ENOTTY);
	ck_assert_int_eq(xioctl(fd, FIONREAD, buf), ENOTTY);
	ck_assert_int_eq(xioctl(fd, TCGETS, buf), ENOTTY);
	/* What the VFS handles for any fd still works. */
	ck_assert_int_eq(xioctl(fd, FIOCLEX, NULL), 0);
	ck_assert_int_ne(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	ck_assert_int_eq(xioctl(fd, FIONCLEX, NULL), 0);
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	close(fd);
}
END_TEST

START_TEST(passthrough_ioctl_mmap)
{
	int fd = dev_open();  /* the device is live while others work */
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(write(p[1], "hello", 5), 5);
	int n = -1;
	ck_assert_int_eq(ioctl(p[0], FIONREAD, &n), 0);
	ck_assert_int_eq(n, 5);
	ck_assert_int_eq(xioctl(p[0], FIONREAD, BAD), EFAULT);
	/* A DRM-looking request on a non-device fd is the kernel's business. */
	ck_assert_int_eq(xioctl(p[0], DRM_IOCTL_ARENA_BO_CREATE, BAD), ENOTTY);
	uint8_t *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	m[8191] = 7;
	munmap(m, 8192);
	int z = open("/dev/zero", O_RDONLY);
	m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, z, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(m[100], 0);
	munmap(m, 4096);
	close(z);
	close(p[0]);
	close(p[1]);
	close(fd);
}
END_TEST

/* Runs argv with the environment (LD_PRELOAD included); its stdout. */
static int run_child(char *const argv[], char *out, size_t len)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	pid_t pid;
	ck_assert_int_eq(posix_spawn(&pid, argv[0], &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	size_t n = 0;
	ssize_t got;
	while (n + 1 < len && (got = read(p[0], out + n, len - 1 - n)) > 0)
		n += (size_t)got;
	out[n] = 0;
	close(p[0]);
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

START_TEST(unrelated_process)
{
	if (!dev_simulated()) {
		not_applicable("node", "unrelated_process", "it checks what "
			       "the simulator shows programs it is preloaded "
			       "into (a node 105:0, crw-rw-rw-; the real one "
			       "is 261:0)");
		return;
	}
	const char *pre = getenv("LD_PRELOAD");
	ck_assert_msg(pre && strstr(pre, "arenasim"),
		      "run under LD_PRELOAD=libarenasim.so (meson test does)");
	char out[256];
	char *const t[] = { "/bin/true", NULL };
	int status = run_child(t, out, sizeof(out));
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* coreutils stat(1) in a process that never opens the node. */
	char *const s[] = { "/usr/bin/stat", "-c", "%F %t %T",
			    ARENA_NODE_PATH, NULL };
	status = run_child(s, out, sizeof(out));
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_str_eq(out, "character special file 105 0\n");
	char *const sh[] = { "/bin/sh", "-c",
			     "echo ok | cat; ls -l " ARENA_NODE_PATH " | cut -c1-10",
			     NULL };
	status = run_child(sh, out, sizeof(out));
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_str_eq(out, "ok\ncrw-rw-rw-\n");
}
END_TEST

START_TEST(close_range_forgets)
{
	int fd = dev_open();
	int d = dup2(fd, 300);
	ck_assert_int_eq(d, 300);
	ck_assert_int_eq(close_range(300, 300, 0), 0);
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(dup2(p[0], 300), 300);
	ck_assert_int_eq(write(p[1], "xy", 2), 2);
	int n = -1;
	ck_assert_int_eq(ioctl(300, FIONREAD, &n), 0);
	ck_assert_int_eq(n, 2);
	close(300);
	close(p[0]);
	close(p[1]);
	close(fd);
}
END_TEST

/*
 * Under a file size limit below the context's 4 GiB memfd (ulimit -f),
 * an open of the node fails with the ENOMEM a driver out of memory
 * gives, and raises no SIGXFSZ (a kernel driver would not): in a child,
 * with SIGXFSZ at its default (which kills).  A SIGXFSZ the child had
 * pending (blocked) before stays pending; the mask is restored.
 */
static int open_under_limit(void)
{
	signal(SIGXFSZ, SIG_DFL);
	struct rlimit lim, was;
	if (getrlimit(RLIMIT_FSIZE, &was) != 0)
		return 9;
	lim = (struct rlimit){ 1u << 20, was.rlim_max };
	if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
		return 10;
	int fd = open(ARENA_NODE_PATH, O_RDWR | O_CLOEXEC);
	if (fd >= 0 || errno != ENOMEM)
		return 11;
	/* The application's own pending SIGXFSZ, blocked, is kept. */
	sigset_t xfsz, mask, pending;
	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	sigprocmask(SIG_BLOCK, &xfsz, NULL);
	raise(SIGXFSZ);
	fd = open(ARENA_NODE_PATH, O_RDWR | O_CLOEXEC);
	if (fd >= 0 || errno != ENOMEM)
		return 12;
	sigpending(&pending);
	sigprocmask(SIG_BLOCK, NULL, &mask);
	if (!sigismember(&pending, SIGXFSZ) || !sigismember(&mask, SIGXFSZ))
		return 13;
	struct timespec zero = { 0, 0 };
	if (sigtimedwait(&xfsz, NULL, &zero) != SIGXFSZ)
		return 14;
	/* With the limit gone, the open works. */
	if (setrlimit(RLIMIT_FSIZE, &was) != 0)
		return 15;
	fd = open(ARENA_NODE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 16;
	close(fd);
	return 0;
}

START_TEST(open_under_file_size_limit)
{
	if (!dev_simulated()) {
		not_applicable("node", "open_under_file_size_limit", "the limit "
			       "bounds the simulator's context, a memfd; a "
			       "kernel driver's open writes no file");
		return;
	}
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(open_under_limit());
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "the child was killed by signal %d",
		      WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	ck_assert_msg(WEXITSTATUS(status) == 0, "step %d failed",
		      WEXITSTATUS(status));
}
END_TEST

Suite *suite_node(void)
{
	Suite *s = suite_create("node");
	TCase *tc = tcase_create("node");
	tcase_add_test(tc, stat_node);
	tcase_add_test(tc, fstat_fd);
	tcase_add_test(tc, open_variants);
	tcase_add_test(tc, open_fortified);
	tcase_add_test(tc, version_libdrm);
	tcase_add_test(tc, version_lengths);
	tcase_add_test(tc, dup_shares_file);
	tcase_add_test(tc, opens_are_separate);
	tcase_add_test(tc, unknown_ioctls);
	tcase_add_test(tc, passthrough_ioctl_mmap);
	tcase_add_test(tc, unrelated_process);
	tcase_add_test(tc, close_range_forgets);
	tcase_add_test(tc, open_under_file_size_limit);
	suite_add_tcase(s, tc);
	return s;
}
