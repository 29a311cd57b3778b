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
 * known.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "usercopy.h"

/* Has the driver destroy what it has just created for a request the
 * guard could not record: no object is left that the guard does not
 * know. */
static void undo_create(int fd, unsigned int destroy, uint32_t handle)
{
	struct drm_arena_handle h = { .handle = handle };
	ag_driver_ioctl(fd, destroy, &h);
}

/* ---- programs ---- */

/* Records handle -> p (taking the caller's reference; p NULL: no memory
 * for it).  Without memory for the entry the create is undone: 0 or
 * -ENOMEM.  Objects lock held. */
static int put_program(struct ag_file *f, int fd, uint32_t handle,
		       struct ag_program *p)
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
	undo_create(fd, DRM_IOCTL_ARENA_PROGRAM_DESTROY, handle);
	return ag_no_memory("PROGRAM_CREATE");
}

/* The guard could not read the image: the driver gives its own error
 * (EFAULT); if it takes the image after all (another thread mapped it
 * meanwhile), the program is one the guard cannot certify. */
static int create_unread(struct ag_file *f, int fd,
			 struct drm_arena_program_create *arg)
{
	pthread_mutex_lock(&f->objects);
	int rc = ag_driver_ioctl(fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, arg);
	if (rc == 0)
		rc = put_program(f, fd, arg->handle, ag_program_unreadable(
			"the guard could not read the image the driver took"));
	pthread_mutex_unlock(&f->objects);
	return rc;
}

int ag_mirror_program_create(struct ag_file *f, int fd,
			     struct drm_arena_program_create *arg)
{
	/* Without memory to copy and certify the image, the driver is not
	 * asked: ENOMEM, as from a driver that cannot allocate, and the
	 * application may try again. */
	size_t len = (size_t)arg->size;
	uint8_t *image = arg->size < SIZE_MAX ? malloc(len ? len : 1) : NULL;
	if (!image)
		return ag_no_memory("PROGRAM_CREATE");
	/* The one read of the application's image: what is certified is
	 * what the driver gets, whatever other threads write meanwhile. */
	if (copy_from_user(image, arg->image, len) != 0) {
		free(image);
		return create_unread(f, fd, arg);
	}
	struct ag_program *p = ag_program_get(image, len);
	if (!p)
		return ag_no_memory("PROGRAM_CREATE");

	uint64_t user_image = arg->image;
	arg->image = (uintptr_t)p->image;
	struct ag_program *malformed = p->error ? p : NULL;
	if (malformed)
		atomic_fetch_add(&malformed->refcount, 1);
	pthread_mutex_lock(&f->objects);
	int rc = ag_driver_ioctl(fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, arg);
	int taken = rc == 0;
	if (rc == 0)
		rc = put_program(f, fd, arg->handle, p);
	else
		ag_program_unref(p);
	pthread_mutex_unlock(&f->objects);
	arg->image = user_image;
	if (malformed) {
		/* Said at create, where the mistake is, not only at the
		 * first submit of one of its schedules. */
		char outcome[160];
		struct ag_submit sub = { fd, 0, AG_PATH_IOCTL };
		if (taken)
			snprintf(outcome, sizeof(outcome), "the driver took it "
				 "as program %u: no schedule of it can be "
				 "certified", arg->handle);
		else
			snprintf(outcome, sizeof(outcome), "the driver refused "
				 "it: %s", strerror(-rc));
		ag_report_malformed("PROGRAM_CREATE", &sub, NULL, malformed,
				    malformed->error, outcome);
		ag_program_unref(malformed);
	}
	return rc;
}

int ag_mirror_program_destroy(struct ag_file *f, int fd,
			      struct drm_arena_handle *arg)
{
	pthread_mutex_lock(&f->objects);
	int rc = ag_driver_ioctl(fd, DRM_IOCTL_ARENA_PROGRAM_DESTROY, arg);
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
	s->seal_value = arena_seal_value(&s->seal);
	return s;
}

void ag_sched_unref(struct ag_sched *s)
{
	if (!s || atomic_fetch_sub(&s->refcount, 1) != 1)
		return;
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

int ag_mirror_schedule_create(struct ag_file *f, int fd,
			      struct drm_arena_schedule_create *arg)
{
	pthread_mutex_lock(&f->objects);
	/* Made first: without memory for it the driver is not asked.  Its
	 * program stays (a destroy waits for the objects lock). */
	pthread_mutex_lock(&f->lock);
	struct ag_sched *s = sched_new(arg->program,
				       ag_handles_get(&f->programs,
						      arg->program));
	pthread_mutex_unlock(&f->lock);
	int rc = s ? ag_driver_ioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_CREATE, arg)
		   : ag_no_memory("SCHEDULE_CREATE");
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
			undo_create(fd, DRM_IOCTL_ARENA_SCHEDULE_DESTROY,
				    arg->handle);
			rc = ag_no_memory("SCHEDULE_CREATE");
		}
	}
	if (rc != 0)
		ag_sched_unref(s);
	pthread_mutex_unlock(&f->objects);
	return rc;
}

int ag_mirror_schedule_destroy(struct ag_file *f, int fd,
			       struct drm_arena_handle *arg)
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
		pthread_mutex_lock(&s->lock);
	/* An io_uring submit or append of it, approved, has yet to reach
	 * the driver: EBUSY, the driver's answer for a schedule about to
	 * execute.  Were it destroyed now, a new schedule could take the
	 * handle first (and the append land in it). */
	int rc = s && s->holds ? -EBUSY
		 : ag_driver_ioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, arg);
	if (s) {
		if (rc == 0)
			s->dead = 1;     /* a waiter looks again */
		pthread_mutex_unlock(&s->lock);
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
		pthread_mutex_lock(&s->lock);
		if (!s->dead)
			return s;
		pthread_mutex_unlock(&s->lock);
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
	pthread_mutex_unlock(&s->lock);
	ag_sched_unref(s);
	ag_report_flush();      /* records composed under the lock */
}

void ag_sched_wait_holds(struct ag_sched *s, unsigned int own)
{
	while (s->holds > own)
		pthread_cond_wait(&s->released, &s->lock);
}

void ag_sched_poison(struct ag_sched *s, const char *why)
{
	if (!s->poison[0])
		snprintf(s->poison, sizeof(s->poison), "%s", why);
}

/* ac_schedule for the references so far: 0; -ENOMEM (it stays lazy,
 * to be tried again); -EINVAL (the mirror is poisoned). */
int ag_sched_materialize(struct ag_sched *s)
{
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
	assert(s);
	return !s->poison[0] && s->program && !s->program->error;
}

int ag_sched_reserve(struct ag_sched *s, uint64_t n)
{
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
	if (!ag_sched_recorded(s) ||
	    (!s->sched && ag_sched_materialize(s) != 0))
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
	    ag_sched_materialize(s) == -EINVAL)
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
	memcpy(&s->refv->v[s->n_refs], refs, n * sizeof(*refs));
	s->n_refs += n;
	push_prefix(s, &d);
	/* The driver's seal after this batch, read by every submit. */
	arena_seal_refs(&s->seal, (const struct drm_arena_ref *)refs, n);
	s->seal_value = arena_seal_value(&s->seal);
	return 0;
}

/* ---- teardown ---- */

static void program_unref_each(void *v)
{
	ag_program_unref(v);
}

static void sched_unref_each(void *v)
{
	struct ag_sched *s = v;
	pthread_mutex_lock(&s->lock);
	s->dead = 1;
	pthread_mutex_unlock(&s->lock);
	ag_sched_unref(s);
}

void ag_file_teardown(struct ag_file *f)
{
	ag_file_detach(f);
	pthread_mutex_lock(&f->lock);
	ag_handles_each(&f->schedules, sched_unref_each);
	ag_handles_each(&f->programs, program_unref_each);
	ag_handles_free(&f->schedules);
	ag_handles_free(&f->programs);
	f->sealed = 0;
	f->context = 0;
	pthread_mutex_unlock(&f->lock);
}
