/* SPDX-License-Identifier: MIT */
/*
 * Slots changed by SQEs (slot_change.h): a slot an SQE may have made the
 * device is "uncertain", and device commands on it are blocked (fail
 * closed).  Moved from uring.c, which owns the slot table (ring.h); the
 * SQ walk there calls in through ag_note_slot_change.
 *
 * Layering: devices.h (the fd table), report.h and ring.h (the slot table)
 * <- this <- the SQ walk (uring.c).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <liburing.h>

#include "devices.h"
#include "mirror.h"
#include "report.h"
#include "holds.h"
#include "ring.h"
#include "rings.h"
#include "slots.h"
#include "slot_change.h"
#include "usercopy.h"

/*
 * Whether the file a direct open names may be the device: anything but
 * a path that stats (following links, as the open does: /proc/self/fd/N
 * and symlinks to the node included) to a file that is not a character
 * device of the accel major.  The path is an application pointer, read
 * once; a path that cannot be read or stat'ed is "may be".
 */
/* N when path names this process's fd N (/proc/self/fd/N, /dev/fd/N,
 * /proc/thread-self/fd/N, /proc/PID/fd/N): the open reopens that file,
 * which is asked directly (fstat of the fd, as the application's own
 * libraries see it).  Else -1. */
static int own_fd_link(const char *path)
{
	static const char *const prefixes[] = { "/proc/self/fd/", "/dev/fd/",
						"/proc/thread-self/fd/" };
	char own[40];
	snprintf(own, sizeof(own), "/proc/%d/fd/", (int)getpid());
	const char *rest = NULL;
	for (unsigned int i = 0; i < 3 && !rest; i++)
		if (!strncmp(path, prefixes[i], strlen(prefixes[i])))
			rest = path + strlen(prefixes[i]);
	if (!rest && !strncmp(path, own, strlen(own)))
		rest = path + strlen(own);
	if (!rest || *rest < '0' || *rest > '9')
		return -1;
	long fd = 0;
	for (; *rest >= '0' && *rest <= '9' && fd <= INT_MAX; rest++)
		fd = fd * 10 + (*rest - '0');
	return *rest || fd > INT_MAX ? -1 : (int)fd;
}

static int may_be_device_path(const struct io_uring_sqe *sqe)
{
	if (sqe->flags & IOSQE_FIXED_FILE)
		return 1;             /* a directory in a slot: unknown */
	char path[PATH_MAX];
	size_t n = 0;
	while (n < sizeof(path)) {
		/* Up to the end of the page: the next may be unmapped. */
		uint64_t at = sqe->addr + n;
		size_t len = 4096 - (size_t)(at & 4095);
		if (len > sizeof(path) - n)
			len = sizeof(path) - n;
		if (copy_from_user(&path[n], at, len) != 0)
			return 1;
		char *end = memchr(&path[n], 0, len);
		n += len;
		if (end)
			break;
	}
	if (!memchr(path, 0, n))
		return 1;             /* longer than the kernel takes */
	struct stat st;
	int fd = own_fd_link(path);
	int rc = fd >= 0 ? ag_fstatat(fd, NULL, &st)
			 : ag_fstatat(sqe->fd, path, &st);
	if (fd >= 0 && ag_is_file(ag_fd_peek(fd)))
		return 1;             /* the guard knows it as the device */
	if (rc != 0)
		return 1;
	return S_ISCHR(st.st_mode) && major(st.st_rdev) == ARENA_ACCEL_MAJOR;
}

static void mark_uncertain_free(struct ring_state *r, struct slot_table *t,
				struct retired *d)
{
	for (unsigned int i = 0; i < t->n; i++)
		if (!atomic_load(&t->v[i]))
			ag_slot_set(r, t, i, AG_SLOT_UNCERTAIN, d);
}

/* Slot `index` may become a file that `may_be_device` says about, if
 * the SQE succeeds; it keeps its old file if not. */
static void slot_may_change(struct ring_state *r, struct slot_table *t,
			    unsigned int index, int may_be_device,
			    struct retired *d)
{
	if (index == IORING_FILE_INDEX_ALLOC) {
		if (may_be_device)
			mark_uncertain_free(r, t, d);
		return;
	}
	if (index >= t->n)
		return;
	struct ag_file *was = atomic_load(&t->v[index]);
	if (was != AG_SLOT_UNCERTAIN && (was || may_be_device))
		ag_slot_set(r, t, index, AG_SLOT_UNCERTAIN, d);
}

/* Whether fd may put the device in a slot (FILES_UPDATE). */
static int fd_may_be_device(int fd)
{
	struct ag_file *f;
	enum fd_kind k = ag_fd_kind(fd, &f, 0);
	ag_file_unref(f);
	return k != FD_NOT;
}

/* IORING_OP_FILES_UPDATE: the fds read a chunk at a time and looked up
 * in the fd table together; only an fd the table does not know costs a
 * system call.  Only the fds that can land in a slot (len is the
 * application's, up to 2^32 - 1, fuzz_guard). */
#define UPDATE_CHUNK 512u

static void files_update_sqe(struct ring_state *r,
			     const struct io_uring_sqe *sqe)
{
	pthread_mutex_lock(&r->slots_lock);
	struct slot_table *t = atomic_load(&r->slots);
	unsigned int size = t && !t->lost ? t->n : 0;
	pthread_mutex_unlock(&r->slots_lock);
	unsigned int off = (unsigned int)sqe->off;
	int alloc = off == IORING_FILE_INDEX_ALLOC;
	unsigned int room = alloc ? size : off < size ? size - off : 0;
	unsigned int nr = sqe->len < room ? sqe->len : room;
	int buf[UPDATE_CHUNK], any = 0;
	struct ag_file *known[UPDATE_CHUNK];
	unsigned char devs[UPDATE_CHUNK];
	struct retired d = { 0 };
	for (unsigned int c = 0; c < nr; c += UPDATE_CHUNK) {
		unsigned int n = nr - c < UPDATE_CHUNK ? nr - c : UPDATE_CHUNK;
		uint64_t at = sqe->addr + (uint64_t)c * sizeof(int);
		int whole = copy_from_user(buf, at, (size_t)n * sizeof(int)) == 0;
		if (whole)
			ag_fd_peek_many(buf, n, known);
		for (unsigned int i = 0; i < n; i++) {
			int dev;
			if (!whole) {
				/* Part of the array unreadable: the kernel
				 * installs what it read before the fault, so
				 * each is read alone, and one that cannot be
				 * is "may be". */
				dev = copy_from_user(&buf[i], at + i * sizeof(int),
						     sizeof(int)) != 0 ||
				      fd_may_be_device(buf[i]);
			} else if (buf[i] < 0) {
				dev = 0;              /* -1, or SKIP */
			} else if (known[i] == AG_FD_UNKNOWN ||
				   known[i] == AG_FD_CLOSING) {
				dev = fd_may_be_device(buf[i]);
			} else {
				dev = 1;   /* the device, or "not" unrechecked */
			}
			any |= dev;
			devs[i] = (unsigned char)dev;
		}
		if (alloc)
			continue;
		/* The system calls above were made with no lock held (a
		 * file on FUSE or NFS can take its time); the slots are set
		 * under it, in the table as it is now. */
		pthread_mutex_lock(&r->slots_lock);
		t = atomic_load(&r->slots);
		for (unsigned int i = 0; t && !t->lost && i < n; i++) {
			/* slot_may_change, inline: most slots of a busy
			 * table are uncertain already. */
			unsigned int index = off + c + i;
			if (index >= t->n)
				break;
			struct ag_file *was = atomic_load_explicit(
				&t->v[index], memory_order_relaxed);
			if (was != AG_SLOT_UNCERTAIN && (was || devs[i]))
				ag_slot_set(r, t, index, AG_SLOT_UNCERTAIN, &d);
		}
		ag_retired_drop(r, &d);
		pthread_mutex_unlock(&r->slots_lock);
	}
	if (alloc && any) {
		pthread_mutex_lock(&r->slots_lock);
		t = atomic_load(&r->slots);
		if (t && !t->lost)
			slot_may_change(r, t, IORING_FILE_INDEX_ALLOC, 1, &d);
		ag_retired_drop(r, &d);
		pthread_mutex_unlock(&r->slots_lock);
	}
}

/* The slots an SQE that changes them may have changed (its own frame:
 * the walk of every other SQE does not pay for its buffers). */
__attribute__((noinline)) void ag_slots_changed(struct ring_state *r,
						 const struct io_uring_sqe *sqe)
{
	if (sqe->opcode == IORING_OP_FILES_UPDATE) {
		files_update_sqe(r, sqe);
		return;
	}
	/* The path is looked at with no lock held: a stat on FUSE or NFS
	 * can take its time. */
	int open = sqe->opcode == IORING_OP_OPENAT ||
		   sqe->opcode == IORING_OP_OPENAT2;
	int may_be_device = open && may_be_device_path(sqe);
	pthread_mutex_lock(&r->slots_lock);
	struct slot_table *t = atomic_load(&r->slots);
	struct retired d = { 0 };
	if (t && !t->lost) {
		switch (sqe->opcode) {
		case IORING_OP_OPENAT:
		case IORING_OP_OPENAT2:
			slot_may_change(r, t, sqe->file_index == IORING_FILE_INDEX_ALLOC
					      ? IORING_FILE_INDEX_ALLOC
					      : sqe->file_index - 1,
					may_be_device, &d);
			break;
		default:               /* accept, socket, close */
			if (sqe->file_index != IORING_FILE_INDEX_ALLOC)
				slot_may_change(r, t, sqe->file_index - 1, 0, &d);
		}
	}
	ag_retired_drop(r, &d);
	pthread_mutex_unlock(&r->slots_lock);
}

/*
 * IORING_OP_MSG_RING with IORING_MSG_SEND_FD: slot addr3 of this ring is
 * installed in slot file_index of the ring the SQE names.  If it may be
 * the device, so may the target slot; a target ring the guard cannot
 * name (a registered ring fd, or one it never saw) makes every slot of
 * every ring uncertain.  No slot lock is held across rings: the source
 * is read as a reader.
 */
__attribute__((noinline)) void ag_msg_send_fd(struct ring_state *r,
					       const struct io_uring_sqe *sqe,
					       struct ag_held **hp)
{
	struct ag_file *src = sqe->addr3 >= UINT_MAX ? NULL
		: ag_slots_enter(r, hp) != 0 ? AG_SLOT_UNCERTAIN
		: ag_slot_read(r, (unsigned int)sqe->addr3);
	if (!src)
		return;         /* not the device, or nothing to send */
	if (src != AG_SLOT_UNCERTAIN)
		ag_file_unref(src);
	struct ring_state *target = NULL;
	if (!(sqe->flags & IOSQE_FIXED_FILE)) {
		target = ag_ring_by_fd(sqe->fd);
	}
	if (!target) {
		ag_report_once("msg ring unknown", "IORING_MSG_SEND_FD of a "
			       "registered slot that may be the device to a ring "
			       "the guard cannot name (ring fd %d%s): every "
			       "registered slot of every ring is uncertain",
			       sqe->fd, sqe->flags & IOSQE_FIXED_FILE
					? ", a registered file" : "");
		ag_all_slots_lost();
		return;
	}
	pthread_mutex_lock(&target->slots_lock);
	struct slot_table *t = atomic_load(&target->slots);
	struct retired d = { 0 };
	if (t && !t->lost)
		slot_may_change(target, t, sqe->file_index == IORING_FILE_INDEX_ALLOC
					   ? IORING_FILE_INDEX_ALLOC
					   : sqe->file_index - 1, 1, &d);
	ag_retired_drop(target, &d);
	pthread_mutex_unlock(&target->slots_lock);
}
