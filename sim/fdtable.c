/* SPDX-License-Identifier: MIT */
/*
 * Which fds are the device.  Opening the node opens /dev/null for real,
 * so the fd number is the kernel's and stays unique; the fd table maps
 * it to a struct sim_file, the simulated open file description.  dup()
 * shares the sim_file, as a dup'ed fd shares a drm_file in a kernel, and
 * the last reference (an fd or a registered io_uring slot) frees it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "sim.h"

static struct sim_file **table;   /* indexed by fd */
static size_t table_len;
static atomic_size_t n_device;    /* fds in the table */
static uint64_t last_context;     /* context identities handed out */

int fd_any(void)
{
	return atomic_load_explicit(&n_device, memory_order_relaxed) != 0;
}

struct sim_file *fd_file(int fd)
{
	if (fd < 0 || (size_t)fd >= table_len)
		return NULL;
	return table[fd];
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

int fd_attach(int fd, struct sim_file *f)
{
	if (fd < 0)
		return -EBADF;
	int rc = grow((size_t)fd);
	if (rc)
		return rc;
	fd_detach(fd);
	file_get(f);
	table[fd] = f;
	atomic_fetch_add(&n_device, 1);
	return 0;
}

void fd_detach(int fd)
{
	struct sim_file *f = fd_file(fd);
	if (!f)
		return;
	table[fd] = NULL;
	atomic_fetch_sub(&n_device, 1);
	file_put(f);
}

void fd_detach_range(unsigned int first, unsigned int last)
{
	for (size_t fd = first; fd <= last && fd < table_len; fd++)
		fd_detach((int)fd);
}

int fd_open_device(int fd)
{
	struct sim_file *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	/* Fake mmap offsets start where DRM's do (DRM_FILE_PAGE_OFFSET). */
	f->next_mmap_offset = 0x100000000ull;
	f->context = ++last_context;
	f->sealed = sim_require_seal;
	int rc = fd_attach(fd, f);
	if (rc)
		free(f);
	return rc;
}

void file_get(struct sim_file *f)
{
	f->refs++;
}

void file_put(struct sim_file *f)
{
	if (--f->refs)
		return;
	for (uint32_t i = 0; i < f->schedules.cap; i++)
		schedule_free(handles_at(&f->schedules, i));
	for (uint32_t i = 0; i < f->programs.cap; i++)
		program_free(handles_at(&f->programs, i));
	bo_free_all(f);
	handles_fini(&f->schedules);
	handles_fini(&f->programs);
	handles_fini(&f->bos);
	free(f->by_address);
	free(f->faulted);
	free(f);
}
