/* SPDX-License-Identifier: MIT */
/*
 * struct ac_program: a checked model and the indexes schedules need.
 * Built once by ac_program_new (program.c); read-only afterwards, so one
 * program serves any number of schedules and threads.
 */
#ifndef ARENACERT_PROGRAM_IMPL_H
#define ARENACERT_PROGRAM_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <xxhash.h>

#include "arena.h"
#include "identity.h"
#include "internal.h"

/* A maximal stretch of launches of one phase that does not cross a repeat
 * body's boundary. */
struct run {
	uint32_t first;          /* first launch */
	uint32_t phase;
	uint32_t body;           /* index into bodies[], or UINT32_MAX */
};

/* A repeat body as (D) sees it; bodies[] is sorted by first launch. */
struct body {
	uint32_t first, count;   /* launches */
	uint32_t run_first, run_count;
	uint64_t iterations;
	uint64_t steady;         /* new instances per iteration after the 1st */
	uint32_t repeat;         /* index in the model */
};

/* A plane as (D) sees it: its key and its span of elementary intervals. */
struct plane_span {
	uint32_t key;
	uint64_t lo, hi;         /* owner-map positions [lo, hi) */
};

/* A plane intersecting a light key's range: the plane (an index into
 * m->planes) and its phase. */
struct touch {
	uint32_t plane, phase;
};

/* A watched key that more planes than this intersect is heavy: followed
 * in the owner map, whose cost does not grow with them. */
#define LIGHT_TOUCHES 16

struct ac_program {
	const struct ac_model *m;
	/* m when phases of the given model share planes (program.c,
	 * own_planes): the model's copy with its own phase and plane
	 * tables, else NULL */
	struct ac_model *own;
	uint64_t verdict;        /* (A), (B), (C): 0, 1 or 2 + i */
	struct ac_diag diag;     /* why, when verdict != 0 */

	/* Every table below but phase_of, runs and run_of (large per-launch
	 * arrays, aci_big_calloc's), and own with its tables: a few blocks,
	 * freed with the program. */
	struct aci_arena arena;

	/* Always built: schedules validate references with them. */
	struct body *bodies;     /* sorted by first */
	uint64_t *extra_prefix;  /* extra_prefix[b]: executed launches that
				  * bodies[0..b) add beyond their count */

	uint32_t *phase_of;      /* per launch, NO_PHASE if undeclared */

	/* Built only when verdict == 0, for (D). */
	struct run *runs;
	uint32_t n_runs;
	uint32_t *run_of;        /* per launch: the run holding it */
	struct plane_span *spans;/* per plane */
	uint32_t n_keys;         /* keys 0 .. n_watched - 1 are carried by
				  * some plane; the others never are */
	uint32_t n_watched;
	uint64_t n_positions;    /* owner-map size */
	/* The planes (D) follows (program.c, index_followed: fresh planes
	 * of heavy keys or over one): phase ph's are
	 * followed[followed_first[ph] .. followed_first[ph + 1]), plane
	 * indexes in phase order. */
	uint32_t *followed;
	uint32_t *followed_first;/* n_phases + 1 */
	/* Light keys (program.c, index_light): a watched key whose range
	 * at most LIGHT_TOUCHES planes intersect is decided from the last
	 * instances of their phases, not through the owner map.  light[c]
	 * per watched key; touch[touch_first[c] .. touch_first[c + 1]) the
	 * planes intersecting light key c (its own key's among them);
	 * light_carried[light_carried_first[ph] .. +1) phase ph's carried
	 * planes of light keys, phase order. */
	uint8_t *light;
	struct touch *touch;
	uint32_t *touch_first;   /* n_watched + 1 */
	uint32_t *light_carried;
	uint32_t *light_carried_first;/* n_phases + 1 */
	/* heavy_carried[heavy_carried_first[ph] .. +1): phase ph's carried
	 * planes of heavy keys, phase order */
	uint32_t *heavy_carried;
	uint32_t *heavy_carried_first;/* n_phases + 1 */
	/* For the diagnostic's intervening instance of a light key (the
	 * first instance, since the key's latest declaration, of a phase
	 * over it): one pair (q, d) for every phase q with a plane of
	 * another key over a light key's bytes and every phase d declaring
	 * that key, d = pair_d[x] for x in pair_first[q] .. pair_first[q +
	 * 1]), distinct (every watched key has a declaring phase, its
	 * carrier: q has pairs iff it has a plane of another key over a
	 * light key). */
	uint32_t *pair_d;
	uint32_t *pair_first;    /* n_phases + 1 */
	/* The phases declaring watched key c: declaring[declaring_first[c] ..
	 * declaring_first[c + 1]), for the diagnostic's latest declaration. */
	uint32_t *declaring;
	uint32_t *declaring_first;/* n_watched + 1 */

	/* XXH3-128 of the image without its schedule: computed on the first
	 * ac_schedule_digest, since certifying does not need it. */
	pthread_mutex_t digest_lock;
	atomic_int digest_done;
	XXH128_hash_t digest;
};

struct aci_team;

/* sequence.c: the runs of m's launches (runs[0 .. *n_runs), run_of[l] the
 * run holding launch l), given every launch's phase and the bodies sorted
 * by first launch, whose run_first, run_count and steady it fills.
 * O(launches + repeats), on team's threads (NULL: the caller's alone),
 * the same index whatever the threads.  0, or -1 when memory
 * runs out; either way the arrays it allocated (aci_big_calloc) are in
 * *runs and *run_of, for the caller to aci_big_free. */
int aci_index_runs(const struct ac_model *m, const uint32_t *phase_of,
		   struct body *bodies, struct aci_team *team,
		   struct run **runs, uint32_t **run_of, uint32_t *n_runs);

/* schedule.c: the bytes a schedule holds beyond its program (its (D)
 * state), for the tests and benchmarks of the live-schedule cost. */
size_t aci_schedule_state_bytes(const ac_schedule *s);

/* schedule.c: whether (D) may replay a reference that is the third copy
 * of the same runs instead of walking it (1, the default; 0: always
 * walk, the tests' reference), and the instances it replayed so far. */
void aci_schedule_set_replay(ac_schedule *s, int on);
uint64_t aci_schedule_replayed(const ac_schedule *s);

/* digest.c: the references as the digest hashes them (R's bytes). */
void aci_digest_refs(XXH3_state_t *state, const struct ac_ref *refs, size_t n);

/* digest.c: P of an image's bytes streamed, the one definition that
 * ac_image_digest (one chunk), ac_image_digester and the program's own
 * digest (its emitted image) use: begin, add each chunk in order, read
 * the value (state unchanged, so more may be added). */
void aci_image_digest_begin(XXH3_state_t *state);
void aci_image_digest_add(XXH3_state_t *state, const void *chunk, size_t len);
void aci_image_digest_value(const XXH3_state_t *state, struct ac_digest *out);

/* program.c: the program's digest (computed once, thread-safe). */
XXH128_hash_t aci_program_digest(const struct ac_program *p);

/* A phase's planes, or NULL when it has none: a hand-built model may leave
 * m->planes NULL, and NULL + 0 is undefined behaviour in C. */
static inline const struct ac_tensor *phase_planes(const struct ac_model *m,
						   const struct ac_phase *ph)
{
	return ph->plane_count ? m->planes + ph->plane_first : NULL;
}

/* diag.c: a diagnostic that names nothing, verdict 0. */
void aci_diag_clear(struct ac_diag *diag);

/*
 * validate.c: spec 1 for everything but the schedule; on 0, *sums holds
 * the launch table's sums (aci_model_check_structure), for aci_image_check.
 * read: NULL, or the sums of a model that aci_image_view has just built and
 * nobody else has seen: its structure holds by construction, so it is
 * not checked again, and *sums is *read.  On 0, *phases is the phases'
 * table by identity (aci_phase_table_build: the validation builds it to
 * find two phases with one identity, and aci_phases_of_launches reads
 * it), which the caller frees (aci_hash_index_free); on failure there is
 * nothing to free.
 */
int aci_validate_model(const struct ac_model *m, const struct launch_sums *read,
		       struct launch_sums *sums, struct hash_index *phases,
		       struct ac_error *err);

/* A closed range [lo, last] of the arena: a window, one of the windows'
 * union, a named range (advisory.c, words.c). */
struct range {
	uint64_t lo, last;
};

/* layout.c: the union of the model's windows as *n disjoint, non-touching
 * ranges in increasing order (so the byte after each is in no window), in
 * a new array the caller frees; NULL when memory runs out.  The windows
 * are non-empty and end by 2^64 (validated).  O(W log W). */
struct range *aci_window_union(const struct ac_model *m, uint32_t *n);

/* layout.c: indexes of t[0..n) sorted by offset (ties by index), in an
 * array of n + extra entries (the rest uninitialised); NULL on
 * out-of-memory.  The globals are sorted once (check_program) for (A),
 * (B) and (C), with room after them for the planes' orders (extra:
 * aci_planes_listed): `globals` below is
 * aci_sort_tensors(m->globals, n_globals, aci_planes_listed(m)), and
 * `planes` is globals + n_globals. */
uint32_t *aci_sort_tensors(const struct ac_tensor *t, uint32_t n,
			   uint64_t extra);
/* The planes the phases list: the sum of their plane counts. */
uint64_t aci_planes_listed(const struct ac_model *m);

/* layout.c: (A) then (B).  0 when both hold, 1 with *diag filled, -1 on
 * out-of-memory.  On 0, planes holds each phase's planes sorted as
 * aci_sort_tensors sorts (indexes within the phase), phase after phase:
 * phase p's from the sum of the plane counts before it, so that (C)
 * does not sort them again. */
int aci_check_layout(const struct ac_model *m, const uint32_t *globals,
		     uint32_t *planes, struct ac_diag *diag);

/* words.c: (C), given every launch's phase.  Returns 0, or 1 with *diag
 * for the smallest failing launch; -1 on out-of-memory. */
int aci_check_words(const struct ac_model *m, const uint32_t *phase_of,
		    const uint32_t *globals, const uint32_t *planes,
		    struct ac_diag *diag);

/* words.c, for the tests: aci_check_words with its comparison of a launch's
 * words with an earlier launch's (scan_plain) on (compare 1, as
 * aci_check_words) or off (every word tested); *compared (when not NULL):
 * the words found equal, which took no test.  The same result either way. */
int aci_check_words_compared(const struct ac_model *m, const uint32_t *phase_of,
			     const uint32_t *globals, const uint32_t *planes,
			     int compare, struct ac_diag *diag,
			     uint64_t *compared);

/* words.c: (C) in parts, for threads.  aci_word_check_new builds what every
 * part reads (the named ranges, each repeat's sorted deltas and slots):
 * NULL on out-of-memory.  aci_word_check_range checks launches [from, to) as
 * aci_check_words would, given their phases: 0, or 1 with *diag (verdict
 * included) for the smallest failing launch among them, or -1 on
 * out-of-memory; it only reads c, so any number of threads may run it on
 * one c at once. */
struct word_check;
struct word_check *aci_word_check_new(const struct ac_model *m,
				      const uint32_t *globals,
				      const uint32_t *planes);
int aci_word_check_range(const struct word_check *c, const uint32_t *phase_of,
			 uint32_t from, uint32_t to, struct ac_diag *diag);
void aci_word_check_free(struct word_check *c);

#endif
