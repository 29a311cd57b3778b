/* SPDX-License-Identifier: MIT */
/*
 * The driver's requests, once: every consumer of the arena ABI (the
 * simulator's dispatch table and URING_CMD handler, arena.ko's
 * drm_ioctl_desc table and uring_cmd, the guard's request table and its
 * test of guarded numbers, the fake drivers of tests/guard and fuzz/)
 * generates what it needs from ARENA_REQUESTS or calls the helpers
 * below.  uapi.h keeps the ABI: the numbers (DRM_ARENA_x,
 * DRM_IOCTL_ARENA_x, ARENA_URING_CMD_x) and the structs are defined
 * there, with their documentation; this table only names them.
 *
 * Compiles in the kernel and in user space alike (types.h): no library
 * function, no allocation.
 */
#ifndef ARENA_CONTRACT_REQUESTS_H
#define ARENA_CONTRACT_REQUESTS_H

#include <arenaguard/uapi.h>

#include "types.h"

/*
 * X(name, NAME, arg, uring_op, uring_arg, guarded), one line a request,
 * in the order of their numbers:
 *   name      lower case: consumers paste it into their handler names
 *             (the simulator's h_name, arena.ko's arena_ioctl_name)
 *   NAME      DRM_ARENA_NAME is the number, DRM_IOCTL_ARENA_NAME the
 *             ioctl (uapi.h; every one is DRM_IOWR: in and out)
 *   arg       the ioctl's argument struct
 *   uring_op  the URING_CMD cmd_op that makes the same request, or 0
 *   uring_arg the size of that command's struct in sqe->cmd, or 0
 *   guarded   1 when libarenaguard handles the request (it changes what
 *             a schedule holds or runs, or what the guard knows of
 *             one); the others pass through it untouched
 */
#define ARENA_REQUESTS(X)						\
	X(bo_create, BO_CREATE, struct drm_arena_bo_create, 0, 0, 0)	\
	X(bo_mmap, BO_MMAP, struct drm_arena_bo_mmap, 0, 0, 0)		\
	X(bo_write, BO_WRITE, struct drm_arena_bo_rw, 0, 0, 0)		\
	X(bo_read, BO_READ, struct drm_arena_bo_rw, 0, 0, 0)		\
	X(bo_destroy, BO_DESTROY, struct drm_arena_handle, 0, 0, 0)	\
	X(program_create, PROGRAM_CREATE,				\
	  struct drm_arena_program_create, 0, 0, 1)			\
	X(program_destroy, PROGRAM_DESTROY, struct drm_arena_handle,	\
	  0, 0, 1)							\
	X(schedule_create, SCHEDULE_CREATE,				\
	  struct drm_arena_schedule_create, 0, 0, 1)			\
	X(schedule_append, SCHEDULE_APPEND,				\
	  struct drm_arena_schedule_append, ARENA_URING_CMD_APPEND,	\
	  sizeof(struct drm_arena_schedule_append), 1)			\
	X(schedule_submit, SCHEDULE_SUBMIT,				\
	  struct drm_arena_schedule_submit, ARENA_URING_CMD_SUBMIT,	\
	  sizeof(struct arena_uring_submit), 1)				\
	X(wait, WAIT, struct drm_arena_wait, 0, 0, 0)			\
	X(schedule_destroy, SCHEDULE_DESTROY, struct drm_arena_handle,	\
	  0, 0, 1)							\
	X(seal, SEAL, struct drm_arena_seal, 0, 0, 1)			\
	X(schedule_submit_sealed, SCHEDULE_SUBMIT_SEALED,		\
	  struct drm_arena_schedule_submit_sealed,			\
	  ARENA_URING_CMD_SUBMIT_SEALED,				\
	  sizeof(struct arena_uring_submit_sealed), 1)

/* sqe->cmd of a 128-byte SQE (IORING_SETUP_SQE128): the argument bytes
 * of a URING_CMD, the command's struct first and zeros after it
 */
#define ARENA_URING_CMD_BYTES 80

#define ARENA_REQ_GUARDED_BIT(name, NAME, arg, op, usize, guarded)	\
	| ((u32)(guarded) << DRM_ARENA_##NAME)

/* Bit nr set for each guarded request number nr (below 32) */
#define ARENA_GUARDED_MASK (0u ARENA_REQUESTS(ARENA_REQ_GUARDED_BIT))

/**
 * arena_request_guarded() - whether an ioctl command is a guarded one
 * @cmd: the ioctl's request number, any size and direction
 *
 * By type and DRM number only, as drm_ioctl dispatches, so a request
 * encoded with another size or direction is recognised all the same.
 *
 * Return: 1 for a guarded request of the table, 0 for anything else.
 */
static inline int arena_request_guarded(unsigned int cmd)
{
	unsigned int nr = (cmd & 0xff) - DRM_COMMAND_BASE;

	return ((cmd >> 8) & 0xff) == DRM_IOCTL_BASE && nr < 32 &&
	       ((ARENA_GUARDED_MASK >> nr) & 1);
}

/**
 * arena_uring_cmd_arg() - the argument rule of a URING_CMD
 * @op: sqe->cmd_op
 * @cmd: sqe->cmd, ARENA_URING_CMD_BYTES bytes (read once by the caller)
 *
 * The command's struct comes first in sqe->cmd; the bytes after it are
 * padding and must be zero, so that they can gain a meaning later
 * (uapi.h).
 *
 * Return: the size of the command's struct; -ENOTTY for an op that is
 * no command; -EINVAL when a byte after the struct is not zero.
 */
static inline int arena_uring_cmd_arg(u32 op, const u8 *cmd)
{
	size_t size = 0, i;

#define ARENA_REQ_URING_SIZE(name, NAME, arg, uop, usize, guarded)	\
	if ((uop) && op == (uop))					\
		size = (usize);
	ARENA_REQUESTS(ARENA_REQ_URING_SIZE)
#undef ARENA_REQ_URING_SIZE
	if (!size)
		return -ENOTTY;
	for (i = size; i < ARENA_URING_CMD_BYTES; i++)
		if (cmd[i])
			return -EINVAL;
	return (int)size;
}

#endif
