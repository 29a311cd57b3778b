/* SPDX-License-Identifier: MIT */
/*
 * The driver's objects, mirrored per open file: handle -> program (the
 * shared, certified struct ag_program) and handle -> schedule (the
 * references appended so far, their digest, and the incremental
 * ac_schedule that advances (D) as they come).
 *
 * The mirror follows the driver, never the application: an object enters
 * it only when the driver has created it, and creates and destroys are
 * forwarded one at a time per file (its objects lock, held across the
 * driver's call), so that a handle the driver reuses at once (lowest
 * free first) cannot be confused with the object it named before.  The
 * maps have their own lock, held only for a lookup or an update, never
 * across the driver: a driver slow to create or destroy delays that
 * file's other creates and destroys, not its appends and submits.
 * Appends and submits take only the schedule's lock (after a lookup
 * under the maps'), which a destroy also takes: a destroyed schedule is
 * marked dead and a waiter looks again.
 *
 * Each schedule also keeps uapi.h's seal of exactly what the guard
 * forwarded (its program's image copy and the references), updated as
 * batches are mirrored, so that a submit forwards it without hashing.
 *
 * A schedule starts lazy: no ac_schedule, only the references and their
 * digest.  If the digest after an append is a hint (a prefix of a
 * schedule decided before), it stays lazy; otherwise it is materialised
 * (ac_schedule_new and the references so far) and from then on every
 * append advances (D) at once, so that its submit finds the verdict
 * known.  A submit reads the verdict from the schedule itself when
 * nothing was appended since its last one, else from the verdict cache
 * by digest (bytes compared), else from the ac_schedule, once, and
 * publishes it (ag_sched_verdict; decide.c decides with it).
 *
 * The structs are this file's alone.  Files are never freed, only
 * emptied and reused: a reader of the fd table (devices.c) that loaded a
 * pointer just before the fd was closed may still touch the struct, and
 * takes its reference only if the count is not zero (ag_file_try_ref)
 * and the slot still holds the same pointer afterwards.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "handles.h"
#include "mirror.h"
#include "stats.h"
#include "util.h"
#include "usercopy.h"

struct ag_file {
	atomic_uint refcount;
	pthread_mutex_t lock;       /* the maps, held for a lookup or an
				     * update, never across the driver */
	pthread_mutex_t objects;    /* creates and destroys, held across
				     * the driver's call: their order */
	struct ag_handles programs; /* handle -> struct ag_program */
	struct ag_handles schedules;/* handle -> struct ag_sched */
	int fd;                     /* an fd it was seen on, for reports;
				     * -2: emptied, reusable (files_lock) */
	/* Set once by ag_file_seal before the file is published in the
	 * fd table, cleared by teardown: */
	int sealed;                 /* the driver checks seals on it */
	uint32_t algorithms;        /* the seal algorithms it offers */
	uint64_t context;           /* the driver's context id, or 0 */
	struct ag_file *all_next;   /* every file ever made (fork walks) */
};

struct ag_sched {
	atomic_uint refcount;
	pthread_mutex_t lock;
#ifndef NDEBUG
	const char *locked_by;      /* the holder of lock (its this_thread),
				     * or NULL: asserts only */
#endif
	pthread_cond_t released;    /* holds dropped to 0 */
	unsigned int holds;         /* io_uring submits and appends between
				     * check and the driver: appends wait,
				     * destroys are refused (EBUSY) */
	int dead;                   /* destroyed: a retry must look again */
	uint32_t handle, program_handle;
	struct ag_program *program; /* NULL: unknown to the guard */
	struct ag_refs *refv;       /* every reference appended */
	uint64_t n_refs;
	ac_digester *digester;      /* digest of program + refs so far */
	ac_schedule *sched;         /* NULL while lazy */
	char poison[256];           /* why the mirror cannot be trusted */
	struct ag_block *blocks;
	struct ac_digest *prefixes; /* digest after each append batch */
	uint64_t n_prefixes, cap_prefixes;
	struct ag_verdict *last;    /* decided for n_refs == last->n_refs */
	/* uapi.h's seal of exactly the image and references the guard
	 * forwarded, its value kept current at append time so that a
	 * submit reads it (valid while the schedule is recorded). */
	struct arena_seal seal;
	struct arena_seal_value seal_value;
};

#ifndef NDEBUG
/* Its address names the calling thread (cheaper than pthread_self). */
static __thread char this_thread __attribute__((tls_model("initial-exec")));
#define LOCKED_BY(s, who) ((s)->locked_by = (who))
#else
#define LOCKED_BY(s, who) ((void)0)
#endif

/* s's lock, taken and dropped through these (fork's lock_all aside, under
 * which nothing asserts): in debug builds they remember the holder, so
 * that "s locked" is asserted (locked_sched). */
static void sched_mutex_lock(struct ag_sched *s)
{
	pthread_mutex_lock(&s->lock);
	LOCKED_BY(s, &this_thread);
}

static void sched_mutex_unlock(struct ag_sched *s)
{
	LOCKED_BY(s, NULL);
	pthread_mutex_unlock(&s->lock);
}

#ifndef NDEBUG
/* Whether this thread holds s's lock (asserts only). */
static int locked_sched(const struct ag_sched *s)
{
	return s && s->locked_by == &this_thread;
}
#endif

/* Drops a reference from *count (there was one: asserted): whether it
 * was the last. */
static int drop_ref(atomic_uint *count)
{
	unsigned int was = atomic_fetch_sub(count, 1);
	assert(was > 0);
	return was == 1;
}

/* ---- files ---- */

/* Every file ever made, newest first; append-only, so it can be walked
 * without a lock (fork). */
static _Atomic(struct ag_file *) all_files;
static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int reusable_files;

static void file_teardown(struct ag_file *f);

int ag_file_try_ref(struct ag_file *f)
{
	assert(f);
	unsigned int n = atomic_load(&f->refcount);
	while (n != 0)
		if (atomic_compare_exchange_weak(&f->refcount, &n, n + 1))
			return 1;
	return 0;
}

void ag_file_ref(struct ag_file *f)
{
	assert(f && atomic_load(&f->refcount) > 0);
	atomic_fetch_add(&f->refcount, 1);
}

void ag_file_unref(struct ag_file *f)
{
	if (!f || !drop_ref(&f->refcount))
		return;
	file_teardown(f);
	pthread_mutex_lock(&files_lock);
	f->fd = -2;                       /* reusable */
	atomic_fetch_add(&reusable_files, 1);
	pthread_mutex_unlock(&files_lock);
}

struct ag_file *ag_file_new(void)
{
	pthread_mutex_lock(&files_lock);
	struct ag_file *f = NULL;
	if (atomic_load(&reusable_files) > 0) {
		for (f = atomic_load(&all_files); f; f = f->all_next)
			if (f->fd == -2 && atomic_load(&f->refcount) == 0)
				break;
	}
	if (f) {
		atomic_fetch_sub(&reusable_files, 1);
		f->fd = -1;
		atomic_store(&f->refcount, 1);
		pthread_mutex_unlock(&files_lock);
		return f;
	}
	f = calloc(1, sizeof(*f));
	if (f) {
		pthread_mutex_init(&f->lock, NULL);
		pthread_mutex_init(&f->objects, NULL);
		f->fd = -1;
		atomic_store(&f->refcount, 1);
		f->all_next = atomic_load(&all_files);
		atomic_store(&all_files, f);
	}
	pthread_mutex_unlock(&files_lock);
	return f;
}

void ag_file_seen_on(struct ag_file *f, int fd)
{
	assert(f && fd >= 0);
	/* ag_file_new reads it, under the list lock, to find reusable
	 * files. */
	pthread_mutex_lock(&files_lock);
	if (f->fd < 0)
		f->fd = fd;
	pthread_mutex_unlock(&files_lock);
}

int ag_file_fd(const struct ag_file *f)
{
	assert(f);
	return f->fd;
}

void ag_file_seal(struct ag_file *f, uint64_t context, uint32_t algorithms)
{
	assert(f && context != 0 && !f->sealed);
	f->sealed = 1;
	f->algorithms = algorithms;
	f->context = context;
}

uint32_t ag_file_seal_algorithm(const struct ag_file *f, uint32_t *offered)
{
	assert(f && offered);
	*offered = f->algorithms;
	/* An unsealed file: a sealed request the application makes itself
	 * goes to the driver with the one algorithm the guard computes
	 * (its answer, EINVAL from a driver without seals, is the
	 * application's). */
	return f->sealed ? arena_seal_pick(f->algorithms) : ARENA_SEAL_SHA256;
}

int ag_file_sealed(const struct ag_file *f)
{
	assert(f);
	return f->sealed;
}

uint64_t ag_file_context(const struct ag_file *f)
{
	assert(f);
	return f->context;
}

unsigned int ag_file_refcount(const struct ag_file *f)
{
	assert(f);
	return atomic_load(&f->refcount);
}

void ag_file_objects(struct ag_file *f, uint32_t *programs,
		     uint32_t *schedules)
{
	assert(f);
	pthread_mutex_lock(&f->lock);
	*programs = f->programs.used;
	*schedules = f->schedules.used;
	pthread_mutex_unlock(&f->lock);
}

/* Has the driver destroy what it has just created for a request the
 * guard could not record: no object is left that the guard does not
 * know. */
static void undo_create(ag_driver_fn *driver, int fd, unsigned int destroy,
			uint32_t handle)
{
	struct drm_arena_handle h = { .handle = handle };
	driver(fd, destroy, &h);
}

/* ---- programs ---- */

/* Records handle -> p (taking the caller's reference; p NULL: no memory
 * for it).  Without memory for the entry the create is undone: 0 or
 * -ENOMEM (o->no_memory set).  Objects lock held. */
static int put_program(struct ag_file *f, ag_driver_fn *driver, int fd,
		       uint32_t handle, struct ag_program *p,
		       struct ag_create_outcome *o)
{
	int err = -ENOMEM;
	if (p) {
		pthread_mutex_lock(&f->lock);
		struct ag_program *old = ag_handles_put(&f->programs, handle, p,
							&err);
		pthread_mutex_unlock(&f->lock);
		ag_program_unref(old);
	}
	if (!err)
		return 0;
	ag_program_unref(p);
	undo_create(driver, fd, DRM_IOCTL_ARENA_PROGRAM_DESTROY, handle);
	o->no_memory = 1;
	return -ENOMEM;
}

/* The guard could not read the image: the driver gives its own error
 * (EFAULT); if it takes the image after all (another thread mapped it
 * meanwhile), the program is one the guard cannot certify. */
static int create_unread(struct ag_file *f, ag_driver_fn *driver, int fd,
			 struct drm_arena_program_create *arg,
			 struct ag_create_outcome *o)
{
	pthread_mutex_lock(&f->objects);
	int rc = driver(fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, arg);
	if (rc == 0)
		rc = put_program(f, driver, fd, arg->handle, ag_program_unreadable(
			"the guard could not read the image the driver took"), o);
	pthread_mutex_unlock(&f->objects);
	return rc;
}

/* Bytes copied from the application and digested at a time: a chunk
 * is hashed while it is still in the CPU's L2 cache, and each costs the
 * copy a system call (process_vm_readv) where the memory is not on the
 * stack. */
#define CREATE_CHUNK ((size_t)256 << 10)

/*
 * The one read of the application's image [src, src + len) into image,
 * and its program-cache key (ac_image_digest) in the same pass: each
 * chunk is digested from the guard's copy just after it is copied, not
 * from the application's memory (which other threads may be writing)
 * and not in a second pass over the whole copy.  0; -EFAULT when a byte
 * cannot be read (the driver's answer, copy_from_user); -ENOMEM.
 */
static int copy_image(uint8_t *image, uint64_t src, size_t len,
		      struct ac_digest *digest)
{
	/* A range that wraps is refused whole, before any chunk is read,
	 * as the driver's access_ok refuses it. */
	if (len > UINT64_MAX - src)
		return -EFAULT;
	ac_image_digester *d = ac_image_digester_new();
	if (!d)
		return -ENOMEM;
	int rc = 0;
	for (size_t at = 0; rc == 0 && at < len; at += CREATE_CHUNK) {
		size_t n = len - at < CREATE_CHUNK ? len - at : CREATE_CHUNK;
		rc = copy_from_user(image + at, src + at, n);
		if (rc == 0)
			ac_image_digester_add(d, image + at, n);
	}
	if (rc == 0)
		ac_image_digester_value(d, digest);
	ac_image_digester_free(d);
	assert(rc == 0 || rc == -EFAULT);
	return rc;
}

int ag_mirror_program_create(struct ag_file *f, ag_driver_fn *driver,
			     int fd, struct drm_arena_program_create *arg,
			     struct ag_create_outcome *o)
{
	*o = (struct ag_create_outcome){ 0 };
	/* Without memory to copy and certify the image, the driver is not
	 * asked: ENOMEM, as from a driver that cannot allocate, and the
	 * application may try again. */
	size_t len = (size_t)arg->size;
	uint8_t *image = arg->size < SIZE_MAX ? malloc(len ? len : 1) : NULL;
	if (!image) {
		o->no_memory = 1;
		return -ENOMEM;
	}
	/* The one read of the application's image: what is certified is
	 * what the driver gets, whatever other threads write meanwhile. */
	struct ac_digest digest;
	int copied = copy_image(image, arg->image, len, &digest);
	if (copied != 0) {
		free(image);
		if (copied == -ENOMEM) {
			o->no_memory = 1;
			return -ENOMEM;
		}
		return create_unread(f, driver, fd, arg, o);
	}
	struct ag_program *p = ag_program_get_digested(image, len, &digest);
	if (!p) {
		o->no_memory = 1;
		return -ENOMEM;
	}

	uint64_t user_image = arg->image;
	arg->image = (uintptr_t)p->image;
	struct ag_program *malformed = p->error ? p : NULL;
	if (malformed)
		atomic_fetch_add(&malformed->refcount, 1);
	pthread_mutex_lock(&f->objects);
	int rc = driver(fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, arg);
	o->taken = rc == 0;
	if (rc == 0)
		rc = put_program(f, driver, fd, arg->handle, p, o);
	else
		ag_program_unref(p);
	pthread_mutex_unlock(&f->objects);
	arg->image = user_image;
	o->malformed = malformed;
	return rc;
}

int ag_mirror_program_destroy(struct ag_file *f, ag_driver_fn *driver,
			      int fd, struct drm_arena_handle *arg)
{
	pthread_mutex_lock(&f->objects);
	int rc = driver(fd, DRM_IOCTL_ARENA_PROGRAM_DESTROY, arg);
	struct ag_program *p = NULL;
	if (rc == 0) {
		pthread_mutex_lock(&f->lock);
		p = ag_handles_del(&f->programs, arg->handle);
		pthread_mutex_unlock(&f->lock);
	}
	pthread_mutex_unlock(&f->objects);
	ag_program_unref(p);
	return rc;
}

/* ---- schedules ---- */

/* A schedule of p (NULL: unknown to the guard) whose handle the driver
 * has yet to give; NULL when memory runs out. */
static struct ag_sched *sched_new(uint32_t program_handle,
				  struct ag_program *p)
{
	struct ag_sched *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (p && !p->error && !(s->digester = ac_digester_new(&p->digest))) {
		free(s);
		return NULL;
	}
	atomic_store(&s->refcount, 1);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->released, NULL);
	s->program_handle = program_handle;
	if (!p) {
		snprintf(s->poison, sizeof(s->poison), "its program %u was "
			 "not created through the guard", program_handle);
		return s;
	}
	atomic_fetch_add(&p->refcount, 1);
	s->program = p;
	s->seal = p->seal;
	arena_seal_value(&s->seal, &s->seal_value);
	return s;
}

void ag_sched_unref(struct ag_sched *s)
{
	if (!s || !drop_ref(&s->refcount))
		return;
	assert(s->holds == 0);          /* a hold keeps a reference */
	ac_schedule_free(s->sched);
	ac_digester_free(s->digester);
	ag_refs_unref(s->refv);
	while (s->blocks) {
		struct ag_block *b = s->blocks;
		s->blocks = b->next;
		free(b);
	}
	free(s->prefixes);
	ag_verdict_unref(s->last);
	ag_program_unref(s->program);
	pthread_cond_destroy(&s->released);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int ag_mirror_schedule_create(struct ag_file *f, ag_driver_fn *driver,
			      int fd, struct drm_arena_schedule_create *arg,
			      struct ag_create_outcome *o)
{
	*o = (struct ag_create_outcome){ 0 };
	pthread_mutex_lock(&f->objects);
	/* Made first: without memory for it the driver is not asked.  Its
	 * program stays (a destroy waits for the objects lock). */
	pthread_mutex_lock(&f->lock);
	struct ag_sched *s = sched_new(arg->program,
				       ag_handles_get(&f->programs,
						      arg->program));
	pthread_mutex_unlock(&f->lock);
	o->no_memory = !s;
	int rc = s ? driver(fd, DRM_IOCTL_ARENA_SCHEDULE_CREATE, arg)
		   : -ENOMEM;
	if (rc == 0) {
		s->handle = arg->handle;
		int err;
		pthread_mutex_lock(&f->lock);
		struct ag_sched *old = ag_handles_put(&f->schedules,
						      arg->handle, s, &err);
		pthread_mutex_unlock(&f->lock);
		if (old) {
			old->dead = 1;
			ag_sched_unref(old);
		}
		if (err) {
			undo_create(driver, fd, DRM_IOCTL_ARENA_SCHEDULE_DESTROY,
				    arg->handle);
			o->no_memory = 1;
			rc = -ENOMEM;
		}
	}
	if (rc != 0)
		ag_sched_unref(s);
	pthread_mutex_unlock(&f->objects);
	return rc;
}

int ag_mirror_schedule_destroy(struct ag_file *f, ag_driver_fn *driver,
			       int fd, struct drm_arena_handle *arg)
{
	pthread_mutex_lock(&f->objects);
	pthread_mutex_lock(&f->lock);
	struct ag_sched *s = ag_handles_get(&f->schedules, arg->handle);
	if (s)
		atomic_fetch_add(&s->refcount, 1);
	pthread_mutex_unlock(&f->lock);
	/* Its lock (held across the driver's call) keeps its own appends
	 * and submits out, the objects lock every create; the maps stay
	 * free for the file's other schedules. */
	if (s)
		sched_mutex_lock(s);
	/* An io_uring submit or append of it, approved, has yet to reach
	 * the driver: EBUSY, the driver's answer for a schedule about to
	 * execute.  Were it destroyed now, a new schedule could take the
	 * handle first (and the append land in it). */
	int rc = s && s->holds ? -EBUSY
		 : driver(fd, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, arg);
	if (s) {
		if (rc == 0)
			s->dead = 1;     /* a waiter looks again */
		sched_mutex_unlock(s);
		if (rc == 0) {
			/* After its lock: the maps' is never taken under a
			 * schedule's (fork takes them in that order). */
			pthread_mutex_lock(&f->lock);
			struct ag_sched *was = ag_handles_del(&f->schedules,
							      arg->handle);
			pthread_mutex_unlock(&f->lock);
			assert(was == s);
			ag_sched_unref(was);
		}
		ag_sched_unref(s);
	}
	pthread_mutex_unlock(&f->objects);
	return rc;
}

struct ag_sched *ag_sched_lock(struct ag_file *f, uint32_t handle)
{
	for (;;) {
		pthread_mutex_lock(&f->lock);
		struct ag_sched *s = ag_handles_get(&f->schedules, handle);
		if (s)
			atomic_fetch_add(&s->refcount, 1);
		pthread_mutex_unlock(&f->lock);
		if (!s)
			return NULL;
		sched_mutex_lock(s);
		if (!s->dead)
			return s;
		sched_mutex_unlock(s);
		ag_sched_unref(s);
	}
}

int ag_mirror_if_unknown(struct ag_file *f, uint32_t handle,
			 int (*fn)(void *ctx), void *ctx)
{
	/* No create can give the handle to a new schedule before the
	 * driver has answered fn (the objects lock); the maps are free. */
	pthread_mutex_lock(&f->objects);
	pthread_mutex_lock(&f->lock);
	int known = ag_handles_get(&f->schedules, handle) != NULL;
	pthread_mutex_unlock(&f->lock);
	int rc = known ? 1 : fn(ctx);
	pthread_mutex_unlock(&f->objects);
	assert(rc <= 1);
	return rc;
}

void ag_sched_unlock(struct ag_sched *s)
{
	assert(locked_sched(s));
	sched_mutex_unlock(s);
	ag_sched_unref(s);
}

void ag_sched_wait_holds(struct ag_sched *s, unsigned int own)
{
	assert(locked_sched(s));
	while (s->holds > own) {
		/* Others take and drop the lock meanwhile. */
		pthread_cond_wait(&s->released, &s->lock);
		LOCKED_BY(s, &this_thread);
	}
}

int ag_sched_held_by_others(const struct ag_sched *s, unsigned int own)
{
	assert(locked_sched(s));
	return s->holds > own;
}

void ag_sched_hold(struct ag_sched *s)
{
	assert(locked_sched(s) && !s->dead);
	atomic_fetch_add(&s->refcount, 1);
	s->holds++;
}

void ag_sched_release(struct ag_sched *s)
{
	sched_mutex_lock(s);
	assert(s->holds > 0);
	if (--s->holds == 0)
		pthread_cond_broadcast(&s->released);
	sched_mutex_unlock(s);
	ag_sched_unref(s);
}

void ag_sched_keep_block(struct ag_sched *s, struct ag_block *b)
{
	assert(locked_sched(s) && b);
	b->next = s->blocks;
	s->blocks = b;
}

const char *ag_sched_poisoned(const struct ag_sched *s)
{
	assert(locked_sched(s));
	return s->poison[0] ? s->poison : NULL;
}

const struct ag_program *ag_sched_program(const struct ag_sched *s)
{
	assert(s);
	return s->program;
}

uint32_t ag_sched_program_handle(const struct ag_sched *s)
{
	assert(s);
	return s->program_handle;
}

uint64_t ag_sched_length(const struct ag_sched *s)
{
	assert(locked_sched(s));
	return s->n_refs;
}

void ag_sched_contents(const struct ag_sched *s, struct ag_program **p,
		       struct ag_refs **refv, uint64_t *n)
{
	assert(locked_sched(s));
	*p = s->program;
	if (*p)
		atomic_fetch_add(&(*p)->refcount, 1);
	*refv = s->refv;
	if (*refv)
		atomic_fetch_add(&(*refv)->refcount, 1);
	*n = s->n_refs;
}

int ag_sched_lazy(const struct ag_sched *s)
{
	assert(locked_sched(s));
	return s->sched == NULL;
}

const struct arena_seal_value *ag_sched_seal(const struct ag_sched *s)
{
	assert(locked_sched(s));
	return &s->seal_value;
}

void ag_sched_poison(struct ag_sched *s, const char *why)
{
	assert(locked_sched(s));
	if (!s->poison[0])
		snprintf(s->poison, sizeof(s->poison), "%s", why);
}

/* ac_schedule for the references so far: 0; -ENOMEM (it stays lazy,
 * to be tried again); -EINVAL (the mirror is poisoned).  s locked,
 * recorded, lazy. */
static int materialize(struct ag_sched *s)
{
	assert(locked_sched(s) && ag_sched_recorded(s) && !s->sched);
	struct ac_error err;
	char text[512];
	uint64_t start = ag_now_ns();
	s->sched = ac_schedule_new(s->program->prog);
	int rc = 0;
	if (!s->sched) {
		rc = -ENOMEM;
	} else if (s->n_refs &&
		   ac_schedule_append(s->sched, s->refv->v, s->n_refs, &err)) {
		char why[640];
		if (!err.where[0]) {
			/* Out of memory (an error without a location):
			 * stay lazy. */
			ac_schedule_free(s->sched);
			s->sched = NULL;
			rc = -ENOMEM;
		} else {
			/* Only references nobody checked get here: a lazy
			 * schedule whose hint was wrong, appended through
			 * io_uring. */
			snprintf(why, sizeof(why), "malformed schedule: %s",
				 ac_error_text(&err, text, sizeof(text)));
			ag_sched_poison(s, why);
			rc = -EINVAL;
		}
	}
	atomic_fetch_add(&ag_stats.certify_ns, ag_now_ns() - start);
	return rc;
}

/* Only a hint for rebuilds: without memory for it, a rebuild of this
 * schedule does (D) work that it could have skipped. */
static void push_prefix(struct ag_sched *s, const struct ac_digest *d)
{
	if (s->n_prefixes == s->cap_prefixes) {
		uint64_t cap = s->cap_prefixes ? 2 * s->cap_prefixes : 8;
		struct ac_digest *p = realloc(s->prefixes, cap * sizeof(*p));
		if (!p)
			return;
		s->prefixes = p;
		s->cap_prefixes = cap;
	}
	s->prefixes[s->n_prefixes++] = *d;
}

int ag_sched_recorded(const struct ag_sched *s)
{
	assert(locked_sched(s));
	return !s->poison[0] && s->program && !s->program->error;
}

int ag_sched_reserve(struct ag_sched *s, uint64_t n)
{
	assert(locked_sched(s));
	if (!ag_sched_recorded(s) || n == 0 || n > UINT64_MAX - s->n_refs)
		return 0;
	struct ag_refs *r = ag_refs_grow(s->refv, s->n_refs, s->n_refs + n);
	if (!r)
		return -ENOMEM;
	s->refv = r;
	return 0;
}

int ag_sched_malformed(struct ag_sched *s, const struct ac_ref *refs,
		       uint64_t n, struct ac_error *err)
{
	assert(locked_sched(s) && (refs || n == 0));
	if (!ag_sched_recorded(s) ||
	    (!s->sched && materialize(s) != 0))
		return 0;
	uint64_t executed = ac_schedule_executed(s->sched);
	for (uint64_t i = 0; i < n; i++)
		if (ac_program_check_ref(s->program->prog, &refs[i],
					 s->n_refs + i, &executed, err) != 0)
			return 1;
	return 0;
}

int ag_sched_append(struct ag_sched *s, const struct ac_ref *refs,
		    uint64_t n, struct ac_error *err)
{
	assert(locked_sched(s) && (refs || n == 0));
	/* Nothing to certify with: the submit is blocked anyway. */
	if (!ag_sched_recorded(s) || n == 0)
		return 0;
	if (n > UINT64_MAX - s->n_refs) {
		ag_sched_poison(s, "too many references");
		return -ENOMEM;
	}
	if (ag_sched_reserve(s, n) != 0)
		return -ENOMEM;             /* the mirror is unchanged */

	ac_digester_add(s->digester, refs, n);
	struct ac_digest d;
	ac_digester_value(s->digester, &d);

	/* Materialised unless a hint says a schedule like this was decided
	 * before.  Without memory for that it stays lazy: the batch is
	 * recorded, and (D) waits for the submit.  A poisoned mirror blocks
	 * every submit: accept the batch. */
	if (!s->sched && !ag_hint_has(&d) &&
	    materialize(s) == -EINVAL)
		return 0;
	if (s->sched) {
		uint64_t start = ag_now_ns();
		int rc = ac_schedule_append(s->sched, refs, n, err);
		atomic_fetch_add(&ag_stats.certify_ns, ag_now_ns() - start);
		if (rc != 0 && !err->where[0]) {
			/* Out of memory for (D) (an error without a
			 * location): the batch is still recorded, and (D)
			 * waits for the submit as for a lazy schedule. */
			ac_schedule_free(s->sched);
			s->sched = NULL;
		} else if (rc != 0) {
			ac_digester_undo(s->digester);
			return -EINVAL;
		}
	}
	assert(s->refv && s->refv->cap >= s->n_refs + n);   /* reserved */
	memcpy(&s->refv->v[s->n_refs], refs, n * sizeof(*refs));
	s->n_refs += n;
	push_prefix(s, &d);
	/* The driver's seal after this batch, read by every submit (which
	 * then costs a copy, not a SHA-256 finalization).  The batch is the
	 * guard's copy, just read by the digester, (D) and the memcpy above:
	 * it is hashed while it is still in the cache, not in another pass
	 * over the application's memory. */
	arena_seal_refs(&s->seal, (const struct drm_arena_ref *)refs, n);
	arena_seal_value(&s->seal, &s->seal_value);
	return 0;
}

/* ---- verdicts ---- */

/* Computes, publishes and returns (referenced) s's verdict; NULL when
 * it cannot (s is then poisoned, or memory ran out).  s locked,
 * recorded. */
static struct ag_verdict *compute(struct ag_sched *s,
				  const struct ac_digest *d)
{
	if (!s->sched && materialize(s) != 0)
		return NULL;
	struct ag_verdict *v = ag_verdict_new();
	if (!v)
		return NULL;
	uint64_t start = ag_now_ns();
	char text[4096];
	v->digest = *d;
	v->verdict = ac_schedule_verdict(s->sched, &v->diag);
	v->text = ag_strdup(ac_diag_render(&v->diag, s->program->prog, text,
					   sizeof(text)));
	atomic_fetch_add(&s->program->refcount, 1);
	v->program = s->program;
	if (s->refv)
		atomic_fetch_add(&s->refv->refcount, 1);
	v->refv = s->refv;
	v->n_refs = s->n_refs;
	atomic_fetch_add(&ag_stats.certify_ns, ag_now_ns() - start);
	atomic_fetch_add(&ag_stats.schedules_certified, 1);
	if (!v->text) {
		ag_verdict_unref(v);
		return NULL;
	}
	v = ag_verdict_publish(v);
	/* A rebuild of this schedule may stay lazy up to its submit. */
	ag_hints_add(s->prefixes, s->n_prefixes);
	return v;
}

struct ag_verdict *ag_sched_verdict(struct ag_sched *s)
{
	assert(locked_sched(s) && ag_sched_recorded(s));
	if (s->last && s->last->n_refs == s->n_refs) {
		atomic_fetch_add(&ag_stats.verdict_hits, 1);
		atomic_fetch_add(&s->last->refcount, 1);
		return s->last;
	}
	struct ac_digest d;
	ac_digester_value(s->digester, &d);
	struct ag_verdict *v = ag_verdict_find(&d, s->program,
					       s->refv ? s->refv->v : NULL,
					       s->n_refs);
	if (v) {
		atomic_fetch_add(&ag_stats.verdict_hits, 1);
		/* Built by different batches than the entry's schedule: its
		 * prefixes lead here too, for the next rebuild. */
		if (s->sched)
			ag_hints_add(s->prefixes, s->n_prefixes);
	} else {
		v = compute(s, &d);
	}
	if (v) {
		assert(v->n_refs == s->n_refs);
		atomic_fetch_add(&v->refcount, 1);
		ag_verdict_unref(s->last);
		s->last = v;
	}
	return v;
}

/* ---- teardown ---- */

static void program_unref_each(void *v)
{
	ag_program_unref(v);
}

static void sched_unref_each(void *v)
{
	struct ag_sched *s = v;
	sched_mutex_lock(s);
	s->dead = 1;
	sched_mutex_unlock(s);
	ag_sched_unref(s);
}

/* Who indexes files by context (attach.c's list), told of a teardown
 * before the file is emptied (ag_file_on_teardown). */
static _Atomic(void (*)(struct ag_file *)) teardown_hook;

void ag_file_on_teardown(void (*hook)(struct ag_file *f))
{
	atomic_store(&teardown_hook, hook);
}

/* f's last reference is gone: its objects and seal go (it is reused). */
static void file_teardown(struct ag_file *f)
{
	assert(atomic_load(&f->refcount) == 0);
	void (*hook)(struct ag_file *) = atomic_load(&teardown_hook);
	if (hook)
		hook(f);
	pthread_mutex_lock(&f->lock);
	ag_handles_each(&f->schedules, sched_unref_each);
	ag_handles_each(&f->programs, program_unref_each);
	ag_handles_free(&f->schedules);
	ag_handles_free(&f->programs);
	f->sealed = 0;
	f->algorithms = 0;
	f->context = 0;
	pthread_mutex_unlock(&f->lock);
}

/* ---- fork ---- */

static void sched_lock_each(void *v)
{
	pthread_mutex_lock(&((struct ag_sched *)v)->lock);
}

static void sched_unlock_each(void *v)
{
	pthread_mutex_unlock(&((struct ag_sched *)v)->lock);
}

static void sched_reset_each(void *v)
{
	struct ag_sched *s = v;
	/* The threads that held it are not in the child. */
	s->holds = 0;
	pthread_cond_init(&s->released, NULL);
	pthread_mutex_unlock(&s->lock);
}

void ag_mirror_lock_all(void)
{
	for (struct ag_file *f = atomic_load(&all_files); f; f = f->all_next) {
		pthread_mutex_lock(&f->objects);
		pthread_mutex_lock(&f->lock);
		ag_handles_each(&f->schedules, sched_lock_each);
	}
	pthread_mutex_lock(&files_lock);
}

void ag_mirror_unlock_all(int child)
{
	pthread_mutex_unlock(&files_lock);
	for (struct ag_file *f = atomic_load(&all_files); f; f = f->all_next) {
		ag_handles_each(&f->schedules,
				child ? sched_reset_each : sched_unlock_each);
		pthread_mutex_unlock(&f->lock);
		pthread_mutex_unlock(&f->objects);
	}
}
