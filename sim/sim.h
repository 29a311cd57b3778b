/* SPDX-License-Identifier: MIT */
/*
 * libarenasim: the simulated `arena` accelerator (include/arenaguard/
 * uapi.h), preloaded into an application in the manner of Mesa's
 * drm-shim.  This header is the seam between the files:
 *
 *   init.c       the real libc functions, the device lock, options
 *   interpose.c  libc entry points: open/stat/ioctl/mmap/dup/close
 *   fdtable.c    which fds are the device, and their open file state
 *   handles.c    handle tables (idr-like)
 *   bo.c         buffer objects and the device address space
 *   program.c    program images
 *   schedule.c   schedules, submissions and sequence numbers
 *   execute.c    walking a schedule: repeats, V(t), poison
 *   kernels.c    the f32 kernels
 *   ioctl.c      the DRM ioctl dispatcher
 *   uring.c      liburing interposition: URING_CMD -> injected NOP
 *
 * Locking: one mutex (sim_lock) guards every piece of device state and
 * the fd table; functions below that take a struct sim_file expect it
 * held.  Errors are returned as -errno, as in a kernel.
 */
#ifndef ARENASIM_SIM_H
#define ARENASIM_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <arenaguard/certify.h>
#include <arenaguard/uapi.h>

#include "seal.h"

/* ---- init.c ---- */

/* The next definitions (RTLD_NEXT) of the libc functions that device
 * code itself calls; interpose.c keeps the rest. */
struct sim_real {
	int (*close)(int);
	int (*ioctl)(int, unsigned long, ...);
	void *(*mmap)(void *, size_t, int, int, int, off_t);
};
extern struct sim_real sim_real;

/* Resolves every real function, once; every entry point calls it first
 * (pthread_once makes that cheap). */
void sim_init(void);
/* dlsym(RTLD_NEXT, name). */
void *sim_next(const char *name);
/* interpose.c's part of sim_init. */
void interpose_resolve(void);

/* ARENASIM_POISON=1 when the node is first opened: poison fresh planes
 * per instance.  ARENASIM_REQUIRE_SEAL=1: every context is sealed from
 * its open (uapi.h, "Sealed submissions").  sim_options() reads the
 * environment, once. */
extern int sim_poison;
extern int sim_require_seal;
void sim_options(void);

void sim_lock(void);
void sim_unlock(void);

/*
 * Reentrancy guard: nonzero while this thread runs device code, so that
 * any libc call it makes (directly or from a library underneath) goes
 * straight to the real function instead of back into the simulator.
 */
extern __thread int sim_depth;

/* ---- handles.c: small integer handles, lowest free first (like idr) ---- */

struct sim_handles {
	void **slot;          /* handle h lives in slot[h - 1] */
	uint32_t cap;
	uint32_t used;
};

int handles_add(struct sim_handles *h, void *obj, uint32_t *handle);
void *handles_get(const struct sim_handles *h, uint32_t handle);
void *handles_remove(struct sim_handles *h, uint32_t handle);
/* The object at index i (0-based), for teardown walks; NULL if free. */
void *handles_at(const struct sim_handles *h, uint32_t i);
void handles_fini(struct sim_handles *h);

/* ---- fdtable.c: open file state shared by dup'ed fds ---- */

struct sim_bo;

/* The state behind one open of the node (a drm_file): handles, the
 * device address space, sequence numbers. */
struct sim_file {
	unsigned int refs;            /* fds and registered ring slots */
	struct sim_handles bos, programs, schedules;
	struct sim_bo **by_address;   /* live buffers sorted by address */
	uint32_t n_by_address, cap_by_address;
	uint64_t next_mmap_offset;
	uint64_t last_seqno;          /* handed out: 1 .. last_seqno */
	uint64_t *faulted;            /* faulted seqnos, ascending */
	uint64_t n_faulted, cap_faulted;
	uint64_t context;             /* identity (DRM_IOCTL_ARENA_SEAL) */
	int sealed;                   /* unsealed submits refused, for good */
};

/* A new open of the node on real fd `fd`; -errno on failure. */
int fd_open_device(int fd);
/* The file behind fd, or NULL when fd is not the device. */
struct sim_file *fd_file(int fd);
/* fd now refers to f as well (dup); -ENOMEM. */
int fd_attach(int fd, struct sim_file *f);
/* fd no longer refers to the device (close, or dup2 over it). */
void fd_detach(int fd);
void fd_detach_range(unsigned int first, unsigned int last);
/* Lock-free hint: 0 means no fd is the device, so skip the lock. */
int fd_any(void);

void file_get(struct sim_file *f);
void file_put(struct sim_file *f);

/* ---- bo.c ---- */

int bo_create(struct sim_file *f, struct drm_arena_bo_create *arg);
int bo_mmap_offset(struct sim_file *f, struct drm_arena_bo_mmap *arg);
int bo_rw(struct sim_file *f, const struct drm_arena_bo_rw *arg, int write);
int bo_destroy(struct sim_file *f, const struct drm_arena_handle *arg);
void bo_free_all(struct sim_file *f);
/* mmap(2) of a fake offset; MAP_FAILED with *err set on failure. */
void *bo_map(struct sim_file *f, void *addr, size_t len, int prot,
	     int flags, uint64_t offset, int *err);
/* Host memory for device range [address, address + len) when it lies in
 * one buffer; NULL otherwise.  len 0 is never asked for. */
uint8_t *bo_range(struct sim_file *f, uint64_t address, uint64_t len);
/* Sets the bytes of [address, address + size) that lie inside buffers. */
void bo_fill(struct sim_file *f, uint64_t address, uint64_t size, int byte);

/* ---- program.c ---- */

struct sim_body;

struct sim_program {
	struct ac_model *model;
	ac_program *prog;             /* keeps pointers into model */
	uint64_t schedules;           /* live schedules (EBUSY on destroy) */
	uint32_t *body_at;            /* per launch: repeat + 1 if a body
				       * starts there, else 0 */
	struct sim_body *bodies;      /* sorted by first launch */
	uint32_t n_bodies;
	/* Per word, for body words: the summed deltas D and the table slot
	 * (or -1) of spec 1.2 V(t). */
	__int128 *delta_sum;
	int64_t *slot_of;
	uint32_t max_words;           /* largest word_count of a launch */
	uint64_t *scratch;            /* max_words words: one launch at t */
	struct arena_seal seal;       /* after the image (uapi.h) */
};

int program_create(struct sim_file *f, struct drm_arena_program_create *arg);
int program_destroy(struct sim_file *f, const struct drm_arena_handle *arg);
void program_free(struct sim_program *p);
/* Checks one reference (spec 1.3) and adds the launches it executes to
 * *executed (saturating); -EINVAL when malformed. */
int program_check_ref(const struct sim_program *p, const struct ac_ref *ref,
		      uint64_t *executed);

/* ---- schedule.c ---- */

struct sim_schedule {
	struct sim_program *program;
	struct ac_ref *refs;
	uint64_t n_refs, cap_refs;
	uint64_t executed;            /* launches of the executed sequence */
	int busy;                     /* executing (always 0: submit is sync) */
	struct arena_seal seal;       /* program's, then every accepted ref */
};

/* Hard cap on one append batch (EINVAL beyond): bounds the copy. */
#define SIM_MAX_APPEND (1u << 20)

int schedule_create(struct sim_file *f, struct drm_arena_schedule_create *arg);
int schedule_append(struct sim_file *f,
		    const struct drm_arena_schedule_append *arg);
/* What a submission asks of the seal: none (the plain submit, refused
 * with ENOKEY on a sealed context) or this value (EKEYREJECTED unless it
 * is the schedule's seal). */
struct sim_seal_check {
	int sealed;
	uint64_t seal;
};

/* Executes the schedule; *seqno gets its sequence number.  If
 * seqno_user is not 0 the number is stored there first (EFAULT before
 * anything runs).  Every refusal comes before a number is consumed. */
int schedule_submit(struct sim_file *f, uint32_t schedule, uint32_t flags,
		    const struct sim_seal_check *check, uint64_t *seqno,
		    uint64_t seqno_user);
/* DRM_IOCTL_ARENA_SEAL. */
int file_seal(struct sim_file *f, struct drm_arena_seal *arg);
int schedule_wait(struct sim_file *f, const struct drm_arena_wait *arg);
int schedule_destroy(struct sim_file *f, const struct drm_arena_handle *arg);
void schedule_free(struct sim_schedule *s);

/* ---- execute.c ---- */

/* Runs references of a program; 0, or -EFAULT when a launch faulted
 * (execution stops there). */
int execute(struct sim_file *f, const struct sim_program *p,
	    const struct ac_ref *refs, uint64_t n_refs);

/* ---- kernels.c ---- */

/* Runs one launch given its words at this iteration; 0 or -EFAULT. */
int kernel_run(struct sim_file *f, const uint64_t *words, uint32_t n);

/* ---- ioctl.c ---- */

/* The driver's ioctl entry: 0 or -errno.  fd is the real fd underneath
 * (for the few VFS-level ioctls that pass through). */
int sim_ioctl(struct sim_file *f, int fd, unsigned int cmd, uint64_t arg);

#endif
