/* SPDX-License-Identifier: MIT */
/*
 * Slots changed by SQEs (slot_change.c): direct opens, accepts, sockets
 * and closes, IORING_OP_FILES_UPDATE and IORING_OP_MSG_RING's
 * IORING_MSG_SEND_FD have results the guard does not see, so the slots
 * they may have made the device become uncertain.  The SQ walk
 * (uring.c) calls ag_note_slot_change for every SQE it checks.
 *
 * Layering: ring.h (the slot table, uring.c) <- this <- the SQ walk.
 */
#ifndef AG_SLOT_CHANGE_H
#define AG_SLOT_CHANGE_H

#include <liburing.h>

#include "ring.h"

#pragma GCC visibility push(hidden)

/* The slots of r an SQE that changes them (an open, accept, socket,
 * close or FILES_UPDATE with a slot) may have changed made uncertain. */
void ag_slots_changed(struct ring_state *r, const struct io_uring_sqe *sqe);
/* IORING_MSG_SEND_FD from r: the target slot made uncertain if the
 * source slot may be the device (every ring's, if the target cannot be
 * named); the walk holding *hp reads r's slots. */
void ag_msg_send_fd(struct ring_state *r, const struct io_uring_sqe *sqe,
		    struct ag_held **hp);

#pragma GCC visibility pop

/* Whether sqe may change r's slots, and if so what it may have made of
 * them (inline: the walk's cost for every other SQE is this switch). */
static inline void ag_note_slot_change(struct ring_state *r,
					       const struct io_uring_sqe *sqe,
					       struct ag_held **hp)
{
	int changes;
	switch (sqe->opcode) {
	case IORING_OP_MSG_RING:
		if (sqe->addr == IORING_MSG_SEND_FD &&
		    atomic_load_explicit(&r->slots, memory_order_relaxed))
			ag_msg_send_fd(r, sqe, hp);
		return;
	case IORING_OP_OPENAT:
	case IORING_OP_OPENAT2:
	case IORING_OP_ACCEPT:
	case IORING_OP_SOCKET:
	case IORING_OP_CLOSE:
		changes = sqe->file_index != 0;
		break;
	case IORING_OP_FILES_UPDATE:
		changes = 1;
		break;
	default:
		return;
	}
	if (changes && atomic_load_explicit(&r->slots, memory_order_relaxed))
		ag_slots_changed(r, sqe);
}

#endif
