/* SPDX-License-Identifier: MIT */
/*
 * The driver's request rules, once: what every consumer of the arena
 * ABI (the simulator, arena.ko, the guard, the fake drivers of
 * tests/guard and fuzz/) asks of a request, looked up in the one table
 * of requests (requests.inc): the URING_CMD dispatch and argument rule,
 * the seal's algorithm and pad, a WAIT's number.  The batch limit is
 * ARENA_MAX_APPEND (image.h, with its test arena_append_count_ok); the
 * drm_ioctl copy discipline is drm_call.h (user space; arena.ko has
 * drm_ioctl()).
 *
 * Compiles in the kernel and in user space alike (types.h): no library
 * function, no allocation.
 */
#ifndef ARENA_CONTRACT_REQUESTS_H
#define ARENA_CONTRACT_REQUESTS_H

#include <arenaguard/uapi.h>

#include "types.h"

/* sqe->cmd of a 128-byte SQE (IORING_SETUP_SQE128): the argument bytes
 * of a URING_CMD, the command's struct first and zeros after it
 */
#define ARENA_URING_CMD_BYTES 80

/* ARENA_GUARDED_##guarded(x): x for a guarded row of requests.inc,
 * nothing for another (a consumer that lists only guarded requests)
 */
#define ARENA_GUARDED_0(...)
#define ARENA_GUARDED_1(...) __VA_ARGS__

/**
 * struct arena_request_info - one row of requests.inc
 * @id: the request's name in lower case ("schedule_submit"); NULL for a
 *	number below the table's end that names no request
 * @size: the size of the ioctl's argument struct
 * @uring_op: the URING_CMD cmd_op of the same request, or 0
 * @uring_arg: the size of that command's struct in sqe->cmd, or 0
 * @guarded: whether libarenaguard handles the request
 */
struct arena_request_info {
	const char *id;
	u32 size;
	u32 uring_op;
	u32 uring_arg;
	u32 guarded;
};

/**
 * arena_request_info() - a request's row
 * @index: the request's number (DRM_ARENA_x: the DRM number less
 *	DRM_COMMAND_BASE)
 *
 * Return: its row, or NULL past the table's end (a row whose @id is NULL
 * is a number inside it that names no request).
 */
static inline const struct arena_request_info *
arena_request_info(unsigned int index)
{
#define ARENA_REQUEST(name, NAME, arg, uop, usize, guarded)		\
	[DRM_ARENA_##NAME] = { #name, sizeof(arg), uop, usize, guarded },
	static const struct arena_request_info table[] = {
#include "requests.inc"
	};

	return index < ARENA_COUNT_OF(table) ? &table[index] : NULL;
}

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
	const struct arena_request_info *r;

	if (((cmd >> 8) & 0xff) != DRM_IOCTL_BASE)
		return 0;
	r = arena_request_info((cmd & 0xff) - DRM_COMMAND_BASE);
	return r && r->guarded;
}

/* The seal algorithms the driver offers (DRM_IOCTL_ARENA_SEAL's bit
 * set, uapi.h "Sealed submissions"): SHA-256
 */
#define ARENA_SEAL_ALGORITHMS (1u << ARENA_SEAL_SHA256)

/**
 * arena_seal_args_ok() - a sealed submit's algorithm and pad
 * @algorithm: the submission's seal algorithm (ARENA_SEAL_*)
 * @pad: its pad
 *
 * Return: whether @algorithm is one of ARENA_SEAL_ALGORITHMS and @pad is
 * zero; the submit fails with EINVAL otherwise, before anything else is
 * looked at.
 */
static inline int arena_seal_args_ok(u32 algorithm, u32 pad)
{
	return !pad && algorithm < 32 &&
	       ((ARENA_SEAL_ALGORITHMS >> algorithm) & 1);
}

/**
 * arena_submit_check() - what a submit asks before its schedule is read
 * @flags: the submission's flags
 * @sealed: whether it is the sealed submit
 * @algorithm: a sealed submit's seal algorithm
 * @pad: a sealed submit's pad
 * @context_sealed: whether the context (the open file) was sealed
 *
 * Return: -EINVAL for flags, or a sealed submit's algorithm or pad
 * (arena_seal_args_ok); then -ENOKEY for a plain submit on a sealed
 * context; 0 otherwise.
 */
static inline int arena_submit_check(u32 flags, int sealed, u32 algorithm,
				     u32 pad, int context_sealed)
{
	if (flags || (sealed && !arena_seal_args_ok(algorithm, pad)))
		return -EINVAL;
	if (!sealed && context_sealed)
		return -ENOKEY;
	return 0;
}

/**
 * arena_wait_seqno_ok() - a WAIT's sequence number
 * @seqno: the number waited for
 * @last: the context's last submission's number (0: none yet)
 *
 * Return: whether @seqno names a submission made (1 to @last); WAIT
 * fails with EINVAL otherwise.
 */
static inline int arena_wait_seqno_ok(u64 seqno, u64 last)
{
	return seqno != 0 && seqno <= last;
}

/**
 * arena_uring_cmd_tail_zero() - the trailing-command-bytes rule
 * @cmd: sqe->cmd, ARENA_URING_CMD_BYTES bytes (read once by the caller)
 * @size: the size of the command's struct, at most ARENA_URING_CMD_BYTES
 *
 * The bytes of sqe->cmd after the command's struct are padding: zero, so
 * that they can gain a meaning later (uapi.h; EINVAL otherwise).
 *
 * Return: whether they are all zero.
 */
static inline int arena_uring_cmd_tail_zero(const u8 *cmd, u32 size)
{
	u32 i;

	for (i = size; i < ARENA_URING_CMD_BYTES; i++)
		if (cmd[i])
			return 0;
	return 1;
}

/**
 * arena_uring_cmd_arg() - the argument rule of a URING_CMD
 * @op: sqe->cmd_op
 * @cmd: sqe->cmd, ARENA_URING_CMD_BYTES bytes (read once by the caller)
 *
 * Return: the size of the command's struct; -ENOTTY for an op that is
 * no command; -EINVAL when a byte after the struct is not zero.
 */
static inline int arena_uring_cmd_arg(u32 op, const u8 *cmd)
{
	const struct arena_request_info *r;
	unsigned int i;

	for (i = 0; op && (r = arena_request_info(i)); i++) {
		if (r->uring_op != op)
			continue;
		if (!arena_uring_cmd_tail_zero(cmd, r->uring_arg))
			return -EINVAL;
		return (int)r->uring_arg;
	}
	return -ENOTTY;
}

#endif
