/* SPDX-License-Identifier: MIT */
/*
 * Sealing the device's open files (uapi.h "Sealed submissions").  When
 * the guard first recognises a device fd, it seals the open file behind
 * it: from then on the driver runs a schedule only when the submission
 * carries the seal of exactly the program image and references it holds,
 * and the guard gives the seal of what it certified.  A mirror that
 * diverged from the driver (a request the guard never saw, another
 * process sharing the open file, a raced SQE) then ends in a refused
 * submission, never in an uncertified run.
 *
 * SEAL also says the open file's context id, the same on every fd of one
 * open file description: an fd that kcmp(2) could not match to a known
 * one (kcmp denied, as container seccomp profiles do) is matched by it,
 * so that an F_DUPFD copy shares its original's mirror.  Files are found
 * by context in a short list (one entry per open file of the device the
 * guard knows), under a leaf lock that no other lock is taken under.
 *
 * A driver without seals answers EINVAL: the guard says once which
 * guarantees it then cannot give, and goes on checking what it sees.
 * A driver that refuses to seal for another reason is said once per
 * error, with the error: its open file goes unsealed all the same.
 * EINTR is asked again, SEAL_TRIES times in all: a driver that answers
 * it every time leaves the file unknown (whether sealed or not), and the
 * request is refused with EINTR, said once; the next request asks again.
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

#include "attach.h"
#include "mirror.h"
#include "notice.h"

struct context {
	uint64_t id;
	struct ag_file *f;          /* not referenced: detached at teardown */
	struct context *next;
};

static pthread_mutex_t context_lock = PTHREAD_MUTEX_INITIALIZER;
static struct context *contexts;

/* The driver the seal is asked of, handed in by the front layer at load
 * (ag_attach_driver): the state layer never calls the driver by name. */
static _Atomic(ag_driver_fn *) seal_driver;

void ag_attach_driver(ag_driver_fn *driver)
{
	atomic_store(&seal_driver, driver);
}

/* fork (interpose.c's handlers): the leaf, taken last and released
 * first, so that a child never inherits it held by a thread it does not
 * have. */
void ag_attach_lock_all(void)
{
	pthread_mutex_lock(&context_lock);
}

void ag_attach_unlock_all(void)
{
	pthread_mutex_unlock(&context_lock);
}

/* The file known under context id (referenced), or NULL.  Lock held. */
static struct ag_file *by_context(uint64_t id)
{
	for (struct context *c = contexts; c; c = c->next)
		if (c->id == id && ag_file_try_ref(c->f))
			return c->f;
	return NULL;
}

/* How many times SEAL is asked while the driver answers EINTR: a
 * signal or two arriving meanwhile is retried, a driver that answers
 * EINTR every time does not hang the guard. */
#define SEAL_TRIES 4

/* DRM_IOCTL_ARENA_SEAL on fd: 0 with *id and the driver's seal
 * *algorithms (0 from a driver that predates them: its context is sealed
 * all the same), or -errno (EINTR retried, SEAL_TRIES times in all;
 * -ENOSYS with no driver handed in, which ag_file_attach says as a
 * refusal). */
static int seal_fd(int fd, uint64_t *id, uint32_t *algorithms)
{
	struct drm_arena_seal s = { 0 };
	ag_driver_fn *driver = atomic_load(&seal_driver);
	assert(driver);                 /* ag_config_load hands it in */
	int rc = -ENOSYS;
	int tries = 0;
	do {
		s = (struct drm_arena_seal){ 0 };
		if (driver)
			rc = driver(fd, DRM_IOCTL_ARENA_SEAL, &s);
	} while (rc == -EINTR && ++tries < SEAL_TRIES);
	if (rc == 0 && s.context == 0)
		rc = -EPROTO;               /* uapi.h: never 0 */
	*id = s.context;
	*algorithms = s.algorithms;
	return rc;
}

/* Once per process: a sealed open file whose seals the guard cannot
 * compute.  Its submits are blocked, each with a record (request.c). */
static void report_no_algorithm(int fd, uint32_t algorithms)
{
	ag_report_once("no seal algorithm", "the driver sealed fd %d but "
		       "offers no seal algorithm the guard computes "
		       "(DRM_IOCTL_ARENA_SEAL's algorithms: 0x%x; the guard "
		       "computes ARENA_SEAL_SHA256, 0x%x): every submission "
		       "on it is blocked, since it can neither be sealed nor "
		       "run unsealed", fd, algorithms,
		       1u << ARENA_SEAL_SHA256);
}

/* Once per process and error: a driver with seals that refused to seal
 * fd's open file (rc, not EINVAL).  Its submissions go unsealed: the
 * guard checks what it sees, and a driver that sealed the context at
 * its open refuses them (ENOKEY). */
static void report_seal_refused(int fd, int rc)
{
	char key[32];
	snprintf(key, sizeof(key), "seal refused %d", -rc);
	ag_report_once(key, "the driver refused to seal fd %d "
		       "(DRM_IOCTL_ARENA_SEAL: %s): submissions on its open "
		       "file go unsealed, checked by the guard as far as it "
		       "sees them, and refused by a driver that sealed the "
		       "open file itself (ENOKEY)", fd, strerror(-rc));
}

/* Once per process: a driver that answered SEAL with EINTR every time
 * it was asked.  The request is refused with EINTR (attach fails). */
static void report_seal_interrupted(int fd)
{
	ag_report_once("seal interrupted", "the driver answered "
		       "DRM_IOCTL_ARENA_SEAL on fd %d with EINTR %d times in a "
		       "row: the guard cannot tell whether its open file is "
		       "sealed, so requests on it are refused with EINTR until "
		       "the driver answers", fd, SEAL_TRIES);
}

/* Once per process: what an unsealed open file leaves to chance (rc
 * -EINVAL: a driver without seals), or why the driver refused. */
static void report_unsealed(int fd, int rc)
{
	if (rc != -EINVAL) {
		report_seal_refused(fd, rc);
		return;
	}
	ag_report_once("no seals", "the driver does not seal submissions "
		       "(DRM_IOCTL_ARENA_SEAL on fd %d: EINVAL, a driver "
		       "without them): the guard "
		       "checks every request it sees, but it cannot "
		       "guarantee what runs when its picture of the device "
		       "diverged: requests it does not see (a raw system "
		       "call, io_uring SQEs outside liburing's submit "
		       "functions), another process sharing the open file "
		       "(fork, SCM_RIGHTS), an SQE rewritten after its "
		       "check, or an fd copy kcmp(2) cannot match",
		       fd);
}

/* f is being emptied (mirror.c's teardown hook): its context id is no
 * longer matched to it. */
static void file_detach(struct ag_file *f)
{
	if (!ag_file_context(f))
		return;
	pthread_mutex_lock(&context_lock);
	for (struct context **pp = &contexts; *pp; pp = &(*pp)->next) {
		if ((*pp)->f == f) {
			struct context *c = *pp;
			*pp = c->next;
			free(c);
			break;
		}
	}
	pthread_mutex_unlock(&context_lock);
}

struct ag_file *ag_file_attach(int fd)
{
	assert(fd >= 0);
	uint64_t id = 0;
	uint32_t algorithms = 0;
	int rc = seal_fd(fd, &id, &algorithms);
	if (rc == -EINTR) {
		report_seal_interrupted(fd);
		errno = EINTR;
		return NULL;
	}
	if (rc != 0) {
		report_unsealed(fd, rc);
		struct ag_file *f = ag_file_new();
		if (!f)
			errno = ENOMEM;
		return f;
	}
	if (!arena_seal_pick(algorithms))
		report_no_algorithm(fd, algorithms);
	pthread_mutex_lock(&context_lock);
	struct ag_file *f = by_context(id);
	pthread_mutex_unlock(&context_lock);
	if (f)
		return f;

	struct context *c = malloc(sizeof(*c));
	f = c ? ag_file_new() : NULL;
	if (!f) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	ag_file_seal(f, id, algorithms);
	ag_file_on_teardown(file_detach);   /* before any file is listed */
	pthread_mutex_lock(&context_lock);
	struct ag_file *first = by_context(id);     /* another thread's */
	if (!first) {
		*c = (struct context){ id, f, contexts };
		contexts = c;
	}
	pthread_mutex_unlock(&context_lock);
	if (first) {
		free(c);
		ag_file_unref(f);
		return first;
	}
	return f;
}
