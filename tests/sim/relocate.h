/* SPDX-License-Identifier: MIT */
/*
 * The relocation of a program: the same program with no bytes shared
 * between plane keys (test_soundness.c runs both and compares them).
 *
 * Keys.  A plane's key is (name, offset, size) (spec 1.1).  Each distinct
 * key K, in order of first appearance (phases in order, planes in order),
 * gets a private range [R(K), R(K) + size) in a region starting at
 * `base`: R(K) is aligned to max(alignment, 64) and at least that many
 * bytes separate one private range from the next, so different keys
 * share no byte.  The caller puts `base` above every global and plane of
 * the program, so private ranges share no byte with those either.  The
 * displacement of K is d(K) = R(K) - offset(K).
 *
 * Plan.  Every plane of every phase with key K is at offset R(K); windows
 * are the program's own plus one, [base, end of the last private range).
 * Globals, names, carried flags and identities do not change.
 *
 * Words.  A word (l, w) of a launch with declared phase p takes its values
 * V(t) (spec 1.2) from sources: the written value x when no table slot
 * names the word (used at every ordinal t < N, or t = 0 outside repeats);
 * otherwise frame f's value for its slot (used at the ordinals t < N with
 * t mod F = f; none when f >= N).  A source all of whose values lie
 * inside one plane of p, of key K, is rewritten to source + d(K); a source
 * none of whose values lies inside a plane of p is left as it is (a
 * global, a scalar, or a pointer at memory p did not name).  Deltas stay,
 * so every V(t) of a moved source moves by exactly d(K): the word points
 * at the same byte of the same key at every iteration.  A source whose
 * values lie in different planes of p, or only some of them in one, has
 * no relocation: relocate() refuses the program.  Launches without a
 * declared phase and the schedule are unchanged.
 */
#ifndef SIM_TESTS_RELOCATE_H
#define SIM_TESTS_RELOCATE_H

#include <stddef.h>
#include <stdint.h>

#include <arenaguard/program.h>

struct relocation {
	struct ac_model model;        /* shares unchanged arrays with the
				       * original, which must outlive it */
	struct ac_window *windows;
	struct ac_tensor *planes;
	uint64_t *words, *frame_values;
	uint64_t end;                 /* the private region is [base, end) */
};

/* 0, or -1 with a reason in why (a malformed program, or a source with
 * no relocation).  Free with relocation_free() either way. */
int relocate(const struct ac_model *m, uint64_t base, struct relocation *out,
	     char *why, size_t len);
void relocation_free(struct relocation *r);

/* The two planes have the same key (spec 1.1). */
int same_key(const struct ac_tensor *a, const struct ac_tensor *b);

#endif
