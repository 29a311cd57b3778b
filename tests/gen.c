/* SPDX-License-Identifier: MIT */
/*
 * The random program generator (see gen.h).
 *
 * A program is first built in a structured, fixed-capacity form (struct
 * g_prog) that is easy to mutate, then flattened into a struct ac_model.
 * The base program is laid out like a real planner would: each value (a
 * plane key) has a span of table segments during which it must stay put,
 * and values whose spans meet get disjoint bytes, so an unmutated program
 * with its natural schedule is usually certified.  Mutations then aim at
 * one verdict class each; whether they hit it is for the checkers to say.
 */
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* ---- PRNG ------------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

void gen_rng_seed(struct gen_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t gen_rng_next(struct gen_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t gen_rng_below(struct gen_rng *r, uint64_t n)
{
	return n ? gen_rng_next(r) % n : 0;
}

/* ---- the structured form ------------------------------------------------------ */

#define G_MAX_BYTES 64
#define G_MAX_WINDOWS 4
#define G_MAX_GLOBALS 160
#define G_MAX_PHASES 8
#define G_MAX_PLANES 14
#define G_MAX_LAUNCHES 48
#define G_MAX_WORDS 8
#define G_MAX_REPEATS 4
#define G_MAX_DELTAS 12
#define G_MAX_SLOTS 4
#define G_MAX_FRAMES 12
#define G_MAX_REFS 24
#define G_MAX_SEGS 16
#define G_MAX_VALUES 40

struct g_bytes {
	uint8_t b[G_MAX_BYTES];
	uint32_t len;
};

struct g_tensor {
	struct g_bytes name;
	uint64_t off, size;
	int carried;
};

struct g_phase {
	struct g_bytes id;
	int np;
	struct g_tensor pl[G_MAX_PLANES];
};

/* What a word was generated as: mutations and deltas aim with this. */
enum { W_SCALAR, W_GLOBAL, W_PLANE };

struct g_word {
	uint64_t x;
	int kind;
	int target;     /* global index, or plane index within the phase */
};

struct g_launch {
	struct g_bytes ident;
	int phase;
	int nw;
	struct g_word w[G_MAX_WORDS];
};

struct g_repeat {
	uint64_t first, count, iters;
	int nd, ns;
	struct ac_delta d[G_MAX_DELTAS];
	struct ac_slot s[G_MAX_SLOTS];
	uint64_t nf;    /* 0: no table */
	uint64_t fv[G_MAX_FRAMES][G_MAX_SLOTS];
};

struct g_prog {
	uint64_t align;
	int nwin, ng, nph, nl, nr, nrefs;
	struct ac_window win[G_MAX_WINDOWS];
	struct g_tensor g[G_MAX_GLOBALS];
	struct g_phase ph[G_MAX_PHASES];
	struct g_launch l[G_MAX_LAUNCHES];
	struct g_repeat r[G_MAX_REPEATS];
	struct ac_ref refs[G_MAX_REFS];
};

/* A value: one plane key, declared by some phases (fresh or carried). */
enum { D_NONE, D_FRESH, D_CARRIED };

struct g_value {
	struct g_bytes name;
	uint64_t off, size;
	int birth;                   /* phase */
	int decl[G_MAX_PHASES];      /* D_* per phase */
	int lo, hi;                  /* span, in table segments */
	int placed;
};

/* Build state. */
struct gb {
	struct gen_rng *r;
	struct g_prog *p;
	uint64_t unit;               /* placement grain: max(alignment, 64) */
	uint64_t ws_lo;              /* workspace start */
	int top;                     /* the window ends at 2^64 */
	int banks_first, banks_n;    /* layer banks among the globals */
	uint64_t bank_stride;
	int nseg;
	int seg_phase[G_MAX_SEGS], seg_first[G_MAX_SEGS], seg_count[G_MAX_SEGS];
	int body_s, body_e;          /* segments of the main body, or -1 */
	int main_segs, n_main;       /* segments / launches a schedule uses */
	int nv;
	struct g_value v[G_MAX_VALUES];
};

static uint64_t below(struct gb *b, uint64_t n)
{
	return gen_rng_below(b->r, n);
}

static int chance(struct gb *b, int percent)
{
	return (int)below(b, 100) < percent;
}

static uint64_t range(struct gb *b, uint64_t lo, uint64_t hi)
{
	return lo + below(b, hi - lo + 1);
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

static uint64_t align_down(uint64_t x, uint64_t a)
{
	return x / a * a;
}

/* ---- byte strings and identities ----------------------------------------- */

static void bytes_put(struct g_bytes *s, const void *data, size_t n)
{
	if (s->len + n > G_MAX_BYTES)
		n = G_MAX_BYTES - s->len;
	memcpy(s->b + s->len, data, n);
	s->len += (uint32_t)n;
}

static void bytes_byte(struct g_bytes *s, uint8_t c)
{
	bytes_put(s, &c, 1);
}

static void bytes_text(struct g_bytes *s, const char *text)
{
	s->len = 0;
	bytes_put(s, text, strlen(text));
}

static int bytes_eq(const struct g_bytes *a, const struct g_bytes *c)
{
	return a->len == c->len && memcmp(a->b, c->b, a->len) == 0;
}

static void put_varint(struct g_bytes *s, uint64_t v)
{
	while (v >= 0x80) {
		bytes_byte(s, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	bytes_byte(s, (uint8_t)v);
}

/* Field 51, wire type 2, holding the payload: the standard encoding. */
static void put_field51(struct g_bytes *s, const struct g_bytes *payload)
{
	put_varint(s, (51u << 3) | 2);
	put_varint(s, payload->len);
	bytes_put(s, payload->b, payload->len);
}

/* An unknown field that parses: varint, fixed64, bytes or fixed32. */
static void put_unknown_field(struct gb *b, struct g_bytes *s)
{
	static const uint64_t fields[] = { 1, 2, 7, 50, 52, 1000,
					   ((uint64_t)1 << 29) - 1 };
	uint64_t field = fields[below(b, sizeof(fields) / sizeof(fields[0]))];
	switch (below(b, 5)) {
	case 0:
		put_varint(s, field << 3);
		put_varint(s, gen_rng_next(b->r) >> below(b, 64));
		break;
	case 1:
		put_varint(s, field << 3 | 1);
		for (int i = 0; i < 8; i++)
			bytes_byte(s, (uint8_t)below(b, 256));
		break;
	case 2:
		put_varint(s, field << 3 | 2);
		put_varint(s, 3);
		bytes_put(s, "\x9a\x03\x01", 3);   /* looks like field 51 */
		break;
	case 3:
		put_varint(s, field << 3 | 5);
		for (int i = 0; i < 4; i++)
			bytes_byte(s, (uint8_t)below(b, 256));
		break;
	default:
		/* A 10-byte varint just below 2^64: still parses. */
		put_varint(s, field << 3);
		bytes_put(s, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10);
		break;
	}
}

/* Encodings that still name the phase (spec 1.2: last field 51 wins,
 * unknown fields of any valid wire type are skipped). */
static void identity_benign(struct gb *b, struct g_bytes *s,
			    const struct g_bytes *id)
{
	s->len = 0;
	int kind = (int)below(b, 6);
	if (kind == 0 || kind == 3)
		put_unknown_field(b, s);
	if (kind == 1) {
		struct g_bytes other;
		bytes_text(&other, below(b, 2) ? "nope" : "");
		put_field51(s, &other);
		put_unknown_field(b, s);
	}
	if (kind == 4) {
		/* Non-minimal varints for the tag and the length. */
		bytes_put(s, "\x9a\x83\x00", 3);
		bytes_byte(s, (uint8_t)(0x80 | (id->len & 0x7f)));
		bytes_byte(s, (uint8_t)(id->len >> 7));
		bytes_put(s, id->b, id->len);
	} else {
		put_field51(s, id);
	}
	if (kind == 2 || kind == 3 || kind == 5)
		put_unknown_field(b, s);
}

/* Encodings that leave the launch without a declared phase. */
static void identity_broken(struct gb *b, struct g_bytes *s,
			    const struct g_bytes *id, int n_kinds)
{
	struct g_bytes other;
	s->len = 0;
	switch (below(b, (uint64_t)n_kinds)) {
	case 0: /* truncated: a length past the end */
		put_field51(s, id);
		if (id->len)
			s->len--;
		else
			s->len = 1;     /* a truncated tag varint */
		break;
	case 1: /* a trailing truncated varint */
		put_field51(s, id);
		bytes_byte(s, 0x80);
		break;
	case 2: /* an 11-byte varint */
		put_field51(s, id);
		bytes_byte(s, 0x08);
		bytes_put(s, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
		break;
	case 3: /* a 10-byte varint at least 2^64 */
		bytes_byte(s, 0x08);
		bytes_put(s, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10);
		put_field51(s, id);
		break;
	case 4: /* wire types 3, 4, 6, 7 */
		put_field51(s, id);
		bytes_byte(s, (uint8_t)(0x08 | (uint8_t[]){ 3, 4, 6, 7 }[below(b, 4)]));
		bytes_byte(s, 0);
		break;
	case 5: /* field number 0, or 2^29 */
		if (below(b, 2))
			bytes_put(s, "\x00\x00", 2);
		else {
			put_varint(s, (uint64_t)1 << 32);
			bytes_byte(s, 0);
		}
		put_field51(s, id);
		break;
	case 6: /* field 51 also with wire type 0 or 5 */
		if (below(b, 2)) {
			put_field51(s, id);
			put_varint(s, 51u << 3);
			bytes_byte(s, 1);
		} else {
			put_varint(s, 51u << 3 | 5);
			bytes_put(s, "abcd", 4);
			put_field51(s, id);
		}
		break;
	case 7: /* no field 51 at all */
		if (below(b, 2))
			put_unknown_field(b, s);
		break;
	case 8: /* the last field 51 names no phase */
		put_field51(s, id);
		other = *id;
		bytes_byte(&other, 'x');
		put_field51(s, &other);
		break;
	default: /* a truncated fixed64 */
		put_field51(s, id);
		bytes_byte(s, 0x11);
		bytes_put(s, "12345", 5);
		break;
	}
}

#define N_BROKEN_KINDS 10

/* ---- plan: alignment, windows, globals ---------------------------------------- */

static void choose_alignment(struct gb *b)
{
	static const uint64_t aligns[] = { 64, 64, 64, 256, 256, 16, 16, 1, 8,
					   4096, (uint64_t)1 << 32 };
	b->p->align = aligns[below(b, sizeof(aligns) / sizeof(aligns[0]))];
	b->unit = b->p->align > 64 ? b->p->align : 64;
}

static void add_global(struct gb *b, const char *name, uint64_t off,
		       uint64_t size)
{
	struct g_tensor *t = &b->p->g[b->p->ng++];
	bytes_text(&t->name, name);
	t->off = off;
	t->size = size;
	t->carried = 0;
}

/* A tensor size: whole units, sometimes with a ragged tail. */
static uint64_t tensor_size(struct gb *b, uint64_t max_units)
{
	uint64_t size = b->unit * range(b, 1, max_units);
	if (chance(b, 30))
		size -= below(b, b->unit);
	return size;
}

/* Globals from `at` on: a few named ones, then maybe layer banks. */
static uint64_t layout_globals(struct gb *b, uint64_t at)
{
	static const char *names[] = { "emb", "w_qkv", "w_out", "ln", "resid" };
	int n = (int)range(b, 0, 4);
	for (int i = 0; i < n; i++) {
		if (chance(b, 15))
			at += b->unit * range(b, 1, 3);     /* a gap */
		uint64_t size = tensor_size(b, 4);
		add_global(b, names[i], at, size);
		at = align_up(at + size, b->unit);
	}
	b->banks_n = 0;
	if (chance(b, 25)) {
		static const int counts[] = { 2, 3, 5, 8, 127, 128, 129 };
		int banks = counts[below(b, 7)];
		uint64_t stride = b->unit * range(b, 1, 2);
		uint64_t size = chance(b, 70) ? stride : stride - below(b, b->unit);
		b->banks_first = b->p->ng;
		b->banks_n = banks;
		b->bank_stride = stride;
		for (int i = 0; i < banks; i++) {
			char name[24];
			snprintf(name, sizeof(name), "layer%d", i);
			add_global(b, name, at + (uint64_t)i * stride, size);
		}
		at += (uint64_t)banks * stride;
	}
	return at;
}

static void add_window(struct gb *b, uint64_t base, uint64_t size)
{
	struct ac_window *w = &b->p->win[b->p->nwin++];
	w->name.data = NULL;
	w->name.len = 0;
	w->base = base;
	w->size = size;
}

static void choose_plan(struct gb *b)
{
	uint64_t u = b->unit;
	uint64_t span = u * 1024 + u * 300;     /* globals, banks, workspace */
	uint64_t base;
	int where = (int)below(b, 100);
	if (where < 3)
		base = 0;                                /* scalars collide */
	else if (where < 12)
		base = (uint64_t)0 - span;               /* ends at 2^64 */
	else
		base = align_up(range(b, (uint64_t)1 << 20, (uint64_t)1 << 46), u);

	uint64_t at = base + (chance(b, 20) ? u * range(b, 1, 4) : 0);
	at = layout_globals(b, at);
	b->ws_lo = align_up(at, u) + (chance(b, 20) ? u * range(b, 1, 3) : 0);

	b->top = where >= 3 && where < 12;
	if (chance(b, 95)) {
		/* The managed window; sometimes shorter than the workspace so
		 * that some planes sit outside every window. */
		uint64_t size = chance(b, 85) ? span : b->ws_lo - base + u * 16;
		add_window(b, base, size);
	}
	if (chance(b, 25) && base < ((uint64_t)1 << 62))
		add_window(b, base + span + u * range(b, 0, 64), u * range(b, 1, 64));
	if (chance(b, 10) && b->p->nwin > 0)
		add_window(b, b->ws_lo, u * range(b, 1, 8));   /* overlapping */
}

/* ---- phases, values and the workspace ---------------------------------------- */

static void choose_identities(struct gb *b)
{
	for (int i = 0; i < b->p->nph; i++) {
		struct g_bytes *id = &b->p->ph[i].id;
		char text[24];
		snprintf(text, sizeof(text), "ph%d", i);
		bytes_text(id, text);
		if (chance(b, 8)) {
			id->len = 0;                    /* binary identity */
			for (int k = (int)range(b, 1, 6); k > 0; k--)
				bytes_byte(id, (uint8_t)below(b, 256));
		}
	}
	/* Identities that are prefixes of one another, and an empty one. */
	if (b->p->nph >= 2 && chance(b, 15)) {
		b->p->ph[1].id = b->p->ph[0].id;
		bytes_byte(&b->p->ph[1].id, 'x');
	}
	if (chance(b, 5))
		b->p->ph[b->p->nph - 1].id.len = 0;
	/* Keep them distinct (random bytes may collide): malformed is a
	 * mutation of its own. */
	for (int i = 0; i < b->p->nph; i++)
		for (int j = 0; j < i; j++)
			if (bytes_eq(&b->p->ph[i].id, &b->p->ph[j].id))
				bytes_byte(&b->p->ph[i].id, (uint8_t)('A' + i));
}

/* The table as segments: phases 0..P-1 in order, maybe a body that ends
 * with its first phase again (instances merge across iterations), maybe a
 * tail that runs an earlier phase again. */
static void choose_segments(struct gb *b)
{
	int np = b->p->nph;
	b->nseg = 0;
	b->body_s = b->body_e = -1;
	int bs = -1, be = -1;
	if (chance(b, 65)) {
		bs = (int)below(b, (uint64_t)np);
		be = bs + (int)below(b, (uint64_t)(np - bs < 4 ? np - bs : 4));
	}
	for (int ph = 0; ph < np; ph++) {
		if (ph == bs) {
			/* A run of the body's first phase just before it: the
			 * run continues into iteration 0. */
			if (chance(b, 15))
				b->seg_phase[b->nseg++] = bs;
			b->body_s = b->nseg;
		}
		b->seg_phase[b->nseg++] = ph;
		if (ph == be) {
			if (be > bs && chance(b, 25))
				b->seg_phase[b->nseg++] = bs;
			b->body_e = b->nseg - 1;
			/* And one of its last phase just after it. */
			if (chance(b, 15))
				b->seg_phase[b->nseg++] = b->seg_phase[b->body_e];
		}
	}
	if (chance(b, 15))
		b->seg_phase[b->nseg++] = (int)below(b, (uint64_t)np);
	b->main_segs = b->nseg;
}

static void new_value(struct gb *b, int phase)
{
	static const char *names[] = { "a", "b", "h", "x", "tmp", "acc", "kv" };
	if (b->nv == G_MAX_VALUES)
		return;
	struct g_value *v = &b->v[b->nv++];
	memset(v, 0, sizeof(*v));
	bytes_text(&v->name, names[below(b, sizeof(names) / sizeof(names[0]))]);
	v->size = tensor_size(b, 6);
	v->birth = phase;
	v->decl[phase] = D_FRESH;
}

static int planes_of(struct gb *b, int phase)
{
	int n = 0;
	for (int i = 0; i < b->nv; i++)
		n += b->v[i].decl[phase] != D_NONE;
	return n;
}

/* Phase `phase` carries a random value born before it. */
static void carry_value(struct gb *b, int phase)
{
	for (int tries = 0; tries < 8; tries++) {
		struct g_value *v = &b->v[below(b, (uint64_t)b->nv)];
		if (v->birth < phase && v->decl[phase] == D_NONE) {
			v->decl[phase] = D_CARRIED;
			return;
		}
	}
}

/* A value born before the body, carried by its first phase and written
 * again (fresh, same key) by a later body phase: a loop-carried value. */
static void loop_carry(struct gb *b)
{
	int first = b->seg_phase[b->body_s];
	int last = b->seg_phase[b->body_e];
	if (last <= first)
		last = b->seg_phase[b->body_e - 1 >= b->body_s ? b->body_e - 1 : b->body_s];
	if (last <= first)
		return;
	for (int tries = 0; tries < 8; tries++) {
		struct g_value *v = &b->v[below(b, (uint64_t)b->nv)];
		int q = (int)range(b, (uint64_t)first + 1, (uint64_t)last);
		if (v->birth < first && v->decl[first] == D_NONE &&
		    v->decl[q] == D_NONE) {
			v->decl[first] = D_CARRIED;
			v->decl[q] = D_FRESH;
			return;
		}
	}
}

static void choose_values(struct gb *b)
{
	b->nv = 0;
	for (int ph = 0; ph < b->p->nph; ph++) {
		for (int k = (int)range(b, ph == 0 ? 1 : 0, 3); k > 0; k--)
			new_value(b, ph);
		if (ph > 0)
			for (int c = (int)range(b, 0, 2); c > 0; c--)
				if (planes_of(b, ph) < G_MAX_PLANES - 2)
					carry_value(b, ph);
	}
	if (b->body_s >= 0 && chance(b, 50))
		loop_carry(b);
}

/* Spans: from the first to the last segment declaring the value; a value
 * carried inside the body must survive the whole body (the next iteration
 * reads it again). */
static void value_spans(struct gb *b)
{
	for (int i = 0; i < b->nv; i++) {
		struct g_value *v = &b->v[i];
		int carried_in_body = 0;
		v->lo = G_MAX_SEGS;
		v->hi = -1;
		for (int s = 0; s < b->main_segs; s++) {
			int d = v->decl[b->seg_phase[s]];
			if (d == D_NONE)
				continue;
			if (s < v->lo)
				v->lo = s;
			if (s > v->hi)
				v->hi = s;
			if (d == D_CARRIED && s >= b->body_s && s <= b->body_e)
				carried_in_body = 1;
		}
		if (carried_in_body) {
			if (b->body_s < v->lo)
				v->lo = b->body_s;
			if (b->body_e > v->hi)
				v->hi = b->body_e;
		}
	}
}

static int spans_meet(const struct g_value *a, const struct g_value *c)
{
	return a->lo <= c->hi && c->lo <= a->hi;
}

/* v fits at `off` when no placed value whose span meets v's overlaps. */
static int fits(struct gb *b, const struct g_value *v, uint64_t off)
{
	for (int i = 0; i < b->nv; i++) {
		const struct g_value *o = &b->v[i];
		if (o == v || !o->placed || !spans_meet(o, v))
			continue;
		if (off < o->off + o->size && o->off < off + v->size)
			return 0;
	}
	return 1;
}

/* First fit over the candidate offsets (workspace start, ends of placed
 * values), sometimes taking the second fit to leave gaps. */
static void place_value(struct gb *b, struct g_value *v)
{
	uint64_t grain = chance(b, 50) ? b->p->align : b->unit;
	uint64_t best[2] = { UINT64_MAX, UINT64_MAX };
	for (int i = -1; i < b->nv; i++) {
		uint64_t off = b->ws_lo;
		if (i >= 0) {
			if (!b->v[i].placed)
				continue;
			off = align_up(b->v[i].off + b->v[i].size, grain);
		}
		if (!fits(b, v, off))
			continue;
		if (off < best[0]) {
			best[1] = best[0];
			best[0] = off;
		} else if (off < best[1] && off != best[0]) {
			best[1] = off;
		}
	}
	v->off = (chance(b, 20) && best[1] != UINT64_MAX) ? best[1] : best[0];
	v->placed = 1;
}

static void place_values(struct gb *b)
{
	for (int lo = 0; lo < G_MAX_SEGS; lo++)
		for (int i = 0; i < b->nv; i++)
			if (b->v[i].lo == lo)
				place_value(b, &b->v[i]);
	for (int i = 0; i < b->nv; i++)
		if (!b->v[i].placed)        /* declared only off the schedule */
			place_value(b, &b->v[i]);
}

/* Moves the whole workspace up against 2^64 and stretches the topmost
 * values to end exactly there: plane ends that do not fit in 64 bits. */
static void workspace_to_top(struct gb *b)
{
	unsigned __int128 end = 0;
	for (int i = 0; i < b->nv; i++)
		if ((unsigned __int128)b->v[i].off + b->v[i].size > end)
			end = (unsigned __int128)b->v[i].off + b->v[i].size;
	unsigned __int128 room = ((unsigned __int128)1 << 64) - end;
	uint64_t shift = align_down((uint64_t)room, b->unit);
	for (int i = 0; i < b->nv; i++) {
		struct g_value *v = &b->v[i];
		int topmost = (unsigned __int128)v->off + v->size == end;
		v->off += shift;
		if (topmost)
			v->size = (uint64_t)0 - v->off;
	}
}

static void fill_phases(struct gb *b)
{
	for (int ph = 0; ph < b->p->nph; ph++) {
		struct g_phase *phase = &b->p->ph[ph];
		phase->np = 0;
		for (int i = 0; i < b->nv && phase->np < G_MAX_PLANES; i++) {
			const struct g_value *v = &b->v[i];
			if (v->decl[ph] == D_NONE)
				continue;
			struct g_tensor *t = &phase->pl[phase->np++];
			t->name = v->name;
			t->off = v->off;
			t->size = v->size;
			t->carried = v->decl[ph] == D_CARRIED;
		}
		/* Plane order within a phase is irrelevant: shuffle it. */
		for (int i = phase->np - 1; i > 0; i--) {
			int j = (int)below(b, (uint64_t)i + 1);
			struct g_tensor t = phase->pl[i];
			phase->pl[i] = phase->pl[j];
			phase->pl[j] = t;
		}
	}
}

/* ---- launches -------------------------------------------------------------------- */

static uint64_t scalar_word(struct gb *b)
{
	const struct g_prog *p = b->p;
	int k = (int)below(b, 100);
	if (k < 60 || p->nwin == 0)
		return below(b, 4096);
	if (k < 70 && p->win[0].base > 0)
		return p->win[0].base - 1;                   /* just below */
	if (k < 80 && p->win[0].base + p->win[0].size != 0)
		return p->win[0].base + p->win[0].size;      /* just past */
	if (k < 85)
		return UINT64_MAX;
	return gen_rng_next(b->r);
}

/* A pointer into a tensor: its start, an aligned inner offset, or its
 * last byte. */
static uint64_t pointer_into(struct gb *b, const struct g_tensor *t)
{
	if (t->size == 0)
		return t->off;
	int k = (int)below(b, 10);
	if (k < 5)
		return t->off;
	if (k < 9)
		return t->off + align_down(below(b, t->size), 8);
	return t->off + t->size - 1;
}

static const struct g_tensor *word_target(const struct gb *b,
					  const struct g_launch *l,
					  const struct g_word *w)
{
	if (w->kind == W_GLOBAL)
		return &b->p->g[w->target];
	if (w->kind == W_PLANE)
		return &b->p->ph[l->phase].pl[w->target];
	return NULL;
}

static void make_word(struct gb *b, struct g_launch *l, struct g_word *w)
{
	const struct g_phase *ph = &b->p->ph[l->phase];
	w->kind = W_SCALAR;
	if (chance(b, 65)) {
		if (ph->np > 0 && (b->p->ng == 0 || chance(b, 60))) {
			w->kind = W_PLANE;
			w->target = (int)below(b, (uint64_t)ph->np);
		} else if (b->p->ng > 0) {
			w->kind = W_GLOBAL;
			w->target = (int)below(b, (uint64_t)b->p->ng);
		}
	}
	const struct g_tensor *t = word_target(b, l, w);
	w->x = t ? pointer_into(b, t) : scalar_word(b);
}

static void add_launches(struct gb *b, int seg)
{
	struct g_prog *p = b->p;
	b->seg_first[seg] = p->nl;
	int n = (int)range(b, 1, 3);
	for (int i = 0; i < n && p->nl < G_MAX_LAUNCHES; i++) {
		struct g_launch *l = &p->l[p->nl++];
		memset(l, 0, sizeof(*l));
		l->phase = b->seg_phase[seg];
		l->ident.len = 0;
		put_field51(&l->ident, &p->ph[l->phase].id);
		l->nw = chance(b, 5) ? 0 : (int)range(b, 1, 6);
		for (int k = 0; k < l->nw; k++)
			make_word(b, l, &l->w[k]);
	}
	b->seg_count[seg] = p->nl - b->seg_first[seg];
}

/* ---- repeats ----------------------------------------------------------------------- */

static uint64_t choose_iterations(struct gb *b)
{
	int k = (int)below(b, 100);
	if (k < 5)
		return 1;
	if (k < 50)
		return range(b, 2, 8);
	if (k < 65)
		return range(b, 9, 64);
	if (k < 85)
		return range(b, 127, 129);
	if (k < 95)
		return range(b, 130, 300);
	return range(b, 100, 128);
}

static void add_delta(struct g_repeat *r, uint64_t launch, uint64_t word,
		      int64_t delta)
{
	if (r->nd == G_MAX_DELTAS)
		return;
	r->d[r->nd].launch = launch;
	r->d[r->nd].word = word;
	r->d[r->nd].delta = delta;
	r->nd++;
}

/* A stride that keeps a pointer inside its tensor for every ordinal
 * (sometimes exactly at the edge, sometimes one past it). */
static int64_t pointer_delta(struct gb *b, const struct g_tensor *t,
			     uint64_t x, uint64_t n)
{
	int down = chance(b, 25);
	uint64_t room = down ? x - t->off : t->off + t->size - 1 - x;
	if (x < t->off || x >= t->off + t->size)
		room = 0;
	uint64_t max = n > 1 ? room / (n - 1) : room;
	uint64_t d;
	int k = (int)below(b, 100);
	if (k < 8)
		d = 0;
	else if (k < 30)
		d = max;
	else if (k < 34)
		d = max + 1;                    /* the last ordinal leaves */
	else
		d = max ? range(b, 1, max) : 0;
	if (d > ((uint64_t)1 << 62))
		d = (uint64_t)1 << 62;
	return down ? -(int64_t)d : (int64_t)d;
}

static void word_deltas(struct gb *b, struct g_repeat *r, uint64_t l)
{
	struct g_launch *la = &b->p->l[l];
	for (int w = 0; w < la->nw; w++) {
		const struct g_tensor *t = word_target(b, la, &la->w[w]);
		if (t && chance(b, 40)) {
			int64_t d = pointer_delta(b, t, la->w[w].x, r->iters);
			if (chance(b, 15)) {
				/* Two deltas on one word: the hull is used. */
				int64_t k = (int64_t)range(b, 1, 64) * 8;
				add_delta(r, l, (uint64_t)w, d + k);
				add_delta(r, l, (uint64_t)w, -k);
			} else {
				add_delta(r, l, (uint64_t)w, d);
			}
		} else if (!t && chance(b, 12)) {
			/* A loop counter, or a scalar walking off 2^64. */
			int64_t d = (int64_t)range(b, 1, 16);
			if (chance(b, 8)) {
				la->w[w].x = chance(b, 50) ? UINT64_MAX - 2 : 2;
				d = la->w[w].x == 2 ? -1 : 1;
			}
			add_delta(r, l, (uint64_t)w, d);
		}
	}
}

/* A word walking the layer banks: N points, one bank each, are fine
 * when N <= 128; the hull of N > 128 spans banks and is not. */
static void bank_walk(struct gb *b, struct g_repeat *r)
{
	uint64_t l = r->first + below(b, r->count);
	struct g_launch *la = &b->p->l[l];
	if (la->nw == G_MAX_WORDS)
		return;
	struct g_word *w = &la->w[la->nw];
	w->kind = W_GLOBAL;
	w->target = b->banks_first;
	w->x = b->p->g[b->banks_first].off +
	       align_down(below(b, b->p->g[b->banks_first].size), 8);
	r->iters = (uint64_t)b->banks_n;
	if (chance(b, 30))
		r->iters += chance(b, 50) ? 1 : (uint64_t)-1;
	if (r->iters == 0)
		r->iters = 1;
	add_delta(r, l, (uint64_t)la->nw, (int64_t)b->bank_stride);
	la->nw++;
}

/* Another value for a slot: usually inside the word's own tensor,
 * sometimes in another named range, sometimes anywhere. */
static uint64_t frame_value(struct gb *b, const struct g_launch *la,
			    const struct g_word *w)
{
	const struct g_tensor *t = word_target(b, la, w);
	const struct g_phase *ph = &b->p->ph[la->phase];
	int k = (int)below(b, 100);
	if (t && k < 80)
		return pointer_into(b, t);
	if (k < 93 && ph->np > 0)
		return pointer_into(b, &ph->pl[below(b, (uint64_t)ph->np)]);
	return scalar_word(b) + (chance(b, 50) ? b->ws_lo : 0);
}

/* The exact hull of V(t) = frames[t mod F][s] + t * D over t < N. */
static void slot_hull(const struct g_repeat *r, int s, __int128 d,
		      __int128 *lo, __int128 *hi)
{
	for (uint64_t t = 0; t < r->iters; t++) {
		__int128 v = (__int128)r->fv[t % r->nf][s] + (__int128)t * d;
		if (t == 0 || v < *lo)
			*lo = v;
		if (t == 0 || v > *hi)
			*hi = v;
	}
}

/* Shifts a slot's frames so that the hull ends exactly at an edge of the
 * word's tensor (or one byte past it): the hull's boundary cases. */
static void tighten_slot(struct gb *b, struct g_repeat *r, int s)
{
	const struct g_launch *la = &b->p->l[r->s[s].launch];
	const struct g_tensor *t = word_target(b, la, &la->w[r->s[s].word]);
	if (!t || t->size == 0 || r->iters > 4096)
		return;
	__int128 d = 0, lo = 0, hi = 0;
	for (int i = 0; i < r->nd; i++)
		if (r->d[i].launch == r->s[s].launch && r->d[i].word == r->s[s].word)
			d += r->d[i].delta;
	slot_hull(r, s, d, &lo, &hi);
	__int128 shift = d >= 0 ? (__int128)t->off + t->size - 1 - hi
				: (__int128)t->off - lo;
	if (chance(b, 25))
		shift += d >= 0 ? 1 : -1;
	for (uint64_t f = 0; f < r->nf; f++) {
		__int128 v = (__int128)r->fv[f][s] + shift;
		if (v < 0 || v > (__int128)UINT64_MAX)
			return;
	}
	for (uint64_t f = 0; f < r->nf; f++)
		r->fv[f][s] = (uint64_t)((__int128)r->fv[f][s] + shift);
}

/* A slot's word: often one that already has a delta (B(t) + t * D). */
static void pick_slot_word(struct gb *b, const struct g_repeat *r,
			   uint64_t *l, uint64_t *w)
{
	if (r->nd > 0 && chance(b, 50)) {
		const struct ac_delta *d = &r->d[below(b, (uint64_t)r->nd)];
		if (d->word < (uint64_t)b->p->l[d->launch].nw) {
			*l = d->launch;
			*w = d->word;
			return;
		}
	}
	*l = r->first + below(b, r->count);
	*w = below(b, (uint64_t)b->p->l[*l].nw);
}

static void add_table(struct gb *b, struct g_repeat *r)
{
	int want = (int)range(b, 1, 2);
	for (int tries = 0; tries < 8 && r->ns < want; tries++) {
		uint64_t l, w;
		pick_slot_word(b, r, &l, &w);
		if (b->p->l[l].nw == 0)
			continue;
		int dup = 0;
		for (int s = 0; s < r->ns; s++)
			dup |= r->s[s].launch == l && r->s[s].word == w;
		if (dup)
			continue;
		r->s[r->ns].launch = l;
		r->s[r->ns].word = w;
		r->ns++;
	}
	if (r->ns == 0)
		return;
	/* Sometimes more frames than iterations: frames past N - 1 are never
	 * used, so junk there must not matter. */
	int beyond = r->iters < 8 && chance(b, 30);
	r->nf = beyond ? r->iters + range(b, 1, 3) : range(b, 1, 4);
	for (uint64_t f = 0; f < r->nf; f++)
		for (int s = 0; s < r->ns; s++) {
			const struct g_launch *la = &b->p->l[r->s[s].launch];
			const struct g_word *w = &la->w[r->s[s].word];
			r->fv[f][s] = (beyond && f >= r->iters)
					      ? gen_rng_next(b->r)
					      : frame_value(b, la, w);
		}
	for (int s = 0; s < r->ns; s++)
		if (chance(b, 40))
			tighten_slot(b, r, s);
}

static void add_repeat(struct gb *b, uint64_t first, uint64_t count, int main)
{
	struct g_repeat *r = &b->p->r[b->p->nr++];
	memset(r, 0, sizeof(*r));
	r->first = first;
	r->count = count;
	r->iters = choose_iterations(b);
	if (main && chance(b, 2)) {
		/* Too many iterations to unroll: the library may not care, the
		 * naive checker judges (D) only if it breaks early.  No deltas:
		 * those would need every ordinal enumerated. */
		r->iters = chance(b, 50) ? 0xFFFFFFFFu
					 : range(b, (uint64_t)1 << 20, 0xFFFFFFFFu);
		return;
	}
	if (main && chance(b, 1))
		r->iters = range(b, 200000, 1000000);
	if (b->banks_n > 0 && chance(b, 60))
		bank_walk(b, r);
	for (uint64_t l = first; l < first + count; l++)
		word_deltas(b, r, l);
	if (chance(b, 25))
		add_table(b, r);
}

static void choose_repeats(struct gb *b)
{
	struct g_prog *p = b->p;
	p->nr = 0;
	if (b->body_s >= 0) {
		uint64_t first = (uint64_t)b->seg_first[b->body_s];
		uint64_t end = (uint64_t)(b->seg_first[b->body_e] +
					  b->seg_count[b->body_e]);
		add_repeat(b, first, end - first, 1);
	}
	/* A second, small repeat on a segment after the body. */
	int after = b->body_e >= 0 ? b->body_e + 1 : 0;
	if (after < b->main_segs && chance(b, 20)) {
		int s = (int)range(b, (uint64_t)after, (uint64_t)b->main_segs - 1);
		add_repeat(b, (uint64_t)b->seg_first[s], (uint64_t)b->seg_count[s], 0);
	}
}

/* A segment no schedule references, repeated very many times: only (C)
 * sees it, and only a few words are walked so naive enumeration stays
 * cheap. */
static void add_unreferenced_repeat(struct gb *b)
{
	struct g_prog *p = b->p;
	if (p->nl + 3 > G_MAX_LAUNCHES || p->nr == G_MAX_REPEATS)
		return;
	int seg = b->nseg++;
	b->seg_phase[seg] = (int)below(b, (uint64_t)p->nph);
	add_launches(b, seg);
	struct g_repeat *r = &p->r[p->nr++];
	memset(r, 0, sizeof(*r));
	r->first = (uint64_t)b->seg_first[seg];
	r->count = (uint64_t)b->seg_count[seg];
	if (chance(b, 50)) {
		r->iters = 0xFFFFFFFFu;            /* the largest N */
	} else {
		r->iters = range(b, 1000, 200000);
		struct g_launch *la = &p->l[r->first];
		if (la->nw > 0)
			add_delta(r, r->first, 0, (int64_t)range(b, 0, 2) - 1);
	}
}

/* ---- schedule ------------------------------------------------------------------------- */

/* A cut point at launch c: not strictly inside a body. */
static int cut_ok(const struct g_prog *p, uint64_t c)
{
	for (int i = 0; i < p->nr; i++)
		if (c > p->r[i].first && c < p->r[i].first + p->r[i].count)
			return 0;
	return 1;
}

/* A random valid cut in [lo, hi]: scan on from a random start, wrapping
 * around; lo when there is none. */
static uint64_t random_cut(struct gb *b, uint64_t lo, uint64_t hi)
{
	if (hi < lo)
		return lo;
	uint64_t n = hi - lo + 1, start = below(b, n);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t c = lo + (start + i) % n;
		if (cut_ok(b->p, c))
			return c;
	}
	return lo;
}

static void add_ref(struct g_prog *p, uint64_t first, uint64_t end)
{
	if (p->nrefs == G_MAX_REFS || end <= first)
		return;
	p->refs[p->nrefs].first = first;
	p->refs[p->nrefs].count = end - first;
	p->nrefs++;
}

/* Consecutive references covering [lo, hi), cut at random points. */
static void add_split(struct gb *b, uint64_t lo, uint64_t hi)
{
	uint64_t at = lo;
	for (int cuts = (int)range(b, 1, 4); cuts > 0 && at < hi; cuts--) {
		uint64_t c = random_cut(b, at + 1, hi);
		add_ref(b->p, at, c);
		at = c;
	}
	add_ref(b->p, at, hi);
}

static void choose_schedule(struct gb *b)
{
	struct g_prog *p = b->p;
	uint64_t n = (uint64_t)b->n_main;
	p->nrefs = 0;
	int k = (int)below(b, 100);
	if (k < 2)
		return;                                  /* empty */
	if (k < 45) {
		add_ref(p, 0, n);
	} else if (k < 65) {
		add_split(b, 0, n);
	} else if (k < 80) {
		/* A second step re-runs a suffix (or the body region). */
		uint64_t c = random_cut(b, 0, n - 1);
		add_split(b, 0, n);
		add_split(b, c, n);
	} else {
		for (int i = (int)range(b, 1, 5); i > 0; i--) {
			uint64_t first = random_cut(b, 0, n - 1);
			uint64_t end = random_cut(b, first + 1, n);
			add_ref(p, first, end);
		}
	}
}

/* ---- mutations: each aims at one verdict class ------------------------------------------ */

static struct g_tensor *any_plane(struct gb *b, int *phase)
{
	for (int tries = 0; tries < 16; tries++) {
		int ph = (int)below(b, (uint64_t)b->p->nph);
		if (b->p->ph[ph].np > 0) {
			if (phase)
				*phase = ph;
			return &b->p->ph[ph].pl[below(b, (uint64_t)b->p->ph[ph].np)];
		}
	}
	return NULL;
}

static struct g_tensor *any_tensor(struct gb *b)
{
	if (b->p->ng > 0 && chance(b, 40))
		return &b->p->g[below(b, (uint64_t)b->p->ng)];
	return any_plane(b, NULL);
}

/* Moves t so that it shares bytes with u (keeping alignment). */
static void overlap_onto(struct gb *b, struct g_tensor *t,
			 const struct g_tensor *u)
{
	if (u->size == 0)
		return;
	uint64_t at = chance(b, 50) ? u->off
				    : align_down(u->off + u->size - 1, b->p->align);
	t->off = at;
}

static void mutate_ab(struct gb *b)
{
	struct g_prog *p = b->p;
	struct g_tensor *t = any_tensor(b);
	int ph = 0;
	switch (below(b, 5)) {
	case 0:
		if (t && p->align > 1)
			t->off += p->align / 2;
		else if (t)
			t->size = 0;
		break;
	case 1:
		if (t)
			t->size = 0;
		break;
	case 2:
		if (p->ng >= 2)
			overlap_onto(b, &p->g[below(b, (uint64_t)p->ng)],
				     &p->g[below(b, (uint64_t)p->ng)]);
		break;
	case 3:
		t = any_plane(b, &ph);
		if (t && p->ph[ph].np >= 2)
			overlap_onto(b, t, &p->ph[ph].pl[below(b, (uint64_t)p->ph[ph].np)]);
		break;
	default:
		t = any_plane(b, NULL);
		if (t && p->ng > 0)
			overlap_onto(b, t, &p->g[below(b, (uint64_t)p->ng)]);
		break;
	}
}

static struct g_launch *any_launch(struct gb *b)
{
	return b->p->nl ? &b->p->l[below(b, (uint64_t)b->p->nl)] : NULL;
}

static struct g_word *any_word(struct gb *b, struct g_launch **lp)
{
	for (int tries = 0; tries < 16; tries++) {
		struct g_launch *l = any_launch(b);
		if (l && l->nw > 0) {
			*lp = l;
			return &l->w[below(b, (uint64_t)l->nw)];
		}
	}
	return NULL;
}

static struct g_repeat *any_repeat(struct gb *b)
{
	return b->p->nr ? &b->p->r[below(b, (uint64_t)b->p->nr)] : NULL;
}

/* Moves a word off its range by a stride, or into another phase's
 * plane, or into the window's unnamed bytes. */
static void mutate_word(struct gb *b)
{
	struct g_launch *l;
	struct g_word *w = any_word(b, &l);
	if (!w)
		return;
	const struct g_tensor *t = word_target(b, l, w);
	int k = (int)below(b, 4);
	if (k == 0 && t)
		w->x = t->off + t->size;                 /* one past */
	else if (k == 1 && t)
		w->x += chance(b, 50) ? t->size : -b->p->align;
	else if (k == 2) {
		const struct g_tensor *o = any_plane(b, NULL);
		if (o)
			w->x = pointer_into(b, o);
	} else if (b->p->nwin > 0) {
		const struct ac_window *win = &b->p->win[below(b, (uint64_t)b->p->nwin)];
		w->x = win->base + win->size - 1 - below(b, 64);
	}
}

static void mutate_repeat_words(struct gb *b)
{
	struct g_repeat *r = any_repeat(b);
	if (!r)
		return;
	if (r->nd > 0 && chance(b, 12)) {
		/* Extreme deltas, maybe twice on one word: D beyond int64. */
		struct ac_delta *d = &r->d[below(b, (uint64_t)r->nd)];
		d->delta = chance(b, 50) ? INT64_MIN : INT64_MAX;
		if (chance(b, 50))
			add_delta(r, d->launch, d->word, d->delta);
	} else if (r->nd > 0 && chance(b, 60)) {
		struct ac_delta *d = &r->d[below(b, (uint64_t)r->nd)];
		/* Wrapping arithmetic: any int64 delta is a valid one. */
		uint64_t x = (uint64_t)d->delta;
		x = chance(b, 50) ? x * 2 + 8 : x + b->unit;
		d->delta = (int64_t)x;
	} else if (r->ns > 0 && r->nf > 0) {
		uint64_t f = below(b, r->nf < r->iters ? r->nf : r->iters);
		r->fv[f][below(b, (uint64_t)r->ns)] += b->unit * range(b, 1, 8);
	} else {
		/* A word leaving [0, 2^64): unfine even with no window. */
		struct g_launch *l = &b->p->l[r->first];
		if (l->nw > 0 && r->iters > 1) {
			l->w[0].x = 0;
			add_delta(r, r->first, 0, -1);
		}
	}
}

static void mutate_c(struct gb *b)
{
	struct g_launch *l = any_launch(b);
	int k = (int)below(b, 100);
	if (k < 35)
		mutate_word(b);
	else if (k < 60 && l)
		identity_broken(b, &l->ident, &b->p->ph[l->phase].id, N_BROKEN_KINDS);
	else if (k < 85)
		mutate_repeat_words(b);
	else {
		/* Drop a plane: words pointing into it become unnamed (and the
		 * plane keys of (D) change). */
		int ph;
		struct g_tensor *t = any_plane(b, &ph);
		if (t) {
			*t = b->p->ph[ph].pl[b->p->ph[ph].np - 1];
			b->p->ph[ph].np--;
		}
	}
}

/* Positions of the table segment running phase ph, for (D) mutations. */
static int phase_segment(const struct gb *b, int ph)
{
	for (int s = 0; s < b->main_segs; s++)
		if (b->seg_phase[s] == ph)
			return s;
	return -1;
}

static int same_key(const struct g_tensor *a, const struct g_tensor *c)
{
	return bytes_eq(&a->name, &c->name) && a->off == c->off &&
	       a->size == c->size;
}

/* Phase ph declares a plane over any byte of t, or t's key. */
static int phase_touches(const struct gb *b, int ph, const struct g_tensor *t)
{
	const struct g_phase *p = &b->p->ph[ph];
	for (int i = 0; i < p->np; i++)
		if (same_key(&p->pl[i], t) ||
		    (p->pl[i].off < t->off + t->size && t->off < p->pl[i].off + p->pl[i].size))
			return 1;
	return 0;
}

/* A phase that runs between c's latest declaration and phase ph (which
 * carries c) and has no plane over c's bytes, or -1. */
static int phase_between(struct gb *b, int ph, const struct g_tensor *c)
{
	int seg = phase_segment(b, ph);
	int j = -1;
	for (int s = 0; s < seg; s++)
		if (phase_touches(b, b->seg_phase[s], c))
			j = s;
	if (j + 1 >= seg)
		return -1;
	int m = b->seg_phase[range(b, (uint64_t)j + 1, (uint64_t)seg - 1)];
	return phase_touches(b, m, c) ? -1 : m;
}

/* Phase m declares a fresh plane over c's bytes: another name, the same
 * name at another size or place (a different key all the same), or --
 * sometimes -- exactly c's key, which is no overwrite at all. */
static void add_clobber(struct gb *b, int m, const struct g_tensor *c)
{
	struct g_phase *mp = &b->p->ph[m];
	if (mp->np == G_MAX_PLANES)
		return;
	struct g_tensor t = *c;
	t.carried = 0;
	switch (below(b, 5)) {
	case 0:
		bytes_text(&t.name, "clobber");
		break;
	case 1:
		bytes_text(&t.name, "clobber");
		if (c->size > b->p->align) {    /* only c's last bytes */
			t.off = align_down(c->off + c->size - 1, b->p->align);
			t.size = b->p->align;
		}
		break;
	case 2:
		t.size += b->unit;              /* same name and offset */
		break;
	case 3:
		if (c->size > b->p->align)      /* same name, shifted */
			t.off += b->p->align;
		else
			t.size += 1;
		break;
	default:
		break;                          /* the same key: harmless */
	}
	mp->pl[mp->np++] = t;
}

/* A phase between a value's declarations writes over it: the carried
 * value is overwritten. */
static void overwrite_carried(struct gb *b)
{
	for (int tries = 0; tries < 16; tries++) {
		int ph;
		struct g_tensor *c = any_plane(b, &ph);
		if (!c || !c->carried)
			continue;
		int m = phase_between(b, ph, c);
		if (m < 0)
			continue;
		add_clobber(b, m, c);
		return;
	}
}

/* A body phase after the one carrying c writes over it: iteration 0 is
 * fine, the next iteration reads an overwritten value. */
static void loop_clobber(struct gb *b)
{
	for (int tries = 0; b->body_s >= 0 && tries < 16; tries++) {
		int s = (int)range(b, (uint64_t)b->body_s, (uint64_t)b->body_e);
		struct g_phase *p = &b->p->ph[b->seg_phase[s]];
		if (s == b->body_e || p->np == 0)
			continue;
		struct g_tensor *c = &p->pl[below(b, (uint64_t)p->np)];
		int m = b->seg_phase[range(b, (uint64_t)s + 1, (uint64_t)b->body_e)];
		if (!c->carried || phase_touches(b, m, c))
			continue;
		add_clobber(b, m, c);
		return;
	}
	overwrite_carried(b);
}

static void mutate_schedule_order(struct gb *b)
{
	struct g_prog *p = b->p;
	if (p->nrefs >= 2 && chance(b, 60)) {
		int i = (int)below(b, (uint64_t)p->nrefs);
		int j = (int)below(b, (uint64_t)p->nrefs);
		struct ac_ref t = p->refs[i];
		p->refs[i] = p->refs[j];
		p->refs[j] = t;
	} else if (p->nrefs >= 1) {
		/* Start later in the table: earlier declarations never run. */
		uint64_t end = p->refs[0].first + p->refs[0].count;
		uint64_t c = random_cut(b, p->refs[0].first, end - 1);
		p->refs[0].count = end - c;
		p->refs[0].first = c;
		if (p->refs[0].count == 0)
			p->refs[0].count = 1;
	}
}

static void mutate_d(struct gb *b)
{
	int ph;
	struct g_tensor *t;
	switch (below(b, 7)) {
	case 0:
	case 1:
		mutate_schedule_order(b);
		break;
	case 2:
		overwrite_carried(b);
		break;
	case 6:
		loop_clobber(b);
		break;
	case 3:
		t = any_plane(b, &ph);
		if (t && t->carried) {
			if (chance(b, 25))
				t->off += b->unit;       /* same name, another place */
			else
				bytes_text(&t->name, "renamed");
		}
		break;
	case 4:
		t = any_plane(b, &ph);
		if (t)
			t->carried = !t->carried;
		break;
	default:
		/* Re-run an earlier range at the end. */
		if (b->p->nrefs > 0)
			add_ref(b->p, b->p->refs[0].first,
				b->p->refs[0].first + b->p->refs[0].count);
		overwrite_carried(b);
		break;
	}
}

/* A table breaking spec 1.2: a slot twice, a slot off the body or past
 * its launch's words, or slots with no frames. */
static void malformed_table(struct gb *b, struct g_repeat *r)
{
	if (r->ns == 0) {
		r->s[0].launch = r->first;
		r->s[0].word = 0;
		r->ns = 1;
		r->nf = 1;
		r->fv[0][0] = 0;
		if (b->p->l[r->first].nw == 0)
			return;                         /* already malformed */
	}
	switch (below(b, 4)) {
	case 0:
		if (r->ns < G_MAX_SLOTS) {
			r->s[r->ns] = r->s[below(b, (uint64_t)r->ns)];
			for (uint64_t f = 0; f < r->nf; f++)
				r->fv[f][r->ns] = r->fv[f][0];
			r->ns++;
			break;
		}
		/* fall through */
	case 1:
		r->nf = 0;
		break;
	case 2:
		r->s[0].launch = chance(b, 50) ? r->first + r->count
					       : r->first - 1;
		break;
	default:
		r->s[0].word = (uint64_t)b->p->l[r->s[0].launch].nw;
		break;
	}
}

static void malformed_repeat(struct gb *b)
{
	struct g_repeat *r = any_repeat(b);
	if (!r) {
		b->p->align = 0;
		return;
	}
	switch (below(b, 8)) {
	case 0:
		r->count = 0;
		break;
	case 1:
		r->iters = chance(b, 50) ? 0 : (uint64_t)1 << 32;
		break;
	case 2:
		if (r->nd > 0)
			r->d[0].word = b->p->l[r->d[0].launch].nw;
		else
			add_delta(r, r->first, G_MAX_WORDS, 1);
		break;
	case 3:
		add_delta(r, r->first + r->count, 0, 1);    /* outside body */
		break;
	case 4:
		r->count = (uint64_t)b->p->nl - r->first + 1;  /* past the end */
		break;
	case 5:
		malformed_table(b, r);
		break;
	case 6:
		if (b->p->nr < G_MAX_REPEATS) {          /* overlapping bodies */
			struct g_repeat *o = &b->p->r[b->p->nr++];
			memset(o, 0, sizeof(*o));
			o->first = r->first + r->count - 1;
			o->count = 1;
			o->iters = 2;
		}
		break;
	default:
		if (b->p->nrefs > 0 && r->count >= 2) {  /* a ref cutting it */
			struct ac_ref *ref = &b->p->refs[below(b, (uint64_t)b->p->nrefs)];
			if (chance(b, 50)) {             /* starts inside */
				ref->first = r->first + range(b, 1, r->count - 1);
				ref->count = r->first + r->count - ref->first +
					     below(b, (uint64_t)b->p->nl - r->first - r->count + 1);
			} else {                         /* ends inside */
				ref->first = r->first - below(b, r->first + 1);
				ref->count = r->first + range(b, 1, r->count - 1) - ref->first;
			}
		} else if (b->p->nrefs < G_MAX_REFS) {   /* a ref of count 0 */
			b->p->refs[b->p->nrefs].first = r->first;
			b->p->refs[b->p->nrefs].count = 0;
			b->p->nrefs++;
		}
		break;
	}
}

/* Values whose sums wrap around 2^64: first + count, base + size. */
static void malformed_wrap(struct gb *b)
{
	struct g_prog *p = b->p;
	struct g_repeat *r = any_repeat(b);
	switch (below(b, 7)) {
	case 0:
		if (p->nrefs > 0) {
			p->refs[0].first = UINT64_MAX;
			p->refs[0].count = 2;
			return;
		}
		break;
	case 1:
		if (p->nrefs > 0) {
			p->refs[0].first = 1;
			p->refs[0].count = UINT64_MAX;
			return;
		}
		break;
	case 2:
		if (r) {
			r->first = chance(b, 50) ? UINT64_MAX : 1;
			r->count = r->first == 1 ? UINT64_MAX : 2;
			return;
		}
		break;
	case 3:
		if (r) {
			r->iters = UINT64_MAX - below(b, 2) * ((uint64_t)1 << 32);
			return;
		}
		break;
	case 4:
		if (r && r->nd > 0) {
			r->d[0].launch = UINT64_MAX - below(b, 2) * r->d[0].launch;
			return;
		}
		if (r && r->ns > 0) {
			r->s[0].word = UINT64_MAX;
			return;
		}
		break;
	case 5:
		if (p->nwin > 0) {
			p->win[0].base = UINT64_MAX;
			p->win[0].size = 2;
			return;
		}
		break;
	default:
		if (p->ng > 0) {
			p->g[0].off = UINT64_MAX;
			p->g[0].size = 2;
			return;
		}
		break;
	}
	p->align = 0;
}

static void malformed_plan(struct gb *b)
{
	struct g_prog *p = b->p;
	struct g_tensor *t;
	switch (below(b, 7)) {
	case 6:
		malformed_wrap(b);
		break;
	case 0:
		p->align = (uint64_t[]){ 0, 3, 48, (uint64_t)1 << 33,
					 (uint64_t)1 << 63 }[below(b, 5)];
		break;
	case 1:
		if (p->nwin > 0) {
			struct ac_window *w = &p->win[0];
			if (chance(b, 50))
				w->size = 0;
			else
				w->base = (uint64_t)0 - w->size + 1;
		}
		break;
	case 2:
		t = any_tensor(b);
		if (t && t->size == 0)
			t->size = 1;
		if (t)
			t->off = (uint64_t)0 - t->size + 1 + below(b, 4);
		break;
	case 3:
		if (p->nph >= 2)
			p->ph[1].id = p->ph[0].id;
		break;
	case 4:
		if (p->nrefs > 0)
			p->refs[below(b, (uint64_t)p->nrefs)].count =
				chance(b, 50) ? 0 : (uint64_t)p->nl + 1;
		break;
	default:
		if (p->nrefs > 0) {
			struct ac_ref *ref = &p->refs[below(b, (uint64_t)p->nrefs)];
			ref->first = (uint64_t)p->nl - below(b, 2);
			ref->count = 1 + below(b, 2);
		}
		break;
	}
}

/* Well-formed programs at the edges of spec 1: window and tensors ending
 * exactly at 2^64, identities that parse in unusual ways. */
static void mutate_benign(struct gb *b)
{
	struct g_prog *p = b->p;
	switch (below(b, 3)) {
	case 0: {
		struct g_launch *l = any_launch(b);
		if (l)
			identity_benign(b, &l->ident, &p->ph[l->phase].id);
		break;
	}
	case 1:
		if (p->ng < G_MAX_GLOBALS) {
			uint64_t size = b->unit * range(b, 1, 4);
			add_global(b, "top", (uint64_t)0 - size, size);
		}
		break;
	default:
		if (p->nwin < G_MAX_WINDOWS) {
			uint64_t size = b->unit * range(b, 1, 4);
			add_window(b, (uint64_t)0 - size, size);
		}
		break;
	}
}

static int mutate(struct gb *b)
{
	int k = (int)below(b, 100), aim;
	if (k < 28) {
		aim = GEN_AIM_NONE;             /* as generated */
	} else if (k < 40) {
		aim = GEN_AIM_AB;
		mutate_ab(b);
	} else if (k < 58) {
		aim = GEN_AIM_C;
		mutate_c(b);
	} else if (k < 84) {
		aim = GEN_AIM_D;
		mutate_d(b);
	} else if (k < 93) {
		aim = GEN_AIM_MALFORMED;
		if (k < 89)
			malformed_repeat(b);
		else
			malformed_plan(b);
	} else {
		aim = GEN_AIM_BENIGN;
		mutate_benign(b);
	}
	/* Independently: unusual but valid identities on a few launches. */
	for (int i = 0; i < b->p->nl; i++)
		if (chance(b, 4))
			identity_benign(b, &b->p->l[i].ident,
					&b->p->ph[b->p->l[i].phase].id);
	return aim;
}

/* ---- flattening into struct ac_model -------------------------------------------------- */

struct gen_owned {
	struct ac_model m;
	struct ac_window *windows;
	struct ac_tensor *globals, *planes;
	struct ac_phase *phases;
	struct ac_launch *launches;
	uint64_t *words;
	struct ac_repeat *repeats;
	struct ac_delta *deltas;
	struct ac_slot *slots;
	uint64_t *frames;
	struct ac_ref *refs;
	uint8_t *bytes;
	size_t n_bytes;
};

static void *alloc_array(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		abort();
	return p;
}

/* Copies a byte string into the owned block. */
static struct ac_bytes keep_bytes(struct gen_owned *o, const void *data,
				  uint32_t len)
{
	struct ac_bytes out = { o->bytes + o->n_bytes, len };
	if (len)
		memcpy(o->bytes + o->n_bytes, data, len);
	o->n_bytes += len;
	return out;
}

static struct ac_tensor flat_tensor(struct gen_owned *o, const struct g_tensor *t)
{
	struct ac_tensor out;
	memset(&out, 0, sizeof(out));
	out.name = keep_bytes(o, t->name.b, t->name.len);
	out.offset = t->off;
	out.size = t->size;
	out.carried = (uint8_t)t->carried;
	return out;
}

static size_t count_bytes(const struct g_prog *p)
{
	size_t n = 0;
	for (int i = 0; i < p->ng; i++)
		n += p->g[i].name.len;
	for (int i = 0; i < p->nph; i++) {
		n += p->ph[i].id.len;
		for (int j = 0; j < p->ph[i].np; j++)
			n += p->ph[i].pl[j].name.len;
	}
	for (int i = 0; i < p->nl; i++)
		n += p->l[i].ident.len;
	return n;
}

static void flatten_plan(struct gen_owned *o, const struct g_prog *p)
{
	struct ac_model *m = &o->m;
	m->alignment = p->align;
	m->n_windows = (uint32_t)p->nwin;
	o->windows = alloc_array((size_t)p->nwin, sizeof(*o->windows));
	memcpy(o->windows, p->win, (size_t)p->nwin * sizeof(*o->windows));
	m->n_globals = (uint32_t)p->ng;
	o->globals = alloc_array((size_t)p->ng, sizeof(*o->globals));
	for (int i = 0; i < p->ng; i++)
		o->globals[i] = flat_tensor(o, &p->g[i]);
	m->n_phases = (uint32_t)p->nph;
	o->phases = alloc_array((size_t)p->nph, sizeof(*o->phases));
	o->planes = alloc_array((size_t)p->nph * G_MAX_PLANES, sizeof(*o->planes));
	for (int i = 0; i < p->nph; i++) {
		o->phases[i].identity = keep_bytes(o, p->ph[i].id.b, p->ph[i].id.len);
		o->phases[i].plane_first = m->n_planes;
		o->phases[i].plane_count = (uint32_t)p->ph[i].np;
		for (int j = 0; j < p->ph[i].np; j++)
			o->planes[m->n_planes++] = flat_tensor(o, &p->ph[i].pl[j]);
	}
}

static void flatten_table(struct gen_owned *o, const struct g_prog *p)
{
	struct ac_model *m = &o->m;
	m->n_launches = (uint32_t)p->nl;
	o->launches = alloc_array((size_t)p->nl, sizeof(*o->launches));
	o->words = alloc_array((size_t)p->nl * G_MAX_WORDS, sizeof(*o->words));
	for (int i = 0; i < p->nl; i++) {
		struct ac_launch *l = &o->launches[i];
		l->identity = keep_bytes(o, p->l[i].ident.b, p->l[i].ident.len);
		l->word_first = m->n_words;
		l->word_count = (uint32_t)p->l[i].nw;
		for (int k = 0; k < p->l[i].nw; k++)
			o->words[m->n_words++] = p->l[i].w[k].x;
	}
	m->n_repeats = (uint32_t)p->nr;
	o->repeats = alloc_array((size_t)p->nr, sizeof(*o->repeats));
	o->deltas = alloc_array((size_t)p->nr * G_MAX_DELTAS, sizeof(*o->deltas));
	o->slots = alloc_array((size_t)p->nr * G_MAX_SLOTS, sizeof(*o->slots));
	o->frames = alloc_array((size_t)p->nr * G_MAX_FRAMES * G_MAX_SLOTS,
				sizeof(*o->frames));
	for (int i = 0; i < p->nr; i++) {
		const struct g_repeat *g = &p->r[i];
		struct ac_repeat *r = &o->repeats[i];
		r->first = g->first;
		r->count = g->count;
		r->iterations = g->iters;
		r->delta_first = m->n_deltas;
		r->delta_count = (uint32_t)g->nd;
		memcpy(o->deltas + m->n_deltas, g->d, (size_t)g->nd * sizeof(*g->d));
		m->n_deltas += (uint32_t)g->nd;
		r->slot_first = m->n_slots;
		r->slot_count = (uint32_t)g->ns;
		memcpy(o->slots + m->n_slots, g->s, (size_t)g->ns * sizeof(*g->s));
		m->n_slots += (uint32_t)g->ns;
		r->frame_count = g->nf;
		r->frame_value_first = m->n_frame_values;
		for (uint64_t f = 0; f < g->nf; f++)
			for (int s = 0; s < g->ns; s++)
				o->frames[m->n_frame_values++] = g->fv[f][s];
	}
	m->n_refs = (uint64_t)p->nrefs;
	o->refs = alloc_array((size_t)p->nrefs, sizeof(*o->refs));
	memcpy(o->refs, p->refs, (size_t)p->nrefs * sizeof(*o->refs));
}

static void publish(struct gen_owned *o)
{
	struct ac_model *m = &o->m;
	m->windows = o->windows;
	m->globals = o->globals;
	m->phases = o->phases;
	m->planes = o->planes;
	m->launches = o->launches;
	m->words = o->words;
	m->repeats = o->repeats;
	m->deltas = o->deltas;
	m->slots = o->slots;
	m->frame_values = o->frames;
	m->refs = o->refs;
}

static struct ac_model *flatten(const struct g_prog *p)
{
	struct gen_owned *o = alloc_array(1, sizeof(*o));
	o->bytes = alloc_array(count_bytes(p), 1);
	flatten_plan(o, p);
	flatten_table(o, p);
	publish(o);
	return &o->m;
}

void gen_model_free(struct ac_model *m)
{
	if (!m)
		return;
	struct gen_owned *o = (struct gen_owned *)m;
	free(o->windows);
	free(o->globals);
	free(o->planes);
	free(o->phases);
	free(o->launches);
	free(o->words);
	free(o->repeats);
	free(o->deltas);
	free(o->slots);
	free(o->frames);
	free(o->refs);
	free(o->bytes);
	free(o);
}

/* ---- the generator ---------------------------------------------------------------------- */

static int build(struct gb *b)
{
	struct g_prog *p = b->p;
	choose_alignment(b);
	choose_plan(b);
	p->nph = (int)range(b, 2, 6);
	choose_identities(b);
	choose_segments(b);
	choose_values(b);
	value_spans(b);
	place_values(b);
	if (b->top && chance(b, 50))
		workspace_to_top(b);
	fill_phases(b);
	for (int s = 0; s < b->main_segs; s++)
		add_launches(b, s);
	b->n_main = p->nl;
	choose_repeats(b);
	if (chance(b, 4))
		add_unreferenced_repeat(b);
	choose_schedule(b);
	if (chance(b, 1)) {
		/* A plan alone; usually with an empty schedule too. */
		p->nl = p->nr = 0;
		if (chance(b, 90))
			p->nrefs = 0;
	}
	return mutate(b);
}

static struct ac_model *gen_tiled(struct gen_rng *r);

struct ac_model *gen_model(struct gen_rng *r)
{
	return gen_model_aimed(r, NULL);
}

/* ---- tiled programs: thousands of planes -------------------------------------------------- */

/*
 * A few phases each tile a stretch of one workspace with planes of one
 * small grain (up to ~1300 planes a phase, misaligned grains so that plane
 * ends rarely coincide): thousands of distinct plane boundaries, for
 * whatever index the library keeps over bytes.  Phases of the same grain
 * share plane keys where their stretches overlap, so carried planes can
 * be sound; whether they are depends on the schedule.
 */
#define T_MAX_PHASES 4
#define T_TILES 8000                 /* workspace length, in grains of 1 */

struct tiled {
	struct gen_rng *r;
	struct gen_owned *o;
	uint64_t align, base, len;
	int np;
	uint64_t grain[T_MAX_PHASES], size[T_MAX_PHASES];
	uint64_t lo[T_MAX_PHASES], hi[T_MAX_PHASES];
};

static uint64_t t_below(struct tiled *t, uint64_t n)
{
	return gen_rng_below(t->r, n);
}

/* Phase j (< i) has a tile with this offset and phase i's grain. */
static int tile_declared_before(const struct tiled *t, int i, uint64_t off)
{
	for (int j = 0; j < i; j++)
		if (t->grain[j] == t->grain[i] && t->size[j] == t->size[i] &&
		    off >= t->lo[j] && off + t->grain[j] <= t->hi[j])
			return 1;
	return 0;
}

static void tiled_phase(struct tiled *t, int i)
{
	struct ac_model *m = &t->o->m;
	static const uint64_t grains[] = { 3, 5, 7, 3, 5 };
	uint64_t g = grains[t_below(t, 2 + (uint64_t)i)] * t->align;
	uint64_t tiles = t->len / g;
	uint64_t first = t_below(t, tiles / 2);
	uint64_t count = tiles / 4 + t_below(t, tiles - first - tiles / 4 + 1);
	t->grain[i] = g;
	t->lo[i] = t->base + first * g;
	t->hi[i] = t->lo[i] + count * g;
	char id[4] = { 'T', (char)('0' + i), 0, 0 };
	struct ac_phase *ph = &t->o->phases[i];
	ph->identity = keep_bytes(t->o, id, 2);
	ph->plane_first = m->n_planes;
	ph->plane_count = (uint32_t)count;
	int sound = t_below(t, 2) == 0;
	/* Tiles with a gap after each: both ends are distinct boundaries. */
	uint64_t size = t_below(t, 2) ? g : g - t->align;
	t->size[i] = size;
	for (uint64_t k = 0; k < count; k++) {
		struct ac_tensor *pl = &t->o->planes[m->n_planes++];
		memset(pl, 0, sizeof(*pl));
		pl->name = keep_bytes(t->o, "t", 1);
		pl->offset = t->lo[i] + k * g;
		pl->size = size;
		/* A few carried planes: where an earlier phase of this grain
		 * declared the same key, or (half the programs) anywhere. */
		if (i > 0 && t_below(t, count) < 30 &&
		    (!sound || tile_declared_before(t, i, pl->offset)))
			pl->carried = 1;
	}
}

/* One or two launches per phase, words pointing into its tiles. */
static void tiled_launches(struct tiled *t)
{
	struct ac_model *m = &t->o->m;
	for (int i = 0; i < t->np; i++) {
		const struct ac_phase *ph = &t->o->phases[i];
		uint8_t id[5] = { 0x9a, 0x03, 0x02, 'T', (uint8_t)('0' + i) };
		for (int k = (int)t_below(t, 2); k >= 0; k--) {
			struct ac_launch *l = &t->o->launches[m->n_launches++];
			memset(l, 0, sizeof(*l));
			l->identity = keep_bytes(t->o, id, sizeof(id));
			l->word_first = m->n_words;
			l->word_count = 1 + (uint32_t)t_below(t, 3);
			for (uint32_t w = 0; w < l->word_count; w++) {
				const struct ac_tensor *pl = &t->o->planes[
					ph->plane_first + t_below(t, ph->plane_count)];
				t->o->words[m->n_words++] = pl->offset + t_below(t, pl->size);
			}
		}
	}
}

/* Maybe a repeat over the middle launches; a schedule over the table. */
static void tiled_schedule(struct tiled *t)
{
	struct ac_model *m = &t->o->m;
	uint64_t n = m->n_launches, first = 1, count = n - 2;
	if (t_below(t, 5) < 2) {
		struct ac_repeat *r = &t->o->repeats[m->n_repeats++];
		memset(r, 0, sizeof(*r));
		r->first = first;
		r->count = count;
		r->iterations = 2 + t_below(t, 3);
	}
	if (t_below(t, 5) < 3) {
		t->o->refs[m->n_refs++] = (struct ac_ref){ 0, n };
		return;
	}
	/* Random references that never cut the body [1, n - 1). */
	for (int k = 1 + (int)t_below(t, 3); k > 0; k--) {
		uint64_t a = t_below(t, n), b = a + 1 + t_below(t, n - a);
		if (m->n_repeats && ((a > first && a < first + count) ||
				     (b > first && b < first + count))) {
			a = 0;
			b = n;
		}
		t->o->refs[m->n_refs++] = (struct ac_ref){ a, b - a };
	}
}

static struct ac_model *gen_tiled(struct gen_rng *r)
{
	struct tiled t = { .r = r };
	t.o = alloc_array(1, sizeof(*t.o));
	struct gen_owned *o = t.o;
	struct ac_model *m = &o->m;
	t.align = t_below(&t, 4) ? 1 : 8;
	t.len = T_TILES * t.align;
	t.base = (1 + t_below(&t, (uint64_t)1 << 30)) << 20;
	t.np = 3 + (int)t_below(&t, T_MAX_PHASES - 2);
	size_t max_planes = (size_t)t.np * T_TILES / 3 + 1;
	o->bytes = alloc_array(max_planes + 64 * T_MAX_PHASES, 1);
	o->windows = alloc_array(1, sizeof(*o->windows));
	o->globals = alloc_array(1, sizeof(*o->globals));
	o->phases = alloc_array(T_MAX_PHASES, sizeof(*o->phases));
	o->planes = alloc_array(max_planes, sizeof(*o->planes));
	o->launches = alloc_array(2 * T_MAX_PHASES, sizeof(*o->launches));
	o->words = alloc_array(6 * T_MAX_PHASES, sizeof(*o->words));
	o->repeats = alloc_array(1, sizeof(*o->repeats));
	o->refs = alloc_array(4, sizeof(*o->refs));
	m->alignment = t.align;
	m->n_windows = 1;
	o->windows[0] = (struct ac_window){ { NULL, 0 }, t.base - 4096, t.len + 8192 };
	m->n_globals = 1;
	o->globals[0].name = keep_bytes(o, "g", 1);
	o->globals[0].offset = t.base - 1024;
	o->globals[0].size = 1024;
	m->n_phases = (uint32_t)t.np;
	for (int i = 0; i < t.np; i++)
		tiled_phase(&t, i);
	tiled_launches(&t);
	tiled_schedule(&t);
	publish(o);
	return m;
}

struct ac_model *gen_model_aimed(struct gen_rng *r, int *aim)
{
	if (gen_rng_below(r, 200) == 0) {
		if (aim)
			*aim = GEN_AIM_TILED;
		return gen_tiled(r);
	}
	struct gb *b = alloc_array(1, sizeof(*b));
	b->r = r;
	b->p = alloc_array(1, sizeof(*b->p));
	int a = build(b);
	if (aim)
		*aim = a;
	struct ac_model *m = flatten(b->p);
	free(b->p);
	free(b);
	return m;
}

/* ---- copies and dumps ------------------------------------------------------------------- */

static void *dup_array(const void *src, uint64_t n, size_t size)
{
	void *p = alloc_array((size_t)n, size);
	if (n)
		memcpy(p, src, (size_t)n * size);
	return p;
}

/* Copies a byte string of the source model into the owned block. */
static void copy_bytes(struct gen_owned *o, struct ac_bytes *b)
{
	*b = keep_bytes(o, b->data, b->len);
}

struct ac_model *gen_model_copy(const struct ac_model *m)
{
	struct gen_owned *o = alloc_array(1, sizeof(*o));
	o->m = *m;
	o->windows = dup_array(m->windows, m->n_windows, sizeof(*o->windows));
	o->globals = dup_array(m->globals, m->n_globals, sizeof(*o->globals));
	o->phases = dup_array(m->phases, m->n_phases, sizeof(*o->phases));
	o->planes = dup_array(m->planes, m->n_planes, sizeof(*o->planes));
	o->launches = dup_array(m->launches, m->n_launches, sizeof(*o->launches));
	o->words = dup_array(m->words, m->n_words, sizeof(*o->words));
	o->repeats = dup_array(m->repeats, m->n_repeats, sizeof(*o->repeats));
	o->deltas = dup_array(m->deltas, m->n_deltas, sizeof(*o->deltas));
	o->slots = dup_array(m->slots, m->n_slots, sizeof(*o->slots));
	o->frames = dup_array(m->frame_values, m->n_frame_values, sizeof(*o->frames));
	o->refs = dup_array(m->refs, m->n_refs, sizeof(*o->refs));
	size_t n = 0;
	for (uint32_t i = 0; i < m->n_windows; i++)
		n += m->windows[i].name.len;
	for (uint32_t i = 0; i < m->n_globals; i++)
		n += m->globals[i].name.len;
	for (uint32_t i = 0; i < m->n_planes; i++)
		n += m->planes[i].name.len;
	for (uint32_t i = 0; i < m->n_phases; i++)
		n += m->phases[i].identity.len;
	for (uint32_t i = 0; i < m->n_launches; i++)
		n += m->launches[i].identity.len;
	o->bytes = alloc_array(n, 1);
	for (uint32_t i = 0; i < m->n_windows; i++)
		copy_bytes(o, &o->windows[i].name);
	for (uint32_t i = 0; i < m->n_globals; i++)
		copy_bytes(o, &o->globals[i].name);
	for (uint32_t i = 0; i < m->n_planes; i++)
		copy_bytes(o, &o->planes[i].name);
	for (uint32_t i = 0; i < m->n_phases; i++)
		copy_bytes(o, &o->phases[i].identity);
	for (uint32_t i = 0; i < m->n_launches; i++)
		copy_bytes(o, &o->launches[i].identity);
	publish(o);
	return &o->m;
}

/* "key": "text" when the bytes are plain printable ASCII, else
 * "key_hex": "..." (program-json.md's _hex twins). */
static void dump_bytes(FILE *f, const char *key, struct ac_bytes b)
{
	int plain = 1;
	for (uint32_t i = 0; i < b.len; i++)
		if (b.data[i] < 0x20 || b.data[i] > 0x7e || b.data[i] == '"' ||
		    b.data[i] == '\\')
			plain = 0;
	if (plain) {
		fprintf(f, "\"%s\": \"%.*s\"", key, (int)b.len, (const char *)b.data);
		return;
	}
	fprintf(f, "\"%s_hex\": \"", key);
	for (uint32_t i = 0; i < b.len; i++)
		fprintf(f, "%02x", b.data[i]);
	fprintf(f, "\"");
}

static void dump_u64(FILE *f, const char *key, uint64_t v)
{
	fprintf(f, "\"%s\": \"0x%llx\"", key, (unsigned long long)v);
}

static void dump_tensor(FILE *f, const struct ac_tensor *t, int plane)
{
	fprintf(f, "{");
	dump_bytes(f, "name", t->name);
	fprintf(f, ", ");
	dump_u64(f, "offset", t->offset);
	fprintf(f, ", ");
	dump_u64(f, "size", t->size);
	if (plane)
		fprintf(f, ", \"carried\": %s", t->carried ? "true" : "false");
	fprintf(f, "}");
}

static void dump_plan(FILE *f, const struct ac_model *m)
{
	fprintf(f, "{\"format\": \"arena-program/1\",\n");
	dump_u64(f, "alignment", m->alignment);
	fprintf(f, ",\n\"windows\": [");
	for (uint32_t i = 0; i < m->n_windows; i++) {
		fprintf(f, "%s\n {", i ? "," : "");
		if (m->windows[i].name.len) {
			dump_bytes(f, "name", m->windows[i].name);
			fprintf(f, ", ");
		}
		dump_u64(f, "base", m->windows[i].base);
		fprintf(f, ", ");
		dump_u64(f, "size", m->windows[i].size);
		fprintf(f, "}");
	}
	fprintf(f, "],\n\"globals\": [");
	for (uint32_t i = 0; i < m->n_globals; i++) {
		fprintf(f, "%s\n ", i ? "," : "");
		dump_tensor(f, &m->globals[i], 0);
	}
	fprintf(f, "],\n\"phases\": [");
	for (uint32_t i = 0; i < m->n_phases; i++) {
		const struct ac_phase *ph = &m->phases[i];
		fprintf(f, "%s\n {", i ? "," : "");
		dump_bytes(f, "identity", ph->identity);
		fprintf(f, ", \"planes\": [");
		for (uint32_t j = 0; j < ph->plane_count; j++) {
			fprintf(f, "%s\n  ", j ? "," : "");
			dump_tensor(f, &m->planes[ph->plane_first + j], 1);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "],\n");
}

static void dump_launches(FILE *f, const struct ac_model *m)
{
	fprintf(f, "\"launches\": [");
	for (uint32_t i = 0; i < m->n_launches; i++) {
		const struct ac_launch *l = &m->launches[i];
		struct ac_bytes id = l->identity;
		fprintf(f, "%s\n {\"identity_hex\": \"", i ? "," : "");
		for (uint32_t k = 0; k < id.len; k++)
			fprintf(f, "%02x", id.data[k]);
		fprintf(f, "\", \"words\": [");
		for (uint32_t k = 0; k < l->word_count; k++)
			fprintf(f, "%s\"0x%llx\"", k ? ", " : "",
				(unsigned long long)m->words[l->word_first + k]);
		fprintf(f, "]}");
	}
	fprintf(f, "],\n");
}

static void dump_pair(FILE *f, uint64_t launch, uint64_t word)
{
	dump_u64(f, "launch", launch);
	fprintf(f, ", ");
	dump_u64(f, "word", word);
}

static void dump_frames(FILE *f, const struct ac_model *m,
			const struct ac_repeat *r)
{
	fprintf(f, ",\n  \"table\": {\"slots\": [");
	for (uint32_t k = 0; k < r->slot_count; k++) {
		const struct ac_slot *s = &m->slots[r->slot_first + k];
		fprintf(f, "%s{", k ? ", " : "");
		dump_pair(f, s->launch, s->word);
		fprintf(f, "}");
	}
	fprintf(f, "], \"frames\": [");
	for (uint64_t fr = 0; fr < r->frame_count; fr++) {
		const uint64_t *v = m->frame_values + r->frame_value_first +
				    fr * r->slot_count;
		fprintf(f, "%s[", fr ? ", " : "");
		for (uint32_t k = 0; k < r->slot_count; k++)
			fprintf(f, "%s\"0x%llx\"", k ? ", " : "",
				(unsigned long long)v[k]);
		fprintf(f, "]");
	}
	fprintf(f, "]}");
}

static void dump_repeats(FILE *f, const struct ac_model *m)
{
	fprintf(f, "\"repeats\": [");
	for (uint32_t i = 0; i < m->n_repeats; i++) {
		const struct ac_repeat *r = &m->repeats[i];
		fprintf(f, "%s\n {", i ? "," : "");
		dump_u64(f, "first", r->first);
		fprintf(f, ", ");
		dump_u64(f, "count", r->count);
		fprintf(f, ", ");
		dump_u64(f, "iterations", r->iterations);
		fprintf(f, ", \"deltas\": [");
		for (uint32_t k = 0; k < r->delta_count; k++) {
			const struct ac_delta *d = &m->deltas[r->delta_first + k];
			fprintf(f, "%s{", k ? ", " : "");
			dump_pair(f, d->launch, d->word);
			fprintf(f, ", \"delta\": \"%lld\"}", (long long)d->delta);
		}
		fprintf(f, "]");
		if (r->frame_count || r->slot_count)
			dump_frames(f, m, r);
		fprintf(f, "}");
	}
	fprintf(f, "],\n");
}

static void dump_schedule(FILE *f, const struct ac_model *m)
{
	fprintf(f, "\"schedule\": [");
	for (uint64_t i = 0; i < m->n_refs; i++) {
		fprintf(f, "%s{", i ? ", " : "");
		dump_u64(f, "first", m->refs[i].first);
		fprintf(f, ", ");
		dump_u64(f, "count", m->refs[i].count);
		fprintf(f, "}");
	}
	fprintf(f, "]}\n");
}

void gen_model_dump_json(FILE *f, const struct ac_model *m)
{
	dump_plan(f, m);
	dump_launches(f, m);
	dump_repeats(f, m);
	dump_schedule(f, m);
}
