/* SPDX-License-Identifier: MIT */
/*
 * libarenasim: the simulated `arena` accelerator (include/arenaguard/
 * uapi.h), preloaded into an application in the manner of Mesa's
 * drm-shim.  This header is the seam between the files:
 *
 *   init.c       the real libc functions, the device lock, options
 *   interpose.c  libc entry points: open/stat/ioctl/mmap/dup/close
 *   context.c    a context's state in a memfd shared across processes
 *   fdtable.c    which fds are the device, which context each is
 *   handles.c    handle tables (idr-like), in the context
 *   bo.c         buffer objects and the device address space
 *   program.c    program images
 *   schedule.c   schedules, submissions and sequence numbers
 *   execute.c    walking a schedule (contract/execute.c), poison
 *   kernels.c    the device memory the f32 kernels (contract/) run on
 *   ioctl.c      the DRM ioctl dispatcher
 *   uring.c      liburing interposition: URING_CMD -> injected NOP
 *
 * Locking: one mutex per process (sim_lock) guards the fd table and the
 * process's views of contexts; each context's process-shared mutex
 * (ctx_lock, taken inside sim_lock) guards its shared state.  Functions
 * below that take a struct sim_file expect both held, unless they say
 * otherwise.  Errors are returned as -errno, as in a kernel.
 */
#ifndef ARENASIM_SIM_H
#define ARENASIM_SIM_H

#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include <arenaguard/certify.h>
#include <arenaguard/uapi.h>

#include "seal.h"
#include "../contract/execute.h"

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
 * The re-entry flag (the preload core's, preload/reentry.h): set while
 * this thread runs device code (sim_lock to sim_unlock, start-up, a
 * probe), so that any libc call it makes (directly or from a library
 * underneath) goes straight to the real function instead of back into
 * the simulator.
 */
#include "reentry.h"

/* ---- context.c: a context's state, in a memfd shared like a drm_file ----
 *
 * Opening the node creates a memfd: the real open file description,
 * which the kernel shares across dup, fork and SCM_RIGHTS as it shares a
 * drm_file.  The context's whole state lives in that memfd, mapped by
 * every process holding an fd of it, under a process-shared mutex in its
 * header: objects refer to each other by offsets into it, never by
 * pointers.  The file has a fixed (sparse) size and is mapped once per
 * process, so a process's pointers into it stay valid while it is
 * mapped.  Bookkeeping is allocated from the bottom (freed blocks are
 * reused), buffer memory from the top (never reused, so that a mapping
 * that outlives its buffer never aliases another).
 */

#define SIM_CTX_BYTES (4ull << 30)    /* the memfd's size: 4 GiB sparse */

/* A handle table (small nonzero integers, lowest free first, like idr):
 * `slot` is the offset of cap uint64_t record offsets, 0 for free. */
struct sim_handles {
	uint64_t slot;
	uint32_t cap;
	uint32_t used;
};

struct sim_ctx;

/* One process's view of one context (the drm_file it shares): its
 * mapping, and the programs it has parsed. */
struct sim_file {
	unsigned int refcount;        /* this process's fds and ring slots */
	uint64_t dev, ino;            /* the memfd's identity */
	uint8_t *map;                 /* SIM_CTX_BYTES of it */
	struct sim_ctx *ctx;          /* == map */
	struct sim_cached *cache;     /* by program handle - 1 */
	uint32_t n_cache;
	struct sim_file *next;        /* every sim_file of this process */
};

/* The shared state, at offset 0 of the memfd. */
struct sim_ctx {
	uint64_t magic, version;      /* SIM_CTX_MAGIC, 1: this is a context */
	pthread_mutex_t lock;         /* process-shared, robust */
	uint64_t context;             /* identity (DRM_IOCTL_ARENA_SEAL) */
	int sealed;                   /* unsealed submits refused, for good */
	uint64_t meta_top;            /* bookkeeping: [page, meta_top) used */
	uint64_t data_bottom;         /* buffers: [data_bottom, size) used */
	uint64_t free_list[40];       /* freed blocks of 64 << class bytes */
	struct sim_handles bos, programs, schedules;
	uint64_t by_address;          /* offsets of live buffers, by address */
	uint32_t n_by_address, cap_by_address;
	uint64_t next_mmap_offset;
	uint64_t last_seqno;          /* handed out: 1 .. last_seqno */
	uint64_t faulted;             /* offset of faulted seqnos, ascending */
	uint64_t n_faulted, cap_faulted;
	uint64_t last_program_id;     /* program identities, never reused */
};

/* Creates a context on a new memfd (O_CLOEXEC, O_NONBLOCK of flags
 * honoured) and maps it: its fd, or -errno. */
int ctx_create(int flags, struct sim_file **out);
/* Whether fd is a context's memfd (fstat identity, then the magic);
 * fills dev/ino.  Without the lock: an fd that is not one costs one
 * fstat. */
int ctx_probe(int fd, uint64_t *dev, uint64_t *ino);
/* Maps the context fd is (ctx_probe said so) into f; -errno. */
int ctx_map(struct sim_file *f, int fd);
void ctx_unmap(struct sim_file *f);
/* The shared mutex, taken under sim_lock (lock order: sim_lock first). */
void ctx_lock(struct sim_file *f);
void ctx_unlock(struct sim_file *f);
/* Memory at offset off (not 0) of the context. */
static inline void *ctx_at(const struct sim_file *f, uint64_t off)
{
	return f->map + off;
}
/* size zeroed bytes of bookkeeping (8-aligned): its offset, 0 when full.
 * ctx_free takes the same size back. */
uint64_t ctx_alloc(struct sim_file *f, uint64_t size);
void ctx_free(struct sim_file *f, uint64_t off, uint64_t size);
/* Moves the first `used` bytes of block off (size bytes; 0: none) to a
 * new block of grown bytes, freeing the old: its offset, 0 when full
 * (the old block is kept then). */
uint64_t ctx_grow(struct sim_file *f, uint64_t off, uint64_t size,
		  uint64_t used, uint64_t grown);
/* size zeroed bytes of buffer memory, page-aligned, never reused. */
uint64_t ctx_alloc_data(struct sim_file *f, uint64_t size);

/* ---- handles.c: handle tables in the context ---- */

/* Adds record `rec` (an offset); -ENOMEM. */
int handles_add(struct sim_file *f, struct sim_handles *h, uint64_t rec,
		uint32_t *handle);
/* The record of handle, or 0. */
uint64_t handles_get(const struct sim_file *f, const struct sim_handles *h,
		     uint32_t handle);
uint64_t handles_remove(struct sim_file *f, struct sim_handles *h,
			uint32_t handle);
/* The record at index i (0-based), 0 if free. */
uint64_t handles_at(const struct sim_file *f, const struct sim_handles *h,
		    uint32_t i);

/* ---- fdtable.c: which fds of this process are which context ---- */

/* Opens the node: a new context; its fd, or -errno. */
int fd_open_device(int flags);
/* The context behind fd, or NULL when fd is not the device.  An fd this
 * process did not open or dup itself (inherited over exec, received by
 * SCM_RIGHTS, dup'ed behind our back) is recognised here. */
struct sim_file *fd_file(int fd);
/* fd now refers to f as well (dup); -ENOMEM, or -EMFILE for an fd
 * beyond the table (preload/fd_table.h). */
int fd_attach(int fd, struct sim_file *f);
/* fd no longer refers to the device (close, or dup2 over it). */
void fd_detach(int fd);
void fd_detach_range(unsigned int first, unsigned int last);
/* Lock-free hints: 0 means no fd in the table (fd_any), or fd is not
 * the device (fd_maybe_device: an fd the table lacks costs an fstat). */
int fd_any(void);
int fd_maybe_device(int fd);

void file_get(struct sim_file *f);
void file_put(struct sim_file *f);

/* ---- bo.c ---- */

int bo_create(struct sim_file *f, struct drm_arena_bo_create *arg);
int bo_mmap_offset(struct sim_file *f, struct drm_arena_bo_mmap *arg);
int bo_rw(struct sim_file *f, const struct drm_arena_bo_rw *arg, int write);
int bo_destroy(struct sim_file *f, const struct drm_arena_handle *arg);
/* mmap(2) of a fake offset through the device fd `fd`; MAP_FAILED with
 * *err set on failure. */
void *bo_map(struct sim_file *f, int fd, void *addr, size_t len, int prot,
	     int flags, uint64_t offset, int *err);
/* Host memory for device range [address, address + len) when it lies in
 * one buffer; NULL otherwise.  len 0 is never asked for. */
uint8_t *bo_range(struct sim_file *f, uint64_t address, uint64_t len);
/* Sets the bytes of [address, address + size) that lie inside buffers. */
void bo_fill(struct sim_file *f, uint64_t address, uint64_t size, int byte);

/* ---- program.c ---- */

struct sim_program {
	struct ac_model *model;
	ac_program *prog;             /* keeps pointers into model */
	uint64_t schedules;           /* live schedules (EBUSY on destroy) */
	/* the device's view (contract/image.h), as arena.ko's: references,
	 * V(t) and the walk; img points into the context's image, which
	 * outlives every use of this parse (program_get) */
	struct arena_image img;
	struct arena_program cp;
	void *cp_mem;                 /* arena_program_index_bytes of it */
	uint64_t *scratch;            /* cp.max_words words: one launch at t */
};

/* A program in the context: its image (the exact bytes given to
 * PROGRAM_CREATE) and what every process needs; each process parses the
 * image into a struct sim_program once (sim_cached). */
struct sim_program_rec {
	uint64_t id;                  /* never reused within the context */
	uint64_t image, size;         /* offset and length of the image */
	uint64_t schedules;           /* live schedules (EBUSY on destroy) */
	struct arena_seal seal;       /* after the image (uapi.h) */
};

/* This process's parse of program `id` (0: none). */
struct sim_cached {
	uint64_t id;
	struct sim_program *program;
};

int program_create(struct sim_file *f, struct drm_arena_program_create *arg);
int program_destroy(struct sim_file *f, const struct drm_arena_handle *arg);
/* The record of handle (NULL: none) and, when p is not NULL, this
 * process's parse of it in *p (-ENOMEM when it cannot be made). */
int program_get(struct sim_file *f, uint32_t handle,
		struct sim_program_rec **rec, const struct sim_program **p);
/* Drops this process's parses (the file is going away here). */
void program_cache_fini(struct sim_file *f);
void program_free(struct sim_program *p);

/* ---- schedule.c ---- */

/* A schedule in the context. */
struct sim_schedule {
	uint32_t program;             /* its handle */
	uint32_t busy;                /* executing (always 0: submit is sync) */
	uint64_t refs;                /* offset of cap_refs struct ac_ref */
	uint64_t n_refs, cap_refs;
	uint64_t executed;            /* launches of the executed sequence */
	struct arena_seal seal;       /* program's, then every accepted ref */
};

int schedule_create(struct sim_file *f, struct drm_arena_schedule_create *arg);
int schedule_append(struct sim_file *f,
		    const struct drm_arena_schedule_append *arg);
/* What a submission asks of the seal: none (the plain submit, refused
 * with ENOKEY on a sealed context) or this seal under this algorithm
 * (EINVAL for an algorithm the driver does not offer or a nonzero
 * pad: contract/requests.h's arena_seal_args_ok; EKEYREJECTED unless
 * it is the schedule's seal). */
struct sim_seal_check {
	int sealed;
	uint32_t algorithm, pad;
	const uint8_t *seal;          /* ARENA_SEAL_BYTES */
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
