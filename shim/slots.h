/* SPDX-License-Identifier: MIT */
/*
 * The slot table of a ring's registered files (slots.c): lock-free
 * readers, writers under the ring's slots lock, fail closed with
 * AG_SLOT_UNCERTAIN.
 *
 * Layering: ring.h <- this <- rings.c, holds.c, slot_change.c,
 * ring_reg.c, the SQ walk (uring.c).
 */
#ifndef AG_SLOTS_H
#define AG_SLOTS_H

#include <stdint.h>

#include "ring.h"

#pragma GCC visibility push(hidden)

/* What slot i of r holds: NULL, AG_SLOT_UNCERTAIN, or a referenced file
 * (the caller unrefs it).  Lock-free: r's readers count covers it. */
struct ag_file *ag_slot_read(struct ring_state *r, unsigned int i);
/* Whether a registration under way may change slot i of r. */
int ag_slot_pending(struct ring_state *r, unsigned int i);
/* Slot i of t (r's table, slots lock held) set to f; the file it held,
 * if any, is kept in d until ag_retired_drop. */
void ag_slot_set(struct ring_state *r, struct slot_table *t,
		 unsigned int i, struct ag_file *f, struct retired *d);
/* The files d keeps unreferenced, once r's readers of the moment have
 * left (slots lock held). */
void ag_retired_drop(struct ring_state *r, struct retired *d);
/* What fd is for a slot: FD_DEVICE with *f referenced, FD_NOT or
 * FD_MAYBE (*f NULL); `exact` rechecks an fd known as not the device. */
enum fd_kind ag_fd_kind(int fd, struct ag_file **f, int exact);
/* r's slot table replaced by t (slots lock held), the old one freed once
 * no reader is in it; ag_table_lost, a table whose every slot is
 * uncertain (NULL: no memory). */
void ag_table_replace(struct ring_state *r, struct slot_table *t);
struct slot_table *ag_table_lost(void);
/* r's slots set from the fd array at `files` (nr slots; 0: all unset),
 * and nr slots from off updated from the fd array at `files`. */
void ag_files_set(struct ring_state *r, uint64_t files, unsigned int nr);
void ag_files_update(struct ring_state *r, unsigned int off,
		     uint64_t files, unsigned int nr);

#pragma GCC visibility pop

#endif
