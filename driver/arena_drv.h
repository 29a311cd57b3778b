/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The arena accelerator's DRM accel driver: the seam
 * between its files.
 *
 *   arena_drv.c       module, platform device, drm_driver, ioctl table
 *   arena_bo.c        buffer objects (GEM shmem) at fixed device addresses
 *   arena_program.c   programs: the image copied, parsed by the contract
 *   arena_schedule.c  schedules, submissions, wait, the seal
 *   arena_exec.c      executing a schedule: the contract's walk, the FPU
 *   arena_uring.c     the io_uring URING_CMD front end
 *   arena_contract.c  contract/image.c, the rules shared with user space
 *   arena_walk.c      contract/execute.c, the walk shared with user space
 *   arena_kernels.c   contract/kernels.c, built with the FPU flags
 *
 * Locking: each open file (a context) has one mutex, arena_file.lock,
 * that every handler below takes (they say "locked"); execution runs
 * under it, so a context's work is serialised, as the simulator's is.
 * Errors are -errno exactly as include/arenaguard/uapi.h documents.
 */
#ifndef ARENA_DRV_H
#define ARENA_DRV_H

#include <linux/gfp.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/xarray.h>
#include <crypto/sha2.h>
#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/drm_gem_shmem_helper.h>

#include <arenaguard/uapi.h>
#include "../contract/image.h"

/**
 * struct arena_device - the one arena device
 * @drm: the DRM device (accel node)
 * @next_context: the last context identity handed out
 */
struct arena_device {
	struct drm_device drm;
	atomic64_t next_context;
};

/**
 * struct arena_file - a context: one open file description of the node
 * @adev: the device
 * @drm_file: its DRM file
 * @lock: guards everything below
 * @bos: buffer handles -> struct arena_bo
 * @by_address: the buffers, by device address (disjoint ranges)
 * @programs: program handles -> struct arena_prog
 * @schedules: schedule handles -> struct arena_schedule
 * @faulted: sequence numbers whose submission faulted
 * @last_seqno: sequence numbers 1 .. last_seqno were handed out
 * @context: identity (DRM_IOCTL_ARENA_SEAL), never 0, never reused
 * @sealed: unsealed submissions are refused (ENOKEY), for good
 * @poison: executions poison fresh planes (the poison parameter at open)
 */
struct arena_file {
	struct arena_device *adev;
	struct drm_file *drm_file;
	struct mutex lock; /* guards the context: every field below */
	struct xarray bos;
	struct rb_root by_address;
	struct xarray programs;
	struct xarray schedules;
	struct xarray faulted;
	u64 last_seqno;
	u64 context;
	bool sealed;
	bool poison;
};

/**
 * struct arena_bo - a buffer object at a fixed device address
 * @shmem: its GEM shmem object (one reference held)
 * @vaddr: its kernel mapping, for the kernels and BO_READ/BO_WRITE
 * @address: first device address
 * @size: bytes (a multiple of PAGE_SIZE)
 * @node: in arena_file.by_address
 */
struct arena_bo {
	struct drm_gem_shmem_object *shmem;
	u8 *vaddr;
	u64 address;
	u64 size;
	struct rb_node node;
};

/**
 * struct arena_prog - a program
 * @image: the exact bytes given to PROGRAM_CREATE (kvmalloc'ed)
 * @img: the contract's view of @image
 * @index: the contract's launch-table index (in @index_mem)
 * @index_mem: memory for @index
 * @scratch: @index.max_words words: one launch's words at an ordinal
 * @seal: SHA-256 state after le64(size) || image
 * @schedules: live schedules of it (EBUSY on destroy)
 */
struct arena_prog {
	u8 *image;
	struct arena_image img;
	struct arena_program index;
	void *index_mem;
	u64 *scratch;
	struct sha256_state seal;
	u64 schedules;
};

/**
 * struct arena_schedule - a schedule of a program
 * @prog: its program (which outlives it: EBUSY)
 * @refs: accepted references (kvmalloc'ed, @cap_refs of them)
 * @n_refs: how many
 * @cap_refs: room
 * @executed: launches the whole schedule executes
 * @seal: the program's state, then every accepted reference
 */
struct arena_schedule {
	struct arena_prog *prog;
	struct drm_arena_ref *refs;
	u64 n_refs;
	u64 cap_refs;
	u64 executed;
	struct sha256_state seal;
};

static inline struct arena_file *to_arena_file(struct drm_file *file)
{
	return file->driver_priv;
}

extern bool arena_require_seal;
extern bool arena_poison;

/*
 * Allocations a request sizes: charged to the caller's memory cgroup; an
 * impossible size is ENOMEM for the caller, never a warning in the kernel
 * log (an application's mistake is not the kernel's) nor the OOM killer
 * taking another process.
 */
#define ARENA_GFP (GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_RETRY_MAYFAIL)

/* arena_drv.c: takes af->lock, killable: 0, or -EINTR (a fatal signal) */
int arena_lock(struct arena_file *af);

/* arena_bo.c (locked) */
int arena_bo_create(struct arena_file *af, struct drm_arena_bo_create *arg);
int arena_bo_mmap_offset(struct arena_file *af, struct drm_arena_bo_mmap *arg);
int arena_bo_rw(struct arena_file *af, const struct drm_arena_bo_rw *arg,
		bool write);
int arena_bo_destroy(struct arena_file *af, const struct drm_arena_handle *arg);
u8 *arena_bo_range(struct arena_file *af, u64 address, u64 len);
int arena_bo_fill(struct arena_file *af, u64 address, u64 size, u8 byte);
void arena_bo_drop(struct arena_file *af, void *obj);

/* arena_program.c (locked) */
int arena_program_create(struct arena_file *af,
			 struct drm_arena_program_create *arg);
int arena_program_destroy(struct arena_file *af,
			  const struct drm_arena_handle *arg);
void arena_program_drop(struct arena_file *af, void *obj);

/* arena_schedule.c (locked) */
int arena_schedule_create(struct arena_file *af,
			  struct drm_arena_schedule_create *arg);
int arena_schedule_append(struct arena_file *af,
			  const struct drm_arena_schedule_append *arg);
/**
 * struct arena_seal_check - what a submission asks of the seal
 * @sealed: false: the plain submit (ENOKEY on a sealed context)
 * @algorithm: the seal's algorithm (EINVAL unless ARENA_SEAL_SHA256)
 * @pad: the submission's pad (EINVAL unless 0)
 * @seal: the digest the schedule must have (EKEYREJECTED otherwise)
 */
struct arena_seal_check {
	bool sealed;
	u32 algorithm;
	u32 pad;
	u8 seal[ARENA_SEAL_BYTES];
};

int arena_schedule_submit(struct arena_file *af, u32 schedule, u32 flags,
			  const struct arena_seal_check *check, u64 *seqno,
			  u64 __user *seqno_user);
int arena_seal(struct arena_file *af, struct drm_arena_seal *arg);
int arena_wait(struct arena_file *af, const struct drm_arena_wait *arg);
int arena_schedule_destroy(struct arena_file *af,
			   const struct drm_arena_handle *arg);
void arena_schedule_drop(struct arena_file *af, void *obj);

/* arena_exec.c (locked): 0, or -EFAULT when a launch faulted. */
int arena_execute(struct arena_file *af, struct arena_prog *prog,
		  const struct drm_arena_ref *refs, u64 n_refs);

/* arena_uring.c */
int arena_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags);

#endif
