/* SPDX-License-Identifier: MIT */
/*
 * Walking a schedule as the device executes it (spec 1.3): references in
 * order, each launch of a reference in table order, a repeat body all
 * its iterations (ordinal 0 of the whole body, then 1, ...) before the
 * launch after it, every launch with its words at its ordinal (V(t)).
 * One walk for arena.ko and the simulator; what a launch does is the
 * caller's (struct arena_walker).  Freestanding: types.h.
 */
#ifndef ARENA_CONTRACT_EXECUTE_H
#define ARENA_CONTRACT_EXECUTE_H

#include "image.h"

/* A schedule reference, as uapi.h's struct drm_arena_ref. */
struct arena_ref {
	u64 first;
	u64 count;
};

struct arena_walker {
	/* Runs launch l, whose n words at this ordinal are words[0 .. n);
	 * 0, or -errno to stop the walk there.
	 */
	int (*launch)(struct arena_walker *w, u64 l, const u64 *words, u32 n);
	/* room for the program's max_words words */
	u64 *scratch;
};

/*
 * Walks references checked by arena_ref_check(): 0, -EFAULT when a word
 * at its ordinal leaves [0, 2^64) (a fault: the walk stops before that
 * launch), or the first nonzero result of w->launch.
 */
int arena_walk(const struct arena_program *p, const struct arena_ref *refs,
	       u64 n_refs, struct arena_walker *w);

#endif
