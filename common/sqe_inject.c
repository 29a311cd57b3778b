/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "sqe_inject.h"

void sqe_complete_with(struct io_uring_sqe *sqe, int res)
{
	__u8 keep = sqe->flags & (IOSQE_IO_DRAIN | IOSQE_IO_LINK |
				  IOSQE_IO_HARDLINK | IOSQE_ASYNC |
				  IOSQE_CQE_SKIP_SUCCESS);
	__u64 user_data = sqe->user_data;
	__u16 personality = sqe->personality;
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_NOP;
	sqe->flags = keep;
	sqe->fd = -1;
	sqe->len = (__u32)res;
	sqe->rw_flags = IORING_NOP_INJECT_RESULT;   /* nop_flags */
	sqe->user_data = user_data;
	sqe->personality = personality;
}
