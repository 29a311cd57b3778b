// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Programs: a binary program image copied from user
 * memory once (never read there again), parsed and checked by the
 * contract (contract/image.c: structure, then the launch table's rules
 * the device executes by), and indexed for execution.  The image's own
 * schedule section must be empty: schedules are built by ioctl.  The
 * seal's program half (le64(size) || image) is hashed here, once.
 */
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <asm/byteorder.h>

#include "arena_drv.h"

static void prog_free(struct arena_prog *prog)
{
	kvfree(prog->scratch);
	kvfree(prog->index_mem);
	kvfree(prog->image);
	kfree(prog);
}

/* The seal's program half: le64(size) || image, in chunks sha256_update
 * can take.
 */
static void seal_program(struct arena_prog *prog, u64 size)
{
	__le64 le = cpu_to_le64(size);
	u64 done = 0;

	sha256_init(&prog->seal);
	sha256_update(&prog->seal, (const u8 *)&le, sizeof(le));
	while (done < size) {
		unsigned int chunk = min_t(u64, size - done, SZ_1G);

		sha256_update(&prog->seal, prog->image + done, chunk);
		done += chunk;
	}
}

/* Parses, checks and indexes prog->image: -EINVAL when malformed. */
static int prog_load(struct arena_prog *prog, u64 size)
{
	u64 index_bytes;
	int rc;

	rc = arena_image_parse(prog->image, size, &prog->img);
	if (rc)
		return rc;
	if (prog->img.count[ARENA_S_SCHEDULE])
		return -EINVAL;
	index_bytes = arena_program_index_bytes(&prog->img);
	prog->index_mem = kvmalloc(max_t(u64, index_bytes, 16), ARENA_GFP);
	if (!prog->index_mem)
		return -ENOMEM;
	rc = arena_program_index(&prog->index, &prog->img, prog->index_mem);
	if (rc)
		return rc;
	prog->scratch = kvmalloc_array(prog->index.max_words + 1,
				       sizeof(*prog->scratch), ARENA_GFP);
	return prog->scratch ? 0 : -ENOMEM;
}

int arena_program_create(struct arena_file *af,
			 struct drm_arena_program_create *arg)
{
	struct arena_prog *prog;
	u32 handle;
	int rc;

	if (arg->flags || arg->size == 0)
		return -EINVAL;
	if (arg->size > INT_MAX)        /* kvmalloc's limit */
		return -ENOMEM;
	prog = kzalloc(sizeof(*prog), GFP_KERNEL_ACCOUNT);
	if (!prog)
		return -ENOMEM;
	prog->image = kvmalloc(arg->size, ARENA_GFP);
	rc = prog->image ? 0 : -ENOMEM;
	if (!rc && copy_from_user(prog->image, u64_to_user_ptr(arg->image),
				  arg->size))
		rc = -EFAULT;
	if (!rc)
		rc = prog_load(prog, arg->size);
	if (!rc)
		rc = xa_alloc(&af->programs, &handle, prog, xa_limit_32b,
			      GFP_KERNEL_ACCOUNT);
	if (rc) {
		prog_free(prog);
		return rc == -EBUSY ? -ENOMEM : rc;
	}
	seal_program(prog, arg->size);
	arg->handle = handle;
	return 0;
}

int arena_program_destroy(struct arena_file *af,
			  const struct drm_arena_handle *arg)
{
	struct arena_prog *prog;

	if (arg->pad)
		return -EINVAL;
	prog = xa_load(&af->programs, arg->handle);
	if (!prog)
		return -ENOENT;
	if (prog->schedules)
		return -EBUSY;
	xa_erase(&af->programs, arg->handle);
	prog_free(prog);
	return 0;
}

/**
 * arena_program_drop() - free a program already erased from its table
 * @af: the context (locked)
 * @obj: the struct arena_prog, which no schedule uses
 */
void arena_program_drop(struct arena_file *af, void *obj)
{
	prog_free(obj);
}
