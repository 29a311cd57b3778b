// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Buffer objects: device memory at a fixed device address.
 *
 * Each buffer is a GEM shmem object, mapped into the kernel once at
 * creation (what the kernels and BO_READ/BO_WRITE touch) and into user
 * space through its fake offset (drm_gem_mmap, DRM_ACCEL_FOPS), which
 * this file allows the context's drm_file to map.  A user mapping holds
 * its own reference on the object, so it outlives BO_DESTROY as a GEM
 * mapping does.  The context's buffers are disjoint ranges of its device
 * address space, kept in an rbtree by address; ranges are compared by
 * their last byte, so a buffer may end at 2^64.
 */
#include <linux/iosys-map.h>
#include <linux/minmax.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>
#include <drm/drm_gem.h>
#include <drm/drm_vma_manager.h>

#include "arena_drv.h"

static u64 last_byte(const struct arena_bo *bo)
{
	return bo->address + (bo->size - 1);
}

/* Inserts bo unless it overlaps a buffer (-EBUSY). */
static int insert_by_address(struct arena_file *af, struct arena_bo *bo)
{
	struct rb_node **link = &af->by_address.rb_node, *parent = NULL;

	while (*link) {
		struct arena_bo *at = rb_entry(*link, struct arena_bo, node);

		parent = *link;
		if (last_byte(bo) < at->address)
			link = &(*link)->rb_left;
		else if (bo->address > last_byte(at))
			link = &(*link)->rb_right;
		else
			return -EBUSY;
	}
	rb_link_node(&bo->node, parent, link);
	rb_insert_color(&bo->node, &af->by_address);
	return 0;
}

/**
 * arena_bo_range() - host memory for a device range
 * @af: the context (locked)
 * @address: first device address
 * @len: bytes, not 0
 *
 * Return: the kernel address of [@address, @address + @len) when the
 * range lies in one buffer, NULL otherwise.
 */
u8 *arena_bo_range(struct arena_file *af, u64 address, u64 len)
{
	struct rb_node *n = af->by_address.rb_node;

	while (n) {
		struct arena_bo *bo = rb_entry(n, struct arena_bo, node);

		if (address < bo->address) {
			n = n->rb_left;
		} else if (address > last_byte(bo)) {
			n = n->rb_right;
		} else {
			u64 off = address - bo->address;

			return len <= bo->size - off ? bo->vaddr + off : NULL;
		}
	}
	return NULL;
}

/* The buffer of lowest address whose last byte is at or after address. */
static struct arena_bo *first_ending_at_or_after(struct arena_file *af,
						 u64 address)
{
	struct rb_node *n = af->by_address.rb_node;
	struct arena_bo *found = NULL;

	while (n) {
		struct arena_bo *bo = rb_entry(n, struct arena_bo, node);

		if (last_byte(bo) >= address) {
			found = bo;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	return found;
}

/* Bytes set between reschedule points: a few hundred microseconds. */
#define FILL_CHUNK SZ_1M

/**
 * arena_bo_fill() - set the buffer bytes of a device range
 * @af: the context (locked)
 * @address: first device address
 * @size: bytes, not 0 (a range past 2^64 ends there)
 * @byte: the value
 *
 * Bytes of the range outside every buffer are skipped.  The work is the
 * range's bytes in buffers, in chunks with a reschedule point between
 * them; a fatal signal stops it.
 *
 * Return: 0, or -EINTR on a fatal signal (the range partly set).
 */
int arena_bo_fill(struct arena_file *af, u64 address, u64 size, u8 byte)
{
	u64 last = address + (size - 1);
	struct arena_bo *bo;

	if (last < address)
		last = U64_MAX;
	for (bo = first_ending_at_or_after(af, address);
	     bo && bo->address <= last;
	     bo = rb_entry_safe(rb_next(&bo->node), struct arena_bo, node)) {
		u64 lo = max(address, bo->address);
		u64 hi = min(last, last_byte(bo));

		/* [lo, hi] lies in bo: at most bo->size bytes, a size_t */
		for (;;) {
			u64 n = min_t(u64, hi - lo, FILL_CHUNK - 1) + 1;

			memset(bo->vaddr + (lo - bo->address), byte, n);
			cond_resched();
			if (fatal_signal_pending(current))
				return -EINTR;
			if (hi - lo < n)
				break;
			lo += n;
		}
	}
	return 0;
}

static void bo_free(struct arena_file *af, struct arena_bo *bo)
{
	struct drm_gem_object *obj = &bo->shmem->base;
	struct iosys_map map = IOSYS_MAP_INIT_VADDR(bo->vaddr);

	drm_vma_node_revoke(&obj->vma_node, af->drm_file);
	drm_gem_vunmap_unlocked(obj, &map);
	drm_gem_object_put(obj);
	kfree(bo);
}

int arena_bo_create(struct arena_file *af, struct drm_arena_bo_create *arg)
{
	struct drm_gem_shmem_object *shmem;
	struct iosys_map map;
	struct arena_bo *bo;
	u32 handle;
	int rc;

	if (arg->flags || arg->address % PAGE_SIZE || arg->size % PAGE_SIZE ||
	    arg->size < PAGE_SIZE ||
	    arg->address + (arg->size - 1) < arg->address)
		return -EINVAL;
	if (arg->size > SIZE_MAX)
		return -ENOMEM;
	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo)
		return -ENOMEM;
	bo->address = arg->address;
	bo->size = arg->size;
	rc = insert_by_address(af, bo);
	if (rc) {
		kfree(bo);
		return rc;
	}
	shmem = drm_gem_shmem_create(&af->adev->drm, arg->size);
	if (IS_ERR(shmem)) {
		rc = PTR_ERR(shmem);
		goto unlink;
	}
	bo->shmem = shmem;
	rc = drm_gem_vmap_unlocked(&shmem->base, &map);
	if (rc)
		goto put;
	bo->vaddr = map.vaddr;
	rc = drm_gem_create_mmap_offset(&shmem->base);
	if (!rc)
		rc = drm_vma_node_allow(&shmem->base.vma_node, af->drm_file);
	if (rc)
		goto vunmap;
	rc = xa_alloc(&af->bos, &handle, bo, xa_limit_32b,
		      GFP_KERNEL_ACCOUNT);
	if (rc) {
		rc = rc == -EBUSY ? -ENOMEM : rc;
		drm_vma_node_revoke(&shmem->base.vma_node, af->drm_file);
		goto vunmap;
	}
	arg->handle = handle;
	return 0;
vunmap:
	drm_gem_vunmap_unlocked(&shmem->base, &map);
put:
	drm_gem_object_put(&shmem->base);
unlink:
	rb_erase(&bo->node, &af->by_address);
	kfree(bo);
	return rc == -ENOSPC || rc == -E2BIG ? -ENOMEM : rc;
}

int arena_bo_mmap_offset(struct arena_file *af, struct drm_arena_bo_mmap *arg)
{
	struct arena_bo *bo;

	if (arg->pad)
		return -EINVAL;
	bo = xa_load(&af->bos, arg->handle);
	if (!bo)
		return -ENOENT;
	arg->offset = drm_vma_node_offset_addr(&bo->shmem->base.vma_node);
	return 0;
}

int arena_bo_rw(struct arena_file *af, const struct drm_arena_bo_rw *arg,
		bool write)
{
	void __user *data = u64_to_user_ptr(arg->data);
	struct arena_bo *bo;
	unsigned long left;

	if (arg->pad)
		return -EINVAL;
	bo = xa_load(&af->bos, arg->handle);
	if (!bo)
		return -ENOENT;
	if (arg->offset > bo->size || arg->size > bo->size - arg->offset)
		return -EINVAL;
	if (write)
		left = copy_from_user(bo->vaddr + arg->offset, data, arg->size);
	else
		left = copy_to_user(data, bo->vaddr + arg->offset, arg->size);
	return left ? -EFAULT : 0;
}

int arena_bo_destroy(struct arena_file *af, const struct drm_arena_handle *arg)
{
	struct arena_bo *bo;

	if (arg->pad)
		return -EINVAL;
	bo = xa_erase(&af->bos, arg->handle);
	if (!bo)
		return -ENOENT;
	arena_bo_drop(af, bo);
	return 0;
}

/**
 * arena_bo_drop() - free a buffer already erased from its handle table
 * @af: the context (locked)
 * @obj: the struct arena_bo (its mapping, if any, keeps the pages)
 */
void arena_bo_drop(struct arena_file *af, void *obj)
{
	struct arena_bo *bo = obj;

	rb_erase(&bo->node, &af->by_address);
	bo_free(af, bo);
}
