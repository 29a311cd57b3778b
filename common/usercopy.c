/* SPDX-License-Identifier: MIT */
/*
 * Copies from and to application memory that cannot fault, in one of two
 * ways, cheapest first:
 *
 *  - The calling thread's live stack, from this function's frame up to
 *    the top of the thread's stack, is mapped and writable for as long as
 *    the callers' frames exist, which outlasts this call: a plain copy.
 *    That is where an application's arguments usually are (a struct on
 *    the stack, handed to ioctl), so most copies cost a few loads instead
 *    of a system call.  Only an application that unmaps or protects its
 *    own live stack frames from another thread could break this, and it
 *    would crash on its own return anyway.
 *
 *  - Elsewhere, up to a page, where the CPU has hardware transactions
 *    (x86 RTM): a plain copy inside one.  A fault inside a transaction
 *    (a page unmapped, protected or not yet present, also one another
 *    thread unmaps meanwhile) aborts it instead of raising a signal, and
 *    undoes every store it made; a committed one read (or wrote) every
 *    byte while the pages allowed it.  An abort sends the copy on to the
 *    next way, which gives the answer (EFAULT or the bytes).  A heap
 *    argument costs no system call.
 *
 *  - Anything else: process_vm_readv/writev on ourselves.  The kernel
 *    checks every page and reports EFAULT for unmapped or protected ones,
 *    so no signal handler (which would not be thread- or library-safe)
 *    is needed.  Their EFAULT is checked by the pipe below, whose
 *    write() and read() are the driver's own copy_from_user and
 *    copy_to_user: process_vm_* refuse some pages those reach (see
 *    copy_user).  An address above the user address space is refused
 *    first, as the kernel's access_ok does (beyond_user).
 *
 *  - Where those calls are denied (a seccomp profile that refuses system
 *    calls the application never makes, with EPERM, ENOSYS or another
 *    errno): the range goes through a pipe made for that one copy.  The
 *    kernel's write() from, and read() into, the application's range
 *    are a driver's copy_from_user and copy_to_user: they check every
 *    page (EFAULT, no signal), honour its protections as the page
 *    tables do (unlike /proc/self/mem, which reads PROT_NONE pages and
 *    writes read-only ones), and need no /proc.  Which way works is
 *    learnt once per process, per direction (see vm_denied); a filter
 *    that would kill the caller instead is tried in a child process
 *    first (see vm_tried).
 *
 *  - The pipe is made and used by a task of our own that shares our
 *    memory but not our descriptor table (clone(CLONE_VM | CLONE_VFORK)
 *    without CLONE_FILES, see copy_in_task): its descriptors are never
 *    the application's numbers, which another thread may dup2() onto,
 *    close or fork with meanwhile, and a filter that kills pipe2 kills
 *    only that task (the copy gets EFAULT).  Where no such task can be
 *    made (clone refused, RLIMIT_NPROC; other architectures than
 *    x86-64), or where it would be a new pid namespace's init
 *    (child_may_start_pidns), the pipe is made in our own table as
 *    a last resort (copy_by_own_pipe), where that race remains.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "usercopy.h"

/* Only preloaded libraries use this: static TLS, which never allocates. */
#define TLS __thread __attribute__((tls_model("initial-exec")))

/* Beyond a page, one system call costs less than the byte loop below. */
#define PLAIN_MAX 4096

/* ---- the task that names our memory ---- */

/*
 * process_vm_readv/writev are given the calling thread's id, not
 * getpid(): any thread of ours names our memory, and the thread group's
 * leader may have exited (pthread_exit in main), after which getpid()
 * names a task without memory (ESRCH).
 *
 * Reads use an id cached per thread, and prove it on every call: the
 * same system call first reads this process's tag, kept in a page the
 * kernel zeroes in every child process (MADV_WIPEONFORK), and a task
 * whose memory does not hold our tag there is not us.  A stale id
 * (a child made by fork() or by a raw clone() that runs no atfork
 * handler, a vfork child's id left in the TLS it shares with its parent,
 * an exited thread) costs one failed call and a fresh gettid().  A
 * process's tag is the monotonic clock when it first needs one: a
 * child's is later than that of any process whose thread ids its
 * memory holds.  A write proves nothing before it has happened, so
 * writes ask gettid() every time, as reads do without MADV_WIPEONFORK
 * (Linux before 4.14).
 */
static _Atomic uint64_t *process_tag;
static pthread_once_t tag_once = PTHREAD_ONCE_INIT;
static TLS pid_t cached_tid;

static void map_tag_page(void)
{
	size_t size = (size_t)sysconf(_SC_PAGESIZE);
	void *page = mmap(NULL, size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return;
	if (madvise(page, size, MADV_WIPEONFORK) != 0) {
		munmap(page, size);
		return;
	}
	process_tag = page;
}

/* This process's tag, or 0 when there is none. */
static uint64_t this_process(void)
{
	pthread_once(&tag_once, map_tag_page);
	if (!process_tag)
		return 0;
	uint64_t tag = atomic_load_explicit(process_tag, memory_order_relaxed);
	if (tag)
		return tag;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t fresh = ((uint64_t)ts.tv_sec * 1000000000u +
			  (uint64_t)ts.tv_nsec) | 1;
	/* Another thread may set it first: its tag is as good. */
	return atomic_compare_exchange_strong(process_tag, &tag, fresh)
	       ? fresh : tag;
}

/* The bytes moved, or -errno.  errno is left as the caller had it: the
 * sanitizers and the guard call this inside the application's calls. */
static ssize_t vm_call(pid_t tid, struct iovec *l, struct iovec *r,
		       unsigned long n, int write)
{
	int saved = errno;
	ssize_t got;
	do
		got = write ? process_vm_writev(tid, l, n, r, n, 0)
			    : process_vm_readv(tid, l, n, r, n, 0);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		got = -errno;
	errno = saved;
	return got;
}

/* As the calling thread, asked afresh: writes, and reads without a tag. */
static ssize_t copy_as_self(void *local, uint64_t remote, size_t len,
			    int write)
{
	struct iovec l = { local, len };
	struct iovec r = { (void *)(uintptr_t)remote, len };
	return vm_call(gettid(), &l, &r, 1, write);
}

/* [remote, remote + len) read as task `tid`, our tag first: the bytes
 * read (fewer than len up to a bad page), or -errno (-ESRCH too when
 * tid is not us). */
static ssize_t read_as(pid_t tid, uint64_t tag, void *local,
		       uint64_t remote, size_t len)
{
	uint64_t seen = 0;
	struct iovec l[2] = { { &seen, sizeof(seen) }, { local, len } };
	struct iovec r[2] = { { (void *)process_tag, sizeof(seen) },
			      { (void *)(uintptr_t)remote, len } };
	ssize_t got = vm_call(tid, l, r, 2, 0);
	if (got < 0)
		return got;
	if (got < (ssize_t)sizeof(seen) || seen != tag)
		return -ESRCH;
	return got - (ssize_t)sizeof(seen);
}

/* The bytes read, or -errno.  A failure with the cached id proves
 * nothing (another process's task answers EPERM or ESRCH): only the
 * answer for gettid(), which is us, is returned. */
static ssize_t read_some(void *local, uint64_t remote, size_t len)
{
	uint64_t tag = this_process();
	if (!tag)
		return copy_as_self(local, remote, len, 0);
	ssize_t got = cached_tid ? read_as(cached_tid, tag, local, remote,
					   len)
				 : -ESRCH;
	if (got < 0) {
		cached_tid = gettid();
		got = read_as(cached_tid, tag, local, remote, len);
	}
	return got;
}

/* ---- the calling thread's live stack ---- */

static TLS uintptr_t stack_low, stack_high;   /* high 0: not looked up */

/* The thread's stack, once per thread; [0, 1) while looking (a signal
 * or an interposed call inside pthread_getattr_np) and when unknown.
 * pthread_getattr_np allocates: a thread's first copy is not
 * async-signal-safe, the later ones are. */
static void find_stack(void)
{
	stack_high = 1;
	pthread_attr_t attr;
	void *low;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &low, &size) == 0) {
		stack_low = (uintptr_t)low;
		stack_high = (uintptr_t)low + size;
	}
	pthread_attr_destroy(&attr);
}

/* Whether [p, p + len) lies between this frame and the top of the
 * thread's stack.  A frame elsewhere (a coroutine's stack, a signal
 * stack, a posix_spawn child's) never qualifies. */
static int on_live_stack(uint64_t p, size_t len)
{
	if (!stack_high)
		find_stack();
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	return here >= stack_low && here < stack_high && p >= here &&
	       p <= stack_high && len <= stack_high - p && len <= PLAIN_MAX;
}

/* The application's threads may write these bytes meanwhile (the caller
 * copies once and uses only its copy): not a race for the sanitizers to
 * report, and volatile so that it never becomes a call of memcpy, which
 * they intercept. */
__attribute__((no_sanitize("address", "thread")))
static void copy_plain(void *dst, const void *src, size_t len)
{
	volatile unsigned char *d = dst;
	const volatile unsigned char *s = src;
	while (len--)
		*d++ = *s++;
}

/* ---- a hardware transaction (x86 RTM) ---- */

/*
 * Inside an RTM transaction a fault does not reach the kernel's signal
 * path: the transaction aborts, its stores are undone and _xbegin
 * returns an abort status (0 for a fault, no retry bit).  So a copy
 * that commits is exact (every byte read while readable, or written
 * while writable, as one atomic step), and one that aborts has changed
 * nothing: the system calls below then decide, and their answer is the
 * copy's, as before.  Nothing here can fault, signal, or be refused by a
 * seccomp filter (no system call); a debugger's breakpoint inside
 * aborts too.  Pages not yet present (never touched, swapped out,
 * copy-on-write after a fork, NUMA hinting) abort as well: the system
 * call's copy faults them in, and the next copy commits.
 *
 * Used where CPUID says RTM, unless it also says XBEGIN always aborts
 * (RTM_ALWAYS_ABORT); and a process whose transactions keep aborting on
 * bytes the system calls then copy (TX_MISSES in a row, no commit
 * between: microcode that forces aborts, a hypervisor that hides them)
 * stops trying.  Valgrind runs XBEGIN as an abort.
 */
#define TX_MAX PLAIN_MAX        /* beyond a page, one system call is cheaper */
#define TX_TRIES 3              /* for aborts the CPU says may pass */
#define TX_MISSES 64

static _Atomic int tx_state;    /* 0 not asked yet, 1 on, 2 off */
static _Atomic int tx_misses;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>

static int cpu_has_rtm(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return 0;
	return (b & 1u << 11) && !(d & 1u << 11);  /* RTM, RTM_ALWAYS_ABORT */
}

/* _XBEGIN_STARTED when the copy committed, else the abort status. */
__attribute__((target("rtm"), no_sanitize("address", "thread")))
static unsigned copy_in_transaction(void *dst, const void *src, size_t len)
{
	unsigned status = _xbegin();
	if (status == _XBEGIN_STARTED) {
		copy_plain(dst, src, len);
		_xend();
	}
	return status;
}

static int tx_copy(void *dst, const void *src, size_t len)
{
	for (int i = 0; i < TX_TRIES; i++) {
		unsigned status = copy_in_transaction(dst, src, len);
		if (status == _XBEGIN_STARTED)
			return 0;
		if (!(status & (_XABORT_RETRY | _XABORT_CONFLICT)))
			break;
	}
	return -1;
}
#else
static int cpu_has_rtm(void)
{
	return 0;
}

static int tx_copy(void *dst, const void *src, size_t len)
{
	(void)dst, (void)src, (void)len;
	return -1;
}
#endif

int usercopy_transactions(void)
{
	int state = atomic_load_explicit(&tx_state, memory_order_relaxed);
	if (state == 0) {
		state = cpu_has_rtm() ? 1 : 2;
		int none = 0;
		if (!atomic_compare_exchange_strong(&tx_state, &none, state))
			state = none;
	}
	return state == 1;
}

void usercopy_set_transactions(int on)
{
	atomic_store(&tx_state, on && cpu_has_rtm() ? 1 : 2);
	atomic_store(&tx_misses, 0);
}

/* Our own side of a copy, [p, p + len), made present first (written
 * back as it is when `write`): a page of ours not yet faulted in (a
 * sanitizer's fake stack frame, a fresh buffer) would abort every
 * transaction, and where the system calls are denied nothing else
 * would bring it in. */
static void touch_own(void *p, size_t len, int write)
{
	size_t page = 4096;
	volatile unsigned char *b = p;
	for (size_t at = 0; at < len; at += page - (uintptr_t)(b + at) % page) {
		unsigned char v = b[at];
		if (write)
			b[at] = v;
	}
}

/* 0 when [src, src + len) was copied to dst in a transaction; -1 when
 * the caller's system calls must decide (nothing was written).  `out`:
 * dst is the application's and src ours, else the reverse. */
static int copy_by_transaction(void *dst, const void *src, size_t len,
			       int out)
{
	if (len == 0 || len > TX_MAX || !usercopy_transactions())
		return -1;
	touch_own(out ? (void *)src : dst, len, !out);
	if (tx_copy(dst, src, len) != 0)
		return -1;
	if (atomic_load_explicit(&tx_misses, memory_order_relaxed))
		atomic_store_explicit(&tx_misses, 0, memory_order_relaxed);
	return 0;
}

/* After a copy the transaction left to the system calls: rc is theirs.
 * Bytes they copied that a transaction could not, TX_MISSES times in a
 * row, turn the transactions off for the process. */
static void transaction_missed(size_t len, int rc)
{
	if (rc != 0 || len == 0 || len > TX_MAX ||
	    atomic_load_explicit(&tx_state, memory_order_relaxed) != 1)
		return;
	if (atomic_fetch_add_explicit(&tx_misses, 1, memory_order_relaxed) + 1
	    >= TX_MISSES)
		atomic_store_explicit(&tx_state, 2, memory_order_relaxed);
}

/* ---- system calls that touch no errno ---- */

/* The call's value, or -errno; errno (in TLS) untouched on x86-64, so
 * that the pipe's task (pipe_task), which shares the calling thread's
 * TLS, may make them. */
__attribute__((always_inline, no_sanitize("address", "thread", "undefined")))
static inline long sys4(long n, long a, long b, long c, long d)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	long ret;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
#else
	long ret = syscall(n, a, b, c, d);
	return ret < 0 ? -errno : ret;
#endif
}

__attribute__((always_inline, no_sanitize("address", "thread", "undefined")))
static inline long sys3(long n, long a, long b, long c)
{
	return sys4(n, a, b, c, 0);
}

/* ---- a task of our own, and the pid namespace it would start ---- */

/*
 * After unshare(CLONE_NEWPID) (or setns(2) into a namespace that never
 * had a process), the calling thread's next child is the first process
 * of the new pid namespace: its init.  When an init exits the namespace
 * is over, and every later fork() of the application into it fails
 * with ENOMEM: a task of ours made there (the pipe's, or the filter's
 * try in a child) would take the application's init from it.  The
 * kernel says so through /proc/thread-self/ns/pid_for_children (the
 * calling thread's: namespaces are per thread), which names no
 * namespace (ENOENT) until one has its init.  1 when a child made now
 * would be that first process: the link names none while the thread's
 * own pid namespace's does.  Where /proc cannot say (not mounted, the
 * call denied) the task is made, as before this check: without it a
 * filter that kills pipe2 would kill the application.  Raw system
 * calls, no errno; x86-64 only, where such tasks are made.
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
static int child_may_start_pidns(void)
{
	struct stat st;
	return sys4(SYS_newfstatat, AT_FDCWD,
		    (long)"/proc/thread-self/ns/pid_for_children", (long)&st,
		    0) == -ENOENT &&
	       sys4(SYS_newfstatat, AT_FDCWD,
		    (long)"/proc/thread-self/ns/pid", (long)&st, 0) == 0;
}
#else
static int child_may_start_pidns(void)
{
	return 0;
}
#endif

/* ---- where process_vm_readv/writev are denied: a pipe ---- */

/*
 * Per direction (0 read, 1 write), the errno with which our own
 * process_vm_* call was refused (a seccomp filter's: on ourselves the
 * kernel answers only EFAULT, ENOMEM or EINTR), or 0 while it works.
 * It only ever goes from 0 to an errno, as filters are only ever added:
 * every thread, a forked child (which inherits the filter) and a vfork
 * child sharing this memory may all read and set it; exec starts afresh
 * with a new copy of this code.
 */
static _Atomic int vm_denied[2];

/* The lowest number the pipe's ends take: high, away from the numbers
 * the application uses and reuses (as the guard's own descriptors). */
static int pipe_fd_base(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < 8)
		return 3;
	return rl.rlim_cur / 2 < 1000 ? (int)(rl.rlim_cur / 2) : 1000;
}

/* close(2) itself: an interposed close (the guard's) must not see it.
 * The pipe is made and moved by system calls too (pipe2, fcntl): an
 * interposed fcntl (the simulator's tracks F_DUPFD copies, under its
 * lock, which its fork handler holds) must neither track the copy's
 * descriptors nor hold them unrecorded (usercopy_forked) while a fork
 * goes on. */
static void close_pipe_end(int fd)
{
	syscall(SYS_close, fd);
}

/*
 * The descriptors of copies in flight, so that a fork child, which
 * inherits them from threads it does not have, closes them
 * (usercopy_forked).  A slot per copy holds each number (plus 1) from
 * just after the call that made it returns until just before it is
 * closed, so a child never closes a number that was not the copy's when
 * it was forked; the gate below keeps forks out of the spans between.
 * With every slot taken (64 copies at once), a child may keep a pipe.
 */
#define INFLIGHT 64
struct inflight {
	_Atomic int used;
	_Atomic int fd[4];      /* the pipe's ends, then their moved copies */
};
static struct inflight inflight[INFLIGHT];

static struct inflight *inflight_claim(void)
{
	for (int i = 0; i < INFLIGHT; i++) {
		int none = 0;
		if (atomic_compare_exchange_strong(&inflight[i].used, &none, 1))
			return &inflight[i];
	}
	return NULL;
}

static void inflight_set(struct inflight *in, int i, int fd)
{
	if (in)
		atomic_store(&in->fd[i], fd + 1);
}

/* Forgets fd, then closes it. */
static void inflight_close(struct inflight *in, int fd)
{
	for (int i = 0; in && i < 4; i++) {
		int v = fd + 1;
		atomic_compare_exchange_strong(&in->fd[i], &v, 0);
	}
	close_pipe_end(fd);
}

/*
 * A descriptor exists before its number is recorded: pipe2 and fcntl
 * return after the kernel installed it, and a fork (which copies the
 * descriptor table before the memory, and write-protects the memory
 * meanwhile) can fall in between, and between a number's being
 * forgotten and its close.  So the pipe is made, moved and closed
 * through a gate that the fork handlers close (usercopy_fork_prepare):
 * a fork waits for the copies inside to have recorded their
 * descriptors, and copies wait at the gate while it is closed.  Both
 * waits are bounded (a signal handler that forks on a thread inside
 * the gate, or copies while its own thread forks, must not hang): past
 * the bound a child may keep that descriptor.
 */
static _Atomic int gate_inside, gate_closed;
#define GATE_SPINS 100000

static void gate_enter(void)
{
	for (int n = 0;; n++) {
		atomic_fetch_add(&gate_inside, 1);
		if (!atomic_load(&gate_closed) || n >= GATE_SPINS)
			return;
		atomic_fetch_sub(&gate_inside, 1);
		sched_yield();
	}
}

static void gate_leave(void)
{
	atomic_fetch_sub(&gate_inside, 1);
}

void usercopy_fork_prepare(void)
{
	atomic_store(&gate_closed, 1);
	for (int n = 0; atomic_load(&gate_inside) > 0 && n < GATE_SPINS; n++)
		sched_yield();
}

void usercopy_fork_parent(void)
{
	atomic_store(&gate_closed, 0);
}

void usercopy_forked(void)
{
	atomic_store(&gate_inside, 0);
	atomic_store(&gate_closed, 0);
	for (int i = 0; i < INFLIGHT; i++) {
		if (!atomic_load(&inflight[i].used))
			continue;
		for (int k = 0; k < 4; k++) {
			int v = atomic_exchange(&inflight[i].fd[k], 0);
			if (v)
				close_pipe_end(v - 1);
		}
		atomic_store(&inflight[i].used, 0);
	}
}

/* A pipe of ours for one copy, close-on-exec and non-blocking (a range
 * longer than it holds goes in parts, never waits), its ends moved high
 * when the descriptor limit allows.  0 or -errno. */
static int open_pipe_gated(int p[2], struct inflight *in)
{
	if (syscall(SYS_pipe2, p, O_CLOEXEC | O_NONBLOCK) != 0)
		return -errno;
	inflight_set(in, 0, p[0]);
	inflight_set(in, 1, p[1]);
	int base = pipe_fd_base();
	for (int i = 0; i < 2; i++) {
		int high = p[i] < base ? (int)syscall(SYS_fcntl, p[i],
						      F_DUPFD_CLOEXEC, base)
				       : -1;
		if (high >= 0) {
			inflight_set(in, 2 + i, high);
			inflight_close(in, p[i]);
			p[i] = high;
		}
	}
	return 0;
}

static int open_pipe(int p[2], struct inflight *in)
{
	gate_enter();
	int rc = open_pipe_gated(p, in);
	gate_leave();
	return rc;
}

/* `len` bytes from `from` to `to` through the pipe p (empty, non-
 * blocking): write() of the source into it, as much as it holds (a bad
 * page stops it there), read() of exactly those into the destination.
 * 0, -EFAULT at the first page that cannot be read (or written), or
 * another -errno of the pipe.  Raw system calls only, not instrumented:
 * the pipe's task (pipe_task) runs it. */
__attribute__((no_sanitize("address", "thread", "undefined")))
static int pipe_transfer(const int p[2], char *from, char *to, size_t len)
{
	/* A pipe holds a page at least; more is asked only when needed. */
	long cap = len > 4096 ? sys3(SYS_fcntl, p[0], F_GETPIPE_SZ, 0) : 4096;
	size_t chunk = cap > 0 ? (size_t)cap : 4096;
	while (len > 0) {
		size_t want = len < chunk ? len : chunk;
		long in;
		do
			in = sys3(SYS_write, p[1], (long)from, (long)want);
		while (in == -EINTR);
		if (in <= 0)
			return in == 0 ? -EFAULT : (int)in;
		for (size_t out = 0; out < (size_t)in;) {
			long got;
			do
				got = sys3(SYS_read, p[0], (long)(to + out),
					   (long)((size_t)in - out));
			while (got == -EINTR);
			if (got <= 0)
				return got == 0 ? -EFAULT : (int)got;
			out += (size_t)got;
		}
		from += in;
		to += in;
		len -= (size_t)in;
	}
	return 0;
}

/* [remote, remote + len) through a pipe of ours in the application's
 * descriptor table, where no task of our own can be made (see
 * copy_by_pipe): 0, -EFAULT at the first bad page, or the errno of a
 * pipe that cannot be made.  Its numbers are the application's too:
 * another thread's dup2() onto them meanwhile makes this write the
 * copied bytes into, and close, the application's file. */
static int copy_by_own_pipe(char *from, char *to, size_t len)
{
	int saved = errno;
	int p[2];
	struct inflight *slot = inflight_claim();
	int rc = open_pipe(p, slot);
	if (rc != 0) {
		if (slot)
			atomic_store(&slot->used, 0);
		errno = saved;
		return rc;
	}
	/* A write to a pipe without a reader raises SIGPIPE, which kills a
	 * process that never wrote to one: the read end is ours, but an
	 * application thread that closes or dup2()s onto its number takes
	 * it away.  SIGPIPE is blocked on this thread for the copy, and
	 * one that the copy raised is taken back. */
	sigset_t pipe_sig, old_mask, pending;
	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &pipe_sig, &old_mask,
		_NSIG / 8);
	sigemptyset(&pending);
	syscall(SYS_rt_sigpending, &pending, _NSIG / 8);
	int was_pending = sigismember(&pending, SIGPIPE);
	rc = pipe_transfer(p, from, to, len);
	if (rc == -EPIPE && !was_pending) {
		struct timespec zero = { 0, 0 };
		syscall(SYS_rt_sigtimedwait, &pipe_sig, NULL, &zero,
			_NSIG / 8);
	}
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old_mask, NULL, _NSIG / 8);
	gate_enter();
	inflight_close(slot, p[0]);
	inflight_close(slot, p[1]);
	gate_leave();
	if (slot)
		atomic_store(&slot->used, 0);
	errno = saved;
	return rc;
}

/* ---- the pipe in a task of our own ---- */

/*
 * The pipe is made, used and closed by a task of its own: a raw
 * clone(CLONE_VM | CLONE_VFORK), without CLONE_FILES, so it shares our
 * memory (its write() and read() are the driver's copy_from_user and
 * copy_to_user on the application's pages, with their protections) but
 * has its own copy of the descriptor table.  The pipe never appears in
 * the application's table: no thread of the application can close it,
 * dup2() onto its numbers or see it in a fork, and nothing of the
 * application's is ever closed or written here.  The calling thread
 * waits (CLONE_VFORK) until the task has exited, and reaps it (no exit
 * signal: __WALL; the application's SIGCHLD handler and wait calls
 * never see it).
 *
 * The task runs on a stack in the caller's frame (CHILD_STACK bytes,
 * the calling thread is stopped meanwhile), with every signal blocked
 * (it inherits the mask the caller set around clone; SIGSYS from a
 * filter's SECCOMP_RET_TRAP then ends it), and its own copy of the
 * signal handlers.  It shares the calling thread's TLS, so it makes raw
 * system calls only (sys3, no errno) and is not instrumented by the
 * sanitizers (whose per-thread state it would otherwise use as the
 * stopped thread's).  It first sets its own RLIMIT_CORE to 0 (rlimits
 * are per process): a filter that kills its pipe2 must not dump our
 * memory into a core file.  Its answer is a struct pipe_job in our
 * memory, `done` last: a task that died before (a filter's
 * SECCOMP_RET_KILL_PROCESS kills only it, not the application) is an
 * EFAULT for that copy, and a death by SIGSYS (a filter) is remembered
 * (child_way): later copies that need the pipe get EFAULT at once.
 *
 * x86-64 only (its clone and system calls are written here); elsewhere,
 * where clone is refused (a filter's errno: remembered) and where it
 * fails for want of processes (RLIMIT_NPROC, EAGAIN) or memory, the
 * copy takes the pipe in our own table as before (copy_by_own_pipe).
 * A copy costs a task's creation and exit (measured in
 * docs/performance.md), and the descriptor table's copy grows with the
 * number of descriptors the application holds.
 */
#define CHILD_STACK 2048
#define CHILD_KILLED (-1)

/* 0 while tasks are made; an errno of clone's refusal (the own pipe
 * since); CHILD_KILLED once a task died of a filter's SIGSYS (EFAULT
 * since).  Set once, from 0. */
static _Atomic int child_way;

struct pipe_job {
	char *from, *to;
	size_t len;
	volatile int rc;
	volatile int done;
};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_PIPE_TASK 1
/*
 * long usercopy_clone_vm(unsigned long flags, void *stack_top,
 *                        int (*fn)(void *), void *arg):
 * clone(flags, stack) with no tids and no TLS; the child calls fn(arg)
 * on the new stack and exits with its value, never returning here.
 * The child's pid, or -errno.  (libc's clone is interposed by TSan.)
 */
__asm__(".pushsection .text\n"
	".p2align 4\n"
	".hidden usercopy_clone_vm\n"
	".type usercopy_clone_vm, @function\n"
	"usercopy_clone_vm:\n"
	"	andq $-16, %rsi\n"
	"	subq $16, %rsi\n"
	"	movq %rdx, 0(%rsi)\n"
	"	movq %rcx, 8(%rsi)\n"
	"	movl $56, %eax\n"          /* SYS_clone */
	"	xorl %edx, %edx\n"
	"	xorl %r10d, %r10d\n"
	"	xorl %r8d, %r8d\n"
	"	syscall\n"
	"	testq %rax, %rax\n"
	"	jnz 1f\n"
	"	xorl %ebp, %ebp\n"
	"	popq %rax\n"
	"	popq %rdi\n"
	"	call *%rax\n"
	"	movl %eax, %edi\n"
	"	movl $60, %eax\n"          /* SYS_exit */
	"	syscall\n"
	"	hlt\n"
	"1:	ret\n"
	".size usercopy_clone_vm, .-usercopy_clone_vm\n"
	".popsection\n");
long usercopy_clone_vm(unsigned long flags, void *stack_top,
		       int (*fn)(void *), void *arg);

/* Runs in the task: see above.  Returns 0 (its exit status). */
__attribute__((noinline, no_sanitize("address", "thread", "undefined")))
static int pipe_task(void *arg)
{
	struct pipe_job *job = arg;
	struct rlimit none = { 0, 0 };
	sys4(SYS_prlimit64, 0, RLIMIT_CORE, (long)&none, 0);
	int p[2];
	int rc = (int)sys3(SYS_pipe2, (long)p, O_CLOEXEC | O_NONBLOCK, 0);
	if (rc == 0)
		rc = pipe_transfer(p, job->from, job->to, job->len);
	job->rc = rc;
	job->done = 1;
	return 0;
}

/* 1 when a task ran the copy (*rc its answer: 0, -EFAULT, or the errno
 * of its pipe2), 0 when none could be made (*rc the errno of clone). */
static int copy_in_task(struct pipe_job *job, int *rc)
{
	_Alignas(16) unsigned char stack[CHILD_STACK];
	int saved = errno;
	sigset_t all, old;
	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, _NSIG / 8);
	long pid = usercopy_clone_vm(CLONE_VM | CLONE_VFORK,
				     stack + sizeof(stack), pipe_task, job);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
	if (pid < 0) {
		*rc = (int)pid;
		errno = saved;
		return 0;
	}
	int st = 0;
	long w;
	do
		w = syscall(SYS_wait4, pid, &st, __WALL, NULL);
	while (w < 0 && errno == EINTR);
	errno = saved;
	if (job->done) {
		*rc = job->rc;
		return 1;
	}
	/* Died before its answer: a filter (SIGSYS) for good; anything
	 * else (a SIGKILL, or reaped by the application's __WALL wait, so
	 * unknown) for this copy. */
	int none = 0;
	if (w == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
		atomic_compare_exchange_strong(&child_way, &none,
					       CHILD_KILLED);
	*rc = -EFAULT;
	return 1;
}
#else
#define HAVE_PIPE_TASK 0
static int copy_in_task(struct pipe_job *job, int *rc)
{
	(void)job;
	*rc = -ENOSYS;
	return 0;
}
#endif

/* [remote, remote + len) through a pipe made for this copy: write() of
 * the source into it, read() into the destination.  0, -EFAULT at the
 * first page that cannot be read (or written), or the errno of a pipe
 * that cannot be made (denied too: the caller says so).
 * Async-signal-safe. */
static int copy_by_pipe(void *local, uint64_t remote, size_t len, int write)
{
	char *there = (char *)(uintptr_t)remote;
	struct pipe_job job = { write ? local : there, write ? there : local,
				len, 0, 0 };
	int way = atomic_load_explicit(&child_way, memory_order_relaxed);
	if (way == CHILD_KILLED)
		return -EFAULT;
	int rc;
	if (way == 0 && HAVE_PIPE_TASK && !child_may_start_pidns()) {
		if (copy_in_task(&job, &rc))
			return rc;
		int none = 0;
		if (rc != -EAGAIN && rc != -ENOMEM)
			atomic_compare_exchange_strong(&child_way, &none, -rc);
	}
	return copy_by_own_pipe(job.from, job.to, len);
}

/* ---- a filter that kills: tried in a child first ---- */

/*
 * A filter may answer a denied call by killing the process
 * (SECCOMP_RET_KILL_PROCESS or _THREAD: systemd's SystemCallFilter=
 * without SystemCallErrorNumber=, whose @system-service set leaves out
 * @debug, where process_vm_readv/writev are) or with SIGSYS
 * (SECCOMP_RET_TRAP), instead of an errno: the application never makes
 * these calls, so making them would end it.  While the calling thread
 * runs under a filter (PR_GET_SECCOMP says 2) and none has been tried,
 * both calls are tried once in a child process made for that, which
 * inherits the filter: a raw clone(2) (no atfork handler, no exit
 * signal, reaped with __WALL, so the application's SIGCHLD handler and
 * wait calls never see it) with every signal blocked, so that SIGSYS
 * ends it rather than running a handler.  A child that does not exit 0
 * (killed, or refused with an errno), or that cannot be made, sends the
 * copies to the pipe, as a refusal does.
 *
 * 0 no filter seen, 1 a thread is trying (the others use the pipe
 * meanwhile), 2 tried (vm_denied holds the answer).  Until a filter is
 * seen, every copy off the stack asks prctl (one system call, about
 * half the cost of the copy's own: a filter may come at any time, on
 * any thread, and only the calling thread's counts); a filter added
 * after the try is not tried.
 */
static _Atomic int vm_tried;

/* Which calls a child under our filters could not make: bit 0 the read,
 * bit 1 the write (both when it was killed or could not be made). */
static int vm_try_in_child(void)
{
	sigset_t all, old;
	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, _NSIG / 8);
	long pid = syscall(SYS_clone, 0L, 0L, 0L, 0L, 0L);
	if (pid == 0) {
		char a = 1, b = 0;
		struct iovec l = { &b, 1 }, r = { &a, 1 };
		long me = syscall(SYS_getpid);
		long rd = syscall(SYS_process_vm_readv, me, &l, 1L, &r, 1L, 0L);
		long wr = syscall(SYS_process_vm_writev, me, &l, 1L, &r, 1L,
				  0L);
		syscall(SYS_exit_group, (rd != 1) | (wr != 1) << 1);
	}
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
	if (pid < 0)
		return 3;
	int st = 0;
	long w;
	do
		w = syscall(SYS_wait4, pid, &st, __WALL, NULL);
	while (w < 0 && errno == EINTR);
	return w == pid && WIFEXITED(st) ? WEXITSTATUS(st) & 3 : 3;
}

/* Whether this thread may make process_vm_* calls now (0: the pipe). */
static int vm_callable(void)
{
	int state = atomic_load_explicit(&vm_tried, memory_order_acquire);
	if (state == 2)
		return 1;
	int saved = errno;
	long mode = syscall(SYS_prctl, PR_GET_SECCOMP, 0L, 0L, 0L, 0L);
	int callable = mode == 0 || (mode < 0 && errno == EINVAL);
	/* Not tried where the child would be a new pid namespace's init
	 * (child_may_start_pidns): this copy takes the pipe, a later one
	 * tries. */
	if (!callable && state == 0 && !child_may_start_pidns() &&
	    atomic_compare_exchange_strong(&vm_tried, &state, 1)) {
		int denied = vm_try_in_child();
		for (int i = 0; i < 2; i++) {
			int none = 0;
			if (denied & 1 << i)
				atomic_compare_exchange_strong(&vm_denied[i],
							       &none, EPERM);
		}
		atomic_store_explicit(&vm_tried, 2, memory_order_release);
		callable = 1;      /* vm_denied says which way */
	}
	errno = saved;
	return callable;
}

/* ---- copies ---- */

/* One direction: a short transfer means a bad page further on; retrying
 * from there either makes progress or fails on that page.  Where our
 * process_vm_* call is refused with anything but EFAULT, the rest goes
 * through a pipe; a refusal other than for want of memory is kept, and
 * later copies go there directly.  Under a filter not yet tried, the
 * calls are not made here (vm_callable).
 *
 * Their EFAULT is not the answer either: process_vm_* refuse pages the
 * driver's copy_from_user/copy_to_user (and a transaction's plain loads
 * and stores) reach, where the page tables allow what the mapping does
 * not say (PROT_WRITE or, without protection keys, PROT_EXEC alone on
 * x86, which reads them) and device mappings (VM_IO, VM_PFNMAP).  The
 * pipe's write() and read() are those very kernel copies, so the range
 * from the bad page on goes there: every way gives the driver's answer,
 * whether or not the CPU has transactions and the page was present. */
static int copy_user(void *local, uint64_t remote, size_t len, int write)
{
	int callable = len > 0 && vm_callable();
	while (callable && len > 0 &&
	       !atomic_load_explicit(&vm_denied[write], memory_order_relaxed)) {
		ssize_t n = write ? copy_as_self(local, remote, len, 1)
				  : read_some(local, remote, len);
		if (n == 0 || n == -EFAULT)
			break;
		if (n < 0) {
			if (n != -ENOMEM)
				atomic_store_explicit(&vm_denied[write],
						      (int)-n,
						      memory_order_relaxed);
			break;
		}
		local = (char *)local + n;
		remote += (uint64_t)n;
		len -= (size_t)n;
	}
	if (len == 0)
		return 0;
	int rc = copy_by_pipe(local, remote, len, write);
	return rc == 0 || rc == -EFAULT ? rc : -EFAULT;
}

/*
 * Whether [at, at + len) leaves the user address space, which the
 * kernel's access_ok refuses before any page is looked at.  On x86-64
 * every address with bit 63 set is the kernel's (LAM's pointer tags
 * never use it), the vsyscall page too, which vsyscall=emulate maps for
 * plain loads: a transaction would read it, the driver never does.
 * Elsewhere only a range that wraps (arm64's tags use the top bits).
 */
static int beyond_user(uint64_t at, size_t len)
{
	if (at + len < at)
		return 1;
#if defined(__x86_64__)
	return len > 0 && at + len > UINT64_C(1) << 63;
#else
	return 0;
#endif
}

int copy_from_user(void *dst, uint64_t src, size_t len)
{
	if (beyond_user(src, len))
		return -EFAULT;
	if (on_live_stack(src, len)) {
		copy_plain(dst, (const void *)(uintptr_t)src, len);
		return 0;
	}
	if (copy_by_transaction(dst, (const void *)(uintptr_t)src, len, 0) == 0)
		return 0;
	int rc = copy_user(dst, src, len, 0);
	transaction_missed(len, rc);
	return rc;
}

int copy_to_user(uint64_t dst, const void *src, size_t len)
{
	if (beyond_user(dst, len))
		return -EFAULT;
	if (on_live_stack(dst, len)) {
		copy_plain((void *)(uintptr_t)dst, src, len);
		return 0;
	}
	if (copy_by_transaction((void *)(uintptr_t)dst, src, len, 1) == 0)
		return 0;
	int rc = copy_user((void *)src, dst, len, 1);
	transaction_missed(len, rc);
	return rc;
}
