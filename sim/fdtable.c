/* SPDX-License-Identifier: MIT */
/*
 * Which fds of this process are the device, and which context each is.
 * Opening the node creates a context's memfd (context.c): the fd number
 * is the kernel's, and the open file description is the kernel's, shared
 * by dup, fork and SCM_RIGHTS like a drm_file.  The fd table maps fd
 * numbers (preload/fd_table.h, the guard's kind of table) to this
 * process's struct sim_file, one per context it holds
 * (found by the memfd's identity, so that two fds of one context in one
 * process share it, however they arrived).  An fd the table does not
 * know is probed when it is used: a forked child's table is a copy, but
 * an fd received by SCM_RIGHTS or inherited over exec is new here.  The
 * last reference in this process (an fd or a registered io_uring slot)
 * unmaps the context; the kernel frees the memfd with its last fd.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "fd_table.h"
#include "sim.h"

/* Each fd's struct sim_file, or 0 (preload/fd_table.h); read and
 * written under sim_lock. */
static struct preload_fd_table table;
static atomic_size_t n_device;    /* fds in the table */
static struct sim_file *files;    /* every sim_file of this process */

int fd_any(void)
{
	return atomic_load_explicit(&n_device, memory_order_relaxed) != 0;
}

int fd_maybe_device(int fd)
{
	if (fd < 0)
		return 0;
	if (fd_any())
		return 1;
	uint64_t dev, ino;
	return ctx_probe(fd, &dev, &ino);
}

/* fd's file in the table, or NULL. */
static struct sim_file *table_file(int fd)
{
	preload_fd_word *w = preload_fd_at(&table, fd, 0);
	return w ? (struct sim_file *)atomic_load_explicit(
		w, memory_order_relaxed) : NULL;
}

/* This process's view of the context fd is, made if needed; NULL when
 * it cannot be mapped. */
static struct sim_file *view(int fd, uint64_t dev, uint64_t ino)
{
	for (struct sim_file *f = files; f; f = f->next)
		if (f->dev == dev && f->ino == ino)
			return f;
	struct sim_file *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	if (ctx_map(f, fd) != 0) {
		free(f);
		return NULL;
	}
	f->dev = dev;
	f->ino = ino;
	f->next = files;
	files = f;
	return f;
}

struct sim_file *fd_file(int fd)
{
	if (fd < 0)
		return NULL;
	struct sim_file *known = table_file(fd);
	if (known)
		return known;
	uint64_t dev, ino;
	if (!ctx_probe(fd, &dev, &ino))
		return NULL;
	struct sim_file *f = view(fd, dev, ino);
	if (!f)
		return NULL;
	if (fd_attach(fd, f) != 0) {
		if (!f->refcount) {
			f->refcount = 1;
			file_put(f);
		}
		return NULL;
	}
	return f;
}

int fd_attach(int fd, struct sim_file *f)
{
	if (fd < 0)
		return -EBADF;
	if ((unsigned int)fd >= PRELOAD_FD_LIMIT)
		return -EMFILE;           /* beyond the table */
	preload_fd_word *w = preload_fd_at(&table, fd, 1);
	if (!w)
		return -ENOMEM;
	file_get(f);
	fd_detach(fd);
	atomic_store_explicit(w, (uintptr_t)f, memory_order_relaxed);
	atomic_fetch_add(&n_device, 1);
	return 0;
}

void fd_detach(int fd)
{
	preload_fd_word *w = preload_fd_at(&table, fd, 0);
	struct sim_file *f = w ? (struct sim_file *)atomic_exchange_explicit(
		w, 0, memory_order_relaxed) : NULL;
	if (!f)
		return;
	atomic_fetch_sub(&n_device, 1);
	file_put(f);
}

/* preload_fd_each's callback. */
static void detach_each(void *ctx, int fd)
{
	(void)ctx;
	fd_detach(fd);
}

void fd_detach_range(unsigned int first, unsigned int last)
{
	preload_fd_each(&table, first, last, detach_each, NULL);
}

int fd_open_device(int flags)
{
	struct sim_file *f;
	int fd = ctx_create(flags, &f);
	if (fd < 0)
		return fd;
	f->next = files;
	files = f;
	int rc = fd_attach(fd, f);
	if (rc) {
		f->refcount = 1;
		file_put(f);
		sim_real.close(fd);
		return rc;
	}
	return fd;
}

void file_get(struct sim_file *f)
{
	f->refcount++;
}

void file_put(struct sim_file *f)
{
	if (--f->refcount)
		return;
	for (struct sim_file **p = &files; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			break;
		}
	program_cache_fini(f);
	ctx_unmap(f);
	free(f);
}
