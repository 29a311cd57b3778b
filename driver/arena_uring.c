// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The io_uring front end: IORING_OP_URING_CMD on the
 * device fd reaches file_operations.uring_cmd.  The ring must use
 * IORING_SETUP_SQE128 (EINVAL otherwise: no room for the argument);
 * sqe->cmd_op selects the command, sqe->cmd holds its struct, the rest
 * of the 80 bytes zero (EINVAL).  The command completes inline with the
 * ioctl's result (0 or -errno).
 *
 * Every command runs in the context that issues it, IO_URING_F_NONBLOCK
 * or not: a command issued directly from io_uring_enter has run, as an
 * ioctl has, when io_uring_enter returns.  The guard relies on that: it
 * mirrors an append, and lets other threads touch the schedule again,
 * when the submitting call returns (docs/driver.md, "io_uring").
 * Answering -EAGAIN would have io_uring reissue the command later from
 * io-wq, after that return, and the sealed submits that follow it would
 * be refused.  Blocking here is allowed (process context; io_uring holds
 * only its ring's uring_lock, a mutex) and bounded: the context's mutex
 * is held only by this driver's own requests, each bounded (a batch is
 * at most ARENA_MAX_APPEND references; an execution stops at a fatal
 * signal), none of which calls into io_uring under it, so the order is
 * always uring_lock, then the context's mutex; the wait for it is
 * killable (arena_lock), as an ioctl's is.  The price is that the
 * ring's other submitters wait for an executing submit, as an ioctl's
 * caller does.  What io_uring itself runs later (IOSQE_ASYNC, a linked
 * or drained SQE, SQPOLL) runs the same way, whenever io_uring issues
 * it.  Its bytes are read then: 6.12 copies the SQE at prep only with
 * IOSQE_ASYNC (a drain implies it), so a linked command is read from
 * its SQ slot, which the application may have filled again since its
 * submit returned (docs/driver.md, "io_uring"; the guard sets
 * IOSQE_ASYNC on linked commands).  The driver cannot tell; a reused
 * slot is only ever another command's bytes, checked like any.
 */
#include <linux/io_uring/cmd.h>
#include <linux/io_uring_types.h>
#include <linux/nospec.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "arena_drv.h"
#include "../contract/requests.h"

/* Each command's struct is read from the command's bytes, whose bytes
 * after it arena_uring_cmd_arg() (contract/requests.h) found zero; a
 * command's handler is cmd_ and the name of its row of requests.inc
 * (arena_uring_cmds).
 */
static int cmd_schedule_append(struct arena_file *af, const u8 *cmd)
{
	struct drm_arena_schedule_append a;

	memcpy(&a, cmd, sizeof(a));
	return arena_schedule_append(af, &a);
}

static int cmd_schedule_submit(struct arena_file *af, const u8 *cmd)
{
	static const struct arena_seal_check unsealed;
	struct arena_uring_submit s;
	u64 seqno;

	memcpy(&s, cmd, sizeof(s));
	return arena_schedule_submit(af, s.schedule, s.flags, &unsealed,
				     &seqno, u64_to_user_ptr(s.seqno));
}

static int cmd_schedule_submit_sealed(struct arena_file *af, const u8 *cmd)
{
	struct arena_uring_submit_sealed s;
	struct arena_seal_check check = { .sealed = true };
	u64 seqno;

	memcpy(&s, cmd, sizeof(s));
	check.algorithm = s.algorithm;
	check.pad = s.pad;
	memcpy(check.seal, s.seal, sizeof(check.seal));
	return arena_schedule_submit(af, s.schedule, s.flags, &check, &seqno,
				     u64_to_user_ptr(s.seqno));
}

/* The commands of contract/requests.inc, indexed by op */
static int (*const arena_uring_cmds[])(struct arena_file *af, const u8 *cmd) = {
#define ARENA_URING_REQUEST(uop, name, ...) \
	[uop] = cmd_##name,
#include "../contract/requests.inc"
};

/* The command op's handler on its bytes cmd: its result, or -ENOTTY */
static int arena_uring_dispatch(struct arena_file *af, u32 op, const u8 *cmd)
{
	if (op >= ARRAY_SIZE(arena_uring_cmds))
		return -ENOTTY;
	op = array_index_nospec(op, ARRAY_SIZE(arena_uring_cmds));
	if (!arena_uring_cmds[op])
		return -ENOTTY;
	return arena_uring_cmds[op](af, cmd);
}

/**
 * arena_uring_cmd() - file_operations.uring_cmd of the accel node
 * @ioucmd: the command
 * @issue_flags: IO_URING_F_*
 *
 * Context: process context, from io_uring_enter, the SQPOLL thread or
 * io-wq; may sleep (IO_URING_F_NONBLOCK included: see the file's comment).
 * Return: the command's result (0 or -errno), never -EAGAIN or
 * -EIOCBQUEUED: the command is complete when this returns.
 */
int arena_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
	struct drm_file *file = ioucmd->file->private_data;
	struct arena_file *af = to_arena_file(file);
	struct drm_device *drm = file->minor->dev;
	u8 cmd[ARENA_URING_CMD_BYTES];
	int rc, idx;

	BUILD_BUG_ON(sizeof(struct arena_uring_submit_sealed) >
		     ARENA_URING_CMD_BYTES);
	if (!(issue_flags & IO_URING_F_SQE128))
		return -EINVAL;
	/* the SQE is the application's memory until the command is issued:
	 * read it once
	 */
	memcpy(cmd, io_uring_sqe_cmd(ioucmd->sqe), sizeof(cmd));
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	rc = arena_uring_cmd_arg(ioucmd->cmd_op, cmd);
	if (rc < 0) {
		drm_dev_exit(idx);
		return rc;
	}
	if (arena_lock(af)) {
		drm_dev_exit(idx);
		return -EINTR;
	}
	rc = arena_uring_dispatch(af, ioucmd->cmd_op, cmd);
	mutex_unlock(&af->lock);
	drm_dev_exit(idx);
	return rc;
}
