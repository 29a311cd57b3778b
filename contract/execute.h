/* SPDX-License-Identifier: MIT */
/*
 * Walking a schedule as the device executes it (spec 1.3): references in
 * order, each launch of a reference in table order, a repeat body all
 * its iterations (ordinal 0 of the whole body, then 1, ...) before the
 * launch after it, every launch with its words at its ordinal (V(t)).
 * One walk for arena.ko and the simulator; what a launch does is the
 * caller's (struct arena_walker).  Freestanding: types.h.
 *
 * Poisoning, the one rule both devices follow when told to (the
 * simulator's ARENASIM_POISON=1, arena.ko's poison=1): a phase instance
 * is a maximal run of consecutive executed launches of one phase, across
 * references and iterations, within one walk (spec 2 (D)); before its
 * first launch runs, each fresh (not carried) plane of its phase is
 * filled with ARENA_POISON_BYTE, so a value never written in this
 * instance, or overwritten since, shows up in the results (NaN) instead
 * of surviving by luck in reused workspace.  Launches declaring no phase
 * form runs of their own and poison nothing.
 */
#ifndef ARENA_CONTRACT_EXECUTE_H
#define ARENA_CONTRACT_EXECUTE_H

#include "image.h"

/* A schedule reference, as uapi.h's struct drm_arena_ref. */
struct arena_ref {
	u64 first;
	u64 count;
};

/* The poison: every byte of a fresh plane (an f32 of them is a NaN). */
#define ARENA_POISON_BYTE 0xFF

struct arena_walker {
	/* Runs launch l, whose n words at this ordinal are words[0 .. n);
	 * 0, or -errno to stop the walk there.
	 */
	int (*launch)(struct arena_walker *w, u64 l, const u64 *words, u32 n);
	/* NULL: no poisoning.  Otherwise fills the device bytes of
	 * [address, address + size) that lie in buffers with
	 * ARENA_POISON_BYTE (the rest of the range is no memory: skipped);
	 * 0, or -errno to stop the walk there.  size is not 0; address +
	 * size - 1 may pass 2^64 - 1 only in a program that is not
	 * well-formed, which the device never indexes.
	 */
	int (*poison)(struct arena_walker *w, u64 address, u64 size);
	/* room for the program's max_words words */
	u64 *scratch;
	/* the walk's own: the current instance's phase, once one began */
	u32 phase;
	int in_instance;
};

/*
 * Walks references checked by arena_ref_check(): 0, -EFAULT when a word
 * at its ordinal leaves [0, 2^64) (a fault: the walk stops before that
 * launch), or the first nonzero result of w->poison or w->launch.  The
 * first launch starts an instance (w->in_instance is reset here).
 */
int arena_walk(const struct arena_program *p, const struct arena_ref *refs,
	       u64 n_refs, struct arena_walker *w);

#endif
