/* SPDX-License-Identifier: MIT */
/*
 * Binary program image -> model (docs/program-image.md).
 *
 * The image is untrusted (it arrives through a driver ABI), so the reader
 * is strict and careful in that order:
 *
 *  1. The header and the section table are checked against the input's
 *     length before anything else.  Every section must sit at the one
 *     offset the writer would give it and its count * entry_size must fit
 *     in the bytes that remain (checked by division, never by a product
 *     that could wrap).  After this step every entry read is in bounds,
 *     and every count is bounded by the input's length.
 *  2. Only then is the model allocated, sized by those counts.
 *  3. The entries are copied in image order, checking the canonical rules
 *     as they go: string offsets and nested firsts are running sums,
 *     flags are 0 or 1, padding is zero.
 *
 * Anything the writer would not produce is rejected, so an accepted image
 * written back gives the same bytes.  Loads go through bytes (image.h), so
 * the input may be unaligned and the host of either endianness.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "parallel.h"

struct reader {
	const uint8_t *p;
	uint64_t len;
	struct ac_error *err;
	uint64_t count[IMAGE_SECTIONS];
	uint64_t offset[IMAGE_SECTIONS];
	struct model_owned *o;
	uint64_t pool;          /* running string offset */
	unsigned borrow;        /* enum model_borrow: arrays left in the input */
	struct launch_sums sums;   /* the launch table's, once it is read */
	struct aci_team *team;   /* NULL, or aci_image_view's: the threads */
};

/* ---- errors: "byte N (name): message" ---- */

static int failv(struct reader *r, uint64_t at, const char *name,
		 const char *fmt, va_list ap)
{
	char where[sizeof(r->err->where)], message[sizeof(r->err->message)];
	if (!r->err)
		return -1;
	snprintf(where, sizeof(where), "byte %llu (%s)",
		 (unsigned long long)at, name);
	vsnprintf(message, sizeof(message), fmt, ap);
	return aci_fail(r->err, where, "%s", message);
}

static int fail(struct reader *r, uint64_t at, const char *name,
		const char *fmt, ...) AC_PRINTF(4, 5);
static int fail(struct reader *r, uint64_t at, const char *name,
		const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	failv(r, at, name, fmt, ap);
	va_end(ap);
	return -1;
}

/* Names the field as "table[i].field". */
static int fail_entry(struct reader *r, uint64_t at, const char *table,
		      uint64_t i, const char *field, const char *fmt, ...)
	AC_PRINTF(6, 7);
static int fail_entry(struct reader *r, uint64_t at, const char *table,
		      uint64_t i, const char *field, const char *fmt, ...)
{
	char name[96];
	snprintf(name, sizeof(name), "%s[%llu].%s", table,
		 (unsigned long long)i, field);
	va_list ap;
	va_start(ap, fmt);
	failv(r, at, name, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- step 1: header and section table ---- */

/* The input must hold bytes [at, at + width); at and width are small. */
static int need(struct reader *r, uint64_t at, uint64_t width,
		const char *name)
{
	if (r->len >= at + width)
		return 0;
	return fail(r, at, name, "image truncated: it ends at byte %llu, this "
		    "field needs bytes %llu to %llu",
		    (unsigned long long)r->len, (unsigned long long)at,
		    (unsigned long long)(at + width - 1));
}

static int read_magic(struct reader *r)
{
	if (need(r, IMAGE_H_MAGIC, AC_IMAGE_MAGIC_LEN, "header.magic"))
		return -1;
	if (memcmp(r->p, AC_IMAGE_MAGIC, AC_IMAGE_MAGIC_LEN) == 0)
		return 0;
	const uint8_t *m = r->p;
	return fail(r, IMAGE_H_MAGIC, "header.magic", "expected \"%s\" "
		    "(41 52 45 4e 41 50 52 47), found %02x %02x %02x %02x "
		    "%02x %02x %02x %02x", AC_IMAGE_MAGIC, m[0], m[1], m[2],
		    m[3], m[4], m[5], m[6], m[7]);
}

/*
 * The version is checked right after the magic: a later version may
 * change everything after it, so nothing else is worth reporting.
 */
static int read_header(struct reader *r)
{
	if (read_magic(r) ||
	    need(r, IMAGE_H_VERSION, 4, "header.version"))
		return -1;
	uint32_t version = image_get32(r->p + IMAGE_H_VERSION);
	if (version != AC_IMAGE_VERSION)
		return fail(r, IMAGE_H_VERSION, "header.version",
			    "unsupported version %u (expected %u, the only "
			    "version this reader reads)", version,
			    AC_IMAGE_VERSION);
	if (need(r, IMAGE_H_SECTION_COUNT, 4, "header.section_count"))
		return -1;
	uint32_t sections = image_get32(r->p + IMAGE_H_SECTION_COUNT);
	if (sections != IMAGE_SECTIONS)
		return fail(r, IMAGE_H_SECTION_COUNT, "header.section_count",
			    "expected %d, found %u", IMAGE_SECTIONS, sections);
	if (need(r, IMAGE_H_IMAGE_SIZE, 8, "header.image_size"))
		return -1;
	uint64_t size = image_get64(r->p + IMAGE_H_IMAGE_SIZE);
	if (size != r->len)
		return fail(r, IMAGE_H_IMAGE_SIZE, "header.image_size",
			    "expected %llu (the length of the input), found "
			    "%llu", (unsigned long long)r->len,
			    (unsigned long long)size);
	if (size % 8)
		return fail(r, IMAGE_H_IMAGE_SIZE, "header.image_size",
			    "expected a multiple of 8, found %llu",
			    (unsigned long long)size);
	if (need(r, IMAGE_H_RESERVED0, 8, "header.reserved0"))
		return -1;
	uint64_t reserved = image_get64(r->p + IMAGE_H_RESERVED0);
	if (reserved)
		return fail(r, IMAGE_H_RESERVED0, "header.reserved0",
			    "expected 0, found %llu",
			    (unsigned long long)reserved);
	return 0;
}

/* Model counts of these sections are uint32_t; the others uint64_t. */
static int is_u32_section(int s)
{
	return s != IMG_WORDS && s != IMG_FRAME_VALUES && s != IMG_SCHEDULE &&
	       s != IMG_POOL;
}

/*
 * Section s's table entry; `at` is the section's required offset.  Returns
 * the offset of the next section in *next.
 */
static int read_section_entry(struct reader *r, int s, uint64_t at,
			      uint64_t *next)
{
	uint64_t e = IMAGE_HEADER_SIZE + (uint64_t)s * IMAGE_TABLE_ENTRY;
	const char *name = aci_image_sections[s].name;
	if (r->len < e + IMAGE_TABLE_ENTRY) {
		/* named only when it is missing: formatting is most of a
		 * small image's reading */
		char entry_name[24];
		snprintf(entry_name, sizeof(entry_name), "sections[%d]", s);
		return need(r, e, IMAGE_TABLE_ENTRY, entry_name);
	}
	uint32_t kind = image_get32(r->p + e + IMAGE_S_KIND);
	uint32_t size = image_get32(r->p + e + IMAGE_S_ENTRY_SIZE);
	uint64_t offset = image_get64(r->p + e + IMAGE_S_OFFSET);
	uint64_t count = image_get64(r->p + e + IMAGE_S_COUNT);
	if (kind != (uint32_t)s + 1)
		return fail_entry(r, e + IMAGE_S_KIND, "sections", s, "kind",
				  "expected %d (%s), found %u", s + 1, name,
				  kind);
	if (size != aci_image_sections[s].entry_size)
		return fail_entry(r, e + IMAGE_S_ENTRY_SIZE, "sections", s,
				  "entry_size", "expected %u (%s), found %u",
				  aci_image_sections[s].entry_size, name, size);
	if (offset != at)
		return fail_entry(r, e + IMAGE_S_OFFSET, "sections", s,
				  "offset", "expected %llu (%s starts at the "
				  "8-byte boundary after the %s), found %llu",
				  (unsigned long long)at, name,
				  s ? aci_image_sections[s - 1].name :
				  "section table",
				  (unsigned long long)offset);
	uint64_t room = at <= r->len ? r->len - at : 0;
	if (count > room / size)
		return fail_entry(r, e + IMAGE_S_COUNT, "sections", s, "count",
				  "%llu %s entries of %u bytes from byte %llu "
				  "run past the end of the image at byte %llu",
				  (unsigned long long)count, name, size,
				  (unsigned long long)at,
				  (unsigned long long)r->len);
	if (is_u32_section(s) && count > UINT32_MAX)
		return fail_entry(r, e + IMAGE_S_COUNT, "sections", s, "count",
				  "expected at most 2^32-1 %s, found %llu",
				  name, (unsigned long long)count);
	r->offset[s] = at;
	r->count[s] = count;
	/* at + count * size <= len, and len is a multiple of 8 below 2^64:
	 * rounding up cannot overflow or pass len. */
	assert(at + count * size <= r->len && r->len % 8 == 0);
	*next = image_align8(at + count * size);
	return 0;
}

static int read_table(struct reader *r)
{
	uint64_t at = IMAGE_TABLE_END;
	for (int s = 0; s < IMAGE_SECTIONS; s++)
		if (read_section_entry(r, s, at, &at))
			return -1;
	if (at != r->len)
		return fail(r, at, "end of image", "expected the image to end "
			    "after the pool at byte %llu, found %llu more "
			    "bytes", (unsigned long long)at,
			    (unsigned long long)(r->len - at));
	return 0;
}

/* The bytes [from, to) must be zero; name says whose padding it is. */
static int check_zero(struct reader *r, uint64_t from, uint64_t to,
		      const char *table, uint64_t i, const char *field)
{
	for (uint64_t b = from; b < to; b++)
		if (r->p[b])
			return fail_entry(r, b, table, i, field,
					  "padding: expected 0, found 0x%02x",
					  r->p[b]);
	return 0;
}

static int check_padding(struct reader *r)
{
	for (int s = 0; s < IMAGE_SECTIONS; s++) {
		uint64_t end = r->offset[s] + r->count[s] * aci_image_sections[s].entry_size;
		uint64_t pad = image_align8(end);
		for (uint64_t b = end; b < pad; b++)
			if (r->p[b]) {
				char name[24];
				snprintf(name, sizeof(name), "%s.padding",
					 aci_image_sections[s].name);
				return fail(r, b, name, "expected 0, found "
					    "0x%02x", r->p[b]);
			}
	}
	return 0;
}

/* ---- step 3: entries ---- */

/* The start of entry i of section s. */
static const uint8_t *entry(const struct reader *r, int s, uint64_t i)
{
	return r->p + r->offset[s] + i * aci_image_sections[s].entry_size;
}

static uint64_t at_of(const struct reader *r, const uint8_t *p)
{
	return (uint64_t)(p - r->p);
}

/* read_string's error: the offset or the length of the string at p is
 * wrong.  Cold: only a malformed image comes here. */
static AC_COLD int string_error(struct reader *r, const uint8_t *p, int s,
				uint64_t i, const char *field)
{
	char name[40];
	uint32_t offset = image_get32(p + IMAGE_STR_OFFSET);
	uint32_t len = image_get32(p + IMAGE_STR_LENGTH);
	uint64_t pool = r->count[IMG_POOL];
	if (offset != r->pool) {
		snprintf(name, sizeof(name), "%s.offset", field);
		return fail_entry(r, at_of(r, p) + IMAGE_STR_OFFSET,
				  aci_image_sections[s].name, i,
				  name, "expected %llu (where the previous "
				  "string ends in the pool), found %u",
				  (unsigned long long)r->pool, offset);
	}
	assert(len > pool - r->pool);
	snprintf(name, sizeof(name), "%s.length", field);
	return fail_entry(r, at_of(r, p) + IMAGE_STR_LENGTH,
			  aci_image_sections[s].name, i,
			  name, "a string of %u bytes from pool offset "
			  "%u runs past the pool's %llu bytes", len,
			  offset, (unsigned long long)pool);
}

/*
 * A byte string reference (u32 offset, u32 length) at p: the offset must
 * be the running pool sum, the string must end inside the pool.  Inline,
 * its error out of line: a name is read for every window, global and
 * plane.
 */
static inline int read_string(struct reader *r, const uint8_t *p, int s,
			      uint64_t i, const char *field,
			      struct ac_bytes *out)
{
	uint32_t offset = image_get32(p + IMAGE_STR_OFFSET);
	uint32_t len = image_get32(p + IMAGE_STR_LENGTH);
	if ((offset != r->pool) | (len > r->count[IMG_POOL] - r->pool))
		return string_error(r, p, s, i, field);
	*out = (struct ac_bytes){ r->o->bytes + offset, len };
	r->pool += len;
	return 0;
}

/*
 * A nested run (first, count) at entry i of section s: first must be the
 * running sum *sum of the counts before, and the run must end inside the
 * section `of`.  Advances *sum.
 */
static int read_run(struct reader *r, uint64_t first, uint64_t first_at,
		    uint64_t count, uint64_t count_at, int s, uint64_t i,
		    const char *field, int of, uint64_t *sum)
{
	char name[40];
	if (first != *sum) {
		snprintf(name, sizeof(name), "%s_first", field);
		return fail_entry(r, first_at, aci_image_sections[s].name, i, name,
				  "expected %llu (the sum of the %s_count "
				  "fields before it), found %llu",
				  (unsigned long long)*sum, field,
				  (unsigned long long)first);
	}
	if (count > r->count[of] - *sum) {
		snprintf(name, sizeof(name), "%s_count", field);
		return fail_entry(r, count_at, aci_image_sections[s].name, i, name,
				  "%llu %s from %llu run past the %s "
				  "section's %llu entries",
				  (unsigned long long)count,
				  aci_image_sections[of].name,
				  (unsigned long long)first,
				  aci_image_sections[of].name,
				  (unsigned long long)r->count[of]);
	}
	*sum += count;
	return 0;
}

/*
 * The runs `field` of section `by` must cover section `of` exactly; the
 * per-entry checks already keep their sum at or below its count.
 */
static int check_total(struct reader *r, int of, int by, const char *field,
		       uint64_t sum)
{
	if (sum == r->count[of])
		return 0;
	return fail_entry(r, IMAGE_HEADER_SIZE + (uint64_t)of *
			  IMAGE_TABLE_ENTRY + IMAGE_S_COUNT, "sections", of,
			  "count", "expected %llu (the sum of the %s' %s "
			  "fields), found %llu", (unsigned long long)sum,
			  aci_image_sections[by].name, field,
			  (unsigned long long)r->count[of]);
}

/*
 * The name and range that begin entry i of section s, at p (image.h: a
 * window, a global, a plane) into *name, *start (a window's base, a
 * tensor's offset) and *size.  Inline: it is most of a plane's reading.
 */
static inline int read_range(struct reader *r, const uint8_t *p, int s,
			     uint64_t i, struct ac_bytes *name,
			     uint64_t *start, uint64_t *size)
{
	assert(s == IMG_WINDOWS || s == IMG_GLOBALS || s == IMG_PLANES);
	assert(p == entry(r, s, i));
	if (read_string(r, p, s, i, "name", name))
		return -1;
	*start = image_get64(p + IMAGE_RANGE_START);
	*size = image_get64(p + IMAGE_RANGE_SIZE);
	return 0;
}

/* Windows and globals: entries of a name and a range, nothing else.
 * Every field is written (the arrays are not zeroed): a global is not
 * carried and its pad is zero, as the compound literal says. */
static int read_windows_and_globals(struct reader *r)
{
	struct ac_window *w = MUT(r->o->m.windows);
	for (uint64_t i = 0; i < r->count[IMG_WINDOWS]; i++)
		if (read_range(r, entry(r, IMG_WINDOWS, i), IMG_WINDOWS, i,
			       &w[i].name, &w[i].base, &w[i].size))
			return -1;
	struct ac_tensor *g = MUT(r->o->m.globals);
	for (uint64_t i = 0; i < r->count[IMG_GLOBALS]; i++) {
		struct ac_bytes name;
		uint64_t offset, size;
		if (read_range(r, entry(r, IMG_GLOBALS, i), IMG_GLOBALS, i,
			       &name, &offset, &size))
			return -1;
		g[i] = (struct ac_tensor){ .name = name, .offset = offset,
					   .size = size };
	}
	return 0;
}

static int read_phases(struct reader *r)
{
	struct ac_phase *ph = MUT(r->o->m.phases);
	uint64_t planes = 0;
	for (uint64_t i = 0; i < r->count[IMG_PHASES]; i++) {
		const uint8_t *p = entry(r, IMG_PHASES, i);
		uint64_t at = at_of(r, p);
		if (read_string(r, p, IMG_PHASES, i, "identity",
				&ph[i].identity) ||
		    read_run(r, image_get32(p + IMAGE_PHASE_PLANE_FIRST),
			     at + IMAGE_PHASE_PLANE_FIRST,
			     image_get32(p + IMAGE_PHASE_PLANE_COUNT),
			     at + IMAGE_PHASE_PLANE_COUNT, IMG_PHASES, i,
			     "plane", IMG_PLANES, &planes))
			return -1;
		ph[i].plane_first = image_get32(p + IMAGE_PHASE_PLANE_FIRST);
		ph[i].plane_count = image_get32(p + IMAGE_PHASE_PLANE_COUNT);
	}
	return check_total(r, IMG_PLANES, IMG_PHASES, "plane_count", planes);
}

static int read_planes(struct reader *r)
{
	struct ac_tensor *t = MUT(r->o->m.planes);
	for (uint64_t i = 0; i < r->count[IMG_PLANES]; i++) {
		const uint8_t *p = entry(r, IMG_PLANES, i);
		uint64_t at = at_of(r, p);
		struct ac_bytes name;
		uint64_t offset, size;
		if (read_range(r, p, IMG_PLANES, i, &name, &offset, &size))
			return -1;
		/* carried, then 7 bytes of pad: one load, above 1 when the
		 * flag is not 0 or 1 or a pad byte is not zero */
		uint64_t tail = image_get64(p + IMAGE_PLANE_CARRIED);
		uint8_t carried = (uint8_t)tail;
		if (tail > 1) {
			if (carried > 1)
				return fail_entry(r, at + IMAGE_PLANE_CARRIED,
						  "planes", i, "carried",
						  "expected 0 (fresh) or 1 "
						  "(carried), found %u",
						  carried);
			int rc = check_zero(r, at + IMAGE_PLANE_PAD,
					    at + IMAGE_PLANE_ENTRY, "planes",
					    i, "pad");
			assert(rc != 0);
			return rc;
		}
		/* every field, the pad zero: the array is not zeroed */
		t[i] = (struct ac_tensor){ .name = name, .offset = offset,
					   .size = size, .carried = carried };
	}
	return 0;
}

/*
 * Some launch broke a rule: the launches again from the first (their
 * strings from pool offset `pool`), each through the checks one by one
 * in the order the fields lie, until the first broken one, which they
 * report exactly.  Cold: only a malformed image comes here.
 */
static AC_COLD int launch_error(struct reader *r, uint64_t pool)
{
	r->pool = pool;
	uint64_t words = 0;
	for (uint64_t i = 0; i < r->count[IMG_LAUNCHES]; i++) {
		const uint8_t *p = entry(r, IMG_LAUNCHES, i);
		uint64_t at = at_of(r, p);
		struct ac_bytes unused;
		if (read_string(r, p, IMG_LAUNCHES, i, "identity", &unused) ||
		    read_run(r, image_get64(p + IMAGE_LAUNCH_WORD_FIRST),
			     at + IMAGE_LAUNCH_WORD_FIRST,
			     image_get32(p + IMAGE_LAUNCH_WORD_COUNT),
			     at + IMAGE_LAUNCH_WORD_COUNT, IMG_LAUNCHES, i,
			     "word", IMG_WORDS, &words) ||
		    check_zero(r, at + IMAGE_LAUNCH_PAD,
			       at + IMAGE_LAUNCH_ENTRY, "launches", i, "pad"))
			return -1;
	}
	assert(!"read_launches found a broken rule");
	return -1;
}

/*
 * Launches [from, to) of the table (p: launch from's entry) into l,
 * checking each entry's rules against the running sums: its string at
 * pool offset *pool, its words at *words, zero padding.  Advances the
 * sums past the launches; 0, or -1 at the first launch that breaks a
 * rule (reporting nothing: launch_error says which).  Inline: it is the
 * loop over most of an image's entries.
 */
static inline int read_launch_span(struct ac_launch *l, const uint8_t *p,
				   const uint8_t *bytes, uint64_t from,
				   uint64_t to, uint64_t *pool_io,
				   uint64_t *words_io)
{
	const uint32_t size = aci_image_sections[IMG_LAUNCHES].entry_size;
	uint64_t pool = *pool_io, words = *words_io;
	for (uint64_t i = from; i < to; i++, p += size) {
		uint32_t offset = image_get32(p + IMAGE_STR_OFFSET),
			 len = image_get32(p + IMAGE_STR_LENGTH);
		uint64_t first = image_get64(p + IMAGE_LAUNCH_WORD_FIRST);
		uint32_t count = image_get32(p + IMAGE_LAUNCH_WORD_COUNT),
			 pad = image_get32(p + IMAGE_LAUNCH_PAD);
		if ((offset != pool) | (first != words) | (pad != 0))
			return -1;
		/* every field, the pad zero: the array is not zeroed (field
		 * by field: a compound literal costs two more instructions a
		 * launch here) */
		l[i].identity.data = bytes + offset;
		l[i].identity.len = len;
		l[i].word_first = first;
		l[i].word_count = count;
		l[i].pad = 0;
		pool += len;
		words += count;
	}
	*pool_io = pool;
	*words_io = words;
	return 0;
}

/*
 * The launch table in chunks, on threads: chunk c reads launches [start
 * c, start c + 1) from the sums its first entry claims (its own offset
 * and word_first) into end[c]; the merge, in chunk order, then asks that
 * each chunk starts where the one before it ended.  By induction every
 * launch is then checked against the true running sums, so the table is
 * accepted exactly when the serial loop accepts it; a rejected one is
 * walked again serially (launch_error), so the diagnostic is the serial
 * one whatever the threads and their timing.
 */
struct launch_chunks {
	struct reader *r;
	uint64_t n, pool_first;
	uint32_t n_chunks;
	struct launch_chunk_end {
		uint64_t pool, words;
		int broken;
	} *end;
};

static int read_launch_chunk(void *ctx, uint32_t c)
{
	struct launch_chunks *k = ctx;
	struct reader *r = k->r;
	uint64_t from = aci_chunk_start((uint32_t)k->n, k->n_chunks, c),
		 to = aci_chunk_start((uint32_t)k->n, k->n_chunks, c + 1);
	const uint8_t *p = entry(r, IMG_LAUNCHES, from);
	struct launch_chunk_end *e = &k->end[c];
	e->pool = c ? image_get32(p + IMAGE_STR_OFFSET) : k->pool_first;
	e->words = c ? image_get64(p + IMAGE_LAUNCH_WORD_FIRST) : 0;
	e->broken = read_launch_span(MUT(r->o->m.launches), p, r->o->bytes,
				     from, to, &e->pool, &e->words) != 0;
	return 0;
}

/* read_launches' loop on the team's threads: 0 with the sums in *pool and
 * *words, 1 when some launch broke a rule (for launch_error), -1 when
 * memory runs out (reported). */
static int read_launches_split(struct reader *r, uint64_t *pool,
			       uint64_t *words)
{
	struct launch_chunks k = {
		.r = r, .n = r->count[IMG_LAUNCHES], .pool_first = *pool,
		.n_chunks = aci_chunk_count(r->team->threads,
					    (uint32_t)r->count[IMG_LAUNCHES]),
	};
	assert(r->team->threads > 1 && k.n > 1 && k.n_chunks > 1);
	k.end = malloc((size_t)k.n_chunks * sizeof(*k.end));
	if (!k.end)
		return aci_fail(r->err, "", "out of memory");
	/* read_launch_chunk never fails */
	(void)aci_team_run(r->team, k.n_chunks, read_launch_chunk, &k);
	int broken = 0;
	for (uint32_t c = 0; c < k.n_chunks && !broken; c++) {
		const struct launch_chunk_end *e = &k.end[c];
		broken = e->broken;
		if (c + 1 < k.n_chunks) {
			const uint8_t *next = entry(r, IMG_LAUNCHES,
				aci_chunk_start((uint32_t)k.n, k.n_chunks,
						c + 1));
			broken |= image_get32(next + IMAGE_STR_OFFSET) !=
				  e->pool ||
				  image_get64(next + IMAGE_LAUNCH_WORD_FIRST) !=
				  e->words;
		}
	}
	*pool = k.end[k.n_chunks - 1].pool;
	*words = k.end[k.n_chunks - 1].words;
	free(k.end);
	return broken;
}

/*
 * Launches hold the last strings: the pool must be used up after them.
 * The launch table is most of an image's entries, so each entry's rules
 * are one test: its string at the running pool offset, its words at the
 * running sum, zero padding.  That every string and every run of words
 * ends inside its section is one test after the loop: the running sums
 * only grow (the pool's can wrap at most once, ending below where it
 * started), so the last ends inside exactly when every one does.  When a
 * test fails, launch_error walks the launches again to say which rule of
 * which launch broke first.  A team of threads: the loop in chunks on
 * them (read_launches_split), with the same result.
 */
static int read_launches(struct reader *r)
{
	const uint64_t n = r->count[IMG_LAUNCHES];
	const uint8_t *p = entry(r, IMG_LAUNCHES, 0);
	uint64_t pool = r->pool, pool_end = r->count[IMG_POOL];
	uint64_t words = 0, words_end = r->count[IMG_WORDS];
	const uint64_t pool_first = pool;
	int broken;
	if (r->team && r->team->threads > 1 && n > 1) {
		broken = read_launches_split(r, &pool, &words);
		if (broken < 0)
			return -1;
	} else {
		broken = read_launch_span(MUT(r->o->m.launches), p,
					  r->o->bytes, 0, n, &pool,
					  &words) != 0;
	}
	/* fewer than 2^32 launches of fewer than 2^32 words: words cannot
	 * wrap */
	if (broken || (pool < pool_first) | (pool > pool_end) |
	    (words > words_end))
		return launch_error(r, pool_first);
	r->sums = (struct launch_sums){
		.words = words, .bytes = pool - pool_first,
		.last = n ? image_get32(entry(r, IMG_LAUNCHES, n - 1) +
					IMAGE_STR_LENGTH) : 0,
		.running = 1,   /* word_first is checked to be the sum */
	};
	r->pool = pool;
	if (check_total(r, IMG_WORDS, IMG_LAUNCHES, "word_count", words))
		return -1;
	if (r->pool != r->count[IMG_POOL])
		return fail_entry(r, IMAGE_HEADER_SIZE + (uint64_t)IMG_POOL *
				  IMAGE_TABLE_ENTRY + IMAGE_S_COUNT,
				  "sections", IMG_POOL, "count",
				  "expected %llu (the sum of the string "
				  "lengths), found %llu",
				  (unsigned long long)r->pool,
				  (unsigned long long)r->count[IMG_POOL]);
	return 0;
}

/* Copies n little-endian uint64_t from p: one memcpy on LE hosts. */
static void read_u64s(uint64_t *dst, const uint8_t *p, uint64_t n)
{
	if (IMAGE_HOST_LE) {
		if (n)
			memcpy(dst, p, (size_t)n * 8);
		return;
	}
	for (uint64_t i = 0; i < n; i++)
		dst[i] = image_get64(p + 8 * i);
}

/* A repeat's frame values: frame_count * slot_count, overflow-checked. */
static int read_frames(struct reader *r, const uint8_t *p, uint64_t i,
		       uint64_t *values)
{
	uint64_t at = at_of(r, p);
	uint64_t frames = image_get64(p + IMAGE_REPEAT_FRAME_COUNT);
	uint64_t first = image_get64(p + IMAGE_REPEAT_FRAME_VALUE_FIRST);
	uint32_t slots = image_get32(p + IMAGE_REPEAT_SLOT_COUNT);
	uint64_t total = r->count[IMG_FRAME_VALUES];
	if (first != *values)
		return fail_entry(r, at + IMAGE_REPEAT_FRAME_VALUE_FIRST,
				  "repeats", i, "frame_value_first",
				  "expected %llu (the sum of frame_count * "
				  "slot_count before it), found %llu",
				  (unsigned long long)*values,
				  (unsigned long long)first);
	if (slots && frames > (total - *values) / slots)
		return fail_entry(r, at + IMAGE_REPEAT_FRAME_COUNT,
				  "repeats", i, "frame_count",
				  "%llu frames of %u slots from frame value "
				  "%llu run past the frame_values section's "
				  "%llu entries", (unsigned long long)frames,
				  slots, (unsigned long long)first,
				  (unsigned long long)total);
	*values += frames * slots;
	return 0;
}

static int read_repeats(struct reader *r)
{
	struct ac_repeat *rp = MUT(r->o->m.repeats);
	uint64_t deltas = 0, slots = 0, values = 0;
	for (uint64_t i = 0; i < r->count[IMG_REPEATS]; i++) {
		const uint8_t *p = entry(r, IMG_REPEATS, i);
		uint64_t at = at_of(r, p);
		if (read_run(r, image_get32(p + IMAGE_REPEAT_DELTA_FIRST),
			     at + IMAGE_REPEAT_DELTA_FIRST,
			     image_get32(p + IMAGE_REPEAT_DELTA_COUNT),
			     at + IMAGE_REPEAT_DELTA_COUNT, IMG_REPEATS, i,
			     "delta", IMG_DELTAS, &deltas) ||
		    read_run(r, image_get32(p + IMAGE_REPEAT_SLOT_FIRST),
			     at + IMAGE_REPEAT_SLOT_FIRST,
			     image_get32(p + IMAGE_REPEAT_SLOT_COUNT),
			     at + IMAGE_REPEAT_SLOT_COUNT, IMG_REPEATS, i,
			     "slot", IMG_SLOTS, &slots) ||
		    read_frames(r, p, i, &values))
			return -1;
		rp[i].first = image_get64(p + IMAGE_REPEAT_FIRST);
		rp[i].count = image_get64(p + IMAGE_REPEAT_COUNT);
		rp[i].iterations = image_get64(p + IMAGE_REPEAT_ITERATIONS);
		rp[i].delta_first = image_get32(p + IMAGE_REPEAT_DELTA_FIRST);
		rp[i].delta_count = image_get32(p + IMAGE_REPEAT_DELTA_COUNT);
		rp[i].slot_first = image_get32(p + IMAGE_REPEAT_SLOT_FIRST);
		rp[i].slot_count = image_get32(p + IMAGE_REPEAT_SLOT_COUNT);
		rp[i].frame_count = image_get64(p + IMAGE_REPEAT_FRAME_COUNT);
		rp[i].frame_value_first =
			image_get64(p + IMAGE_REPEAT_FRAME_VALUE_FIRST);
	}
	if (check_total(r, IMG_DELTAS, IMG_REPEATS, "delta_count", deltas) ||
	    check_total(r, IMG_SLOTS, IMG_REPEATS, "slot_count", slots) ||
	    check_total(r, IMG_FRAME_VALUES, IMG_REPEATS,
			"frame_count * slot_count", values))
		return -1;
	return 0;
}

/* Deltas, slots, frame values, schedule and words: any value is valid. */
static void read_values(struct reader *r)
{
	struct ac_model *m = &r->o->m;
	struct ac_delta *d = MUT(m->deltas);
	for (uint64_t i = 0; i < r->count[IMG_DELTAS]; i++) {
		const uint8_t *p = entry(r, IMG_DELTAS, i);
		uint64_t bits = image_get64(p + IMAGE_DELTA_DELTA);
		d[i].launch = image_get64(p + IMAGE_DELTA_LAUNCH);
		d[i].word = image_get64(p + IMAGE_DELTA_WORD);
		memcpy(&d[i].delta, &bits, 8);  /* int64_t is two's complement */
	}
	struct ac_slot *s = MUT(m->slots);
	for (uint64_t i = 0; i < r->count[IMG_SLOTS]; i++) {
		const uint8_t *p = entry(r, IMG_SLOTS, i);
		s[i].launch = image_get64(p + IMAGE_SLOT_LAUNCH);
		s[i].word = image_get64(p + IMAGE_SLOT_WORD);
	}
	if (r->borrow) {
		/* the sections are these arrays, as the host lays them out */
		m->words = (const void *)entry(r, IMG_WORDS, 0);
		m->frame_values = (const void *)entry(r, IMG_FRAME_VALUES, 0);
		m->refs = (const void *)entry(r, IMG_SCHEDULE, 0);
		return;
	}
	read_u64s(MUT(m->words), entry(r, IMG_WORDS, 0), r->count[IMG_WORDS]);
	read_u64s(MUT(m->frame_values), entry(r, IMG_FRAME_VALUES, 0),
		  r->count[IMG_FRAME_VALUES]);
	/* struct ac_ref is {first, count}: two uint64_t, as in the image. */
	read_u64s(MUT(m->refs), entry(r, IMG_SCHEDULE, 0),
		  2 * r->count[IMG_SCHEDULE]);
}

static int read_entries(struct reader *r)
{
	if (r->borrow)
		r->o->bytes = MUT(entry(r, IMG_POOL, 0));
	else if (r->count[IMG_POOL])
		memcpy(r->o->bytes, entry(r, IMG_POOL, 0),
		       (size_t)r->count[IMG_POOL]);
	if (read_windows_and_globals(r) || read_phases(r) ||
	    read_planes(r) ||
	    read_launches(r) ||
	    read_repeats(r))
		return -1;
	read_values(r);
	return 0;
}

/* ---- step 2: the model, sized by the checked counts ---- */

static struct model_owned *alloc_model(struct reader *r)
{
	struct model_owned *o = aci_model_owned_new();
	if (!o) {
		aci_fail(r->err, "", "out of memory");
		return NULL;
	}
	struct ac_model *m = &o->m;
	m->alignment = image_get64(r->p + IMAGE_H_ALIGNMENT);
	m->n_windows = (uint32_t)r->count[IMG_WINDOWS];
	m->n_globals = (uint32_t)r->count[IMG_GLOBALS];
	m->n_phases = (uint32_t)r->count[IMG_PHASES];
	m->n_planes = (uint32_t)r->count[IMG_PLANES];
	m->n_launches = (uint32_t)r->count[IMG_LAUNCHES];
	m->n_repeats = (uint32_t)r->count[IMG_REPEATS];
	m->n_deltas = (uint32_t)r->count[IMG_DELTAS];
	m->n_slots = (uint32_t)r->count[IMG_SLOTS];
	m->n_words = r->count[IMG_WORDS];
	m->n_frame_values = r->count[IMG_FRAME_VALUES];
	m->n_refs = r->count[IMG_SCHEDULE];
	o->bytes_len = r->count[IMG_POOL];
	/* not zeroed: read_entries writes every field of every entry */
	if (aci_model_owned_alloc_raw(o, r->borrow, r->err)) {
		free(o);
		return NULL;
	}
	return o;
}

/* opt: NULL, or the options that size r->team (not started yet) by the
 * section table's counts (aci_threads_for). */
static int read_image(struct reader *r, const struct ac_options *opt,
		      struct ac_model **out)
{
	*out = NULL;
	if (read_header(r) || read_table(r) || check_padding(r))
		return -1;
	if (opt)
		aci_team_init(r->team, aci_threads_for(opt, r->count[IMG_WORDS],
						       r->count[IMG_LAUNCHES]));
	r->o = alloc_model(r);
	if (!r->o)
		return -1;
	if (read_entries(r)) {
		ac_model_free(&r->o->m);
		return -1;
	}
	*out = &r->o->m;
	return 0;
}

int ac_model_read_image(const void *image, size_t len, struct ac_model **out,
			struct ac_error *err)
{
	struct reader r = { .p = image, .len = len, .err = err };
	return read_image(&r, NULL, out);
}

/*
 * Words, frame values, references and byte strings are used in place when
 * the host's layout of them is the image's: little-endian, and the image
 * 8-byte aligned (every section starts at a multiple of 8).  Elsewhere
 * this is ac_model_read_image.
 */
int aci_image_view(const void *image, size_t len,
		   const struct ac_options *opt, struct aci_team *team,
		   struct ac_model **out, struct launch_sums *sums,
		   struct ac_error *err)
{
	assert(out && sums && (!opt || team));
	struct reader r = { .p = image, .len = len, .err = err, .team = team };
	if (IMAGE_HOST_LE && (uintptr_t)image % 8 == 0)
		r.borrow = BORROW_WORDS | BORROW_FRAME_VALUES | BORROW_REFS |
			   BORROW_BYTES;
	if (read_image(&r, opt, out))
		return -1;
	*sums = r.sums;
	return 0;
}

int ac_model_view_image(const void *image, size_t len, struct ac_model **out,
			struct ac_error *err)
{
	struct launch_sums unused;
	return aci_image_view(image, len, NULL, NULL, out, &unused, err);
}
