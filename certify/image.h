/* SPDX-License-Identifier: MIT */
/*
 * The binary program image (docs/program-image.md): the layout shared by
 * image_read.c and image_write.c, and the streaming writer that the digest
 * (schedule.c) hashes.  Not installed.
 *
 * An image is a 40-byte header, a table of IMAGE_SECTIONS 24-byte section
 * entries, then the sections in the order of enum image_section, each at
 * the 8-byte aligned offset right after the previous one, zero padded.
 * Every field is little-endian and fixed-width.  The format is canonical:
 * a model has exactly one image, and the reader accepts nothing else.
 */
#ifndef ARENACERT_IMAGE_H
#define ARENACERT_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* Sections, in image order; a section's kind field is its index + 1. */
enum image_section {
	IMG_WINDOWS,
	IMG_GLOBALS,
	IMG_PHASES,
	IMG_PLANES,
	IMG_LAUNCHES,
	IMG_WORDS,
	IMG_REPEATS,
	IMG_DELTAS,
	IMG_SLOTS,
	IMG_FRAME_VALUES,
	IMG_SCHEDULE,
	IMG_POOL,
	IMAGE_SECTIONS
};

#define IMAGE_HEADER_SIZE 40
#define IMAGE_TABLE_ENTRY 24
#define IMAGE_TABLE_END (IMAGE_HEADER_SIZE + IMAGE_SECTIONS * IMAGE_TABLE_ENTRY)

/* Header field offsets. */
#define IMAGE_H_MAGIC 0
#define IMAGE_H_VERSION 8
#define IMAGE_H_SECTION_COUNT 12
#define IMAGE_H_IMAGE_SIZE 16
#define IMAGE_H_ALIGNMENT 24
#define IMAGE_H_RESERVED0 32
_Static_assert(IMAGE_H_RESERVED0 + 8 == IMAGE_HEADER_SIZE, "header");

/* Section table entry field offsets. */
#define IMAGE_S_KIND 0
#define IMAGE_S_ENTRY_SIZE 4
#define IMAGE_S_OFFSET 8
#define IMAGE_S_COUNT 16
_Static_assert(IMAGE_S_COUNT + 8 == IMAGE_TABLE_ENTRY, "table entry");

/*
 * Entry field offsets and sizes, section by section (docs/program-image.md,
 * "Sections"): the reader reads and the writer writes every field through
 * these names.  A byte string is (u32 offset into the pool, u32 length) at
 * the start of the entries that have one.
 */
#define IMAGE_STR_OFFSET 0
#define IMAGE_STR_LENGTH 4

/* Windows, globals and planes begin alike: the name, then a range of the
 * arena (a window's base or a tensor's offset, then its size).  Windows
 * and globals are that alone. */
#define IMAGE_RANGE_START 8
#define IMAGE_RANGE_SIZE 16
#define IMAGE_RANGE_END 24

#define IMAGE_WINDOW_ENTRY IMAGE_RANGE_END
#define IMAGE_GLOBAL_ENTRY IMAGE_RANGE_END

#define IMAGE_PHASE_PLANE_FIRST 8
#define IMAGE_PHASE_PLANE_COUNT 12
#define IMAGE_PHASE_ENTRY 16

#define IMAGE_PLANE_CARRIED 24   /* u8, after the range */
#define IMAGE_PLANE_PAD 25       /* 7 zero bytes */
#define IMAGE_PLANE_ENTRY 32

#define IMAGE_LAUNCH_WORD_FIRST 8
#define IMAGE_LAUNCH_WORD_COUNT 16
#define IMAGE_LAUNCH_PAD 20      /* u32, zero */
#define IMAGE_LAUNCH_ENTRY 24

#define IMAGE_WORD_ENTRY 8

#define IMAGE_REPEAT_FIRST 0
#define IMAGE_REPEAT_COUNT 8
#define IMAGE_REPEAT_ITERATIONS 16
#define IMAGE_REPEAT_DELTA_FIRST 24
#define IMAGE_REPEAT_DELTA_COUNT 28
#define IMAGE_REPEAT_SLOT_FIRST 32
#define IMAGE_REPEAT_SLOT_COUNT 36
#define IMAGE_REPEAT_FRAME_COUNT 40
#define IMAGE_REPEAT_FRAME_VALUE_FIRST 48
#define IMAGE_REPEAT_ENTRY 56

#define IMAGE_DELTA_LAUNCH 0
#define IMAGE_DELTA_WORD 8
#define IMAGE_DELTA_DELTA 16     /* i64, two's complement */
#define IMAGE_DELTA_ENTRY 24

#define IMAGE_SLOT_LAUNCH 0
#define IMAGE_SLOT_WORD 8
#define IMAGE_SLOT_ENTRY 16

#define IMAGE_FRAME_VALUE_ENTRY 8

#define IMAGE_REF_FIRST 0
#define IMAGE_REF_COUNT 8
#define IMAGE_REF_ENTRY 16

#define IMAGE_POOL_ENTRY 1

/* Each entry ends with its last field. */
_Static_assert(IMAGE_RANGE_SIZE + 8 == IMAGE_RANGE_END, "windows, globals");
_Static_assert(IMAGE_PLANE_CARRIED == IMAGE_RANGE_END, "a plane's range");
_Static_assert(IMAGE_PHASE_PLANE_COUNT + 4 == IMAGE_PHASE_ENTRY, "phases");
_Static_assert(IMAGE_PLANE_PAD + 7 == IMAGE_PLANE_ENTRY, "planes");
_Static_assert(IMAGE_LAUNCH_PAD + 4 == IMAGE_LAUNCH_ENTRY, "launches");
_Static_assert(IMAGE_REPEAT_FRAME_VALUE_FIRST + 8 == IMAGE_REPEAT_ENTRY,
	       "repeats");
_Static_assert(IMAGE_DELTA_DELTA + 8 == IMAGE_DELTA_ENTRY, "deltas");
_Static_assert(IMAGE_SLOT_WORD + 8 == IMAGE_SLOT_ENTRY, "slots");
_Static_assert(IMAGE_REF_COUNT + 8 == IMAGE_REF_ENTRY, "schedule");

/* Raw copies of ac_ref arrays (the schedule section, the digest) rely on
 * this layout: {first, count}, two uint64_t, as in the image. */
_Static_assert(sizeof(struct ac_ref) == IMAGE_REF_ENTRY &&
	       offsetof(struct ac_ref, count) == IMAGE_REF_COUNT,
	       "ac_ref is the schedule's entry");

/* Each section's name, as it appears in error locations ("planes[3].name"),
 * and entry size; indexed by enum image_section. */
struct image_section_info {
	const char *name;
	uint32_t entry_size;
};
extern const struct image_section_info aci_image_sections[IMAGE_SECTIONS];

/* Rounds up to the next multiple of 8; callers guarantee no overflow. */
static inline uint64_t image_align8(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

/*
 * Little-endian loads and stores through bytes: any alignment, any host.
 * Compilers turn these into single moves on little-endian machines.
 */
static inline uint32_t image_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t image_get64(const uint8_t *p)
{
	return (uint64_t)image_get32(p) | (uint64_t)image_get32(p + 4) << 32;
}

static inline void image_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void image_put64(uint8_t *p, uint64_t v)
{
	image_put32(p, (uint32_t)v);
	image_put32(p + 4, (uint32_t)(v >> 32));
}

/*
 * On little-endian hosts arrays of uint64_t (words, frame values) and of
 * struct ac_ref already have their image layout and are copied whole.
 * Building with -DIMAGE_HOST_LE=0 forces the value-by-value path that
 * big-endian hosts take, so that it can be tested anywhere.
 */
#ifndef IMAGE_HOST_LE
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define IMAGE_HOST_LE 1
#else
#define IMAGE_HOST_LE 0
#endif
#endif

typedef void (*image_sink)(void *ctx, const void *data, size_t len);

/*
 * Streams the canonical image of m to sink; with_schedule = 0 writes it as
 * if m had no references (n_refs = 0).  Returns 0, or -1 with err (e.g. a
 * byte string too long for the pool's u32 offsets); on -1 nothing has been
 * passed to sink, since every check happens before the first byte.
 */
int aci_image_emit(const struct ac_model *m, int with_schedule, image_sink sink,
		   void *ctx, struct ac_error *err);

/*
 * Whether aci_image_emit(m, 0, ...) would succeed, for a model whose structure
 * is already checked (aci_model_check_structure(m, 0, s, ...) returned 0, as
 * aci_validate_model does first, and filled *s): 0, or -1 with err.  It
 * checks what only the image's fixed-width fields limit (string offsets,
 * the u32 totals), not the structure a second time, and does not walk the
 * launch table (s holds its sums) unless a string breaks a limit.
 */
int aci_image_check(const struct ac_model *m, const struct launch_sums *s,
		    struct ac_error *err);

/*
 * image_read.c: ac_model_view_image, and the launch table's sums the
 * reader found as it checked the table (what aci_model_check_structure would
 * find for the model returned), into *sums.  opt (NULL: serially): team,
 * not started, is initialised to aci_threads_for(opt, ...) threads by the
 * section table's counts, and the launch table is read on them, with the
 * serial result and error; the caller stops it (aci_team_stop), after
 * using it for the program's other stages.
 */
struct aci_team;
int aci_image_view(const void *image, size_t len,
		   const struct ac_options *opt, struct aci_team *team,
		   struct ac_model **out, struct launch_sums *sums,
		   struct ac_error *err);

#endif
