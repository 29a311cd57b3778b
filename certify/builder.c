/* SPDX-License-Identifier: MIT */
/*
 * A program model built call by call (include/arenaguard/builder.h).
 *
 * Each table grows in its own array; byte strings go to one growing pool
 * per section, in the order the JSON reader and the image lay out a
 * model's strings (windows, globals, phases, planes, launches), and an
 * entry holds its string's offset until ac_builder_finish() copies the
 * tables into one model_owned (aci_model_owned_alloc, as the readers do)
 * and turns the offsets into pointers; the words' array is handed over
 * to the model (model_owned.words_block), not copied.  Launches name an
 * identity table, so each distinct identity's bytes are held once.  The counts are the
 * reader's: checked below 2^32 at the end, with its messages.
 *
 * Invariants: b->failed set means b->err holds the first error and no
 * table changed since; every *_first of an entry is the length of its
 * flat array when the entry was appended.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <arenaguard/builder.h>

#include "identity.h"
#include "internal.h"
#include "path.h"

enum pool {
	POOL_WINDOW, POOL_GLOBAL, POOL_PHASE, POOL_PLANE, POOL_LAUNCH, POOL_N
};

/* A growing array of elements of `size` bytes. */
struct vec {
	uint8_t *a;
	uint64_t n, cap;
};

/* A string of a pool: its offset in its section, and its length. */
struct str {
	uint64_t at;
	uint32_t len;
};

struct entry {             /* a window, global or plane: its name */
	struct ac_tensor t;
	struct str name;
};

struct phase_entry {
	struct ac_phase p;
	struct str identity;
};

struct launch_entry {
	uint32_t identity;        /* into idents */
	uint32_t word_count;
	uint64_t word_first;
};

struct ac_builder {
	uint64_t alignment;
	struct vec windows, globals, phases, planes;   /* struct entry, ... */
	struct vec idents;        /* struct str, in POOL_LAUNCH */
	struct vec launches;      /* struct launch_entry */
	struct vec words;         /* uint64_t */
	struct vec repeats, deltas, slots, frame_values, refs;
	struct vec pool[POOL_N];  /* bytes */
	int in_table;             /* the last repeat's table awaits frames */
	int failed;
	struct ac_error err;
};

/* ---- growth and errors ---------------------------------------------- */

/* Records the first error; returns -1. */
static int fail(ac_builder *b, const char *where, const char *what)
{
	if (!b->failed)
		aci_fail(&b->err, where, "%s", what);
	b->failed = 1;
	return -1;
}

/* Room for n more elements of `size` bytes; the new ones start at
 * v->a + v->n * size.  -1 (sticky "out of memory") when none. */
static int grow(ac_builder *b, struct vec *v, uint64_t n, size_t size)
{
	if (v->a && n <= v->cap - v->n)
		return 0;   /* allocated even for n == 0: push's NULL is failure */
	uint64_t want = v->n + n, cap = v->cap ? v->cap : 16;
	if (want < v->n || want > SIZE_MAX / size)
		return fail(b, "", "program too large to hold in memory");
	while (cap < want)
		cap = cap > SIZE_MAX / 2 / size ? want : cap * 2;
	void *a = realloc(v->a, (size_t)(cap * size));
	if (!a)
		return fail(b, "", "out of memory");
	v->a = a;
	v->cap = cap;
	return 0;
}

/* Appends n elements of `size` bytes (src NULL: zeroed); returns where
 * they went, or NULL (sticky error). */
static void *push(ac_builder *b, struct vec *v, const void *src, uint64_t n,
		  size_t size)
{
	if (grow(b, v, n, size))
		return NULL;
	uint8_t *at = v->a + v->n * size;
	if (src && n)
		memcpy(at, src, (size_t)(n * size));
	else if (n)
		memset(at, 0, (size_t)(n * size));
	v->n += n;
	return at;
}

/* The entry of the table at `path` being appended (its index now). */
static void entry_path(char *where, const char *table, const struct vec *v)
{
	path_index(where, table, v->n);
}

/* Copies a byte string into a pool section; -1 when it is too long for
 * the model's 32-bit length (at `where`, as the JSON reader says it). */
static int take_str(ac_builder *b, enum pool pool, const void *data,
		    size_t len, const char *where, struct str *out)
{
	if (len > UINT32_MAX) {
		char msg[96];
		snprintf(msg, sizeof(msg), "%zu bytes; at most 2^32-1", len);
		return fail(b, where, msg);
	}
	if (len && !data)
		return fail(b, where, "bytes are NULL but their length is not 0");
	out->at = b->pool[pool].n;
	out->len = (uint32_t)len;
	return push(b, &b->pool[pool], data, len, 1) ? 0 : -1;
}

/* "repeats[r].table.frames" into buf. */
static void frames_path(char *buf, uint64_t r)
{
	char repeat[PATH_LEN], table[PATH_LEN];
	path_index(repeat, "repeats", r);
	path_field(table, repeat, "table");
	path_field(buf, table, "frames");
}

/* Calls after an error do nothing; a table that awaits its first frame
 * must get it before anything else is appended. */
static int ready(ac_builder *b)
{
	assert(b);   /* contract: every call takes a builder */
	if (b->failed)
		return -1;
	if (b->in_table == 1) {
		char where[PATH_LEN];
		frames_path(where, b->repeats.n - 1);
		return fail(b, where, "a table needs at least one frame");
	}
	return 0;
}

/* ---- the tables ----------------------------------------------------- */

ac_builder *ac_builder_new(uint64_t alignment)
{
	ac_builder *b = calloc(1, sizeof(*b));
	if (b)
		b->alignment = alignment;
	return b;
}

void ac_builder_free(ac_builder *b)
{
	if (!b)
		return;
	struct vec *all[] = { &b->windows, &b->globals, &b->phases,
			      &b->planes, &b->idents, &b->launches,
			      &b->words, &b->repeats, &b->deltas, &b->slots,
			      &b->frame_values, &b->refs };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		free(all[i]->a);
	for (int p = 0; p < POOL_N; p++)
		free(b->pool[p].a);
	free(b);
}

/* A window, global or plane: name at table[i].name. */
static int add_named(ac_builder *b, struct vec *v, const char *table,
		     enum pool pool, const void *name, size_t len,
		     struct ac_tensor t)
{
	char at[PATH_LEN], where[PATH_LEN];
	struct entry e = { .t = t };
	if (ready(b))
		return -1;
	entry_path(at, table, v);
	path_field(where, at, "name");
	if (take_str(b, pool, name, len, where, &e.name))
		return -1;
	return push(b, v, &e, 1, sizeof(e)) ? 0 : -1;
}

int ac_builder_window(ac_builder *b, const void *name, size_t len,
		      uint64_t base, uint64_t size)
{
	return add_named(b, &b->windows, "windows", POOL_WINDOW, name, len,
			 (struct ac_tensor){ .offset = base, .size = size });
}

int ac_builder_global(ac_builder *b, const void *name, size_t len,
		      uint64_t offset, uint64_t size)
{
	return add_named(b, &b->globals, "globals", POOL_GLOBAL, name, len,
			 (struct ac_tensor){ .offset = offset, .size = size });
}

int ac_builder_phase(ac_builder *b, const void *identity, size_t len)
{
	char at[PATH_LEN], where[PATH_LEN];
	struct phase_entry e = { .p.plane_first = (uint32_t)b->planes.n };
	if (ready(b))
		return -1;
	if (b->planes.n > UINT32_MAX)
		return fail(b, "phases", "more than 2^32-1 planes in all");
	entry_path(at, "phases", &b->phases);
	path_field(where, at, "identity");
	if (take_str(b, POOL_PHASE, identity, len, where, &e.identity))
		return -1;
	return push(b, &b->phases, &e, 1, sizeof(e)) ? 0 : -1;
}

int ac_builder_plane(ac_builder *b, const void *name, size_t len,
		     uint64_t offset, uint64_t size, int carried)
{
	if (ready(b))
		return -1;
	if (b->phases.n == 0)
		return fail(b, "phases", "a plane given before any phase");
	struct phase_entry *ph = (struct phase_entry *)b->phases.a +
				 (b->phases.n - 1);
	char phase[PATH_LEN], table[PATH_LEN], at[PATH_LEN], where[PATH_LEN];
	path_index(phase, "phases", b->phases.n - 1);
	path_field(table, phase, "planes");
	/* the plane's index within its phase names it, as in JSON */
	path_index(at, table, ph->p.plane_count);
	if (ph->p.plane_count == UINT32_MAX)
		return fail(b, at, "more than 2^32-1 planes in a phase");
	path_field(where, at, "name");
	struct entry e = { .t = { .offset = offset, .size = size,
				  .carried = carried != 0 } };
	if (take_str(b, POOL_PLANE, name, len, where, &e.name) ||
	    !push(b, &b->planes, &e, 1, sizeof(e)))
		return -1;
	ph->p.plane_count++;
	return 0;
}

int ac_builder_identity(ac_builder *b, enum ac_identity_form form,
			const void *bytes, size_t len, uint32_t *index)
{
	char where[PATH_LEN];
	if (ready(b))
		return -1;
	path_index(where, "identities", b->idents.n);
	if (form != AC_IDENTITY_PHASE && form != AC_IDENTITY_RAW)
		return fail(b, where, "not an identity form (expected "
			    "AC_IDENTITY_PHASE or AC_IDENTITY_RAW)");
	if (b->idents.n >= UINT32_MAX)
		return fail(b, where, "more than 2^32-1 identities");
	if (len && !bytes)
		return fail(b, where, "bytes are NULL but their length is not 0");
	uint64_t head = form == AC_IDENTITY_PHASE ?
		aci_identity_field51_header(NULL, len) : 0;
	if (len > UINT32_MAX - head)
		return fail(b, where, "longer than 2^32-1 bytes");
	struct str s = { .at = b->pool[POOL_LAUNCH].n,
			 .len = (uint32_t)(len + head) };
	uint8_t *at = push(b, &b->pool[POOL_LAUNCH], NULL, len + head, 1);
	if (!at)
		return -1;
	if (head)
		aci_identity_field51_header(at, len);
	if (len)
		memcpy(at + head, bytes, len);
	if (!push(b, &b->idents, &s, 1, sizeof(s)))
		return -1;
	if (index)
		*index = (uint32_t)(b->idents.n - 1);
	return 0;
}

int ac_builder_launches(ac_builder *b, uint64_t n, const uint32_t *identities,
			const uint32_t *word_counts, const uint64_t *words,
			uint64_t n_words)
{
	char where[PATH_LEN];
	if (ready(b))
		return -1;
	if (n > UINT32_MAX)   /* also keeps the sum below 2^64 */
		return fail(b, "launches", "more than 2^32-1 launches");
	if (n && (!identities || !word_counts))
		return fail(b, "launches", "identities or word counts are NULL "
			    "but there are launches");
	if (n_words && !words)
		return fail(b, "launches", "words are NULL but their count is "
			    "not 0");
	uint64_t sum = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (identities[i] >= b->idents.n) {
			path_index(where, "launches", b->launches.n + i);
			return fail(b, where, "names no entry of the identity "
				    "table");
		}
		sum += word_counts[i];   /* < 2^64: n * 2^32 */
	}
	if (sum != n_words) {
		char msg[128];
		snprintf(msg, sizeof(msg), "the word counts sum to %" PRIu64
			 ", but %" PRIu64 " words are given", sum, n_words);
		return fail(b, "launches", msg);
	}
	if (grow(b, &b->launches, n, sizeof(struct launch_entry)))
		return -1;
	uint64_t first = b->words.n;
	if (!push(b, &b->words, words, n_words, sizeof(uint64_t)))
		return -1;
	struct launch_entry *l = (struct launch_entry *)b->launches.a +
				 b->launches.n;
	for (uint64_t i = 0; i < n; i++) {
		l[i] = (struct launch_entry){ .identity = identities[i],
					      .word_count = word_counts[i],
					      .word_first = first };
		first += word_counts[i];
	}
	b->launches.n += n;
	return 0;
}

int ac_builder_launch(ac_builder *b, uint32_t identity, const uint64_t *words,
		      uint64_t n_words)
{
	if (ready(b))
		return -1;
	if (n_words > UINT32_MAX) {
		char at[PATH_LEN], where[PATH_LEN], msg[96];
		path_index(at, "launches", b->launches.n);
		path_field(where, at, "words");
		snprintf(msg, sizeof(msg), "%" PRIu64 " entries; at most "
			 "2^32-1", n_words);
		return fail(b, where, msg);
	}
	uint32_t count = (uint32_t)n_words;
	return ac_builder_launches(b, 1, &identity, &count, words, n_words);
}

int ac_builder_repeat(ac_builder *b, uint64_t first, uint64_t count,
		      uint64_t iterations)
{
	if (ready(b))
		return -1;
	b->in_table = 0;
	if (b->deltas.n > UINT32_MAX || b->slots.n > UINT32_MAX)
		return fail(b, "repeats", "more than 2^32-1 deltas or slots "
			    "in all");
	/* every run starts at its running sum, as the readers lay it out */
	struct ac_repeat r = { .first = first, .count = count,
			       .iterations = iterations,
			       .delta_first = (uint32_t)b->deltas.n,
			       .slot_first = (uint32_t)b->slots.n,
			       .frame_value_first = b->frame_values.n };
	return push(b, &b->repeats, &r, 1, sizeof(r)) ? 0 : -1;
}

/* The last repeat, or NULL (sticky error at "repeats") when none. */
static struct ac_repeat *last_repeat(ac_builder *b, const char *what)
{
	if (b->repeats.n == 0) {
		fail(b, "repeats", what);
		return NULL;
	}
	return (struct ac_repeat *)b->repeats.a + (b->repeats.n - 1);
}

int ac_builder_delta(ac_builder *b, uint64_t launch, uint64_t word,
		     int64_t delta)
{
	if (ready(b))
		return -1;
	struct ac_repeat *r = last_repeat(b, "a delta given before any repeat");
	if (!r)
		return -1;
	if (b->in_table || r->delta_count == UINT32_MAX)
		return fail(b, "repeats", "a delta given after its repeat's "
			    "table, or more than 2^32-1");
	struct ac_delta d = { .launch = launch, .word = word, .delta = delta };
	if (!push(b, &b->deltas, &d, 1, sizeof(d)))
		return -1;
	r->delta_count++;
	return 0;
}

int ac_builder_table(ac_builder *b, const struct ac_slot *slots,
		     uint64_t n_slots)
{
	if (ready(b))
		return -1;
	struct ac_repeat *r = last_repeat(b, "a table given before any repeat");
	if (!r)
		return -1;
	if (b->in_table)
		return fail(b, "repeats", "a second table given for a repeat");
	if (n_slots > UINT32_MAX) {
		/* as the JSON reader's read_slots says it */
		char repeat[PATH_LEN], table[PATH_LEN], where[PATH_LEN];
		char msg[96];
		path_index(repeat, "repeats", b->repeats.n - 1);
		path_field(table, repeat, "table");
		path_field(where, table, "slots");
		snprintf(msg, sizeof(msg), "%" PRIu64 " entries; at most "
			 "2^32-1", n_slots);
		return fail(b, where, msg);
	}
	if (n_slots && !slots)
		return fail(b, "repeats", "slots are NULL but their count is "
			    "not 0");
	if (!push(b, &b->slots, slots, n_slots, sizeof(*slots)))
		return -1;
	r->slot_count = (uint32_t)n_slots;
	b->in_table = 1;
	return 0;
}

int ac_builder_frame(ac_builder *b, const uint64_t *values, uint64_t n)
{
	assert(b);
	if (b->failed)
		return -1;
	struct ac_repeat *r = last_repeat(b, "a frame given before any repeat");
	if (!r)
		return -1;
	char frames[PATH_LEN], where[PATH_LEN];
	frames_path(frames, b->repeats.n - 1);
	path_index(where, frames, r->frame_count);
	if (!b->in_table)
		return fail(b, where, "a frame given before its table's slots");
	if (n != r->slot_count) {
		char msg[96];
		snprintf(msg, sizeof(msg), "%" PRIu64 " values; expected one "
			 "per slot (%" PRIu32 ")", n, r->slot_count);
		return fail(b, where, msg);
	}
	if (n && !values)
		return fail(b, where, "values are NULL but their count is not 0");
	if (!push(b, &b->frame_values, values, n, sizeof(uint64_t)))
		return -1;
	r->frame_count++;
	b->in_table = 2;   /* has a frame: complete */
	return 0;
}

int ac_builder_ref(ac_builder *b, uint64_t first, uint64_t count)
{
	if (ready(b))
		return -1;
	struct ac_ref ref = { .first = first, .count = count };
	return push(b, &b->refs, &ref, 1, sizeof(ref)) ? 0 : -1;
}

/* ---- the model ------------------------------------------------------ */

/* The counts the model keeps in 32 bits, checked as the reader does. */
static int set_counts(ac_builder *b, struct ac_model *m)
{
	static const char *const tables[] = { "windows", "globals", "phases",
					      "launches", "repeats" };
	const struct vec *v[] = { &b->windows, &b->globals, &b->phases,
				  &b->launches, &b->repeats };
	uint32_t *fields[] = { &m->n_windows, &m->n_globals, &m->n_phases,
			       &m->n_launches, &m->n_repeats };
	for (size_t k = 0; k < 5; k++) {
		if (v[k]->n > UINT32_MAX) {
			char msg[96];
			snprintf(msg, sizeof(msg), "%" PRIu64 " entries; at "
				 "most 2^32-1", v[k]->n);
			return fail(b, tables[k], msg);
		}
		*fields[k] = (uint32_t)v[k]->n;
	}
	if (b->planes.n > UINT32_MAX || b->deltas.n > UINT32_MAX ||
	    b->slots.n > UINT32_MAX)
		return fail(b, "", "more than 2^32-1 planes, deltas or slots "
			    "in all");
	m->alignment = b->alignment;
	m->n_planes = (uint32_t)b->planes.n;
	m->n_deltas = (uint32_t)b->deltas.n;
	m->n_slots = (uint32_t)b->slots.n;
	m->n_words = b->words.n;
	m->n_frame_values = b->frame_values.n;
	m->n_refs = b->refs.n;
	return 0;
}

/* The bytes of a string once the pool sections are laid out. */
static struct ac_bytes bytes_of(const struct model_owned *o,
				const uint64_t *section, enum pool pool,
				struct str s)
{
	return (struct ac_bytes){ .data = o->bytes + section[pool] + s.at,
				  .len = s.len };
}

/* Copies the named tables (windows, globals, planes) into the model. */
static void fill_named(const struct model_owned *o, const uint64_t *section,
		       const struct vec *v, enum pool pool, void *dst,
		       int window)
{
	const struct entry *e = (const struct entry *)v->a;
	for (uint64_t i = 0; i < v->n; i++) {
		struct ac_bytes name = bytes_of(o, section, pool, e[i].name);
		if (window)
			((struct ac_window *)dst)[i] = (struct ac_window){
				.name = name, .base = e[i].t.offset,
				.size = e[i].t.size };
		else {
			struct ac_tensor t = e[i].t;
			t.name = name;
			((struct ac_tensor *)dst)[i] = t;
		}
	}
}

struct ac_model *ac_builder_finish(ac_builder *b, struct ac_error *err)
{
	struct model_owned *o = NULL;
	if (ready(b) || set_counts(b, &(struct ac_model){ 0 }))
		goto fail;
	o = aci_model_owned_new();
	if (!o) {
		fail(b, "", "out of memory");
		goto fail;
	}
	set_counts(b, &o->m);
	uint64_t section[POOL_N], total = 0;
	for (int p = 0; p < POOL_N; p++) {
		section[p] = total;
		total += b->pool[p].n;
	}
	o->bytes_len = total;
	if (aci_model_owned_alloc(o, BORROW_WORDS, &b->err)) {
		b->failed = 1;
		goto fail;
	}
	/* the words, most of a plan, are handed over, not copied again */
	o->words_block = b->words.a;
	o->words_len = b->words.cap * sizeof(uint64_t);
	o->m.words = (const uint64_t *)b->words.a;
	b->words = (struct vec){ 0 };
	for (int p = 0; p < POOL_N; p++)
		if (b->pool[p].n)
			memcpy(o->bytes + section[p], b->pool[p].a,
			       (size_t)b->pool[p].n);
	struct ac_model *m = &o->m;
	fill_named(o, section, &b->windows, POOL_WINDOW, MUT(m->windows), 1);
	fill_named(o, section, &b->globals, POOL_GLOBAL, MUT(m->globals), 0);
	fill_named(o, section, &b->planes, POOL_PLANE, MUT(m->planes), 0);
	const struct phase_entry *ph = (const struct phase_entry *)b->phases.a;
	for (uint64_t i = 0; i < b->phases.n; i++) {
		struct ac_phase p = ph[i].p;
		p.identity = bytes_of(o, section, POOL_PHASE, ph[i].identity);
		((struct ac_phase *)MUT(m->phases))[i] = p;
	}
	const struct launch_entry *l = (const struct launch_entry *)
				       b->launches.a;
	const struct str *id = (const struct str *)b->idents.a;
	for (uint64_t i = 0; i < b->launches.n; i++)
		((struct ac_launch *)MUT(m->launches))[i] = (struct ac_launch){
			.identity = bytes_of(o, section, POOL_LAUNCH,
					     id[l[i].identity]),
			.word_first = l[i].word_first,
			.word_count = l[i].word_count };
	const struct { const struct vec *v; void *dst; size_t size; } flat[] = {
		{ &b->repeats, MUT(m->repeats), sizeof(struct ac_repeat) },
		{ &b->deltas, MUT(m->deltas), sizeof(struct ac_delta) },
		{ &b->slots, MUT(m->slots), sizeof(struct ac_slot) },
		{ &b->frame_values, MUT(m->frame_values), sizeof(uint64_t) },
		{ &b->refs, MUT(m->refs), sizeof(struct ac_ref) },
	};
	for (size_t k = 0; k < sizeof(flat) / sizeof(flat[0]); k++)
		if (flat[k].v->n)
			memcpy(flat[k].dst, flat[k].v->a,
			       (size_t)(flat[k].v->n * flat[k].size));
	/* the model holds the words: nothing may be built on the rest */
	fail(b, "", "the builder has finished its model; it may only be "
	     "freed");
	return m;
fail:
	if (o)
		ac_model_free(&o->m);
	if (err)
		*err = b->err;
	return NULL;
}
