/* SPDX-License-Identifier: MIT */
/*
 * Buffer objects: device memory at a fixed device address.  A buffer's
 * bytes are a page-aligned range of the context's memfd (context.c), so
 * that the application's mmap of the fake offset, in any process sharing
 * the context, and the simulator's own mapping (what kernels read and
 * write) share pages; a mapping outlives the buffer's destruction as a
 * GEM mapping does (buffer memory is never reused within a context).  The
 * address space belongs to the context; by_address keeps its buffers
 * sorted for lookups by device address.  Ranges are compared by their
 * last byte so that a buffer may end at 2^64 without overflow.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "partition.h"
#include "sim.h"
#include "usercopy.h"

#define PAGE 4096ull

/* A buffer in the context. */
struct sim_bo {
	uint64_t address, size, mmap_offset;
	uint64_t data;                /* offset of its bytes in the memfd */
};

static struct sim_bo *bo_at(const struct sim_file *f, uint64_t rec)
{
	return rec ? ctx_at(f, rec) : NULL;
}

static struct sim_bo *bo_get(const struct sim_file *f, uint32_t handle)
{
	return bo_at(f, handles_get(f, &f->ctx->bos, handle));
}

/* The i-th buffer by address. */
static struct sim_bo *by_address(const struct sim_file *f, uint32_t i)
{
	const uint64_t *a = ctx_at(f, f->ctx->by_address);
	return bo_at(f, a[i]);
}

static uint8_t *bo_bytes(const struct sim_file *f, const struct sim_bo *bo)
{
	return ctx_at(f, bo->data);
}

static uint64_t last_byte(const struct sim_bo *bo)
{
	return bo->address + (bo->size - 1);
}

/* Index of the first buffer whose last byte is >= address. */
static uint32_t first_ending_at_or_after(const struct sim_file *f,
					 uint64_t address)
{
	uint32_t at;
	AC_PARTITION(uint32_t, at, f->ctx->n_by_address, i,
		     last_byte(by_address(f, i)) < address);
	return at;
}

static int insert_sorted(struct sim_file *f, uint64_t rec)
{
	struct sim_ctx *c = f->ctx;
	struct sim_bo *bo = bo_at(f, rec);
	uint32_t i = first_ending_at_or_after(f, bo->address);
	if (i < c->n_by_address && by_address(f, i)->address <= last_byte(bo))
		return -EBUSY;
	if (c->n_by_address == c->cap_by_address) {
		uint32_t cap = c->cap_by_address ? 2 * c->cap_by_address : 16;
		uint64_t grown = ctx_grow(f, c->by_address,
					  c->cap_by_address * sizeof(uint64_t),
					  c->n_by_address * sizeof(uint64_t),
					  (uint64_t)cap * sizeof(uint64_t));
		if (!grown)
			return -ENOMEM;
		c->by_address = grown;
		c->cap_by_address = cap;
	}
	uint64_t *a = ctx_at(f, c->by_address);
	memmove(&a[i + 1], &a[i], (c->n_by_address - i) * sizeof(*a));
	a[i] = rec;
	c->n_by_address++;
	return 0;
}

static void remove_sorted(struct sim_file *f, const struct sim_bo *bo)
{
	struct sim_ctx *c = f->ctx;
	uint32_t i = first_ending_at_or_after(f, bo->address);
	uint64_t *a = ctx_at(f, c->by_address);
	memmove(&a[i], &a[i + 1], (c->n_by_address - i - 1) * sizeof(*a));
	c->n_by_address--;
}

int bo_create(struct sim_file *f, struct drm_arena_bo_create *arg)
{
	struct sim_ctx *c = f->ctx;
	if (arg->flags || arg->address % PAGE || arg->size % PAGE ||
	    arg->size < PAGE || arg->address + (arg->size - 1) < arg->address)
		return -EINVAL;
	/* The fake offset must stay a valid off_t for mmap(2). */
	if (arg->size > (uint64_t)INT64_MAX - c->next_mmap_offset)
		return -ENOMEM;
	uint64_t rec = ctx_alloc(f, sizeof(struct sim_bo));
	if (!rec)
		return -ENOMEM;
	struct sim_bo *bo = bo_at(f, rec);
	bo->address = arg->address;
	bo->size = arg->size;
	int rc = insert_sorted(f, rec);
	if (rc) {
		ctx_free(f, rec, sizeof(*bo));
		return rc;
	}
	/* Memory last: it is never given back. */
	rc = handles_add(f, &c->bos, rec, &arg->handle);
	if (!rc) {
		bo->data = ctx_alloc_data(f, bo->size);
		if (!bo->data) {
			handles_remove(f, &c->bos, arg->handle);
			rc = -ENOMEM;
		}
	}
	if (rc) {
		remove_sorted(f, bo);
		ctx_free(f, rec, sizeof(*bo));
		return rc;
	}
	bo->mmap_offset = c->next_mmap_offset;
	c->next_mmap_offset += bo->size;
	return 0;
}

int bo_mmap_offset(struct sim_file *f, struct drm_arena_bo_mmap *arg)
{
	if (arg->pad)
		return -EINVAL;
	struct sim_bo *bo = bo_get(f, arg->handle);
	if (!bo)
		return -ENOENT;
	arg->offset = bo->mmap_offset;
	return 0;
}

int bo_rw(struct sim_file *f, const struct drm_arena_bo_rw *arg, int write)
{
	if (arg->pad)
		return -EINVAL;
	struct sim_bo *bo = bo_get(f, arg->handle);
	if (!bo)
		return -ENOENT;
	if (arg->offset > bo->size || arg->size > bo->size - arg->offset)
		return -EINVAL;
	uint8_t *mem = bo_bytes(f, bo) + arg->offset;
	return write ? copy_from_user(mem, arg->data, arg->size)
		     : copy_to_user(arg->data, mem, arg->size);
}

int bo_destroy(struct sim_file *f, const struct drm_arena_handle *arg)
{
	if (arg->pad)
		return -EINVAL;
	uint64_t rec = handles_remove(f, &f->ctx->bos, arg->handle);
	if (!rec)
		return -ENOENT;
	remove_sorted(f, bo_at(f, rec));
	ctx_free(f, rec, sizeof(struct sim_bo));
	return 0;
}

void *bo_map(struct sim_file *f, int fd, void *addr, size_t len, int prot,
	     int flags, uint64_t offset, int *err)
{
	struct sim_bo *bo = NULL;
	for (uint32_t i = 0; i < f->ctx->bos.cap && !bo; i++) {
		struct sim_bo *b = bo_at(f, handles_at(f, &f->ctx->bos, i));
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
	void *p = sim_real.mmap(addr, len, prot, flags, fd, (off_t)bo->data);
	if (p == MAP_FAILED)
		*err = errno;
	return p;
}

uint8_t *bo_range(struct sim_file *f, uint64_t address, uint64_t len)
{
	uint32_t i = first_ending_at_or_after(f, address);
	if (i == f->ctx->n_by_address)
		return NULL;
	struct sim_bo *bo = by_address(f, i);
	if (address < bo->address)
		return NULL;
	uint64_t off = address - bo->address;
	if (len > bo->size - off)
		return NULL;
	return bo_bytes(f, bo) + off;
}

void bo_fill(struct sim_file *f, uint64_t address, uint64_t size, int byte)
{
	if (size == 0)
		return;
	uint64_t last = address + (size - 1);
	if (last < address)
		last = UINT64_MAX;
	for (uint32_t i = first_ending_at_or_after(f, address);
	     i < f->ctx->n_by_address && by_address(f, i)->address <= last;
	     i++) {
		struct sim_bo *bo = by_address(f, i);
		uint64_t lo = address > bo->address ? address : bo->address;
		uint64_t hi = last < last_byte(bo) ? last : last_byte(bo);
		memset(bo_bytes(f, bo) + (lo - bo->address), byte, hi - lo + 1);
	}
}
