/* SPDX-License-Identifier: MIT */
/*
 * The fd table: which fds are the device (devices.c).
 */
#ifndef ARENAGUARD_SHIM_DEVICES_H
#define ARENAGUARD_SHIM_DEVICES_H

#include <stdint.h>

struct ag_file;

/*
 * The values of a struct ag_file pointer that are no file (files are
 * aligned, and never at the lowest addresses), each with one meaning:
 * what an fd is, as far as the fd table knows (devices.c) ...
 */
#define AG_FD_UNKNOWN ((struct ag_file *)0)
#define AG_FD_NOTDEV ((struct ag_file *)1)    /* not the device */
#define AG_FD_CLOSING ((struct ag_file *)2)   /* close(2) under way */
/* ... and what a registered file slot of a ring holds (uring.c), NULL
 * there meaning not the device: it may be the device, and the guard
 * cannot tell (the opposite of AG_FD_NOTDEV, hence its own value). */
#define AG_SLOT_UNCERTAIN ((struct ag_file *)3)
/* An fd named by an IORING_OP_CLOSE SQE (ag_fd_volatile): its close
 * completes when the guard does not see, so every request on it proves
 * its open file again (devices.c). */
#define AG_FD_VOLATILE ((struct ag_file *)4)

/* Whether f, a value of the fd table or of a registered slot, is a
 * file, none of the values above. */
static inline int ag_is_file(const struct ag_file *f)
{
	return (uintptr_t)f > (uintptr_t)AG_FD_VOLATILE;
}

/* The file behind fd: 0 with *f the file, referenced, or NULL when fd is
 * not the arena device (pass the request on), probing its DRM driver
 * name the first time, and again whenever the fd's fstat no longer
 * matches the file "not the device" was decided on; or -errno, *f NULL,
 * the error to refuse the request with: -ENOMEM when fd is the device
 * but memory ran out, the probe's error when it failed on a node that
 * may be the device (never passed on unchecked).  errno is left as it
 * was. */
int ag_fd_file(int fd, struct ag_file **f);
/* The cached state without probing or referencing (a hint): UNKNOWN,
 * NOTDEV (of any identity), CLOSING or a file. */
struct ag_file *ag_fd_peek(int fd);
/* ag_fd_peek of each of fds[0, n) into out (a registration walk: one
 * call, no system call). */
void ag_fd_peek_many(const int *fds, unsigned int n, struct ag_file **out);
struct stat;
/* fstat(dirfd) (path NULL) or fstatat(dirfd, path) following links,
 * errno kept: 0 or -errno. */
int ag_fstatat(int dirfd, const char *path, struct stat *st);
/* Remembers that fd, which fstat says is not a character device, is not
 * the device (unless the table knows better already). */
void ag_fd_set_notdev(int fd, const struct stat *st);
/* fd is no longer what the table says (dup2 replaced it). */
void ag_fd_forget(int fd);
/* close(fd) is about to happen: requests on fd wait until it has
 * (ag_fd_closed), so that none finds the device still open and keeps
 * a file for a closed fd. */
void ag_fd_closing(int fd);
void ag_fd_closed(int fd);
/* dup2 or dup3 is about to replace fd atomically: as ag_fd_closing,
 * requests on fd wait (the slot reads CLOSING) until ag_fd_replaced,
 * so that none is decided on the file fd was while the kernel sends it
 * to the one it becomes.  Returns the file the slot held (its reference
 * now the caller's), or NULL. */
struct ag_file *ag_fd_replacing(int fd);
/* After the call: was (ag_fd_replacing's) goes back to fd when the call
 * failed (fd unchanged), else its reference is dropped; a slot still
 * CLOSING (the call failed on another value) reads UNKNOWN again. */
void ag_fd_replaced(int fd, struct ag_file *was, int failed);
void ag_fd_forget_range(unsigned int first, unsigned int last);
/* fd is named by an IORING_OP_CLOSE SQE handed to the kernel, which
 * closes it at a time the guard does not see.  A device fd the table
 * holds becomes volatile: the guard keeps a copy of its open file (a
 * descriptor at a high number, close-on-exec) and each request on fd
 * proves with kcmp(KCMP_FILE) that fd is still that file (then decided
 * on its mirror) or not (the close completed: fd is probed again and
 * kept); where kcmp cannot tell, the file is probed for that request
 * alone (a new mirror, unless the seal's context matches one: fail
 * closed).  A close, dup2, dup3 or close_range the guard sees on fd
 * settles it, and so does ag_fd_volatile_settle once the kernel has the
 * SQE.  Any other fd is forgotten.  Returns 1 when fd reads volatile
 * (its copy kept), else 0. */
int ag_fd_volatile(int fd);
/* After the submit that handed the kernel a close SQE of fd (which
 * ag_fd_volatile marked): when kcmp shows that the close completed, fd
 * settles at once (its slot UNKNOWN, the guard's copy closed), so that
 * the copy does not keep the closed file, and the driver's context
 * behind it, open until a request on fd's number comes; a close still
 * under way (or kcmp that cannot tell) leaves fd volatile. */
void ag_fd_volatile_settle(int fd);
/* Before the application's close, close_range, dup2 or dup3 takes the
 * numbers first..last: a copy of a volatile fd's file among them moves
 * above the range, or (none free there) its fd is forgotten, so that
 * the guard never closes or kcmp's a number that has become the
 * application's.  Not in a child with an fd table of its own. */
void ag_fd_volatile_copies_taken(unsigned int first, unsigned int last);
/* newfd is now a dup of oldfd. */
void ag_fd_dup(int oldfd, int newfd);
/* Whether fd may be the device, without a lock, an allocation or a
 * probe (async-signal-safe: a signal handler's request while its thread
 * is inside the guard): 0 only when the table says "not the device" and
 * fstat still agrees, or fd is no character device of the accel major. */
int ag_fd_maybe_device(int fd);
/* Whether fd is the arena device (DRM_IOCTL_VERSION name), without
 * caching: 1, 0, or -EBADF for a closed fd. */
int ag_probe_device(int fd);

/* Attach f (a file, or one of the AG_FD_ values) to fd in the table, as
 * a probe would (tests). */
void ag_fd_set(int fd, struct ag_file *f);

/* In a forked child: the closes under way in other threads, which will
 * never finish there, are over. */
void ag_devices_forked(void);
/* note is called (with no lock held) each time a probe finds a new open
 * file of the device; NULL: nothing is.  The front layer's, at load. */
void ag_devices_on_new_file(void (*note)(void));

#endif
