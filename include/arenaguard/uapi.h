/* SPDX-License-Identifier: MIT */
/*
 * arenaguard/uapi.h - the `arena` accelerator driver's user-space ABI.
 *
 * A DRM accel driver: the node is /dev/accel/accel0 (character device,
 * major 261), DRM_IOCTL_VERSION reports the name "arena", and the
 * driver-private ioctls below are DRM_IOWR numbers from DRM_COMMAND_BASE.
 * Every struct has a fixed size and explicit padding; padding and
 * reserved fields must be zero (EINVAL otherwise) so they can gain a
 * meaning later.  Pointers travel as __u64.
 *
 * Errors (returned as -1/errno by ioctl, as -errno in a CQE's res):
 *   EINVAL  malformed argument: nonzero padding, unknown flags, a program
 *           image that does not parse, a reference outside the program,
 *           a seal algorithm the driver does not offer;
 *           an unknown ioctl number in the driver's range (as drm_ioctl)
 *   EFAULT  a user pointer that cannot be read or written
 *   ENOENT  an unknown handle
 *   ENOMEM  out of device or host memory
 *   EBUSY   the object is in use (a program with live schedules, a buffer
 *           overlapping another, a schedule that is executing)
 *   EIO     (DRM_IOCTL_ARENA_WAIT) the submission faulted on the device
 *   ENOTTY  an ioctl that is not DRM's; an unknown URING_CMD cmd_op
 *   EPERM   (only from libarenaguard) the submission was blocked because
 *           the program failed the device-arena certificate
 *   ENOKEY  an unsealed submission on a sealed context (see "Sealed
 *           submissions" below)
 *   EKEYREJECTED  a sealed submission whose seal is not the SHA-256 of the
 *           program and references the driver holds for that schedule
 *
 * Programs are the binary program image (docs/program-image.md).  The
 * device executes launches; the plan section and the launches' source
 * identities exist for the certificate, and the device reads them only
 * to poison: told to (the simulator's ARENASIM_POISON=1, arena.ko's
 * module parameter poison=1, both off by default), it fills each phase
 * instance's fresh planes with 0xFF before the instance's first launch
 * (contract/execute.h, the one rule both follow), so a value the
 * certificate trusted to be written shows up as NaN when it was not.
 *
 * Implementations: driver/arena.ko, a Linux 6.12 DRM accel driver
 * (docs/driver.md), and sim/libarenasim.so, the simulated device preloaded
 * into a process (docs/simulator.md), implement all of this with the same
 * errors; both run the kernels of contract/kernels.c, and arena.ko checks
 * images with contract/image.c, which agrees with the simulator's
 * libarenacert (fuzz/fuzz_contract.c); both walk schedules, and poison
 * when told to, with contract/execute.c; both seal with SHA-256 as
 * "Sealed submissions" below says.  libarenaguard sits in front of
 * either and adds EPERM.
 */
#ifndef ARENAGUARD_UAPI_H
#define ARENAGUARD_UAPI_H

#include <linux/types.h>

#ifdef __KERNEL__
#include <drm/drm.h>
#else
#include <drm.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define ARENA_DRIVER_NAME "arena"
#define ARENA_NODE_PATH "/dev/accel/accel0"
#define ARENA_ACCEL_MAJOR 261

/* ---- Buffer objects: device memory at a fixed device address ---------- */

/*
 * Creates a buffer of `size` bytes at device address `address` (both
 * multiples of 4096, size >= 4096).  The buffer must not overlap another
 * live one (EBUSY).  Its bytes start as zero.
 */
struct drm_arena_bo_create {
	__u64 address;
	__u64 size;
	__u32 flags;          /* must be 0 */
	__u32 handle;         /* out */
};

/* The fake offset to pass to mmap(2) on the device fd to map the buffer. */
struct drm_arena_bo_mmap {
	__u32 handle;
	__u32 pad;
	__u64 offset;         /* out */
};

/* Copies `size` bytes between user memory `data` and the buffer at byte
 * `offset` (EINVAL if [offset, offset + size) leaves the buffer). */
struct drm_arena_bo_rw {
	__u32 handle;
	__u32 pad;
	__u64 offset;
	__u64 size;
	__u64 data;           /* user pointer */
};

struct drm_arena_handle {
	__u32 handle;
	__u32 pad;
};

/* ---- Programs ---------------------------------------------------------- */

/* Creates a program from a binary program image at `image` (a user
 * pointer) of `size` bytes.  The image's own schedule section must be
 * empty: schedules are built with the schedule ioctls. */
struct drm_arena_program_create {
	__u64 image;
	__u64 size;
	__u32 flags;          /* must be 0 */
	__u32 handle;         /* out */
};

/* ---- Schedules --------------------------------------------------------- */

/* Creates an empty schedule of `program`. */
struct drm_arena_schedule_create {
	__u32 program;
	__u32 handle;         /* out */
};

/* One schedule reference: launches [first, first + count) of the table;
 * the same as a reference of the program image's schedule section. */
struct drm_arena_ref {
	__u64 first;
	__u64 count;
};

/* Appends `count` references (an array at user pointer `refs`).  A batch
 * is atomic: EINVAL (a reference outside the table, empty, or cutting a
 * repeat body) appends none of it.  EBUSY while the schedule executes.
 * A batch holds at most 2^20 references (EINVAL beyond); count 0 appends
 * nothing and succeeds. */
struct drm_arena_schedule_append {
	__u32 schedule;
	__u32 count;
	__u64 refs;
};

/* Queues the schedule for execution, all its references from the first
 * (appending more and submitting again runs the whole longer schedule);
 * `seqno` (out) identifies the submission.  Buffer addresses, handles and
 * sequence numbers belong to the open file (each open is one context). */
struct drm_arena_schedule_submit {
	__u32 schedule;
	__u32 flags;          /* must be 0 */
	__u64 seqno;          /* out */
};

/* ---- Sealed submissions ------------------------------------------------
 *
 * A checker in user space (libarenaguard) certifies what it believes a
 * schedule holds; the driver holds what it was actually given.  The seal
 * lets the driver refuse to run anything but what was certified, so that
 * a checker whose picture diverged from the driver's (a request it never
 * saw, another process sharing the open file, a raced SQE) causes a
 * refused submission, never an uncertified run.
 *
 * The seal of a schedule is SHA-256 (FIPS 180-4, no key or seed) of the
 * byte string
 *
 *     le64(size) || image[0, size) || ref_0 || ref_1 || ... || ref_{n-1}
 *
 * where `image`/`size` are exactly the bytes given to PROGRAM_CREATE for
 * the schedule's program and ref_i is the i-th reference appended (and
 * accepted) so far, as le64(first) || le64(count).  A driver keeps a
 * SHA-256 state per program (after the image) and per schedule (fed as
 * batches are accepted), so a sealed submit finalizes a copy of the
 * schedule's state; the kernel's lib/crypto/sha256 provides exactly
 * these functions.  The algorithm is collision-resistant: a second
 * program or schedule with the seal of a certified one cannot be made,
 * so a checker's picture that diverged (through its own requests too:
 * another process recreating a handle) is refused, never run.
 *
 * Seals are named by an algorithm (ARENA_SEAL_*); DRM_IOCTL_ARENA_SEAL
 * says which a driver offers and a sealed submit says which it used, so
 * that another can be added without a new ioctl.  There is no weaker
 * algorithm to fall back to: a checker that knows none of those a driver
 * offers cannot seal, and must not submit on that context.
 *
 * The seal is an integrity check against divergence, not a secret: any
 * code in the process can compute it, as any code in the process can
 * also leave libarenaguard out.  It guarantees that what runs is what the
 * process's checker certified, not that the process is honest.
 *
 * DRM_IOCTL_ARENA_SEAL marks the open file description (the context,
 * shared by every dup'ed, forked or SCM_RIGHTS-passed fd of it) sealed,
 * for good: from then on DRM_IOCTL_ARENA_SCHEDULE_SUBMIT and
 * ARENA_URING_CMD_SUBMIT on it fail with ENOKEY, and only the sealed
 * variants run schedules.  Sealing twice succeeds, and says the same
 * `context`: a checker that cannot compare fds with kcmp(2) learns from
 * it which of its fds share one context.  A driver may also be
 * told to seal every context from its open (the simulator's
 * ARENASIM_REQUIRE_SEAL=1; a kernel driver's module parameter), so that
 * an open the checker never saw is not a way around it.  A driver
 * without these ioctls answers EINVAL (an unknown number in its range).
 *
 * The sealed submits run the schedule only when `seal` equals the seal
 * of what the driver holds for it, and fail with EKEYREJECTED otherwise
 * (nothing runs, no sequence number is consumed).  They are accepted on
 * any context, sealed or not.
 */
#define ARENA_SEAL_SHA256 1    /* SHA-256: 32 bytes */
#define ARENA_SEAL_BYTES 32    /* the seal field; a shorter seal is zero padded */

/**
 * struct drm_arena_seal - DRM_IOCTL_ARENA_SEAL: seal the context, and
 * learn its identity and the seal algorithms the driver offers.
 * @flags: must be 0 (EINVAL otherwise).
 * @algorithms: out (its input is ignored): bit (1u << ARENA_SEAL_x) for
 *	each algorithm the driver computes seals with; never 0.  A driver
 *	that answers 0 here predates algorithms (its seal is not one a
 *	checker can compute): its context is sealed all the same.
 * @context: out: the context's identity, the same on every fd (in any
 *	process) of this open file description and never that of another
 *	one while either is open; never 0.
 *
 * Errors: EINVAL (flags), EFAULT (the argument).
 */
struct drm_arena_seal {
	__u32 flags;
	__u32 algorithms;
	__u64 context;
};

/**
 * struct drm_arena_schedule_submit_sealed - DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED
 * @schedule: the schedule's handle (ENOENT if unknown).
 * @flags: must be 0 (EINVAL otherwise).
 * @seqno: out: the submission's sequence number.
 * @algorithm: the algorithm @seal was computed with: one the driver
 *	offers (struct drm_arena_seal's @algorithms), EINVAL otherwise.
 * @pad: must be 0 (EINVAL otherwise).
 * @seal: the seal of the schedule ("Sealed submissions") under
 *	@algorithm; EKEYREJECTED (nothing runs, no sequence number is
 *	consumed) when it is not the seal of what the driver holds.
 */
struct drm_arena_schedule_submit_sealed {
	__u32 schedule;
	__u32 flags;
	__u64 seqno;
	__u32 algorithm;
	__u32 pad;
	__u8  seal[ARENA_SEAL_BYTES];
};

/* Waits until the submission `seqno` has completed, at most timeout_ns
 * (negative: forever).  ETIME on time-out; 0 once complete, also when it
 * already was.  EIO when the submission faulted: the device stopped at
 * the faulting launch.  EINVAL for a sequence number never handed out. */
struct drm_arena_wait {
	__u64 seqno;
	__s64 timeout_ns;
};

#define DRM_ARENA_BO_CREATE        0x00
#define DRM_ARENA_BO_MMAP          0x01
#define DRM_ARENA_BO_WRITE         0x02
#define DRM_ARENA_BO_READ          0x03
#define DRM_ARENA_BO_DESTROY       0x04
#define DRM_ARENA_PROGRAM_CREATE   0x05
#define DRM_ARENA_PROGRAM_DESTROY  0x06
#define DRM_ARENA_SCHEDULE_CREATE  0x07
#define DRM_ARENA_SCHEDULE_APPEND  0x08
#define DRM_ARENA_SCHEDULE_SUBMIT  0x09
#define DRM_ARENA_WAIT             0x0a
#define DRM_ARENA_SCHEDULE_DESTROY 0x0b
#define DRM_ARENA_SEAL             0x0c
#define DRM_ARENA_SCHEDULE_SUBMIT_SEALED 0x0d

#define DRM_IOCTL_ARENA(nr, type) DRM_IOWR(DRM_COMMAND_BASE + (nr), type)

#define DRM_IOCTL_ARENA_BO_CREATE \
	DRM_IOCTL_ARENA(DRM_ARENA_BO_CREATE, struct drm_arena_bo_create)
#define DRM_IOCTL_ARENA_BO_MMAP \
	DRM_IOCTL_ARENA(DRM_ARENA_BO_MMAP, struct drm_arena_bo_mmap)
#define DRM_IOCTL_ARENA_BO_WRITE \
	DRM_IOCTL_ARENA(DRM_ARENA_BO_WRITE, struct drm_arena_bo_rw)
#define DRM_IOCTL_ARENA_BO_READ \
	DRM_IOCTL_ARENA(DRM_ARENA_BO_READ, struct drm_arena_bo_rw)
#define DRM_IOCTL_ARENA_BO_DESTROY \
	DRM_IOCTL_ARENA(DRM_ARENA_BO_DESTROY, struct drm_arena_handle)
#define DRM_IOCTL_ARENA_PROGRAM_CREATE \
	DRM_IOCTL_ARENA(DRM_ARENA_PROGRAM_CREATE, struct drm_arena_program_create)
#define DRM_IOCTL_ARENA_PROGRAM_DESTROY \
	DRM_IOCTL_ARENA(DRM_ARENA_PROGRAM_DESTROY, struct drm_arena_handle)
#define DRM_IOCTL_ARENA_SCHEDULE_CREATE \
	DRM_IOCTL_ARENA(DRM_ARENA_SCHEDULE_CREATE, struct drm_arena_schedule_create)
#define DRM_IOCTL_ARENA_SCHEDULE_APPEND \
	DRM_IOCTL_ARENA(DRM_ARENA_SCHEDULE_APPEND, struct drm_arena_schedule_append)
#define DRM_IOCTL_ARENA_SCHEDULE_SUBMIT \
	DRM_IOCTL_ARENA(DRM_ARENA_SCHEDULE_SUBMIT, struct drm_arena_schedule_submit)
#define DRM_IOCTL_ARENA_WAIT \
	DRM_IOCTL_ARENA(DRM_ARENA_WAIT, struct drm_arena_wait)
#define DRM_IOCTL_ARENA_SCHEDULE_DESTROY \
	DRM_IOCTL_ARENA(DRM_ARENA_SCHEDULE_DESTROY, struct drm_arena_handle)
#define DRM_IOCTL_ARENA_SEAL \
	DRM_IOCTL_ARENA(DRM_ARENA_SEAL, struct drm_arena_seal)
#define DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED \
	DRM_IOCTL_ARENA(DRM_ARENA_SCHEDULE_SUBMIT_SEALED, \
			struct drm_arena_schedule_submit_sealed)

/* ---- io_uring: IORING_OP_URING_CMD on the device fd ---------------------
 *
 * The ring must be set up with IORING_SETUP_SQE128; sqe->cmd_op selects
 * the command and sqe->cmd (80 bytes) holds its argument struct, zero
 * padded.  The CQE's res is 0 or -errno, exactly as the ioctl's result.
 */
#define ARENA_URING_CMD_APPEND 1  /* cmd: struct drm_arena_schedule_append */
#define ARENA_URING_CMD_SUBMIT 2  /* cmd: struct arena_uring_submit */
#define ARENA_URING_CMD_SUBMIT_SEALED 3  /* cmd: struct arena_uring_submit_sealed */

/* Like drm_arena_schedule_submit, but a CQE has no out field: the
 * sequence number is stored at user pointer `seqno` (if not 0). */
struct arena_uring_submit {
	__u32 schedule;
	__u32 flags;          /* must be 0 */
	__u64 seqno;          /* user pointer to a __u64, or 0 */
};

/* The sealed variant (see "Sealed submissions" and struct
 * drm_arena_schedule_submit_sealed, whose fields these are, but for
 * `seqno`); errors as that ioctl's. */
struct arena_uring_submit_sealed {
	__u32 schedule;
	__u32 flags;          /* must be 0 */
	__u64 seqno;          /* user pointer to a __u64, or 0 */
	__u32 algorithm;      /* ARENA_SEAL_SHA256 */
	__u32 pad;            /* must be 0 */
	__u8  seal[ARENA_SEAL_BYTES];
};

/* ---- Kernels ----------------------------------------------------------
 *
 * Word 0 of every launch names its kernel; the remaining words are its
 * parameters: device addresses (A) and counts (N) of f32 elements, in the
 * order listed.  A launch with too few words, an unknown kernel, or an
 * address range outside every buffer faults the submission: the device
 * stops executing it and reports EIO from DRM_IOCTL_ARENA_WAIT.  Words
 * after a kernel's parameters are ignored; an f32 parameter is the low 32
 * bits of its word; `trans` is 0 or not 0.
 */
enum arena_kernel {
	ARENA_K_COPY = 1,      /* A dst, A src, N n:         dst = src */
	ARENA_K_FILL,          /* A dst, N n, f32 bits v:    dst = v */
	ARENA_K_ADD,           /* A dst, A x, A y, N n:      dst = x + y */
	ARENA_K_MUL,           /* A dst, A x, A y, N n:      dst = x * y */
	ARENA_K_MATMUL,        /* A dst, A x, A w, N m, N k, N n, trans:
				* dst[m,n] = x[m,k] . w[k,n] (trans 0) or
				* x[m,k] . w[n,k]^T (trans 1) */
	ARENA_K_GELU,          /* A dst, A x, N n (tanh approximation) */
	ARENA_K_SOFTMAX,       /* A dst, A x, N rows, N cols, f32 bits scale:
				* row-wise softmax of scale * x */
	ARENA_K_LAYERNORM,     /* A dst, A x, A gamma, A beta, N rows, N cols:
				* row-wise, epsilon 1e-5 */
};

#ifdef __cplusplus
}
#endif

#endif /* ARENAGUARD_UAPI_H */
