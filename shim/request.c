/* SPDX-License-Identifier: MIT */
/*
 * The guarded requests, one handler each, shared by the ioctl front end
 * (ioctl.c) and the URING_CMD front end (uring.c), their table
 * generated from the driver's one (contract/requests.inc), as
 * sim/ioctl.c's and arena.ko's are.  A handler is given the
 * guard's copy of the argument (copied in once by the front end); it
 * makes the checks, copies in what the argument points to (once: the
 * driver is handed that copy), updates the mirror and forwards the
 * request through its front end (struct ag_front), which is all that
 * differs between the two paths.
 *
 * Every approved submit is forwarded as the sealed variant carrying the
 * mirror's seal of the schedule (uapi.h "Sealed submissions") whenever
 * the open file is sealed or the application itself asked for a sealed
 * submit: the driver then runs only what the guard certified.  The seal
 * is kept current at append time (mirror.c), so a submit only reads it.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "../contract/image.h"  /* arena_append_count_ok: the batch limit */
#include "api.h"
#include "cache.h"
#include "decide.h"
#include "driver.h"
#include "mirror.h"
#include "report.h"
#include "request.h"
#include "stats.h"
#include "submit.h"
#include "../contract/requests.h"  /* ARENA_GUARDED_x */
#include "usercopy.h"

void ag_request_unlock(struct ag_sched *s)
{
	ag_sched_unlock(s);
	ag_report_flush();      /* records composed under the lock */
}

/* ---- create and destroy: the mirror forwards them, under its locks, to
 * the driver this layer hands it ---- */

static int program_create(struct ag_call *c, void *arg)
{
	struct drm_arena_program_create *a = arg;
	struct ag_create_outcome o;
	int rc = ag_mirror_program_create(c->f, ag_driver_ioctl, c->fd, a, &o);
	if (o.no_memory)
		rc = ag_no_memory("PROGRAM_CREATE");
	if (o.malformed) {
		/* Said at create, where the mistake is, not only at the
		 * first submit of one of its schedules. */
		char outcome[160];
		struct ag_submit sub = { c->fd, 0, AG_PATH_IOCTL };
		if (o.taken)
			snprintf(outcome, sizeof(outcome), "the driver took it "
				 "as program %u: no schedule of it can be "
				 "certified", a->handle);
		else
			snprintf(outcome, sizeof(outcome), "the driver refused "
				 "it: %s", strerror(-rc));
		ag_report_malformed("PROGRAM_CREATE", &sub, NULL, o.malformed,
				    o.malformed->error, outcome);
		ag_program_unref(o.malformed);
	}
	return rc;
}

static int program_destroy(struct ag_call *c, void *arg)
{
	return ag_mirror_program_destroy(c->f, ag_driver_ioctl, c->fd, arg);
}

static int schedule_create(struct ag_call *c, void *arg)
{
	struct ag_create_outcome o;
	int rc = ag_mirror_schedule_create(c->f, ag_driver_ioctl, c->fd, arg,
					   &o);
	return o.no_memory ? ag_no_memory("SCHEDULE_CREATE") : rc;
}

static int schedule_destroy(struct ag_call *c, void *arg)
{
	return ag_mirror_schedule_destroy(c->f, ag_driver_ioctl, c->fd, arg);
}

/* ---- append ---- */

/* The references could not be read: by ioctl the driver gives its own
 * error (ENOENT, EINVAL, EFAULT come in its order), and if it takes the
 * batch after all (another thread mapped the memory meanwhile), the
 * guard does not know what it took.  By io_uring the driver would read
 * the same pointer later, unseen: EFAULT here. */
static int append_unread(struct ag_call *c, struct ag_sched *s,
			 struct drm_arena_schedule_append *a)
{
	if (c->front->deferred)
		return -EFAULT;
	int rc = c->front->forward(c, s, DRM_IOCTL_ARENA_SCHEDULE_APPEND, a);
	if (rc == 0)
		ag_sched_poison(s, "the guard could not read appended "
				"references the driver took");
	return rc;
}

/* The driver has taken the guard's copy (ioctl): the mirror follows.
 * References the certificate calls malformed that the driver took
 * anyway leave a mirror that cannot be trusted. */
static void mirror_taken(struct ag_sched *s, const struct ac_ref *refs,
			 uint32_t n)
{
	struct ac_error err;
	char text[512], why[600];
	if (ag_sched_append(s, refs, n, &err) == -EINVAL) {
		snprintf(why, sizeof(why), "the driver accepted references "
			 "the certificate calls malformed: %s",
			 ac_error_text(&err, text, sizeof(text)));
		ag_sched_poison(s, why);
	}
}

/* A batch the certificate calls malformed: one record (what and where,
 * as arena-certify says it). */
static void report_malformed_append(struct ag_call *c, struct ag_sched *s,
				    const struct drm_arena_schedule_append *a,
				    const struct ac_error *err,
				    const char *outcome)
{
	char text[512], error[600];
	struct ag_submit sub = { c->fd, a->schedule, c->front->path };
	snprintf(error, sizeof(error), "malformed references: %s",
		 ac_error_text(err, text, sizeof(text)));
	ag_report_malformed("SCHEDULE_APPEND", &sub, s, ag_sched_program(s),
			    error, outcome);
}

/*
 * The batch, read into block b, to a schedule the mirror knows (locked,
 * room reserved).  ioctl: forwarded first and mirrored once the driver
 * took it (a refusal leaves nothing to undo).  io_uring: the driver's
 * answer will not be seen, so the mirror takes it first (malformed
 * references are answered EINVAL here, as the driver would), then the
 * SQE is pointed at b, which lives as long as the schedule since the
 * kernel reads it later.  The schedule is held until the kernel has the
 * SQE, as for a submit: another thread's append landing in the driver
 * first would leave the mirror's batches in another order than the
 * driver's, and a destroy would free the handle for a new schedule that
 * the kernel then appends to.  Returns 0 or -errno, and whether b was
 * kept.
 */
static int append_read(struct ag_call *c, struct ag_sched *s,
		       struct drm_arena_schedule_append *a,
		       struct ag_block *b, int *kept)
{
	uint64_t user_refs = a->refs;
	a->refs = (uintptr_t)b->v;
	struct ac_error err;
	int rc;
	*kept = 0;
	if (!c->front->deferred) {
		rc = c->front->forward(c, s, DRM_IOCTL_ARENA_SCHEDULE_APPEND,
				       a);
		if (rc == 0)
			mirror_taken(s, b->v, a->count);
		else if (rc == -EINVAL &&
			 ag_sched_malformed(s, b->v, a->count, &err))
			report_malformed_append(c, s, a, &err,
						"the driver refused it (EINVAL)");
	} else {
		assert(c->front->keep);
		rc = c->front->keep(c, s);  /* -ENOMEM: not held, said */
		if (rc == 0) {
			rc = ag_sched_append(s, b->v, a->count, &err);
			assert(rc != -ENOMEM);  /* room was reserved */
			if (rc == -EINVAL)
				report_malformed_append(c, s, a, &err,
							"refused with EINVAL, "
							"the driver's answer to "
							"it");
		}
		if (rc == 0)
			rc = c->front->forward(c, s,
					       DRM_IOCTL_ARENA_SCHEDULE_APPEND,
					       a);
		if (rc == 0) {
			ag_sched_keep_block(s, b);
			*kept = 1;
		}
	}
	a->refs = user_refs;
	return rc;
}

struct unknown_append {
	struct ag_call *c;
	struct drm_arena_schedule_append *a;
};

static int forward_unknown(void *ctx)
{
	struct unknown_append *u = ctx;
	return u->c->front->forward(u->c, NULL,
				    DRM_IOCTL_ARENA_SCHEDULE_APPEND, u->a);
}

/*
 * An append to a schedule the mirror does not know.  By ioctl the driver
 * answers (ENOENT, or it is another process's schedule, whose submits
 * are blocked), with the file's creates held off (its objects lock): a
 * create racing it (another thread's) could otherwise give the handle
 * to a new schedule between
 * the lookup and the driver, which would take references the mirror
 * lacks.  By io_uring the kernel runs it later, when such a create may
 * have come: ENOENT now, the driver's answer for a handle that does not
 * exist (issue 11, hole 7).  1: the schedule is known after all.
 */
static int append_unknown(struct ag_call *c,
			  struct drm_arena_schedule_append *a)
{
	if (c->front->deferred)
		return -ENOENT;
	struct unknown_append u = { c, a };
	return ag_mirror_if_unknown(c->f, a->schedule, forward_unknown, &u);
}

static int schedule_append(struct ag_call *c, void *arg)
{
	struct drm_arena_schedule_append *a = arg;
	struct ag_sched *s;
	int rc;
	while (!(s = ag_sched_lock(c->f, a->schedule)))
		if ((rc = append_unknown(c, a)) != 1)
			return rc;
	rc = c->front->wait_holds(c, s);
	/* uapi.h's limit, before anything is read or mirrored: the
	 * driver's answer whatever the references are. */
	if (rc == 0 && !arena_append_count_ok(a->count))
		rc = -EINVAL;
	else if (rc == 0 && a->count == 0)
		rc = c->front->forward(c, s, DRM_IOCTL_ARENA_SCHEDULE_APPEND, a);
	else if (rc == 0) {
		size_t bytes = (size_t)a->count * sizeof(struct ac_ref);
		struct ag_block *b = malloc(sizeof(*b) + bytes);
		int kept = 0;
		if (!b || ag_sched_reserve(s, a->count) != 0)
			rc = ag_no_memory(c->front->deferred
					  ? "URING_CMD APPEND"
					  : "SCHEDULE_APPEND");
		else if (copy_from_user(b->v, a->refs, bytes) != 0)
			rc = append_unread(c, s, a);
		else
			rc = append_read(c, s, a, b, &kept);
		if (!kept)
			free(b);
	}
	ag_request_unlock(s);
	return rc;
}

/* ---- submit ---- */

/* A submit blocked for the seal's sake: counted, recorded, and the
 * thread's last refusal (arenaguard_last_refusal), as decide.c's. */
static void seal_blocked(const struct ag_submit *sub, struct ag_sched *s,
			 const char *why)
{
	atomic_fetch_add(&ag_stats.blocked, 1);
	ag_api_note_refusal(sub, s, NULL, why, 1);
	ag_report_submission(sub, s, NULL, why, 1);
}

/* The driver refused what the guard approved because its seal is not
 * that of what the driver holds: the mirror diverged (ioctl: seen). */
static void report_refused(const struct ag_submit *sub, struct ag_sched *s,
			   int rc)
{
	seal_blocked(sub, s, rc == -EKEYREJECTED
		? "the driver refused the sealed submission (EKEYREJECTED): "
		  "what it holds for this schedule is not what the guard "
		  "certified (a request the guard did not see, or another "
		  "process sharing the open file, changed it)"
		: "the driver refused the submission (ENOKEY): the open file "
		  "is sealed and the guard could not seal this submission");
}

/* The open file is sealed with algorithms the guard does not compute
 * (uapi.h: no weaker fallback): the submit is blocked. */
static void report_cannot_seal(const struct ag_submit *sub, struct ag_sched *s,
			       uint32_t offered)
{
	char why[200];
	snprintf(why, sizeof(why), "the open file is sealed and the driver "
		 "offers no seal algorithm the guard computes (algorithms "
		 "0x%x, the guard's: SHA-256, 0x%x): the submission can be "
		 "neither sealed nor run unsealed", offered,
		 1u << ARENA_SEAL_SHA256);
	seal_blocked(sub, s, why);
}

/*
 * A submit, plain or sealed (arg in the sealed layout, its algorithm,
 * pad and seal 0 for a plain one): decided, and if approved forwarded
 * with the file's algorithm and the mirror's seal (never the
 * application's, which it gets back), the schedule locked from the
 * decision to the forward so that nothing is appended in between.  On a
 * sealed file whose driver offers no algorithm the guard computes,
 * blocked: it can be neither sealed nor run unsealed.
 */
static int submit_as(struct ag_call *c, struct drm_arena_schedule_submit_sealed *a,
		     int sealed_request)
{
	struct ag_sched *s = ag_sched_lock(c->f, a->schedule);
	struct ag_submit sub = { c->fd, a->schedule, c->front->path };
	uint32_t offered;
	uint32_t algorithm = ag_file_seal_algorithm(c->f, &offered);
	int rc;
	if (!algorithm) {
		/* A sealed context whose seals the guard cannot compute:
		 * the submit can be neither sealed nor run unsealed,
		 * whatever its verdict, in warn mode too.  Blocked before
		 * it is decided (one submission, one outcome and record:
		 * not also "warned" as if it had been let through), and
		 * said why, rather than left to the driver's ENOKEY. */
		atomic_fetch_add(&ag_stats.submissions, 1);
		report_cannot_seal(&sub, s, offered);
		rc = -EPERM;
	} else {
		/* Another thread's io_uring append of s may be between its
		 * check and the driver: mirrored, its references in the
		 * seal, not yet taken.  Sealed now, the submit would carry
		 * a seal of references the driver does not hold (refused
		 * EKEYREJECTED, a certified schedule); wait for it, as an
		 * append does (uring: EBUSY where waiting could deadlock). */
		rc = s ? c->front->wait_holds(c, s) : 0;
		if (rc == 0)
			rc = ag_decide(s, &sub);
		if (rc == 0 && s && c->front->keep)
			rc = c->front->keep(c, s);
	}
	if (rc == 0) {
		struct drm_arena_schedule_submit_sealed user = *a;
		/* A schedule unknown to the guard (warn mode) has no seal
		 * to give: the driver answers whatever the request carries. */
		int sealed = ag_file_sealed(c->f) || sealed_request;
		if (sealed)
			a->algorithm = algorithm;
		if (sealed && s) {
			a->pad = 0;
			memcpy(a->seal, ag_sched_seal(s)->bytes,
			       sizeof(a->seal));
		}
		rc = c->front->forward(c, s, sealed
				       ? DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED
				       : DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, a);
		/* The application's fields back (seqno is the driver's). */
		a->algorithm = user.algorithm;
		a->pad = user.pad;
		memcpy(a->seal, user.seal, sizeof(a->seal));
		if (rc == -EKEYREJECTED || rc == -ENOKEY)
			report_refused(&sub, s, rc);
	}
	if (s)
		ag_request_unlock(s);
	return rc;
}

static int schedule_submit(struct ag_call *c, void *arg)
{
	return submit_as(c, arg, 0);
}

static int schedule_submit_sealed(struct ag_call *c, void *arg)
{
	return submit_as(c, arg, 1);
}

/* ---- seal ---- */

/* The application seals its open file itself: the driver's answer (the
 * guard sealed it already where the driver offers seals). */
static int seal(struct ag_call *c, void *arg)
{
	return c->front->forward(c, NULL, DRM_IOCTL_ARENA_SEAL, arg);
}

/* ---- the table ---- */

_Static_assert(sizeof(struct ac_ref) == sizeof(struct drm_arena_ref),
	       "the guard hands its ac_ref copies to the driver");
_Static_assert(offsetof(struct drm_arena_schedule_submit_sealed, seqno) ==
		       offsetof(struct drm_arena_schedule_submit, seqno) &&
	       offsetof(struct arena_uring_submit_sealed, seal) ==
		       offsetof(struct drm_arena_schedule_submit_sealed, seal) &&
	       offsetof(struct arena_uring_submit_sealed, algorithm) ==
		       offsetof(struct drm_arena_schedule_submit_sealed,
				algorithm) &&
	       sizeof(struct arena_uring_submit_sealed) ==
		       sizeof(struct drm_arena_schedule_submit_sealed) &&
	       sizeof(struct arena_uring_submit) ==
		       sizeof(struct drm_arena_schedule_submit),
	       "every submit reads the sealed layout");

/* The guard's copy of an argument: the struct, but both submits read
 * the sealed layout (the plain one's tail zero-extended). */
#define SUBMIT_SIZE sizeof(struct drm_arena_schedule_submit_sealed)
#define GUARD_SIZE(NAME, arg) \
	(DRM_ARENA_##NAME == DRM_ARENA_SCHEDULE_SUBMIT ? SUBMIT_SIZE \
						       : sizeof(arg))

/* The guarded requests of the contract's table (contract/requests.inc),
 * indexed by number, each handled by the function of its name above;
 * the others' slots empty (no handler). */
static const struct ag_request requests[] = {
#define ARENA_REQUEST(name, NAME, arg, uring_op, uring_arg, guarded)	\
	ARENA_GUARDED_##guarded([DRM_ARENA_##NAME] = {			\
		#NAME, DRM_IOCTL_ARENA_##NAME, GUARD_SIZE(NAME, arg),	\
		uring_op, uring_arg, name },)
#include "../contract/requests.inc"
};

#define N_REQUESTS (sizeof(requests) / sizeof(requests[0]))

const struct ag_request *ag_request_by_nr(unsigned int nr)
{
	unsigned int i = nr - DRM_COMMAND_BASE;
	if (i >= N_REQUESTS || !requests[i].handle)
		return NULL;
	return &requests[i];
}

const struct ag_request *ag_request_by_uring_op(uint32_t op)
{
	for (size_t i = 0; op && i < N_REQUESTS; i++)
		if (requests[i].uring_op == op && requests[i].handle)
			return &requests[i];
	return NULL;
}
