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

/* Section table entry field offsets. */
#define IMAGE_S_KIND 0
#define IMAGE_S_ENTRY_SIZE 4
#define IMAGE_S_OFFSET 8
#define IMAGE_S_COUNT 16

/* Entry sizes of the sections, indexed by enum image_section. */
extern const uint32_t image_entry_size[IMAGE_SECTIONS];
/* Section names as they appear in error locations ("planes[3].name"). */
extern const char *const image_section_name[IMAGE_SECTIONS];

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
int image_emit(const struct ac_model *m, int with_schedule, image_sink sink,
	       void *ctx, struct ac_error *err);

/*
 * Whether image_emit(m, 0, ...) would succeed, for a model whose structure
 * is already checked (model_check_structure(m, 0, ...) returned 0, as
 * validate_model does first): 0, or -1 with err.  It checks what only the
 * image's fixed-width fields limit (string offsets, the u32 totals), not
 * the structure a second time.
 */
int image_check(const struct ac_model *m, struct ac_error *err);

#endif
