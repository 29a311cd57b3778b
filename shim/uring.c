/* SPDX-License-Identifier: MIT */
/*
 * The io_uring path.  liburing's submit functions (interposed in
 * interpose.c) call ag_uring_check first, which walks the SQEs the
 * application queued since the last submit (sq.sqe_head .. sq.sqe_tail,
 * as liburing's own flush will hand them over, through the SQ index
 * array as the kernel reads them) and handles every IORING_OP_URING_CMD
 * aimed at the device, by fd or by registered slot:
 *
 *   APPEND  the references are copied once into a block the schedule
 *           keeps, certified, and the SQE is pointed at that block: the
 *           driver reads exactly what was checked
 *   SUBMIT, SUBMIT_SEALED  decided like the ioctl; an approved one is
 *           rewritten into the sealed submit of the schedule that was
 *           checked, with the mirror's seal; a blocked one becomes a NOP
 *           whose completion carries -EPERM (IORING_NOP_INJECT_RESULT)
 *           and the application's user_data, an ordinary failed CQE
 *
 * The handling of each command is request.c's, shared with the ioctl
 * path; this file is its front end (struct ag_front): which SQEs are
 * device commands, and what forwarding means here (rewriting the SQE).
 *
 * A CQE is never seen here, so an append is mirrored when it is handed
 * over, not when the driver has done it; references the certificate
 * calls malformed are answered -EINVAL here (the driver's answer); an
 * append linked after a request that may fail and cancel it poisons its
 * schedule, sealed file or not (an append mirrored in good health is
 * no such request: appends linked to appends and the submit keep their
 * schedule); anything else the driver refuses (EBUSY, ENOMEM) leaves the
 * mirror longer than the device's schedule, and a sealed driver then
 * refuses its submits (EKEYREJECTED in the CQE, which the guard does not
 * see); an unsealed one runs them (docs/guard.md: a known limit).  An
 * approved submit or append holds its schedule until the next function
 * returns, so that no other thread's append or destroy slips in between
 * the check and the driver.
 *
 * Registered files: the registration functions are interposed too (the
 * liburing ones and the generic io_uring_register); a slot holds the
 * file it had when registered.  While a registration is under way the
 * slots it may change are pending (uncertain), and it first waits for
 * the walks that read the ring's slots before (counted per epoch from
 * their first slot read to their release): no command checked against
 * a slot's old file reaches the kernel after the new one.  SQEs that change slots themselves
 * (direct opens, IORING_OP_FILES_UPDATE, direct close) have results the
 * guard does not see: a slot they may have made the device is
 * "uncertain", and device commands on it are blocked (fail closed:
 * slot_change.c).  So
 * is a slot registered from an fd the guard last knew as another file
 * (not rechecked, to keep registration free of system calls: the fd may
 * have been closed and reused unseen).  The slot table is read without
 * a lock: a reader announces itself (readers) around the few loads and
 * the reference it takes, and a writer, after swapping a slot or the
 * table, waits for the readers of the moment to leave before it drops
 * what it replaced.
 *
 * Rings are known by their SQ mapping (preload/ring_id.h: sq.ring_ptr,
 * unique while mapped); the fd is only a way to reach one (io_uring_enter,
 * io_uring_register), forgotten when it is closed: liburing 2.4's
 * io_uring_close_ring_fd leaves every ring with fd -1, and a dup'ed ring
 * lives on under another number.  A state is never freed, only emptied
 * and reused, so that a stale pointer to one is harmless.  The kernel
 * tail is remembered after each submit, in memory shared with the
 * children forked since (a ring shared across fork is submitted to by
 * both): if it moved without passing here, someone wrote the SQ ring by
 * hand; those SQEs are checked if the kernel has not taken them yet, and
 * reported otherwise.  Every walk is bounded by the ring's size.
 *
 * Layering: devices.h, report.h <- ring.h (this file's ring and slot table types and
 * the slot functions it lends the io_uring path) <- slot_change.c (slots
 * changed by SQEs), ring_reg.c (registrations under way) <- the SQ walk,
 * here.
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
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/kcmp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include <liburing.h>

#include "api.h"
#include "devices.h"
#include "mirror.h"
#include "options.h"
#include "process.h"
#include "report.h"
#include "request.h"
#include "stats.h"
#include "submit.h"
#include "uring.h"
#include "util.h"
#include "ring.h"
#include "ring_id.h"
#include "slot_change.h"
#include "sq.h"
#include "sqe_inject.h"
#include "uring_abi.h"
#include "usercopy.h"
#include "../contract/requests.h"  /* the URING_CMD argument rule */

/* What the processes sharing a ring share: the kernel tail after the
 * last checked submit. */
struct ring_shared {
	atomic_uint tail;
	atomic_int have_tail;
};

struct ag_held {
	unsigned int n, cap;
	struct ag_sched **v;
	struct ring_state *slots;       /* counted in its slot_users, or
					 * NULL */
	unsigned int slots_parity;
};

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

/* ---- the slot table ---- */

/* Waits until every reader that may have loaded a value replaced
 * before this call has taken its reference (or left). */
static void slots_synchronize(struct ring_state *r)
{
	while (atomic_load(&r->readers) != 0)
		sched_yield();
}

static void table_free(struct slot_table *t)
{
	for (unsigned int i = 0; t && i < t->n; i++) {
		struct ag_file *f = atomic_load(&t->v[i]);
		if (ag_is_file(f))
			ag_file_unref(f);
	}
	free(t);
}

/* Replaces the table (slots lock held): the old one is freed once no
 * reader can be in it. */
void ag_table_replace(struct ring_state *r, struct slot_table *t)
{
	struct slot_table *old = atomic_exchange(&r->slots, t);
	if (!old)
		return;
	slots_synchronize(r);
	table_free(old);
}

/* Whether a registration under way may change slot i of r. */
static int slot_pending(struct ring_state *r, unsigned int i)
{
	if (!atomic_load(&r->reg_inflight))
		return 0;
	if (atomic_load(&r->reg_all))
		return 1;
	for (unsigned int k = 0; k < 4; k++) {
		uint64_t v = atomic_load(&r->reg_range[k]);
		if (v && i >= (unsigned int)(v >> 32) && i < (unsigned int)v)
			return 1;
	}
	return 0;
}

/* What slot i of r holds: NULL, AG_SLOT_UNCERTAIN, or a referenced
 * file.  A slot a registration under way may change is uncertain: the
 * kernel may have its new file already. */
struct ag_file *ag_slot_read(struct ring_state *r, unsigned int i)
{
	atomic_fetch_add(&r->readers, 1);
	struct slot_table *t = atomic_load(&r->slots);
	struct ag_file *f = NULL;
	if ((t && t->lost) || slot_pending(r, i))
		f = AG_SLOT_UNCERTAIN;
	else if (t && i < t->n) {
		f = atomic_load(&t->v[i]);
		if (ag_is_file(f))
			ag_file_ref(f);
	}
	atomic_fetch_sub(&r->readers, 1);
	return f;
}

/*
 * The walk holding *hp reads r's slots: it is counted in the current
 * epoch's slot_users until its release (ag_uring_release, once the
 * kernel has its SQEs), so that a registration begun meanwhile waits
 * for it before its own call goes to the kernel (ag_ring_reg_begin).
 * Once per walk; -ENOMEM when there is no memory to keep the count.
 */
int ag_slots_enter(struct ring_state *r, struct ag_held **hp)
{
	struct ag_held *h = *hp;
	if (h && h->slots) {
		assert(h->slots == r);
		return 0;
	}
	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h)
			return -ENOMEM;
		*hp = h;
	}
	for (;;) {
		unsigned int e = atomic_load(&r->epoch);
		atomic_fetch_add(&r->slot_users[e & 1], 1);
		/* Counted before a registration moved the epoch on (it then
		 * waits for this walk), or after (this walk then sees its
		 * pending slots): seq_cst, both sides. */
		if (atomic_load(&r->epoch) == e) {
			h->slots = r;
			h->slots_parity = e & 1;
			return 0;
		}
		atomic_fetch_sub(&r->slot_users[e & 1], 1);
	}
}

void ag_retired_drop(struct ring_state *r, struct retired *d)
{
	if (!d->n)
		return;
	slots_synchronize(r);
	for (unsigned int i = 0; i < d->n; i++)
		ag_file_unref(d->v[i]);
	d->n = 0;
}

void ag_slot_set(struct ring_state *r, struct slot_table *t,
		 unsigned int i, struct ag_file *f, struct retired *d)
{
	assert(i < t->n);
	struct ag_file *old = atomic_exchange(&t->v[i], f);
	if (!ag_is_file(old))
		return;
	if (d->n == sizeof(d->v) / sizeof(d->v[0]))
		ag_retired_drop(r, d);
	d->v[d->n++] = old;
}

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
	atomic_store(&r->shared->have_tail, 0);
	if (r->shared_mapped) {
		/* A fresh page: a child forked before keeps the old one. */
		struct ring_shared *s = mmap(NULL, sizeof(*s),
					     PROT_READ | PROT_WRITE,
					     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (s != MAP_FAILED) {
			munmap(r->shared, sizeof(*r->shared));
			r->shared = s;
		}
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

/* A slot table whose every slot is uncertain. */
struct slot_table *ag_table_lost(void)
{
	struct slot_table *t = calloc(1, sizeof(*t));
	if (t)
		t->lost = 1;
	return t;
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
static struct ring_state *ring_enter(struct io_uring *ring)
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
		atomic_store(&r->shared->have_tail, 0);
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

void ag_uring_note_unseen_rings(void)
{
	ag_inside++;
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	while (dir && (e = readdir(dir))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (*end || end == e->d_name || fd == dirfd(dir) || fd > INT_MAX)
			continue;
		if (!is_ring_fd((int)fd) || ring_fd_known((int)fd))
			continue;
		/* Maybe another thread's liburing set-up or tear-down, not
		 * done yet: asked again while one is under way, for up to a
		 * second. */
		int known = 0;
		uint64_t until = ag_now_ns() + 1000000000u;
		while (!known && atomic_load(&ring_setups) > 0 &&
		       ag_now_ns() < until) {
			sched_yield();
			known = ring_fd_known((int)fd);
		}
		/* A tear-down may have closed it meanwhile. */
		if (known || !is_ring_fd((int)fd) || ring_fd_known((int)fd))
			continue;
		ag_report_once("unseen ring", "io_uring ring fd %ld was set up "
			       "without the liburing functions the guard "
			       "interposes (a liburing linked statically, or "
			       "raw io_uring_setup): the SQEs submitted on it "
			       "are not checked here; only a driver's sealed "
			       "submissions refuse the uncertified ones", fd);
	}
	if (dir)
		closedir(dir);
	ag_inside--;
}

/* ---- what a registered fd is ---- */

/*
 * What fd is for a slot: FD_DEVICE with *f referenced, FD_NOT, or
 * FD_MAYBE (the device without memory to know it, or a probe that could
 * not answer).  Only fds the table does not know are looked at (fstat;
 * character devices are probed), and, when `exact`, those it knows as
 * not the device (ag_fd_file compares their fstat, since the guard does
 * not see every close).  Without `exact` (a FILES_UPDATE SQE, whose
 * result the guard never learns: a device there is uncertain anyway)
 * such an fd is FD_MAYBE, and the walk makes no system call for it.
 */
enum fd_kind ag_fd_kind(int fd, struct ag_file **f, int exact)
{
	*f = NULL;
	if (fd < 0)
		return FD_NOT;
	struct ag_file *known = ag_fd_peek(fd);
	if (known == AG_FD_NOTDEV && !exact)
		return FD_MAYBE;
	if (known == AG_FD_UNKNOWN) {
		struct stat st;
		if (ag_fstatat(fd, NULL, &st) != 0)
			return FD_NOT;        /* the kernel refuses it too */
		if (!S_ISCHR(st.st_mode)) {
			ag_fd_set_notdev(fd, &st);
			return FD_NOT;
		}
	}
	*f = ag_fd_file(fd);
	if (*f)
		return FD_DEVICE;
	return errno ? FD_MAYBE : FD_NOT;
}

/* What slots from + 0 .. n of the fd array `files` (0: all unset)
 * hold, into v: a referenced file, AG_SLOT_UNCERTAIN, NULL, or KEEP for
 * IORING_REGISTER_FILES_SKIP (the slot keeps its file).  Its fstats and
 * probes are made with no lock held: a file on FUSE or NFS, or a slow
 * device, can take its time without stalling the ring's other users. */
static char keep_marker;
#define KEEP ((struct ag_file *)(void *)&keep_marker)
#define FD_CHUNK 1024u

/* uring_files_each's callback: slot i of the chunk holds fd. */
static void slot_value(void *ctx, unsigned int slot, int fd)
{
	struct ag_file **v = ctx;
	struct ag_file *f;
	enum fd_kind k = ag_fd_kind(fd, &f, 1);
	v[slot] = k == FD_DEVICE ? f : k == FD_MAYBE ? AG_SLOT_UNCERTAIN : NULL;
}

static void slot_values(uint64_t files, unsigned int from, unsigned int n,
			struct ag_file **v)
{
	assert(n <= FD_CHUNK);
	for (unsigned int i = 0; i < n; i++)
		v[i] = KEEP;
	uring_files_each(files ? files + (uint64_t)from * sizeof(int) : 0,
			 0, n, n, slot_value, v);
}

/* A new table of nr slots from `files`, made before the slots lock is
 * taken (it is nobody else's until it replaces the old one). */
void ag_files_set(struct ring_state *r, uint64_t files, unsigned int nr)
{
	struct slot_table *t = calloc(1, sizeof(*t) + (size_t)nr *
				      sizeof(t->v[0]));
	if (t) {
		t->n = nr;
		struct ag_file *v[FD_CHUNK];
		for (unsigned int c = 0; c < nr; c += FD_CHUNK) {
			unsigned int n = nr - c < FD_CHUNK ? nr - c : FD_CHUNK;
			slot_values(files, c, n, v);
			for (unsigned int i = 0; i < n; i++)
				atomic_store_explicit(&t->v[c + i],
						      v[i] == KEEP ? NULL : v[i],
						      memory_order_relaxed);
		}
	} else if (nr) {
		t = ag_table_lost();
		ag_no_memory("io_uring file registration");
	}
	pthread_mutex_lock(&r->slots_lock);
	ag_table_replace(r, t);
	pthread_mutex_unlock(&r->slots_lock);
}

/* Slots off .. off + nr changed in place: each chunk's values found
 * with no lock held, then set under it. */
#define UPDATE_VALUES 256u

void ag_files_update(struct ring_state *r, unsigned int off,
		     uint64_t files, unsigned int nr)
{
	struct ag_file *v[UPDATE_VALUES];
	for (unsigned int c = 0; c < nr; c += UPDATE_VALUES) {
		unsigned int n = nr - c < UPDATE_VALUES ? nr - c : UPDATE_VALUES;
		slot_values(files, c, n, v);
		struct retired d = { 0 };
		pthread_mutex_lock(&r->slots_lock);
		struct slot_table *t = atomic_load(&r->slots);
		for (unsigned int i = 0; i < n; i++) {
			uint64_t index = (uint64_t)off + c + i;
			if (v[i] == KEEP)
				continue;
			if (t && !t->lost && index < t->n)
				ag_slot_set(r, t, (unsigned int)index, v[i], &d);
			else if (ag_is_file(v[i]))
				ag_file_unref(v[i]);
		}
		ag_retired_drop(r, &d);
		pthread_mutex_unlock(&r->slots_lock);
	}
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

/* ---- holds ---- */

static unsigned int own_holds(const struct ag_held *h, const struct ag_sched *s)
{
	unsigned int n = 0;
	for (unsigned int i = 0; h && i < h->n; i++)
		n += h->v[i] == s;
	return n;
}

static int hold(struct ag_held **hp, struct ag_sched *s)
{
	struct ag_held *h = *hp;
	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h)
			return -ENOMEM;
		*hp = h;
	}
	if (h->n == h->cap) {
		unsigned int cap = h->cap ? 2 * h->cap : 8;
		struct ag_sched **v = realloc(h->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	ag_sched_hold(s);
	h->v[h->n++] = s;
	return 0;
}

void ag_uring_release(struct io_uring *ring, struct ag_held *h)
{
	/* First: a registration may be waiting for this walk. */
	if (h && h->slots)
		atomic_fetch_sub(&h->slots->slot_users[h->slots_parity], 1);
	for (unsigned int i = 0; h && i < h->n; i++)
		ag_sched_release(h->v[i]);
	if (h) {
		free(h->v);
		free(h);
	}
	if (!ring)
		return;
	/* Where liburing's flush left the kernel tail: anything beyond it
	 * next time did not come through here. */
	struct ring_state *r = ring_enter(ring);
	if (r) {
		/* Plain stores (relaxed): a word each, shared with other
		 * processes, which need no order with anything else. */
		atomic_store_explicit(&r->shared->tail,
				      io_uring_smp_load_acquire(ring->sq.ktail),
				      memory_order_relaxed);
		if (!atomic_load_explicit(&r->shared->have_tail,
					  memory_order_relaxed))
			atomic_store_explicit(&r->shared->have_tail, 1,
					      memory_order_relaxed);
	}
}

/* ---- one SQE ---- */


struct walk {
	struct io_uring *ring;
	struct ring_state *r;           /* NULL: no memory for it */
	struct ag_held *held;
	int chain_blocked;              /* an earlier SQE of this link chain */
	int chain_may_fail;             /* an earlier SQE of this chain has
					 * IOSQE_IO_LINK and may fail (all
					 * but appends mirrored in good
					 * health): the kernel would then
					 * cancel the rest */
	int in_chain;                   /* the SQE before had IOSQE_IO_LINK
					 * or IOSQE_IO_HARDLINK: this one is
					 * issued when that one completes */
};

/* ---- the URING_CMD front end (request.c has the handlers) ---- */

/* One device command being checked. */
struct uring_call {
	struct walk *w;
	struct io_uring_sqe *sqe;
	int mirrored;           /* an append the mirror took in good health */
};

/* The SQE flags with which the kernel hands a URING_CMD to the driver:
 * with any other (IOSQE_BUFFER_SELECT, a bit it does not know) or a
 * personality (which may not exist) it may fail the SQE first. */
#define PASSED_FLAGS (IOSQE_FIXED_FILE | IOSQE_IO_DRAIN | IOSQE_IO_LINK | \
		      IOSQE_IO_HARDLINK | IOSQE_ASYNC | IOSQE_CQE_SKIP_SUCCESS)

/*
 * The SQE becomes exactly the request the handler approved: its command
 * and the whole argument the guard checked (an approved submit carries
 * the mirror's seal, so that a thread rewriting the SQE after this gets
 * a refused submission, never another schedule run).  An append linked
 * after a request that may fail and cancel it cannot be known taken:
 * its schedule is then blocked, sealed file or not.  An append the
 * mirror took in good health, with flags the kernel passes, is one the
 * driver refuses only for want of its own resources (docs/guard.md, a
 * known limit): it does not count as a request that may fail, so that
 * appends linked to appends and to the submit (the ordinary way to run
 * the submit only if every append was taken) keep their schedule.
 */
static int uring_forward(struct ag_call *c, struct ag_sched *s,
			 unsigned int cmd, void *arg)
{
	struct uring_call *u = c->ctx;
	const struct ag_request *req = ag_request_by_nr(_IOC_NR(cmd));
	assert(req && req->uring_op && req->uring_size <= URING_CMD_BYTES);
	u->sqe->cmd_op = req->uring_op;
	memcpy(u->sqe->cmd, arg, req->uring_size);
	memset(u->sqe->cmd + req->uring_size, 0, URING_CMD_BYTES - req->uring_size);
	/* A command linked after another is issued when that one
	 * completes, after the submit returned (on a DEFER_TASKRUN ring at
	 * the next wait): Linux 6.12's io_uring copies a URING_CMD's SQE at
	 * prep only with IOSQE_ASYNC, so without it the driver reads the
	 * SQ slot then, which the application may have filled again
	 * (gate-ring link-reuse: a certified submit read a NOP's bytes).
	 * IOSQE_ASYNC keeps the chain's order; the command runs from io-wq
	 * with the copy taken at the submit. */
	if (u->w->in_chain)
		u->sqe->flags |= IOSQE_ASYNC;
	/* No CQE is seen here: mirrored, but maybe never taken, and later
	 * appends would then be certified with references the driver does
	 * not have (fuzz_guard).  A seal would refuse such a schedule's
	 * submits, but only after the guard certified a mirror it cannot
	 * vouch for (fuzz_guard: a linked append cancelled on a sealed
	 * file, its mirror longer than the driver's schedule). */
	if (s && req->uring_op == ARENA_URING_CMD_APPEND) {
		if (((const struct drm_arena_schedule_append *)arg)->count &&
		    u->w->chain_may_fail)
			ag_sched_poison(s, "an io_uring append linked after a "
					"request that may fail and cancel it: "
					"the guard cannot know whether the "
					"driver took it");
		u->mirrored = ag_sched_recorded(s) &&
			      !(u->sqe->flags & ~PASSED_FLAGS) &&
			      !u->sqe->personality;
	}
	return 0;
}

/* Another thread's submit or append of s is between its check and the
 * driver.  Wait for it, unless this walk holds schedules itself: two
 * walks could then wait for each other.  EBUSY is the driver's answer
 * to an append while the schedule executes, which it may be about to. */
static int uring_wait_holds(struct ag_call *c, struct ag_sched *s)
{
	struct walk *w = ((struct uring_call *)c->ctx)->w;
	unsigned int own = own_holds(w->held, s);
	if (ag_sched_held_by_others(s, own) && w->held && w->held->n > 0)
		return -EBUSY;
	ag_sched_wait_holds(s, own);
	return 0;
}

static int uring_keep(struct ag_call *c, struct ag_sched *s)
{
	struct walk *w = ((struct uring_call *)c->ctx)->w;
	if (hold(&w->held, s) != 0)
		return ag_no_memory("a URING_CMD");  /* cannot keep it
						      * checked */
	return 0;
}

static const struct ag_front uring_front = {
	.path = AG_PATH_URING,
	.deferred = 1,
	.forward = uring_forward,
	.wait_holds = uring_wait_holds,
	.keep = uring_keep,
};

/* The command's argument copied out of the SQE, zero extended, and
 * handled: 0 or -errno (the SQE then fails with it); *mirrored: an
 * append the mirror took in good health (uring_forward). */
static int handle_cmd(struct walk *w, struct ag_file *f,
		      struct io_uring_sqe *sqe, const struct ag_request *req,
		      int *mirrored)
{
	uint64_t arg[URING_CMD_BYTES / 8] = { 0 };
	assert(req->size <= sizeof(arg));
	memcpy(arg, sqe->cmd, req->uring_size);
	struct uring_call u = { w, sqe, 0 };
	/* A registered slot has no fd: name one the file was seen on. */
	int fd = sqe->flags & IOSQE_FIXED_FILE ? ag_file_fd(f) : sqe->fd;
	struct ag_call c = { &uring_front, f, fd, &u };
	int rc = req->handle(&c, arg);
	*mirrored = rc == 0 && u.mirrored;
	return rc;
}

/* The device file an SQE is aimed at (referenced), NULL, or
 * AG_SLOT_UNCERTAIN; NULL with errno set when it may be the device but
 * cannot be checked (no memory to know it, a probe that did not
 * answer): refuse with it. */
static struct ag_file *target(struct walk *w, const struct io_uring_sqe *sqe)
{
	errno = 0;
	if (!(sqe->flags & IOSQE_FIXED_FILE))
		return sqe->fd >= 0 ? ag_fd_file(sqe->fd) : NULL;
	if (!w->r)
		return AG_SLOT_UNCERTAIN;
	if (sqe->fd < 0)
		return NULL;
	if (ag_slots_enter(w->r, &w->held) != 0) {
		errno = ENOMEM;
		return NULL;
	}
	return ag_slot_read(w->r, (unsigned int)sqe->fd);
}

/* A command answered here, never handed to the driver: the kernel
 * cancels the rest of its link chain, and so does the walk. */
static void fail_cmd(struct walk *w, struct io_uring_sqe *sqe, int rc)
{
	sqe_complete_with(sqe, rc);
	if (sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK))
		w->chain_blocked = 1;
}

/* A device command refused before its handler ran, its slot uncertain
 * (why): a submit among them is a refused submission, which the thread's
 * last refusal (arenaguard_last_refusal) says, as for decide.c's, so
 * that an application tells the guard's EPERM from a driver's.  (Both
 * submit structs begin with the schedule handle.) */
static void slot_refused(const struct io_uring_sqe *sqe, const char *why)
{
	if (sqe->cmd_op != ARENA_URING_CMD_SUBMIT &&
	    sqe->cmd_op != ARENA_URING_CMD_SUBMIT_SEALED)
		return;
	struct ag_submit sub = { .fd = sqe->fd, .path = AG_PATH_URING };
	memcpy(&sub.schedule, sqe->cmd, sizeof(sub.schedule));
	ag_api_note_refusal(&sub, NULL, NULL, why, 1);
}

/* A URING_CMD checked, and handled if it is the device's.  Returns
 * whether it is an append the mirror took in good health (handle_cmd):
 * one that does not make the rest of its link chain uncertain. */
static int check_cmd(struct walk *w, struct io_uring_sqe *sqe)
{
	const struct ag_request *req = ag_request_by_uring_op(sqe->cmd_op);
	if (!req)
		return 0;
	struct ag_file *f = target(w, sqe);
	if (!f && errno)
		fail_cmd(w, sqe, errno == ENOMEM ? ag_no_memory("a URING_CMD")
						 : -errno);
	if (!f)
		return 0;
	int rc, mirrored = 0;
	if (f == AG_SLOT_UNCERTAIN &&
	    slot_pending(w->r, (unsigned int)sqe->fd)) {
		ag_report_once("registration under way", "a URING_CMD on "
			       "registered file slot %d of ring fd %d while "
			       "another thread's registration of the ring's "
			       "files may be changing it: the guard cannot know "
			       "which file the kernel will use; %s", sqe->fd,
			       w->ring->ring_fd, ag_cfg.mode == AG_ENFORCE
					? "blocked" : "not checked");
		if (ag_cfg.mode == AG_ENFORCE) {
			slot_refused(sqe, "a URING_CMD on a registered file "
				     "slot while another thread's "
				     "registration of the ring's files may "
				     "be changing it");
			fail_cmd(w, sqe, -EPERM);
		}
		return 0;
	}
	if (f == AG_SLOT_UNCERTAIN) {
		ag_report_once("uncertain slot", "a URING_CMD on registered "
			       "file slot %d of ring fd %d: an earlier SQE may "
			       "have put the device there, or it was registered "
			       "in a way the guard could not follow (no memory, "
			       "a registered ring index, two registrations of "
			       "its files at once), and the guard cannot "
			       "know; %s", sqe->fd, w->ring->ring_fd,
			       ag_cfg.mode == AG_ENFORCE ? "blocked"
							 : "not checked");
		if (ag_cfg.mode == AG_ENFORCE) {
			slot_refused(sqe, "a URING_CMD on a registered file "
				     "slot that may be the device: the guard "
				     "cannot know which file it holds");
			fail_cmd(w, sqe, -EPERM);
		}
		return 0;
	}
	if (!(w->ring->flags & IORING_SETUP_SQE128))
		rc = 0;    /* no payload: the driver refuses it unread */
	else if (w->chain_blocked)
		rc = -ECANCELED;   /* what the kernel will say anyway */
	else if (sqe->__pad1 || sqe->uring_cmd_flags ||
		 !arena_uring_cmd_tail_zero(sqe->cmd, req->uring_size))
		rc = -EINVAL;      /* uapi.h: nonzero padding (the contract's rule) */
	else
		rc = handle_cmd(w, f, sqe, req, &mirrored);
	ag_file_unref(f);
	if (rc < 0)
		fail_cmd(w, sqe, rc);
	return mirrored;
}

static void check_sqe(struct walk *w, struct io_uring_sqe *sqe)
{
	int linked = sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK);
	int mirrored = 0;
	if (sqe->opcode == IORING_OP_URING_CMD)
		mirrored = check_cmd(w, sqe);
	else if (w->r)
		ag_note_slot_change(w->r, sqe, &w->held);
	if ((sqe->flags & IOSQE_IO_LINK) && !mirrored)
		w->chain_may_fail = 1;
	if (!linked)
		w->chain_blocked = w->chain_may_fail = 0;
	w->in_chain = linked != 0;
}

/* ---- walking ---- */

/* SQ positions from .. to, at most one ring's worth (the kernel never
 * takes more from one tail). */
static void check_range(struct walk *w, unsigned int from, unsigned int to)
{
	unsigned int n = to - from;
	if (n == 0)
		return;
	unsigned int entries = *w->ring->sq.kring_entries;
	if (n > entries)
		n = entries;
	for (unsigned int i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = preload_sqe_at(w->ring, from + i);
		if (sqe)
			check_sqe(w, sqe);
	}
}

/*
 * SQEs in the kernel's ring that did not pass here (the application
 * wrote the SQ ring itself): those the kernel has not taken yet are
 * checked, the others counted and reported.
 */
static void check_unseen_locked(struct walk *w)
{
	struct io_uring *ring = w->ring;
	struct ring_shared *sh = w->r->shared;
	unsigned int ktail = io_uring_smp_load_acquire(ring->sq.ktail);
	unsigned int khead = io_uring_smp_load_acquire(ring->sq.khead);
	unsigned int tail = atomic_load_explicit(&sh->tail,
						 memory_order_relaxed);
	if (!atomic_load_explicit(&sh->have_tail, memory_order_relaxed) ||
	    (int)(ktail - tail) < 0) {
		/* First sight, or a tail ahead of the kernel's, which
		 * cannot be this ring's (a state left by a ring the guard
		 * did not see go): what the kernel has not taken yet is
		 * still to be checked, even if it was published by hand
		 * before (fuzz_guard). */
		tail = khead;
		atomic_store_explicit(&sh->tail, tail, memory_order_relaxed);
		atomic_store_explicit(&sh->have_tail, 1, memory_order_relaxed);
	}
	if (ktail == tail)
		return;
	unsigned int from = tail;
	if ((int)(khead - from) > 0) {
		atomic_fetch_add(&ag_stats.unchecked_sqes, khead - from);
		ag_report_once("unseen sqes", "ring fd %d: %u SQEs reached the "
			       "kernel without passing liburing's submit "
			       "functions (a hand-written SQ ring, raw "
			       "io_uring_enter, or a liburing linked statically); "
			       "the guard did not check them",
			       ring->ring_fd, khead - from);
		from = khead;
	}
	check_range(w, from, ktail);
	atomic_store_explicit(&sh->tail, ktail, memory_order_release);
}

/*
 * No SQE unseen (the tail checked up to is the kernel's: every submit by
 * liburing's functions) is decided without walk_lock: the tail is stored
 * (release) only after the SQEs before it were checked, so a thread that
 * reads it equal to the kernel's (acquire) enters after those checks, as
 * it would have after waiting for the lock; anything else takes the lock.
 * The lock cost a cached io_uring submit 71 of 8289 instructions
 * (docs/performance.md, "Cached submit").
 */
static void check_unseen(struct walk *w)
{
	struct ring_shared *sh = w->r->shared;
	if (atomic_load_explicit(&sh->have_tail, memory_order_acquire) &&
	    atomic_load_explicit(&sh->tail, memory_order_acquire) ==
	    io_uring_smp_load_acquire(w->ring->sq.ktail))
		return;
	pthread_mutex_lock(&w->r->walk_lock);
	check_unseen_locked(w);
	pthread_mutex_unlock(&w->r->walk_lock);
}

int ag_uring_pending_cmd(struct io_uring *ring)
{
	unsigned int from = io_uring_smp_load_acquire(ring->sq.khead);
	unsigned int n = ring->sq.sqe_tail - from;
	unsigned int entries = *ring->sq.kring_entries;
	for (unsigned int i = 0; i < n && i < entries; i++) {
		struct io_uring_sqe *sqe = preload_sqe_at(ring, from + i);
		if (sqe && sqe->opcode == IORING_OP_URING_CMD)
			return 1;
	}
	return 0;
}

struct ag_held *ag_uring_check(struct io_uring *ring)
{
	struct walk w = { ring, ring_enter(ring), NULL, 0, 0, 0 };
	if (w.r)
		check_unseen(&w);
	/* liburing's pending SQEs, less any the application has already
	 * handed to the kernel itself (by moving the tail): those were
	 * checked, or counted, above. */
	struct io_uring_sq *sq = &ring->sq;
	unsigned int from = sq->sqe_head;
	unsigned int ktail = io_uring_smp_load_acquire(sq->ktail);
	if ((int)(ktail - from) > 0 && (int)(sq->sqe_tail - ktail) >= 0)
		from = ktail;
	check_range(&w, from, sq->sqe_tail);
	return w.held;
}

void ag_ring_index_registered(struct io_uring *ring)
{
	struct ring_state *r = ag_ring_of(ring);
	if (r)
		atomic_store(&r->reg_tid, gettid());
}

struct ag_held *ag_uring_enter_check(int ring_fd, unsigned int to_submit,
				     int registered)
{
	if (!to_submit)
		return NULL;
	pthread_mutex_lock(&ring_lock);
	struct ring_state *r = registered ? by_registered_index(ring_fd)
					  : by_fd(ring_fd);
	struct io_uring *ring = r ? r->ring : NULL;
	pthread_mutex_unlock(&ring_lock);
	if (!ring && registered) {
		ag_report_once("unknown ring enter", "io_uring_enter() on "
			       "registered ring index %d, which liburing's "
			       "io_uring_register_ring_fd did not register in "
			       "this thread: the guard cannot name the ring, "
			       "and its SQEs are not checked", ring_fd);
		return NULL;
	}
	if (!ring) {
		ag_report_once("unknown ring enter", "io_uring_enter() on ring "
			       "fd %d, which never passed liburing's submit "
			       "functions: its SQEs are not checked", ring_fd);
		return NULL;
	}
	struct walk w = { ring, r, NULL, 0, 0, 0 };
	check_unseen(&w);
	return w.held;
}

/* ---- fork ---- */

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
