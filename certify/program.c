/* SPDX-License-Identifier: MIT */
/*
 * ac_program: the checks that depend on the plan and launch table alone
 * (well-formedness, (A), (B), (C)), and the indexes that let schedules
 * advance (D) in time proportional to the phase runs they add.
 */
#define XXH_STATIC_LINKING_ONLY   /* XXH3_state_t on the stack */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arena.h"
#include "hash_index.h"
#include "image.h"
#include "parallel.h"
#include "program_impl.h"

static int body_order(const void *a, const void *b)
{
	const struct body *x = a, *y = b;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* Bodies sorted by first launch, and the executed launches they add. */
static int index_bodies(struct ac_program *p)
{
	const struct ac_model *m = p->m;
	p->bodies = aci_arena_calloc(&p->arena, m->n_repeats + 1,
				     sizeof(*p->bodies));
	p->extra_prefix = aci_arena_calloc(&p->arena, m->n_repeats + 1,
					   sizeof(*p->extra_prefix));
	if (!p->bodies || !p->extra_prefix)
		return -1;
	for (uint32_t r = 0; r < m->n_repeats; r++)
		p->bodies[r] = (struct body){
			.first = (uint32_t)m->repeats[r].first,
			.count = (uint32_t)m->repeats[r].count,
			.iterations = m->repeats[r].iterations,
			.repeat = r,
		};
	aci_sort(p->bodies, m->n_repeats, sizeof(*p->bodies), body_order);
	/* count < 2^32 and iterations < 2^32; the sum over disjoint bodies
	 * is below n * 2^32 < 2^64. */
	for (uint32_t b = 0; b < m->n_repeats; b++) {
		assert(p->bodies[b].iterations >= 1 &&
		       p->bodies[b].iterations <= UINT32_MAX);
		p->extra_prefix[b + 1] = p->extra_prefix[b] +
			(uint64_t)p->bodies[b].count * (p->bodies[b].iterations - 1);
		assert(p->extra_prefix[b + 1] >= p->extra_prefix[b]);
	}
	return 0;
}

/* Position of boundary x among the sorted unique boundaries. */
static uint64_t position_of(const uint64_t *bound, uint64_t n, uint64_t x)
{
	uint64_t at;
	AC_PARTITION(uint64_t, at, n, i, bound[i] < x);
	return at;
}

/* Plane keys: (name, offset, size).  Each key is represented by the first
 * plane that has it. */
struct key_table {
	const struct ac_model *m;
	uint32_t *first_plane;     /* per key */
};

static int same_key(const void *ctx, uint32_t key, const void *probe)
{
	const struct key_table *kt = ctx;
	const struct ac_tensor *a = &kt->m->planes[kt->first_plane[key]];
	const struct ac_tensor *b = probe;
	return a->offset == b->offset && a->size == b->size &&
	       a->name.len == b->name.len &&
	       (a->name.len == 0 ||
		memcmp(a->name.data, b->name.data, a->name.len) == 0);
}

/* One XXH3 of the name, seeded by the offset and the size: a slot only,
 * since same_key compares every candidate. */
static uint64_t key_hash(const struct ac_tensor *t)
{
	uint64_t seed = (t->offset * 0xC2B2AE3D27D4EB4Full) ^
			(t->size * 0x9E3779B97F4A7C15ull);
	return XXH3_64bits_withSeed(t->name.data, t->name.len,
				    seed ^ (seed >> 31));
}

/* Numbers the keys in order of first appearance; *first_plane (in
 * scratch): the first plane of each key. */
static int intern_keys(struct ac_program *p, struct aci_arena *scratch,
		       const uint32_t **first_plane)
{
	const struct ac_model *m = p->m;
	struct key_table kt = {
		m, aci_arena_alloc(scratch, m->n_planes + 1, sizeof(uint32_t)) };
	struct hash_index h;
	if (!kt.first_plane || aci_hash_index_init(&h, m->n_planes) != 0)
		return -1;
	uint32_t n = 0;
	for (uint32_t i = 0; i < m->n_planes; i++) {
		const struct ac_tensor *t = &m->planes[i];
		kt.first_plane[n] = i;
		uint32_t key = aci_hash_index_intern(&h, key_hash(t), n, same_key,
						     &kt, t);
		if (key == n)
			n++;
		p->spans[i].key = key;
	}
	p->n_keys = n;
	*first_plane = kt.first_plane;
	aci_hash_index_free(&h);
	return 0;
}

/* Compresses plane ranges to owner-map positions: the sorted, unique
 * starts and ends (an end at 2^64 is position n itself).  Planes of one
 * key have the same range, so each key's first plane (first_plane,
 * intern_keys) gives every boundary, and the sort takes 2 keys' worth
 * instead of 2 planes'. */
static int index_positions(struct ac_program *p, struct aci_arena *scratch,
			   const uint32_t *first_plane)
{
	const struct ac_model *m = p->m;
	uint64_t *bound = aci_arena_alloc(scratch, 2 * (size_t)p->n_keys + 1,
					  sizeof(*bound));
	if (!bound)
		return -1;
	uint64_t n = 0;
	for (uint32_t k = 0; k < p->n_keys; k++) {
		const struct ac_tensor *t = &m->planes[first_plane[k]];
		bound[n++] = t->offset;
		if (t->size <= UINT64_MAX - t->offset)
			bound[n++] = t->offset + t->size;
	}
	if (aci_sort_by_key(bound, n, sizeof(*bound)) != 0)
		return -1;
	uint64_t u = 0;
	for (uint64_t i = 0; i < n; i++)
		if (u == 0 || bound[i] != bound[u - 1])
			bound[u++] = bound[i];
	for (uint32_t i = 0; i < m->n_planes; i++) {
		const struct ac_tensor *t = &m->planes[i];
		uint32_t first = first_plane[p->spans[i].key];
		if (first != i) {        /* first < i: found already */
			p->spans[i].lo = p->spans[first].lo;
			p->spans[i].hi = p->spans[first].hi;
			continue;
		}
		p->spans[i].lo = position_of(bound, u, t->offset);
		p->spans[i].hi = t->size <= UINT64_MAX - t->offset
			? position_of(bound, u, t->offset + t->size) : u;
	}
	p->n_positions = u;
	return 0;
}

/* The phases declaring each watched key, grouped by key (a counting
 * sort): O(P). */
static int index_declaring(struct ac_program *p)
{
	const struct ac_model *m = p->m;
	p->declaring_first = aci_arena_calloc(&p->arena,
					      (size_t)p->n_watched + 2,
					      sizeof(*p->declaring_first));
	p->declaring = aci_arena_alloc(&p->arena, (size_t)m->n_planes + 1,
				       sizeof(*p->declaring));
	if (!p->declaring_first || !p->declaring)
		return -1;
	uint32_t *next = p->declaring_first + 1;  /* counts, then cursors */
	for (uint32_t ph = 0; ph < m->n_phases; ph++) {
		const struct ac_phase *phase = &m->phases[ph];
		for (uint32_t j = 0; j < phase->plane_count; j++) {
			uint32_t key = p->spans[phase->plane_first + j].key;
			if (key < p->n_watched)
				next[key]++;
		}
	}
	for (uint32_t c = 0, sum = 0; c <= p->n_watched; c++) {
		uint32_t count = next[c];
		next[c] = sum;
		sum += count;
	}
	/* phases in order; a phase holds a key at most once ((B)) */
	for (uint32_t ph = 0; ph < m->n_phases; ph++) {
		const struct ac_phase *phase = &m->phases[ph];
		for (uint32_t j = 0; j < phase->plane_count; j++) {
			uint32_t key = p->spans[phase->plane_first + j].key;
			if (key < p->n_watched)
				p->declaring[next[key]++] = ph;
		}
	}
	/* each cursor ended at the next key's start: shift back one */
	p->declaring_first[0] = 0;
	return 0;
}

/*
 * Which watched keys are light, and the planes intersecting each.
 *
 * The planes intersecting [lo, hi) are those with lo' < hi less those
 * with hi' <= lo (a subset of the first): two prefix counts over the
 * positions give their number for every key, and a key is light when
 * it is at most LIGHT_TOUCHES.  They are the planes starting in
 * [lo, hi) (one stretch of the planes sorted by start) and those
 * straddling lo, which a sweep over the positions holds in a list of
 * the planes covering the current one: at a light key's start that list
 * has at most LIGHT_TOUCHES planes.  O(P + positions + light keys x
 * LIGHT_TOUCHES) time, O(P + positions) scratch; the lists hold at most
 * LIGHT_TOUCHES entries a key.  Keys are watched-numbered (spans[].key
 * already renumbered).
 */
static int index_light(struct ac_program *p, struct aci_arena *scratch)
{
	const struct ac_model *m = p->m;
	uint32_t n_planes = (uint32_t)m->n_planes, w = p->n_watched;
	uint64_t n = p->n_positions;
	struct aci_arena *a = &p->arena;
	p->light = aci_arena_calloc(a, (size_t)w + 1, 1);
	p->touch_first = aci_arena_calloc(a, (size_t)w + 2,
					  sizeof(*p->touch_first));
	/* starts[x]: planes with lo < x; ends[x]: planes with hi < x */
	uint32_t *starts = aci_arena_calloc(scratch, n + 2, sizeof(*starts));
	uint32_t *ends = aci_arena_calloc(scratch, n + 2, sizeof(*ends));
	uint32_t *cursor = aci_arena_alloc(scratch, n + 2, sizeof(*cursor));
	uint32_t *by_lo = aci_arena_alloc(scratch, (size_t)n_planes + 1,
					  sizeof(*by_lo));
	uint32_t *by_hi = aci_arena_alloc(scratch, (size_t)n_planes + 1,
					  sizeof(*by_hi));
	uint32_t *rep = aci_arena_alloc(scratch, (size_t)w + 1, sizeof(*rep));
	uint32_t *phase_of_plane = aci_arena_alloc(scratch,
						   (size_t)n_planes + 1,
						   sizeof(*phase_of_plane));
	/* the planes covering the sweep's position: a list with head
	 * n_planes */
	uint32_t *prev = aci_arena_alloc(scratch, (size_t)n_planes + 1,
					 sizeof(*prev));
	uint32_t *next = aci_arena_alloc(scratch, (size_t)n_planes + 1,
					 sizeof(*next));
	if (!p->light || !p->touch_first || !starts ||
	    !ends || !cursor || !by_lo || !by_hi || !rep || !phase_of_plane ||
	    !prev || !next)
		return -1;
	const struct plane_span *sp = p->spans;
	for (uint32_t c = 0; c < w; c++)
		rep[c] = UINT32_MAX;
	/* A plane no phase lists (a hand-built or image model may have
	 * them) is never declared: it touches nothing, and is left out of
	 * the sweep (NO_PHASE). */
	for (uint32_t i = 0; i < n_planes; i++)
		phase_of_plane[i] = NO_PHASE;
	for (uint32_t ph = 0; ph < m->n_phases; ph++)
		for (uint32_t j = 0; j < m->phases[ph].plane_count; j++)
			phase_of_plane[m->phases[ph].plane_first + j] = ph;
	for (uint32_t i = 0; i < n_planes; i++) {
		if (phase_of_plane[i] == NO_PHASE)
			continue;
		starts[sp[i].lo + 1]++;
		ends[sp[i].hi + 1]++;
		if (sp[i].key < w && rep[sp[i].key] == UINT32_MAX)
			rep[sp[i].key] = i;
	}
	for (uint64_t x = 1; x <= n + 1; x++) {
		starts[x] += starts[x - 1];
		ends[x] += ends[x - 1];
	}
	memcpy(cursor, starts, (n + 1) * sizeof(*cursor));
	for (uint32_t i = 0; i < n_planes; i++)
		if (phase_of_plane[i] != NO_PHASE)
			by_lo[cursor[sp[i].lo]++] = i;
	memcpy(cursor, ends, (n + 2) * sizeof(*cursor));
	for (uint32_t i = 0; i < n_planes; i++)
		if (phase_of_plane[i] != NO_PHASE)
			by_hi[cursor[sp[i].hi]++] = i;
	uint64_t total = 0;
	for (uint32_t c = 0; c < w; c++) {
		if (rep[c] == UINT32_MAX) {       /* no phase lists its planes */
			p->touch_first[c + 1] = (uint32_t)total;
			continue;
		}
		const struct plane_span *r = &sp[rep[c]];
		uint32_t count = starts[r->hi] - ends[r->lo + 1];
		/* pairs (index_pairs) are at most 4 a touch: a x b <= 4 (a + b)
		 * for a + b <= 16 */
		if (count <= LIGHT_TOUCHES && total + count <= UINT32_MAX / 4) {
			p->light[c] = 1;
			total += count;
		}
		p->touch_first[c + 1] = (uint32_t)total;
	}
	p->touch = aci_arena_alloc(a, (size_t)total + 1, sizeof(*p->touch));
	if (!p->touch)
		return -1;
	prev[n_planes] = next[n_planes] = n_planes;
	for (uint64_t x = 0; x < n; x++) {
		for (uint32_t e = ends[x]; e < ends[x + 1]; e++) {  /* hi == x */
			uint32_t i = by_hi[e];
			next[prev[i]] = next[i];
			prev[next[i]] = prev[i];
		}
		for (uint32_t b = starts[x]; b < starts[x + 1]; b++) {
			uint32_t i = by_lo[b], c = sp[i].key;
			if (c >= w || !p->light[c] || rep[c] != i)
				continue;
			uint32_t at = p->touch_first[c];
			for (uint32_t a = next[n_planes]; a != n_planes; a = next[a])
				p->touch[at++] = (struct touch){ a, phase_of_plane[a] };
			for (uint32_t t = starts[x]; t < starts[sp[i].hi]; t++)
				p->touch[at++] = (struct touch){
					by_lo[t], phase_of_plane[by_lo[t]] };
			assert(at == p->touch_first[c + 1]);
		}
		for (uint32_t b = starts[x]; b < starts[x + 1]; b++) {  /* lo == x */
			uint32_t i = by_lo[b];
			prev[i] = prev[n_planes];
			next[i] = n_planes;
			next[prev[n_planes]] = i;
			prev[n_planes] = i;
		}
	}
	return 0;
}

/*
 * The (q, d) pairs of light keys (program_impl.h), grouped by q and
 * distinct: a counting sort of every key's (other key's plane, declaring
 * plane) pairs of its touch list, then one pass dropping repeated d's.
 * A key's declaring phases are gathered once, in list order, so that
 * counting its pairs is O(its touches) and writing them O(its pairs),
 * in the order a loop over (other, declaring) touches would give.
 * O(light keys x LIGHT_TOUCHES^2 / 4) time and memory at most.
 */
static int index_pairs(struct ac_program *p, struct aci_arena *scratch)
{
	const struct ac_model *m = p->m;
	uint32_t n_phases = m->n_phases;
	p->pair_first = aci_arena_calloc(&p->arena, (size_t)n_phases + 2,
					 sizeof(*p->pair_first));
	uint32_t *seen = aci_arena_calloc(scratch, (size_t)n_phases + 1,
					  sizeof(*seen));
	if (!p->pair_first || !seen)
		return -1;
	uint32_t *count = p->pair_first + 1;     /* counts, then cursors */
	for (int fill = 0; fill < 2; fill++) {
		for (uint32_t c = 0; c < p->n_watched; c++) {
			uint32_t from = p->touch_first[c],
				 to = p->touch_first[c + 1];
			uint32_t decl[LIGHT_TOUCHES], n_decl = 0;
			assert(to - from <= LIGHT_TOUCHES);
			for (uint32_t a = from; a < to; a++)
				if (p->spans[p->touch[a].plane].key == c)
					decl[n_decl++] = p->touch[a].phase;
			if (n_decl == 0)
				continue;
			for (uint32_t a = from; a < to; a++) {
				const struct touch *q = &p->touch[a];
				if (p->spans[q->plane].key == c)
					continue;
				if (!fill) {
					count[q->phase] += n_decl;
					continue;
				}
				for (uint32_t d = 0; d < n_decl; d++)
					p->pair_d[count[q->phase]++] = decl[d];
			}
		}
		if (fill)
			break;
		uint32_t sum = 0;
		for (uint32_t q = 0; q <= n_phases; q++) {
			uint32_t here = count[q];
			count[q] = sum;
			sum += here;
		}
		p->pair_d = aci_arena_alloc(&p->arena, (size_t)sum + 1,
					    sizeof(*p->pair_d));
		if (!p->pair_d)
			return -1;
	}
	/* each cursor ended at the next phase's start: pair_first[q] is q's
	 * first pair again; now drop the d's already listed for q */
	p->pair_first[0] = 0;
	uint32_t w = 0;
	for (uint32_t q = 0; q < n_phases; q++) {
		uint32_t from = p->pair_first[q], to = p->pair_first[q + 1];
		p->pair_first[q] = w;
		for (uint32_t x = from; x < to; x++)
			if (seen[p->pair_d[x]] != q + 1) {
				seen[p->pair_d[x]] = q + 1;
				p->pair_d[w++] = p->pair_d[x];
			}
	}
	p->pair_first[n_phases] = w;
	return 0;
}

/* Which planes of a phase a per-phase list holds. */
typedef int (*plane_filter)(const struct ac_program *p, uint32_t plane,
			    const void *ctx);

/* For every phase ph, the planes `keep` accepts, in phase order, as
 * list[first[ph] .. first[ph + 1]); list holds n_planes, first n_phases
 * + 1.  O(P). */
static void list_planes(const struct ac_program *p, plane_filter keep,
			const void *ctx, uint32_t *list, uint32_t *first)
{
	const struct ac_model *m = p->m;
	uint32_t n = 0;
	for (uint32_t ph = 0; ph < m->n_phases; ph++) {
		const struct ac_phase *phase = &m->phases[ph];
		first[ph] = n;
		for (uint32_t j = 0; j < phase->plane_count; j++)
			if (keep(p, phase->plane_first + j, ctx))
				list[n++] = phase->plane_first + j;
	}
	first[m->n_phases] = n;
}

/* A carried plane of a light key (ctx NULL) or of a heavy one. */
static int carried_light(const struct ac_program *p, uint32_t plane,
			 const void *ctx)
{
	return p->m->planes[plane].carried &&
	       p->light[p->spans[plane].key] == (ctx == NULL);
}

/* Phase ph's carried planes of light keys, and of heavy ones, each in
 * phase order: O(P). */
static int index_carried(struct ac_program *p)
{
	const struct ac_model *m = p->m;
	size_t planes = (size_t)m->n_planes + 1;
	size_t phases = (size_t)m->n_phases + 1;
	p->light_carried = aci_arena_alloc(&p->arena, planes, sizeof(uint32_t));
	p->light_carried_first = aci_arena_alloc(&p->arena, phases,
						 sizeof(uint32_t));
	p->heavy_carried = aci_arena_alloc(&p->arena, planes, sizeof(uint32_t));
	p->heavy_carried_first = aci_arena_alloc(&p->arena, phases,
						 sizeof(uint32_t));
	if (!p->light_carried || !p->light_carried_first ||
	    !p->heavy_carried || !p->heavy_carried_first)
		return -1;
	list_planes(p, carried_light, NULL, p->light_carried,
		    p->light_carried_first);
	list_planes(p, carried_light, p, p->heavy_carried,
		    p->heavy_carried_first);
	return 0;
}

/* A fresh plane of a heavy watched key, or over one (ctx: covered[], the
 * positions below x covered by a heavy key). */
static int over_heavy(const struct ac_program *p, uint32_t plane,
		      const void *ctx)
{
	const int64_t *covered = ctx;
	const struct plane_span *sp = &p->spans[plane];
	return !p->m->planes[plane].carried &&
	       ((sp->key < p->n_watched && !p->light[sp->key]) ||
		covered[sp->hi] > covered[sp->lo]);
}

/*
 * Which planes (D) must follow in the owner map, and the key numbers
 * schedules see.
 *
 * A key is *watched* when some plane declares it carried: only watched
 * keys' states are ever read.  Light watched keys (index_light) are
 * decided without the map.  A plane matters to the map when its key is
 * a heavy watched one or it intersects a plane of one (it may take that
 * key's bytes).  Any other plane can be left out of the map without
 * changing an answer: every byte it would own belongs, before and after
 * it, to light or unwatched keys or nobody (a heavy key owning one would
 * intersect it), so no heavy key gains or loses a byte through it.
 * Nor does a carried plane: (D) declares it only after finding its key
 * intact, and then [lo, hi) already is one segment of that key in the map
 * (its latest declaration made it one, and a plane of another key over
 * any of its bytes, or across its end, would have taken one).
 *
 * Keys are renumbered so the watched ones are 0 .. n_watched - 1 (the
 * schedules keep a state for those alone), and every phase gets the list
 * of its followed planes in phase order (the order (D) reports in).
 * O(P log P): the positions are already sorted; two prefix sums over them.
 */
static int index_followed(struct ac_program *p, struct aci_arena *scratch)
{
	const struct ac_model *m = p->m;
	uint32_t *renumber = aci_arena_alloc(scratch, (size_t)p->n_keys + 1,
					     sizeof(*renumber));
	uint8_t *watched = aci_arena_calloc(scratch, (size_t)p->n_keys + 1, 1);
	/* covered[x]: followed positions below x covered by a heavy key */
	int64_t *covered = aci_arena_calloc(scratch, p->n_positions + 2,
					    sizeof(*covered));
	p->followed = aci_arena_alloc(&p->arena, (size_t)m->n_planes + 1,
				      sizeof(*p->followed));
	p->followed_first = aci_arena_alloc(&p->arena, (size_t)m->n_phases + 1,
					    sizeof(*p->followed_first));
	if (!renumber || !watched || !covered || !p->followed ||
	    !p->followed_first)
		return -1;
	for (uint32_t i = 0; i < m->n_planes; i++)
		if (m->planes[i].carried)
			watched[p->spans[i].key] = 1;
	uint32_t n_watched = 0, other = 0;
	for (uint32_t k = 0; k < p->n_keys; k++)
		n_watched += watched[k];
	for (uint32_t k = 0, w = 0; k < p->n_keys; k++)
		renumber[k] = watched[k] ? w++ : n_watched + other++;
	for (uint32_t i = 0; i < m->n_planes; i++)
		p->spans[i].key = renumber[p->spans[i].key];
	p->n_watched = n_watched;
	if (index_light(p, scratch) != 0 || index_carried(p) != 0 ||
	    index_pairs(p, scratch) != 0)
		return -1;
	/* how many heavy planes start minus end at each position (a
	 * difference array), then how many covered positions lie below */
	for (uint32_t i = 0; i < m->n_planes; i++) {
		uint32_t key = p->spans[i].key;
		if (key < n_watched && !p->light[key]) {
			covered[p->spans[i].lo]++;
			covered[p->spans[i].hi]--;
		}
	}
	int64_t depth = 0, below = 0;
	for (uint64_t x = 0; x <= p->n_positions; x++) {
		depth += covered[x];
		covered[x] = below;
		below += depth > 0;
	}
	list_planes(p, over_heavy, covered, p->followed, p->followed_first);
	return index_declaring(p);
}

/*
 * A model may let several phases list one run of the plane table (a
 * hand-built or fuzzed one: spec 1 does not forbid it).  The indexes of
 * (D) are per plane, each plane of one phase, so such a model is
 * certified through a copy whose phases each own their planes: the same
 * phases and planes in the same order, as the image and JSON hold them
 * (p->m is the copy; p->own its tables).  O(P) over the phases' planes,
 * which aci_image_check bounded by 2^32-1.
 */
static int own_planes(struct ac_program *p, struct aci_arena *scratch)
{
	const struct ac_model *m = p->m;
	uint8_t *listed = aci_arena_calloc(scratch, (size_t)m->n_planes + 1, 1);
	if (!listed)
		return -1;
	uint64_t total = 0;
	int shared = 0;
	for (uint32_t ph = 0; ph < m->n_phases; ph++) {
		const struct ac_phase *phase = &m->phases[ph];
		total += phase->plane_count;
		for (uint32_t j = 0; j < phase->plane_count; j++) {
			shared |= listed[phase->plane_first + j];
			listed[phase->plane_first + j] = 1;
		}
	}
	if (!shared)
		return 0;
	assert(total <= UINT32_MAX);
	p->own = aci_arena_alloc(&p->arena, 1, sizeof(*p->own));
	struct ac_phase *phases = aci_arena_alloc(&p->arena,
						  (size_t)m->n_phases + 1,
						  sizeof(*phases));
	struct ac_tensor *planes = aci_arena_alloc(&p->arena, (size_t)total + 1,
						   sizeof(*planes));
	if (!p->own || !phases || !planes)
		return -1;
	uint32_t n = 0;
	for (uint32_t ph = 0; ph < m->n_phases; ph++) {
		phases[ph] = m->phases[ph];
		phases[ph].plane_first = n;
		for (uint32_t j = 0; j < m->phases[ph].plane_count; j++)
			planes[n++] = m->planes[m->phases[ph].plane_first + j];
	}
	*p->own = *m;
	p->own->phases = phases;
	p->own->planes = planes;
	p->own->n_planes = n;
	p->m = p->own;
	return 0;
}

/* Above this, a block is sized by the table that needs it. */
#define ARENA_HINT_MAX ((size_t)256 << 20)

/* Saturating sum, for the arenas' hints (a hint only sizes a block). */
static size_t add_size(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* The bytes of the program's own tables, by counts known after
 * validation: everything but the touch lists and the pairs, whose
 * lengths the sweep finds, taken as a plane's and a phase's each; a model
 * whose phases share planes (own_planes) takes a second block.  Capped:
 * a larger program's tables that do not fit take blocks of their own. */
static size_t program_hint(const struct ac_model *m)
{
	size_t r = (size_t)m->n_repeats + 1, pl = (size_t)m->n_planes + 2;
	size_t ph = (size_t)m->n_phases + 2;
	size_t sizes[] = {
		aci_arena_size(r, sizeof(struct body)),
		aci_arena_size(r, sizeof(uint64_t)),            /* extra_prefix */
		aci_arena_size(pl, sizeof(struct plane_span)),
		aci_arena_size(pl, 1),                          /* light */
		aci_arena_size(pl, sizeof(struct touch)),
		/* touch_first, followed, declaring(_first), light and heavy
		 * carried */
		6 * aci_arena_size(pl, sizeof(uint32_t)),
		/* followed_first, pair_first, pair_d, carried_firsts */
		5 * aci_arena_size(ph, sizeof(uint32_t)),
	};
	size_t hint = 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		hint = add_size(hint, sizes[i]);
	return hint < ARENA_HINT_MAX ? hint : ARENA_HINT_MAX;
}

/* The scratch the index builders take, by the same counts (positions are
 * at most twice the planes). */
static size_t scratch_hint(const struct ac_model *m)
{
	size_t pl = (size_t)m->n_planes + 2, pos = 2 * pl + 2;
	size_t sizes[] = {
		aci_arena_size(pl, 1),                  /* listed, watched */
		aci_arena_size(pl, 1),
		/* first_plane, by_lo, by_hi, rep, phase_of_plane, prev, next,
		 * renumber */
		8 * aci_arena_size(pl, sizeof(uint32_t)),
		aci_arena_size(pos, sizeof(uint64_t)),  /* bound */
		3 * aci_arena_size(pos, sizeof(uint32_t)),  /* starts .. */
		aci_arena_size(pos, sizeof(int64_t)),   /* covered */
		aci_arena_size((size_t)m->n_phases + 1, sizeof(uint32_t)),
	};
	size_t hint = 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		hint = add_size(hint, sizes[i]);
	return hint < ARENA_HINT_MAX ? hint : ARENA_HINT_MAX;
}

/* Everything (D) needs; only built for programs that pass (A)-(C); the
 * run index on the team's threads. */
static int index_for_schedules(struct ac_program *p, struct aci_team *team)
{
	struct aci_arena scratch;
	aci_arena_init(&scratch, scratch_hint(p->m));
	const uint32_t *first_plane = NULL;
	int rc = -1;
	if (own_planes(p, &scratch) != 0)
		goto out;
	p->spans = aci_arena_calloc(&p->arena, p->m->n_planes + 1,
				    sizeof(*p->spans));
	if (!p->spans)
		goto out;
	if (aci_index_runs(p->m, p->phase_of, p->bodies, team, &p->runs,
			   &p->run_of, &p->n_runs) ||
	    intern_keys(p, &scratch, &first_plane) ||
	    index_positions(p, &scratch, first_plane) ||
	    index_followed(p, &scratch))
		goto out;
	rc = 0;
out:
	aci_arena_free(&scratch);
	return rc;
}

static void digest_sink(void *ctx, const void *data, size_t len)
{
	aci_image_digest_add(ctx, data, len);
}

/*
 * The first caller hashes the image; the rest wait for it, then read it.
 * ac_program_new checked that the image can be written (aci_image_check), so
 * aci_image_emit cannot fail here.
 */
XXH128_hash_t aci_program_digest(const struct ac_program *cp)
{
	struct ac_program *p = (struct ac_program *)cp;  /* the cache only */
	if (!atomic_load_explicit(&p->digest_done, memory_order_acquire)) {
		pthread_mutex_lock(&p->digest_lock);
		if (!atomic_load_explicit(&p->digest_done,
					  memory_order_relaxed)) {
			XXH3_state_t state;
			struct ac_digest d;
			aci_image_digest_begin(&state);
			int rc = aci_image_emit(p->m, 0, digest_sink, &state, NULL);
			assert(rc == 0);
			(void)rc;
			aci_image_digest_value(&state, &d);
			p->digest = (XXH128_hash_t){ .high64 = d.high,
						     .low64 = d.low };
			atomic_store_explicit(&p->digest_done, 1,
					      memory_order_release);
		}
		pthread_mutex_unlock(&p->digest_lock);
	}
	return p->digest;
}

/* (A), (B), then (C) on the calling thread: the first that fails sets the
 * verdict. */
static int check_serial(struct ac_program *p, const struct hash_index *phases)
{
	if (aci_phases_of_launches(p->m, phases, p->phase_of, NULL) != 0)
		return -1;
	uint32_t *globals = aci_sort_tensors(p->m->globals, p->m->n_globals,
					     aci_planes_listed(p->m));
	if (!globals)
		return -1;
	uint32_t *planes = globals + p->m->n_globals;
	int r = aci_check_layout(p->m, globals, planes, &p->diag);
	if (r == 0)
		r = aci_check_words(p->m, p->phase_of, globals, planes,
				    &p->diag);
	free(globals);
	return r;
}

/*
 * The launch table in chunks, for threads: chunk c is launches [bound[c],
 * bound[c + 1]).  Every chunk finds its launches' phases (the schedules'
 * indexes need them all); (C) runs on the chunks below the smallest one
 * known to fail, each into its own diagnostic, so that the smallest
 * failing chunk's first failure -- the serial diagnostic -- is found
 * whatever order the chunks run in.
 */
struct chunked {
	const struct ac_model *m;
	const struct hash_index *phases;  /* the validation's, read only */
	uint32_t *phase_of;
	const struct word_check *words;   /* NULL: (A) or (B) failed */
	uint32_t *bound;                  /* n_chunks + 1 */
	struct ac_diag *diag;             /* per chunk */
	atomic_uint first_failed;         /* n_chunks while none has */
};

static int check_chunk(void *ctx, uint32_t c)
{
	struct chunked *k = ctx;
	uint32_t from = k->bound[c], to = k->bound[c + 1];
	if (from == to)
		return 0;
	struct ac_model part = *k->m;
	part.launches += from;
	part.n_launches = to - from;
	if (aci_phases_of_launches(&part, k->phases, k->phase_of + from,
				   NULL) != 0)
		return -1;
	if (!k->words ||
	    c > atomic_load_explicit(&k->first_failed, memory_order_relaxed))
		return 0;
	aci_diag_clear(&k->diag[c]);
	int r = aci_word_check_range(k->words, k->phase_of, from, to, &k->diag[c]);
	if (r < 0)
		return -1;
	unsigned seen = atomic_load_explicit(&k->first_failed,
					     memory_order_relaxed);
	while (r > 0 && c < seen &&
	       !atomic_compare_exchange_weak_explicit(&k->first_failed, &seen,
						      c, memory_order_relaxed,
						      memory_order_relaxed))
		;
	return 0;
}

/* The words of the first c of n_chunks equal shares, rounded up. */
static uint64_t chunk_share(uint64_t words, uint32_t c, uint32_t n_chunks)
{
	return ((uint64_t)c * words + n_chunks - 1) / n_chunks;
}

/*
 * Chunk bounds of about equal words; n launches in n_chunks <= n; s: the
 * launch table's sums (aci_validate_model).  Chunk c ends after the launch
 * that brings it to its share (so it holds one launch at least).  When
 * the launches' words are laid out in order (s->running: a launch's
 * word_first + word_count is the sum of the counts up to it), that
 * launch is found by binary search, O(n_chunks log n); otherwise by
 * summing, O(n).  Both give the same bounds.
 */
static void chunk_bounds(const struct ac_model *m, const struct launch_sums *s,
			 uint32_t n_chunks, uint32_t *bound)
{
	const struct ac_launch *la = m->launches;
	const uint32_t n = m->n_launches;
	uint32_t c = 0;
	bound[0] = 0;
	if (s->running) {
		for (uint32_t from = 0; from < n && c + 1 < n_chunks;) {
			uint64_t share = chunk_share(s->words, c + 1, n_chunks);
			uint32_t k;
			AC_PARTITION(uint32_t, k, n - from, i,
				     la[from + i].word_first +
				     la[from + i].word_count < share);
			if (from + k == n)
				break;
			from = bound[++c] = from + k + 1;
		}
	} else {
		uint64_t sum = 0, share = chunk_share(s->words, 1, n_chunks);
		for (uint32_t l = 0; l < n && c + 1 < n_chunks; l++) {
			sum += la[l].word_count;
			if (sum >= share) {
				bound[++c] = l + 1;
				share = chunk_share(s->words, c + 1, n_chunks);
			}
		}
	}
	while (c < n_chunks)
		bound[++c] = n;
}

static int check_parallel(struct ac_program *p, struct aci_team *team,
			  const struct launch_sums *sums,
			  const struct hash_index *phases)
{
	const struct ac_model *m = p->m;
	uint32_t n_chunks = aci_chunk_count(team->threads, m->n_launches);
	struct chunked k = { .m = m, .phases = phases,
			     .phase_of = p->phase_of };
	atomic_init(&k.first_failed, n_chunks);
	k.bound = malloc(((size_t)n_chunks + 1) * sizeof(*k.bound));
	k.diag = malloc(((size_t)n_chunks + 1) * sizeof(*k.diag));
	uint32_t *globals = aci_sort_tensors(m->globals, m->n_globals,
					     aci_planes_listed(m));
	int r = -1;
	if (!k.bound || !k.diag || !globals)
		goto out;
	chunk_bounds(m, sums, n_chunks, k.bound);
	/* the word check's sets point into globals' block: freed after it */
	uint32_t *planes = globals + m->n_globals;
	r = aci_check_layout(m, globals, planes, &p->diag);
	struct word_check *words = NULL;
	if (r == 0 && !(words = aci_word_check_new(m, globals, planes)))
		r = -1;
	k.words = words;
	if (r >= 0 && aci_team_run(team, n_chunks, check_chunk, &k) != 0)
		r = -1;
	aci_word_check_free(words);
	if (r == 0 && k.first_failed < n_chunks) {
		p->diag = k.diag[k.first_failed];
		r = 1;
	}
out:
	free(globals);
	free(k.diag);
	free(k.bound);
	return r;
}

/* (A), (B), then (C): the first that fails sets the verdict; on the
 * team's threads when it has more than one (sums: the launch table's,
 * for the chunks' bounds; phases: the validation's table of the phases
 * by identity). */
static int check_program(struct ac_program *p, struct aci_team *team,
			 const struct launch_sums *sums,
			 const struct hash_index *phases)
{
	p->phase_of = aci_big_calloc((size_t)p->m->n_launches + 1,
				     sizeof(*p->phase_of));
	if (!p->phase_of)
		return -1;
	if (team->threads > 1)
		return check_parallel(p, team, sums, phases);
	return check_serial(p, phases);
}

ac_program *ac_program_new(const struct ac_model *m, struct ac_error *err)
{
	return ac_program_new_opts(m, NULL, err);
}

/* ac_program_new_opts on team's threads (aci_threads_for's, for m; the
 * caller stops it); read: NULL, or the sums aci_image_view found for m,
 * a model it has just built (aci_validate_model). */
static ac_program *program_on(const struct ac_model *m, struct aci_team *team,
			      const struct launch_sums *read,
			      struct ac_error *err)
{
	struct launch_sums sums;
	struct hash_index phases;
	if (aci_validate_model(m, read, &sums, &phases, err) != 0)
		return NULL;
	struct ac_program *p = calloc(1, sizeof(*p));
	if (!p) {
		aci_hash_index_free(&phases);
		aci_fail(err, "", "out of memory");
		return NULL;
	}
	p->m = m;
	aci_arena_init(&p->arena, program_hint(m));
	pthread_mutex_init(&p->digest_lock, NULL);
	aci_diag_clear(&p->diag);
	/* the image's limits first (aci_validate_model checked the structure):
	 * own_planes relies on them.  A model the image reader has just
	 * built (read) is within them: the reader accepts only what the
	 * writer writes (image_read.c), so it is not planned again. */
	int r = read ? 0 : aci_image_check(p->m, &sums, err);
	if (r == 0) {
		r = index_bodies(p);
		if (r == 0)
			r = check_program(p, team, &sums, &phases);
		if (r == 0)
			r = index_for_schedules(p, team);
		if (r < 0)
			aci_fail(err, "", "out of memory");
		else
			p->verdict = p->diag.verdict;
	}
	aci_hash_index_free(&phases);
	if (r < 0) {
		ac_program_free(p);
		return NULL;
	}
	return p;
}

/* program_on with a team of its own, sized by opt for m. */
static ac_program *program_new(const struct ac_model *m,
			       const struct ac_options *opt,
			       struct ac_error *err)
{
	struct aci_team team;
	aci_team_init(&team, aci_threads_for(opt, m->n_words, m->n_launches));
	ac_program *p = program_on(m, &team, NULL, err);
	aci_team_stop(&team);
	return p;
}

ac_program *ac_program_new_opts(const struct ac_model *m,
				const struct ac_options *opt,
				struct ac_error *err)
{
	return program_new(m, opt, err);
}

/*
 * The model is aci_image_view's and nobody else's until this returns, so the
 * structure the reader checked still holds: program_new does not check
 * it again (one pass over the launch table fewer).
 */
ac_program *ac_program_view_image(const void *image, size_t len,
				  const struct ac_options *opt,
				  struct ac_model **model, struct ac_error *err)
{
	assert(model);
	struct launch_sums sums;
	struct aci_team team;   /* sized by aci_image_view, for every stage */
	aci_team_init(&team, 1);
	ac_program *p = NULL;
	if (aci_image_view(image, len, opt, &team, model, &sums, err) != 0)
		*model = NULL;
	else
		p = program_on(*model, &team, &sums, err);
	aci_team_stop(&team);
	return p;
}

void ac_program_free(ac_program *p)
{
	if (!p)
		return;
	aci_big_free(p->phase_of);
	aci_big_free(p->runs);
	aci_big_free(p->run_of);
	aci_arena_free(&p->arena);   /* every other table, p->own too */
	pthread_mutex_destroy(&p->digest_lock);
	free(p);
}

uint64_t ac_program_verdict(const ac_program *p)
{
	return p->verdict;
}

uint64_t ac_program_launch_phase(const ac_program *p, uint64_t launch)
{
	if (launch >= p->m->n_launches || p->phase_of[launch] == NO_PHASE)
		return AC_NONE;
	return p->phase_of[launch];
}

uint64_t ac_program_repeat_of(const ac_program *p, uint64_t launch)
{
	uint32_t lo;   /* the first body after launch */
	AC_PARTITION(uint32_t, lo, p->m->n_repeats, i,
		     p->bodies[i].first <= launch);
	if (lo == 0 || launch - p->bodies[lo - 1].first >= p->bodies[lo - 1].count)
		return AC_NONE;
	return p->bodies[lo - 1].repeat;
}

const struct ac_model *ac_program_model(const ac_program *p)
{
	return p->m;
}
