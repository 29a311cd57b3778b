/* SPDX-License-Identifier: MIT */
/*
 * The library against the naive checker of the tests (tests/naive.c) on
 * programs of the tests' generator (tests/gen.c), mutated field by field:
 * a structure-aware differential tester.  The input is
 *
 *   u64 LE seed: the program gen_model_aimed makes from it (planned like a
 *   real planner's, then aimed at one verdict class or malformed),
 *   then edits to the end, 13 bytes each (at most MAX_EDITS):
 *     byte op (mod 5), byte what, u16 index, byte how, u64 value
 *     0 set       field `what` of element `index` (fields[]) to a value
 *                 made by `how` (value_of): the u64, the old value nudged
 *                 or with a bit flipped, a boundary, another element's
 *                 (for the alignment: the old value)
 *     1 copy      element `index` of array `what` over another one
 *     2 truncate  array `what` to (value mod (count + 1)) elements
 *     3 bytes     a name or identity: another one's, cut short, or a byte
 *                 changed (windows, globals, planes, phases, launches)
 *     4 align     the alignment, as for set
 *
 * Edits keep every array inside its allocation (counts only shrink) but
 * may point runs (first, count) anywhere: the checkers must call that
 * malformed.  The library and the naive checker must agree on malformed
 * or not and on the verdict; the diagnostic must name the naive checker's
 * condition, launch (C) or instance and phase (D); an ac_program with the
 * references appended in one batch must give the same verdict and the
 * naive executed length.  Programs the naive checker would take too long
 * on (unrolled sequences or enumerated ordinals beyond NAIVE_BUDGET) are
 * only certified by the library.
 */
#include <stddef.h>

#include "fuzz.h"
#include "gen.h"
#include "naive.h"

#define MAX_EDITS 64
#define NAIVE_BUDGET 4096u      /* executed launches; ordinals per word */

/* ---- the editable fields ---- */

/* Field `at` (width bytes) of the elements of the array at `array` in
 * struct ac_model, whose count (32 or 64 bits) is at `count`. */
struct field {
	size_t array, count, count_width, elem, at, width;
};

#define ARRAY(a, n) offsetof(struct ac_model, a),                        \
	offsetof(struct ac_model, n), sizeof(((struct ac_model *)0)->n)
#define FIELD(a, n, type, member) { ARRAY(a, n), sizeof(type),             \
	offsetof(type, member), sizeof(((type *)0)->member) }
#define VALUES(a, n) { ARRAY(a, n), sizeof(uint64_t), 0, sizeof(uint64_t) }

static const struct field fields[] = {
	FIELD(windows, n_windows, struct ac_window, base),
	FIELD(windows, n_windows, struct ac_window, size),
	FIELD(globals, n_globals, struct ac_tensor, offset),
	FIELD(globals, n_globals, struct ac_tensor, size),
	FIELD(planes, n_planes, struct ac_tensor, offset),
	FIELD(planes, n_planes, struct ac_tensor, size),
	FIELD(planes, n_planes, struct ac_tensor, carried),
	FIELD(phases, n_phases, struct ac_phase, plane_first),
	FIELD(phases, n_phases, struct ac_phase, plane_count),
	FIELD(launches, n_launches, struct ac_launch, word_first),
	FIELD(launches, n_launches, struct ac_launch, word_count),
	VALUES(words, n_words),
	FIELD(repeats, n_repeats, struct ac_repeat, first),
	FIELD(repeats, n_repeats, struct ac_repeat, count),
	FIELD(repeats, n_repeats, struct ac_repeat, iterations),
	FIELD(repeats, n_repeats, struct ac_repeat, delta_first),
	FIELD(repeats, n_repeats, struct ac_repeat, delta_count),
	FIELD(repeats, n_repeats, struct ac_repeat, slot_first),
	FIELD(repeats, n_repeats, struct ac_repeat, slot_count),
	FIELD(repeats, n_repeats, struct ac_repeat, frame_count),
	FIELD(repeats, n_repeats, struct ac_repeat, frame_value_first),
	FIELD(deltas, n_deltas, struct ac_delta, launch),
	FIELD(deltas, n_deltas, struct ac_delta, word),
	FIELD(deltas, n_deltas, struct ac_delta, delta),
	FIELD(slots, n_slots, struct ac_slot, launch),
	FIELD(slots, n_slots, struct ac_slot, word),
	VALUES(frame_values, n_frame_values),
	FIELD(refs, n_refs, struct ac_ref, first),
	FIELD(refs, n_refs, struct ac_ref, count),
};
#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

/* The arrays whose elements start with a name or identity. */
static const struct field named[] = {
	FIELD(windows, n_windows, struct ac_window, name),
	FIELD(globals, n_globals, struct ac_tensor, name),
	FIELD(planes, n_planes, struct ac_tensor, name),
	FIELD(phases, n_phases, struct ac_phase, identity),
	FIELD(launches, n_launches, struct ac_launch, identity),
};
#define N_NAMED (sizeof(named) / sizeof(named[0]))

/* gen.c allocated every array, so the model's const is only a promise
 * to the checkers. */
static uint8_t *array_of(struct ac_model *m, const struct field *f)
{
	uint8_t *a;
	memcpy(&a, (uint8_t *)m + f->array, sizeof(a));
	return a;
}

static uint64_t count_of(const struct ac_model *m, const struct field *f)
{
	return fuzz_get((const uint8_t *)m + f->count, f->count_width);
}

/* Element i of f's array, or NULL when it has none. */
static uint8_t *element(struct ac_model *m, const struct field *f, uint64_t i)
{
	uint64_t n = count_of(m, f);
	return n ? array_of(m, f) + (i % n) * f->elem : NULL;
}

/* ---- edits ---- */

struct edit {
	unsigned int op, what, index, how;
	uint64_t value;
};

static uint64_t value_of(struct ac_model *m, const struct field *f,
			 uint64_t old, const struct edit *e)
{
	static const uint64_t boundaries[] = {
		0, 1, 2, 63, 64, 4095, 4096, 0x7fffffff, 0xffffffff,
		0x100000000ull, 1ull << 62, 1ull << 63, UINT64_MAX - 1,
		UINT64_MAX,
	};
	switch (e->how % 5) {
	case 0:
		return e->value;
	case 1:
		return old + (uint64_t)(int64_t)(int8_t)e->value;
	case 2:
		return old ^ (1ull << (e->value % 64));
	case 3:
		return boundaries[e->value % (sizeof(boundaries) /
					      sizeof(boundaries[0]))];
	default: {
		const uint8_t *other = element(m, f, e->value);
		return other ? fuzz_get(other + f->at, f->width) : old;
	}
	}
}

static void edit_field(struct ac_model *m, const struct edit *e)
{
	const struct field *f = &fields[e->what % N_FIELDS];
	uint8_t *x = element(m, f, e->index);
	if (!x)
		return;
	uint64_t v = value_of(m, f, fuzz_get(x + f->at, f->width), e);
	/* The one byte field, carried, is 0 or 1 in a model (validate.c);
	 * what the spec says of other values, the naive checker cannot. */
	fuzz_put(x + f->at, f->width, f->width == 1 ? v & 1 : v);
}

static void edit_copy(struct ac_model *m, const struct edit *e)
{
	const struct field *f = &fields[e->what % N_FIELDS];
	uint8_t *to = element(m, f, e->index);
	if (to)
		memmove(to, element(m, f, e->value), f->elem);
}

static void edit_truncate(struct ac_model *m, const struct edit *e)
{
	const struct field *f = &fields[e->what % N_FIELDS];
	fuzz_put((uint8_t *)m + f->count, f->count_width,
		 e->value % (count_of(m, f) + 1));
}

/* Names live in gen.c's one block of bytes: any may point at another's. */
static void edit_bytes(struct ac_model *m, const struct edit *e)
{
	const struct field *f = &named[e->what % N_NAMED];
	uint8_t *x = element(m, f, e->index);
	if (!x)
		return;
	struct ac_bytes b;
	memcpy(&b, x + f->at, sizeof(b));
	if (e->how % 3 == 0) {
		const struct field *g = &named[(e->what / N_NAMED) % N_NAMED];
		const uint8_t *y = element(m, g, e->value);
		if (y)
			memcpy(&b, y + g->at, sizeof(b));
	} else if (e->how % 3 == 1) {
		b.len = b.len ? (uint32_t)(e->value % b.len) : 0;
	} else if (b.len) {
		((uint8_t *)b.data)[e->value % b.len] ^= (uint8_t)(e->value >> 8 | 1);
	}
	memcpy(x + f->at, &b, sizeof(b));
}

static void edit_alignment(struct ac_model *m, const struct edit *e)
{
	static const struct field self = { 0, 0, 0, 0, 0, 0 };
	m->alignment = value_of(m, &self, m->alignment, e);
}

static void apply(struct ac_model *m, const struct edit *e)
{
	switch (e->op % 5) {
	case 0:
		edit_field(m, e);
		break;
	case 1:
		edit_copy(m, e);
		break;
	case 2:
		edit_truncate(m, e);
		break;
	case 3:
		edit_bytes(m, e);
		break;
	default:
		edit_alignment(m, e);
		break;
	}
}

/* ---- the comparison ---- */

/*
 * Whether the naive checker answers quickly: it unrolls the executed
 * sequence and compares instances pairwise, and enumerates every ordinal
 * of a moving word.  Malformed programs are answered before either.
 */
static int naive_affordable(const struct ac_model *m)
{
	uint64_t executed;
	if (naive_executed(m, &executed) != 0)
		return 1;
	if (executed > NAIVE_BUDGET)
		return 0;
	for (uint32_t r = 0; r < m->n_repeats; r++)
		if (m->repeats[r].iterations > NAIVE_BUDGET)
			return 0;
	return m->n_planes <= NAIVE_BUDGET / 16;
}

static void check_diag(const struct ac_model *m, uint64_t v,
		       const struct naive_detail *nd, const struct ac_diag *d)
{
	static const enum ac_condition cond[] = {
		['A'] = AC_COND_A, ['B'] = AC_COND_B, ['C'] = AC_COND_C,
		['D'] = AC_COND_D,
	};
	FUZZ_CHECK(d->verdict == v, "diag.verdict %llu",
		   (unsigned long long)d->verdict);
	FUZZ_CHECK(d->condition == (nd->condition ? cond[(int)nd->condition]
						  : AC_CERTIFIED),
		   "condition %d, naive '%c'", d->condition,
		   nd->condition ? nd->condition : '0');
	if (nd->condition == 'C')
		FUZZ_CHECK(d->launch == v - 2, "(C) at launch %llu",
			   (unsigned long long)d->launch);
	if (nd->condition == 'D')
		FUZZ_CHECK(d->instance == v - 2 - m->n_launches &&
			   d->phase == (uint64_t)nd->phase,
			   "(D) at instance %llu phase %llu, naive phase %lld",
			   (unsigned long long)d->instance,
			   (unsigned long long)d->phase, (long long)nd->phase);
}

/* The two-stage API on a well-formed program: one batch of all its
 * references. */
static void check_incremental(const struct ac_model *m, uint64_t v)
{
	struct ac_error err;
	ac_program *p = ac_program_new(m, &err);
	FUZZ_CHECK(p, "ac_program_new: %s: %s", err.where, err.message);
	ac_schedule *s = ac_schedule_new(p);
	FUZZ_CHECK(s, "ac_schedule_new");
	FUZZ_CHECK(ac_schedule_append(s, m->refs, m->n_refs, &err) == 0,
		   "ac_schedule_append: %s: %s", err.where, err.message);
	uint64_t executed = 0;
	naive_executed(m, &executed);
	FUZZ_CHECK(ac_schedule_verdict(s, NULL) == v &&
		   ac_schedule_executed(s) == executed,
		   "appended: verdict %llu, executed %llu (naive %llu)",
		   (unsigned long long)ac_schedule_verdict(s, NULL),
		   (unsigned long long)ac_schedule_executed(s),
		   (unsigned long long)executed);
	ac_schedule_free(s);
	ac_program_free(p);
}

static void compare(const struct ac_model *m)
{
	struct fuzz_outcome lib;
	fuzz_certify(m, &lib);
	if (!naive_affordable(m))
		return;
	uint64_t v = 0;
	struct naive_detail nd;
	int rc = naive_certify_detail(m, &v, &nd);
	if (rc == NAIVE_TOO_BIG)
		return;
	FUZZ_CHECK((rc == NAIVE_MALFORMED) == (lib.rc != 0),
		   "naive %s, library %s %s",
		   rc ? "malformed" : "well-formed",
		   lib.rc ? "malformed:" : "well-formed", lib.error);
	if (rc)
		return;
	FUZZ_CHECK(lib.verdict == v, "naive verdict %llu, library %llu",
		   (unsigned long long)v, (unsigned long long)lib.verdict);
	check_diag(m, v, &nd, &lib.diag);
	check_incremental(m, v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, data + size };
	struct gen_rng r;
	gen_rng_seed(&r, fuzz_take(&in, 8));
	struct ac_model *m = gen_model_aimed(&r, NULL);
	for (int i = 0; i < MAX_EDITS && in.p < in.end; i++) {
		struct edit e;
		e.op = (unsigned int)fuzz_take(&in, 1);
		e.what = (unsigned int)fuzz_take(&in, 1);
		e.index = (unsigned int)fuzz_take(&in, 2);
		e.how = (unsigned int)fuzz_take(&in, 1);
		e.value = fuzz_take(&in, 8);
		apply(m, &e);
	}
	compare(m);
	gen_model_free(m);
	return 0;
}
