/* SPDX-License-Identifier: MIT */
/*
 * Schedules, submissions and sequence numbers.  A schedule is the list
 * of references appended so far; submitting executes all of it, at once
 * (the simulated device is fast enough), and hands out the next sequence
 * number of the open file.  WAIT then only reports what happened: 0, or
 * EIO for a submission that faulted.  Faults are rare, so only their
 * sequence numbers are kept (ascending, as they are handed out).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "usercopy.h"

/* Spec 1.3: an executed sequence of 2^62 launches or more is malformed. */
#define MAX_EXECUTED (1ull << 62)

int schedule_create(struct sim_file *f, struct drm_arena_schedule_create *arg)
{
	struct sim_program *p = handles_get(&f->programs, arg->program);
	if (!p)
		return -ENOENT;
	struct sim_schedule *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->program = p;
	s->seal = p->seal;
	int rc = handles_add(&f->schedules, s, &arg->handle);
	if (rc) {
		free(s);
		return rc;
	}
	p->schedules++;
	return 0;
}

void schedule_free(struct sim_schedule *s)
{
	if (!s)
		return;
	s->program->schedules--;
	free(s->refs);
	free(s);
}

static int reserve_refs(struct sim_schedule *s, uint64_t more)
{
	if (s->n_refs + more <= s->cap_refs)
		return 0;
	uint64_t cap = s->cap_refs ? s->cap_refs : 16;
	while (cap < s->n_refs + more)
		cap *= 2;
	if (cap > SIZE_MAX / sizeof(*s->refs))
		return -ENOMEM;
	struct ac_ref *refs = realloc(s->refs, cap * sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	s->refs = refs;
	s->cap_refs = cap;
	return 0;
}

/* Checks a whole batch before any of it is appended (atomic). */
static int check_batch(const struct sim_schedule *s, const struct ac_ref *refs,
		       uint32_t count, uint64_t *executed)
{
	*executed = s->executed;
	for (uint32_t i = 0; i < count; i++) {
		int rc = program_check_ref(s->program, &refs[i], executed);
		if (rc)
			return rc;
	}
	return *executed >= MAX_EXECUTED ? -EINVAL : 0;
}

int schedule_append(struct sim_file *f,
		    const struct drm_arena_schedule_append *arg)
{
	struct sim_schedule *s = handles_get(&f->schedules, arg->schedule);
	if (!s)
		return -ENOENT;
	if (s->busy)
		return -EBUSY;
	if (arg->count == 0)
		return 0;
	if (arg->count > SIM_MAX_APPEND)
		return -EINVAL;
	_Static_assert(sizeof(struct drm_arena_ref) == sizeof(struct ac_ref),
		       "a uapi reference is a model reference");
	struct ac_ref *refs = malloc(arg->count * sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	uint64_t executed;
	int rc = copy_from_user(refs, arg->refs, arg->count * sizeof(*refs));
	if (!rc)
		rc = check_batch(s, refs, arg->count, &executed);
	if (!rc)
		rc = reserve_refs(s, arg->count);
	if (!rc) {
		memcpy(&s->refs[s->n_refs], refs, arg->count * sizeof(*refs));
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
	if (f->n_faulted < f->cap_faulted)
		return 0;
	uint64_t cap = f->cap_faulted ? 2 * f->cap_faulted : 8;
	uint64_t *a = realloc(f->faulted, cap * sizeof(*a));
	if (!a)
		return -ENOMEM;
	f->faulted = a;
	f->cap_faulted = cap;
	return 0;
}

int schedule_submit(struct sim_file *f, uint32_t schedule, uint32_t flags,
		    const struct sim_seal_check *check, uint64_t *seqno,
		    uint64_t seqno_user)
{
	assert(check && seqno);
	if (flags)
		return -EINVAL;
	if (!check->sealed && f->sealed)
		return -ENOKEY;
	struct sim_schedule *s = handles_get(&f->schedules, schedule);
	if (!s)
		return -ENOENT;
	if (s->busy)
		return -EBUSY;
	if (check->sealed && check->seal != arena_seal_value(&s->seal))
		return -EKEYREJECTED;
	/* Everything that can fail, before anything runs. */
	uint64_t next = f->last_seqno + 1;
	int rc = reserve_fault(f);
	if (!rc && seqno_user)
		rc = copy_to_user(seqno_user, &next, sizeof(next));
	if (rc)
		return rc;
	f->last_seqno = next;
	*seqno = next;
	s->busy = 1;
	if (execute(f, s->program, s->refs, s->n_refs) != 0)
		f->faulted[f->n_faulted++] = next;
	s->busy = 0;
	return 0;
}

static int faulted(const struct sim_file *f, uint64_t seqno)
{
	uint64_t lo = 0, hi = f->n_faulted;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (f->faulted[mid] == seqno)
			return 1;
		if (f->faulted[mid] < seqno)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

int schedule_wait(struct sim_file *f, const struct drm_arena_wait *arg)
{
	if (arg->seqno == 0 || arg->seqno > f->last_seqno)
		return -EINVAL;
	return faulted(f, arg->seqno) ? -EIO : 0;
}

int schedule_destroy(struct sim_file *f, const struct drm_arena_handle *arg)
{
	if (arg->pad)
		return -EINVAL;
	struct sim_schedule *s = handles_get(&f->schedules, arg->handle);
	if (!s)
		return -ENOENT;
	if (s->busy)
		return -EBUSY;
	handles_remove(&f->schedules, arg->handle);
	schedule_free(s);
	return 0;
}

int file_seal(struct sim_file *f, struct drm_arena_seal *arg)
{
	if (arg->flags || arg->pad)
		return -EINVAL;
	f->sealed = 1;
	arg->context = f->context;
	return 0;
}
