/* SPDX-License-Identifier: MIT */
/*
 * Per-file programs and schedules (mirror.c).
 */
#ifndef ARENAGUARD_SHIM_MIRROR_H
#define ARENAGUARD_SHIM_MIRROR_H

#include <stdint.h>

#include <arenaguard/certify.h>
#include <arenaguard/uapi.h>

#include "seal.h"

struct ag_file;
struct ag_program;
struct ag_refs;
struct ag_verdict;

/*
 * struct ag_file (an open file description of the device: its programs
 * and schedules by handle, whether it is sealed) and struct ag_sched (a
 * schedule: its references, their digest and (D), its seal, its last
 * verdict) are mirror.c's; the other files hold pointers and call the
 * functions below.  "s locked": the caller holds s from ag_sched_lock
 * (asserted in debug builds).
 */
struct ag_sched;

/* ---- files ---- */

/* A fresh file, referenced (tests; attach.c for a newly probed fd). */
struct ag_file *ag_file_new(void);
void ag_file_ref(struct ag_file *f);
/* A reference unless the count is 0 (the file is being emptied): 1 or 0. */
int ag_file_try_ref(struct ag_file *f);
/* Drops a reference (f may be NULL); the last one empties f (its
 * objects, its seal) for reuse: files are never freed. */
void ag_file_unref(struct ag_file *f);
/* fd is one f was seen on (devices.c, once a probe found it), kept for
 * reports unless f has one already. */
void ag_file_seen_on(struct ag_file *f, int fd);
/* An fd f was seen on, for reports (a registered slot has none), or -1. */
int ag_file_fd(const struct ag_file *f);
/* attach.c: f, new and not yet in the fd table, is sealed under context
 * id `context` (never 0). */
void ag_file_seal(struct ag_file *f, uint64_t context, uint32_t algorithms);
/* hook(f) is called when f's last reference goes, before f is emptied
 * for reuse (attach.c forgets f's context: it registers itself before it
 * lists a file by context); NULL: nothing is. */
void ag_file_on_teardown(void (*hook)(struct ag_file *f));
/* The seal algorithm the guard uses on f: ARENA_SEAL_SHA256, or 0 when f
 * is sealed and its driver offers none the guard computes (every submit
 * is then blocked: it cannot be sealed, and an unsealed one is not the
 * driver's to run).  *offered gets the driver's algorithms, for records. */
uint32_t ag_file_seal_algorithm(const struct ag_file *f, uint32_t *offered);
/* Whether the driver checks seals on f; its context id (0: unsealed).
 * No lock: set before f is published, cleared when it is emptied. */
int ag_file_sealed(const struct ag_file *f);
uint64_t ag_file_context(const struct ag_file *f);
/* Tests: f's reference count; how many programs and schedules f's
 * mirror holds. */
unsigned int ag_file_refcount(const struct ag_file *f);
void ag_file_objects(struct ag_file *f, uint32_t *programs,
		     uint32_t *schedules);

/* fork: every file's creates and destroys, its maps, its schedules (the
 * order used everywhere), then the list of files, a leaf; unlocked, or
 * in the child reset (the threads holding schedules are not there). */
void ag_mirror_lock_all(void);
void ag_mirror_unlock_all(int child);

/* ---- schedules ---- */

/* Reference blocks handed to the driver by io_uring appends: they must
 * outlive the SQE, so they live as long as the schedule. */
struct ag_block {
	struct ag_block *next;
	struct ac_ref v[];
};

/*
 * The driver as the front layer hands it to the mirror for the requests
 * the mirror forwards under its own locks (creates and destroys, and
 * the destroy that undoes a create it cannot record): the mirror never
 * calls the driver by name.  Returns 0 or -errno.
 */
typedef int ag_driver_fn(int fd, unsigned int cmd, void *arg);

/*
 * What a create leaves for the front layer to say (the mirror writes
 * nothing): whether the guard itself ran out of memory (its -ENOMEM,
 * the request refused or its create undone, not the driver's answer),
 * and for a program create whether the driver took the image and, when
 * the certificate calls the image malformed, its program (referenced:
 * the caller reports it and drops it).
 */
struct ag_create_outcome {
	int no_memory;
	int taken;
	struct ag_program *malformed;
};

/* Creates and destroys, forwarded to driver under the file's objects
 * lock (a destroy: and the schedule's), the mirror updated with the
 * driver's answer: 0 or -errno, and for a create *o.  Program create:
 * the guard's image copy is certified (or found) and handed to the
 * driver. */
int ag_mirror_program_create(struct ag_file *f, ag_driver_fn *driver,
			     int fd, struct drm_arena_program_create *arg,
			     struct ag_create_outcome *o);
int ag_mirror_program_destroy(struct ag_file *f, ag_driver_fn *driver,
			      int fd, struct drm_arena_handle *arg);
int ag_mirror_schedule_create(struct ag_file *f, ag_driver_fn *driver,
			      int fd, struct drm_arena_schedule_create *arg,
			      struct ag_create_outcome *o);
int ag_mirror_schedule_destroy(struct ag_file *f, ag_driver_fn *driver,
			       int fd, struct drm_arena_handle *arg);

/* The schedule with this handle, referenced and locked (and alive), or
 * NULL when the guard does not know it. */
struct ag_sched *ag_sched_lock(struct ag_file *f, uint32_t handle);
/* When the mirror does not know schedule `handle`, calls fn(ctx) with the
 * file's objects lock held, so that no create can give the handle to a new
 * schedule meanwhile, and returns its answer (0 or -errno); 1, without
 * calling it, when the mirror knows the schedule (look it up again). */
int ag_mirror_if_unknown(struct ag_file *f, uint32_t handle,
			 int (*fn)(void *ctx), void *ctx);
/* Drops s's lock and the reference ag_sched_lock took.  The records
 * composed under the lock are the caller's to write (the front layer's
 * ag_request_unlock). */
void ag_sched_unlock(struct ag_sched *s);
/* Waits (lock held) until no io_uring submit or append other than `own`
 * of them holds the schedule. */
void ag_sched_wait_holds(struct ag_sched *s, unsigned int own);

/* Whether the certificate calls refs[0, n), appended to s (locked),
 * malformed (spec 1.3): 1 with *err naming the first bad reference; 0
 * when they are well formed, or the mirror cannot tell (it is not
 * recorded, or memory ran out).  Changes nothing the mirror holds. */
int ag_sched_malformed(struct ag_sched *s, const struct ac_ref *refs,
		       uint64_t n, struct ac_error *err);
/*
 * Appends references the driver has accepted (ioctl) or will be given
 * (io_uring) to the mirror, advancing (D) unless the schedule is lazy
 * (or stays lazy for want of memory: (D) then waits for the submit).
 * 0; -EINVAL when the certificate calls the batch malformed (the
 * mirror is unchanged, *err says why); -ENOMEM (the mirror is
 * unchanged, unless ag_sched_reserve made room first: then never).
 */
int ag_sched_append(struct ag_sched *s, const struct ac_ref *refs,
		    uint64_t n, struct ac_error *err);
/* Room for n more references in s (locked): 0 or -ENOMEM. */
int ag_sched_reserve(struct ag_sched *s, uint64_t n);
/* Whether appends to s are recorded at all (else its submits are
 * blocked whatever it holds): not poisoned, and of a program the guard
 * certified.  Locked. */
int ag_sched_recorded(const struct ag_sched *s);
/* Marks the mirror of s (locked) untrustworthy, the first reason kept:
 * every later submit of it is blocked. */
void ag_sched_poison(struct ag_sched *s, const char *why);
/* The reason s (locked) cannot be trusted (ag_sched_poison), or NULL. */
const char *ag_sched_poisoned(const struct ag_sched *s);
/* s's program (never changes), NULL when the guard does not know it;
 * the driver's handle of it. */
const struct ag_program *ag_sched_program(const struct ag_sched *s);
uint32_t ag_sched_program_handle(const struct ag_sched *s);
/* How many references were appended to s (locked). */
uint64_t ag_sched_length(const struct ag_sched *s);
/* What s (locked) holds, referenced, for use after its lock is dropped
 * (a dump): its program (NULL: unknown; ag_program_unref) and its
 * references refv->v[0, *n) (refv NULL when none; ag_refs_unref). */
void ag_sched_contents(const struct ag_sched *s, struct ag_program **p,
		       struct ag_refs **refv, uint64_t *n);
/* Whether s (locked) is lazy, without an ac_schedule yet (tests). */
int ag_sched_lazy(const struct ag_sched *s);
/* uapi.h's seal value of exactly what the guard forwarded for s
 * (locked; exact only while ag_sched_recorded: a warn-mode submit of
 * another schedule forwards whatever it is). */
const struct arena_seal_value *ag_sched_seal(const struct ag_sched *s);
/* The verdict on what s (locked, recorded) holds now, referenced: the
 * one of its last submit when nothing was appended since, else the
 * cached one (bytes compared), else computed once and published; NULL
 * when it cannot be had (s is then poisoned, or memory ran out). */
struct ag_verdict *ag_sched_verdict(struct ag_sched *s);
/* b, handed to the driver by an io_uring append to s (locked), lives as
 * long as s. */
void ag_sched_keep_block(struct ag_sched *s, struct ag_block *b);
/* An io_uring submit or append of s (locked) is between its check and
 * the kernel: s is referenced and held (appends wait, destroys are
 * refused) until ag_sched_release, called with s unlocked. */
void ag_sched_hold(struct ag_sched *s);
void ag_sched_release(struct ag_sched *s);
/* Whether s (locked) is held by more than `own` holds (the caller's). */
int ag_sched_held_by_others(const struct ag_sched *s, unsigned int own);
/* Drops a reference to s (NULL: none); the last one frees it. */
void ag_sched_unref(struct ag_sched *s);

#endif
