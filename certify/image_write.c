/* SPDX-License-Identifier: MIT */
/*
 * Model -> binary program image (docs/program-image.md).
 *
 * Writing is two passes.  plan() walks the model once, checks everything
 * that could stop it from being written (a nested run outside its array, a
 * total or string offset beyond its fixed-width field, a NULL array) and
 * computes every section's count and offset.  emit() then streams the
 * bytes and cannot fail, so a sink never sees a partial image.
 *
 * Nested runs (a phase's planes, a launch's words, a repeat's deltas,
 * slots and frame values) are gathered through their (first, count) in
 * table order, so the image always holds them as running sums whatever
 * the model's own layout: a model and the program it describes have one
 * image.  For a reader-built model this is a straight copy.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

const struct image_section_info aci_image_sections[IMAGE_SECTIONS] = {
	[IMG_WINDOWS] = { "windows", IMAGE_WINDOW_ENTRY },
	[IMG_GLOBALS] = { "globals", IMAGE_GLOBAL_ENTRY },
	[IMG_PHASES] = { "phases", IMAGE_PHASE_ENTRY },
	[IMG_PLANES] = { "planes", IMAGE_PLANE_ENTRY },
	[IMG_LAUNCHES] = { "launches", IMAGE_LAUNCH_ENTRY },
	[IMG_WORDS] = { "words", IMAGE_WORD_ENTRY },
	[IMG_REPEATS] = { "repeats", IMAGE_REPEAT_ENTRY },
	[IMG_DELTAS] = { "deltas", IMAGE_DELTA_ENTRY },
	[IMG_SLOTS] = { "slots", IMAGE_SLOT_ENTRY },
	[IMG_FRAME_VALUES] = { "frame_values", IMAGE_FRAME_VALUE_ENTRY },
	[IMG_SCHEDULE] = { "schedule", IMAGE_REF_ENTRY },
	[IMG_POOL] = { "pool", IMAGE_POOL_ENTRY },
};

struct layout {
	uint64_t count[IMAGE_SECTIONS];
	uint64_t offset[IMAGE_SECTIONS];
	uint64_t size;
	uint64_t n_refs;
};

/* ---- pass 1: plan ---- */

/*
 * A byte string goes to the pool at *pool; its offset must fit the u32
 * offset field.  Adds its length to *pool.
 */
static int plan_string(const struct ac_bytes *s, uint64_t *pool,
		       const char *table, uint64_t i, const char *field,
		       struct ac_error *err)
{
	assert(!s->len || s->data);   /* aci_model_check_structure */
	if (*pool > UINT32_MAX)
		return aci_fail_entry(err, table, i, field,
				  "the byte-string pool passes 2^32-1 bytes "
				  "before this string: its offset does not "
				  "fit the image's u32 offset field");
	*pool += s->len;
	return 0;
}

/* Windows, globals, phases and their planes: counts and pool bytes (the
 * model's structure is checked: runs lie inside their arrays). */
static int plan_phases(const struct ac_model *m, struct layout *l,
		       uint64_t *pool, struct ac_error *err)
{
	for (uint32_t i = 0; i < m->n_windows; i++)
		if (plan_string(&m->windows[i].name, pool, "windows", i,
				"name", err))
			return -1;
	for (uint32_t i = 0; i < m->n_globals; i++)
		if (plan_string(&m->globals[i].name, pool, "globals", i,
				"name", err))
			return -1;
	for (uint32_t i = 0; i < m->n_phases; i++)
		if (plan_string(&m->phases[i].identity, pool, "phases", i,
				"identity", err))
			return -1;
	uint64_t planes = 0;
	for (uint32_t i = 0; i < m->n_phases; i++) {
		const struct ac_phase *ph = &m->phases[i];
		assert(run_inside(ph->plane_first, ph->plane_count, m->n_planes));
		planes += ph->plane_count;
		if (planes > UINT32_MAX)
			return aci_fail_entry(err, "phases", i, "plane_count",
					  "the phases' planes total more than "
					  "2^32-1");
		for (uint32_t k = 0; k < ph->plane_count; k++)
			if (plan_string(&m->planes[ph->plane_first + k].name,
					pool, "planes",
					(uint64_t)ph->plane_first + k, "name",
					err))
				return -1;
	}
	l->count[IMG_WINDOWS] = m->n_windows;
	l->count[IMG_GLOBALS] = m->n_globals;
	l->count[IMG_PHASES] = m->n_phases;
	l->count[IMG_PLANES] = planes;
	return 0;
}

/* The launches' strings one by one, when one of them passes the u32
 * offset field: plan_string says which. */
static AC_COLD int plan_launch_strings(const struct ac_model *m,
				       uint64_t pool, struct ac_error *err)
{
	for (uint32_t i = 0;; i++) {
		assert(i < m->n_launches);  /* the last one at the latest */
		if (plan_string(&m->launches[i].identity, &pool, "launches", i,
				"identity", err))
			return -1;
	}
}

/*
 * Launches and their words, from the sums the structure check's pass
 * over the launch table found (s): the launches hold most of a model's
 * strings, whose offsets only grow, so only if the last string starts
 * past 2^32-1 does one (the first such) break plan_string's rule.  The
 * sums cannot wrap: fewer than 2^32 strings of fewer than 2^32 bytes,
 * from a pool below 2^33.  O(1) unless a string breaks the rule.
 */
static int plan_launches(const struct ac_model *m,
			 const struct launch_sums *s, struct layout *l,
			 uint64_t *pool, struct ac_error *err)
{
	assert(s->bytes >= s->last);
	if (m->n_launches && *pool + (s->bytes - s->last) > UINT32_MAX)
		return plan_launch_strings(m, *pool, err);
	*pool += s->bytes;
	l->count[IMG_LAUNCHES] = m->n_launches;
	l->count[IMG_WORDS] = s->words;
	return 0;
}

/* Repeats and their deltas, slots and frame values. */
static int plan_repeats(const struct ac_model *m, struct layout *l,
			struct ac_error *err)
{
	uint64_t deltas = 0, slots = 0, values = 0;
	for (uint32_t i = 0; i < m->n_repeats; i++) {
		const struct ac_repeat *r = &m->repeats[i];
		/* below 2^64: aci_model_check_structure */
		uint64_t n = r->frame_count * r->slot_count;
		deltas += r->delta_count;
		if (deltas > UINT32_MAX)
			return aci_fail_entry(err, "repeats", i, "delta_count",
					  "the repeats' deltas total more "
					  "than 2^32-1");
		slots += r->slot_count;
		if (slots > UINT32_MAX)
			return aci_fail_entry(err, "repeats", i, "slot_count",
					  "the repeats' slots total more than "
					  "2^32-1");
		/* Each run fits in memory, but shared runs may add up. */
		if (n > UINT64_MAX - values)
			return aci_fail_entry(err, "repeats", i, "frame_count",
					  "the repeats' frame values total "
					  "more than 2^64-1");
		values += n;
	}
	l->count[IMG_REPEATS] = m->n_repeats;
	l->count[IMG_DELTAS] = deltas;
	l->count[IMG_SLOTS] = slots;
	l->count[IMG_FRAME_VALUES] = values;
	return 0;
}

/* Section offsets and the image size, overflow-checked. */
static int plan_offsets(struct layout *l, struct ac_error *err)
{
	uint64_t at = IMAGE_TABLE_END;
	for (int s = 0; s < IMAGE_SECTIONS; s++) {
		uint64_t size = aci_image_sections[s].entry_size;
		l->offset[s] = at;
		if (at > UINT64_MAX - 8 ||
		    l->count[s] > (UINT64_MAX - 8 - at) / size)
			return aci_fail(err, aci_image_sections[s].name,
					"image would be larger than 2^64 bytes");
		at = image_align8(at + l->count[s] * size);
	}
	l->size = at;
	return 0;
}

/* The layout of a model whose structure is checked (aci_model_check_structure
 * with with_schedule, which found the launch sums s): what only the
 * image's fixed-width fields limit. */
static int plan_checked(const struct ac_model *m, int with_schedule,
			const struct launch_sums *s, struct layout *l,
			struct ac_error *err)
{
	uint64_t pool = 0;
	memset(l, 0, sizeof(*l));
	l->n_refs = with_schedule ? m->n_refs : 0;
	if (plan_phases(m, l, &pool, err) ||
	    plan_launches(m, s, l, &pool, err) ||
	    plan_repeats(m, l, err))
		return -1;
	l->count[IMG_SCHEDULE] = l->n_refs;
	l->count[IMG_POOL] = pool;
	return plan_offsets(l, err);
}

static int plan(const struct ac_model *m, int with_schedule, struct layout *l,
		struct ac_error *err)
{
	struct launch_sums s;
	if (aci_model_check_structure(m, with_schedule, &s, err))
		return -1;
	return plan_checked(m, with_schedule, &s, l, err);
}

/* ---- pass 2: emit ---- */

/*
 * Small fields are staged in buf and handed to the sink in blocks; large
 * arrays bypass it.  total + used is the image offset of the next byte,
 * which is what emit_pad() pads from.
 */
struct emitter {
	image_sink sink;
	void *ctx;
	uint64_t total;
	size_t used;
	uint8_t buf[4096];
};

static void flush(struct emitter *e)
{
	if (e->used)
		e->sink(e->ctx, e->buf, e->used);
	e->total += e->used;
	e->used = 0;
}

/* Room for n more staged bytes (n <= sizeof(buf)). */
static uint8_t *stage(struct emitter *e, size_t n)
{
	if (sizeof(e->buf) - e->used < n)
		flush(e);
	uint8_t *p = e->buf + e->used;
	e->used += n;
	return p;
}

/* Passes bytes straight to the sink, in pieces a size_t can hold. */
static void emit_raw(struct emitter *e, const void *data, uint64_t len)
{
	const uint8_t *p = data;
	if (!len)
		return;   /* data may be NULL */
	if (len <= sizeof(e->buf) / 2) {
		memcpy(stage(e, (size_t)len), p, (size_t)len);
		return;
	}
	flush(e);
	while (len) {
		size_t n = len > ((size_t)1 << 30) ? ((size_t)1 << 30)
						   : (size_t)len;
		e->sink(e->ctx, p, n);
		e->total += n;
		p += n;
		len -= n;
	}
}

static void emit64(struct emitter *e, uint64_t v)
{
	image_put64(stage(e, 8), v);
}

/* Zeros up to the next multiple of 8 of the image offset. */
static void emit_pad(struct emitter *e)
{
	uint64_t at = e->total + e->used;
	size_t n = (size_t)(image_align8(at) - at);
	memset(stage(e, n), 0, n);
}

static void emit_u64s(struct emitter *e, const uint64_t *a, uint64_t n)
{
	if (IMAGE_HOST_LE) {
		emit_raw(e, a, n * 8);
		return;
	}
	for (uint64_t i = 0; i < n; i++)
		emit64(e, a[i]);
}

/*
 * Runs of a flat uint64_t array, given in order; consecutive runs that are
 * adjacent in the array are merged so a reader-built model's words go to
 * the sink in one piece.
 */
struct merged_runs {
	const uint64_t *a;
	uint64_t first, count;
};

static void merged_add(struct emitter *e, struct merged_runs *r, uint64_t first,
		     uint64_t count)
{
	if (!count)
		return;
	if (r->count && r->first + r->count == first) {
		r->count += count;
		return;
	}
	if (r->count)
		emit_u64s(e, r->a + r->first, r->count);
	r->first = first;
	r->count = count;
}

static void merged_flush(struct emitter *e, struct merged_runs *r)
{
	if (r->count)
		emit_u64s(e, r->a + r->first, r->count);
	r->count = 0;
}

static void emit_header(struct emitter *e, const struct ac_model *m,
			const struct layout *l)
{
	uint8_t *h = stage(e, IMAGE_HEADER_SIZE);
	memcpy(h + IMAGE_H_MAGIC, AC_IMAGE_MAGIC, AC_IMAGE_MAGIC_LEN);
	image_put32(h + IMAGE_H_VERSION, AC_IMAGE_VERSION);
	image_put32(h + IMAGE_H_SECTION_COUNT, IMAGE_SECTIONS);
	image_put64(h + IMAGE_H_IMAGE_SIZE, l->size);
	image_put64(h + IMAGE_H_ALIGNMENT, m->alignment);
	image_put64(h + IMAGE_H_RESERVED0, 0);
	for (int s = 0; s < IMAGE_SECTIONS; s++) {
		uint8_t *t = stage(e, IMAGE_TABLE_ENTRY);
		image_put32(t + IMAGE_S_KIND, (uint32_t)s + 1);
		image_put32(t + IMAGE_S_ENTRY_SIZE, aci_image_sections[s].entry_size);
		image_put64(t + IMAGE_S_OFFSET, l->offset[s]);
		image_put64(t + IMAGE_S_COUNT, l->count[s]);
	}
}

/*
 * One function per section, called in image order by emit(); each stages
 * an entry and fills its fields by name (image.h).  `pool` is the running
 * pool offset: strings are referenced in the same order as emit_pool()
 * stores them, so each offset is the sum of the lengths before it (plan()
 * checked that it fits 32 bits).
 */
static uint8_t *emit_string(struct emitter *e, size_t entry,
			    const struct ac_bytes *s, uint64_t *pool)
{
	assert(*pool <= UINT32_MAX);  /* plan_string */
	uint8_t *p = stage(e, entry);
	image_put32(p + IMAGE_STR_OFFSET, (uint32_t)*pool);
	image_put32(p + IMAGE_STR_LENGTH, s->len);
	*pool += s->len;
	return p;
}

/* An entry of `entry` bytes that begins with a name and a range (image.h:
 * a window, a global, a plane); the rest is the caller's. */
static uint8_t *emit_range(struct emitter *e, size_t entry,
			   const struct ac_bytes *name, uint64_t start,
			   uint64_t size, uint64_t *pool)
{
	assert(entry >= IMAGE_RANGE_END);
	uint8_t *p = emit_string(e, entry, name, pool);
	image_put64(p + IMAGE_RANGE_START, start);
	image_put64(p + IMAGE_RANGE_SIZE, size);
	return p;
}

static void emit_windows(struct emitter *e, const struct ac_model *m,
			 uint64_t *pool)
{
	for (uint32_t i = 0; i < m->n_windows; i++)
		emit_range(e, IMAGE_WINDOW_ENTRY, &m->windows[i].name,
			   m->windows[i].base, m->windows[i].size, pool);
}

/* Globals have no carried flag: it is 0 by definition (program.h). */
static void emit_globals(struct emitter *e, const struct ac_model *m,
			 uint64_t *pool)
{
	for (uint32_t i = 0; i < m->n_globals; i++)
		emit_range(e, IMAGE_GLOBAL_ENTRY, &m->globals[i].name,
			   m->globals[i].offset, m->globals[i].size, pool);
}

static void emit_phases(struct emitter *e, const struct ac_model *m,
			uint64_t *pool)
{
	uint32_t planes = 0;
	for (uint32_t i = 0; i < m->n_phases; i++) {
		uint8_t *p = emit_string(e, IMAGE_PHASE_ENTRY,
					 &m->phases[i].identity, pool);
		image_put32(p + IMAGE_PHASE_PLANE_FIRST, planes);
		image_put32(p + IMAGE_PHASE_PLANE_COUNT,
			    m->phases[i].plane_count);
		planes += m->phases[i].plane_count;
	}
}

static void emit_planes(struct emitter *e, const struct ac_model *m,
			uint64_t *pool)
{
	for (uint32_t i = 0; i < m->n_phases; i++) {
		const struct ac_phase *ph = &m->phases[i];
		for (uint32_t k = 0; k < ph->plane_count; k++) {
			const struct ac_tensor *t =
				&m->planes[ph->plane_first + k];
			uint8_t *p = emit_range(e, IMAGE_PLANE_ENTRY, &t->name,
						t->offset, t->size, pool);
			/* any nonzero model value means carried, as in
			 * JSON */
			p[IMAGE_PLANE_CARRIED] = t->carried != 0;
			memset(p + IMAGE_PLANE_PAD, 0,
			       IMAGE_PLANE_ENTRY - IMAGE_PLANE_PAD);
		}
	}
}

static void emit_launches(struct emitter *e, const struct ac_model *m,
			  uint64_t *pool)
{
	uint64_t words = 0;
	for (uint32_t i = 0; i < m->n_launches; i++) {
		uint8_t *p = emit_string(e, IMAGE_LAUNCH_ENTRY,
					 &m->launches[i].identity, pool);
		image_put64(p + IMAGE_LAUNCH_WORD_FIRST, words);
		image_put32(p + IMAGE_LAUNCH_WORD_COUNT,
			    m->launches[i].word_count);
		image_put32(p + IMAGE_LAUNCH_PAD, 0);
		words += m->launches[i].word_count;
	}
}

static void emit_words(struct emitter *e, const struct ac_model *m)
{
	struct merged_runs r = { .a = m->words };
	for (uint32_t i = 0; i < m->n_launches; i++)
		merged_add(e, &r, m->launches[i].word_first,
			 m->launches[i].word_count);
	merged_flush(e, &r);
}

static void emit_repeats(struct emitter *e, const struct ac_model *m)
{
	uint32_t deltas = 0, slots = 0;
	uint64_t values = 0;
	for (uint32_t i = 0; i < m->n_repeats; i++) {
		const struct ac_repeat *r = &m->repeats[i];
		uint8_t *p = stage(e, IMAGE_REPEAT_ENTRY);
		image_put64(p + IMAGE_REPEAT_FIRST, r->first);
		image_put64(p + IMAGE_REPEAT_COUNT, r->count);
		image_put64(p + IMAGE_REPEAT_ITERATIONS, r->iterations);
		image_put32(p + IMAGE_REPEAT_DELTA_FIRST, deltas);
		image_put32(p + IMAGE_REPEAT_DELTA_COUNT, r->delta_count);
		image_put32(p + IMAGE_REPEAT_SLOT_FIRST, slots);
		image_put32(p + IMAGE_REPEAT_SLOT_COUNT, r->slot_count);
		image_put64(p + IMAGE_REPEAT_FRAME_COUNT, r->frame_count);
		image_put64(p + IMAGE_REPEAT_FRAME_VALUE_FIRST, values);
		deltas += r->delta_count;
		slots += r->slot_count;
		values += r->frame_count * r->slot_count;
	}
}

static void emit_deltas(struct emitter *e, const struct ac_model *m)
{
	for (uint32_t i = 0; i < m->n_repeats; i++) {
		const struct ac_repeat *r = &m->repeats[i];
		for (uint32_t k = 0; k < r->delta_count; k++) {
			const struct ac_delta *d = &m->deltas[r->delta_first + k];
			uint8_t *p = stage(e, IMAGE_DELTA_ENTRY);
			image_put64(p + IMAGE_DELTA_LAUNCH, d->launch);
			image_put64(p + IMAGE_DELTA_WORD, d->word);
			/* two's complement */
			image_put64(p + IMAGE_DELTA_DELTA, (uint64_t)d->delta);
		}
	}
}

static void emit_slots(struct emitter *e, const struct ac_model *m)
{
	for (uint32_t i = 0; i < m->n_repeats; i++) {
		const struct ac_repeat *r = &m->repeats[i];
		for (uint32_t k = 0; k < r->slot_count; k++) {
			const struct ac_slot *s = &m->slots[r->slot_first + k];
			uint8_t *p = stage(e, IMAGE_SLOT_ENTRY);
			image_put64(p + IMAGE_SLOT_LAUNCH, s->launch);
			image_put64(p + IMAGE_SLOT_WORD, s->word);
		}
	}
}

static void emit_frame_values(struct emitter *e, const struct ac_model *m)
{
	struct merged_runs v = { .a = m->frame_values };
	for (uint32_t i = 0; i < m->n_repeats; i++) {
		const struct ac_repeat *r = &m->repeats[i];
		merged_add(e, &v, r->frame_value_first,
			 r->frame_count * r->slot_count);
	}
	merged_flush(e, &v);
}

static void emit_schedule(struct emitter *e, const struct ac_model *m,
			  uint64_t n)
{
	if (IMAGE_HOST_LE) {
		emit_raw(e, m->refs, n * sizeof(struct ac_ref));
		return;
	}
	for (uint64_t i = 0; i < n; i++) {
		uint8_t *p = stage(e, IMAGE_REF_ENTRY);
		image_put64(p + IMAGE_REF_FIRST, m->refs[i].first);
		image_put64(p + IMAGE_REF_COUNT, m->refs[i].count);
	}
}

/* The pool, in the order the string references above counted it. */
static void emit_pool(struct emitter *e, const struct ac_model *m)
{
	for (uint32_t i = 0; i < m->n_windows; i++)
		emit_raw(e, m->windows[i].name.data, m->windows[i].name.len);
	for (uint32_t i = 0; i < m->n_globals; i++)
		emit_raw(e, m->globals[i].name.data, m->globals[i].name.len);
	for (uint32_t i = 0; i < m->n_phases; i++)
		emit_raw(e, m->phases[i].identity.data,
			 m->phases[i].identity.len);
	for (uint32_t i = 0; i < m->n_phases; i++) {
		const struct ac_phase *ph = &m->phases[i];
		for (uint32_t k = 0; k < ph->plane_count; k++) {
			const struct ac_bytes *s =
				&m->planes[ph->plane_first + k].name;
			emit_raw(e, s->data, s->len);
		}
	}
	for (uint32_t i = 0; i < m->n_launches; i++)
		emit_raw(e, m->launches[i].identity.data,
			 m->launches[i].identity.len);
}

/*
 * Only the pool can end off an 8-byte boundary (every other entry size is
 * a multiple of 8), but padding after every section keeps the rule in one
 * place, matching plan_offsets().
 */
static void emit(struct emitter *e, const struct ac_model *m,
		 const struct layout *l)
{
	uint64_t pool = 0;
	emit_header(e, m, l);
	emit_windows(e, m, &pool);
	emit_pad(e);
	emit_globals(e, m, &pool);
	emit_pad(e);
	emit_phases(e, m, &pool);
	emit_pad(e);
	emit_planes(e, m, &pool);
	emit_pad(e);
	emit_launches(e, m, &pool);
	emit_pad(e);
	emit_words(e, m);
	emit_pad(e);
	emit_repeats(e, m);
	emit_pad(e);
	emit_deltas(e, m);
	emit_pad(e);
	emit_slots(e, m);
	emit_pad(e);
	emit_frame_values(e, m);
	emit_pad(e);
	emit_schedule(e, m, l->n_refs);
	emit_pad(e);
	emit_pool(e, m);
	emit_pad(e);
	flush(e);
}

int aci_image_emit(const struct ac_model *m, int with_schedule, image_sink sink,
		   void *ctx, struct ac_error *err)
{
	struct layout l;
	if (plan(m, with_schedule, &l, err))
		return -1;
	struct emitter e = { .sink = sink, .ctx = ctx };
	emit(&e, m, &l);
	assert(e.total == l.size);   /* emit() writes what plan() laid out */
	return 0;
}

int aci_image_check(const struct ac_model *m, const struct launch_sums *s,
		    struct ac_error *err)
{
	struct layout l;
	return plan_checked(m, 0, s, &l, err);
}

/* ---- ac_model_write_image: a buffer sink ---- */

struct buffer {
	uint8_t *p;
	size_t used, cap;
};

/* plan() sized the buffer and emit() writes exactly that much; a
 * mismatch would be a bug here, and must not become an overflow. */
static void buffer_sink(void *ctx, const void *data, size_t len)
{
	struct buffer *b = ctx;
	if (len > b->cap - b->used)
		abort();
	memcpy(b->p + b->used, data, len);
	b->used += len;
}

uint8_t *ac_model_write_image(const struct ac_model *model, size_t *len,
			      struct ac_error *err)
{
	struct layout l;
	if (plan(model, 1, &l, err))
		return NULL;
	if (l.size > SIZE_MAX) {
		aci_fail(err, "", "image of %llu bytes does not fit in memory",
			 (unsigned long long)l.size);
		return NULL;
	}
	struct buffer b = { malloc((size_t)l.size), 0, (size_t)l.size };
	if (!b.p) {
		aci_fail(err, "", "out of memory (%llu bytes)",
			 (unsigned long long)l.size);
		return NULL;
	}
	struct emitter e = { .sink = buffer_sink, .ctx = &b };
	emit(&e, model, &l);
	if (b.used != b.cap)
		abort();
	*len = b.used;
	return b.p;
}
