/* SPDX-License-Identifier: MIT */
/*
 * Which fds of this process are the device, and which context each is.
 * Opening the node creates a context's memfd (context.c): the fd number
 * is the kernel's, and the open file description is the kernel's, shared
 * by dup, fork and SCM_RIGHTS like a drm_file.  The fd table maps fd
 * numbers to this process's struct sim_file, one per context it holds
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

#include "sim.h"

static struct sim_file **table;   /* indexed by fd */
static size_t table_len;
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

static int grow(size_t fd)
{
	if (fd < table_len)
		return 0;
	size_t len = table_len ? table_len : 64;
	while (len <= fd)
		len *= 2;
	struct sim_file **t = realloc(table, len * sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = table_len; i < len; i++)
		t[i] = NULL;
	table = t;
	table_len = len;
	return 0;
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
	if ((size_t)fd < table_len && table[fd])
		return table[fd];
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
	int rc = grow((size_t)fd);
	if (rc)
		return rc;
	file_get(f);
	fd_detach(fd);
	table[fd] = f;
	atomic_fetch_add(&n_device, 1);
	return 0;
}

void fd_detach(int fd)
{
	if (fd < 0 || (size_t)fd >= table_len || !table[fd])
		return;
	struct sim_file *f = table[fd];
	table[fd] = NULL;
	atomic_fetch_sub(&n_device, 1);
	file_put(f);
}

void fd_detach_range(unsigned int first, unsigned int last)
{
	for (size_t fd = first; fd <= last && fd < table_len; fd++)
		fd_detach((int)fd);
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
