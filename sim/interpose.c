/* SPDX-License-Identifier: MIT */
/*
 * The libc entry points an application reaches the device through.  The
 * node ARENA_NODE_PATH exists only here: opening it creates a context's
 * memfd (context.c) and records the fd as the device; stat says
 * character device 261:0; ioctl and mmap on a device fd go to the
 * driver, everything else to the real function, untouched.
 *
 * Every variant glibc 2.36 exports is covered (the *64 names, the
 * fortified __open_2 family, the pre-2.33 __xstat family), because each
 * is a separate symbol an application may be linked against.  Paths are
 * application pointers like any other: read with copy_from_user, so a bad
 * one gets the real function's EFAULT instead of a crash here.
 */
/* No asm redirects: define open, not open64 under the name open. */
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "next.h"
#include "sim.h"
#include "symbols.h"
#include "usercopy.h"

/* Not declared by glibc 2.36 headers, still exported. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstat(int ver, int fd, struct stat *st);
int __fxstat64(int ver, int fd, struct stat64 *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st,
	       int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st,
		 int flags);

#define REAL(fn) static __typeof__(fn) *real_##fn;
SIM_LIBC_SYMBOLS(REAL)
#undef REAL

void interpose_resolve(void)
{
#define R(fn) real_##fn = (__typeof__(real_##fn))preload_next(#fn);
	SIM_LIBC_SYMBOLS(R)
#undef R
}

/* ---- recognising the node ---- */

/* Whether the string at `path` is `want`, read without trusting path:
 * only up to strlen(want) + 1 bytes, and never across a page boundary
 * before the bytes on this side have matched. */
static int path_is(const char *path, const char *want)
{
	size_t n = strlen(want) + 1;
	uint64_t at = (uintptr_t)path;
	char buf[64];
	if (!path || n > sizeof(buf))
		return 0;
	size_t first = 4096 - (at & 4095);
	if (first > n)
		first = n;
	if (copy_from_user(buf, at, first) || memcmp(buf, want, first))
		return 0;
	return first == n || (!copy_from_user(buf + first, at + first,
					       n - first) &&
			      memcmp(buf + first, want + first, n - first) == 0);
}

static int is_node(const char *path)
{
	return !preload_inside() && path_is(path, ARENA_NODE_PATH);
}

/* Whether fd is a device fd (a hint: the answer may change right after). */
static int is_device(int fd)
{
	if (preload_inside() || !fd_maybe_device(fd))
		return 0;
	sim_lock();
	int yes = fd_file(fd) != NULL;
	sim_unlock();
	return yes;
}

/* ---- open ---- */

static int fail(int err)
{
	errno = err;
	return -1;
}

static int open_node(int flags)
{
	if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		return fail(EEXIST);
	if (flags & O_DIRECTORY)
		return fail(ENOTDIR);
	sim_options();
	sim_lock();
	int fd = fd_open_device(flags & (O_CLOEXEC | O_NONBLOCK));
	sim_unlock();
	return fd < 0 ? fail(-fd) : fd;
}

static mode_t mode_arg(int flags, va_list ap)
{
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		return (mode_t)va_arg(ap, int);
	return 0;
}

#define OPEN_BODY(real_call)                                     \
	va_list ap;                                              \
	va_start(ap, flags);                                     \
	mode_t mode = mode_arg(flags, ap);                       \
	va_end(ap);                                              \
	sim_init();                                              \
	if (is_node(path))                                       \
		return open_node(flags);                         \
	return real_call

int open(const char *path, int flags, ...)
{
	OPEN_BODY(real_open(path, flags, mode));
}

int open64(const char *path, int flags, ...)
{
	OPEN_BODY(real_open64(path, flags, mode));
}

int openat(int dirfd, const char *path, int flags, ...)
{
	OPEN_BODY(real_openat(dirfd, path, flags, mode));
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	OPEN_BODY(real_openat64(dirfd, path, flags, mode));
}

int __open_2(const char *path, int flags)
{
	sim_init();
	return is_node(path) ? open_node(flags) : real___open_2(path, flags);
}

int __open64_2(const char *path, int flags)
{
	sim_init();
	return is_node(path) ? open_node(flags) : real___open64_2(path, flags);
}

int __openat_2(int dirfd, const char *path, int flags)
{
	sim_init();
	return is_node(path) ? open_node(flags)
			     : real___openat_2(dirfd, path, flags);
}

int __openat64_2(int dirfd, const char *path, int flags)
{
	sim_init();
	return is_node(path) ? open_node(flags)
			     : real___openat64_2(dirfd, path, flags);
}

/* ---- close and dup: keep the fd table in step ---- */

int close(int fd)
{
	sim_init();
	if (!preload_inside() && fd_any()) {
		sim_lock();
		fd_detach(fd);
		sim_unlock();
	}
	return real_close(fd);
}

int close_range(unsigned int first, unsigned int last, int flags)
{
	sim_init();
	if (!preload_inside() && fd_any() && !(flags & CLOSE_RANGE_CLOEXEC)) {
		sim_lock();
		fd_detach_range(first, last);
		sim_unlock();
	}
	return real_close_range(first, last, flags);
}

/* newfd (just made by a successful dup of oldfd) is the device exactly
 * when oldfd is.  Returns newfd, or -1 when it cannot be tracked. */
static int track_dup(int oldfd, int newfd)
{
	if (newfd < 0 || preload_inside() || !fd_maybe_device(oldfd))
		return newfd;
	sim_lock();
	struct sim_file *f = fd_file(oldfd);
	int rc = 0;
	if (f)
		rc = fd_attach(newfd, f);
	else
		fd_detach(newfd);
	sim_unlock();
	if (rc) {
		real_close(newfd);
		return fail(-rc);
	}
	return newfd;
}

int dup(int fd)
{
	sim_init();
	return track_dup(fd, real_dup(fd));
}

int dup2(int oldfd, int newfd)
{
	sim_init();
	int rc = real_dup2(oldfd, newfd);
	return oldfd == newfd ? rc : track_dup(oldfd, rc);
}

int dup3(int oldfd, int newfd, int flags)
{
	sim_init();
	return track_dup(oldfd, real_dup3(oldfd, newfd, flags));
}

/* fcntl's third argument is an int or a pointer, depending on cmd;
 * passing it on as a pointer is what glibc itself does. */
#define FCNTL_BODY(real_fn)                                      \
	va_list ap;                                              \
	va_start(ap, cmd);                                       \
	void *arg = va_arg(ap, void *);                          \
	va_end(ap);                                              \
	sim_init();                                              \
	int rc = real_fn(fd, cmd, arg);                          \
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)            \
		return track_dup(fd, rc);                        \
	return rc

int fcntl(int fd, int cmd, ...)
{
	FCNTL_BODY(real_fcntl);
}

int fcntl64(int fd, int cmd, ...)
{
	FCNTL_BODY(real_fcntl64);
}

/* ---- stat: the node is a character device of the accel major ---- */

#define NODE_MODE (S_IFCHR | 0666)
#define NODE_RDEV makedev(ARENA_ACCEL_MAJOR, 0)

/* The node (by path) or a device fd (by fd, or fd + "" + AT_EMPTY_PATH). */
static int is_node_at(int dirfd, const char *path, int flags)
{
	if (is_node(path))
		return 1;
	return (flags & AT_EMPTY_PATH) && !preload_inside() && path_is(path, "") &&
	       is_device(dirfd);
}

/* Stats /dev/null (the node) or the fd (a context's memfd), then
 * dresses it up as the character device.  A device fd keeps its memfd's
 * st_dev and st_ino: they tell open file descriptions apart. */
#define STAT_NODE(call, st)                                      \
	do {                                                     \
		int rc_ = (call);                                \
		if (rc_ == 0) {                                  \
			(st)->st_mode = NODE_MODE;               \
			(st)->st_rdev = NODE_RDEV;               \
			(st)->st_nlink = 1;                      \
			(st)->st_size = 0;                       \
			(st)->st_blocks = 0;                     \
		}                                                \
		return rc_;                                      \
	} while (0)

int stat(const char *path, struct stat *st)
{
	sim_init();
	if (is_node(path))
		STAT_NODE(real_stat("/dev/null", st), st);
	return real_stat(path, st);
}

int stat64(const char *path, struct stat64 *st)
{
	sim_init();
	if (is_node(path))
		STAT_NODE(real_stat64("/dev/null", st), st);
	return real_stat64(path, st);
}

int lstat(const char *path, struct stat *st)
{
	sim_init();
	if (is_node(path))
		STAT_NODE(real_lstat("/dev/null", st), st);
	return real_lstat(path, st);
}

int lstat64(const char *path, struct stat64 *st)
{
	sim_init();
	if (is_node(path))
		STAT_NODE(real_lstat64("/dev/null", st), st);
	return real_lstat64(path, st);
}

int fstat(int fd, struct stat *st)
{
	sim_init();
	if (is_device(fd))
		STAT_NODE(real_fstat(fd, st), st);
	return real_fstat(fd, st);
}

int fstat64(int fd, struct stat64 *st)
{
	sim_init();
	if (is_device(fd))
		STAT_NODE(real_fstat64(fd, st), st);
	return real_fstat64(fd, st);
}

int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	sim_init();
	if (is_node_at(dirfd, path, flags))
		STAT_NODE(real_stat("/dev/null", st), st);
	return real_fstatat(dirfd, path, st, flags);
}

int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	sim_init();
	if (is_node_at(dirfd, path, flags))
		STAT_NODE(real_stat64("/dev/null", st), st);
	return real_fstatat64(dirfd, path, st, flags);
}

int __xstat(int ver, const char *path, struct stat *st)
{
	sim_init();
	if (is_node(path))
		STAT_NODE(real___xstat(ver, "/dev/null", st), st);
	return real___xstat(ver, path, st);
}

int __xstat64(int ver, const char *path, struct stat64 *st)
{
	sim_init();
	if (is_node(path))
		STAT_NODE(real___xstat64(ver, "/dev/null", st), st);
	return real___xstat64(ver, path, st);
}

int __lxstat(int ver, const char *path, struct stat *st)
{
	sim_init();
	if (is_node(path))
		STAT_NODE(real___lxstat(ver, "/dev/null", st), st);
	return real___lxstat(ver, path, st);
}

int __lxstat64(int ver, const char *path, struct stat64 *st)
{
	sim_init();
	if (is_node(path))
		STAT_NODE(real___lxstat64(ver, "/dev/null", st), st);
	return real___lxstat64(ver, path, st);
}

int __fxstat(int ver, int fd, struct stat *st)
{
	sim_init();
	if (is_device(fd))
		STAT_NODE(real___fxstat(ver, fd, st), st);
	return real___fxstat(ver, fd, st);
}

int __fxstat64(int ver, int fd, struct stat64 *st)
{
	sim_init();
	if (is_device(fd))
		STAT_NODE(real___fxstat64(ver, fd, st), st);
	return real___fxstat64(ver, fd, st);
}

int __fxstatat(int ver, int dirfd, const char *path, struct stat *st,
	       int flags)
{
	sim_init();
	if (is_node_at(dirfd, path, flags))
		STAT_NODE(real___xstat(ver, "/dev/null", st), st);
	return real___fxstatat(ver, dirfd, path, st, flags);
}

int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st,
		 int flags)
{
	sim_init();
	if (is_node_at(dirfd, path, flags))
		STAT_NODE(real___xstat64(ver, "/dev/null", st), st);
	return real___fxstatat64(ver, dirfd, path, st, flags);
}

int statx(int dirfd, const char *path, int flags, unsigned int mask,
	  struct statx *stx)
{
	sim_init();
	if (!is_node_at(dirfd, path, flags))
		return real_statx(dirfd, path, flags, mask, stx);
	int rc = real_statx(AT_FDCWD, "/dev/null", flags & ~AT_EMPTY_PATH,
			    mask, stx);
	if (rc == 0) {
		stx->stx_mode = NODE_MODE;
		stx->stx_rdev_major = ARENA_ACCEL_MAJOR;
		stx->stx_rdev_minor = 0;
	}
	return rc;
}

int access(const char *path, int mode)
{
	sim_init();
	if (is_node(path))
		return real_access("/dev/null", mode);
	return real_access(path, mode);
}

int faccessat(int dirfd, const char *path, int mode, int flags)
{
	sim_init();
	if (is_node(path))
		return real_faccessat(AT_FDCWD, "/dev/null", mode, flags);
	return real_faccessat(dirfd, path, mode, flags);
}

/* The node has no extended attributes (ls -l asks for them). */
ssize_t getxattr(const char *path, const char *name, void *value,
		 size_t size)
{
	sim_init();
	if (is_node(path))
		return fail(ENODATA);
	return real_getxattr(path, name, value, size);
}

ssize_t lgetxattr(const char *path, const char *name, void *value,
		  size_t size)
{
	sim_init();
	if (is_node(path))
		return fail(ENODATA);
	return real_lgetxattr(path, name, value, size);
}

ssize_t listxattr(const char *path, char *list, size_t size)
{
	sim_init();
	return is_node(path) ? 0 : real_listxattr(path, list, size);
}

ssize_t llistxattr(const char *path, char *list, size_t size)
{
	sim_init();
	return is_node(path) ? 0 : real_llistxattr(path, list, size);
}

/* ---- ioctl and mmap: the driver ---- */

int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	sim_init();
	if (!preload_inside() && fd_maybe_device(fd)) {
		sim_lock();
		struct sim_file *f = fd_file(fd);
		/* The kernel's ioctl takes an unsigned int command. */
		int rc = f ? sim_ioctl(f, fd, (unsigned int)request,
				       (uintptr_t)arg) : 0;
		sim_unlock();
		if (f)
			return rc ? fail(-rc) : 0;
	}
	return real_ioctl(fd, request, arg);
}

static void *map_device(void *addr, size_t len, int prot, int flags, int fd,
			off_t offset, int *handled)
{
	*handled = 0;
	if (fd < 0 || preload_inside() || !fd_maybe_device(fd))
		return MAP_FAILED;
	int err = 0;
	void *p = MAP_FAILED;
	sim_lock();
	struct sim_file *f = fd_file(fd);
	if (f) {
		*handled = 1;
		ctx_lock(f);
		p = bo_map(f, fd, addr, len, prot, flags, (uint64_t)offset, &err);
		ctx_unlock(f);
	}
	sim_unlock();
	if (p == MAP_FAILED && *handled)
		errno = err;
	return p;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
	sim_init();
	int handled;
	void *p = map_device(addr, len, prot, flags, fd, offset, &handled);
	return handled ? p : real_mmap(addr, len, prot, flags, fd, offset);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
	     off64_t offset)
{
	sim_init();
	int handled;
	void *p = map_device(addr, len, prot, flags, fd, offset, &handled);
	return handled ? p : real_mmap64(addr, len, prot, flags, fd, offset);
}
