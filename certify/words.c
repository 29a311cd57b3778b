/* SPDX-License-Identifier: MIT */
/*
 * Spec 2 (C): every launch has a declared phase and every interval of every
 * word is fine.  Runs after (A) and (B) hold, so a launch's named ranges
 * (the globals and its phase's planes) are non-empty and pairwise disjoint:
 * an interval lies inside one of them iff it lies inside the last one that
 * starts at or below its low end.  Each interval thus costs at most three
 * binary searches (windows, globals, the phase's planes): O(W log R)
 * overall.
 *
 * This is the loop over every parameter word, so it is the one place
 * where constant factors matter (docs/performance.md): most words (sizes,
 * counts, kernel ids) leave after one comparison with the windows' overall
 * bounds (scan_plain); a pointer first tries the two ranges the same word
 * of earlier launches of its phase and kernel was found in (hinted), and
 * only then searches: the phase's planes (a few, scanned), then the
 * globals over compact sorted (lo, last) arrays.  A moved word's points
 * walk along the ranges (first_bad_point) instead of searching for each,
 * and a motion already found fine is not walked again (moved_slot).
 *
 * Values are exact: V(t) = B(t) + t * D is computed in 128-bit arithmetic.
 * |D| < 2^32 * 2^63 (at most 2^32 deltas) and t < 2^32, so |V| < 2^127.
 */
#include <assert.h>
#include <stdlib.h>

#include "arena.h"
#include "identity.h"
#include "program_impl.h"

typedef __int128 wide;

#define U64_LIMIT ((wide)1 << 64)
#define POINT_LIMIT 128        /* per-iteration intervals up to this N */

/*
 * Named ranges sorted by start, as parallel arrays: r[k] is the range of
 * tensor order[k].  Disjoint and non-empty, since (A) and (B) hold.
 *
 * A large set also has buckets: [r[0].lo, end) cut into 2^k equal slices,
 * and first[i] = the number of ranges starting before slice i.  A value in
 * slice i has its floor among r[first[i] - 1 .. first[i + 1] - 1], which
 * for tensors of similar sizes is one or two ranges: the search is O(1)
 * instead of log n dependent loads.
 */
struct range_set {
	struct range *r;
	const uint32_t *order;
	uint32_t n;
	uint32_t *first;           /* n_slices + 1 entries, or NULL */
	uint64_t n_slices;
	unsigned shift;            /* slice i: r[0].lo + [i << shift, ...) */
};

#define BUCKETS_FROM 16        /* smaller sets: a plain binary search */

struct word_sets {
	const struct ac_model *m;
	struct range_set globals;
	struct range_set *planes;  /* per phase */
	struct range *windows;     /* the union of the windows, sorted */
	uint32_t n_windows;
	uint64_t window_lo, window_last;   /* bounds of the union */
	uint64_t window_span;      /* window_last - window_lo; 0 with none */
	struct ac_diag *diag;
};

/* Index of the last range starting at or below x, or -1.  Branch-free
 * halving: this runs once or twice per parameter word. */
static int64_t range_floor(const struct range *r, uint32_t n, uint64_t x)
{
	if (n == 0 || r[0].lo > x)
		return -1;
	const struct range *base = r;
	while (n > 1) {
		uint32_t half = n / 2;
		base = base[half].lo <= x ? base + half : base;
		n -= half;
	}
	return base - r;
}

/* range_floor, narrowed by the buckets when the set has them. */
static int64_t set_floor(const struct range_set *set, uint64_t x)
{
	if (!set->first || x < set->r[0].lo)
		return range_floor(set->r, set->n, x);
	uint64_t slice = (x - set->r[0].lo) >> set->shift;
	if (slice >= set->n_slices)
		return set->n - 1;     /* x is past the last range's end */
	uint32_t from = set->first[slice], to = set->first[slice + 1];
	/* ranges before `from` start before the slice, so at or below x;
	 * ranges from `to` on start after it */
	return (int64_t)from + range_floor(set->r + from, to - from, x);
}

/* Slices about as many as ranges, each 2^shift bytes. */
static int index_slices(struct range_set *set, struct aci_arena *a)
{
	uint64_t lo = set->r[0].lo, last = set->r[set->n - 1].last;
	unsigned shift = 0;
	while (shift < 63 && ((last - lo) >> shift) >= 2 * (uint64_t)set->n)
		shift++;
	set->shift = shift;
	set->n_slices = ((last - lo) >> shift) + 1;
	set->first = set->n_slices < SIZE_MAX
		? aci_arena_alloc(a, (size_t)set->n_slices + 1, sizeof(*set->first))
		: NULL;
	if (!set->first)
		return -1;
	/* first[i], the ranges starting before slice i, is k for the
	 * slices from just after range k - 1's to range k's own (a range
	 * starts before slice i iff its slice is below i); n for the
	 * slices after the last range's, slice n_slices included */
	uint64_t i = 0;
	for (uint32_t k = 0; k < set->n; k++) {
		uint64_t own = (set->r[k].lo - lo) >> shift;
		assert(own < set->n_slices);
		while (i <= own)
			set->first[i++] = k;
	}
	while (i <= set->n_slices)
		set->first[i++] = set->n;
	return 0;
}

static int merge_windows(struct word_sets *c)
{
	c->windows = aci_window_union(c->m, &c->n_windows);
	if (!c->windows)
		return -1;
	uint32_t n = c->n_windows;
	/* with no window, lo > last: every value is outside */
	c->window_lo = n ? c->windows[0].lo : UINT64_MAX;
	c->window_last = n ? c->windows[n - 1].last : 0;
	c->window_span = n ? c->window_last - c->window_lo : 0;
	return 0;
}

/* order: t sorted by aci_sort_tensors (for a phase's planes, by
 * aci_check_layout). */
static int range_set_init(struct range_set *set, const struct ac_tensor *t,
			  uint32_t n, const uint32_t *order,
			  struct aci_arena *a)
{
	set->n = n;
	set->order = order;
	set->r = aci_arena_alloc(a, n, sizeof(*set->r));
	if (!set->r)
		return -1;
	for (uint32_t k = 0; k < n; k++) {
		const struct ac_tensor *x = &t[set->order[k]];
		set->r[k] = (struct range){ x->offset, x->offset + (x->size - 1) };
	}
	return n >= BUCKETS_FROM ? index_slices(set, a) : 0;
}

static int index_named(struct word_sets *c, const uint32_t *globals,
		       const uint32_t *planes, struct aci_arena *a)
{
	const struct ac_model *m = c->m;
	if (range_set_init(&c->globals, m->globals, m->n_globals, globals,
			   a) != 0)
		return -1;
	c->planes = aci_arena_calloc(a, (size_t)m->n_phases + 1,
				     sizeof(*c->planes));
	if (!c->planes)
		return -1;
	for (uint32_t p = 0; p < m->n_phases; p++) {
		if (range_set_init(&c->planes[p],
				   phase_planes(m, &m->phases[p]),
				   m->phases[p].plane_count, planes, a) != 0)
			return -1;
		planes += m->phases[p].plane_count;
	}
	return 0;
}

/* Does [lo, hi] (inside [0, 2^64)) meet a window? */
static int meets_window(const struct word_sets *c, uint64_t lo, uint64_t hi)
{
	if (hi < c->window_lo || lo > c->window_last)
		return 0;
	int64_t k = range_floor(c->windows, c->n_windows, hi);
	return k >= 0 && c->windows[k].last >= lo;
}

static int inside_one(const struct range_set *set, uint64_t lo, uint64_t hi)
{
	int64_t k = set_floor(set, lo);
	return k >= 0 && hi <= set->r[k].last;
}

static int inside_named(const struct word_sets *c, uint32_t phase,
			uint64_t lo, uint64_t hi)
{
	return inside_one(&c->globals, lo, hi) ||
	       inside_one(&c->planes[phase], lo, hi);
}

static int interval_fine(const struct word_sets *c, uint32_t phase,
			 wide lo, wide hi)
{
	if (lo < 0 || hi >= U64_LIMIT)
		return 0;   /* meets every window, inside no named range */
	return !meets_window(c, (uint64_t)lo, (uint64_t)hi) ||
	       inside_named(c, phase, (uint64_t)lo, (uint64_t)hi);
}

static struct ac_wide to_wide(wide v)
{
	return (struct ac_wide){ (int64_t)(v >> 64), (uint64_t)v };
}

/* Nearest named ranges below and above x, for the diagnostic. */
static void describe_near(const struct word_sets *c, uint32_t phase,
			  uint64_t x, struct ac_diag *d)
{
	const struct range_set *gs = &c->globals, *ps = &c->planes[phase];
	int64_t g = set_floor(gs, x);
	int64_t p = set_floor(ps, x);
	struct ac_tensor_ref none = { AC_NONE, AC_NONE };
	d->near[0] = d->near[1] = none;

	/* below: the greater start of the two floors */
	if (g >= 0 && (p < 0 || gs->r[g].lo >= ps->r[p].lo))
		d->near[0] = (struct ac_tensor_ref){ AC_NONE, gs->order[g] };
	else if (p >= 0)
		d->near[0] = (struct ac_tensor_ref){ phase, ps->order[p] };

	/* above: the smaller start of the two successors */
	uint64_t gn = (uint64_t)(g + 1), pn = (uint64_t)(p + 1);
	int has_g = gn < gs->n, has_p = pn < ps->n;
	if (has_g && (!has_p || gs->r[gn].lo <= ps->r[pn].lo))
		d->near[1] = (struct ac_tensor_ref){ AC_NONE, gs->order[gn] };
	else if (has_p)
		d->near[1] = (struct ac_tensor_ref){ phase, ps->order[pn] };
}

static void report_word(const struct word_sets *c, uint32_t launch,
			uint32_t phase, uint32_t word, wide lo, wide hi,
			uint64_t ordinal)
{
	const struct ac_model *m = c->m;
	struct ac_diag *d = c->diag;
	d->condition = AC_COND_C;
	d->reason = AC_WORD_UNNAMED;
	d->launch = launch;
	d->word = word;
	d->lo = to_wide(lo);
	d->hi = to_wide(hi);
	d->ordinal = ordinal;
	d->window = AC_NONE;
	d->phase = phase;
	if (lo >= 0 && hi < U64_LIMIT) {
		for (uint32_t i = 0; i < m->n_windows; i++) {
			const struct ac_window *w = &m->windows[i];
			if ((uint64_t)lo - w->base < w->size ||
			    (w->base >= (uint64_t)lo && w->base <= (uint64_t)hi)) {
				d->window = i;
				break;
			}
		}
		describe_near(c, phase, (uint64_t)lo, d);
	} else {
		describe_near(c, phase, lo < 0 ? 0 : UINT64_MAX, d);
	}
}

/* Is x outside the windows' overall bounds (sizes, counts, kernel ids:
 * most words)?  One comparison; with no window, every x but UINT64_MAX is,
 * and point_fine answers for that one. */
static inline int outside_bounds(const struct word_sets *c, uint64_t x)
{
	return x - c->window_lo > c->window_span;
}

/* Sets of at most this many ranges (a phase's planes, usually) are
 * scanned rather than searched. */
#define SCAN_UP_TO 8

/* Index of the range of set holding x, or -1. */
static inline int64_t range_holding(const struct range_set *set, uint64_t x)
{
	if (set->n <= SCAN_UP_TO) {
		for (uint32_t k = 0; k < set->n; k++)
			if (x - set->r[k].lo <= set->r[k].last - set->r[k].lo)
				return k;
		return -1;
	}
	int64_t k = set_floor(set, x);
	return k >= 0 && x <= set->r[k].last ? k : -1;
}

/*
 * Moved words already found fine: (phase, x, d, n) decides the check of a
 * word moved by one delta (its n points x + t d), so a word repeated with
 * the same motion -- the same weight pointer in every image's layer body
 * -- walks its points once.  Direct-mapped by a hash of the key; an entry
 * is only ever a key that was checked and found fine.
 */
#define MOVED_MEMO 64
struct moved_word {
	wide d;
	uint64_t x;
	uint32_t n, phase;           /* n 0: no entry */
};

/*
 * A named range that word w of an earlier launch of the same phase and
 * kernel (word 0) was found in: launches of one kernel repeat their
 * parameter layout, and a pointer often stays in the tensor it pointed
 * into (the next image's rows, the same weights).  Direct-mapped: slot
 * (hash(phase, kernel) + w) mod the table's size.  An entry is a range of
 * the globals or of the planes of phase tag - 1, so it proves x fine for
 * that phase when it holds x; whatever else the hash put in a slot proves
 * nothing, and x is searched for.
 */
struct point_hint {
	uint64_t lo, span;           /* [lo, lo + span] */
	uint32_t tag;                /* phase + 1; 0: no entry */
};

/* Two hints a slot, the newer first: a word that alternates between two
 * tensors (a node's input from the tape or from a carry) keeps both. */
struct hint_slot {
	struct point_hint way[2];
};

#define HINTS_MIN 64
#define HINTS_MAX 4096

/* What (C) remembers on one thread: hints and memo, never answers that
 * were not checked.  last[p] is the last launch of phase p that the scan
 * passed in scan_plain, every word of it found fine as a point (no repeat
 * moves a word of it), or UINT32_MAX: a word of a later launch of phase p
 * equal to the same word of that one is fine (same_words_since). */
struct point_hints {
	struct hint_slot *at;
	uint32_t mask;               /* slots - 1, slots a power of two */
	uint32_t *last;              /* per phase, in at's block */
	uint32_t from;               /* the scan's first launch */
	uint32_t period;             /* scan_plain's distance to compare at */
	uint32_t misses;             /* scan_plain's comparisons that lost */
	int compare;                 /* 0: scan_plain compares no launch */
	uint64_t compared;           /* words found equal: no test */
	struct moved_word moved[MOVED_MEMO];
};

/* Hints for checking `launches` launches; -1 on out-of-memory.  Only
 * the tags are cleared: a way's range is read only when its tag matches
 * (hinted), so the rest of an empty slot is never looked at (calloc's
 * 6 kB at 128 slots were 3 % of reading and certifying vit's 884 words). */
static int hints_init(struct point_hints *h, uint32_t launches,
		      uint32_t phases)
{
	uint32_t slots = HINTS_MIN;
	while (slots < HINTS_MAX && slots < launches)
		slots *= 2;
	/* one block: the slots, then last[] (a slot's alignment serves it) */
	h->at = malloc(slots * sizeof(*h->at) + (size_t)phases * sizeof(*h->last));
	if (!h->at)
		return -1;
	h->mask = slots - 1;
	h->last = (uint32_t *)(h->at + slots);
	for (uint32_t i = 0; i < slots; i++)
		h->at[i].way[0].tag = h->at[i].way[1].tag = 0;
	for (uint32_t p = 0; p < phases; p++)
		h->last[p] = UINT32_MAX;
	for (uint32_t i = 0; i < MOVED_MEMO; i++)
		h->moved[i].n = 0;
	return 0;
}

static struct moved_word *moved_slot(struct point_hints *h, uint32_t phase,
				     uint64_t x, wide d)
{
	uint64_t k = (x ^ (uint64_t)d * 0x9e3779b97f4a7c15ull ^
		      (uint64_t)(d >> 64) ^ phase) * 0xff51afd7ed558ccdull;
	return &h->moved[k >> 58];
}

/* The first hint slot of a launch of this phase whose word 0 is kernel. */
static inline uint32_t hint_base(uint32_t phase, uint64_t kernel)
{
	return (uint32_t)(((phase * 0x9e3779b97f4a7c15ull) ^ kernel) *
			  0xff51afd7ed558ccdull >> 32);
}

/*
 * interval_fine for a point x inside the windows' overall bounds, in
 * 64-bit arithmetic: 1 when fine, with *set and *k the named range holding
 * x (*set NULL when x is fine for lying between windows), else 0.  The
 * phase's planes (few: scanned) first, then the globals; whether x lies
 * between two windows is asked last, since a point inside a named range
 * is fine wherever it lies.
 */
static int point_find(const struct word_sets *c, const struct range_set *ps,
		      uint64_t x, const struct range_set **set, int64_t *k)
{
	assert(x - c->window_lo <= c->window_span);
	*set = ps;
	if ((*k = range_holding(ps, x)) >= 0)
		return 1;
	*set = &c->globals;
	if ((*k = range_holding(&c->globals, x)) >= 0)
		return 1;
	*set = NULL;
	return !meets_window(c, x, x);
}

/* Does one of hint slot hs's ways prove x fine for the phase whose tag
 * (phase + 1) is tag? */
static inline int hinted(const struct hint_slot *hs, uint32_t tag, uint64_t x)
{
	return (hs->way[0].tag == tag && x - hs->way[0].lo <= hs->way[0].span) ||
	       (hs->way[1].tag == tag && x - hs->way[1].lo <= hs->way[1].span);
}

/*
 * point_find's answer for x, a word of a launch of phase `phase` whose
 * hint slot hs did not hold it; the range found becomes the slot's newer
 * hint, its newer the older.  Out of line: the hints answer most words.
 */
static __attribute__((noinline)) int
point_search(const struct word_sets *c, const struct range_set *ps,
	     uint32_t phase, struct hint_slot *hs, uint64_t x)
{
	const struct range_set *set;
	int64_t k;
	if (!point_find(c, ps, x, &set, &k))
		return 0;
	if (set) {
		hs->way[1] = hs->way[0];
		hs->way[0] = (struct point_hint){ set->r[k].lo,
			set->r[k].last - set->r[k].lo, phase + 1 };
	}
	return 1;
}

/* point_find's answer for word w of a launch of phase `phase` whose hint
 * slots start at base, first trying the word's hint. */
static inline int point_fine(const struct word_sets *c, struct point_hints *h,
			     const struct range_set *ps, uint32_t phase,
			     uint32_t base, uint32_t w, uint64_t x)
{
	struct hint_slot *hs = &h->at[(base + w) & h->mask];
	return hinted(hs, phase + 1, x) || point_search(c, ps, phase, hs, x);
}

/* Whether range k of set holds x. */
static int holds(const struct range_set *set, int64_t k, uint64_t x)
{
	return k >= 0 && k < set->n &&
	       x - set->r[k].lo <= set->r[k].last - set->r[k].lo;
}

/*
 * The points x + t d, t = 0 .. n - 1, of a moved word whose hull is not
 * fine: the first t whose point is not fine, or -1.  Walks the progression
 * along the sorted ranges: once two points were found in ranges k and k +
 * j of one set, the next is tried in range k + 2j first (a layer's
 * weights at the layer stride), so that a point costs the range it
 * visits, not a search, while the layout repeats with the progression.
 */
static int64_t first_bad_point(const struct word_sets *c,
			       const struct range_set *ps, wide x, wide d, wide n)
{
	const struct range_set *set = NULL;
	int64_t k = 0, step = 0;
	for (wide t = 0; t < n; t++) {
		wide v = x + t * d;
		if (v < 0 || v >= U64_LIMIT)
			return (int64_t)t;
		uint64_t u = (uint64_t)v;
		if (outside_bounds(c, u)) {
			set = NULL;
			continue;
		}
		if (set && holds(set, k + step, u)) {
			k += step;
			continue;
		}
		const struct range_set *ns;
		int64_t nk = 0;
		if (!point_find(c, ps, u, &ns, &nk))
			return (int64_t)t;
		step = ns && ns == set ? nk - k : 0;
		set = ns;
		k = nk;
	}
	return -1;
}

/* What a repeat says about one body word: its deltas and its slot. */
struct word_motion {
	wide delta_sum;
	uint32_t delta_entries;
	int64_t slot;                /* -1 when no slot names the word */
};

/* Checks one word; 1 (diag filled) when an interval is not fine. */
static int check_word(const struct word_sets *c, struct point_hints *h,
		      uint32_t l, uint32_t w, uint32_t phase, uint32_t base,
		      const struct ac_repeat *r, const struct word_motion *mv)
{
	const struct ac_model *m = c->m;
	const struct range_set *ps = &c->planes[phase];
	wide x = m->words[m->launches[l].word_first + w];
	if (mv->delta_entries == 0 && mv->slot < 0) {
		if (outside_bounds(c, (uint64_t)x) ||
		    point_fine(c, h, ps, phase, base, w, (uint64_t)x))
			return 0;
		report_word(c, l, phase, w, x, x, AC_NONE);
		return 1;
	}
	wide n = r->iterations, d = mv->delta_sum;
	if (n <= POINT_LIMIT && mv->delta_entries == 1 && mv->slot < 0) {
		struct moved_word *seen = moved_slot(h, phase, (uint64_t)x, d);
		if (seen->n == n && seen->x == (uint64_t)x && seen->d == d &&
		    seen->phase == phase)
			return 0;
		/* Points in a fine hull are fine (inside its named range, or
		 * clear of the windows): the usual case, in one test. */
		wide last = x + (n - 1) * d;
		int64_t t = interval_fine(c, phase, x < last ? x : last,
					  x < last ? last : x) ? -1 :
			    first_bad_point(c, ps, x, d, n);
		if (t < 0) {
			*seen = (struct moved_word){ d, (uint64_t)x,
						     (uint32_t)n, phase };
			return 0;
		}
		wide v = x + t * d;
		assert(!interval_fine(c, phase, v, v));
		report_word(c, l, phase, w, v, v, (uint64_t)t);
		return 1;
	}
	wide lo, hi;
	if (mv->slot < 0) {
		wide last = x + (n - 1) * d;
		lo = x < last ? x : last;
		hi = x < last ? last : x;
	} else {
		/* Residue class q of t mod F: V = f_q + t*D is linear in t
		 * over t = q, q+F, ...: its extremes are at the ends. */
		wide f = r->frame_count;
		const uint64_t *fv = m->frame_values + r->frame_value_first;
		lo = hi = fv[mv->slot];
		for (wide q = 0; q < f && q < n; q++) {
			wide b = fv[(uint64_t)q * r->slot_count + (uint64_t)mv->slot];
			wide t_last = q + ((n - 1 - q) / f) * f;
			wide v0 = b + q * d, v1 = b + t_last * d;
			if (v0 < lo) lo = v0;
			if (v0 > hi) hi = v0;
			if (v1 < lo) lo = v1;
			if (v1 > hi) hi = v1;
		}
	}
	if (interval_fine(c, phase, lo, hi))
		return 0;
	report_word(c, l, phase, w, lo, hi, AC_NONE);
	return 1;
}

/* (launch, word) pairs of a repeat's deltas or slots, sorted, so a walk over
 * the body's words in order meets them in order.  The key is launch << 32
 * | word: a launch and a word count are below 2^32 (aci_validate_model), so
 * the radix sort's order by key, ties in index order, is the order by
 * (launch, word, index). */
struct pair {
	uint64_t key;
	uint32_t index;              /* within the repeat's deltas or slots */
};

static struct pair pair_of(uint64_t launch, uint64_t word, uint32_t index)
{
	assert(launch < ((uint64_t)1 << 32) && word < ((uint64_t)1 << 32));
	return (struct pair){ launch << 32 | word, index };
}

static int is_pair(const struct pair *p, uint64_t launch, uint64_t word)
{
	return p->key == (launch << 32 | word);
}

/* A repeat's (launch, word) pairs, sorted: built once per repeat. */
struct body_pairs {
	struct pair *deltas, *slots;
};

/* A walk over a body's words in order, from any launch of the body. */
struct body_walk {
	const struct ac_repeat *r;     /* NULL: no walk under way */
	uint32_t repeat;
	const struct pair *deltas, *slots;
	uint32_t next_delta, next_slot;
};

/* Sorts n pairs made in index order (a planner writes them in launch
 * order: then one pass finds them sorted); -1 on out-of-memory. */
static int sort_pairs(struct pair *p, uint32_t n)
{
	uint32_t k = 1;
	while (k < n && p[k - 1].key <= p[k].key)
		k++;
	return k < n ? aci_sort_by_key(p, n, sizeof(*p)) : 0;
}

static int pairs_init(struct body_pairs *bp, const struct ac_model *m,
		      const struct ac_repeat *r, struct aci_arena *a)
{
	bp->deltas = aci_arena_alloc(a, (size_t)r->delta_count + 1,
				     sizeof(struct pair));
	bp->slots = aci_arena_alloc(a, (size_t)r->slot_count + 1,
				    sizeof(struct pair));
	if (!bp->deltas || !bp->slots)
		return -1;
	for (uint32_t k = 0; k < r->delta_count; k++) {
		const struct ac_delta *d = &m->deltas[r->delta_first + k];
		bp->deltas[k] = pair_of(d->launch, d->word, k);
	}
	for (uint32_t k = 0; k < r->slot_count; k++) {
		const struct ac_slot *s = &m->slots[r->slot_first + k];
		bp->slots[k] = pair_of(s->launch, s->word, k);
	}
	return sort_pairs(bp->deltas, r->delta_count) ||
	       sort_pairs(bp->slots, r->slot_count) ? -1 : 0;
}

/* The first of the n sorted pairs whose launch is l or later. */
static uint32_t first_pair_from(const struct pair *p, uint32_t n, uint64_t l)
{
	uint32_t at;
	AC_PARTITION(uint32_t, at, n, i, p[i].key >> 32 < l);
	return at;
}

/* Starts a walk over repeat `repeat`'s body at its launch l. */
static void body_walk_start(struct body_walk *bw, const struct ac_model *m,
			    const struct body_pairs *bp, uint32_t repeat,
			    uint64_t l)
{
	const struct ac_repeat *r = &m->repeats[repeat];
	bw->r = r;
	bw->repeat = repeat;
	bw->deltas = bp->deltas;
	bw->slots = bp->slots;
	bw->next_delta = first_pair_from(bp->deltas, r->delta_count, l);
	bw->next_slot = first_pair_from(bp->slots, r->slot_count, l);
}

/* The motion of body word (l, w); words must be asked in order. */
static void body_walk_next(struct body_walk *bw, const struct ac_model *m,
			   uint64_t l, uint64_t w, struct word_motion *mv)
{
	const struct ac_repeat *r = bw->r;
	*mv = (struct word_motion){ 0, 0, -1 };
	while (bw->next_delta < r->delta_count) {
		const struct pair *p = &bw->deltas[bw->next_delta];
		if (!is_pair(p, l, w))
			break;
		mv->delta_sum += m->deltas[r->delta_first + p->index].delta;
		mv->delta_entries++;
		bw->next_delta++;
	}
	if (bw->next_slot < r->slot_count) {
		const struct pair *p = &bw->slots[bw->next_slot];
		if (is_pair(p, l, w)) {
			mv->slot = p->index;
			bw->next_slot++;
		}
	}
}

static void report_no_phase(const struct word_sets *c, uint32_t l)
{
	const struct ac_bytes *b = &c->m->launches[l].identity;
	struct identity_field51 id;
	aci_identity_parse(b->data, b->len, &id);
	c->diag->condition = AC_COND_C;
	c->diag->reason = AC_LAUNCH_NO_PHASE;
	c->diag->launch = l;
	/* parsed fine but named no phase: the payload is unknown */
	c->diag->identity_problem = id.problem ? id.problem : AC_ID_UNKNOWN_PHASE;
	c->diag->identity_offset = id.offset;
}

/*
 * The first of words x[w..n) that lies inside the windows' overall bounds
 * [lo, lo + span] and that no hint proves fine, or n.  No store and no
 * call: everything stays in registers.
 */
static inline uint32_t first_unhinted(const uint64_t *x, uint32_t w, uint32_t n,
				      uint64_t lo, uint64_t span,
				      const struct hint_slot *at, uint32_t base,
				      uint32_t mask, uint32_t tag)
{
	for (; w < n; w++) {
		uint64_t v = x[w];
		if (v - lo <= span && !hinted(&at[(base + w) & mask], tag, v))
			break;
	}
	return w;
}

/*
 * first_unhinted for a launch l given y, the words of an earlier launch of
 * l's phase with as many words, which the scan passed as plain (every
 * word found fine as a point): a word of l equal to the same word of y is
 * fine without a test, since a word no repeat moves is decided by its
 * phase and its value alone.  *unequal: how many of the words looked at
 * differed from y's.  A decoder's step repeats the previous step's
 * launches with most words unchanged (its cache row and length move):
 * decode's 10^6 words differ in 100,320 of the 1 M.
 */
static inline uint32_t first_unhinted_since(const uint64_t *x,
					    const uint64_t *y, uint32_t w,
					    uint32_t n, uint64_t lo,
					    uint64_t span,
					    const struct hint_slot *at,
					    uint32_t base, uint32_t mask,
					    uint32_t tag, uint32_t *unequal)
{
	uint32_t differ = 0;
	for (; w < n; w++) {
		uint64_t v = x[w];
		if (v == y[w])
			continue;
		differ++;
		if (v - lo <= span && !hinted(&at[(base + w) & mask], tag, v))
			break;
	}
	*unequal = differ;
	return w;
}

/*
 * Whether the scan compares launches with earlier ones (first_unhinted_
 * since): `misses` counts the compared launches in a row in which more
 * than a quarter of the words looked at differed (an unequal word costs
 * its comparison on top of its test); from TRUST_MISSES of them on, only
 * every TRUST_PROBE-th launch is compared, until one gains.  Speed only: a
 * comparison decides no word that its test would decide otherwise.
 */
#define TRUST_MISSES 4
#define TRUST_PROBE 64

/* (C) as the threads of program.c share it: read-only once built. */
struct word_check {
	struct word_sets sets;
	uint32_t *moved_by;           /* per launch: the repeat one of whose
				       * deltas or slots names a word of it,
				       * or UINT32_MAX */
	struct body_pairs *pairs;     /* per repeat */
	struct aci_arena arena;       /* every table above but the windows */
};

/* Where a scan of the launch table stands: word w of launch l. */
struct scan_at {
	uint32_t l, w;
};

/*
 * The hot loop of (C): from *at, the first word of launches [at->l, to)
 * that lies inside the windows' overall bounds and that no hint proves
 * fine, or the first launch that needs more than hints: one with no
 * phase, or with a word some repeat moves.  *at is left there (at->l ==
 * to when there is none).  Every word passed over is fine.
 */
static inline void scan_hinted(const struct word_check *c,
			       struct point_hints *h,
			       const uint32_t *phase_of, uint32_t to,
			       struct scan_at *at)
{
	const struct ac_launch *la = c->sets.m->launches;
	const uint64_t *words = c->sets.m->words;
	const uint64_t lo = c->sets.window_lo, span = c->sets.window_span;
	uint32_t l = at->l, w = at->w;
	for (; l < to; l++, w = 0) {
		uint32_t phase = phase_of[l], n = la[l].word_count;
		if (phase == NO_PHASE || c->moved_by[l] != UINT32_MAX)
			break;
		if (n == 0)
			continue;       /* a hand-built model's words may be NULL */
		const uint64_t *x = words + la[l].word_first;
		w = first_unhinted(x, w, n, lo, span, h->at,
				   hint_base(phase, x[0]), h->mask, phase + 1);
		if (w < n)
			break;
		h->last[phase] = l;
	}
	*at = (struct scan_at){ l, w };
}

/*
 * scan_hinted's answer, comparing launches with earlier ones while that
 * gains (first_unhinted_since, TRUST_MISSES): a launch is compared with
 * the launch a period back when that one has its phase (the period: where
 * the last compared launch found its phase), else with the last compared
 * launch of its phase, which sets the period.  Every launch of [h->from,
 * l) was passed, and a plain one (not moved, with a phase) as points.
 * While comparisons lose, runs of TRUST_PROBE launches go to scan_hinted
 * as they are, between probes.
 */
static void scan_plain(const struct word_check *c, struct point_hints *h,
		       const uint32_t *phase_of, uint32_t to, struct scan_at *at)
{
	const struct ac_launch *la = c->sets.m->launches;
	const uint64_t *words = c->sets.m->words;
	const uint64_t lo = c->sets.window_lo, span = c->sets.window_span;
	if (!h->compare) {
		scan_hinted(c, h, phase_of, to, at);
		return;
	}
	uint32_t l = at->l, w = at->w, from = h->from, period = h->period;
	uint32_t misses = h->misses;
	while (l < to) {
		if (misses >= TRUST_MISSES && l % TRUST_PROBE != 0) {
			uint64_t probe = ((uint64_t)l / TRUST_PROBE + 1) *
					 TRUST_PROBE;
			uint32_t until = probe < to ? (uint32_t)probe : to;
			struct scan_at a = { l, w };
			scan_hinted(c, h, phase_of, until, &a);
			l = a.l;
			w = a.w;
			if (l < until)
				break;
			continue;
		}
		uint32_t phase = phase_of[l], n = la[l].word_count;
		if (phase == NO_PHASE || c->moved_by[l] != UINT32_MAX)
			break;
		/* a hand-built model's words may be NULL: no offset from it */
		const uint64_t *x = n ? words + la[l].word_first : NULL;
		uint32_t prev;
		if (misses < TRUST_MISSES && l - from >= period &&
		    phase_of[l - period] == phase &&
		    c->moved_by[l - period] == UINT32_MAX) {
			prev = l - period;
		} else if ((prev = h->last[phase]) != UINT32_MAX) {
			period = l - prev;
		}
		assert(prev == UINT32_MAX || (prev >= from && prev < l));
		if (n == 0) {
			/* a hand-built model's words may be NULL */
		} else if (prev != UINT32_MAX && la[prev].word_count == n) {
			uint32_t unequal, w0 = w;
			w = first_unhinted_since(x, words + la[prev].word_first,
						 w, n, lo, span, h->at,
						 hint_base(phase, x[0]), h->mask,
						 phase + 1, &unequal);
			misses = 4 * unequal > w - w0 ? misses + 1 : 0;
			h->compared += w - w0 - unequal;
		} else {
			w = first_unhinted(x, w, n, lo, span, h->at,
					   hint_base(phase, x[0]), h->mask,
					   phase + 1);
		}
		if (w < n)
			break;
		h->last[phase] = l;
		l++;
		w = 0;
	}
	h->period = period;
	h->misses = misses;
	*at = (struct scan_at){ l, w };
}

/* A launch with a word some repeat moves: each word with its motion. */
static int check_moved_launch(const struct word_sets *c, struct point_hints *h,
			      uint32_t l, uint32_t phase, struct body_walk *bw)
{
	const struct ac_model *m = c->m;
	const struct ac_launch *la = &m->launches[l];
	assert(la->word_count > 0);
	uint32_t base = hint_base(phase, m->words[la->word_first]);
	for (uint32_t w = 0; w < la->word_count; w++) {
		struct word_motion mv;
		body_walk_next(bw, m, l, w, &mv);
		if (check_word(c, h, l, w, phase, base, bw->r, &mv))
			return 1;
	}
	return 0;
}

/*
 * Where scan_plain stopped, at launch at->l < to: checks what it left,
 * and moves *at past it.  1 (diag filled) when that is not fine.
 */
static int check_stop(const struct word_check *wc, const struct word_sets *c,
		      struct point_hints *h, const uint32_t *phase_of,
		      struct body_walk *bw, struct scan_at *at)
{
	const struct ac_model *m = c->m;
	uint32_t l = at->l, phase = phase_of[l], r = wc->moved_by[l];
	if (phase == NO_PHASE) {
		report_no_phase(c, l);
		return 1;
	}
	if (r != UINT32_MAX) {
		if (!bw->r || bw->repeat != r)
			body_walk_start(bw, m, &wc->pairs[r], r, l);
		*at = (struct scan_at){ l + 1, 0 };
		return check_moved_launch(c, h, l, phase, bw);
	}
	/* a word no hint holds */
	uint32_t w = at->w;
	const uint64_t *x = m->words + m->launches[l].word_first;
	*at = (struct scan_at){ l, w + 1 };
	uint32_t base = hint_base(phase, x[0]);
	if (point_search(c, &c->planes[phase], phase,
			 &h->at[(base + w) & h->mask], x[w]))
		return 0;
	assert(!interval_fine(c, phase, x[w], x[w]));
	report_word(c, l, phase, w, x[w], x[w], AC_NONE);
	return 1;
}

/* The bytes of a check's tables, by the model's counts (buckets are at
 * most 2n + 1 a set of n ranges): one block, usually. */
static size_t check_hint(const struct ac_model *m)
{
	uint64_t named = (uint64_t)m->n_planes + m->n_globals;
	uint64_t bytes = ((uint64_t)m->n_launches + 1) * sizeof(uint32_t) +
			 ((uint64_t)m->n_repeats + 1) *
				 (sizeof(struct body_pairs) + 2 * 16) +
			 ((uint64_t)m->n_phases + 2) *
				 (sizeof(struct range_set) + 3 * 16) +
			 named * (sizeof(uint32_t) + sizeof(struct range) +
				  2 * sizeof(uint32_t)) +
			 ((uint64_t)m->n_deltas + m->n_slots) *
				 sizeof(struct pair);
	/* a larger check's tables take blocks of their own */
	return bytes < ((uint64_t)256 << 20) ? (size_t)bytes : (size_t)256 << 20;
}

struct word_check *aci_word_check_new(const struct ac_model *m,
				      const uint32_t *globals,
				      const uint32_t *planes)
{
	struct word_check *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	aci_arena_init(&c->arena, check_hint(m));
	c->sets.m = m;
	c->moved_by = aci_arena_alloc(&c->arena, (size_t)m->n_launches + 1,
				      sizeof(*c->moved_by));
	c->pairs = aci_arena_calloc(&c->arena, (size_t)m->n_repeats + 1,
				    sizeof(*c->pairs));
	if (!c->moved_by || !c->pairs ||
	    index_named(&c->sets, globals, planes, &c->arena) != 0 ||
	    merge_windows(&c->sets) != 0) {
		aci_word_check_free(c);
		return NULL;
	}
	for (uint32_t l = 0; l < m->n_launches; l++)
		c->moved_by[l] = UINT32_MAX;
	for (uint32_t r = 0; r < m->n_repeats; r++) {
		const struct ac_repeat *rp = &m->repeats[r];
		for (uint32_t k = 0; k < rp->delta_count; k++)
			c->moved_by[m->deltas[rp->delta_first + k].launch] = r;
		for (uint32_t k = 0; k < rp->slot_count; k++)
			c->moved_by[m->slots[rp->slot_first + k].launch] = r;
		if (pairs_init(&c->pairs[r], m, rp, &c->arena) != 0) {
			aci_word_check_free(c);
			return NULL;
		}
	}
	return c;
}

void aci_word_check_free(struct word_check *c)
{
	if (!c)
		return;
	free(c->sets.windows);
	aci_arena_free(&c->arena);
	free(c);
}

/* aci_word_check_range, comparing launches with earlier ones or not;
 * *compared (when not NULL): the words found equal to an earlier
 * launch's. */
static int check_range(const struct word_check *c, const uint32_t *phase_of,
		       uint32_t from, uint32_t to, int compare,
		       struct ac_diag *diag, uint64_t *compared)
{
	assert(from <= to && to <= c->sets.m->n_launches);
	struct word_sets sets = c->sets;   /* its diag: this caller's */
	sets.diag = diag;
	struct body_walk bw = { 0 };
	struct point_hints hints;
	if (hints_init(&hints, to - from, c->sets.m->n_phases) != 0)
		return -1;
	hints.from = from;
	hints.period = 1;
	hints.misses = 0;
	hints.compare = compare;
	hints.compared = 0;
	int rc = 0;
	for (struct scan_at at = { from, 0 }; !rc;) {
		scan_plain(c, &hints, phase_of, to, &at);
		if (at.l == to)
			break;
		if (check_stop(c, &sets, &hints, phase_of, &bw, &at)) {
			diag->verdict = 2 + diag->launch;
			rc = 1;
		}
	}
	free(hints.at);
	if (compared)
		*compared = hints.compared;
	return rc;
}

int aci_word_check_range(const struct word_check *c, const uint32_t *phase_of,
			 uint32_t from, uint32_t to, struct ac_diag *diag)
{
	return check_range(c, phase_of, from, to, 1, diag, NULL);
}

int aci_check_words_compared(const struct ac_model *m, const uint32_t *phase_of,
			     const uint32_t *globals, const uint32_t *planes,
			     int compare, struct ac_diag *diag,
			     uint64_t *compared)
{
	struct word_check *c = aci_word_check_new(m, globals, planes);
	if (!c)
		return -1;
	int rc = check_range(c, phase_of, 0, m->n_launches, compare, diag,
			     compared);
	aci_word_check_free(c);
	return rc;
}

int aci_check_words(const struct ac_model *m, const uint32_t *phase_of,
		    const uint32_t *globals, const uint32_t *planes,
		    struct ac_diag *diag)
{
	return aci_check_words_compared(m, phase_of, globals, planes, 1, diag,
					NULL);
}
