/* SPDX-License-Identifier: MIT */
/*
 * The naive checker (see naive.h).  Obviously correct over fast: every
 * rule is the spec's sentence turned into loops over all pairs, all
 * ordinals and all executed launches.  Wide arithmetic (__int128) stands in
 * for the spec's "exact integer arithmetic" so that nothing can wrap.
 */
#include <stdlib.h>
#include <string.h>

#include "naive.h"

typedef __int128 wide;
typedef unsigned __int128 uwide;

#define TWO64 ((wide)1 << 64)
#define TWO62 ((uwide)1 << 62)

static int same_bytes(struct ac_bytes a, struct ac_bytes b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
}

/* Shares at least one byte: both non-empty and each starts before the
 * other ends. */
static int intersects(uint64_t a_off, uint64_t a_size, uint64_t b_off,
		      uint64_t b_size)
{
	if (a_size == 0 || b_size == 0)
		return 0;
	return (uwide)a_off < (uwide)b_off + b_size &&
	       (uwide)b_off < (uwide)a_off + a_size;
}

static const struct ac_tensor *plane(const struct ac_model *m, uint64_t phase,
				     uint64_t i)
{
	return &m->planes[m->phases[phase].plane_first + i];
}

/* ---- spec 1: well-formedness ----------------------------------------- */

/* The flattened tables point inside their arrays (a model-level sanity
 * check: the spec's objects are not even defined otherwise). */
static int tables_consistent(const struct ac_model *m)
{
	for (uint64_t p = 0; p < m->n_phases; p++)
		if ((uwide)m->phases[p].plane_first + m->phases[p].plane_count >
		    m->n_planes)
			return 0;
	for (uint64_t l = 0; l < m->n_launches; l++)
		if ((uwide)m->launches[l].word_first + m->launches[l].word_count >
		    m->n_words)
			return 0;
	for (uint64_t r = 0; r < m->n_repeats; r++) {
		const struct ac_repeat *rp = &m->repeats[r];
		if ((uwide)rp->delta_first + rp->delta_count > m->n_deltas)
			return 0;
		if ((uwide)rp->slot_first + rp->slot_count > m->n_slots)
			return 0;
		if (rp->frame_count &&
		    (uwide)rp->frame_value_first +
				    (uwide)rp->frame_count * rp->slot_count >
			    m->n_frame_values)
			return 0;
	}
	return 1;
}

static int plan_well_formed(const struct ac_model *m)
{
	/* alignment: a power of two, 1 .. 2^32 */
	uint64_t a = m->alignment;
	if (a == 0 || (a & (a - 1)) != 0 || a > ((uint64_t)1 << 32))
		return 0;
	for (uint64_t w = 0; w < m->n_windows; w++)
		if (m->windows[w].size < 1 ||
		    (uwide)m->windows[w].base + m->windows[w].size > (uwide)TWO64)
			return 0;
	for (uint64_t g = 0; g < m->n_globals; g++)
		if ((uwide)m->globals[g].offset + m->globals[g].size > (uwide)TWO64)
			return 0;
	for (uint64_t p = 0; p < m->n_phases; p++) {
		for (uint64_t i = 0; i < m->phases[p].plane_count; i++) {
			const struct ac_tensor *t = plane(m, p, i);
			if ((uwide)t->offset + t->size > (uwide)TWO64)
				return 0;
		}
		for (uint64_t q = 0; q < p; q++)
			if (same_bytes(m->phases[p].identity, m->phases[q].identity))
				return 0;
	}
	return 1;
}

static int in_body(const struct ac_repeat *r, uint64_t l)
{
	return l >= r->first && (uwide)l < (uwide)r->first + r->count;
}

static int pair_of_body(const struct ac_model *m, const struct ac_repeat *r,
			uint64_t l, uint64_t w)
{
	return in_body(r, l) && w < m->launches[l].word_count;
}

static int repeat_well_formed(const struct ac_model *m, uint64_t ri)
{
	const struct ac_repeat *r = &m->repeats[ri];
	if (r->count < 1 || (uwide)r->first + r->count > m->n_launches)
		return 0;
	if (r->iterations < 1 || r->iterations > 0xFFFFFFFFu)
		return 0;
	for (uint64_t q = 0; q < ri; q++) {
		const struct ac_repeat *o = &m->repeats[q];
		if (intersects(r->first, r->count, o->first, o->count))
			return 0;
	}
	for (uint64_t d = 0; d < r->delta_count; d++) {
		const struct ac_delta *dl = &m->deltas[r->delta_first + d];
		if (!pair_of_body(m, r, dl->launch, dl->word))
			return 0;
	}
	/* A table has F >= 1 frames; the model spells "no table" as
	 * frame_count 0, so slots without frames are a table of 0 frames. */
	if (r->slot_count > 0 && r->frame_count == 0)
		return 0;
	for (uint64_t s = 0; s < r->slot_count; s++) {
		const struct ac_slot *sl = &m->slots[r->slot_first + s];
		if (!pair_of_body(m, r, sl->launch, sl->word))
			return 0;
		for (uint64_t s2 = 0; s2 < s; s2++) {
			const struct ac_slot *o = &m->slots[r->slot_first + s2];
			if (o->launch == sl->launch && o->word == sl->word)
				return 0;
		}
	}
	return 1;
}

/* The repeat whose body holds launch l, or -1. */
static int64_t repeat_of(const struct ac_model *m, uint64_t l)
{
	for (uint64_t r = 0; r < m->n_repeats; r++)
		if (in_body(&m->repeats[r], l))
			return (int64_t)r;
	return -1;
}

/* Launches a reference stands for: its count, plus N - 1 more for each
 * launch of a body it contains. */
static uwide ref_executed(const struct ac_model *m, const struct ac_ref *ref)
{
	uwide total = ref->count;
	for (uint64_t r = 0; r < m->n_repeats; r++) {
		const struct ac_repeat *rp = &m->repeats[r];
		if (rp->first >= ref->first &&
		    (uwide)rp->first + rp->count <= (uwide)ref->first + ref->count)
			total += (uwide)rp->count * (rp->iterations - 1);
	}
	return total;
}

/* Spec 1.3; stores the executed sequence's length. */
static int schedule_well_formed(const struct ac_model *m, uwide *executed)
{
	uwide total = 0;
	for (uint64_t i = 0; i < m->n_refs; i++) {
		const struct ac_ref *ref = &m->refs[i];
		if (ref->count < 1 ||
		    (uwide)ref->first + ref->count > m->n_launches)
			return 0;
		for (uint64_t r = 0; r < m->n_repeats; r++) {
			const struct ac_repeat *rp = &m->repeats[r];
			int contains = rp->first >= ref->first &&
				       (uwide)rp->first + rp->count <=
					       (uwide)ref->first + ref->count;
			if (!contains && intersects(ref->first, ref->count,
						    rp->first, rp->count))
				return 0;
		}
		total += ref_executed(m, ref);
		if (total >= TWO62)
			return 0;
	}
	*executed = total;
	return 1;
}

static int well_formed(const struct ac_model *m, uwide *executed)
{
	if (!tables_consistent(m) || !plan_well_formed(m))
		return 0;
	for (uint64_t r = 0; r < m->n_repeats; r++)
		if (!repeat_well_formed(m, r))
			return 0;
	return schedule_well_formed(m, executed);
}

/* ---- (A) and (B) ------------------------------------------------------- */

static int tensor_ok(const struct ac_tensor *t, uint64_t alignment)
{
	return t->offset % alignment == 0 && t->size >= 1;
}

static int holds_a(const struct ac_model *m)
{
	for (uint64_t g = 0; g < m->n_globals; g++) {
		if (!tensor_ok(&m->globals[g], m->alignment))
			return 0;
		for (uint64_t h = 0; h < g; h++)
			if (intersects(m->globals[g].offset, m->globals[g].size,
				       m->globals[h].offset, m->globals[h].size))
				return 0;
	}
	return 1;
}

static int holds_b(const struct ac_model *m)
{
	for (uint64_t p = 0; p < m->n_phases; p++) {
		for (uint64_t i = 0; i < m->phases[p].plane_count; i++) {
			const struct ac_tensor *t = plane(m, p, i);
			if (!tensor_ok(t, m->alignment))
				return 0;
			for (uint64_t j = 0; j < i; j++) {
				const struct ac_tensor *u = plane(m, p, j);
				if (intersects(t->offset, t->size, u->offset, u->size))
					return 0;
			}
			for (uint64_t g = 0; g < m->n_globals; g++)
				if (intersects(t->offset, t->size,
					       m->globals[g].offset,
					       m->globals[g].size))
					return 0;
		}
	}
	return 1;
}

/* ---- spec 1.2: the phase of a launch ------------------------------------ */

/* A varint of at most 10 bytes, not past the end, below 2^64. */
static int read_varint(const uint8_t *p, uint64_t len, uint64_t *pos,
		       uint64_t *out)
{
	uwide value = 0;
	for (int i = 0; i < 10; i++) {
		if (*pos >= len)
			return -1;
		uint8_t b = p[(*pos)++];
		value |= (uwide)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			if (value >= (uwide)TWO64)
				return -1;
			*out = (uint64_t)value;
			return 0;
		}
	}
	return -1;
}

/* Skips n bytes; -1 when they run past the end. */
static int skip(uint64_t len, uint64_t *pos, uint64_t n)
{
	if ((uwide)*pos + n > len)
		return -1;
	*pos += n;
	return 0;
}

int64_t naive_phase_of(const struct ac_model *m, uint64_t l)
{
	const uint8_t *p = m->launches[l].identity.data;
	uint64_t len = m->launches[l].identity.len;
	uint64_t pos = 0;
	int seen51 = 0, bad51 = 0;
	struct ac_bytes payload = { NULL, 0 };

	while (pos < len) {
		uint64_t tag, v;
		if (read_varint(p, len, &pos, &tag) != 0)
			return -1;
		uint64_t field = tag >> 3, type = tag & 7;
		if (field < 1 || field > (((uint64_t)1 << 29) - 1))
			return -1;
		if (type == 0) {
			if (read_varint(p, len, &pos, &v) != 0)
				return -1;
		} else if (type == 1) {
			if (skip(len, &pos, 8) != 0)
				return -1;
		} else if (type == 5) {
			if (skip(len, &pos, 4) != 0)
				return -1;
		} else if (type == 2) {
			if (read_varint(p, len, &pos, &v) != 0)
				return -1;
			uint64_t start = pos;
			if (skip(len, &pos, v) != 0)
				return -1;
			if (field == 51) {
				payload.data = p + start;
				payload.len = (uint32_t)v;
			}
		} else {
			return -1;      /* wire types 3, 4, 6, 7 */
		}
		if (field == 51) {
			seen51 = 1;
			if (type != 2)
				bad51 = 1;
		}
	}
	if (!seen51 || bad51)
		return -1;
	for (uint64_t ph = 0; ph < m->n_phases; ph++)
		if (same_bytes(payload, m->phases[ph].identity))
			return (int64_t)ph;
	return -1;
}

/* ---- (C) ----------------------------------------------------------------- */

/* An interval [lo, hi] of exact integers. */
struct interval {
	wide lo, hi;
};

static int inside(struct interval iv, uint64_t off, uint64_t size)
{
	return (wide)off <= iv.lo && iv.hi < (wide)off + (wide)size;
}

static int fine(const struct ac_model *m, uint64_t phase, struct interval iv)
{
	if (iv.lo >= 0 && iv.hi < TWO64) {
		int meets = 0;
		for (uint64_t w = 0; w < m->n_windows; w++) {
			const struct ac_window *win = &m->windows[w];
			if (iv.lo < (wide)win->base + (wide)win->size &&
			    (wide)win->base <= iv.hi)
				meets = 1;
		}
		if (!meets)
			return 1;
	}
	for (uint64_t g = 0; g < m->n_globals; g++)
		if (inside(iv, m->globals[g].offset, m->globals[g].size))
			return 1;
	for (uint64_t i = 0; i < m->phases[phase].plane_count; i++)
		if (inside(iv, plane(m, phase, i)->offset, plane(m, phase, i)->size))
			return 1;
	return 0;
}

/* V(t) = B(t) + t * D for a body word; slot < 0 when no slot names it. */
static wide value_at(const struct ac_model *m, const struct ac_repeat *r,
		     int64_t slot, uint64_t x, wide d, uint64_t t)
{
	wide b = x;
	if (slot >= 0)
		b = m->frame_values[r->frame_value_first +
				    (t % r->frame_count) * r->slot_count +
				    (uint64_t)slot];
	return b + (wide)t * d;
}

/* What repeat r says about word (l, w): how many delta entries name it,
 * their sum D, and the slot naming it (-1: none). */
struct motion {
	uint64_t n_deltas;
	wide d;
	int64_t slot;
};

static struct motion motion_of(const struct ac_model *m,
			       const struct ac_repeat *r, uint64_t l, uint64_t w)
{
	struct motion mv = { 0, 0, -1 };
	for (uint64_t i = 0; i < r->delta_count; i++) {
		const struct ac_delta *dl = &m->deltas[r->delta_first + i];
		if (dl->launch == l && dl->word == w) {
			mv.n_deltas++;
			mv.d += dl->delta;
		}
	}
	for (uint64_t s = 0; s < r->slot_count; s++) {
		const struct ac_slot *sl = &m->slots[r->slot_first + s];
		if (sl->launch == l && sl->word == w)
			mv.slot = (int64_t)s;
	}
	return mv;
}

/* The N point intervals [V(t), V(t)]: 1 when all are fine. */
static int points_fine(const struct ac_model *m, const struct ac_repeat *r,
		       struct motion mv, uint64_t x, uint64_t phase)
{
	for (uint64_t t = 0; t < r->iterations; t++) {
		wide v = value_at(m, r, mv.slot, x, mv.d, t);
		struct interval iv = { v, v };
		if (!fine(m, phase, iv))
			return 0;
	}
	return 1;
}

/* The hull [min V(t), max V(t)], every ordinal enumerated. */
static struct interval hull_of(const struct ac_model *m,
			       const struct ac_repeat *r, struct motion mv,
			       uint64_t x)
{
	struct interval hull = { 0, 0 };
	for (uint64_t t = 0; t < r->iterations; t++) {
		wide v = value_at(m, r, mv.slot, x, mv.d, t);
		if (t == 0 || v < hull.lo)
			hull.lo = v;
		if (t == 0 || v > hull.hi)
			hull.hi = v;
	}
	return hull;
}

/* 1 when every interval of word w of launch l is fine, 0 when one is not,
 * NAIVE_TOO_BIG when there are too many ordinals to enumerate. */
static int word_fine(const struct ac_model *m, uint64_t l, uint64_t w,
		     uint64_t phase)
{
	uint64_t x = m->words[m->launches[l].word_first + w];
	struct interval point = { x, x };
	int64_t ri = repeat_of(m, l);
	if (ri < 0)
		return fine(m, phase, point);
	const struct ac_repeat *r = &m->repeats[ri];
	struct motion mv = motion_of(m, r, l, w);
	if (mv.n_deltas == 0 && mv.slot < 0)
		return fine(m, phase, point);
	if (r->iterations > NAIVE_MAX_ORDINALS)
		return NAIVE_TOO_BIG;
	if (r->iterations <= 128 && mv.n_deltas == 1 && mv.slot < 0)
		return points_fine(m, r, mv, x, phase);
	return fine(m, phase, hull_of(m, r, mv, x));
}

/* The smallest launch breaking (C), n_launches when none does, or
 * NAIVE_TOO_BIG (as a negative value). */
static int64_t first_c_break(const struct ac_model *m)
{
	for (uint64_t l = 0; l < m->n_launches; l++) {
		int64_t phase = naive_phase_of(m, l);
		if (phase < 0)
			return (int64_t)l;
		for (uint64_t w = 0; w < m->launches[l].word_count; w++) {
			int ok = word_fine(m, l, w, (uint64_t)phase);
			if (ok == NAIVE_TOO_BIG)
				return NAIVE_TOO_BIG;
			if (!ok)
				return (int64_t)l;
		}
	}
	return (int64_t)m->n_launches;
}

/* ---- (D) ----------------------------------------------------------------- */

/* Appends launch l to the unrolled sequence; 0 once it is full. */
static int emit(uint64_t *seq, uint64_t *k, uint64_t limit, uint64_t l)
{
	if (*k == limit)
		return 0;
	seq[(*k)++] = l;
	return 1;
}

/* The executed sequence as launch indices, its first `limit` launches
 * when it is longer (caller frees).  *len is how many were stored. */
static uint64_t *unroll(const struct ac_model *m, uint64_t limit, uint64_t *len)
{
	uint64_t *seq = malloc((limit ? limit : 1) * sizeof(*seq));
	if (!seq)
		abort();
	uint64_t k = 0;
	for (uint64_t i = 0; i < m->n_refs; i++) {
		const struct ac_ref *ref = &m->refs[i];
		for (uint64_t l = ref->first; l < ref->first + ref->count; l++) {
			int64_t ri = repeat_of(m, l);
			if (ri < 0) {
				if (!emit(seq, &k, limit, l))
					goto full;
				continue;
			}
			/* A well-formed reference meets a body at its first
			 * launch: run every iteration of the whole body. */
			const struct ac_repeat *r = &m->repeats[ri];
			for (uint64_t t = 0; t < r->iterations; t++)
				for (uint64_t b = r->first; b < r->first + r->count; b++)
					if (!emit(seq, &k, limit, b))
						goto full;
			l = r->first + r->count - 1;
		}
	}
full:
	*len = k;
	return seq;
}

static int same_key(const struct ac_tensor *a, const struct ac_tensor *b)
{
	return same_bytes(a->name, b->name) && a->offset == b->offset &&
	       a->size == b->size;
}

/* Instance j's phase declares a plane with c's key. */
static int declares_key(const struct ac_model *m, uint64_t phase,
			const struct ac_tensor *c)
{
	for (uint64_t i = 0; i < m->phases[phase].plane_count; i++)
		if (same_key(plane(m, phase, i), c))
			return 1;
	return 0;
}

/* Instance j's phase declares a plane of a different key over c's bytes. */
static int overwrites(const struct ac_model *m, uint64_t phase,
		      const struct ac_tensor *c)
{
	for (uint64_t i = 0; i < m->phases[phase].plane_count; i++) {
		const struct ac_tensor *q = plane(m, phase, i);
		if (!same_key(q, c) &&
		    intersects(q->offset, q->size, c->offset, c->size))
			return 1;
	}
	return 0;
}

static int instance_breaks(const struct ac_model *m, const uint64_t *inst,
			   uint64_t k)
{
	uint64_t phase = inst[k];
	for (uint64_t i = 0; i < m->phases[phase].plane_count; i++) {
		const struct ac_tensor *c = plane(m, phase, i);
		if (!c->carried)
			continue;
		uint64_t j = k;
		while (j > 0 && !declares_key(m, inst[j - 1], c))
			j--;
		if (j == 0)
			return 1;               /* never declared before */
		j--;                            /* the latest declarer */
		for (uint64_t between = j + 1; between < k; between++)
			if (overwrites(m, inst[between], c))
				return 1;
	}
	return 0;
}

/*
 * The smallest instance breaking (D), or -1 when none does.  Only the
 * first NAIVE_MAX_EXECUTED launches are unrolled: whether an instance
 * breaks depends only on the instances up to its start, so a break found
 * there is the answer even when the sequence goes on; *truncated tells
 * the caller that "none" covers only that prefix.
 */
static int64_t first_d_break(const struct ac_model *m, uint64_t executed,
			     int *truncated, int64_t *phase)
{
	uint64_t len;
	/* No larger than the sequence: a short one is the common case. */
	uint64_t *seq = unroll(m, executed < NAIVE_MAX_EXECUTED ? executed
							     : NAIVE_MAX_EXECUTED, &len);
	*truncated = len < executed;
	/* The phase of each launch as written, parsed once. */
	uint64_t *phase_of = malloc((m->n_launches ? m->n_launches : 1) *
				    sizeof(*phase_of));
	/* Instances: maximal runs of one phase; inst[k] is k's phase. */
	uint64_t *inst = malloc((len ? len : 1) * sizeof(*inst));
	if (!phase_of || !inst)
		abort();
	for (uint64_t l = 0; l < m->n_launches; l++)
		phase_of[l] = (uint64_t)naive_phase_of(m, l);
	uint64_t n_inst = 0;
	for (uint64_t i = 0; i < len; i++) {
		uint64_t phase = phase_of[seq[i]];
		if (n_inst == 0 || inst[n_inst - 1] != phase)
			inst[n_inst++] = phase;
	}
	free(phase_of);
	int64_t found = -1;
	for (uint64_t k = 0; k < n_inst && found < 0; k++)
		if (instance_breaks(m, inst, k))
			found = (int64_t)k;
	if (found >= 0)
		*phase = (int64_t)inst[found];
	free(inst);
	free(seq);
	return found;
}

int naive_executed(const struct ac_model *m, uint64_t *executed)
{
	uwide n = 0;
	if (!well_formed(m, &n))
		return NAIVE_MALFORMED;
	*executed = (uint64_t)n;
	return 0;
}

/* ---- the verdict ---------------------------------------------------------- */

int naive_word_fine(const struct ac_model *m, uint64_t l, uint64_t w)
{
	int64_t phase = naive_phase_of(m, l);
	if (phase < 0 || w >= m->launches[l].word_count)
		return 0;
	return word_fine(m, l, w, (uint64_t)phase);
}

int naive_certify_detail(const struct ac_model *m, uint64_t *verdict,
			 struct naive_detail *detail)
{
	struct naive_detail d = { 0, -1 };
	uwide executed = 0;
	if (!well_formed(m, &executed))
		return NAIVE_MALFORMED;
	if (!holds_a(m) || !holds_b(m)) {
		d.condition = holds_a(m) ? 'B' : 'A';
		*verdict = 1;
		goto done;
	}
	int64_t c = first_c_break(m);
	if (c == NAIVE_TOO_BIG)
		return NAIVE_TOO_BIG;
	if (c < (int64_t)m->n_launches) {
		d.condition = 'C';
		d.phase = naive_phase_of(m, (uint64_t)c);
		*verdict = 2 + (uint64_t)c;
		goto done;
	}
	int truncated;
	int64_t k = first_d_break(m, (uint64_t)executed, &truncated, &d.phase);
	if (k < 0 && truncated)
		return NAIVE_TOO_BIG;
	d.condition = k < 0 ? 0 : 'D';
	*verdict = k < 0 ? 0 : 2 + (uint64_t)m->n_launches + (uint64_t)k;
done:
	if (detail)
		*detail = d;
	return 0;
}

int naive_certify(const struct ac_model *m, uint64_t *verdict)
{
	return naive_certify_detail(m, verdict, NULL);
}
