/* SPDX-License-Identifier: MIT */
/*
 * Which fds are the arena device, and the open file description behind
 * each (struct ag_file, mirror.c's: a dup'ed fd shares its file's
 * programs and schedules, as it shares the drm_file in a kernel).
 *
 * The table (preload/fd_table.h, the simulator's kind too) is two-level
 * and lock-free for readers: chunks of 1024 slots
 * allocated on first use, each slot an atomic word holding UNKNOWN,
 * NOTDEV, CLOSING or a struct ag_file pointer that owns a reference.
 * CLOSING stands from just before a close(2) to just after: a request
 * on the fd meanwhile waits, rather than probe a device that is about
 * to go (and keep a file for an fd that is closed).  It stands as well
 * over a dup2 or dup3 onto the fd, which replaces its file atomically:
 * a request meanwhile would otherwise be decided on the file it
 * replaces while the kernel sends it to the new one.  Only the
 * arena's requests (ioctls, URING_CMDs) read it, and ioctl tests the
 * request number first, so an unrelated ioctl never touches it; close
 * and the dups clear or alias a slot with one atomic exchange.
 *
 * An fd is recognised lazily, on its first guarded request, by its DRM
 * driver name ("arena", DRM_IOCTL_VERSION; only character devices of the
 * accel major, uapi.h ARENA_ACCEL_MAJOR, are asked: any other file,
 * /dev/null or a terminal registered with a ring included, cannot be the
 * arena's and is sent no ioctl); a dup'ed fd the guard did not see made (fcntl F_DUPFD,
 * SCM_RIGHTS) is matched to its file with kcmp(2).  When memory runs out
 * before a device fd has its file, the request fails with ENOMEM: it is
 * never passed on unchecked.
 *
 * "Not the device" is remembered with the identity it was decided on:
 * an odd slot value, 1 for "not a character device", else the device
 * number (st_rdev) of a character device whose driver is not the arena.
 * The guard does not see every close (fclose, IORING_OP_CLOSE, a raw
 * SYS_close), so the fd number may since name the device: a guarded
 * request on such an fd first compares the fd's fstat with the identity
 * (one system call, on guarded request numbers only) and probes again
 * when it differs.  A probe that fails (EINTR, or EACCES and EPERM under
 * an ioctl allow-list) is never remembered: the node, of the accel major,
 * may be the arena's, so the request is refused with the probe's error
 * and a record.
 *
 * An fd named by an IORING_OP_CLOSE SQE (ag_fd_volatile) is closed by
 * the kernel at a time the guard does not see: a device fd the table
 * holds reads VOLATILE from then on, the guard keeping a copy of its
 * open file (vol_held, a descriptor at a high number) and the mirror
 * (vol_file); each request proves with kcmp(KCMP_FILE) whether the fd is
 * still that open file (decided on its mirror) or not (the close
 * completed: the slot settles to UNKNOWN and the fd is probed again), so
 * that a number reused unseen (fcntl F_DUPFD) is never judged by the
 * closed file's mirror.  A close or dup the guard sees settles it too.
 *
 * Files are never freed, only emptied and reused (mirror.c): a reader
 * that loaded a pointer just before the fd was closed may still touch
 * the struct, and takes its reference only if the count is not zero
 * (ag_file_try_ref) and the slot still holds the same pointer
 * afterwards.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <linux/kcmp.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "attach.h"
#include "devices.h"
#include "fd_table.h"
#include "mirror.h"
#include "notice.h"
#include "process.h"
#include "reentry.h"
#include "util.h"

/* The table: preload/fd_table.h's (fds below 2^22). */
typedef preload_fd_word slot_t;
static struct preload_fd_table table;

/* Files are aligned: an odd value is a "not the device" identity. */
static int is_file(uintptr_t v)
{
	return ag_is_file((struct ag_file *)v) && !(v & 1);
}

static int is_notdev(uintptr_t v)
{
	return v & 1;
}

/* The "not the device" value for a file with this fstat. */
static uintptr_t notdev_of(const struct stat *st)
{
	if (!S_ISCHR(st->st_mode))
		return (uintptr_t)AG_FD_NOTDEV;
	return ((uintptr_t)st->st_rdev + 1) << 1 | 1;
}

static slot_t *slot(int fd, int create)
{
	return preload_fd_at(&table, fd, create);
}

/* A VOLATILE fd's side: the guard's copy of its open file, as that
 * descriptor + 1, and the file (its mirror) with one reference; both 0
 * when none.  Written before the slot reads VOLATILE, dropped once it no
 * longer does (volatile_drop). */
static struct preload_fd_table vol_held, vol_file;
/* How many vol_held entries are nonzero: while none, the application's
 * closes and dups cost ag_fd_volatile_copies_taken one load. */
static atomic_uint vol_copies;

/* close(2) of the guard's own copy: not through the interposed close. */
static void close_held(int held)
{
	int saved = preload_enter_quiet();
	syscall(SYS_close, held);
	preload_leave_quiet(saved);
}

/* fd's slot no longer reads VOLATILE: its copy closed, its reference
 * dropped. */
static void volatile_drop(int fd)
{
	slot_t *h = preload_fd_at(&vol_held, fd, 0);
	slot_t *vf = preload_fd_at(&vol_file, fd, 0);
	uintptr_t held = h ? atomic_exchange(h, 0) : 0;
	uintptr_t file = vf ? atomic_exchange(vf, 0) : 0;
	if (held) {
		close_held((int)(held - 1));
		atomic_fetch_sub(&vol_copies, 1);
	}
	if (ag_is_file((struct ag_file *)file))
		ag_file_unref((struct ag_file *)file);
}

/* ---- probing ---- */

/* DRM_IOCTL_VERSION into a buffer on the stack, as drmGetVersion asks
 * it but without its allocations (which it does not check): a probe
 * needs no memory.  1 the arena, 0 another driver (or no DRM driver at
 * all: ENOTTY, EINVAL), -errno when the request failed otherwise
 * (-EBADF: a closed fd; -EINTR, -EACCES, -EPERM: no answer); errno
 * kept. */
static int probe_version(int fd)
{
	char name[sizeof(ARENA_DRIVER_NAME)];
	struct drm_version v = { .name_len = sizeof(name), .name = name };
	/* Not a guarded request: the interposed ioctl hands it on after
	 * one compare (ag_is_guarded_request), with no flag to consult. */
	int saved = errno;
	int rc = ioctl(fd, DRM_IOCTL_VERSION, &v);
	int err = rc != 0 ? errno : 0;
	errno = saved;
	if (rc != 0)
		return err == ENOTTY || err == EINVAL ? 0 : -err;
	return v.name_len == sizeof(name) - 1 &&
	       memcmp(name, ARENA_DRIVER_NAME, sizeof(name) - 1) == 0;
}

int ag_probe_device(int fd)
{
	int dev = probe_version(fd);
	return dev < 0 && dev != -EBADF ? 0 : dev;
}

static int same_file(int a, int b)
{
	pid_t pid = getpid();
	return syscall(SYS_kcmp, pid, pid, KCMP_FILE, a, b) == 0;
}

/* kcmp(KCMP_FILE) of two fds of this process: 0 the same open file, 1
 * not, -errno when it cannot tell (EBADF: one is closed; EPERM, ENOSYS:
 * denied); errno kept. */
static int kcmp_file(int a, int b)
{
	int saved = errno;
	pid_t pid = getpid();
	long r = syscall(SYS_kcmp, pid, pid, KCMP_FILE, a, b);
	int rc = r < 0 ? -errno : r != 0;
	errno = saved;
	return rc;
}

/* A device fd already in the table that shares fd's open file. */
static struct ag_file *find_alias(int fd)
{
	for (unsigned int c = 0; c < PRELOAD_FD_MAX_CHUNKS; c++) {
		slot_t *chunk = preload_fd_chunk(&table, c);
		for (unsigned int i = 0; chunk && i < PRELOAD_FD_CHUNK; i++) {
			uintptr_t v = atomic_load(&chunk[i]);
			int other = (int)(c * PRELOAD_FD_CHUNK + i);
			if (is_file(v) && other != fd &&
			    same_file(fd, other) &&
			    ag_file_try_ref((struct ag_file *)v)) {
				if (atomic_load(&chunk[i]) == v)
					return (struct ag_file *)v;
				ag_file_unref((struct ag_file *)v);
			}
		}
	}
	return NULL;
}

/* What to do when a probe finds a new open file of the device (uring.c's
 * note of rings out of sight), handed in by the front layer at load
 * (ag_devices_on_new_file): the state layer never calls above itself. */
static _Atomic(void (*)(void)) new_file_note;

void ag_devices_on_new_file(void (*note)(void))
{
	atomic_store(&new_file_note, note);
}

int ag_fstatat(int dirfd, const char *path, struct stat *st)
{
	int saved = errno;
	int rc = path ? fstatat(dirfd, path, st, 0) : fstat(dirfd, st);
	if (rc != 0)
		rc = -errno;
	errno = saved;
	return rc;
}

/* A probe's answer that is not kept: a probe that failed on a node of
 * the accel major, which may be the arena's (*err the probe's error:
 * the request is refused). */
#define PROBE_FAILED ((uintptr_t)AG_FD_CLOSING)

/* A probe that failed on a node of the accel major: the request is
 * refused with the probe's error, said once per error. */
static uintptr_t probe_failed(int fd, const struct stat *st, int err,
			      int *out)
{
	assert(major(st->st_rdev) == ARENA_ACCEL_MAJOR);   /* only they are */
	char key[32];
	snprintf(key, sizeof(key), "probe failed %d", err);
	ag_report_once(key, "fd %d is a character device of the accel major "
		       "(%u:%u) but DRM_IOCTL_VERSION failed (%s): the guard "
		       "cannot tell whether it is the arena device; requests on "
		       "it are refused with that error until a probe answers",
		       fd, major(st->st_rdev), minor(st->st_rdev), strerror(err));
	*out = -err;
	return PROBE_FAILED;
}

/* The value a probe of fd puts in its slot (a referenced file, a "not
 * the device" identity), or UNKNOWN when it cannot say (a closed fd), or
 * PROBE_FAILED (nothing to keep; *err the -errno to refuse with), or,
 * with *err set (ag_file_attach's: -ENOMEM, no memory for its file;
 * -EINTR, the driver's SEAL interrupted every time), NULL: fd is the
 * device but it has no file.  *err is 0 otherwise. */
static uintptr_t probe_fd(int fd, int *err)
{
	struct stat st;
	*err = 0;
	if (ag_fstatat(fd, NULL, &st) != 0)
		return (uintptr_t)AG_FD_UNKNOWN;
	if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != ARENA_ACCEL_MAJOR)
		return notdev_of(&st);       /* no ioctl sent to it */
	int dev = probe_version(fd);
	if (dev < 0)
		return dev == -EBADF ? (uintptr_t)AG_FD_UNKNOWN
				     : probe_failed(fd, &st, -dev, err);
	if (!dev)
		return notdev_of(&st);
	struct ag_file *f = find_alias(fd);
	if (!f) {
		f = ag_file_attach(fd);     /* sealed, or matched by context */
		if (!f) {                   /* attach's errno: refuse */
			*err = errno ? -errno : -ENOMEM;
			return (uintptr_t)NULL;
		}
		/* A new open file of the device: is any ring out of sight? */
		void (*note)(void) = atomic_load(&new_file_note);
		if (note)
			note();
	}
	ag_file_seen_on(f, fd);
	return (uintptr_t)f;
}

/* probe, errno left as it was (the seal, kcmp and the reports may set
 * it): ag_fd_file's answer is its return value alone. */
static uintptr_t probe(int fd, int *err)
{
	int saved = errno;
	uintptr_t v = probe_fd(fd, err);
	errno = saved;
	return v;
}

/* Whether the "not the device" identity v still holds for fd (one
 * fstat): a closed fd says yes (the request fails in the driver). */
static int still_notdev(int fd, uintptr_t v)
{
	struct stat st;
	return ag_fstatat(fd, NULL, &st) != 0 || notdev_of(&st) == v ||
	       (!S_ISCHR(st.st_mode));   /* never the device either */
}

int ag_fd_maybe_device(int fd)
{
	slot_t *s = slot(fd, 0);
	uintptr_t v = s ? atomic_load(s) : (uintptr_t)AG_FD_UNKNOWN;
	if (is_notdev(v))
		return !still_notdev(fd, v);
	if (v != (uintptr_t)AG_FD_UNKNOWN)
		return 1;            /* a file, or a close under way */
	struct stat st;
	return ag_fstatat(fd, NULL, &st) == 0 && S_ISCHR(st.st_mode) &&
	       major(st.st_rdev) == ARENA_ACCEL_MAJOR;
}

struct ag_file *ag_fd_peek(int fd)
{
	slot_t *s = slot(fd, 0);
	uintptr_t v = s ? atomic_load(s) : 0;
	return is_notdev(v) ? AG_FD_NOTDEV : (struct ag_file *)v;
}

void ag_fd_peek_many(const int *fds, unsigned int n, struct ag_file **out)
{
	unsigned int have = PRELOAD_FD_MAX_CHUNKS;  /* no chunk loaded yet */
	slot_t *chunk = NULL;
	for (unsigned int i = 0; i < n; i++) {
		int fd = fds[i];
		uintptr_t v = 0;
		if (fd >= 0 && (unsigned int)fd < PRELOAD_FD_LIMIT) {
			unsigned int c = (unsigned int)fd >> PRELOAD_FD_CHUNK_BITS;
			if (c != have) {
				chunk = preload_fd_chunk(&table, c);
				have = c;
			}
			if (chunk)
				v = atomic_load_explicit(
					&chunk[fd & (PRELOAD_FD_CHUNK - 1)],
					memory_order_relaxed);
		}
		out[i] = is_notdev(v) ? AG_FD_NOTDEV : (struct ag_file *)v;
	}
}

void ag_fd_set_notdev(int fd, const struct stat *st)
{
	assert(!S_ISCHR(st->st_mode));     /* a char device is probed */
	slot_t *s = slot(fd, 1);
	uintptr_t unknown = (uintptr_t)AG_FD_UNKNOWN;
	if (s)
		atomic_compare_exchange_strong(s, &unknown, notdev_of(st));
}

/* A probe's answer p for this request only: a child that shares the
 * guard's memory but not its fd table (vfork) has its own fd numbers,
 * which must not enter the parent's table.  A file of it is new (its
 * creations are not kept: its schedules are unknown, and refused). */
static struct ag_file *unkept(uintptr_t p)
{
	return is_file(p) ? (struct ag_file *)p : NULL;
}

/* ag_fd_file for an fd whose slot the table has no memory for. */
static int file_without_slot(int fd, struct ag_file **f)
{
	int err;
	uintptr_t v = probe(fd, &err);
	if (!is_file(v))
		return err;
	if (fd >= 0 && (unsigned int)fd < PRELOAD_FD_LIMIT) {
		/* No memory for its slot: a mirror made now would be lost
		 * with this request. */
		ag_file_unref((struct ag_file *)v);
		return -ENOMEM;
	}
	/* Beyond the table: no mirror can be kept, so the file is new
	 * every time and its schedules are unknown (blocked). */
	*f = (struct ag_file *)v;
	return 0;
}

/* kcmp's answer (kcmp_file) on a VOLATILE fd and its copy: fd is no
 * longer the file the close SQE named (closed, and maybe reused). */
static int volatile_gone(int same)
{
	return same == 1 || same == -EBADF;
}

/* A VOLATILE fd whose close completed: its slot reads UNKNOWN (probed
 * again at its next request), its copy closed, unless another thread
 * settled it first. */
static void volatile_settle(int fd, slot_t *s)
{
	uintptr_t expect = (uintptr_t)AG_FD_VOLATILE;
	if (atomic_compare_exchange_strong(s, &expect,
					   (uintptr_t)AG_FD_UNKNOWN))
		volatile_drop(fd);
}

/*
 * ag_fd_file on a VOLATILE fd: 1 to look at the slot again (it settled,
 * or its side is being written or dropped), else 0 with *rc and *f as
 * ag_fd_file answers: the marked file while kcmp says fd is still it; a
 * probe's, for this request alone, where kcmp cannot tell (or in a child
 * with an fd table of its own, whose numbers are not the table's).
 */
static int volatile_file(int fd, slot_t *s, struct ag_file **f, int *rc)
{
	*rc = 0;
	int tell = !ag_process_fds_diverged();
	slot_t *h = preload_fd_at(&vol_held, fd, 0);
	slot_t *vf = preload_fd_at(&vol_file, fd, 0);
	uintptr_t held = h ? atomic_load(h) : 0;
	uintptr_t file = vf ? atomic_load(vf) : 0;
	if (tell && (!held || !ag_is_file((struct ag_file *)file))) {
		sched_yield();
		return 1;
	}
	int same = tell ? kcmp_file(fd, (int)held - 1) : -EPERM;
	if (tell && atomic_load(h) != held)
		return 1;                 /* dropped meanwhile */
	if (same == 0) {
		struct ag_file *m = (struct ag_file *)file;
		if (!ag_file_try_ref(m))
			return 1;
		if (atomic_load(vf) == file &&
		    atomic_load(s) == (uintptr_t)AG_FD_VOLATILE) {
			*f = m;
			return 0;
		}
		ag_file_unref(m);
		return 1;
	}
	if (volatile_gone(same)) {
		volatile_settle(fd, s);
		return 1;
	}
	if (tell)
		ag_report_once("volatile kcmp", "fd %d was named by an "
			       "IORING_OP_CLOSE SQE and kcmp(2) cannot tell "
			       "whether it is still the file it was (%s): each "
			       "request on it is decided on a file probed for "
			       "it alone (its schedules unknown, and blocked, "
			       "unless the driver's seal matches its context)",
			       fd, strerror(-same));
	uintptr_t p = probe(fd, rc);
	if (p != (uintptr_t)AG_FD_UNKNOWN && p != PROBE_FAILED)
		*f = unkept(p);
	return 0;
}

/*
 * ag_fd_file for a slot value v that is no file: 1 to look at the slot
 * again, else 0 with *rc and *f as ag_fd_file answers.
 */
__attribute__((noinline, cold))
static int not_a_file(int fd, slot_t *s, uintptr_t v, struct ag_file **f,
		      int *rc)
{
	*rc = 0;
	if (is_notdev(v)) {
		if (still_notdev(fd, v))
			return 0;
		/* Closed and reused unseen: look again. */
		atomic_compare_exchange_strong(s, &v, (uintptr_t)AG_FD_UNKNOWN);
		return 1;
	}
	if (v == (uintptr_t)AG_FD_CLOSING) {
		sched_yield();         /* a close(2) under way */
		return 1;
	}
	if (v == (uintptr_t)AG_FD_VOLATILE)
		return volatile_file(fd, s, f, rc);
	assert(v == (uintptr_t)AG_FD_UNKNOWN);
	uintptr_t p = probe(fd, rc);
	if (p == (uintptr_t)AG_FD_UNKNOWN || p == PROBE_FAILED)
		return 0;              /* refuse, or pass (0) */
	if (!ag_process_shares_fds()) {
		*f = unkept(p);
		return 0;
	}
	if (is_file(p))
		ag_file_ref((struct ag_file *)p); /* ours */
	uintptr_t expect = (uintptr_t)AG_FD_UNKNOWN;
	if (!atomic_compare_exchange_strong(s, &expect, p) && is_file(p)) {
		/* Another thread probed first: use its. */
		ag_file_unref((struct ag_file *)p);
		ag_file_unref((struct ag_file *)p);
		*rc = 0;
		return 1;
	}
	*f = unkept(p);
	return 0;
}

int ag_fd_file(int fd, struct ag_file **f)
{
	assert(f);
	*f = NULL;
	slot_t *s = slot(fd, 1);
	if (!s)
		return file_without_slot(fd, f);
	for (;;) {
		uintptr_t v = atomic_load_explicit(s, memory_order_acquire);
		int err;
		if (__builtin_expect(!is_file(v), 0)) {
			if (not_a_file(fd, s, v, f, &err))
				continue;
			return err;
		}
		struct ag_file *file = (struct ag_file *)v;
		if (__builtin_expect(ag_process_fds_diverged(), 0)) {
			/* A vfork child's fd of this number may be another
			 * open file (its own device): probed, not kept. */
			uintptr_t p = probe(fd, &err);
			if (p != (uintptr_t)AG_FD_UNKNOWN && p != PROBE_FAILED)
				*f = unkept(p);
			return err;
		}
		if (ag_file_try_ref(file)) {
			if (atomic_load(s) == v) {
				*f = file;
				return 0;
			}
			ag_file_unref(file);
		}
	}
}

/* Puts v in fd's slot s, dropping the reference of the file it held
 * (or a VOLATILE fd's side). */
static void replace(int fd, slot_t *s, uintptr_t v)
{
	uintptr_t old = atomic_exchange(s, v);
	if (is_file(old))
		ag_file_unref((struct ag_file *)old);
	else if (old == (uintptr_t)AG_FD_VOLATILE)
		volatile_drop(fd);
}

void ag_fd_set(int fd, struct ag_file *f)
{
	slot_t *s = slot(fd, 1);
	assert(f != AG_SLOT_UNCERTAIN);      /* a slot's, not an fd's */
	if (!s)
		return;
	if (is_file((uintptr_t)f))
		ag_file_ref(f);
	replace(fd, s, (uintptr_t)f);
}

/*
 * Puts v in the slot for a close or dup this process made, unless the
 * slot holds a file (or a close under way) and this is a child that
 * shares the guard's memory but has its own copy of the fd table
 * (vfork): its descriptors are not the ones the table is kept for.
 * *asked is that answer once asked (-1 before): a descriptor the guard
 * does not track costs no system call.  0 when the slot was left.
 */
static int change(int fd, slot_t *s, uintptr_t v, int *asked)
{
	uintptr_t old = atomic_load_explicit(s, memory_order_relaxed);
	if (is_file(old) || old == (uintptr_t)AG_FD_CLOSING ||
	    old == (uintptr_t)AG_FD_VOLATILE) {
		if (*asked < 0)
			*asked = ag_process_shares_fds();
		if (!*asked)
			return 0;
	}
	replace(fd, s, v);
	return 1;
}

/* ag_fd_forget, with *asked as in change(). */
static void forget(int fd, int *asked)
{
	slot_t *s = slot(fd, 0);
	if (s && atomic_load_explicit(s, memory_order_relaxed) != 0)
		change(fd, s, (uintptr_t)AG_FD_UNKNOWN, asked);
}

void ag_fd_forget(int fd)
{
	int asked = -1;
	forget(fd, &asked);
}

int ag_fd_volatile(int fd)
{
	slot_t *s = slot(fd, 0);
	uintptr_t v = s ? atomic_load(s) : 0;
	if (v == (uintptr_t)AG_FD_VOLATILE)
		return 1;            /* an earlier close SQE's copy stands */
	if (!is_file(v)) {
		ag_fd_forget(fd);
		return 0;
	}
	if (!ag_process_shares_fds())
		return 0;            /* a vfork child's: not the table's fd */
	struct ag_file *f = (struct ag_file *)v;
	slot_t *h = preload_fd_at(&vol_held, fd, 1);
	slot_t *vf = preload_fd_at(&vol_file, fd, 1);
	int held = -1;
	if (h && vf && ag_file_try_ref(f)) {
		int saved = errno;
		held = fcntl(fd, F_DUPFD_CLOEXEC, ag_high_fd_base());
		errno = saved;
		if (held < 0)
			ag_file_unref(f);
	}
	if (held < 0) {
		/* No copy (no memory, no descriptor left): forgotten, as
		 * before; said. */
		ag_report_once("volatile no copy", "fd %d was named by an "
			       "IORING_OP_CLOSE SQE and the guard could not "
			       "keep a copy of its open file: it is forgotten, "
			       "and a request on it before the close completes "
			       "attaches the file still behind it", fd);
		ag_fd_forget(fd);
		return 0;
	}
	uintptr_t none = 0;
	if (!atomic_compare_exchange_strong(h, &none, (uintptr_t)held + 1)) {
		close_held(held);    /* another thread's mark is under way */
		ag_file_unref(f);
		return 0;
	}
	atomic_fetch_add(&vol_copies, 1);
	atomic_store(vf, v);         /* the reference taken above */
	if (atomic_compare_exchange_strong(s, &v, (uintptr_t)AG_FD_VOLATILE)) {
		ag_file_unref(f);    /* the slot's */
		return 1;
	}
	volatile_drop(fd);           /* the slot changed: a close or dup of
				      * fd in another thread, which says */
	return 0;
}

void ag_fd_volatile_settle(int fd)
{
	slot_t *s = slot(fd, 0);
	if (!s || atomic_load(s) != (uintptr_t)AG_FD_VOLATILE ||
	    ag_process_fds_diverged())
		return;
	slot_t *h = preload_fd_at(&vol_held, fd, 0);
	uintptr_t held = h ? atomic_load(h) : 0;
	if (!held)
		return;              /* being written or dropped: its owner's */
	int same = kcmp_file(fd, (int)held - 1);
	if (atomic_load(h) == held && volatile_gone(same))
		volatile_settle(fd, s);
}

/* The range of numbers an application's close, close_range, dup2 or
 * dup3 is about to take. */
struct taken {
	unsigned int first, last;
};

/* preload_fd_each's callback over vol_held: fd's copy, when its number
 * is in the range taken, moves to a number above it (as outputs.c's own
 * descriptors step aside); with none there, fd can no longer be proved:
 * it is forgotten (probed again at its next request: fail closed, said)
 * and the copy's number left to the application's call. */
static void copy_taken(void *ctx, int fd)
{
	const struct taken *t = ctx;
	slot_t *h = preload_fd_at(&vol_held, fd, 0);
	uintptr_t held = h ? atomic_load(h) : 0;
	if (!held || held - 1 < t->first || held - 1 > t->last)
		return;
	int saved = errno;
	int to = t->last < INT_MAX ? fcntl((int)held - 1, F_DUPFD_CLOEXEC,
					   (int)t->last + 1) : -1;
	errno = saved;
	if (to >= 0) {
		if (!atomic_compare_exchange_strong(h, &held, (uintptr_t)to + 1))
			close_held(to);      /* dropped meanwhile */
		return;
	}
	if (!atomic_compare_exchange_strong(h, &held, 0))
		return;
	atomic_fetch_sub(&vol_copies, 1);
	ag_report_once("volatile copy taken", "fd %d was named by an "
		       "IORING_OP_CLOSE SQE, and the application took every "
		       "number the guard could move its copy of the open file "
		       "to: the fd is probed again at its next request (a new "
		       "mirror, whose schedules are blocked, unless the "
		       "driver's seal names its context)", fd);
	slot_t *s = slot(fd, 0);
	uintptr_t expect = (uintptr_t)AG_FD_VOLATILE;
	if (s)
		atomic_compare_exchange_strong(s, &expect,
					       (uintptr_t)AG_FD_UNKNOWN);
	slot_t *vf = preload_fd_at(&vol_file, fd, 0);
	uintptr_t file = vf ? atomic_exchange(vf, 0) : 0;
	if (ag_is_file((struct ag_file *)file))
		ag_file_unref((struct ag_file *)file);
}

void ag_fd_volatile_copies_taken(unsigned int first, unsigned int last)
{
	if (atomic_load_explicit(&vol_copies, memory_order_relaxed) == 0 ||
	    !ag_process_shares_fds())
		return;
	struct taken t = { first, last };
	preload_fd_each(&vol_held, 0, PRELOAD_FD_LIMIT - 1, copy_taken, &t);
}

void ag_fd_closing(int fd)
{
	slot_t *s = slot(fd, 0);
	int asked = -1;
	if (s)
		change(fd, s, (uintptr_t)AG_FD_CLOSING, &asked);
}

struct ag_file *ag_fd_replacing(int fd)
{
	slot_t *s = slot(fd, 0);
	if (!s)
		return NULL;
	/* As change(): a vfork child leaves the parent's files alone. */
	uintptr_t old = atomic_load_explicit(s, memory_order_relaxed);
	if ((is_file(old) || old == (uintptr_t)AG_FD_CLOSING ||
	     old == (uintptr_t)AG_FD_VOLATILE) && !ag_process_shares_fds())
		return NULL;
	old = atomic_exchange(s, (uintptr_t)AG_FD_CLOSING);
	if (old == (uintptr_t)AG_FD_VOLATILE)
		volatile_drop(fd);
	return is_file(old) ? (struct ag_file *)old : NULL;
}

void ag_fd_replaced(int fd, struct ag_file *was, int failed)
{
	slot_t *s = slot(fd, 0);
	uintptr_t closing = (uintptr_t)AG_FD_CLOSING;
	/* The call failed: fd is still the file it was (its reference
	 * goes back to the slot), unless the slot changed meanwhile (a
	 * close of fd in another thread). */
	if (s && failed && was &&
	    atomic_compare_exchange_strong(s, &closing, (uintptr_t)was))
		return;
	ag_fd_closed(fd);
	if (was)
		ag_file_unref(was);
}

void ag_fd_closed(int fd)
{
	slot_t *s = slot(fd, 0);
	uintptr_t closing = (uintptr_t)AG_FD_CLOSING;
	if (s)
		atomic_compare_exchange_strong(s, &closing,
					       (uintptr_t)AG_FD_UNKNOWN);
}

/* preload_fd_each's callback: forget, ctx the int *asked. */
static void forget_each(void *ctx, int fd)
{
	forget(fd, ctx);
}

void ag_fd_forget_range(unsigned int first, unsigned int last)
{
	int asked = -1;
	preload_fd_each(&table, first, last, forget_each, &asked);
}

void ag_fd_dup(int oldfd, int newfd)
{
	if (oldfd == newfd)
		return;
	struct ag_file *f = ag_fd_peek(oldfd);
	if (f > AG_FD_NOTDEV) {
		/* newfd becomes the device: not in a vfork child's copy. */
		if (!ag_process_shares_fds())
			return;
		ag_fd_file(oldfd, &f);      /* referenced, checked */
		ag_fd_set(newfd, f);
		ag_file_unref(f);
	} else {
		/* Unknown or not the device: the new fd is whatever the old
		 * one is, which a probe will find out. */
		ag_fd_forget(newfd);
	}
}

/* ---- fork ---- */

/* preload_fd_each's callback: read first, so that only a slot marked
 * CLOSING is written (a write to every slot made every page of the
 * table a copy-on-write fault in the child). */
static void closed_each(void *ctx, int fd)
{
	(void)ctx;
	slot_t *s = slot(fd, 0);
	if (s && atomic_load_explicit(s, memory_order_relaxed) ==
	    (uintptr_t)AG_FD_CLOSING)
		ag_fd_closed(fd);
}

void ag_devices_forked(void)
{
	preload_fd_each(&table, 0, PRELOAD_FD_LIMIT - 1, closed_each, NULL);
}
