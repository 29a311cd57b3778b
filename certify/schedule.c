/* SPDX-License-Identifier: MIT */
/*
 * ac_schedule: references appended one batch at a time, and (D) advanced
 * as they come.
 *
 * A carried plane c is sound at instance k iff its key was declared
 * before and none of its bytes has been given to another key since, i.e.
 * iff the key is still "intact".  Per phase we keep its last instance.
 * Watched keys (those some plane carries) are decided one of two ways
 * (program.c, index_light):
 *
 * - A light key (at most LIGHT_TOUCHES planes over its bytes) from the
 *   last instances of the phases of those planes: the latest among those
 *   declaring the key is the spec's j, and the key is intact iff none of
 *   the others (other keys over its bytes) ran later.  Nothing is written
 *   for the key when a phase runs.  For the diagnostic's intervening
 *   instance, each pair (q, d) of a phase q over a light key and a phase
 *   d declaring it keeps q's first instance after d's last (firsts).
 * - A heavy key through the owner map (owner_map.c), which keeps for
 *   every byte the key that declared it last: per heavy key whether it
 *   was declared, whether it is intact, and the first instance that took
 *   one of its bytes since, for the diagnostic.  The latest instance that
 *   declared a key is the latest last instance among the phases that
 *   declare it (the program lists them), so declarations need not write
 *   it.
 *
 * What an instance costs:
 *
 * - Only the planes the program marked followed (fresh, of a heavy key or
 *   over one) are declared into the map: an instance of a phase with
 *   none, no carried planes and no pairs costs O(1).  A carried plane
 *   found intact already is one segment of its key there.
 * - `version` counts the declarations that changed the map and the
 *   instances that may have broken a light key (those of a phase with
 *   pairs, when a phase d of its pairs ran since its previous instance).
 *   When it has not moved since the phase's previous instance, that
 *   instance left each of the phase's followed planes one segment of its
 *   own key and nothing took a byte since (every heavy carried plane is
 *   still intact and every declaration would change nothing), and no
 *   instance since can have broken a light key it carries (it declared
 *   them): checks and declarations are skipped.  A loop of phases that
 *   only reuse what they declared costs O(1) an instance, plus O(pairs)
 *   for a phase with pairs (did one of its d's run?).
 * - Otherwise O(heavy carried planes + followed planes x log P) and
 *   O(light carried planes x LIGHT_TOUCHES).
 *
 * All state is lazy (lazy_array.h): a schedule's memory follows the keys,
 * positions and phases it touched, not the program's size.
 *
 * Repeats are not unrolled.  A body's declarations overwrite bytes with
 * values that depend only on the body, so running it twice leaves the map
 * as running it once did: from the second iteration on, every iteration
 * starts in the same state and makes the same checks.  A body of N
 * iterations is therefore run for iteration 0, the instance counter jumps
 * over iterations 1 .. N-2 ((N-2) * steady instances), and the body runs
 * once more as iteration N-1, leaving the exact state and instance numbers
 * of the real last iteration.  A failure in that simulated iteration is a
 * failure of iteration 1, the first to have that state: its instance
 * numbers are shifted back by the jump.
 */
#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lazy_array.h"
#include "owner_map.h"
#include "program_impl.h"

struct key_state {
	uint64_t broken_instance;   /* first instance since the latest
				     * declaration that took a byte */
	uint32_t broken_phase, broken_plane;
	uint8_t declared, intact;
};

struct phase_state {
	uint64_t last;              /* its latest instance + 1; 0: none yet */
	uint64_t version;           /* the map's version after it */
	uint8_t reserved;           /* everything its instances write exists */
};

struct ac_schedule {
	const struct ac_program *p;
	uint64_t n_refs, executed;
	XXH3_state_t *digest;

	/* (D), only for programs that pass (A)-(C) */
	int failed;
	struct ac_diag diag;
	uint64_t next_instance;
	uint32_t cur_phase;           /* phase of the open instance */
	struct owner_map map;
	uint64_t version;             /* declarations that changed the map,
				       * and instances that may have broken a
				       * light key */
	struct lazy_array firsts;     /* per pair (q, d) (program_impl.h): the
				       * first instance of q after the last of
				       * d, + 1, when not above d's last + 1 */
	struct lazy_array keys;       /* struct key_state per watched key */
	struct lazy_array phases;     /* struct phase_state per phase */
	uint64_t phases_reserved;     /* phases with reserved set */

	/* the declaration in progress, for owner_taken() */
	uint64_t decl_instance;
	uint32_t decl_phase, decl_plane;

	/* instance numbers >= remap_from are remap_by too high while the
	 * last iteration of a long repeat stands in for iteration 1 */
	uint64_t remap_from, remap_by;

	/* The previous reference, for replay_reference. */
	struct {
		uint32_t run_first, run_end;  /* the runs it covered */
		uint64_t inst_first;          /* the first instance it started */
		uint64_t inst_count;          /* the instances it started */
		uint64_t copies;              /* consecutive references ending
					       * with it with the same runs'
					       * phases (same_runs); 0: none yet */
	} prev;
	/* numbers in [lag_from, lag_from + prev.inst_count) are lag behind
	 * (replay_reference, settle_replays) */
	uint64_t lag_from, lag;
	int replay;                   /* replay_reference allowed */
	uint64_t replayed;            /* instances replayed, for the tests */
};

ac_schedule *ac_schedule_new(const ac_program *p)
{
	struct ac_schedule *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->p = p;
	s->cur_phase = NO_PHASE;
	s->remap_from = UINT64_MAX;
	s->replay = 1;
	aci_diag_clear(&s->diag);
	s->digest = XXH3_createState();
	if (!s->digest || XXH3_128bits_reset(s->digest) == XXH_ERROR)
		goto fail;
	aci_lazy_array_init(&s->keys, p->verdict == 0 ? p->n_watched : 0,
			    sizeof(struct key_state));
	aci_lazy_array_init(&s->phases, p->verdict == 0 ? p->m->n_phases : 0,
			    sizeof(struct phase_state));
	aci_lazy_array_init(&s->firsts,
			    p->verdict == 0 ? p->pair_first[p->m->n_phases] : 0,
			    sizeof(uint64_t));
	if (aci_owner_map_init(&s->map, p->verdict == 0 ? p->n_positions : 0))
		goto fail;
	return s;
fail:
	ac_schedule_free(s);
	return NULL;
}

void ac_schedule_free(ac_schedule *s)
{
	if (!s)
		return;
	XXH3_freeState(s->digest);
	aci_owner_map_free(&s->map);
	aci_lazy_array_free(&s->keys);
	aci_lazy_array_free(&s->phases);
	aci_lazy_array_free(&s->firsts);
	free(s);
}

static uint64_t remap(const struct ac_schedule *s, uint64_t instance)
{
	return instance >= s->remap_from ? instance - s->remap_by : instance;
}

/* A key lost bytes to the declaration in progress.  Unwatched keys have
 * no state; an intact key's state exists (it was written). */
static void owner_taken(void *ctx, uint32_t key)
{
	struct ac_schedule *s = ctx;
	if (key >= s->p->n_watched ||
	    !((const struct key_state *)lazy_array_get(&s->keys, key))->intact)
		return;
	struct key_state *ks = lazy_array_at(&s->keys, key);
	assert(ks);
	ks->intact = 0;
	ks->broken_instance = s->decl_instance;
	ks->broken_phase = s->decl_phase;
	ks->broken_plane = s->decl_plane;
}

static struct phase_state phase_state(struct ac_schedule *s, uint32_t phase)
{
	return *(const struct phase_state *)lazy_array_get(&s->phases, phase);
}

/* Why a carried plane fails: AC_CARRIED_UNDECLARED, or
 * AC_CARRIED_OVERWRITTEN with the latest declaration (earlier + 1 and its
 * phase) and an instance since that declared `over` (a plane index) of
 * phase `over_phase` across its bytes. */
struct carried_fault {
	enum ac_reason reason;
	uint64_t earlier, intervening;     /* + 1, as phase_state.last */
	uint32_t earlier_phase, over_phase, over;
};

/* Carried plane `plane` (index in phase) fails instance k, for `why`. */
static void report_carried(struct ac_schedule *s, uint64_t k, uint32_t phase,
			   uint32_t plane, uint64_t launch, uint64_t ordinal,
			   const struct carried_fault *why)
{
	struct ac_diag *d = &s->diag;
	aci_diag_clear(d);
	d->condition = AC_COND_D;
	d->instance = remap(s, k);
	d->verdict = 2 + (uint64_t)s->p->m->n_launches + d->instance;
	d->phase = phase;
	d->tensor[0] = (struct ac_tensor_ref){ phase, plane };
	d->start_launch = launch;
	d->start_ordinal = ordinal;
	d->reason = why->reason;
	if (why->reason == AC_CARRIED_OVERWRITTEN) {
		assert(why->earlier > 0 && why->intervening > why->earlier);
		d->earlier = remap(s, why->earlier - 1);
		d->earlier_phase = why->earlier_phase;
		d->intervening = remap(s, why->intervening - 1);
		d->tensor[1] = (struct ac_tensor_ref){ why->over_phase,
						       why->over };
	}
	s->failed = 1;
}

/* The fault of a heavy key that is not intact (state *ks).  Runs once per
 * schedule: the latest declaration is looked up among all the key's
 * declaring phases. */
static void heavy_fault(struct ac_schedule *s, uint32_t key,
			const struct key_state *ks, struct carried_fault *why)
{
	const struct ac_program *p = s->p;
	if (!ks->declared) {
		why->reason = AC_CARRIED_UNDECLARED;
		return;
	}
	why->reason = AC_CARRIED_OVERWRITTEN;
	why->earlier = 0;
	for (uint32_t x = p->declaring_first[key];
	     x < p->declaring_first[key + 1]; x++) {
		struct phase_state ps = phase_state(s, p->declaring[x]);
		if (ps.last > why->earlier) {
			why->earlier = ps.last;
			why->earlier_phase = p->declaring[x];
		}
	}
	why->intervening = ks->broken_instance + 1;
	why->over_phase = ks->broken_phase;
	why->over = ks->broken_plane;
}

/* The first instance of phase q after the last of phase d, + 1, for a
 * pair (q, d) of the program (q ran after d did). */
static uint64_t first_after(struct ac_schedule *s, uint32_t q, uint32_t d)
{
	const struct ac_program *p = s->p;
	for (uint32_t x = p->pair_first[q]; x < p->pair_first[q + 1]; x++)
		if (p->pair_d[x] == d) {
			uint64_t f = *(const uint64_t *)lazy_array_get(&s->firsts, x);
			assert(f > phase_state(s, d).last);
			return f;
		}
	assert(0 && "(q, d) is a pair of the program");
	return UINT64_MAX;
}

/* Did a phase d of q's pairs run since q's previous instance (last: q's
 * last + 1, 0 for none)?  O(q's pairs). */
static int pairs_ran_since(struct ac_schedule *s, uint32_t q, uint64_t last)
{
	const struct ac_program *p = s->p;
	for (uint32_t x = p->pair_first[q]; x < p->pair_first[q + 1]; x++)
		if (phase_state(s, p->pair_d[x]).last > last)
			return 1;
	return 0;
}

/* Phase q's instance k follows the last instances of the phases d of
 * its pairs: it is the first since d's last for each d that ran since
 * q's previous instance.  O(q's pairs). */
static void note_firsts(struct ac_schedule *s, uint32_t q, uint64_t k)
{
	const struct ac_program *p = s->p;
	for (uint32_t x = p->pair_first[q]; x < p->pair_first[q + 1]; x++) {
		uint64_t *f = lazy_array_at(&s->firsts, x);
		assert(f);                     /* reserve_phase */
		if (*f <= phase_state(s, p->pair_d[x]).last)
			*f = k + 1;
	}
}

/*
 * Light key `key` at the instance about to start, from the last instances
 * of the phases with a plane over its bytes (p->touch): the latest of
 * those declaring the key is the spec's j (none: undeclared), and the key
 * is intact iff no phase with a plane of another key over it ran since,
 * i.e. iff none of those has a later last instance.  The intervening
 * instance reported is the first since j of those phases (firsts), with
 * that phase's first plane over the key.  O(LIGHT_TOUCHES), and
 * O(LIGHT_TOUCHES x pairs) once, on failure.  1 with *why when the plane
 * fails, else 0.
 */
static int light_fault(struct ac_schedule *s, uint32_t key,
		       struct carried_fault *why)
{
	const struct ac_program *p = s->p;
	uint64_t declared = 0, over = 0;
	uint32_t declared_phase = 0;
	for (uint32_t t = p->touch_first[key]; t < p->touch_first[key + 1]; t++) {
		const struct touch *to = &p->touch[t];
		uint64_t last = phase_state(s, to->phase).last;
		if (p->spans[to->plane].key != key) {
			over = last > over ? last : over;
		} else if (last > declared) {
			declared = last;
			declared_phase = to->phase;
		}
	}
	if (declared == 0) {
		why->reason = AC_CARRIED_UNDECLARED;
		return 1;
	}
	if (over <= declared)
		return 0;
	*why = (struct carried_fault){ AC_CARRIED_OVERWRITTEN, declared,
				       UINT64_MAX, declared_phase, 0, 0 };
	uint32_t plane = 0;
	for (uint32_t t = p->touch_first[key]; t < p->touch_first[key + 1]; t++) {
		const struct touch *to = &p->touch[t];
		if (p->spans[to->plane].key == key ||
		    phase_state(s, to->phase).last <= declared)
			continue;
		uint64_t f = first_after(s, to->phase, declared_phase);
		if (f < why->intervening ||
		    (f == why->intervening && to->plane < plane)) {
			why->intervening = f;
			why->over_phase = to->phase;
			plane = to->plane;
		}
	}
	why->over = plane - p->m->phases[why->over_phase].plane_first;
	return 1;
}

/* The carried planes of instance k of phase, when the version moved
 * since the phase's previous instance: the first failing one in phase
 * order is reported (1), light ones from the last instances, heavy ones
 * from their key states (why is written only on a failure).
 * O(light carried planes x LIGHT_TOUCHES + heavy carried planes). */
static int check_carried(struct ac_schedule *s, uint64_t k, uint32_t phase,
			 uint64_t launch, uint64_t ordinal)
{
	const struct ac_program *p = s->p;
	const struct ac_phase *ph = &p->m->phases[phase];
	struct carried_fault why;
	uint32_t at = UINT32_MAX;
	for (uint32_t f = p->light_carried_first[phase];
	     f < p->light_carried_first[phase + 1]; f++) {
		uint32_t i = p->light_carried[f];
		if (light_fault(s, p->spans[i].key, &why)) {
			at = i - ph->plane_first;
			break;
		}
	}
	for (uint32_t f = p->heavy_carried_first[phase];
	     f < p->heavy_carried_first[phase + 1]; f++) {
		uint32_t i = p->heavy_carried[f];
		if (i - ph->plane_first >= at)
			break;
		struct key_state ks = *(const struct key_state *)
			lazy_array_get(&s->keys, p->spans[i].key);
		if (!(ks.declared && ks.intact)) {
			heavy_fault(s, p->spans[i].key, &ks, &why);
			at = i - ph->plane_first;
			break;
		}
	}
	if (at == UINT32_MAX)
		return 0;
	report_carried(s, k, phase, at, launch, ordinal, &why);
	return 1;
}

/* Instance k of phase declares its followed planes into the map:
 * O(followed planes x log P); reserve_phase allocated what it writes. */
static void declare_followed(struct ac_schedule *s, uint64_t k, uint32_t phase)
{
	const struct ac_program *p = s->p;
	const struct ac_phase *ph = &p->m->phases[phase];
	s->decl_instance = k;
	s->decl_phase = phase;
	for (uint32_t f = p->followed_first[phase];
	     f < p->followed_first[phase + 1]; f++) {
		const struct plane_span *sp = &p->spans[p->followed[f]];
		int watched = sp->key < p->n_watched;
		/* lazy_array_at pointers stay valid: leaves never move */
		struct key_state *ks = watched ? lazy_array_at(&s->keys, sp->key)
					       : NULL;
		s->decl_plane = p->followed[f] - ph->plane_first;
		int changed = aci_owner_map_assign(&s->map, sp->lo, sp->hi,
						   sp->key, owner_taken, s);
		assert(ks || !watched);
		s->version += (uint64_t)changed;
		if (ks)
			*ks = (struct key_state){ .declared = 1, .intact = 1 };
	}
}

/* Instance k of phase (state *ps): its carried planes must be intact;
 * then it declares its followed planes (all the planes the map needs).
 * Both are skipped when the version has not moved since the phase's
 * previous instance: the map is as that instance left it (its heavy
 * carried planes intact, its declarations changing nothing), and no
 * instance that may break a light key came since (its light carried
 * keys, which it declared, are intact).  O(1) then, plus O(pairs) for a
 * phase with pairs. */
static __attribute__((noinline)) void
run_instance_slow(struct ac_schedule *s, uint64_t k, uint32_t phase,
		  struct phase_state *ps, uint64_t launch, uint64_t ordinal)
{
	const struct ac_program *p = s->p;
	if (!ps->last || ps->version != s->version) {
		if (check_carried(s, k, phase, launch, ordinal))
			return;
		declare_followed(s, k, phase);
	}
	/* This phase has a plane of another key over light keys c (it has
	 * pairs).  Its instance changes whether some c is intact only when c
	 * was declared since the phase's previous instance (or it has none):
	 * else that instance came after c's latest declaration and broke c
	 * already.  Only then does the instance move the version, and only
	 * then can it be the phase's first since a declaration (firsts). */
	if (p->pair_first[phase] < p->pair_first[phase + 1] &&
	    (!ps->last || pairs_ran_since(s, phase, ps->last))) {
		note_firsts(s, phase, k);
		s->version++;
	}
	/* ps still points at the phase's state: leaves never move */
	ps->last = k + 1;
	ps->version = s->version;
}

/* Instance k of phase: run_instance_slow, but a settled phase without
 * pairs (nothing to check, declare or note) only moves its last
 * instance, without a call. */
static inline void run_instance(struct ac_schedule *s, uint64_t k,
				uint32_t phase, uint64_t launch,
				uint64_t ordinal)
{
	const struct ac_program *p = s->p;
	/* reserve_phase allocated all this writes: nothing below fails */
	struct phase_state *ps = lazy_array_at(&s->phases, phase);
	assert(ps && ps->reserved);
	if (ps->last && ps->version == s->version &&
	    p->pair_first[phase] == p->pair_first[phase + 1])
		ps->last = k + 1;
	else
		run_instance_slow(s, k, phase, ps, launch, ordinal);
}

/* Allocates everything an instance of phase writes (its state, its
 * watched keys' states, the map's slots at its planes' ends), once per
 * schedule: after it, run_instance cannot fail.  -1 when memory runs
 * out; what was allocated reads as before (zero). */
static int reserve_phase(struct ac_schedule *s, uint32_t phase)
{
	const struct ac_program *p = s->p;
	struct phase_state *ps = lazy_array_at(&s->phases, phase);
	if (!ps)
		return -1;
	if (ps->reserved)
		return 0;
	for (uint32_t f = p->followed_first[phase];
	     f < p->followed_first[phase + 1]; f++) {
		const struct plane_span *sp = &p->spans[p->followed[f]];
		if ((sp->key < p->n_watched && !lazy_array_at(&s->keys, sp->key)) ||
		    aci_owner_map_reserve(&s->map, sp->lo, sp->hi) != 0)
			return -1;
	}
	for (uint32_t x = p->pair_first[phase]; x < p->pair_first[phase + 1]; x++)
		if (!lazy_array_at(&s->firsts, x))
			return -1;
	ps->reserved = 1;
	s->phases_reserved++;
	return 0;
}

/* reserve_phase for every phase the references run: O(runs they cover)
 * until every phase is reserved (stopping there), O(1) after; plus, once
 * per schedule, O(planes) of each new phase.  A batch whose memory is not
 * there fails before (D) changes anything. */
static int reserve_references(struct ac_schedule *s, const struct ac_ref *refs,
			      size_t count)
{
	const struct ac_program *p = s->p;
	for (size_t i = 0; i < count; i++) {
		uint64_t end = refs[i].first + refs[i].count;
		for (uint32_t r = p->run_of[refs[i].first];
		     r < p->n_runs && p->runs[r].first < end; r++) {
			if (s->phases_reserved == p->m->n_phases)
				return 0;   /* every phase already is */
			if (reserve_phase(s, p->runs[r].phase) != 0)
				return -1;
		}
	}
	return 0;
}

/* The next executed launch is of this phase: a new instance unless the
 * open one has the same phase. */
static void enter_phase(struct ac_schedule *s, uint32_t phase, uint64_t launch,
			uint64_t ordinal)
{
	if (phase == s->cur_phase)
		return;
	s->cur_phase = phase;
	run_instance(s, s->next_instance++, phase, launch, ordinal);
}

static void run_iteration(struct ac_schedule *s, const struct body *b,
			  uint64_t ordinal)
{
	const struct run *runs = s->p->runs;
	for (uint32_t r = b->run_first; r < b->run_first + b->run_count &&
	     !s->failed; r++)
		enter_phase(s, runs[r].phase, runs[r].first, ordinal);
}

static void run_body(struct ac_schedule *s, const struct body *b)
{
	run_iteration(s, b, 0);
	if (b->iterations < 2 || s->failed)
		return;
	/* steady <= runs < 2^32 and iterations < 2^32; the instances, at
	 * most the executed launches, stay below 2^62 */
	assert(b->steady <= b->run_count && b->iterations <= UINT32_MAX);
	uint64_t jump = (b->iterations - 2) * b->steady;
	assert(jump < ((uint64_t)1 << 62) - s->next_instance);
	s->next_instance += jump;
	s->remap_from = s->next_instance;
	s->remap_by = jump;
	run_iteration(s, b, 1);   /* stands for iterations 1 .. N-1 */
	s->remap_from = UINT64_MAX;
	s->remap_by = 0;
}

/* (D) over one (valid) reference: O(runs it covers). */
static void run_reference(struct ac_schedule *s, const struct ac_ref *ref)
{
	const struct ac_program *p = s->p;
	uint64_t end = ref->first + ref->count;
	for (uint32_t r = p->run_of[ref->first]; r < p->n_runs &&
	     p->runs[r].first < end && !s->failed;) {
		const struct run *run = &p->runs[r];
		if (run->body != UINT32_MAX) {
			/* a valid reference cuts no body */
			const struct body *b = &p->bodies[run->body];
			assert(b->first >= ref->first && b->first + b->count <= end);
			run_body(s, b);
			r = b->run_first + b->run_count;
		} else {
			uint64_t at = run->first > ref->first ? run->first
							      : ref->first;
			enter_phase(s, run->phase, at, AC_NONE);
			r++;
		}
	}
}

/* Runs [r0, r1) and [q0, q1) hold no repeat body and have the same
 * phases, run by run.  O(runs), stopping at the first block of 16 that
 * differs: each run's (phase, body) is read as one 64-bit word. */
static int same_runs(const struct ac_program *p, uint32_t r0, uint32_t r1,
		     uint32_t q0, uint32_t q1)
{
	_Static_assert(offsetof(struct run, body) ==
		       offsetof(struct run, phase) + sizeof(uint32_t),
		       "phase and body are one 64-bit word");
	if (r1 - r0 != q1 - q0)
		return 0;
	const struct run *a = p->runs + r0, *b = p->runs + q0;
	uint32_t n = r1 - r0;
	uint64_t differ = 0, bodies = ~(uint64_t)0;
	for (uint32_t i = 0; i < n && !differ; i += 16) {
		uint32_t end = n - i < 16 ? n - i : 16;
		for (uint32_t j = 0; j < end; j++) {
			uint64_t x, y;
			memcpy(&x, &a[i + j].phase, sizeof(x));
			memcpy(&y, &b[i + j].phase, sizeof(y));
			differ |= x ^ y;
			bodies &= x;         /* equal to y's unless differ */
		}
	}
	/* every run's body is UINT32_MAX (none) in both */
	struct run none = { 0, 0, UINT32_MAX };
	uint64_t mask;
	memcpy(&mask, &none.phase, sizeof(mask));
	return !differ && (bodies & mask) == mask;
}

/* x lies in [from, from + n): it moves on by `by`. */
static void shift_copy(uint64_t *x, uint64_t from, uint64_t n, uint64_t by)
{
	if (*x >= from && *x - from < n)
		*x += by;
}

/*
 * A reference over runs [r0, r1) that is the third (or later) of
 * consecutive references whose runs have the same phases (same_runs:
 * s->prev.copies >= 2) is replayed instead of walked: its instances are
 * counted, and the state is left as the previous reference left it, its
 * instance numbers `lag` behind (settle_replays moves them on before the
 * next walk).  O(1) beyond same_runs' O(runs).
 *
 * Why its outcome is known (spec 2 (D), nothing of the implementation):
 * the executed instances over the last three references have period L
 * (the instances the previous one started) in their phases, and each
 * instance k of this one has the instances k - 2L .. k - 1 in those
 * references.  A carried plane c of instance k: if some phase of the
 * period declares c's key, the latest declaration j lies in k - L .. k - 1
 * and the instances between j and k are those between j - L and k - L,
 * shifted; if none does, j lies before k - 2L and the planes declared in
 * (j, k) are those declared in (j, k - L), since the phases of k - L .. k - 1
 * are those of k - 2L .. k - L - 1.  Either way instance k breaks (D) iff
 * instance k - L did, and that one passed (the walk goes on).  So no
 * instance here fails, and the walk would report nothing.
 *
 * Why the state is the previous reference's, moved on (settle_replays):
 * each phase it runs has its last instance in the previous reference, L
 * earlier; the owner map's content after a period of declarations is
 * what it was after the period before (every byte a period declares, it
 * declares again; the others keep their owners); a watched key whose
 * first lost byte since its latest declaration lies in the previous
 * reference was declared in the period (else it had lost that byte one
 * period earlier), by a followed plane of a phase run there; the firsts
 * of a pair (q, d) lie in the previous reference only for a q run there.
 * Versions stay: a phase's version equals the schedule's iff nothing that
 * may have changed the map or broken a light key came after its last
 * instance, and what comes after it in this reference is what came after
 * it in the previous one.
 */
static void replay_reference(struct ac_schedule *s)
{
	uint64_t n = s->prev.inst_count;
	assert(s->prev.copies >= 2 && s->next_instance == s->prev.inst_first + n);
	if (s->lag == 0)
		s->lag_from = s->prev.inst_first;
	s->lag += n;
	s->next_instance += n;
	s->replayed += n;
}

/*
 * The state's instance numbers in [lag_from, lag_from + L) (the walked
 * copy of the replayed references: L instances, the phases of runs
 * s->prev) move on by s->lag, to those of the last copy replayed: the
 * phases' last instances, their pairs' firsts and the first lost byte of
 * the watched keys their followed planes declare.  Each number moves once
 * (only those in the walked copy do, and none lands there).  O(runs +
 * the pairs and followed planes of the phases run), once per stretch of
 * replayed references, before the next walk; the owner map is untouched.
 */
static void settle_replays(struct ac_schedule *s)
{
	const struct ac_program *p = s->p;
	uint64_t from = s->lag_from, n = s->prev.inst_count, by = s->lag;
	if (by == 0)
		return;
	for (uint32_t r = s->prev.run_first; r < s->prev.run_end; r++) {
		uint32_t phase = p->runs[r].phase;
		struct phase_state *ps = lazy_array_at(&s->phases, phase);
		assert(ps && ps->reserved && ps->last > 0);
		if (ps->last - 1 - from >= n)   /* moved already */
			continue;
		ps->last += by;
		for (uint32_t x = p->pair_first[phase];
		     x < p->pair_first[phase + 1]; x++) {
			uint64_t *f = lazy_array_at(&s->firsts, x);
			assert(f);
			if (*f > 0) {                /* + 1, as phase_state.last */
				uint64_t v = *f - 1;
				shift_copy(&v, from, n, by);
				*f = v + 1;
			}
		}
		for (uint32_t f = p->followed_first[phase];
		     f < p->followed_first[phase + 1]; f++) {
			uint32_t key = p->spans[p->followed[f]].key;
			if (key >= p->n_watched)
				continue;
			struct key_state *ks = lazy_array_at(&s->keys, key);
			assert(ks);
			if (!ks->intact)
				shift_copy(&ks->broken_instance, from, n, by);
		}
	}
	s->lag = 0;
}

/* (D) over one (valid) reference: replayed when it is a third copy
 * (replay_reference), else walked (run_reference) after settling the
 * replays before it; either way it becomes the previous reference.
 * O(runs it covers) on top of the walk. */
static void next_reference(struct ac_schedule *s, const struct ac_ref *ref)
{
	const struct ac_program *p = s->p;
	uint32_t r0 = p->run_of[ref->first];
	uint32_t r1 = p->run_of[ref->first + ref->count - 1] + 1;
	int same = s->prev.copies > 0 &&
		   same_runs(p, r0, r1, s->prev.run_first, s->prev.run_end);
	uint64_t start = s->next_instance;
	if (same && s->prev.copies >= 2 && s->replay) {
		replay_reference(s);
	} else {
		settle_replays(s);
		run_reference(s, ref);
	}
	s->prev.run_first = r0;
	s->prev.run_end = r1;
	s->prev.inst_first = start;
	s->prev.inst_count = s->next_instance - start;
	s->prev.copies = same ? s->prev.copies + 1 : 1;
}

void aci_schedule_set_replay(ac_schedule *s, int on)
{
	s->replay = on;
}

uint64_t aci_schedule_replayed(const ac_schedule *s)
{
	return s->replayed;
}

int ac_schedule_append(ac_schedule *s, const struct ac_ref *refs, size_t count,
		       struct ac_error *err)
{
	assert(s);
	if (aci_check_array(refs, count, "refs", err) != 0)
		return -1;
	uint64_t executed = s->executed;
	for (size_t i = 0; i < count; i++)
		if (ac_program_check_ref(s->p, &refs[i], s->n_refs + i,
					 &executed, err) != 0)
			return -1;
	int d = s->p->verdict == 0 && !s->failed;
	if (d && reserve_references(s, refs, count) != 0)
		return aci_fail(err, "", "out of memory");
	for (size_t i = 0; i < count; i++) {
		aci_digest_refs(s->digest, &refs[i], 1);
		if (d && !s->failed)
			next_reference(s, &refs[i]);
	}
	s->n_refs += count;
	s->executed = executed;
	return 0;
}

size_t aci_schedule_state_bytes(const ac_schedule *s)
{
	return sizeof(*s) + aci_lazy_array_bytes(&s->keys) +
	       aci_lazy_array_bytes(&s->phases) + aci_lazy_array_bytes(&s->firsts) +
	       aci_owner_map_bytes(&s->map);
}

uint64_t ac_schedule_verdict(const ac_schedule *s, struct ac_diag *diag)
{
	const struct ac_diag *d = s->p->verdict ? &s->p->diag : &s->diag;
	if (diag)
		*diag = *d;
	return d->verdict;
}

uint64_t ac_schedule_length(const ac_schedule *s)
{
	return s->n_refs;
}

uint64_t ac_schedule_executed(const ac_schedule *s)
{
	return s->executed;
}

void ac_schedule_digest(const ac_schedule *s, struct ac_digest *out)
{
	XXH128_hash_t p = aci_program_digest(s->p);
	XXH128_hash_t r = XXH3_128bits_digest(s->digest);
	struct ac_digest prog = { p.high64, p.low64 }, refs = { r.high64, r.low64 };
	ac_digest_combine(&prog, &refs, out);
}

int ac_certify(const struct ac_model *m, uint64_t *verdict,
	       struct ac_diag *diag, struct ac_error *err)
{
	return ac_certify_opts(m, NULL, verdict, diag, err);
}

int ac_certify_opts(const struct ac_model *m, const struct ac_options *opt,
		    uint64_t *verdict, struct ac_diag *diag,
		    struct ac_error *err)
{
	ac_program *p = ac_program_new_opts(m, opt, err);
	if (!p)
		return -1;
	ac_schedule *s = ac_schedule_new(p);
	int rc = -1;
	if (!s)
		aci_fail(err, "", "out of memory");
	else if (ac_schedule_append(s, m->refs, m->n_refs, err) == 0)
		rc = 0;
	if (rc == 0)
		*verdict = ac_schedule_verdict(s, diag);
	ac_schedule_free(s);
	ac_program_free(p);
	return rc;
}
