/* SPDX-License-Identifier: MIT */
/*
 * Every symbol libarenaguard.so exports, and nothing else (symbols.h
 * lists them once; the version script generated from it keeps
 * libarenacert and the guard's own names local).  Each
 * forwards to the next definition in the lookup order (RTLD_NEXT): with
 * LD_PRELOAD="libarenaguard.so libarenasim.so" that is the simulated
 * device, else libc or liburing.
 *
 *   ioctl      the arena program and schedule requests; everything else
 *              is forwarded after one compare (the request's DRM type)
 *   close, close_range, dup, dup2, dup3, and syscall() with those
 *   numbers (SYS_close, SYS_close_range, SYS_dup2, SYS_dup3)
 *              keep the fd table in step (fcntl F_DUPFD, SCM_RIGHTS and
 *              the like are caught lazily, by kcmp, when first used;
 *              closes the guard does not see, by fstat when a guarded
 *              request comes), and forget a ring's fd when it is closed
 *   io_uring_submit, _and_wait, _and_wait_timeout, _and_get_events,
 *   _and_wait_min_timeout (liburing 2.8), _and_wait_reg (2.9),
 *   io_uring_wait_cqes, io_uring_wait_cqe_timeout
 *              check the pending SQEs first
 *   io_uring_register_files*, io_uring_unregister_files,
 *   io_uring_register, io_uring_queue_init, _init_params, _init_mem
 *   (2.5), io_uring_queue_mmap, io_uring_queue_exit,
 *   io_uring_resize_rings (2.9)
 *              track registered files and the ring's mapping (a ring
 *              fd none of these made is reported, when a device file is
 *              first seen and at exit: its SQEs pass unchecked)
 *   io_uring_enter, io_uring_enter2
 *              check SQEs written to the ring by hand (on a registered
 *              ring index too: io_uring_register_ring_fd
 *              says which ring it names)
 *   execve, execv, execvp, execvpe, execl, execlp, execle, fexecve,
 *   execveat, posix_spawn, posix_spawnp, system, popen
 *              under the launcher, a program that will not load the
 *              guard is told to it first (exec.c); the call itself is
 *              the next's, unchanged
 *   __register_atfork
 *              (pthread_atfork's) registers the guard's fork handlers
 *              before the caller's: see "start-up and fork"
 *
 * Those of liburing's that every preload module interposes
 * (PRELOAD_URING_SYMBOLS: io_uring_submit, _and_wait, _and_wait_timeout,
 * _and_get_events, io_uring_register_files*, io_uring_unregister_files,
 * io_uring_queue_init, _init_params, _mmap, _exit) are the preload
 * core's wrappers (preload/uring_wrappers.inc, included below), which
 * call this file's hooks (preload_uring_client_*); the others are
 * written here.
 *
 * The functions of a liburing newer than the one the guard is built
 * against are declared here and resolved like the others: absent from
 * the liburing loaded, they are never called, since an application
 * calling them was linked against one that has them.
 *
 * ARENAGUARD=off makes every one of them a plain call of the next.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>

#include <liburing.h>

#include "atfork_first.h"
#include "attach.h"
#include "bypass.h"
#include "cache.h"
#include "devices.h"
#include "driver.h"
#include "exec.h"
#include "ioctl.h"
#include "load.h"
#include "mirror.h"
#include "options.h"
#include "outputs.h"
#include "process.h"
#include "report.h"
#include "summary.h"
#include "rings.h"
#include "suppress.h"
#include "uring.h"
#include "util.h"
#include "liburing_newer.h"
#include "next.h"
#include "reentry.h"
#include "ring_id.h"
#include "symbols.h"
#include "usercopy.h"

typedef int (*ioctl_fn)(int, unsigned long, ...);
static _Atomic(ioctl_fn) next_ioctl;
typedef long (*syscall_fn)(long, ...);
static _Atomic(syscall_fn) next_syscall;     /* syscall(), below */

AG_NEXT_SYMBOLS(PRELOAD_NEXT_DECLARE)
AG_URING_NEXT_SYMBOLS(PRELOAD_NEXT_DECLARE_LAZY)
AG_EXEC_NEXT_SYMBOLS(PRELOAD_NEXT_DECLARE)

/* liburing's functions every preload module interposes: the preload
 * core's wrappers, with this file's hooks (preload_uring_client_*,
 * below) and next_<name> pointers. */
#include "uring_wrappers.inc"

/* The driver is whatever ioctl comes next: the simulator, or the
 * kernel through libc.  0 or -errno. */
static int forward_ioctl(int fd, unsigned int cmd, void *arg)
{
	ioctl_fn next = atomic_load_explicit(&next_ioctl, memory_order_acquire);
	int saved = errno;
	int rc = next(fd, (unsigned long)cmd, arg);
	rc = rc < 0 ? -errno : 0;
	errno = saved;
	return rc;
}

/* ---- start-up and fork ---- */

/*
 * fork: the guard's prepare handler takes every lock it has, in the one
 * order (docs/guard.md "Threads and fork"), so that the child's copies
 * are consistent; the parent and child handlers release them (the
 * child's also resets what threads it does not have held).
 *
 * They are registered before any other library's (atfork_first.h), so
 * that other libraries' fork handlers, which may issue guarded requests
 * (a runtime quiescing the device before fork, or resubmitting in the
 * child), run with the guard unlocked and are decided as usual.  Only
 * the handlers of the driver below (the simulator's, registered the same
 * way, so that its lock is taken after the guard's as every request
 * takes them) run while the guard holds its locks, and they never come
 * back into the guard.  The handlers need nothing resolved (every lock
 * and list they walk is static or made by a request): they are
 * registered on the first registration by anyone, however early, and at
 * start-up, with ARENAGUARD=off too (they then find nothing to lock but
 * the static locks).
 */
/*
 * A process with one thread, forking from outside the guard (the
 * thread is in fork, not in a wrapper: preload_inside() 0), holds none of the
 * guard's locks and has nothing half done in its state: the copy is
 * consistent without taking them.  Not taking them spares every page
 * that holds a lock a copy-on-write fault in the parent and another in
 * the child when they are released (issue 32: about 26 faults of a
 * fork's 97).  glibc's __libc_single_threaded is true only while no
 * thread was ever created (the certifier's workers, a sanitizer's
 * background thread clear it), so a doubt takes the locks as before.
 * Set by the prepare handler for the parent and child handlers of the
 * same fork, in the forking thread (one fork at a time takes this path:
 * there is no other thread).
 */
static int fork_unlocked AG_FORK_DATA;

static void fork_prepare(void)
{
	ag_uring_forking();
	fork_unlocked = __libc_single_threaded && !preload_inside();
	if (fork_unlocked)
		return;
	ag_uring_lock_all();
	ag_mirror_lock_all();
	ag_cache_lock_all();
	ag_report_lock_all();
	ag_suppress_lock_all();
	ag_attach_lock_all();
	usercopy_fork_prepare();
}

static void fork_parent(void)
{
	if (fork_unlocked)
		return;
	usercopy_fork_parent();
	ag_attach_unlock_all();
	ag_suppress_unlock_all();
	ag_report_unlock_all(0);
	ag_cache_unlock_all(0);
	ag_mirror_unlock_all(0);
	ag_uring_unlock_all(0);
}

static void fork_child(void)
{
	ag_process_forked();
	if (fork_unlocked) {
		/* No lock to release, no other thread's work to clear: the
		 * child is marked, and opens its own outputs. */
		ag_output_forked();
		return;
	}
	usercopy_forked();
	ag_attach_unlock_all();
	ag_suppress_unlock_all();
	ag_report_unlock_all(1);
	ag_cache_unlock_all(1);
	ag_mirror_unlock_all(1);
	ag_devices_forked();
	ag_uring_unlock_all(1);
	ag_output_forked();
}

ATFORK_FIRST(fork_prepare, fork_parent, fork_child)

static void resolve(void)
{
	preload_enter();
	AG_NEXT_SYMBOLS(PRELOAD_NEXT_RESOLVE)
	AG_EXEC_NEXT_SYMBOLS(PRELOAD_NEXT_RESOLVE)
	/* liburing's are looked up at their first call
	 * (PRELOAD_URING_NEED, NEED_URING), not here: most processes have
	 * no liburing, and each failed look-up formatted an error message
	 * (issue 32: about half of a start's dlsym work); one dlopen'ed
	 * after start is found then. */
	ag_config_load();
	if (ag_cfg.mode != AG_OFF)
		ag_bypass_check();
	ag_driver_ioctl = forward_ioctl;
	ag_process_mark();
	atfork_first();
	if (!atomic_load(&next_syscall))     /* before any signal handler's */
		atomic_store(&next_syscall,
			     (syscall_fn)preload_next("syscall"));
	/* Last: its being set is what the fast path tests. */
	atomic_store_explicit(&next_ioctl,
			      (ioctl_fn)preload_next("ioctl"),
			      memory_order_release);
	preload_leave();
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
	pthread_once(&once, resolve);
}

/* The preload core's liburing wrappers start the guard first
 * (preload/uring_wrappers.h). */
static void preload_uring_client_init(void)
{
	init();
}

/* Load time: the settings are read and the outputs opened
 * (ag_config_load), before the application can reuse fd 2. */
__attribute__((constructor)) static void guard_load(void)
{
	init();
}

__attribute__((destructor)) static void guard_unload(void)
{
	if (ag_cfg.mode != AG_OFF)
		ag_uring_note_unseen_rings();
	if (ag_cfg.stats && ag_cfg.mode != AG_OFF)
		ag_report_stats();
	if (ag_cfg.mode != AG_OFF)
		ag_report_exit();
}

static int off(void)
{
	return ag_cfg.mode == AG_OFF;
}

/* Whether this thread is inside the guard already: a request now comes
 * from a signal handler that interrupted it (util.h, the re-entry flag). */
static int reentered(void)
{
	return preload_inside();
}

/* Some liburing functions may be missing (an older liburing, or none in
 * the global scope at start-up): calling one that is not there is
 * ENOSYS. */
#define NEED(fn, ...)                                            \
	do {                                                     \
		init();                                          \
		if (!next_##fn)                                  \
			return __VA_ARGS__;                      \
	} while (0)

/* The same for the guard's own of liburing's functions
 * (AG_URING_NEXT_SYMBOLS): its next definition looked up at the first
 * call that finds none, with the preload core's (PRELOAD_URING_FIND). */
#define NEED_URING(fn, ...)                                      \
	do {                                                     \
		init();                                          \
		if (__builtin_expect(!next_##fn, 0) &&           \
		    !PRELOAD_URING_FIND(fn))                     \
			return __VA_ARGS__;                      \
	} while (0)

/* ---- ioctl ---- */

/* A guarded request from a signal handler whose thread is inside the
 * guard: refused on what may be the device, never forwarded unchecked,
 * never waiting (util.h, the re-entry flag). */
__attribute__((noinline, cold))
static int reentered_ioctl(int fd, unsigned long request, void *arg,
			   ioctl_fn next)
{
	if (!ag_fd_maybe_device(fd))
		return next(fd, request, arg);
	errno = -ag_report_reentered("a device ioctl", fd);
	return -1;
}

/* A guarded request, decided inside the guard (the re-entry flag counted). */
static int guarded_ioctl(int fd, unsigned long request, void *arg,
			 ioctl_fn next)
{
	if (reentered())
		return reentered_ioctl(fd, request, arg, next);
	int saved = errno;
	preload_enter();
	struct ag_file *f;
	int refuse = ag_fd_file(fd, &f);
	if (refuse) {         /* maybe the device, unchecked: never passed */
		errno = refuse == -ENOMEM
			? -ag_no_memory("a request on a device fd") : -refuse;
		preload_leave();
		return -1;
	}
	if (!f) {
		preload_leave();
		return next(fd, request, arg);
	}
	/* The kernel's ioctl takes an unsigned int command. */
	int rc = ag_ioctl(f, fd, (unsigned int)request, (uintptr_t)arg);
	ag_file_unref(f);
	preload_leave();
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	errno = saved;
	return rc;
}

int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	ioctl_fn next = atomic_load_explicit(&next_ioctl, memory_order_acquire);
	if (__builtin_expect(!next, 0)) {
		init();
		next = atomic_load(&next_ioctl);
		if (!next) {
			errno = ENOSYS;
			return -1;
		}
	}
	if (__builtin_expect(!ag_is_guarded_request((unsigned int)request), 1) ||
	    off())
		return next(fd, request, arg);
	return guarded_ioctl(fd, request, arg, next);
}

/* ---- the fd table ---- */

/* Whether the guard has loaded (resolve has run to its end). */
static int loaded(void)
{
	return atomic_load_explicit(&next_ioctl, memory_order_acquire) != NULL;
}

/*
 * The wrappers below keep the guard's tables in step with the
 * application's descriptors.  Each table, before it changes for a
 * descriptor it tracks (a device fd, the guard's own, standard error, a
 * ring's), asks whether this process's closes and dups are the guard's
 * to follow (ag_process_shares_fds): a vfork or posix_spawn child has its
 * own copy of the fd table, and what it does to it, in the parent's
 * memory, must change nothing of the parent's guard (docs/guard.md,
 * "Threads and fork").  A descriptor the guard does not track costs no
 * such question.  The re-entry flag: a device's close may free its mirror, under
 * locks a signal handler's request must not wait for.
 */

/* The application's call is about to close or replace fds first..last:
 * the guard's own descriptors among them step aside (its outputs, the
 * copies of volatile fds' files). */
static void own_fds_taken(unsigned int first, unsigned int last)
{
	ag_report_fds_taken(first, last);
	ag_fd_volatile_copies_taken(first, last);
}

/* close before the guard has loaded (another library's constructor,
 * which runs first: jansson seeding its hashes closes /dev/urandom) has
 * nothing of the guard's to keep track of, and does not load it from
 * inside that library's work (test_jansson_before_guard). */
int close(int fd)
{
	if (__builtin_expect(!loaded(), 0))
		return (int)syscall(SYS_close, fd);
	NEED(close, (errno = ENOSYS, -1));
	if (ag_cfg.mode == AG_OFF)
		return next_close(fd);
	preload_enter();
	own_fds_taken((unsigned int)fd, (unsigned int)fd);
	ag_fd_closing(fd);
	ag_ring_fds_closed((unsigned int)fd, (unsigned int)fd);
	int rc = next_close(fd);
	ag_fd_closed(fd);
	preload_leave();
	return rc;
}

/*
 * The range is forgotten before the call (as close marks its fd), but
 * only when the call closes fds in the table every thread uses: not when
 * the kernel will refuse it (EINVAL: an unknown flag, first > last), nor
 * with CLOSE_RANGE_CLOEXEC (nothing closed), nor with CLOSE_RANGE_UNSHARE
 * (closed in the caller's private copy of a shared table only; the other
 * threads keep the fds).  Forgetting a device fd that stays open lost its
 * mirror: its certified schedules were refused (attack29-kproc
 * closerange).  The guard's own fds step aside whenever the range may
 * close them.
 */
int close_range(unsigned int first, unsigned int last, int flags)
{
	if (__builtin_expect(!loaded(), 0))     /* as close */
		return (int)syscall(SYS_close_range, first, last, flags);
	NEED(close_range, (errno = ENOSYS, -1));
	int valid = !(flags & ~(CLOSE_RANGE_CLOEXEC | CLOSE_RANGE_UNSHARE)) &&
		    first <= last;
	if (ag_cfg.mode != AG_OFF && valid && !(flags & CLOSE_RANGE_CLOEXEC)) {
		preload_enter();
		own_fds_taken(first, last);
		if (!(flags & CLOSE_RANGE_UNSHARE)) {
			ag_fd_forget_range(first, last);
			ag_ring_fds_closed(first, last);
		}
		preload_leave();
	}
	return next_close_range(first, last, flags);
}

int dup(int fd)
{
	NEED(dup, (errno = ENOSYS, -1));
	int rc = next_dup(fd);
	if (rc >= 0 && ag_cfg.mode != AG_OFF) {
		preload_enter();
		ag_fd_dup(fd, rc);
		preload_leave();
	}
	return rc;
}

/*
 * dup2 and dup3 replace newfd atomically, closing what it was.  As
 * close marks its fd, newfd reads CLOSING from just before the call to
 * just after (ag_fd_replacing): a request on it meanwhile waits, where
 * it would otherwise be decided on the file newfd was while the kernel
 * sends it to oldfd's (another open file of the device, whose
 * schedules under the same handles the guard never certified).  A call
 * that fails leaves newfd as it was.  dup3 with oldfd == newfd fails
 * (EINVAL), dup2's changes nothing: neither marks.  (fcntl F_DUPFD,
 * SCM_RIGHTS and io_uring's IORING_OP_FIXED_FD_INSTALL take a free
 * number: none replaces one.)
 */
static int dup_onto(int oldfd, int newfd, int flags, int three)
{
	if (ag_cfg.mode == AG_OFF || oldfd == newfd)
		return three ? next_dup3(oldfd, newfd, flags)
			     : next_dup2(oldfd, newfd);
	preload_enter();
	own_fds_taken((unsigned int)newfd, (unsigned int)newfd);
	struct ag_file *was = ag_fd_replacing(newfd);
	int rc = three ? next_dup3(oldfd, newfd, flags)
		       : next_dup2(oldfd, newfd);
	int err = errno;
	if (rc >= 0) {
		ag_ring_fds_closed((unsigned int)newfd, (unsigned int)newfd);
		ag_fd_dup(oldfd, newfd);
	}
	ag_fd_replaced(newfd, was, rc < 0);
	preload_leave();
	errno = err;
	return rc;
}

int dup2(int oldfd, int newfd)
{
	NEED(dup2, (errno = ENOSYS, -1));
	return dup_onto(oldfd, newfd, 0, 0);
}

int dup3(int oldfd, int newfd, int flags)
{
	NEED(dup3, (errno = ENOSYS, -1));
	return dup_onto(oldfd, newfd, flags, 1);
}

/*
 * glibc's syscall() function: SYS_close, SYS_close_range, SYS_dup2 and
 * SYS_dup3 made through it are followed as close, close_range, dup2 and
 * dup3 are (the fd table forgets or aliases the number: a device fd
 * closed this way and its number given to another open file is probed
 * again, not judged by the closed file's mirror); every other number,
 * and those from inside the guard (its own raw closes, a re-entry) or
 * before it has loaded, go straight to the next syscall() with the six
 * argument words as given.  The simulator's calls of syscall() come here
 * too (the guard is first): its closes are followed like the
 * application's.  A system call made by inline assembly is not seen
 * (docs/guard.md, "Recognising the device").
 */
/* Six argument words are read whatever the number takes, as glibc's
 * syscall() reads them: those the caller did not pass are the caller's
 * stack or registers, passed on unused (hence no address sanitizer on
 * these loads: the caller's frame's redzones). */
__attribute__((no_sanitize_address))
long syscall(long nr, ...)
{
	va_list ap;
	va_start(ap, nr);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	syscall_fn next = atomic_load_explicit(&next_syscall,
					       memory_order_acquire);
	if (__builtin_expect(!next, 0)) {
		next = (syscall_fn)preload_next("syscall");
		if (!next) {
			errno = ENOSYS;
			return -1;
		}
		atomic_store_explicit(&next_syscall, next,
				      memory_order_release);
	}
	int followed = nr == SYS_close || nr == SYS_close_range ||
#ifdef SYS_dup2
		       nr == SYS_dup2 ||
#endif
		       nr == SYS_dup3;
	if (__builtin_expect(!followed, 1) || preload_inside() || !loaded() ||
	    ag_cfg.mode == AG_OFF)
		return next(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	switch (nr) {
	case SYS_close:
		return close((int)a[0]);
	case SYS_close_range:
		return close_range((unsigned int)a[0], (unsigned int)a[1],
				   (int)a[2]);
#ifdef SYS_dup2
	case SYS_dup2:
		return dup2((int)a[0], (int)a[1]);
#endif
	default:                         /* SYS_dup3 */
		return dup3((int)a[0], (int)a[1], (int)a[2]);
	}
}

/* ---- io_uring submission ---- */

/*
 * The arguments of any submit or wait variant (struct preload_submit),
 * and the variant itself: a call of its next definition (liburing's, or
 * the simulator's).  The variants every preload module interposes are
 * the preload core's (preload/uring_wrappers.inc), which calls
 * preload_uring_client_submit below; the others are the guard's own.
 */
typedef preload_submit_call submit_variant;

/* The counts of a submit made first and of the variant after it. */
static int then(int submitted, int rest)
{
	if (rest < 0)
		return submitted > 0 ? submitted : rest;
	return submitted + rest;
}

/* Whether wait_nr completions are there already (a device command the
 * driver completed inline, during the submit), so that the wait needs no
 * second system call; overflowed ones need the kernel to flush them. */
static int completed(struct io_uring *ring, unsigned int wait_nr)
{
	return io_uring_cq_ready(ring) >= wait_nr &&
	       !io_uring_cq_has_overflow(ring);
}

/* How the core runs a variant when the check holds a schedule. */
enum submit_shape {
	/* the variant as it is, holding the schedule until it returns */
	SUBMIT_HELD,
	/* a plain submit first, the hold released, then the variant (its
	 * wait, and what it submits besides); the counts add up (then()),
	 * and a wait the first submit satisfied is not made (completed()) */
	SUBMIT_FIRST_ADD,
	/* the same, the variant's own result returned */
	SUBMIT_FIRST,
};

/*
 * The one core of the submit wrappers, as liburing's __io_uring_submit
 * serves its variants: checks the pending SQEs (ag_uring_check) and runs
 * the variant.  When a checked submit holds a schedule and the variant
 * waits, the submit is done first on its own and the hold released
 * before the wait, so that no other thread's append waits for this
 * one's completions; the kernel sees the same SQEs in the same order.
 */
static int submit_core(const struct preload_submit *a, submit_variant variant,
		       enum submit_shape shape)
{
	struct ag_held *held = ag_uring_check(a->ring);
	if (!held || shape == SUBMIT_HELD || !next_io_uring_submit) {
		int rc = variant(a);
		ag_uring_release(a->ring, held);
		return rc;
	}
	int rc = next_io_uring_submit(a->ring);
	ag_uring_release(a->ring, held);
	if (rc < 0 || (shape == SUBMIT_FIRST_ADD && a->wait_nr &&
		       completed(a->ring, a->wait_nr)))
		return rc;
	int rest = variant(a);
	return shape == SUBMIT_FIRST_ADD ? then(rc, rest) : rest;
}

/* A variant through the core (the re-entry flag counted), or (guard off) as it
 * is; in a signal handler that interrupted the guard, refused when it
 * would hand the kernel a device command (URING_CMD), which could not be
 * checked without the locks its thread may hold. */
static int submit(const struct preload_submit *a, submit_variant variant,
		  enum submit_shape shape)
{
	if (off())
		return variant(a);
	if (reentered())
		return ag_uring_pending_cmd(a->ring)
			? ag_report_reentered("an io_uring submit of a device "
					      "command", a->ring->ring_fd)
			: variant(a);
	preload_enter();
	int rc = submit_core(a, variant, shape);
	preload_leave();
	return rc;
}

/* The preload core's submit variants (preload/uring_wrappers.inc): how the core
 * runs each when the check holds a schedule. */
static int preload_uring_client_submit(const struct preload_submit *a,
				       preload_submit_call call,
				       enum preload_submit_fn fn)
{
	enum submit_shape shape = SUBMIT_HELD;
	switch (fn) {
	case PRELOAD_SUBMIT:
	case PRELOAD_WAIT_CQES:          /* a wait that submits: the kernel */
	case PRELOAD_WAIT_CQE_TIMEOUT:   /* gets both in one call */
		shape = SUBMIT_HELD;
		break;
	case PRELOAD_SUBMIT_AND_WAIT:
		shape = a->wait_nr ? SUBMIT_FIRST_ADD : SUBMIT_HELD;
		break;
	case PRELOAD_SUBMIT_AND_WAIT_TIMEOUT:
	case PRELOAD_SUBMIT_AND_WAIT_MIN_TIMEOUT:
	case PRELOAD_SUBMIT_AND_WAIT_REG:
		shape = SUBMIT_FIRST;
		break;
	case PRELOAD_SUBMIT_AND_GET_EVENTS:
		shape = SUBMIT_FIRST_ADD;
		break;
	}
	return submit(a, call, shape);
}

/* SQEs handed to the kernel by io_uring_enter from a signal handler that
 * interrupted the guard: the ring's SQEs cannot be read without its
 * locks, so the call is refused whatever they are (-errno, as
 * liburing's io_uring_enter returns). */
static int enter_reentered(unsigned int fd)
{
	return ag_report_reentered("an io_uring_enter that submits", (int)fd);
}

/* One raw io_uring_enter: enter or enter2 (sz) with the application's
 * arguments but for to_submit, min_complete and flags. */
struct enter_call {
	unsigned int fd;
	sigset_t *sig;
	size_t sz;
	int two;                /* io_uring_enter2 */
};

static int enter_next(const struct enter_call *c, unsigned int to_submit,
		      unsigned int min_complete, unsigned int flags)
{
	if (c->two)
		return next_io_uring_enter2(c->fd, to_submit, min_complete,
					    flags, c->sig, c->sz);
	return next_io_uring_enter(c->fd, to_submit, min_complete, flags,
				   c->sig);
}

/*
 * A raw io_uring_enter that submits, its SQEs checked (held: what the
 * walk keeps until the kernel has them).  One that also waits for
 * completions (IORING_ENTER_GETEVENTS, min_complete > 0) while the walk
 * holds something is made as two calls, a submit and then a wait, the
 * walk's holds let go in between: otherwise its count among the readers
 * of the ring's slots would last for the whole wait, and a registration
 * of the ring's files would wait for it (ring_reg.c).  The result is the
 * kernel's for the one call: the submit's error or short count as it is
 * (the kernel does not wait then), else the count submitted (the wait's
 * result is dropped, as the kernel drops it when it submitted any).
 * The submit keeps every other flag (SQPOLL's SQ_WAKEUP and SQ_WAIT, a
 * registered ring index, EXT_ARG, whose argument the kernel reads only
 * to wait); the wait keeps all but SQ_WAKEUP and SQ_WAIT, done already.
 */
static int enter_checked(const struct enter_call *c, struct ag_held *held,
			 unsigned int to_submit, unsigned int min_complete,
			 unsigned int flags)
{
	if (!held || !min_complete || !(flags & IORING_ENTER_GETEVENTS)) {
		int rc = enter_next(c, to_submit, min_complete, flags);
		ag_uring_release(NULL, held);
		return rc;
	}
	int rc = enter_next(c, to_submit, 0, flags & ~IORING_ENTER_GETEVENTS);
	ag_uring_release(NULL, held);
	if (rc < 0 || (unsigned int)rc != to_submit)
		return rc;
	(void)enter_next(c, 0, min_complete,
			 flags & ~(IORING_ENTER_SQ_WAKEUP | IORING_ENTER_SQ_WAIT));
	return rc;
}

int io_uring_enter(unsigned int fd, unsigned int to_submit,
		   unsigned int min_complete, unsigned int flags, sigset_t *sig)
{
	NEED_URING(io_uring_enter, -ENOSYS);
	if (off())
		return next_io_uring_enter(fd, to_submit, min_complete, flags,
					   sig);
	if (reentered())
		return to_submit ? enter_reentered(fd)
				 : next_io_uring_enter(fd, 0, min_complete,
						       flags, sig);
	preload_enter();
	struct ag_held *held = ag_uring_enter_check(
		(int)fd, to_submit, flags & IORING_ENTER_REGISTERED_RING);
	struct enter_call c = { fd, sig, 0, 0 };
	int rc = enter_checked(&c, held, to_submit, min_complete, flags);
	preload_leave();
	return rc;
}

int io_uring_enter2(unsigned int fd, unsigned int to_submit,
		    unsigned int min_complete, unsigned int flags,
		    sigset_t *sig, size_t sz)
{
	NEED_URING(io_uring_enter2, -ENOSYS);
	if (off())
		return next_io_uring_enter2(fd, to_submit, min_complete, flags,
					    sig, sz);
	if (reentered())
		return to_submit ? enter_reentered(fd)
				 : next_io_uring_enter2(fd, 0, min_complete,
							flags, sig, sz);
	preload_enter();
	struct ag_held *held = ag_uring_enter_check(
		(int)fd, to_submit, flags & IORING_ENTER_REGISTERED_RING);
	struct enter_call c = { fd, sig, sz, 1 };
	int rc = enter_checked(&c, held, to_submit, min_complete, flags);
	preload_leave();
	return rc;
}

/* A ring's fd registered (liburing 2.2): the index it gets, which
 * io_uring_enter(IORING_ENTER_REGISTERED_RING) names, is the calling
 * thread's.  Not followed from a handler that interrupted the guard (the
 * ring list's lock may be held): that ring's raw enters are then said
 * not to be checked. */
int io_uring_register_ring_fd(struct io_uring *ring)
{
	NEED_URING(io_uring_register_ring_fd, -ENOSYS);
	int rc = next_io_uring_register_ring_fd(ring);
	if (rc == 1 && !off() && !reentered()) {
		preload_enter();
		ag_ring_index_registered(ring);
		preload_leave();
	}
	return rc;
}

/* ---- registered files ---- */

/* What the guard must follow (a registration of files, a ring's resize)
 * asked for by a signal handler that interrupted the guard:
 * following it takes locks its thread may hold, and not following it
 * would leave the guard's picture of the ring wrong, so it is refused
 * (-EDEADLK, as liburing's functions return errors). */
static int locked_out(const char *what, int fd)
{
	return ag_report_reentered(what, fd);
}

/* A ring's files unregistered: no slot left. */
static void files_gone(struct io_uring *ring)
{
	ag_ring_files_set(ring, NULL, 0);
}

/* The preload core's registrations of files (preload/uring_wrappers.inc): a
 * registration under way is marked, so that a walk meanwhile finds its
 * slots uncertain, and its outcome followed. */
static int preload_uring_client_files(const struct preload_files *f,
				      preload_files_call call)
{
	if (off())
		return call(f);
	if (reentered())
		return locked_out("an io_uring registration",
				  f->ring->ring_fd);
	struct ag_reg g;
	if (preload_files_whole(f))
		ag_ring_reg_begin(&g, f->ring, 0, AG_REG_ALL);
	else
		ag_ring_reg_begin(&g, f->ring, f->off, f->nr);
	int rc = g.refused ? g.refused : call(f);
	PRELOAD_FILES_FOLLOW(f, rc, ag_ring_files_set, ag_ring_files_update,
			     files_gone);
	ag_ring_reg_end(&g);
	return rc;
}

int io_uring_register(unsigned int fd, unsigned int opcode, const void *arg,
		      unsigned int nr_args)
{
	NEED_URING(io_uring_register, -ENOSYS);
	if (off())
		return next_io_uring_register(fd, opcode, arg, nr_args);
	if (reentered() && !ag_ring_register_follows(opcode))
		return next_io_uring_register(fd, opcode, arg, nr_args);
	if (reentered())
		return locked_out("an io_uring registration", (int)fd);
	struct ag_reg g;
	arg = ag_ring_register_begin(&g, fd, opcode, arg, nr_args);
	int rc = g.refused ? g.refused
			   : next_io_uring_register(fd, opcode, arg, nr_args);
	ag_ring_register(fd, opcode, arg, nr_args, rc);
	ag_ring_reg_end(&g);
	return rc;
}

int io_uring_resize_rings(struct io_uring *ring, struct io_uring_params *p)
{
	NEED_URING(io_uring_resize_rings, -ENOSYS);
	if (!off() && reentered())
		return locked_out("an io_uring ring resize", ring->ring_fd);
	const void *old = preload_ring_id(ring);
	preload_enter();
	int rc = next_io_uring_resize_rings(ring, p);
	if (rc == 0 && !off())
		ag_ring_moved(old, ring);
	preload_leave();
	return rc;
}

/* ---- ring set-up: every ring liburing makes is known at once ---- */

/* A ring mapped by `call` (mapped(rc): whether its result says so),
 * made known at once; from a handler that interrupted the guard, or
 * (guard off) untracked: see the exit below. */
static int ring_mapped(const struct preload_ring *r, preload_ring_call call,
		       int (*mapped)(int rc))
{
	if (off() || reentered())
		return call(r);
	preload_enter();
	ag_ring_life_begin();
	int rc = call(r);
	ag_ring_life_end(mapped(rc) ? r->ring : NULL);
	preload_leave();
	return rc;
}

/* io_uring_queue_exit.  From a handler that interrupted the guard (or
 * liburing's own calls within a set-up): set up or unmapped untracked
 * (the ring list's lock may be held); a ring set up so is made known at
 * its first checked submit, one unmapped so keeps its state
 * (docs/guard.md, "Async-signal safety"). */
static int ring_exit(const struct preload_ring *r, preload_ring_call call)
{
	if (off() || reentered())
		return call(r);
	preload_enter();
	ag_ring_life_begin();
	ag_ring_forget(r->ring);
	call(r);
	ag_ring_life_end(NULL);
	preload_leave();
	return 0;
}

static int zero_mapped(int rc)
{
	return rc == 0;
}

/* The preload core's set-ups and exit (preload/uring_wrappers.inc). */
static int preload_uring_client_ring(const struct preload_ring *r,
				     preload_ring_call call)
{
	if (r->fn == PRELOAD_RING_EXIT)
		return ring_exit(r, call);
	return ring_mapped(r, call, zero_mapped);
}

/* liburing 2.5's io_uring_queue_init_mem, the guard's own: its result
 * is the memory it used, when not -errno. */
struct init_mem {
	struct preload_ring r;
	void *buf;
	size_t buf_size;
};

static int call_queue_init_mem(const struct preload_ring *r)
{
	const struct init_mem *m = (const struct init_mem *)r;
	return next_io_uring_queue_init_mem(r->entries, r->ring, r->p, m->buf,
					    m->buf_size);
}

static int nonnegative_mapped(int rc)
{
	return rc >= 0;
}

int io_uring_queue_init_mem(unsigned int entries, struct io_uring *ring,
			    struct io_uring_params *p, void *buf,
			    size_t buf_size)
{
	NEED_URING(io_uring_queue_init_mem, -ENOSYS);
	struct init_mem m = { .r = { .ring = ring, .entries = entries,
				     .p = p, .fn = PRELOAD_RING_INIT_PARAMS },
			      .buf = buf, .buf_size = buf_size };
	return ring_mapped(&m.r, call_queue_init_mem, nonnegative_mapped);
}

/* ---- exec ---- */

/*
 * Each asks exec.c whether the program will load the guard (told to the
 * launcher when not; nothing is done when the guard is not under the
 * launcher or is off), then calls the next definition with the
 * caller's arguments, unchanged; when the call returns having run
 * nothing, the launcher is told that too.  They may run in a vfork
 * child: exec.c takes no lock and allocates nothing, and neither do
 * these (the execl variants build argv on the stack, as glibc's do).
 */

/* The next definition of fn, resolved; ENOSYS when there is none. */
#define NEED_EXEC(fn, fail)                                      \
	do {                                                     \
		if (!next_##fn)                                  \
			init();                                  \
		if (!next_##fn) {                                \
			errno = ENOSYS;                          \
			return fail;                             \
		}                                                \
	} while (0)

/* After the next definition returned having run no program: the
 * launcher forgets the "unguarded" line told before it (errno kept). */
static void exec_failed(const char *why)
{
	if (!why)
		return;
	int saved = errno;
	ag_report_exec_failed();
	errno = saved;
}

int execve(const char *path, char *const argv[], char *const envp[])
{
	NEED_EXEC(execve, -1);
	const char *why = ag_exec_check_at(AT_FDCWD, path, 0, envp);
	int rc = next_execve(path, argv, envp);
	exec_failed(why);
	return rc;
}

int execv(const char *path, char *const argv[])
{
	NEED_EXEC(execv, -1);
	const char *why = ag_exec_check_at(AT_FDCWD, path, 0, environ);
	int rc = next_execv(path, argv);
	exec_failed(why);
	return rc;
}

int execvp(const char *file, char *const argv[])
{
	NEED_EXEC(execvp, -1);
	const char *why = ag_exec_check_search(file, environ);
	int rc = next_execvp(file, argv);
	exec_failed(why);
	return rc;
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	NEED_EXEC(execvpe, -1);
	const char *why = ag_exec_check_search(file, envp);
	int rc = next_execvpe(file, argv, envp);
	exec_failed(why);
	return rc;
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
	NEED_EXEC(fexecve, -1);
	const char *why = ag_exec_check_at(fd, "", AT_EMPTY_PATH, envp);
	int rc = next_fexecve(fd, argv, envp);
	exec_failed(why);
	return rc;
}

int execveat(int dirfd, const char *path, char *const argv[],
	     char *const envp[], int flags)
{
	NEED_EXEC(execveat, -1);
	const char *why = ag_exec_check_at(dirfd, path, flags, envp);
	int rc = next_execveat(dirfd, path, argv, envp, flags);
	exec_failed(why);
	return rc;
}

/* Whether an execl variant's arg0 is not NULL: glibc declares it
 * nonnull, but a caller that passes NULL (execl(path, NULL)) must
 * still be served as glibc serves it, so the compiler may not fold
 * the test away. */
static int given(const char *arg)
{
	__asm__("" : "+r"(arg));
	return arg != NULL;
}

/* The argument list of an execl variant, after arg0 and up to its
 * NULL, as an argv on the caller's stack (a VLA, as glibc's execl
 * builds it: no allocation in a vfork child); with_env: the envp after
 * the NULL (execle's) into envp.  A macro, since the array must live
 * in the wrapper's frame. */
#define EXECL_ARGV(argv, arg, with_env, envp)                         \
	va_list ap;                                                   \
	va_start(ap, arg);                                            \
	size_t n_ = given(arg) ? count_args(ap) : 0;                  \
	va_end(ap);                                                   \
	char *argv[n_ + 1];                                           \
	va_start(ap, arg);                                            \
	argv[0] = (char *)(arg);                                      \
	for (size_t i_ = 1; i_ < n_; i_++)                            \
		argv[i_] = va_arg(ap, char *);                        \
	if (n_)                                                       \
		(void)va_arg(ap, char *);       /* the NULL */        \
	argv[n_] = NULL;                                              \
	if (with_env)                                                 \
		*(envp) = va_arg(ap, char *const *);                  \
	va_end(ap)

/* How many arguments an execl variant has, arg0 and its NULL excluded
 * plus arg0: 1 + the count up to the NULL. */
static size_t count_args(va_list ap)
{
	size_t n = 1;
	while (va_arg(ap, char *))
		n++;
	return n;
}

int execl(const char *path, const char *arg, ...)
{
	char *const *unused = NULL;
	EXECL_ARGV(argv, arg, 0, &unused);
	NEED_EXEC(execve, -1);
	const char *why = ag_exec_check_at(AT_FDCWD, path, 0, environ);
	int rc = next_execve(path, argv, environ);
	exec_failed(why);
	return rc;
}

int execlp(const char *file, const char *arg, ...)
{
	char *const *unused = NULL;
	EXECL_ARGV(argv, arg, 0, &unused);
	NEED_EXEC(execvp, -1);
	const char *why = ag_exec_check_search(file, environ);
	int rc = next_execvp(file, argv);
	exec_failed(why);
	return rc;
}

int execle(const char *path, const char *arg, ...)
{
	char *const *envp = NULL;
	EXECL_ARGV(argv, arg, 1, &envp);
	NEED_EXEC(execve, -1);
	const char *why = ag_exec_check_at(AT_FDCWD, path, 0, envp);
	int rc = next_execve(path, argv, envp);
	exec_failed(why);
	return rc;
}

int posix_spawn(pid_t *pid, const char *path,
		const posix_spawn_file_actions_t *actions,
		const posix_spawnattr_t *attr, char *const argv[],
		char *const envp[])
{
	NEED_EXEC(posix_spawn, ENOSYS);
	const char *why = ag_exec_check_at(AT_FDCWD, path, 0, envp);
	int rc = next_posix_spawn(pid, path, actions, attr, argv, envp);
	if (rc)
		exec_failed(why);
	return rc;
}

int posix_spawnp(pid_t *pid, const char *file,
		 const posix_spawn_file_actions_t *actions,
		 const posix_spawnattr_t *attr, char *const argv[],
		 char *const envp[])
{
	NEED_EXEC(posix_spawnp, ENOSYS);
	const char *why = ag_exec_check_search(file, envp);
	int rc = next_posix_spawnp(pid, file, actions, attr, argv, envp);
	if (rc)
		exec_failed(why);
	return rc;
}

/* system and popen run /bin/sh -c with environ (glibc's, through its
 * internal posix_spawn): the shell is what is checked; what it runs is
 * the shell's own exec, checked there when the shell is guarded. */
int system(const char *command)
{
	NEED_EXEC(system, -1);
	const char *why = command
		? ag_exec_check_at(AT_FDCWD, "/bin/sh", 0, environ) : NULL;
	int rc = next_system(command);
	if (rc == -1)
		exec_failed(why);
	return rc;
}

FILE *popen(const char *command, const char *type)
{
	NEED_EXEC(popen, NULL);
	const char *why = ag_exec_check_at(AT_FDCWD, "/bin/sh", 0, environ);
	FILE *f = next_popen(command, type);
	if (!f)
		exec_failed(why);
	return f;
}
