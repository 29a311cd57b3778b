/* SPDX-License-Identifier: MIT */
/*
 * libarenaguard: the submission-time guard (docs/guard.md).  This header
 * is the seam between the files; each has one concern:
 *
 *   options.c    ARENAGUARD_OPTIONS and the ARENAGUARD* variables, parsed
 *                (config.h: the launcher parses them with it too)
 *   load.c       ag_cfg: the options read once, at load
 *   devices.c    which fds are the device: a lock-free fd table of
 *                struct ag_file pointers, probing
 *   handles.c    u32 handle -> object maps (per file)
 *   mirror.c     the driver's programs and schedules, mirrored per file:
 *                struct ag_file (an open file description of the device)
 *                and struct ag_sched (a schedule), opaque to the others
 *   cache.c      certified programs by image, verdicts by digest, hints
 *   decide.c     the submit-time decision: allow or block, and why
 *   request.c    one handler per guarded request, for both front ends
 *   attach.c     sealing each open file of the device (its context id)
 *   report.c     log records (deduplicated), counters, the guard's
 *                descriptors (outputs.h)
 *   quiet_write.c  writing without waiting or signalling
 *   dump.c       dumps of failing programs
 *   dedup.c      which records were written already
 *   line.c       records as lines of the guard's own (escaped)
 *   ioctl.c      the ioctl front end: copy in, dispatch, copy out
 *   uring.c      walking liburing's pending SQEs; registered files
 *   slot_change.c  slots changed by SQEs (uring.c's walk; ring.h)
 *   ring_reg.c   registrations of files under way (ring.h)
 *   interpose.c  every exported symbol, the real functions, fork
 *
 * Everything but interpose.c builds into a static library that the unit
 * tests link without preloading anything.
 */
#ifndef ARENAGUARD_SHIM_GUARD_H
#define ARENAGUARD_SHIM_GUARD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <arenaguard/certify.h>
#include <arenaguard/uapi.h>

#include "config.h"
#include "seal.h"
#include "../contract/requests.h"  /* the guarded requests */

/* ---- options.c --------------------------------------------------------- */

/* The options' parser and struct ag_config: config.h (the launcher
 * links options.c too). */
extern struct ag_config ag_cfg;

/*
 * Reads the environment into ag_cfg (ag_config_read), (re)opens the
 * guard's outputs (ag_output_open), loads the suppressions and tells
 * the launcher the guard is loaded: the latest call wins.  Settings
 * that cannot be honoured are reported then, once per call.
 */
void ag_config_load(void);
/* ---- suppress.c: suppression rules (docs/guard.md) --------------------- */

struct ag_rule;
struct ag_program;
struct ag_verdict;
/* Reads ag_cfg.suppressions (after the outputs are open: a file that
 * cannot be read and every bad rule are said, with their line). */
void ag_suppress_load(void);
/* The first rule that matches failing verdict v of program p, counted,
 * or NULL.  No lock: the rules never change once the guard runs. */
const struct ag_rule *ag_suppress_match(const struct ag_program *p,
					const struct ag_verdict *v);
/* The rule that would suppress v ("digest:HEX condition:C") into out:
 * 0, or -1 when v is no verdict a rule can match. */
int ag_suppress_hint(const struct ag_program *p, const struct ag_verdict *v,
		     char *out, size_t len);
const char *ag_rule_text(const struct ag_rule *r);
/* The rules in effect (0 before ag_suppress_load, or in mode off). */
unsigned ag_suppress_count(void);
unsigned ag_rule_line(const struct ag_rule *r);
/* At exit: the rules that matched nothing (when the process submitted
 * anything), every rule's count under print_suppressions, and digest
 * prefixes that matched more than one program. */
void ag_suppress_report(int submitted);
/* fork: the lock of the rules' first matches, held across it so that
 * a child never inherits it held by a thread it does not have. */
void ag_suppress_lock_all(void);
void ag_suppress_unlock_all(void);
/* A program digest as the 32 lower-case hex digits records show. */
struct ac_digest;
void ag_digest_text(const struct ac_digest *d, char out[33]);

/* bypass.c: says once, at start, which library preloaded before the
 * guard defines functions it interposes (the guard would not see the
 * requests made through them). */
void ag_bypass_check(void);

/* ---- the next (real) functions, set by interpose.c ---------------------- */

/*
 * The driver, as seen from here: the next ioctl in the lookup order (the
 * simulator, or libc and so the kernel).  Tests point it at a fake.
 * Returns 0 or -errno (the kernel's convention, not libc's).
 */
extern int (*ag_driver_ioctl)(int fd, unsigned int cmd, void *arg);

/*
 * How deep this thread is in the guard's code: a guarded request, a
 * checked submit or enter, the ring bookkeeping, a probe, the start-up.
 * The guard's own calls to the driver go to it directly (ag_driver_ioctl,
 * the next functions), never through the interposed ones, so a guarded
 * request that arrives while it is nonzero comes from a signal handler
 * that interrupted the guard (its thread may hold the guard's locks):
 * it is refused with EDEADLK and a record (ag_report_reentered), never
 * forwarded.  initial-exec: the library is preloaded, and a TLS access
 * must never allocate.
 */
extern __thread int ag_inside __attribute__((tls_model("initial-exec")));

/* ---- process.c: the guard's process, or a child sharing its memory ----- */

/* This process is the one whose state the guard keeps (at load, and in
 * a fork()'s child from its atfork handler). */
void ag_process_mark(void);
/*
 * Whether a close or dup made now acts on the fd table the guard keeps
 * state for: 1 in the guard's process (any thread), and in a child that
 * shares its memory and its fd table (clone(CLONE_VM|CLONE_FILES)); 0
 * in a child that shares its memory but has its own copy of the table
 * (vfork, posix_spawn), or when kcmp(2) cannot say (taken as such a
 * copy, as libc and CPython make): its closes are its own, and change
 * nothing of the guard's.  One getpid(2), and a kcmp(2) in such a
 * child: call it only
 * when the call touches a descriptor the guard tracks.
 */
int ag_process_shares_fds(void);
/*
 * Whether this is a child that shares the guard's memory but not its fd
 * table, once it has asked ag_process_shares_fds (which said 0): its
 * descriptor numbers may name other open files than the ones the table
 * keeps for them (a vfork child that closed the device fd and opened
 * the device again at that number), so a file the table holds is not
 * taken for its fd.  A load of ag_fds_diverged, a flag of the thread
 * whose TLS the child runs on; while it is set a getpid, and the first
 * call of that thread once it runs again clears it.
 */
extern __thread int ag_fds_diverged __attribute__((tls_model("initial-exec")));
int ag_process_fds_diverged(void);

/* ---- devices.c: the fd table ---------------------------------------------- */

struct ag_file;

/*
 * The values of a struct ag_file pointer that are no file (files are
 * aligned, and never at the lowest addresses), each with one meaning:
 * what an fd is, as far as the fd table knows (devices.c) ...
 */
#define AG_FD_UNKNOWN ((struct ag_file *)0)
#define AG_FD_NOTDEV ((struct ag_file *)1)    /* not the device */
#define AG_FD_CLOSING ((struct ag_file *)2)   /* close(2) under way */
/* ... and what a registered file slot of a ring holds (uring.c), NULL
 * there meaning not the device: it may be the device, and the guard
 * cannot tell (the opposite of AG_FD_NOTDEV, hence its own value). */
#define AG_SLOT_UNCERTAIN ((struct ag_file *)3)

/* Whether f, a value of the fd table or of a registered slot, is a
 * file, none of the values above. */
static inline int ag_is_file(const struct ag_file *f)
{
	return (uintptr_t)f > (uintptr_t)AG_SLOT_UNCERTAIN;
}

/* The file behind fd, referenced, or NULL when fd is not the arena device
 * (probing its DRM driver name the first time, and again whenever the
 * fd's fstat no longer matches the file "not the device" was decided
 * on).  After a NULL, errno is 0 (pass the request on), or the error to
 * refuse the request with: ENOMEM when fd is the device but memory ran
 * out, the probe's error when it failed on a node that may be the
 * device (never passed on unchecked). */
struct ag_file *ag_fd_file(int fd);
/* The cached state without probing or referencing (a hint): UNKNOWN,
 * NOTDEV (of any identity), CLOSING or a file. */
struct ag_file *ag_fd_peek(int fd);
/* ag_fd_peek of each of fds[0, n) into out (a registration walk: one
 * call, no system call). */
void ag_fd_peek_many(const int *fds, unsigned int n, struct ag_file **out);
struct stat;
/* fstat(dirfd) (path NULL) or fstatat(dirfd, path) following links,
 * errno kept: 0 or -1. */
int ag_fstatat(int dirfd, const char *path, struct stat *st);
/* Remembers that fd, which fstat says is not a character device, is not
 * the device (unless the table knows better already). */
void ag_fd_set_notdev(int fd, const struct stat *st);
/* fd is no longer what the table says (dup2 replaced it). */
void ag_fd_forget(int fd);
/* close(fd) is about to happen: requests on fd wait until it has
 * (ag_fd_closed), so that none finds the device still open and keeps
 * a file for a closed fd. */
void ag_fd_closing(int fd);
void ag_fd_closed(int fd);
void ag_fd_forget_range(unsigned int first, unsigned int last);
/* newfd is now a dup of oldfd. */
void ag_fd_dup(int oldfd, int newfd);
/* Whether fd may be the device, without a lock, an allocation or a
 * probe (async-signal-safe: a signal handler's request while its thread
 * is inside the guard): 0 only when the table says "not the device" and
 * fstat still agrees, or fd is no character device of the accel major. */
int ag_fd_maybe_device(int fd);
/* Whether fd is the arena device (DRM_IOCTL_VERSION name), without
 * caching: 1, 0, or -1 for a closed fd. */
int ag_probe_device(int fd);

/* Attach f (a file, or one of the AG_FD_ values) to fd in the table, as
 * a probe would (tests). */
void ag_fd_set(int fd, struct ag_file *f);

/* In a forked child: the closes under way in other threads, which will
 * never finish there, are over. */
void ag_devices_forked(void);

/* ---- handles.c ---------------------------------------------------------- */

struct ag_handles {
	uint64_t *keys;          /* a u32 handle, or EMPTY / DEAD */
	void **values;
	uint32_t cap, used, dead;
};

void *ag_handles_get(const struct ag_handles *h, uint32_t key);
/* Adds or replaces; returns the value replaced (or NULL), or sets *err. */
void *ag_handles_put(struct ag_handles *h, uint32_t key, void *value,
		     int *err);
void *ag_handles_del(struct ag_handles *h, uint32_t key);
/* Calls fn on every value (teardown). */
void ag_handles_each(struct ag_handles *h, void (*fn)(void *value));
void ag_handles_free(struct ag_handles *h);

/* ---- cache.c ------------------------------------------------------------ */

/*
 * A certified program image, shared by every handle (in any file) whose
 * image has these bytes.  Immutable once published, so any number of
 * threads read it without a lock; freed with its last reference.
 */
/* A cache entry's place in its cache's least-recently-used list. */
struct ag_lru {
	struct ag_lru *older, *newer;
	uint64_t stamp;             /* last use, on the caches' one clock */
};

struct ag_program {
	atomic_uint refcount;
	uint8_t *image;             /* the guard's copy: what the driver got */
	size_t len;
	struct ac_digest digest;    /* P: ac_image_digest of the image */
	struct arena_seal seal;     /* uapi.h: the seal state after the image */
	struct ac_model *model;     /* NULL when the image is malformed */
	ac_program *prog;           /* NULL when malformed */
	char *error;                /* why it cannot be certified, or NULL */
	char *advisory;             /* strict mode: its advisories, rendered
				     * (the first and how many), or NULL */
	struct ag_program *next;    /* cache chain */
	struct ag_lru lru;
	size_t bytes;               /* what the entry pins (the budget's) */
};

/* A schedule's references: grows in place; a verdict entry shares the
 * prefix it was decided on (schedules only grow). */
struct ag_refs {
	atomic_uint refcount;
	atomic_uint cached;         /* cached verdicts sharing it (in any
				     * shard): charged once */
	uint64_t cap;
	struct ac_ref v[];
};

struct ag_verdict {
	atomic_uint refcount;
	struct ac_digest digest;
	struct ag_program *program;
	struct ag_refs *refv;
	uint64_t n_refs;
	uint64_t verdict;           /* AC_NONE: malformed schedule */
	struct ac_diag diag;
	char *text;                 /* the rendered diagnostic or error */
	struct ag_verdict *next;    /* cache chain */
	struct ag_lru lru;
	size_t bytes;               /* what the entry pins (the budget's) */
};

/*
 * Copies image[0, len) into a program (the caller gives up `image`, a
 * malloc'ed buffer) and certifies it and computes its seal state, or
 * finds an equal image certified before.  NULL only when memory runs
 * out.
 */
struct ag_program *ag_program_get(uint8_t *image, size_t len);
/* A program the guard could not read at all (not cached). */
struct ag_program *ag_program_unreadable(const char *why);
void ag_program_unref(struct ag_program *p);

struct ag_refs *ag_refs_grow(struct ag_refs *r, uint64_t used, uint64_t need);
void ag_refs_unref(struct ag_refs *r);

/* The cached verdict for (program, refs[0, n)) with this digest, with the
 * bytes compared, referenced; NULL on a miss. */
struct ag_verdict *ag_verdict_find(const struct ac_digest *d,
				   const struct ag_program *p,
				   const struct ac_ref *refs, uint64_t n);
/* Publishes a verdict (taking references to program and refv); returns
 * the entry now in the cache (maybe an equal one published first),
 * referenced. */
struct ag_verdict *ag_verdict_publish(struct ag_verdict *v);
struct ag_verdict *ag_verdict_new(void);
void ag_verdict_unref(struct ag_verdict *v);

/* Hints: schedule prefixes seen on the way to a cached verdict.  Only a
 * hint (no bytes are kept): a wrong one costs time, never soundness.
 * ag_hint_has takes no lock; ag_hints_add adds d[0, n), taking a lock
 * only when one of them is not a hint yet. */
void ag_hints_add(const struct ac_digest *d, uint64_t n);
int ag_hint_has(const struct ac_digest *d);

void ag_cache_lock_all(void);
void ag_cache_unlock_all(int child);
/* Drops every unreferenced entry (tests, and memory pressure). */
void ag_cache_trim(void);
/* Bytes the caches pin now (programs and verdicts, the hint table
 * included), which trimming keeps within ag_cfg.cache_bytes; the entries
 * counted; for tests and the statistics. */
size_t ag_cache_bytes(void);
uint64_t ag_cache_entries(void);

/* ---- mirror.c: per-file programs and schedules -------------------------- */

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

/* Program create: the guard's image copy is certified (or found). */
int ag_mirror_program_create(struct ag_file *f, int fd,
			     struct drm_arena_program_create *arg);
int ag_mirror_program_destroy(struct ag_file *f, int fd,
			      struct drm_arena_handle *arg);
int ag_mirror_schedule_create(struct ag_file *f, int fd,
			      struct drm_arena_schedule_create *arg);
int ag_mirror_schedule_destroy(struct ag_file *f, int fd,
			       struct drm_arena_handle *arg);

/* The schedule with this handle, referenced and locked (and alive), or
 * NULL when the guard does not know it. */
struct ag_sched *ag_sched_lock(struct ag_file *f, uint32_t handle);
/* When the mirror does not know schedule `handle`, calls fn(ctx) with the
 * file's objects lock held, so that no create can give the handle to a new
 * schedule meanwhile, and returns its answer (0 or -errno); 1, without
 * calling it, when the mirror knows the schedule (look it up again). */
int ag_mirror_if_unknown(struct ag_file *f, uint32_t handle,
			 int (*fn)(void *ctx), void *ctx);
/* Drops s's lock and the reference ag_sched_lock took, then writes the
 * records composed under the lock (ag_report_flush). */
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

/* ---- decide.c ----------------------------------------------------------- */

enum ag_path { AG_PATH_IOCTL, AG_PATH_URING };

struct ag_submit {
	int fd;
	uint32_t schedule;
	enum ag_path path;
};

/*
 * The submit-time decision for schedule s (locked; NULL: unknown to the
 * guard): 0 allow, -EPERM block (enforce mode), after reporting.
 */
int ag_decide(struct ag_sched *s, const struct ag_submit *sub);

/* ---- request.c: one handler per request, for both front ends ----------- */

struct ag_call;

/*
 * What differs between the ioctl and the URING_CMD front end; everything
 * else about a request (its copy-in, checks, mirror update and what is
 * forwarded) is the request's handler, written once.
 */
struct ag_front {
	enum ag_path path;
	/* The driver acts only after the handler has returned, and the
	 * guard never sees its answer (io_uring): the mirror is updated
	 * when the request is handed over, and what the guard cannot
	 * mirror then is answered by the guard. */
	int deferred;
	/* Hands the driver request `cmd` (a DRM_IOCTL_ARENA_* number) with
	 * argument `arg`, the guard's own copy (s: its schedule, locked, or
	 * NULL).  ioctl: the driver's answer; io_uring: the SQE now holds
	 * exactly that request, 0. */
	int (*forward)(struct ag_call *c, struct ag_sched *s, unsigned int cmd,
		       void *arg);
	/* s locked: waits until no other submit or append holds it: 0, or
	 * -EBUSY when this caller must not wait. */
	int (*wait_holds)(struct ag_call *c, struct ag_sched *s);
	/* An approved submit or append of s (locked) stays checked until
	 * the driver has it: 0 or -ENOMEM.  NULL: the lock held across the
	 * forward does that. */
	int (*keep)(struct ag_call *c, struct ag_sched *s);
};

struct ag_call {
	const struct ag_front *front;
	struct ag_file *f;
	int fd;                     /* the driver's fd; the one reported */
	void *ctx;                  /* the front end's own (the SQE's walk) */
};

/*
 * A guarded request: the argument the handler reads is `size` bytes, the
 * caller's bytes zero extended (the submits all read the sealed layout,
 * whose first fields are the plain submit's).  uring_op is its
 * URING_CMD cmd_op (0: none) and uring_size the bytes of sqe->cmd it
 * takes there.
 */
struct ag_request {
	const char *name;
	unsigned int cmd;           /* the canonical DRM_IOCTL_ARENA_* */
	size_t size;
	uint32_t uring_op;
	size_t uring_size;
	int (*handle)(struct ag_call *c, void *arg);
};

/* By DRM number (as drm_ioctl dispatches), or NULL. */
const struct ag_request *ag_request_by_nr(unsigned int nr);
/* By URING_CMD cmd_op, or NULL. */
const struct ag_request *ag_request_by_uring_op(uint32_t op);

/* ---- attach.c: sealing the device's open files -------------------------- */

/*
 * A device fd seen for the first time that no known fd shares an open
 * file with by kcmp: seals its open file (DRM_IOCTL_ARENA_SEAL) and
 * returns its struct ag_file (referenced): the one already known under
 * the same context id (an fd that kcmp could not match), or a new one.
 * On a driver without seals (EINVAL) says once what the guard then
 * cannot guarantee, and returns a new, unsealed file.  NULL when memory
 * runs out.
 */
struct ag_file *ag_file_attach(int fd);
/* f is being emptied: its context id is no longer matched to it. */
void ag_file_detach(struct ag_file *f);
/* fork: the list of contexts, a leaf (last in fork_prepare). */
void ag_attach_lock_all(void);
void ag_attach_unlock_all(void);

/* ---- report.c ----------------------------------------------------------- */

struct ag_stats {
	atomic_ullong programs_certified;   /* images read and certified */
	atomic_ullong program_hits;         /* images found certified */
	atomic_ullong schedules_certified;  /* verdicts computed */
	atomic_ullong verdict_hits;         /* verdicts found */
	atomic_ullong submissions;
	atomic_ullong blocked;
	atomic_ullong warned;
	atomic_ullong records;              /* distinct records written */
	atomic_ullong records_lost;         /* records no output took */
	atomic_ullong certify_ns;
	atomic_ullong unchecked_sqes;       /* seen too late */
	atomic_ullong suppressed;           /* failing, let through by a
					     * suppression rule */
	atomic_ullong repeats;              /* refusals not recorded: one
					     * like it was already */
};

extern struct ag_stats ag_stats;

uint64_t ag_now_ns(void);

/*
 * The output rules (docs/guard.md, Records and where they go), all kept
 * by report.c:
 *
 * - records go only to descriptors the guard opened itself at start:
 *   ARENAGUARD_LOG (its own open file description, O_NONBLOCK), and
 *   standard error duplicated at load time (close-on-exec, at a high
 *   number); never to fd 2 as it is later, which the application may
 *   have closed and reused;
 * - a write never waits (poll with a zero time-out on a description the
 *   application shares; O_NONBLOCK only on the guard's own) and never
 *   signals the application (SIGPIPE and SIGXFSZ are blocked for the
 *   write in the writing thread, and only a signal the write caused is
 *   consumed); a record no output takes is counted (records_lost);
 * - records of a submission (and its dump) are written after the
 *   schedule's lock is dropped (ag_report_flush);
 * - a setting that cannot be honoured is said once, at start.
 */
/* Closes the outputs of an earlier load and opens those ag_cfg names,
 * reporting what cannot be opened or honoured (load.c calls it). */
void ag_output_open(void);
/* In a forked child: a log_path with %p becomes the child's own log, so
 * that the workers of a prefork server do not write into one file. */
void ag_output_forked(void);
/* At exit: the SUMMARY line ("arenaguard: SUMMARY: N submissions, N
 * blocked, N warned, N suppressed", when any was refused), or,
 * under the launcher, this process's counts in summary_file. */
void ag_report_summary(void);
/* At load, under the launcher: "loaded PID" in summary_file, which
 * tells the launcher that a process of its command was guarded (one
 * that ld.so ran without the guard never says it). */
void ag_report_loaded(void);
/* Tells the launcher that this process is about to execute path, which
 * will not load the guard (why: a word, exec.c), and that an exec it
 * told of failed (no program ran): "unguarded PID PATH WHY" and
 * "execfailed PID" in summary_file.  Lock-free and allocation-free (a
 * vfork child's): the descriptor opened at load while it is still the
 * guard's, else summary_file opened for the line. */
void ag_report_unguarded(const char *path, const char *why);
void ag_report_exec_failed(void);

/* The exec check (exec.c), under the launcher only: the guard's path
 * kept at load (ag_exec_load); whether the program the exec family
 * runs will load the guard, said to the launcher when not (the
 * reason's word, or NULL).  ..._at: as execveat(dirfd, path, flags)
 * with environment env; ..._search: file found in PATH as execvp(3)
 * finds it.  Async-signal-safe enough for a vfork child; errno kept. */
void ag_exec_load(void);
const char *ag_exec_check_at(int dirfd, const char *path, int flags,
			     char *const env[]);
const char *ag_exec_check_search(const char *file, char *const env[]);
/* Writes this thread's records (and dumps) composed while a schedule
 * was locked; ag_sched_unlock calls it once the lock is dropped. */
void ag_report_flush(void);
/* The application is about to close, or replace, fds [first, last]
 * (close, dup2, dup3, close_range): the guard's own descriptors among
 * them move out of the way first (or are given up). */
void ag_report_fds_taken(unsigned int first, unsigned int last);
/* A guarded request (what, on fd, -1 for none) made while its thread
 * was inside the guard: refused with EDEADLK, and said in one record
 * each, written without an allocation or a lock its thread may hold
 * (async-signal-safe); counted as blocked.  Returns -EDEADLK. */
int ag_report_reentered(const char *what, int fd);

/* One record for a failing or uncertifiable submission (deduplicated by
 * program and verdict).  v may be NULL for the cases without a verdict,
 * with `why` then saying what went wrong.  s is locked (or NULL): the
 * record is composed now and written by ag_report_flush. */
void ag_report_submission(const struct ag_submit *sub, struct ag_sched *s,
			  const struct ag_verdict *v, const char *why,
			  int blocked);
/* One record per request kind and program for a request the
 * certificate calls malformed ("PROGRAM_CREATE", "SCHEDULE_APPEND"):
 * error says what and where, as arena-certify would, outcome what
 * became of the request.  s is
 * locked (the record is written by ag_report_flush) or NULL (now). */
void ag_report_malformed(const char *request, const struct ag_submit *sub,
			 struct ag_sched *s, const struct ag_program *p,
			 const char *error, const char *outcome);
/* At exit: how many refusals were not recorded again, the suppression
 * rules' report (suppress.c), the SUMMARY line. */
void ag_report_exit(void);
/* api.c: keeps the refusal as the calling thread's last one, for
 * arenaguard_last_refusal (include/arenaguard/guard_api.h); decide.c
 * calls it for every refusal, reported or not, and uring.c for a submit
 * on a slot it cannot know.  Same arguments. */
void ag_api_note_refusal(const struct ag_submit *sub,
			 const struct ag_sched *s, const struct ag_verdict *v,
			 const char *why, int blocked);

/* A free-form notice ("cannot see ..."), once per distinct key. */
void ag_report_once(const char *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A line to the log, unconditionally. */
void ag_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A request the guard refuses for want of memory (before the driver
 * acted, or with its work undone): said once per request kind;
 * returns -ENOMEM. */
int ag_no_memory(const char *request);
void ag_report_stats(void);

void ag_report_lock_all(void);
void ag_report_unlock_all(int child);

/* ---- ioctl.c ------------------------------------------------------------ */

/* Whether a request number is one the guard handles (by DRM nr, as
 * drm_ioctl dispatches): the only test on the common path. */
static inline int ag_is_guarded_request(unsigned int cmd)
{
	return arena_request_guarded(cmd);  /* contract/requests.h's table */
}

/* A guarded request on a device file: 0 or -errno. */
int ag_ioctl(struct ag_file *f, int fd, unsigned int cmd, uint64_t arg);

/* ---- uring.c ------------------------------------------------------------ */

struct io_uring;
struct ag_held;

/*
 * Checks the SQEs the next submit will hand the kernel, rewriting blocked
 * ones into NOPs that complete with -EPERM.  Returns the schedules held
 * until the submit is done (release with ag_uring_release), or NULL.
 */
struct ag_held *ag_uring_check(struct io_uring *ring);
void ag_uring_release(struct io_uring *ring, struct ag_held *held);
/* io_uring_enter() called by the application itself: the SQEs it wrote
 * to the ring by hand, if the ring is known: by its fd, or (registered
 * nonzero: IORING_ENTER_REGISTERED_RING) by the registered ring index
 * ag_ring_index_registered saw this thread's liburing give it. */
struct ag_held *ag_uring_enter_check(int ring_fd, unsigned int to_submit,
				     int registered);
/* liburing's io_uring_register_ring_fd registered ring's fd in the
 * calling thread (ring->enter_ring_fd is the index). */
void ag_ring_index_registered(struct io_uring *ring);

/*
 * A registration of a ring's files under way: begun before the call
 * goes to the kernel, ended after it returned (success or failure) and
 * the slots were settled (ag_ring_files_set / _update, ag_ring_register).
 * Meanwhile the slots it may change, off .. off + nr (AG_REG_ALL from
 * 0: every one), are uncertain to every walk, and the begin has waited
 * (a second at most) for the walks that read them before, so that no
 * device command checked against a slot's old file reaches the kernel
 * after it has the new one.
 */
#define AG_REG_ALL 0xffffffffu
struct ag_reg {
	void *state;            /* the ring's, NULL: nothing to end */
	int entry;
	int overlap;            /* another was under way when it began */
	unsigned int seq;
	uint64_t range;         /* lo << 32 | hi, 0: every slot */
	const void *arg;        /* io_uring_register: what the kernel reads */
	uint64_t copy[4];
};
/* ag_ring_reg_begin (and ag_ring_register_begin) to ag_ring_reg_end
 * count as inside the guard (ag_inside). */
void ag_ring_reg_begin(struct ag_reg *g, struct io_uring *ring,
		       unsigned int off, unsigned int nr);
void ag_ring_reg_end(struct ag_reg *g);
/* The same for the generic io_uring_register(): the argument to hand
 * the kernel (the guard's copy of a files update or registration
 * struct, or arg). */
const void *ag_ring_register_begin(struct ag_reg *g, unsigned int fd,
				   unsigned int opcode, const void *arg,
				   unsigned int nr_args);
/* Whether io_uring_register's opcode changes the registered files,
 * which the guard follows (the others pass untouched). */
int ag_ring_register_follows(unsigned int opcode);

/* Registered files (called after the next function succeeded). */
void ag_ring_files_set(struct io_uring *ring, const int *files,
		       unsigned int nr);
void ag_ring_files_update(struct io_uring *ring, unsigned int off,
			  const int *files, unsigned int nr);
/* Around a liburing set-up (io_uring_queue_init*, io_uring_queue_mmap:
 * end with the ring, known from then on, or NULL when it failed) or
 * tear-down (io_uring_queue_exit: end with NULL), so that no scan takes
 * a ring fd for an unseen one while either is under way. */
void ag_ring_life_begin(void);
void ag_ring_life_end(struct io_uring *ring);
/* Reports (once) an io_uring fd of this process that no liburing
 * function the guard interposes set up: its SQEs are never checked.
 * Looked for when a device file is first seen, and at exit. */
void ag_uring_note_unseen_rings(void);
/* A ring that liburing unmaps (io_uring_queue_exit). */
void ag_ring_forget(struct io_uring *ring);
/* fds first .. last were closed: a ring known by one of them is no
 * longer reachable so (a walk of the few rings, no lock). */
void ag_ring_fds_closed(unsigned int first, unsigned int last);
/* Whether the SQEs ring has not handed to the kernel yet hold a
 * URING_CMD (lock-free, async-signal-safe). */
int ag_uring_pending_cmd(struct io_uring *ring);
/* io_uring_resize_rings moved ring's SQ ring from old_sq_ring. */
void ag_ring_moved(void *old_sq_ring, struct io_uring *ring);
/* The generic io_uring_register(), after the kernel answered rc: the
 * file registrations among its opcodes. */
void ag_ring_register(unsigned int fd, unsigned int opcode, const void *arg,
		      unsigned int nr_args, int rc);

void ag_uring_lock_all(void);
void ag_uring_unlock_all(int child);

/* ---- small helpers ------------------------------------------------------ */

char *ag_strdup(const char *s);
char *ag_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
