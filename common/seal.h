/* SPDX-License-Identifier: MIT */
/*
 * The seal of a schedule (include/arenaguard/uapi.h, "Sealed
 * submissions"): the one implementation, used by the simulated device
 * (the driver's side), the guard (the checker's side) and the guard's
 * test driver.  A state is started from a program image and then fed the
 * references in the order they are appended; reading the value does not
 * change the state, so a schedule can grow and be submitted again.
 */
#ifndef ARENAGUARD_SEAL_H
#define ARENAGUARD_SEAL_H

#include <stdint.h>

#define XXH_STATIC_LINKING_ONLY   /* XXH64_state_t by value */
#include <xxhash.h>

#include <arenaguard/uapi.h>

struct arena_seal {
	XXH64_state_t state;
};

/* The state of a program: le64(size) || image[0, size). */
void arena_seal_program(struct arena_seal *s, const void *image,
			uint64_t size);
/* Feeds n references (as le64 first || le64 count each). */
void arena_seal_refs(struct arena_seal *s, const struct drm_arena_ref *refs,
		     uint64_t n);
/* The seal of what was fed so far. */
uint64_t arena_seal_value(const struct arena_seal *s);

#endif
