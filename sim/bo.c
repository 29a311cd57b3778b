/* SPDX-License-Identifier: MIT */
/*
 * Buffer objects: device memory at a fixed device address.  Each is a
 * memfd, so that the application's mmap of the fake offset and the
 * simulator's own mapping (what kernels read and write) share pages, and
 * a mapping outlives the buffer's destruction as a GEM mapping does.
 * The address space belongs to the open file (one context per open);
 * by_address keeps its buffers sorted for lookups by device address.
 * Ranges are compared by their last byte so that a buffer may end at
 * 2^64 without overflow.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim.h"
#include "usercopy.h"

#define PAGE 4096ull

struct sim_bo {
	uint64_t address, size, mmap_offset;
	uint8_t *map;                 /* the simulator's mapping */
	int memfd;
};

static uint64_t last_byte(const struct sim_bo *bo)
{
	return bo->address + (bo->size - 1);
}

/* Index of the first buffer whose last byte is >= address. */
static uint32_t first_ending_at_or_after(const struct sim_file *f,
					 uint64_t address)
{
	uint32_t lo = 0, hi = f->n_by_address;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (last_byte(f->by_address[mid]) < address)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int insert_sorted(struct sim_file *f, struct sim_bo *bo)
{
	uint32_t i = first_ending_at_or_after(f, bo->address);
	if (i < f->n_by_address && f->by_address[i]->address <= last_byte(bo))
		return -EBUSY;
	if (f->n_by_address == f->cap_by_address) {
		uint32_t cap = f->cap_by_address ? 2 * f->cap_by_address : 16;
		struct sim_bo **a = realloc(f->by_address, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		f->by_address = a;
		f->cap_by_address = cap;
	}
	memmove(&f->by_address[i + 1], &f->by_address[i],
		(f->n_by_address - i) * sizeof(*f->by_address));
	f->by_address[i] = bo;
	f->n_by_address++;
	return 0;
}

static void remove_sorted(struct sim_file *f, struct sim_bo *bo)
{
	uint32_t i = first_ending_at_or_after(f, bo->address);
	memmove(&f->by_address[i], &f->by_address[i + 1],
		(f->n_by_address - i - 1) * sizeof(*f->by_address));
	f->n_by_address--;
}

static void bo_free(struct sim_bo *bo)
{
	if (bo->map)
		munmap(bo->map, bo->size);
	if (bo->memfd >= 0)
		sim_real.close(bo->memfd);
	free(bo);
}

/* Memory for a buffer: a memfd of its size, mapped. */
static int bo_back(struct sim_bo *bo)
{
	if (bo->size > INT64_MAX)
		return -ENOMEM;
	bo->memfd = memfd_create("arena-bo", MFD_CLOEXEC);
	if (bo->memfd < 0)
		return -ENOMEM;
	if (ftruncate(bo->memfd, (off_t)bo->size) != 0)
		return -ENOMEM;
	void *map = sim_real.mmap(NULL, bo->size, PROT_READ | PROT_WRITE,
				  MAP_SHARED, bo->memfd, 0);
	if (map == MAP_FAILED)
		return -ENOMEM;
	bo->map = map;
	return 0;
}

int bo_create(struct sim_file *f, struct drm_arena_bo_create *arg)
{
	if (arg->flags || arg->address % PAGE || arg->size % PAGE ||
	    arg->size < PAGE || arg->address + (arg->size - 1) < arg->address)
		return -EINVAL;
	/* The fake offset must stay a valid off_t for mmap(2). */
	if (arg->size > (uint64_t)INT64_MAX - f->next_mmap_offset)
		return -ENOMEM;
	struct sim_bo *bo = calloc(1, sizeof(*bo));
	if (!bo)
		return -ENOMEM;
	bo->address = arg->address;
	bo->size = arg->size;
	bo->memfd = -1;
	int rc = insert_sorted(f, bo);
	if (rc) {
		free(bo);
		return rc;
	}
	rc = bo_back(bo);
	if (!rc)
		rc = handles_add(&f->bos, bo, &arg->handle);
	if (rc) {
		remove_sorted(f, bo);
		bo_free(bo);
		return rc;
	}
	bo->mmap_offset = f->next_mmap_offset;
	f->next_mmap_offset += bo->size;
	return 0;
}

int bo_mmap_offset(struct sim_file *f, struct drm_arena_bo_mmap *arg)
{
	if (arg->pad)
		return -EINVAL;
	struct sim_bo *bo = handles_get(&f->bos, arg->handle);
	if (!bo)
		return -ENOENT;
	arg->offset = bo->mmap_offset;
	return 0;
}

int bo_rw(struct sim_file *f, const struct drm_arena_bo_rw *arg, int write)
{
	if (arg->pad)
		return -EINVAL;
	struct sim_bo *bo = handles_get(&f->bos, arg->handle);
	if (!bo)
		return -ENOENT;
	if (arg->offset > bo->size || arg->size > bo->size - arg->offset)
		return -EINVAL;
	uint8_t *mem = bo->map + arg->offset;
	return write ? copy_from_user(mem, arg->data, arg->size)
		     : copy_to_user(arg->data, mem, arg->size);
}

int bo_destroy(struct sim_file *f, const struct drm_arena_handle *arg)
{
	if (arg->pad)
		return -EINVAL;
	struct sim_bo *bo = handles_remove(&f->bos, arg->handle);
	if (!bo)
		return -ENOENT;
	remove_sorted(f, bo);
	bo_free(bo);
	return 0;
}

void bo_free_all(struct sim_file *f)
{
	for (uint32_t i = 0; i < f->bos.cap; i++) {
		struct sim_bo *bo = handles_at(&f->bos, i);
		if (bo)
			bo_free(bo);
	}
	f->n_by_address = 0;
}

void *bo_map(struct sim_file *f, void *addr, size_t len, int prot,
	     int flags, uint64_t offset, int *err)
{
	struct sim_bo *bo = NULL;
	for (uint32_t i = 0; i < f->bos.cap && !bo; i++) {
		struct sim_bo *b = handles_at(&f->bos, i);
		if (b && b->mmap_offset == offset)
			bo = b;
	}
	/* As drm_gem_mmap: the offset must start a buffer, the mapping
	 * must fit in it, and copy-on-write mappings are refused. */
	if (!bo || len == 0 || len > bo->size ||
	    (len + PAGE - 1) / PAGE * PAGE > bo->size ||
	    (flags & MAP_TYPE) == MAP_PRIVATE) {
		*err = EINVAL;
		return MAP_FAILED;
	}
	void *p = sim_real.mmap(addr, len, prot, flags, bo->memfd, 0);
	if (p == MAP_FAILED)
		*err = errno;
	return p;
}

uint8_t *bo_range(struct sim_file *f, uint64_t address, uint64_t len)
{
	uint32_t i = first_ending_at_or_after(f, address);
	if (i == f->n_by_address)
		return NULL;
	struct sim_bo *bo = f->by_address[i];
	if (address < bo->address)
		return NULL;
	uint64_t off = address - bo->address;
	if (len > bo->size - off)
		return NULL;
	return bo->map + off;
}

void bo_fill(struct sim_file *f, uint64_t address, uint64_t size, int byte)
{
	if (size == 0)
		return;
	uint64_t last = address + (size - 1);
	if (last < address)
		last = UINT64_MAX;
	for (uint32_t i = first_ending_at_or_after(f, address);
	     i < f->n_by_address && f->by_address[i]->address <= last; i++) {
		struct sim_bo *bo = f->by_address[i];
		uint64_t lo = address > bo->address ? address : bo->address;
		uint64_t hi = last < last_byte(bo) ? last : last_byte(bo);
		memset(bo->map + (lo - bo->address), byte, hi - lo + 1);
	}
}
