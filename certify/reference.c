/* SPDX-License-Identifier: MIT */
/*
 * Spec 1.3: which schedule references are well formed, and how many
 * launches the executed sequence holds.  The one check of a reference:
 * ac_schedule_append (schedule.c) and the simulator's append both call it.
 */
#include <assert.h>
#include <stdio.h>

#include "program_impl.h"

/* Spec 1.3: an executed sequence of 2^62 launches or more is malformed. */
#define EXECUTED_LIMIT ((uint64_t)1 << 62)

/* Index of the first body whose first launch is >= x. */
static uint32_t bodies_from(const struct ac_program *p, uint64_t x)
{
	uint32_t b;
	AC_PARTITION(uint32_t, b, p->m->n_repeats, i, p->bodies[i].first < x);
	return b;
}

/* Does launch x lie strictly inside a body (not at its first launch)? */
static int cuts_body_at(const struct ac_program *p, uint64_t x)
{
	uint32_t b = bodies_from(p, x + 1);      /* bodies starting <= x */
	if (b == 0)
		return 0;
	const struct body *bd = &p->bodies[b - 1];
	return x > bd->first && x < (uint64_t)bd->first + bd->count;
}

/* "schedule[index]" in where[48], for an error's location. */
static const char *at_ref(char *where, uint64_t index)
{
	snprintf(where, 48, "schedule[%llu]", (unsigned long long)index);
	return where;
}

int ac_program_check_ref(const ac_program *p, const struct ac_ref *ref,
			 uint64_t index, uint64_t *executed,
			 struct ac_error *err)
{
	assert(p && ref && executed);
	assert(*executed < EXECUTED_LIMIT);
	char where[48];   /* written only on a failure (at_ref) */
	uint64_t n = p->m->n_launches;
	if (ref->count == 0)
		return aci_fail(err, at_ref(where, index),
				"a reference holds at least one launch");
	if (ref->first > n || ref->count > n - ref->first)
		return aci_fail(err, at_ref(where, index),
				"[%llu, +%llu) is not inside the launch table "
				"of %llu launches",
				(unsigned long long)ref->first,
				(unsigned long long)ref->count,
				(unsigned long long)n);
	uint64_t end = ref->first + ref->count;
	if (cuts_body_at(p, ref->first) || cuts_body_at(p, end))
		return aci_fail(err, at_ref(where, index),
				"[%llu, %llu) cuts a repeat body",
				(unsigned long long)ref->first,
				(unsigned long long)end);
	uint64_t extra = p->extra_prefix[bodies_from(p, end)] -
			 p->extra_prefix[bodies_from(p, ref->first)];
	/* count + extra < n * 2^32 < 2^64; the running total stays below
	 * 2^62 + 2^64 only if checked before adding, hence the subtraction. */
	assert(extra <= UINT64_MAX - ref->count);
	uint64_t adds = ref->count + extra;
	if (adds >= EXECUTED_LIMIT - *executed)
		return aci_fail(err, at_ref(where, index),
				"the executed sequence would reach 2^62 "
				"launches");
	*executed += adds;
	return 0;
}
