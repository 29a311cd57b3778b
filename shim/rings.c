/* SPDX-License-Identifier: MIT */
/*
 * The ring registry: a state (struct ring_state, ring.h) per io_uring
 * ring the guard knows, found by its SQ mapping (preload/ring_id.h:
 * sq.ring_ptr, unique while mapped) or by an fd that reaches it
 * (io_uring_enter, io_uring_register), forgotten when that fd is closed.
 * A state is never freed, only emptied and reused, so that a stale
 * pointer to one is harmless; the list is only added to, at the head,
 * and walked without the ring lock.  Rings set up where the guard did
 * not see it are reported (ag_uring_note_unseen_rings), and fork takes
 * every ring's locks (ag_uring_lock_all).
 *
 * Layering: devices.h, report.h, process.h <- ring.h <- slots.h <- this
 * <- holds.c, slot_change.c, ring_reg.c, the SQ walk (uring.c).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/kcmp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>

#include <liburing.h>

#include "process.h"
#include "report.h"
#include "ring.h"
#include "ring_id.h"
#include "rings.h"
#include "slots.h"
#include "uring.h"
#include "util.h"

/* Guards the making and reuse of states; the list is walked without it
 * (states are only added, at the head). */
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct ring_state *) rings;

/*
 * The ring this thread walked last, so that its next walk and the release
 * after each find the state without the ring lock (a liburing ring is
 * used by one thread at a time).  Trusted while the ring has the same SQ
 * mapping and no ring has been forgotten or moved since.
 */
struct last_ring {
	struct io_uring *ring;
	const void *sq_ring;
	unsigned int forgotten;         /* rings_forgotten when it was set */
	struct ring_state *r;
};

static __thread struct last_ring last_ring
	__attribute__((tls_model("initial-exec")));
static atomic_uint rings_forgotten;
/* liburing set-ups and tear-downs under way: their fds exist before
 * the ring is known, and after it is forgotten. */
static atomic_int ring_setups;
/* Forks made through fork(3) (counted by every prepare handler): a
 * ring's shared page mapped before the last of them may be a child's
 * too. */
static atomic_uint forks AG_FORK_DATA;


/* ---- ring states ---- */

static struct ring_state *state_new(void)
{
	for (struct ring_state *r = atomic_load(&rings); r;
	     r = atomic_load(&r->next)) {
		int free_ = 0;
		if (atomic_compare_exchange_strong(&r->in_use, &free_, 1))
			return r;
	}
	struct ring_state *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->shared = mmap(NULL, sizeof(*r->shared), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	r->shared_mapped = r->shared != MAP_FAILED;
	r->shared_forks = atomic_load(&forks);
	atomic_store(&r->shared_tag, 1);
	if (!r->shared_mapped) {
		r->shared = calloc(1, sizeof(*r->shared));
		if (!r->shared) {
			free(r);
			return NULL;
		}
	}
	pthread_mutex_init(&r->slots_lock, NULL);
	pthread_mutex_init(&r->epoch_lock, NULL);
	pthread_mutex_init(&r->walk_lock, NULL);
	atomic_store(&r->ring_fd, -1);
	atomic_store(&r->in_use, 1);
	atomic_store(&r->next, atomic_load(&rings));
	atomic_store(&rings, r);
	return r;
}

/* r's shared page, kept for its next ring, under a new tag: what was
 * stored for the ring before reads as no tail (ring.h, ring_shared). */
static void shared_retag(struct ring_state *r)
{
	unsigned int tag = atomic_load(&r->shared_tag) + 1;
	atomic_store(&r->shared_tag, tag ? tag : 1);
	atomic_store(&r->shared->seen, 0);
}

/* Empties a state for reuse (ring lock held). */
static void state_forget(struct ring_state *r)
{
	pthread_mutex_lock(&r->slots_lock);
	ag_table_replace(r, NULL);
	pthread_mutex_unlock(&r->slots_lock);
	atomic_store(&r->sq_ring, NULL);
	atomic_store(&r->ring_fd, -1);
	atomic_store(&r->reg_tid, 0);
	r->ring = NULL;
	/*
	 * With no fork since the page was mapped, it is kept (issue 32: a
	 * shmem object was made and freed per tear-down), retagged: a child
	 * of a raw fork system call (which no fork handler counts) still
	 * using the ring torn down here, on this page, and this process's
	 * next ring each read what the other stores as no tail, so the
	 * SQEs the kernel has not taken are checked again, never taken as
	 * checked.  After a fork, a fresh page: the children keep the old
	 * one (they may still use the ring).
	 */
	unsigned int now = atomic_load(&forks);
	struct ring_shared *s = MAP_FAILED;
	if (r->shared_mapped && r->shared_forks != now)
		s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s != MAP_FAILED) {
		munmap(r->shared, sizeof(*r->shared));
		r->shared = s;
		r->shared_forks = now;
	} else {
		shared_retag(r);
	}
	atomic_fetch_add_explicit(&rings_forgotten, 1, memory_order_release);
	atomic_store(&r->in_use, 0);
}

static struct ring_state *by_mapping(const void *sq_ring)
{
	for (struct ring_state *r = atomic_load(&rings); r;
	     r = atomic_load(&r->next))
		if (atomic_load(&r->in_use) && atomic_load(&r->sq_ring) == sq_ring)
			return r;
	return NULL;
}

static struct ring_state *by_fd(int ring_fd)
{
	for (struct ring_state *r = atomic_load(&rings); ring_fd >= 0 && r;
	     r = atomic_load(&r->next))
		if (atomic_load(&r->in_use) && atomic_load(&r->ring_fd) == ring_fd)
			return r;
	return NULL;
}

struct ring_state *ag_ring_by_fd(int ring_fd)
{
	pthread_mutex_lock(&ring_lock);
	struct ring_state *r = by_fd(ring_fd);
	pthread_mutex_unlock(&ring_lock);
	return r;
}

/* liburing's own flag (src/int_flags.h): enter_ring_fd is a registered
 * ring index. */
#define LIBURING_INT_FLAG_REG_RING 1

/* The ring that registered ring index `index` names for this thread:
 * one liburing's io_uring_register_ring_fd registered in it, and still
 * registered (liburing's flag; io_uring_unregister_ring_fd clears it).
 * The kernel's table of registered rings is per thread, so no other
 * thread's ring can be it. */
static struct ring_state *by_registered_index(int index)
{
	int tid = gettid();
	for (struct ring_state *r = atomic_load(&rings); index >= 0 && r;
	     r = atomic_load(&r->next)) {
		struct io_uring *ring = r->ring;
		if (atomic_load(&r->in_use) && atomic_load(&r->sq_ring) &&
		    ring && atomic_load(&r->reg_tid) == tid &&
		    ring->enter_ring_fd == index &&
		    (ring->int_flags & LIBURING_INT_FLAG_REG_RING))
			return r;
	}
	return NULL;
}

/* The state of ring (lock held), found or made; NULL when memory runs
 * out.  A ring first met at a submit (`at_submit`), not at a liburing
 * set-up, may have had files registered where the guard did not see it
 * (a raw io_uring_register, or before the guard's first look): every
 * slot of it is uncertain until a registration the guard follows. */
static struct ring_state *ring_get(struct io_uring *ring, int at_submit)
{
	int made = 0;
	const void *map = preload_ring_id(ring);
	struct ring_state *r = by_mapping(map);
	if (!r) {
		r = by_fd(ring->ring_fd);
		if (r && atomic_load(&r->sq_ring)) {
			/* The fd of another mapping: that ring was closed, or
			 * moved, where the guard did not see it.  Its slots
			 * may be this ring's: every one is uncertain. */
			struct slot_table *had = atomic_load(&r->slots);
			atomic_store(&r->ring_fd, -1);
			r = state_new();
			if (r && had) {
				pthread_mutex_lock(&r->slots_lock);
				ag_table_replace(r, ag_table_lost());
				pthread_mutex_unlock(&r->slots_lock);
			}
		} else if (!r) {
			r = state_new();
			made = at_submit;
		}
		if (!r)
			return NULL;
		atomic_store(&r->sq_ring, map);
	}
	if (made) {
		pthread_mutex_lock(&r->slots_lock);
		ag_table_replace(r, ag_table_lost());
		pthread_mutex_unlock(&r->slots_lock);
	}
	if (ring->ring_fd >= 0)
		atomic_store(&r->ring_fd, ring->ring_fd);
	r->ring = ring;
	return r;
}

/*
 * The ring lock guards the making of states, not a ring's walk: a
 * liburing ring is used by one thread at a time (it is not thread
 * safe), and the walk may wait for another thread's hold on a schedule.
 * The ring this thread walked last is found without it.
 */
struct ring_state *ag_ring_enter(struct io_uring *ring)
{
	struct last_ring *l = &last_ring;
	if (l->ring == ring && l->sq_ring == preload_ring_id(ring) &&
	    l->forgotten == atomic_load_explicit(&rings_forgotten,
						 memory_order_acquire)) {
		if (ring->ring_fd >= 0 &&
		    atomic_load_explicit(&l->r->ring_fd,
					 memory_order_relaxed) != ring->ring_fd)
			atomic_store(&l->r->ring_fd, ring->ring_fd);
		return l->r;
	}
	pthread_mutex_lock(&ring_lock);
	unsigned int forgotten = atomic_load(&rings_forgotten);
	struct ring_state *r = ring_get(ring, 1);
	pthread_mutex_unlock(&ring_lock);
	if (r)
		*l = (struct last_ring){ ring, preload_ring_id(ring), forgotten, r };
	return r;
}

void ag_ring_forget(struct io_uring *ring)
{
	pthread_mutex_lock(&ring_lock);
	struct ring_state *r = by_mapping(preload_ring_id(ring));
	if (r)
		state_forget(r);
	/* Known by its fd only (io_uring_register before any liburing
	 * function showed its mapping): liburing closes that fd with a
	 * system call the guard does not see. */
	r = by_fd(ring->ring_fd);
	if (r && !atomic_load(&r->sq_ring))
		state_forget(r);
	pthread_mutex_unlock(&ring_lock);
}

void ag_ring_fds_closed(unsigned int first, unsigned int last)
{
	int asked = -1;           /* ag_process_shares_fds, once asked */
	for (struct ring_state *r = atomic_load(&rings); r;
	     r = atomic_load(&r->next)) {
		int fd = atomic_load_explicit(&r->ring_fd, memory_order_relaxed);
		if (fd < 0 || (unsigned int)fd < first ||
		    (unsigned int)fd > last)
			continue;
		if (asked < 0)
			asked = ag_process_shares_fds();
		if (!asked)
			return;   /* a vfork child's copy: not the guard's */
		atomic_compare_exchange_strong(&r->ring_fd, &fd, -1);
	}
}

void ag_ring_moved(const void *old_sq_ring, struct io_uring *ring)
{
	pthread_mutex_lock(&ring_lock);
	struct ring_state *r = by_mapping(old_sq_ring);
	if (r) {
		/* Its slots stay; the tail is taken afresh. */
		atomic_store(&r->sq_ring, preload_ring_id(ring));
		atomic_store(&r->shared->seen, 0);
		r->ring = ring;
		atomic_fetch_add_explicit(&rings_forgotten, 1,
					  memory_order_release);
	}
	pthread_mutex_unlock(&ring_lock);
}

/* Whether ring fd fd is one the guard knows (by number, or as the same
 * open file as a known ring's fd). */
static int ring_fd_known(int fd)
{
	if (by_fd(fd))
		return 1;
	pid_t pid = getpid();
	for (struct ring_state *r = atomic_load(&rings); r;
	     r = atomic_load(&r->next)) {
		int other = atomic_load(&r->ring_fd);
		if (atomic_load(&r->in_use) && other >= 0 &&
		    syscall(SYS_kcmp, pid, pid, KCMP_FILE, fd, other) == 0)
			return 1;
	}
	return 0;
}

/* Whether fd is an io_uring instance (its /proc/self/fd link). */
static int is_ring_fd(int fd)
{
	char link[64], target[32];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = 0;
	return strcmp(target, "anon_inode:[io_uring]") == 0;
}

/*
 * Whether the fd that entry `name` of the open /proc/self/fd `dir`
 * names cannot be an io_uring instance, by one stat of what the entry
 * links to (a lookup in the directory just read, where getdents made
 * the entries: no path walk from /, as is_ring_fd's readlink makes; and
 * not the fd itself, which another thread may be closing, so no
 * sanitizer takes the look for a use of that thread's fd): an io_uring
 * fd is an anonymous inode, on the anon_inodefs pseudo filesystem,
 * whose device number has major 0.  A pipe, socket, directory, device
 * or link is not one; nor is a regular file on a filesystem with a real
 * device (on kernels where anonymous inodes say S_IFREG, as after 6.15,
 * the major 0 of their device still sends them to the readlink).  An
 * entry gone meanwhile (closed) is not one either, as is_ring_fd says.
 * What may be one gives its inode number in *ino (never 0).
 */
static int surely_not_ring(int dir, const char *name, unsigned long *ino)
{
	struct stat st;
	if (syscall(SYS_newfstatat, dir, name, &st, 0) != 0)
		return 1;
	mode_t type = st.st_mode & S_IFMT;
	if (type == S_IFIFO || type == S_IFSOCK || type == S_IFDIR ||
	    type == S_IFCHR || type == S_IFBLK || type == S_IFLNK)
		return 1;
	*ino = st.st_ino ? (unsigned long)st.st_ino : ULONG_MAX;
	return major(st.st_dev) != 0;
}

/*
 * "unseen ring" is said once per ring per process tree, a ring known by
 * its inode number (each io_uring instance is its own anonymous inode,
 * and every fd of it, inherited or dup'ed, shows the same number): a
 * process that forks shares its set of said rings (MAP_SHARED, mapped
 * by its first fork's prepare handler) with its children, so that
 * 5,000 forked children that inherited one unseen ring say it once
 * between them (whichever exits, or opens the device, first), while a
 * ring a child sets up itself, or a second ring, is a new number and is
 * said.  Before the first fork (or with no memory for the page) the
 * process's own set.  The set is bounded (UNSEEN_SAID_MAX numbers,
 * filled in order and never emptied); once full, "and more" is said
 * once and further rings are not.  A known number costs the look no
 * readlink.
 */
#define UNSEEN_SAID_MAX 63

struct unseen_said {
	atomic_ulong full;                   /* 1: "and more" said */
	atomic_ulong ino[UNSEEN_SAID_MAX];   /* filled in order; 0: free */
};

static struct unseen_said said_here;
static _Atomic(struct unseen_said *) said_tree;

static struct unseen_said *said_set(void)
{
	struct unseen_said *tree = atomic_load_explicit(&said_tree,
							memory_order_acquire);
	return tree ? tree : &said_here;
}

/* Whether ring inode ino was said in this process tree. */
static int unseen_said_already(unsigned long ino)
{
	struct unseen_said *s = said_set();
	for (unsigned int k = 0; k < UNSEEN_SAID_MAX; k++) {
		unsigned long v = atomic_load(&s->ino[k]);
		if (v == ino)
			return 1;
		if (v == 0)
			return 0;
	}
	return atomic_load(&s->full) != 0;
}

/* 1: this process says ring ino now, the first in its tree; 2: says
 * "and more" now (the set is full); 0: said already.  Slots are taken
 * in order by compare-and-swap, so two processes claiming one number
 * meet at the same slot and one of them wins. */
static int unseen_claim(unsigned long ino)
{
	assert(ino != 0);
	struct unseen_said *s = said_set();
	for (unsigned int k = 0; k < UNSEEN_SAID_MAX; k++) {
		unsigned long none = 0;
		if (atomic_compare_exchange_strong(&s->ino[k], &none, ino))
			return 1;
		if (none == ino)
			return 0;
	}
	return atomic_exchange(&s->full, 1) ? 0 : 2;
}

/* Maps said_tree, if not yet, before a fork (the prepare handler),
 * with what this process said so far (a ring said by another thread
 * while it is copied may be said once more by a child: twice, never
 * not at all). */
static void said_tree_map(void)
{
	if (atomic_load_explicit(&said_tree, memory_order_relaxed))
		return;
	struct unseen_said *p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	for (unsigned int k = 0; k < UNSEEN_SAID_MAX; k++)
		atomic_store(&p->ino[k], atomic_load(&said_here.ino[k]));
	atomic_store(&p->full, atomic_load(&said_here.full));
	struct unseen_said *none = NULL;
	if (!atomic_compare_exchange_strong(&said_tree, &none, p))
		munmap(p, sizeof(*p));    /* another thread's fork mapped it */
}

/* Whether fd, entry `name` of /proc/self/fd open as `dir`, is a ring
 * no liburing set-up the guard saw made and not yet said in this tree
 * (its inode number in *ino): known rings by number first (no system
 * call), then one stat, and only for an anonymous inode not said the
 * readlink and kcmp. */
static int unseen_ring(int dir, const char *name, int fd, unsigned long *ino)
{
	if (by_fd(fd) || surely_not_ring(dir, name, ino) ||
	    unseen_said_already(*ino) || !is_ring_fd(fd) || ring_fd_known(fd))
		return 0;
	/* Maybe another thread's liburing set-up or tear-down, not done
	 * yet: asked again while one is under way, for up to a second. */
	uint64_t until = ag_now_ns() + 1000000000u;
	while (atomic_load(&ring_setups) > 0 && ag_now_ns() < until) {
		sched_yield();
		if (ring_fd_known(fd))
			return 0;
	}
	/* A tear-down may have closed it meanwhile. */
	return is_ring_fd(fd) && !ring_fd_known(fd);
}

/* Says ring fd (inode ino) unseen, if this process is the first in its
 * tree to (unseen_claim). */
static void unseen_say(int fd, unsigned long ino)
{
	int claim = unseen_claim(ino);
	if (!claim)
		return;
	char key[48];
	snprintf(key, sizeof(key), "unseen ring %lu", claim == 1 ? ino : 0);
	ag_report_once(key, "io_uring ring fd %d was set up without the "
		       "liburing functions the guard interposes (a liburing "
		       "linked statically, or raw io_uring_setup): the SQEs "
		       "submitted on it are not checked here; only a "
		       "driver's sealed submissions refuse the uncertified "
		       "ones%s", fd, claim == 1 ? "" : " (and more: this "
		       "process tree has said its most such rings and says "
		       "no further one)");
}

/* The fd number a /proc/self/fd entry's name is (decimal digits), or
 * -1 ("." and "..", or beyond INT_MAX). */
static long fd_of_name(const char *name)
{
	long fd = 0;
	if (!*name)
		return -1;
	for (; *name; name++) {
		if (*name < '0' || *name > '9' ||
		    fd > (INT_MAX - (*name - '0')) / 10)
			return -1;
		fd = fd * 10 + (*name - '0');
	}
	return fd;
}

/*
 * The look runs at every exit, so in every forked child, where each
 * libc function the guard has not called before in the parent is bound
 * lazily (the dynamic linker's look-up, its tables' pages and the
 * guard's GOT page faulted in: issue 32).  So its system calls are made
 * through syscall(2), which the guard has called since its start
 * (process.c), and the names are parsed here.  The directory's fd is
 * opened and closed by system calls both: no sanitizer's runtime sees
 * it, neither open nor close (a close it saw without the open, or the
 * reverse, was taken by TSan for a race with another thread reusing
 * the number).
 */
void ag_uring_note_unseen_rings(void)
{
	preload_enter();
	int saved = errno;
	int dir = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/fd",
			       O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* getdents64 into the stack: no DIR allocated (in a forked child,
	 * fresh heap pages are copy-on-write faults). */
	char buf[2048] __attribute__((aligned(8)));
	long n = 0;
	while (dir >= 0 &&
	       (n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		for (long at = 0; at < n;) {
			struct dirent64 *e = (struct dirent64 *)(buf + at);
			at += e->d_reclen;
			long fd = fd_of_name(e->d_name);
			unsigned long ino = 0;
			if (fd < 0 || fd == dir)
				continue;
			if (unseen_ring(dir, e->d_name, (int)fd, &ino))
				unseen_say((int)fd, ino);
		}
	}
	if (dir >= 0)
		syscall(SYS_close, dir);
	errno = saved;
	preload_leave();
}

/* The state for a liburing ring, or NULL (no memory: its slots then
 * cannot be known, and a walk of it finds every slot uncertain). */
struct ring_state *ag_ring_of(struct io_uring *ring)
{
	pthread_mutex_lock(&ring_lock);
	struct ring_state *r = ring_get(ring, 0);
	pthread_mutex_unlock(&ring_lock);
	return r;
}

void ag_ring_life_begin(void)
{
	atomic_fetch_add(&ring_setups, 1);
}

void ag_ring_life_end(struct io_uring *ring)
{
	if (ring)
		ag_ring_of(ring);
	atomic_fetch_sub(&ring_setups, 1);
}

void ag_ring_files_set(struct io_uring *ring, const int *files,
		       unsigned int nr)
{
	struct ring_state *r = ag_ring_of(ring);
	if (r)
		ag_files_set(r, (uintptr_t)files, nr);
}

void ag_ring_files_update(struct io_uring *ring, unsigned int off,
			  const int *files, unsigned int nr)
{
	struct ring_state *r = ag_ring_of(ring);
	if (r)
		ag_files_update(r, off, (uintptr_t)files, nr);
}

/* The state for a ring fd seen only by io_uring_register: made, known
 * by its fd until a liburing function shows its mapping. */
struct ring_state *ag_ring_of_fd(int ring_fd)
{
	pthread_mutex_lock(&ring_lock);
	struct ring_state *r = by_fd(ring_fd);
	if (!r && (r = state_new()))
		atomic_store(&r->ring_fd, ring_fd);
	pthread_mutex_unlock(&ring_lock);
	return r;
}

/* Every known ring's slots made uncertain: a registration on a ring the
 * guard cannot name (a registered ring index). */
void ag_all_slots_lost(void)
{
	for (struct ring_state *r = atomic_load(&rings); r;
	     r = atomic_load(&r->next)) {
		if (!atomic_load(&r->in_use))
			continue;
		pthread_mutex_lock(&r->slots_lock);
		ag_table_replace(r, ag_table_lost());
		pthread_mutex_unlock(&r->slots_lock);
	}
}

void ag_ring_index_registered(struct io_uring *ring)
{
	struct ring_state *r = ag_ring_of(ring);
	if (r)
		atomic_store(&r->reg_tid, gettid());
}

/* The ring io_uring_enter(ring_fd) enters (a registered ring index,
 * when `registered`), with its liburing ring in *ring (NULL: not known,
 * or known by its fd only). */
struct ring_state *ag_ring_entered(int ring_fd, int registered,
				   struct io_uring **ring)
{
	pthread_mutex_lock(&ring_lock);
	struct ring_state *r = registered ? by_registered_index(ring_fd)
					  : by_fd(ring_fd);
	*ring = r ? r->ring : NULL;
	pthread_mutex_unlock(&ring_lock);
	return r;
}

/* ---- fork ---- */

void ag_uring_forking(void)
{
	atomic_fetch_add(&forks, 1);
	said_tree_map();
}

void ag_uring_lock_all(void)
{
	pthread_mutex_lock(&ring_lock);
	for (struct ring_state *r = atomic_load(&rings); r;
	     r = atomic_load(&r->next)) {
		pthread_mutex_lock(&r->epoch_lock);
		pthread_mutex_lock(&r->slots_lock);
	}
}

void ag_uring_unlock_all(int child)
{
	for (struct ring_state *r = atomic_load(&rings); r;
	     r = atomic_load(&r->next)) {
		/* The child has none of the threads that were reading,
		 * walking or registering.  A registration under way goes on
		 * in the parent, on the ring the child shares, and the child
		 * never learns its result: every slot is uncertain. */
		if (child) {
			atomic_store(&r->readers, 0);
			atomic_store(&r->slot_users[0], 0);
			atomic_store(&r->slot_users[1], 0);
			if (atomic_load(&r->reg_inflight))
				ag_table_replace(r, ag_table_lost());
			atomic_store(&r->reg_inflight, 0);
			atomic_store(&r->reg_all, 0);
			/* A walk under way in the parent stays there. */
			pthread_mutex_init(&r->walk_lock, NULL);
			for (unsigned int k = 0; k < 4; k++)
				atomic_store(&r->reg_range[k], 0);
		}
		pthread_mutex_unlock(&r->slots_lock);
		pthread_mutex_unlock(&r->epoch_lock);
	}
	if (child)
		atomic_store(&ring_setups, 0);  /* their threads are gone */
	pthread_mutex_unlock(&ring_lock);
}
