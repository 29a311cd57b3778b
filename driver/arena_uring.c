// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The io_uring front end: IORING_OP_URING_CMD on the
 * device fd reaches file_operations.uring_cmd.  The ring must use
 * IORING_SETUP_SQE128 (EINVAL otherwise: no room for the argument);
 * sqe->cmd_op selects the command, sqe->cmd holds its struct, the rest
 * of the 80 bytes zero (EINVAL).  The command completes inline with the
 * ioctl's result (0 or -errno).  An issue that must not block
 * (IO_URING_F_NONBLOCK) gets -EAGAIN, so io_uring reissues it from a
 * worker that may sleep: commands take the context's mutex and a submit
 * executes the schedule.
 */
#include <linux/io_uring/cmd.h>
#include <linux/io_uring_types.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "arena_drv.h"

#define ARENA_URING_CMD_BYTES 80

static bool all_zero(const u8 *p, size_t n)
{
	return !n || !memchr_inv(p, 0, n);
}

static int cmd_append(struct arena_file *af, const u8 *cmd)
{
	struct drm_arena_schedule_append a;

	memcpy(&a, cmd, sizeof(a));
	if (!all_zero(cmd + sizeof(a), ARENA_URING_CMD_BYTES - sizeof(a)))
		return -EINVAL;
	return arena_schedule_append(af, &a);
}

static int cmd_submit(struct arena_file *af, const u8 *cmd)
{
	static const struct arena_seal_check unsealed;
	struct arena_uring_submit s;
	u64 seqno;

	memcpy(&s, cmd, sizeof(s));
	if (!all_zero(cmd + sizeof(s), ARENA_URING_CMD_BYTES - sizeof(s)))
		return -EINVAL;
	return arena_schedule_submit(af, s.schedule, s.flags, &unsealed,
				     &seqno, u64_to_user_ptr(s.seqno));
}

static int cmd_submit_sealed(struct arena_file *af, const u8 *cmd)
{
	struct arena_uring_submit_sealed s;
	struct arena_seal_check check = { .sealed = true };
	u64 seqno;

	memcpy(&s, cmd, sizeof(s));
	if (!all_zero(cmd + sizeof(s), ARENA_URING_CMD_BYTES - sizeof(s)))
		return -EINVAL;
	check.algorithm = s.algorithm;
	check.pad = s.pad;
	memcpy(check.seal, s.seal, sizeof(check.seal));
	return arena_schedule_submit(af, s.schedule, s.flags, &check, &seqno,
				     u64_to_user_ptr(s.seqno));
}

/**
 * arena_uring_cmd() - file_operations.uring_cmd of the accel node
 * @ioucmd: the command
 * @issue_flags: IO_URING_F_*
 *
 * Return: the command's result (0 or -errno), or -EAGAIN to be reissued
 * where it may block.
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
	if (issue_flags & IO_URING_F_NONBLOCK)
		return -EAGAIN;
	/* the SQE is the application's memory until the command is issued:
	 * read it once
	 */
	memcpy(cmd, io_uring_sqe_cmd(ioucmd->sqe), sizeof(cmd));
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	mutex_lock(&af->lock);
	switch (ioucmd->cmd_op) {
	case ARENA_URING_CMD_APPEND:
		rc = cmd_append(af, cmd);
		break;
	case ARENA_URING_CMD_SUBMIT:
		rc = cmd_submit(af, cmd);
		break;
	case ARENA_URING_CMD_SUBMIT_SEALED:
		rc = cmd_submit_sealed(af, cmd);
		break;
	default:
		rc = -ENOTTY;
		break;
	}
	mutex_unlock(&af->lock);
	drm_dev_exit(idx);
	return rc;
}
