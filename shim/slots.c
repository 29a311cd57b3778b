/* SPDX-License-Identifier: MIT */
/*
 * The slot table of a ring's registered files (struct slot_table in
 * ring.h): a slot holds NULL (not the device), AG_SLOT_UNCERTAIN, or a
 * referenced file.  Read without a lock: a reader announces itself
 * (r->readers) around the few loads and the reference it takes, and a
 * writer (slots lock held), after swapping a slot or the table, waits
 * for the readers of the moment to leave before it drops what it
 * replaced.  A slot a registration under way may change (ring_reg.c)
 * reads as uncertain.  What an fd is for a slot (ag_fd_kind) and the
 * tables made from an fd array (ag_files_set, ag_files_update) are here
 * too.
 *
 * Layering: devices.h (the fd table, files) <- ring.h (the types) <-
 * this <- rings.c (the registry), holds.c, slot_change.c, ring_reg.c,
 * the SQ walk (uring.c).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "devices.h"
#include "mirror.h"
#include "report.h"
#include "ring.h"
#include "slots.h"
#include "uring_abi.h"

/* ---- the slot table ---- */

/* Waits until every reader that may have loaded a value replaced
 * before this call has taken its reference (or left). */
static void slots_synchronize(struct ring_state *r)
{
	while (atomic_load(&r->readers) != 0)
		sched_yield();
}

static void table_free(struct slot_table *t)
{
	for (unsigned int i = 0; t && i < t->n; i++) {
		struct ag_file *f = atomic_load(&t->v[i]);
		if (ag_is_file(f))
			ag_file_unref(f);
	}
	free(t);
}

/* Replaces the table (slots lock held): the old one is freed once no
 * reader can be in it. */
void ag_table_replace(struct ring_state *r, struct slot_table *t)
{
	struct slot_table *old = atomic_exchange(&r->slots, t);
	if (!old)
		return;
	slots_synchronize(r);
	table_free(old);
}

/* Whether a registration under way may change slot i of r. */
int ag_slot_pending(struct ring_state *r, unsigned int i)
{
	if (!atomic_load(&r->reg_inflight))
		return 0;
	if (atomic_load(&r->reg_all))
		return 1;
	for (unsigned int k = 0; k < 4; k++) {
		uint64_t v = atomic_load(&r->reg_range[k]);
		if (v && i >= (unsigned int)(v >> 32) && i < (unsigned int)v)
			return 1;
	}
	return 0;
}

/* What slot i of r holds: NULL, AG_SLOT_UNCERTAIN, or a referenced
 * file.  A slot a registration under way may change is uncertain: the
 * kernel may have its new file already. */
struct ag_file *ag_slot_read(struct ring_state *r, unsigned int i)
{
	atomic_fetch_add(&r->readers, 1);
	struct slot_table *t = atomic_load(&r->slots);
	struct ag_file *f = NULL;
	if ((t && t->lost) || ag_slot_pending(r, i))
		f = AG_SLOT_UNCERTAIN;
	else if (t && i < t->n) {
		f = atomic_load(&t->v[i]);
		if (ag_is_file(f))
			ag_file_ref(f);
	}
	atomic_fetch_sub(&r->readers, 1);
	return f;
}


void ag_retired_drop(struct ring_state *r, struct retired *d)
{
	if (!d->n)
		return;
	slots_synchronize(r);
	for (unsigned int i = 0; i < d->n; i++)
		ag_file_unref(d->v[i]);
	d->n = 0;
}

void ag_slot_set(struct ring_state *r, struct slot_table *t,
		 unsigned int i, struct ag_file *f, struct retired *d)
{
	assert(i < t->n);
	struct ag_file *old = atomic_exchange(&t->v[i], f);
	if (!ag_is_file(old))
		return;
	if (d->n == sizeof(d->v) / sizeof(d->v[0]))
		ag_retired_drop(r, d);
	d->v[d->n++] = old;
}


/* A slot table whose every slot is uncertain. */
struct slot_table *ag_table_lost(void)
{
	struct slot_table *t = calloc(1, sizeof(*t));
	if (t)
		t->lost = 1;
	return t;
}

/* ---- what a registered fd is ---- */

/*
 * What fd is for a slot: FD_DEVICE with *f referenced, FD_NOT, or
 * FD_MAYBE (the device without memory to know it, or a probe that could
 * not answer).  Only fds the table does not know are looked at (fstat;
 * character devices are probed), and, when `exact`, those it knows as
 * not the device (ag_fd_file compares their fstat, since the guard does
 * not see every close).  Without `exact` (a FILES_UPDATE SQE, whose
 * result the guard never learns: a device there is uncertain anyway)
 * such an fd is FD_MAYBE, and the walk makes no system call for it.
 */
enum fd_kind ag_fd_kind(int fd, struct ag_file **f, int exact)
{
	*f = NULL;
	if (fd < 0)
		return FD_NOT;
	struct ag_file *known = ag_fd_peek(fd);
	if (known == AG_FD_NOTDEV && !exact)
		return FD_MAYBE;
	if (known == AG_FD_UNKNOWN) {
		struct stat st;
		if (ag_fstatat(fd, NULL, &st) != 0)
			return FD_NOT;        /* the kernel refuses it too */
		if (!S_ISCHR(st.st_mode)) {
			ag_fd_set_notdev(fd, &st);
			return FD_NOT;
		}
	}
	if (ag_fd_file(fd, f) != 0)
		return FD_MAYBE;
	return *f ? FD_DEVICE : FD_NOT;
}

/* What slots from + 0 .. n of the fd array `files` (0: all unset)
 * hold, into v: a referenced file, AG_SLOT_UNCERTAIN, NULL, or KEEP for
 * IORING_REGISTER_FILES_SKIP (the slot keeps its file).  Its fstats and
 * probes are made with no lock held: a file on FUSE or NFS, or a slow
 * device, can take its time without stalling the ring's other users. */
static char keep_marker;
#define KEEP ((struct ag_file *)(void *)&keep_marker)
#define FD_CHUNK 1024u

/* uring_files_each's callback: slot i of the chunk holds fd. */
static void slot_value(void *ctx, unsigned int slot, int fd)
{
	struct ag_file **v = ctx;
	struct ag_file *f;
	enum fd_kind k = ag_fd_kind(fd, &f, 1);
	v[slot] = k == FD_DEVICE ? f : k == FD_MAYBE ? AG_SLOT_UNCERTAIN : NULL;
}

static void slot_values(uint64_t files, unsigned int from, unsigned int n,
			struct ag_file **v)
{
	assert(n <= FD_CHUNK);
	for (unsigned int i = 0; i < n; i++)
		v[i] = KEEP;
	uring_files_each(files ? files + (uint64_t)from * sizeof(int) : 0,
			 0, n, n, slot_value, v);
}

/* A new table of nr slots from `files`, made before the slots lock is
 * taken (it is nobody else's until it replaces the old one). */
void ag_files_set(struct ring_state *r, uint64_t files, unsigned int nr)
{
	struct slot_table *t = calloc(1, sizeof(*t) + (size_t)nr *
				      sizeof(t->v[0]));
	if (t) {
		t->n = nr;
		struct ag_file *v[FD_CHUNK];
		for (unsigned int c = 0; c < nr; c += FD_CHUNK) {
			unsigned int n = nr - c < FD_CHUNK ? nr - c : FD_CHUNK;
			slot_values(files, c, n, v);
			for (unsigned int i = 0; i < n; i++)
				atomic_store_explicit(&t->v[c + i],
						      v[i] == KEEP ? NULL : v[i],
						      memory_order_relaxed);
		}
	} else if (nr) {
		t = ag_table_lost();
		ag_no_memory("io_uring file registration");
	}
	pthread_mutex_lock(&r->slots_lock);
	ag_table_replace(r, t);
	pthread_mutex_unlock(&r->slots_lock);
}

/* Slots off .. off + nr changed in place: each chunk's values found
 * with no lock held, then set under it. */
#define UPDATE_VALUES 256u

void ag_files_update(struct ring_state *r, unsigned int off,
		     uint64_t files, unsigned int nr)
{
	struct ag_file *v[UPDATE_VALUES];
	for (unsigned int c = 0; c < nr; c += UPDATE_VALUES) {
		unsigned int n = nr - c < UPDATE_VALUES ? nr - c : UPDATE_VALUES;
		slot_values(files, c, n, v);
		struct retired d = { 0 };
		pthread_mutex_lock(&r->slots_lock);
		struct slot_table *t = atomic_load(&r->slots);
		for (unsigned int i = 0; i < n; i++) {
			uint64_t index = (uint64_t)off + c + i;
			if (v[i] == KEEP)
				continue;
			if (t && !t->lost && index < t->n)
				ag_slot_set(r, t, (unsigned int)index, v[i], &d);
			else if (ag_is_file(v[i]))
				ag_file_unref(v[i]);
		}
		ag_retired_drop(r, &d);
		pthread_mutex_unlock(&r->slots_lock);
	}
}
