/* SPDX-License-Identifier: MIT */
/*
 * Schedules, submissions and sequence numbers.  A schedule is the list
 * of references appended so far; submitting executes all of it, at once
 * (the simulated device is fast enough), and hands out the next sequence
 * number of the open file.  WAIT then only reports what happened: 0, or
 * EIO for a submission that faulted.  Faults are rare, so only their
 * sequence numbers are kept (ascending, as they are handed out).
 * Schedules, their references and the sequence numbers live in the
 * context (sim.h), shared by every process holding it.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"
#include "../contract/requests.h"   /* the requests' argument rules */
#include "sim.h"
#include "usercopy.h"

static struct sim_schedule *schedule_get(const struct sim_file *f,
					 uint32_t handle)
{
	uint64_t off = handles_get(f, &f->ctx->schedules, handle);
	return off ? ctx_at(f, off) : NULL;
}

int schedule_create(struct sim_file *f, struct drm_arena_schedule_create *arg)
{
	struct sim_program_rec *p;
	int rc = program_get(f, arg->program, &p, NULL);
	if (rc)
		return rc;
	uint64_t off = ctx_alloc(f, sizeof(struct sim_schedule));
	if (!off)
		return -ENOMEM;
	rc = handles_add(f, &f->ctx->schedules, off, &arg->handle);
	if (rc) {
		ctx_free(f, off, sizeof(struct sim_schedule));
		return rc;
	}
	struct sim_schedule *s = ctx_at(f, off);
	s->program = arg->program;
	s->seal = p->seal;
	p->schedules++;
	return 0;
}

static int reserve_refs(struct sim_file *f, struct sim_schedule *s,
			uint64_t more)
{
	if (s->n_refs + more <= s->cap_refs)
		return 0;
	uint64_t cap = s->cap_refs ? s->cap_refs : 16;
	while (cap < s->n_refs + more)
		cap *= 2;
	if (cap > SIM_CTX_BYTES / sizeof(struct ac_ref))
		return -ENOMEM;
	uint64_t grown = ctx_grow(f, s->refs, s->cap_refs * sizeof(struct ac_ref),
				  s->n_refs * sizeof(struct ac_ref),
				  cap * sizeof(struct ac_ref));
	if (!grown)
		return -ENOMEM;
	s->refs = grown;
	s->cap_refs = cap;
	return 0;
}

/* Checks a whole batch before any of it is appended (atomic), by the
 * contract's rule (spec 1.3), as arena.ko does; *executed: the launches
 * all of the schedule would execute. */
static int check_batch(const struct sim_schedule *s,
		       const struct sim_program *p, const struct ac_ref *refs,
		       uint32_t count, uint64_t *executed)
{
	*executed = s->executed;
	for (uint32_t i = 0; i < count; i++)
		if (arena_ref_check(&p->cp, refs[i].first, refs[i].count,
				    executed) != 0)
			return -EINVAL;
	return 0;
}

int schedule_append(struct sim_file *f,
		    const struct drm_arena_schedule_append *arg)
{
	struct sim_schedule *s = schedule_get(f, arg->schedule);
	if (!s)
		return -ENOENT;
	if (s->busy)
		return -EBUSY;
	if (arg->count == 0)
		return 0;
	if (!arena_append_count_ok(arg->count))   /* contract/image.h */
		return -EINVAL;
	_Static_assert(sizeof(struct drm_arena_ref) == sizeof(struct ac_ref),
		       "a uapi reference is a model reference");
	struct sim_program_rec *rec;
	const struct sim_program *p;
	int rc = program_get(f, s->program, &rec, &p);
	if (rc)
		return rc;
	struct ac_ref *refs = malloc(arg->count * sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	uint64_t executed;
	rc = copy_from_user(refs, arg->refs, arg->count * sizeof(*refs));
	if (!rc)
		rc = check_batch(s, p, refs, arg->count, &executed);
	if (!rc)
		rc = reserve_refs(f, s, arg->count);
	if (!rc) {
		struct ac_ref *all = ctx_at(f, s->refs);
		memcpy(&all[s->n_refs], refs, arg->count * sizeof(*refs));
		s->n_refs += arg->count;
		s->executed = executed;
		arena_seal_refs(&s->seal, (const struct drm_arena_ref *)refs,
				arg->count);
	}
	free(refs);
	return rc;
}

static int reserve_fault(struct sim_file *f)
{
	struct sim_ctx *c = f->ctx;
	if (c->n_faulted < c->cap_faulted)
		return 0;
	uint64_t cap = c->cap_faulted ? 2 * c->cap_faulted : 8;
	uint64_t grown = ctx_grow(f, c->faulted, c->cap_faulted * sizeof(uint64_t),
				  c->n_faulted * sizeof(uint64_t),
				  cap * sizeof(uint64_t));
	if (!grown)
		return -ENOMEM;
	c->faulted = grown;
	c->cap_faulted = cap;
	return 0;
}

int schedule_submit(struct sim_file *f, uint32_t schedule, uint32_t flags,
		    const struct sim_seal_check *check, uint64_t *seqno,
		    uint64_t seqno_user)
{
	assert(check && seqno);
	struct sim_ctx *c = f->ctx;
	int rc = arena_submit_check(flags, check->sealed, check->algorithm,
				    check->pad, c->sealed);
	if (rc)
		return rc;
	struct sim_schedule *s = schedule_get(f, schedule);
	if (!s)
		return -ENOENT;
	if (s->busy)
		return -EBUSY;
	if (check->sealed) {
		/* A copy of the schedule's state is finalized: it keeps
		 * taking references. */
		struct arena_seal_value v;
		arena_seal_value(&s->seal, &v);
		if (!arena_seal_equal(&v, check->seal))
			return -EKEYREJECTED;
	}
	/* Everything that can fail, before anything runs. */
	struct sim_program_rec *rec;
	const struct sim_program *p;
	rc = program_get(f, s->program, &rec, &p);
	uint64_t next = c->last_seqno + 1;
	if (!rc)
		rc = reserve_fault(f);
	if (!rc && seqno_user)
		rc = copy_to_user(seqno_user, &next, sizeof(next));
	if (rc)
		return rc;
	c->last_seqno = next;
	*seqno = next;
	s->busy = 1;
	const struct ac_ref *refs = s->n_refs ? ctx_at(f, s->refs) : NULL;
	if (execute(f, p, refs, s->n_refs) != 0) {
		uint64_t *faulted = ctx_at(f, c->faulted);
		faulted[c->n_faulted++] = next;
	}
	s->busy = 0;
	return 0;
}

static int faulted(const struct sim_file *f, uint64_t seqno)
{
	const struct sim_ctx *c = f->ctx;
	if (!c->n_faulted)
		return 0;
	const uint64_t *a = ctx_at(f, c->faulted);
	uint64_t at;
	AC_PARTITION(uint64_t, at, c->n_faulted, i, a[i] < seqno);
	return at < c->n_faulted && a[at] == seqno;
}

int schedule_wait(struct sim_file *f, const struct drm_arena_wait *arg)
{
	if (!arena_wait_seqno_ok(arg->seqno, f->ctx->last_seqno))
		return -EINVAL;
	return faulted(f, arg->seqno) ? -EIO : 0;
}

int schedule_destroy(struct sim_file *f, const struct drm_arena_handle *arg)
{
	if (arg->pad)
		return -EINVAL;
	struct sim_schedule *s = schedule_get(f, arg->handle);
	if (!s)
		return -ENOENT;
	if (s->busy)
		return -EBUSY;
	struct sim_program_rec *rec;
	if (program_get(f, s->program, &rec, NULL) == 0)
		rec->schedules--;
	uint64_t off = handles_remove(f, &f->ctx->schedules, arg->handle);
	ctx_free(f, s->refs, s->cap_refs * sizeof(struct ac_ref));
	ctx_free(f, off, sizeof(*s));
	return 0;
}

int file_seal(struct sim_file *f, struct drm_arena_seal *arg)
{
	if (arg->flags)
		return -EINVAL;
	f->ctx->sealed = 1;
	arg->algorithms = ARENA_SEAL_ALGORITHMS;
	arg->context = f->ctx->context;
	return 0;
}
