/* SPDX-License-Identifier: MIT */
/*
 * The io_uring path.  liburing's submit functions (interposed in
 * interpose.c) call ag_uring_check first, which walks the SQEs the
 * application queued since the last submit (sq.sqe_head .. sq.sqe_tail,
 * as liburing's own flush will hand them over) and handles every
 * IORING_OP_URING_CMD aimed at the device, by fd or by registered slot:
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
 * schedule unless the file is sealed (the seal then refuses what a
 * cancelled append leaves); anything else the driver refuses (EBUSY, ENOMEM) leaves the
 * mirror longer than the device's schedule, and a sealed driver then
 * refuses its submits (EKEYREJECTED in the CQE, which the guard does not
 * see); an unsealed one runs them (docs/guard.md: a known limit).  An
 * approved submit holds its schedule until the next function returns,
 * so that no other thread's append slips in between the check and the
 * driver.
 *
 * Registered files: the registration functions are interposed too; a
 * slot holds the file it had when registered.  SQEs that change slots
 * themselves (direct opens, IORING_OP_FILES_UPDATE, direct close) have
 * results the guard does not see: a slot they may have made the device
 * is "uncertain", and device commands on it are blocked (fail closed).
 *
 * Rings are known by their fd and their SQ mapping (a reused fd number
 * with a new mapping is a new ring).  The kernel tail is remembered
 * after each submit: if it moved without passing here, someone wrote
 * the SQ ring by hand; those SQEs are checked if the kernel has not
 * taken them yet, and reported otherwise.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <liburing.h>

#include "guard.h"
#include "sqe_inject.h"
#include "usercopy.h"


#define CMD_BYTES 80                    /* sqe->cmd of a 128-byte SQE */
#define UNCERTAIN ((struct ag_file *)1)

struct ring_state {
	int ring_fd;
	void *sq_ring;                  /* identity, with ring_fd */
	struct io_uring *ring;
	unsigned int tail;              /* kernel SQ tail after our submit */
	int have_tail;
	unsigned int n_slots;
	struct ag_file **slots;         /* NULL, UNCERTAIN, or referenced */
	int slots_lost;                 /* no memory to record them: every
					 * slot is uncertain */
	struct ring_state *next;
};

struct ag_held {
	unsigned int n, cap;
	struct ag_sched **v;
};

static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ring_state *rings;

/*
 * The ring this thread walked last, so that its next walk and the release
 * after each find the state without the ring lock (a liburing ring is
 * used by one thread at a time).  Trusted while the ring has the same fd
 * and SQ mapping and no ring has been forgotten since: only forgetting
 * frees a state.
 */
struct last_ring {
	struct io_uring *ring;
	int ring_fd;
	void *sq_ring;
	unsigned int forgotten;         /* rings_forgotten when it was set */
	struct ring_state *r;
};

static __thread struct last_ring last_ring
	__attribute__((tls_model("initial-exec")));
static atomic_uint rings_forgotten;

/* ---- ring state ---- */

static void slot_set(struct ag_file **slot, struct ag_file *f)
{
	if (*slot > UNCERTAIN)
		ag_file_unref(*slot);
	*slot = f;
}

static void slots_free(struct ring_state *r)
{
	for (unsigned int i = 0; i < r->n_slots; i++)
		slot_set(&r->slots[i], NULL);
	free(r->slots);
	r->slots = NULL;
	r->n_slots = 0;
	r->slots_lost = 0;
}

/* The state of ring (lock held), made or reset as needed; NULL when
 * memory runs out. */
static struct ring_state *ring_get(struct io_uring *ring)
{
	struct ring_state *r;
	for (r = rings; r; r = r->next)
		if (r->ring_fd == ring->ring_fd)
			break;
	if (r && r->sq_ring != ring->sq.ring_ptr) {
		slots_free(r);             /* the fd number was reused */
		r->have_tail = 0;
	}
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return NULL;
		r->ring_fd = ring->ring_fd;
		r->next = rings;
		rings = r;
	}
	r->sq_ring = ring->sq.ring_ptr;
	r->ring = ring;
	return r;
}

/*
 * The ring lock guards the list of rings, not a ring's walk: a liburing
 * ring is used by one thread at a time (it is not thread safe), and the
 * walk may wait for another thread's hold on a schedule.  The ring this
 * thread walked last is found without it.
 */
static struct ring_state *ring_enter(struct io_uring *ring)
{
	struct last_ring *l = &last_ring;
	if (l->ring == ring && l->ring_fd == ring->ring_fd &&
	    l->sq_ring == ring->sq.ring_ptr &&
	    l->forgotten == atomic_load_explicit(&rings_forgotten,
						 memory_order_acquire))
		return l->r;
	pthread_mutex_lock(&ring_lock);
	unsigned int forgotten = atomic_load(&rings_forgotten);
	struct ring_state *r = ring_get(ring);
	pthread_mutex_unlock(&ring_lock);
	if (r)
		*l = (struct last_ring){ ring, ring->ring_fd,
					 ring->sq.ring_ptr, forgotten, r };
	return r;
}

static struct ring_state *ring_by_fd(int ring_fd)
{
	for (struct ring_state *r = rings; r; r = r->next)
		if (r->ring_fd == ring_fd)
			return r;
	return NULL;
}

void ag_ring_forget(int ring_fd)
{
	pthread_mutex_lock(&ring_lock);
	for (struct ring_state **pp = &rings; *pp; pp = &(*pp)->next) {
		struct ring_state *r = *pp;
		if (r->ring_fd != ring_fd)
			continue;
		*pp = r->next;
		atomic_fetch_add_explicit(&rings_forgotten, 1,
					  memory_order_release);
		slots_free(r);
		free(r);
		break;
	}
	pthread_mutex_unlock(&ring_lock);
}

/* The device file behind fd (referenced), or NULL.  Only character
 * devices are asked their DRM name, so registering sockets and files
 * costs an fstat and sends them no ioctl. */
static struct ag_file *file_of_fd(int fd)
{
	struct ag_file *known = ag_fd_peek(fd);
	if (known == AG_FD_NOTDEV)
		return NULL;
	if (known == AG_FD_UNKNOWN) {
		struct stat st;
		if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode))
			return NULL;
	}
	return ag_fd_file(fd);
}

static void slots_update(struct ring_state *r, unsigned int off,
			 const int *files, unsigned int nr)
{
	for (unsigned int i = 0; i < nr && off + i < r->n_slots; i++) {
		int fd = -1;
		if (files && copy_from_user(&fd, (uintptr_t)&files[i],
					    sizeof(fd)) != 0)
			fd = -1;
		if (fd == IORING_REGISTER_FILES_SKIP)
			continue;
		errno = 0;
		struct ag_file *f = fd >= 0 ? file_of_fd(fd) : NULL;
		/* The device, but no memory to know it as such. */
		slot_set(&r->slots[off + i],
			 !f && errno == ENOMEM ? UNCERTAIN : f);
	}
}

void ag_ring_files_set(struct io_uring *ring, const int *files,
		       unsigned int nr)
{
	pthread_mutex_lock(&ring_lock);
	struct ring_state *r = ring_get(ring);
	if (r) {
		slots_free(r);
		r->slots = calloc(nr ? nr : 1, sizeof(*r->slots));
		if (r->slots) {
			r->n_slots = nr;
			slots_update(r, 0, files, nr);
		} else {
			r->slots_lost = nr != 0;
		}
	}
	pthread_mutex_unlock(&ring_lock);
}

void ag_ring_files_update(struct io_uring *ring, unsigned int off,
			  const int *files, unsigned int nr)
{
	pthread_mutex_lock(&ring_lock);
	struct ring_state *r = ring_get(ring);
	if (r)
		slots_update(r, off, files, nr);
	pthread_mutex_unlock(&ring_lock);
}

/* ---- slots changed by SQEs ---- */

/* Whether a path may name a device node: anything not absolute, or
 * under /dev (read without trusting the pointer). */
static int may_be_device_path(uint64_t path)
{
	char buf[5];
	if (copy_from_user(buf, path, 1) != 0 || buf[0] != '/')
		return 1;
	if (copy_from_user(buf, path, sizeof(buf)) != 0)
		return 1;
	return memcmp(buf, "/dev/", 5) == 0;
}

static void mark_uncertain_free(struct ring_state *r)
{
	for (unsigned int i = 0; i < r->n_slots; i++)
		if (!r->slots[i])
			r->slots[i] = UNCERTAIN;
}

/* Slot `index` may become a file that `may_be_device` says about, if
 * the SQE succeeds; it keeps its old file if not. */
static void slot_may_change(struct ring_state *r, unsigned int index,
			    int may_be_device)
{
	if (index == IORING_FILE_INDEX_ALLOC) {
		if (may_be_device)
			mark_uncertain_free(r);
		return;
	}
	if (index >= r->n_slots)
		return;
	struct ag_file **slot = &r->slots[index];
	if (*slot || may_be_device)
		slot_set(slot, UNCERTAIN);
}

static int fds_may_be_device(uint64_t fds, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		int fd;
		if (copy_from_user(&fd, fds + (uint64_t)i * sizeof(fd),
				   sizeof(fd)) != 0)
			return 1;
		struct ag_file *f = fd >= 0 ? file_of_fd(fd) : NULL;
		if (f) {
			ag_file_unref(f);
			return 1;
		}
	}
	return 0;
}

static void note_slot_change(struct ring_state *r,
			     const struct io_uring_sqe *sqe)
{
	if (!r->n_slots)
		return;
	switch (sqe->opcode) {
	case IORING_OP_OPENAT:
	case IORING_OP_OPENAT2:
		if (sqe->file_index)
			slot_may_change(r, sqe->file_index == IORING_FILE_INDEX_ALLOC
					   ? IORING_FILE_INDEX_ALLOC
					   : sqe->file_index - 1,
					may_be_device_path(sqe->addr));
		break;
	case IORING_OP_ACCEPT:
	case IORING_OP_SOCKET:
	case IORING_OP_CLOSE:
		if (sqe->file_index && sqe->file_index != IORING_FILE_INDEX_ALLOC)
			slot_may_change(r, sqe->file_index - 1, 0);
		break;
	case IORING_OP_FILES_UPDATE: {
		/* Only the fds that can land in a slot: len is the
		 * application's, up to 2^32 - 1 (fuzz_guard). */
		unsigned int off = (unsigned int)sqe->off;
		int alloc = off == IORING_FILE_INDEX_ALLOC;
		unsigned int room = alloc ? r->n_slots
			: off < r->n_slots ? r->n_slots - off : 0;
		unsigned int n = sqe->len < room ? sqe->len : room;
		int dev = fds_may_be_device(sqe->addr, n);
		if (alloc)
			slot_may_change(r, IORING_FILE_INDEX_ALLOC, dev);
		else
			for (unsigned int i = 0; i < n; i++)
				slot_may_change(r, off + i, dev);
		break;
	}
	default:
		break;
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
	atomic_fetch_add(&s->refs, 1);
	s->holds++;
	h->v[h->n++] = s;
	return 0;
}

void ag_uring_release(struct io_uring *ring, struct ag_held *h)
{
	for (unsigned int i = 0; h && i < h->n; i++) {
		struct ag_sched *s = h->v[i];
		pthread_mutex_lock(&s->lock);
		if (--s->holds == 0)
			pthread_cond_broadcast(&s->released);
		pthread_mutex_unlock(&s->lock);
		ag_sched_unref(s);
	}
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
		r->tail = io_uring_smp_load_acquire(ring->sq.ktail);
		r->have_tail = 1;
	}
}

/* ---- one SQE ---- */


static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

struct walk {
	struct io_uring *ring;
	struct ring_state *r;           /* NULL: no memory for it */
	struct ag_held *held;
	int chain_blocked;              /* an earlier SQE of this link chain */
	int chain_may_fail;             /* an earlier SQE of this chain has
					 * IOSQE_IO_LINK: if it fails, the
					 * kernel cancels the rest */
};

/* ---- the URING_CMD front end (request.c has the handlers) ---- */

/* One device command being checked. */
struct uring_call {
	struct walk *w;
	struct io_uring_sqe *sqe;
};

/*
 * The SQE becomes exactly the request the handler approved: its command
 * and the whole argument the guard checked (an approved submit carries
 * the mirror's seal, so that a thread rewriting the SQE after this gets
 * a refused submission, never another schedule run).  An append linked
 * after a request that may fail and cancel it cannot be known taken:
 * without seals its schedule is then blocked.
 */
static int uring_forward(struct ag_call *c, struct ag_sched *s,
			 unsigned int cmd, void *arg)
{
	struct uring_call *u = c->ctx;
	const struct ag_request *req = ag_request_by_nr(_IOC_NR(cmd));
	assert(req && req->uring_op && req->uring_size <= CMD_BYTES);
	u->sqe->cmd_op = req->uring_op;
	memcpy(u->sqe->cmd, arg, req->uring_size);
	memset(u->sqe->cmd + req->uring_size, 0, CMD_BYTES - req->uring_size);
	/* No CQE is seen here: mirrored, but maybe never taken, and later
	 * appends would then be certified with references the driver does
	 * not have (fuzz_guard).  On a sealed file that divergence ends in
	 * refused submits (the seals differ), never in an uncertified run,
	 * so an application linking appends to appends and the submit
	 * (ordinary: the submit runs only if all were taken) keeps its
	 * schedule. */
	if (s && req->uring_op == ARENA_URING_CMD_APPEND &&
	    ((const struct drm_arena_schedule_append *)arg)->count &&
	    u->w->chain_may_fail && !c->f->sealed)
		ag_sched_poison(s, "an io_uring append linked after a request "
				"that may fail and cancel it: the guard cannot "
				"know whether the driver took it");
	return 0;
}

/* Another thread's submit of s is between its check and the driver.
 * Wait for it, unless this walk holds schedules itself: two walks could
 * then wait for each other.  EBUSY is the driver's answer to an append
 * while the schedule executes, which it is about to. */
static int uring_wait_holds(struct ag_call *c, struct ag_sched *s)
{
	struct walk *w = ((struct uring_call *)c->ctx)->w;
	unsigned int own = own_holds(w->held, s);
	if (s->holds > own && w->held && w->held->n > 0)
		return -EBUSY;
	ag_sched_wait_holds(s, own);
	return 0;
}

static int uring_keep(struct ag_call *c, struct ag_sched *s)
{
	struct walk *w = ((struct uring_call *)c->ctx)->w;
	if (hold(&w->held, s) != 0)
		return ag_no_memory("URING_CMD SUBMIT");  /* cannot keep it
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
 * handled: 0 or -errno (the SQE then fails with it). */
static int handle_cmd(struct walk *w, struct ag_file *f,
		      struct io_uring_sqe *sqe, const struct ag_request *req)
{
	uint64_t arg[CMD_BYTES / 8] = { 0 };
	assert(req->size <= sizeof(arg));
	memcpy(arg, sqe->cmd, req->uring_size);
	struct uring_call u = { w, sqe };
	/* A registered slot has no fd: name one the file was seen on. */
	int fd = sqe->flags & IOSQE_FIXED_FILE ? f->fd : sqe->fd;
	struct ag_call c = { &uring_front, f, fd, &u };
	return req->handle(&c, arg);
}

/* The device file an SQE is aimed at (referenced), NULL, or UNCERTAIN;
 * NULL with errno ENOMEM for the device without memory to know it. */
static struct ag_file *target(struct walk *w, const struct io_uring_sqe *sqe)
{
	errno = 0;
	if (!(sqe->flags & IOSQE_FIXED_FILE))
		return sqe->fd >= 0 ? file_of_fd(sqe->fd) : NULL;
	if (!w->r || w->r->slots_lost)
		return UNCERTAIN;
	if (sqe->fd < 0 || (unsigned int)sqe->fd >= w->r->n_slots)
		return NULL;
	struct ag_file *f = w->r->slots[sqe->fd];
	if (f > UNCERTAIN)
		ag_file_ref(f);
	return f;
}

/* A command answered here, never handed to the driver: the kernel
 * cancels the rest of its link chain, and so does the walk. */
static void fail_cmd(struct walk *w, struct io_uring_sqe *sqe, int rc)
{
	sqe_complete_with(sqe, rc);
	if (sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK))
		w->chain_blocked = 1;
}

static void check_cmd(struct walk *w, struct io_uring_sqe *sqe)
{
	const struct ag_request *req = ag_request_by_uring_op(sqe->cmd_op);
	if (!req)
		return;
	struct ag_file *f = target(w, sqe);
	if (!f && errno == ENOMEM)
		fail_cmd(w, sqe, ag_no_memory("a URING_CMD"));
	if (!f)
		return;
	int rc;
	if (f == UNCERTAIN) {
		ag_report_once("uncertain slot", "a URING_CMD on registered "
			       "file slot %d of ring fd %d: an earlier SQE may "
			       "have put the device there, or memory ran out "
			       "when it was registered, and the guard cannot "
			       "know; %s", sqe->fd, w->ring->ring_fd,
			       ag_cfg.mode == AG_ENFORCE ? "blocked"
							 : "not checked");
		if (ag_cfg.mode == AG_ENFORCE)
			fail_cmd(w, sqe, -EPERM);
		return;
	}
	size_t arg = req->uring_size;
	if (!(w->ring->flags & IORING_SETUP_SQE128))
		rc = 0;    /* no payload: the driver refuses it unread */
	else if (w->chain_blocked)
		rc = -ECANCELED;   /* what the kernel will say anyway */
	else if (sqe->__pad1 || sqe->uring_cmd_flags ||
		 !all_zero(sqe->cmd + arg, CMD_BYTES - arg))
		rc = -EINVAL;      /* uapi.h: nonzero padding */
	else
		rc = handle_cmd(w, f, sqe, req);
	ag_file_unref(f);
	if (rc < 0)
		fail_cmd(w, sqe, rc);
}

static void check_sqe(struct walk *w, struct io_uring_sqe *sqe)
{
	int linked = sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK);
	if (sqe->opcode == IORING_OP_URING_CMD)
		check_cmd(w, sqe);
	else if (w->r)
		note_slot_change(w->r, sqe);
	if (sqe->flags & IOSQE_IO_LINK)
		w->chain_may_fail = 1;
	if (!linked)
		w->chain_blocked = w->chain_may_fail = 0;
}

/* ---- walking ---- */

static struct io_uring_sqe *sqe_at(struct io_uring *ring, unsigned int index)
{
	unsigned int shift = ring->flags & IORING_SETUP_SQE128 ? 1 : 0;
	return &ring->sq.sqes[(index & *ring->sq.kring_mask) << shift];
}

/*
 * SQEs in the kernel's ring that did not pass here (the application
 * wrote the SQ ring itself): those the kernel has not taken yet are
 * checked, the others counted and reported.
 */
static void check_unseen(struct walk *w)
{
	struct io_uring *ring = w->ring;
	struct ring_state *r = w->r;
	unsigned int ktail = io_uring_smp_load_acquire(ring->sq.ktail);
	unsigned int khead = io_uring_smp_load_acquire(ring->sq.khead);
	if (!r->have_tail) {
		/* First sight: what the kernel has not taken yet is still
		 * to be checked, even if it was published by hand before
		 * (fuzz_guard). */
		r->tail = khead;
		r->have_tail = 1;
	}
	if (ktail == r->tail)
		return;
	unsigned int from = r->tail;
	if ((int)(khead - from) > 0) {
		atomic_fetch_add(&ag_stats.unchecked_sqes, khead - from);
		ag_report_once("unseen sqes", "ring fd %d: %u SQEs reached the "
			       "kernel without passing liburing's submit "
			       "functions (a hand-written SQ ring, or raw "
			       "io_uring_enter); the guard did not check them",
			       ring->ring_fd, khead - from);
		from = khead;
	}
	for (unsigned int i = from; i != ktail; i++) {
		unsigned int index = ring->sq.array
			? ring->sq.array[i & *ring->sq.kring_mask] : i;
		check_sqe(w, sqe_at(ring, index));
	}
	r->tail = ktail;
}

struct ag_held *ag_uring_check(struct io_uring *ring)
{
	struct walk w = { ring, ring_enter(ring), NULL, 0, 0 };
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
	for (unsigned int i = from; i != sq->sqe_tail; i++)
		check_sqe(&w, sqe_at(ring, i));
	return w.held;
}

struct ag_held *ag_uring_enter_check(int ring_fd, unsigned int to_submit)
{
	if (!to_submit)
		return NULL;
	pthread_mutex_lock(&ring_lock);
	struct ring_state *r = ring_by_fd(ring_fd);
	pthread_mutex_unlock(&ring_lock);
	if (!r) {
		ag_report_once("unknown ring enter", "io_uring_enter() on ring "
			       "fd %d, which never passed liburing's submit "
			       "functions: its SQEs are not checked", ring_fd);
		return NULL;
	}
	struct walk w = { r->ring, r, NULL, 0, 0 };
	check_unseen(&w);
	return w.held;
}

/* ---- fork ---- */

void ag_uring_lock_all(void)
{
	pthread_mutex_lock(&ring_lock);
}

void ag_uring_unlock_all(int child)
{
	(void)child;
	pthread_mutex_unlock(&ring_lock);
}
