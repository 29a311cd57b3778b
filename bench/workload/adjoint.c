/* SPDX-License-Identifier: MIT */
/*
 * adjoint: a checkpointed reverse sweep over a tape of N nodes
 * (shared/seeds/004_*, AadCheckpointPlan), each node a row of PATHS
 * floats (one per Monte Carlo path).
 *
 * The tape: nodes 0 .. INPUTS-1 load the inputs; node j reads j - 1 and,
 * for ADD and MUL, one more node: an input, or one at most REACH + 1
 * back.  It is cut into S = round(sqrt(N)) segments at bound[s] = s N / S.
 * The carry set of boundary b is C[b] = { i < b : a node j >= b reads i };
 * a carry node last read at or past the final internal boundary is
 * global.  Phases, one forward and one reverse per segment, run
 * fwd.0 .. fwd.S-1, then rev.S-1 .. rev.0:
 *
 *   fwd.s   carried ckpt<s> (C[bound[s]] less the globals, in the
 *           checkpoint window); fresh loc (the segment's values, in the
 *           workspace); fresh ckpt<s+1>, which its last launches fill
 *   rev.s   carried ckpt<s>; fresh loc (the piece recomputed), adj (its
 *           nodes' adjoints), tmp; then the piece's reverse
 *
 * Global carries are globals (v<i>), and so are the reverse accumulators
 * of every carry node (acc).  The reuse fault is a checkpoint kept as a
 * ring of two slices for one boundary: ckpt<m+2> over ckpt<m>, which
 * rev.m still carries (D).  The stride fault: fwd.m writes its last
 * checkpoint value one row past ckpt<m+1>'s end (C).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "builder.h"
#include "generators.h"

#define PATHS 256
#define ROW (PATHS * WB_F32)
#define INPUTS 4
#define REACH 8         /* a second argument lies 2 .. REACH + 1 back */
#define NODE_WORDS 22   /* a node's words, forward and reverse, on average */
#define MIN_NODES 25    /* 5 segments: room for both faults */

enum op { OP_INPUT, OP_GELU, OP_ADD, OP_MUL };

struct node {
	enum op op;
	uint32_t a, b;          /* arguments (b: ADD and MUL only) */
};

/* The identities of one phase's launches, by what they do. */
enum { ID_INPUT, ID_GELU, ID_ADD, ID_MUL, ID_SAVE, ID_ZERO, ID_SEED,
       ID_ADJ_MUL, ID_ADJ_ADD, ID_GRAD, ID_COUNT };
static const char *const id_names[ID_COUNT] = {
	"input.copy", "gelu", "add", "mul", "ckpt.copy", "adj.zero",
	"adj.seed", "adj.mul", "adj.add", "grad.copy",
};

struct phase {
	uint32_t index;
	struct ac_bytes id[ID_COUNT];
};

struct adjoint {
	struct wb *b;
	struct workload *w;
	enum workload_fault fault;
	uint32_t nodes, segments;
	uint32_t *last_use;     /* greatest reader; 0 when unread */
	uint32_t *acc;          /* accumulator row of a carry node, or -1 */
	uint32_t n_acc;
	uint64_t *slice;        /* checkpoint offset of boundary s's carry */
	uint32_t *slot_first;   /* boundary s's slots: slots[slot_first[s]..] */
	uint32_t *slots;
	uint32_t n_globals;
	uint32_t global_node[INPUTS + REACH + 1];
	uint64_t global_at[INPUTS + REACH + 1];
	uint64_t x, grad, acc_at;       /* state globals */
	uint64_t loc, adj, tmp, longest;/* workspace; longest segment */
	int reuse_at, stride_at;        /* the faulty boundary m, or -1 */
};

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Node j of the tape: a fixed function of j, so nothing stores the tape. */
static struct node node_of(uint32_t j)
{
	if (j < INPUTS)
		return (struct node){ OP_INPUT, j, j };
	uint64_t h = mix(j);
	uint32_t kind = h & 3, pick = (h >> 2) & 3;
	uint32_t far = 2 + (uint32_t)((h >> 4) % REACH);
	uint32_t b = pick == 0 || j < INPUTS + far ?
		(uint32_t)((h >> 8) % INPUTS) : j - far;
	enum op op = kind == 0 ? OP_GELU : kind == 3 ? OP_MUL : OP_ADD;
	return (struct node){ op, j - 1, b };
}

static uint32_t bound(const struct adjoint *a, uint32_t s)
{
	return (uint32_t)((uint64_t)s * a->nodes / a->segments);
}

static uint32_t segment_of(const struct adjoint *a, uint32_t i)
{
	uint32_t s = (uint32_t)((uint64_t)i * a->segments / a->nodes);
	while (bound(a, s + 1) <= i)
		s++;
	while (bound(a, s) > i)
		s--;
	return s;
}

static void read_tape(struct adjoint *a)
{
	a->last_use = wb_calloc(a->nodes, sizeof(*a->last_use));
	for (uint32_t j = INPUTS; j < a->nodes; j++) {
		struct node n = node_of(j);
		a->last_use[n.a] = j;
		if (n.op != OP_GELU)
			a->last_use[n.b] = j;
	}
}

static int is_global(const struct adjoint *a, uint32_t i)
{
	uint32_t last = bound(a, a->segments - 1);
	return i < last && a->last_use[i] >= last;
}

/* Read past its own segment: a carry node, with a reverse accumulator. */
static int is_carry(const struct adjoint *a, uint32_t i)
{
	uint32_t s = segment_of(a, i);
	return s + 1 < a->segments && a->last_use[i] >= bound(a, s + 1);
}

/*
 * The nodes that may be read past boundary b, in order: only the inputs
 * and the REACH + 1 nodes before b can be.  Iterate with
 * for (i = 0; i < b; i = next_candidate(i, b)).
 */
static uint32_t next_candidate(uint32_t i, uint32_t b)
{
	uint32_t near = b > REACH + 1 ? b - REACH - 1 : 0;
	return i + 1 == INPUTS && near > INPUTS ? near : i + 1;
}

/* Boundary s's checkpoint slots: C[bound[s]] less the globals. */
static void carry_sets(struct adjoint *a)
{
	uint32_t per = INPUTS + REACH + 1;
	a->slot_first = wb_calloc(a->segments + 1, sizeof(*a->slot_first));
	a->slots = wb_calloc((size_t)a->segments * per, sizeof(*a->slots));
	uint32_t n = 0;
	for (uint32_t s = 0; s < a->segments; s++) {
		a->slot_first[s] = n;
		uint32_t b = bound(a, s);
		for (uint32_t i = 0; s > 0 && i < b; i = next_candidate(i, b))
			if (a->last_use[i] >= b && !is_global(a, i))
				a->slots[n++] = i;
	}
	a->slot_first[a->segments] = n;
}

static uint32_t slice_rows(const struct adjoint *a, uint32_t s)
{
	return a->slot_first[s + 1] - a->slot_first[s];
}

/* Where the reuse fault can go: ckpt<m+2> fits over a non-empty ckpt<m>
 * without reaching ckpt<m+1>.  The stride fault needs ckpt<m+1>. */
static void pick_faults(struct adjoint *a)
{
	a->reuse_at = a->stride_at = -1;
	uint32_t mid = a->segments / 2;
	for (uint32_t d = 0; d < a->segments; d++)
		for (int sign = -1; sign <= 1; sign += 2) {
			int64_t m = (int64_t)mid + sign * (int64_t)d;
			if (m < 1 || m + 2 >= a->segments)
				continue;
			uint32_t far = slice_rows(a, (uint32_t)m + 2);
			if (a->reuse_at < 0 && far >= 1 &&
			    far <= slice_rows(a, (uint32_t)m))
				a->reuse_at = (int)m;
			if (a->stride_at < 0 && slice_rows(a, (uint32_t)m + 1))
				a->stride_at = (int)m;
		}
}

static void place_checkpoint(struct adjoint *a)
{
	a->slice = wb_calloc(a->segments + 1, sizeof(*a->slice));
	uint64_t base = WB_WINDOW_BASE(1), at = base;
	for (uint32_t s = 0; s <= a->segments; s++) {
		a->slice[s] = at;
		if (s < a->segments)
			at += (uint64_t)slice_rows(a, s) * ROW;
	}
	wb_window_at(a->b, "checkpoint", 1, at - base);
	if (a->fault == WORKLOAD_REUSE && a->reuse_at >= 0)
		a->slice[a->reuse_at + 2] = a->slice[a->reuse_at];
}

static void place_state(struct adjoint *a)
{
	struct wb *b = a->b;
	uint64_t base = WB_WINDOW_BASE(0), at = base;
	a->x = wb_global(b, &at, INPUTS * ROW, "x");
	a->grad = wb_global(b, &at, INPUTS * ROW, "grad");
	uint32_t last = bound(a, a->segments - 1);
	for (uint32_t i = 0; i < last; i = next_candidate(i, last))
		if (is_global(a, i)) {
			a->global_node[a->n_globals] = i;
			a->global_at[a->n_globals++] =
				wb_global(b, &at, ROW, "v%u", i);
		}
	a->acc = wb_calloc(a->nodes, sizeof(*a->acc));
	for (uint32_t i = 0; i < a->nodes; i++)
		a->acc[i] = is_carry(a, i) ? a->n_acc++ : UINT32_MAX;
	if (a->n_acc)
		a->acc_at = wb_global(b, &at, (uint64_t)a->n_acc * ROW, "acc");
	wb_window_at(b, "state", 0, at - base);
}

static void place_workspace(struct adjoint *a)
{
	for (uint32_t s = 0; s < a->segments; s++) {
		uint64_t len = bound(a, s + 1) - bound(a, s);
		if (len > a->longest)
			a->longest = len;
	}
	uint64_t base = WB_WINDOW_BASE(2), span = a->longest * ROW;
	a->loc = base;
	a->adj = base + span;
	a->tmp = base + 2 * span;
	wb_window_at(a->b, "workspace", 2, 2 * span + ROW);
}

/* Node i's value as segment s's launches see it. */
static uint64_t value_at(const struct adjoint *a, uint32_t s, uint32_t i)
{
	for (uint32_t g = 0; g < a->n_globals; g++)
		if (a->global_node[g] == i)
			return a->global_at[g];
	if (i >= bound(a, s))
		return a->loc + (uint64_t)(i - bound(a, s)) * ROW;
	const uint32_t *slot = a->slots + a->slot_first[s];
	for (uint32_t k = 0; k < slice_rows(a, s); k++)
		if (slot[k] == i)
			return a->slice[s] + (uint64_t)k * ROW;
	abort();        /* not in C[bound[s]]: the carry sets are wrong */
}

static uint64_t adjoint_at(const struct adjoint *a, uint32_t s, uint32_t i)
{
	if (a->acc[i] != UINT32_MAX)
		return a->acc_at + (uint64_t)a->acc[i] * ROW;
	return a->adj + (uint64_t)(i - bound(a, s)) * ROW;
}

/* Boundary s's slice, named for its boundary: a slice moved over another
 * is a different plane even when offset and size agree. */
static void checkpoint_plane(struct adjoint *a, uint32_t s, int carried)
{
	char name[24];
	snprintf(name, sizeof(name), "ckpt%u", s);
	wb_plane(a->b, name, a->slice[s], (uint64_t)slice_rows(a, s) * ROW,
		 carried);
}

static void phase_of(struct adjoint *a, struct phase *ph, const char *dir,
		     uint32_t s)
{
	ph->index = wb_phase(a->b, "%s.%u", dir, s);
	uint32_t len = bound(a, s + 1) - bound(a, s);
	if (s > 0 && slice_rows(a, s))
		checkpoint_plane(a, s, 1);
	wb_plane(a->b, "loc", a->loc, (uint64_t)len * ROW, 0);
	if (dir[0] == 'f' && s + 1 < a->segments && slice_rows(a, s + 1))
		checkpoint_plane(a, s + 1, 0);
	if (dir[0] == 'r') {
		wb_plane(a->b, "adj", a->adj, (uint64_t)len * ROW, 0);
		wb_plane(a->b, "tmp", a->tmp, ROW, 0);
	}
	for (int i = 0; i < ID_COUNT; i++)
		ph->id[i] = wb_identity(a->b, ph->index, id_names[i]);
}

/* Node j computed in segment s's phase. */
static void emit_node(struct adjoint *a, const struct phase *ph, uint32_t s,
		      uint32_t j)
{
	struct node n = node_of(j);
	uint64_t dst = value_at(a, s, j);
	if (n.op == OP_INPUT)
		WB_LAUNCH(a->b, ph->id[ID_INPUT], ph->index, ARENA_K_COPY, dst,
			  a->x + (uint64_t)j * ROW, PATHS);
	else if (n.op == OP_GELU)
		WB_LAUNCH(a->b, ph->id[ID_GELU], ph->index, ARENA_K_GELU, dst,
			  value_at(a, s, n.a), PATHS);
	else
		WB_LAUNCH(a->b, ph->id[n.op == OP_ADD ? ID_ADD : ID_MUL],
			  ph->index, n.op == OP_ADD ? ARENA_K_ADD : ARENA_K_MUL,
			  dst, value_at(a, s, n.a), value_at(a, s, n.b), PATHS);
}

/* fwd.s: the piece, then the carry of the next boundary saved. */
static void emit_forward(struct adjoint *a, uint32_t s)
{
	struct phase ph;
	phase_of(a, &ph, "fwd", s);
	for (uint32_t j = bound(a, s); j < bound(a, s + 1); j++)
		emit_node(a, &ph, s, j);
	if (s + 1 == a->segments)
		return;
	uint32_t first = a->slot_first[s + 1], n = slice_rows(a, s + 1);
	for (uint32_t k = 0; k < n; k++) {
		uint64_t dst = a->slice[s + 1] + (uint64_t)k * ROW;
		int faulty = a->fault == WORKLOAD_STRIDE &&
			     (int)s == a->stride_at && k + 1 == n;
		if (faulty)
			dst += ROW;     /* one row past the slice */
		uint64_t l = WB_LAUNCH(a->b, ph.id[ID_SAVE], ph.index,
				       ARENA_K_COPY, dst,
				       value_at(a, s, a->slots[first + k]),
				       PATHS);
		if (faulty)
			generator_breaks_c(a->w, l);
	}
}

/* adj[to] += adj[from] * value[by] (by == UINT32_MAX: no factor). */
static void emit_accumulate(struct adjoint *a, const struct phase *ph,
			    uint32_t s, uint32_t to, uint32_t from, uint32_t by)
{
	uint64_t src = adjoint_at(a, s, from), dst = adjoint_at(a, s, to);
	if (by != UINT32_MAX) {
		WB_LAUNCH(a->b, ph->id[ID_ADJ_MUL], ph->index, ARENA_K_MUL,
			  a->tmp, src, value_at(a, s, by), PATHS);
		src = a->tmp;
	}
	WB_LAUNCH(a->b, ph->id[ID_ADJ_ADD], ph->index, ARENA_K_ADD, dst, dst,
		  src, PATHS);
}

/* Node j's reverse: its adjoint pushed to its arguments. */
static void emit_node_reverse(struct adjoint *a, const struct phase *ph,
			      uint32_t s, uint32_t j)
{
	struct node n = node_of(j);
	if (n.op == OP_INPUT) {
		WB_LAUNCH(a->b, ph->id[ID_GRAD], ph->index, ARENA_K_COPY,
			  a->grad + (uint64_t)j * ROW, adjoint_at(a, s, j),
			  PATHS);
	} else if (n.op == OP_GELU) {
		emit_accumulate(a, ph, s, n.a, j, n.a);
	} else if (n.op == OP_ADD) {
		emit_accumulate(a, ph, s, n.a, j, UINT32_MAX);
		emit_accumulate(a, ph, s, n.b, j, UINT32_MAX);
	} else {
		emit_accumulate(a, ph, s, n.a, j, n.b);
		emit_accumulate(a, ph, s, n.b, j, n.a);
	}
}

/* rev.s: zero the adjoints, recompute the piece, walk it backwards. */
static void emit_reverse(struct adjoint *a, uint32_t s)
{
	struct phase ph;
	phase_of(a, &ph, "rev", s);
	uint32_t lo = bound(a, s), hi = bound(a, s + 1);
	WB_LAUNCH(a->b, ph.id[ID_ZERO], ph.index, ARENA_K_FILL, a->adj,
		  (uint64_t)(hi - lo) * PATHS, 0);
	if ((int)s == a->reuse_at && a->fault == WORKLOAD_REUSE)
		generator_breaks_d(a->w, wb_instance(a->b));
	if (s + 1 == a->segments) {
		if (a->n_acc)
			WB_LAUNCH(a->b, ph.id[ID_ZERO], ph.index, ARENA_K_FILL,
				  a->acc_at, (uint64_t)a->n_acc * PATHS, 0);
		WB_LAUNCH(a->b, ph.id[ID_SEED], ph.index, ARENA_K_FILL,
			  adjoint_at(a, s, hi - 1), PATHS, wb_f32(1.0f));
	}
	for (uint32_t j = lo; j < hi; j++)
		emit_node(a, &ph, s, j);
	for (uint32_t j = hi; j-- > lo;)
		emit_node_reverse(a, &ph, s, j);
}

static void size_tape(struct adjoint *a, uint64_t words)
{
	uint64_t n = words / NODE_WORDS;
	a->nodes = n < MIN_NODES ? MIN_NODES : (uint32_t)n;
	a->segments = (uint32_t)lround(sqrt((double)a->nodes));
}

void generate_adjoint(struct wb *b, const struct workload_spec *spec,
		      struct workload *w)
{
	struct adjoint a = { .b = b, .w = w, .fault = spec->fault };
	size_tape(&a, spec->words);
	read_tape(&a);
	carry_sets(&a);
	pick_faults(&a);
	place_state(&a);
	place_checkpoint(&a);
	place_workspace(&a);
	for (uint32_t s = 0; s < a.segments; s++)
		emit_forward(&a, s);
	for (uint32_t s = a.segments; s-- > 0;)
		emit_reverse(&a, s);
	wb_ref(b, 0, wb_launch_count(b));
	snprintf(w->shape, sizeof(w->shape), "%u nodes, %u segments, "
		 "%u global carries", a.nodes, a.segments, a.n_globals);
	free(a.last_use);
	free(a.acc);
	free(a.slice);
	free(a.slot_first);
	free(a.slots);
}
