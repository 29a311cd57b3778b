/* SPDX-License-Identifier: MIT */
/*
 * Programs: a binary program image (docs/program-image.md), read with
 * libarenacert's reader and checked with ac_program_new(), and indexed
 * by the contract (contract/image.c), the device's view arena.ko has
 * too: references are checked (spec 1.3), words valued (V(t), spec 1.2),
 * launches given their phases (for poisoning) and schedules walked by
 * it, as in the kernel.  The two readers agree on every image and every
 * launch's phase (fuzz/fuzz_contract.c), so libarenacert's is a second
 * reading of the same rules.
 *
 * A program's image is kept in the context (sim.h), so that a process
 * sharing it that did not create the program can parse it too, once:
 * each process keeps its parses by handle, tagged with the program's
 * identity, which is never reused, so a handle destroyed and reused by
 * another process is parsed afresh.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "usercopy.h"

/* The device's view of the image (the contract, as arena.ko's), and the
 * scratch words of one launch. */
static int index_device(struct sim_program *p, const void *image,
			uint64_t size)
{
	if (arena_image_parse(image, size, &p->img) != 0)
		return -EINVAL;
	uint64_t bytes = arena_program_index_bytes(&p->img);
	if (bytes > SIZE_MAX - 16)
		return -ENOMEM;
	p->cp_mem = aligned_alloc(16, (bytes + 15) / 16 * 16 + 16);
	if (!p->cp_mem)
		return -ENOMEM;
	if (arena_program_index(&p->cp, &p->img, p->cp_mem) != 0)
		return -EINVAL;
	p->scratch = malloc(((size_t)p->cp.max_words + 1) *
			    sizeof(*p->scratch));
	return p->scratch ? 0 : -ENOMEM;
}

void program_free(struct sim_program *p)
{
	if (!p)
		return;
	ac_program_free(p->prog);
	ac_model_free(p->model);
	free(p->cp_mem);
	free(p->scratch);
	free(p);
}

/* Image bytes -> program; the image's own schedule must be empty. */
static int program_load(struct sim_program *p, const void *image,
			uint64_t size)
{
	if (ac_model_read_image(image, size, &p->model, NULL) != 0)
		return -EINVAL;
	if (p->model->n_refs != 0)
		return -EINVAL;
	p->prog = ac_program_new(p->model, NULL);
	if (!p->prog)
		return -EINVAL;
	return index_device(p, image, size);
}

/* A new parse of image; -EINVAL when malformed, -ENOMEM. */
static int program_parse(const void *image, uint64_t size,
			 struct sim_program **out)
{
	struct sim_program *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	int rc = program_load(p, image, size);
	if (rc) {
		program_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

/* Remembers this process's parse of program `id` under handle. */
static int cache_put(struct sim_file *f, uint32_t handle, uint64_t id,
		     struct sim_program *p)
{
	assert(handle != 0);
	if (handle > f->n_cache) {
		uint32_t n = f->n_cache ? f->n_cache : 16;
		while (n < handle)
			n *= 2;
		struct sim_cached *c = realloc(f->cache, n * sizeof(*c));
		if (!c)
			return -ENOMEM;
		memset(c + f->n_cache, 0, (n - f->n_cache) * sizeof(*c));
		f->cache = c;
		f->n_cache = n;
	}
	struct sim_cached *slot = &f->cache[handle - 1];
	program_free(slot->program);
	slot->id = id;
	slot->program = p;
	return 0;
}

int program_get(struct sim_file *f, uint32_t handle,
		struct sim_program_rec **rec, const struct sim_program **p)
{
	uint64_t off = handles_get(f, &f->ctx->programs, handle);
	if (!off)
		return -ENOENT;
	struct sim_program_rec *r = ctx_at(f, off);
	*rec = r;
	if (!p)
		return 0;
	if (handle <= f->n_cache && f->cache[handle - 1].id == r->id) {
		*p = f->cache[handle - 1].program;
		return 0;
	}
	/* Made by another process, or since replaced: parse it here. */
	struct sim_program *made;
	int rc = program_parse(ctx_at(f, r->image), r->size, &made);
	if (rc)
		return rc;
	rc = cache_put(f, handle, r->id, made);
	if (rc) {
		program_free(made);
		return rc;
	}
	*p = made;
	return 0;
}

void program_cache_fini(struct sim_file *f)
{
	for (uint32_t i = 0; i < f->n_cache; i++)
		program_free(f->cache[i].program);
	free(f->cache);
	f->cache = NULL;
	f->n_cache = 0;
}

int program_create(struct sim_file *f, struct drm_arena_program_create *arg)
{
	struct sim_ctx *c = f->ctx;
	if (arg->flags || arg->size == 0)
		return -EINVAL;
	if (arg->size > SIZE_MAX)
		return -ENOMEM;
	/* The image's bytes go straight into the context, where every
	 * process sharing it reads them. */
	uint64_t image = ctx_alloc(f, arg->size);
	uint64_t off = ctx_alloc(f, sizeof(struct sim_program_rec));
	int rc = image && off ? 0 : -ENOMEM;
	if (!rc)
		rc = copy_from_user(ctx_at(f, image), arg->image, arg->size);
	struct sim_program *p = NULL;
	if (!rc)
		rc = program_parse(ctx_at(f, image), arg->size, &p);
	if (!rc)
		rc = handles_add(f, &c->programs, off, &arg->handle);
	if (rc) {
		program_free(p);
		ctx_free(f, image, arg->size);
		ctx_free(f, off, sizeof(struct sim_program_rec));
		return rc;
	}
	struct sim_program_rec *r = ctx_at(f, off);
	r->id = ++c->last_program_id;
	r->image = image;
	r->size = arg->size;
	arena_seal_program(&r->seal, ctx_at(f, image), arg->size);
	/* Without room to remember it, it is parsed again when used. */
	if (cache_put(f, arg->handle, r->id, p) != 0)
		program_free(p);
	return 0;
}

int program_destroy(struct sim_file *f, const struct drm_arena_handle *arg)
{
	if (arg->pad)
		return -EINVAL;
	struct sim_program_rec *r;
	int rc = program_get(f, arg->handle, &r, NULL);
	if (rc)
		return rc;
	if (r->schedules)
		return -EBUSY;
	if (arg->handle <= f->n_cache && f->cache[arg->handle - 1].id == r->id)
		cache_put(f, arg->handle, 0, NULL);
	uint64_t off = handles_remove(f, &f->ctx->programs, arg->handle);
	ctx_free(f, r->image, r->size);
	ctx_free(f, off, sizeof(*r));
	return 0;
}
