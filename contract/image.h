/* SPDX-License-Identifier: MIT */
/*
 * What the arena device needs of a binary program
 * image (docs/program-image.md), checked once, in one freestanding place
 * compiled into the kernel driver (driver/) and into user space
 * (the fuzz harness fuzz/fuzz_contract.c, the simulator's kernels).
 *
 * arena_image_parse() checks an untrusted image's canonical structure
 * (header, section table, bounds by division, zero pads, consecutive
 * strings and runs: docs/program-image.md sections 5 and 6) and
 * records where each section lies; nothing is copied and no count is
 * trusted before it is bounded by the image's length.
 *
 * arena_program_index() then checks what makes a program well-formed
 * (spec 1.1 and 1.2, as libarenacert's ac_program_new does): the plan's
 * alignment, ranges and distinct phase identities, and the launch
 * table's rules the device executes by (repeat bodies inside the table,
 * pairwise disjoint, 1 .. 2^32-1 iterations, deltas and slots naming
 * words of their body, slots distinct, frames for slots), and builds the
 * index execution needs, in memory the caller provides
 * (arena_program_index_bytes()): with each launch's phase (spec 1.2: the
 * last field 51 of its source identity, among the phases' identities),
 * which poisoning needs (execute.h).  The device reads no plan beyond
 * that.
 *
 * arena_ref_check() is spec 1.3's reference rule with the executed-
 * sequence limit; arena_words_at() is spec 1.2's V(t).
 *
 * Every function returns 0 or -errno (-EINVAL: malformed; -EFAULT: a
 * word value outside [0, 2^64)).
 */
#ifndef ARENA_CONTRACT_IMAGE_H
#define ARENA_CONTRACT_IMAGE_H

#include "types.h"

/* The largest batch SCHEDULE_APPEND accepts (EINVAL beyond). */
#define ARENA_MAX_APPEND (1u << 20)
/* An executed sequence of this many launches or more is malformed. */
#define ARENA_EXECUTED_LIMIT (1ull << 62)

/**
 * arena_append_count_ok() - the batch limit
 * @count: a SCHEDULE_APPEND's number of references
 *
 * Every implementation of the driver (arena.ko, the simulator, the
 * guard answering as the driver would, the fake drivers) refuses a batch
 * over ARENA_MAX_APPEND with EINVAL, before it reads any of it.
 *
 * Return: whether @count is within the limit.
 */
static inline int arena_append_count_ok(u64 count)
{
	return count <= ARENA_MAX_APPEND;
}

enum arena_section {
	ARENA_S_WINDOWS, ARENA_S_GLOBALS, ARENA_S_PHASES, ARENA_S_PLANES,
	ARENA_S_LAUNCHES, ARENA_S_WORDS, ARENA_S_REPEATS, ARENA_S_DELTAS,
	ARENA_S_SLOTS, ARENA_S_FRAME_VALUES, ARENA_S_SCHEDULE, ARENA_S_POOL,
	ARENA_S_COUNT
};

/* A parsed image: the bytes (not owned) and each section's place. */
struct arena_image {
	const u8 *bytes;
	u64 size;
	u64 offset[ARENA_S_COUNT];
	u64 count[ARENA_S_COUNT];
	/* where the first malformed field is (a byte offset), on -EINVAL */
	u64 error_at;
};

struct arena_launch {
	u64 word_first;
	u32 word_count;
};

/* A plane of a phase (docs/program-image.md 4.4). */
struct arena_plane {
	u64 offset, size;
	u8 carried;
};

struct arena_repeat {
	u64 first, count, iterations;
	u32 delta_first, delta_count, slot_first, slot_count;
	u64 frame_count, frame_value_first;
};

/* The index execution needs (arena_program_index), in caller memory. */
struct arena_program {
	const struct arena_image *image;
	u32 *repeat_of;            /* per launch: its repeat, or NONE32 */
	/* per launch + 1: executed launches of the table before it (bodies
	 * counted with their iterations)
	 */
	u64 *executed_before;
	s128 *delta_sum;           /* per word (repeats only): D */
	u32 *slot_of;              /* per word (repeats only): slot+1, 0 */
	/* per launch: the phase its identity declares, or ARENA_NONE32 (no
	 * parsable identity, no length-delimited field 51, an unknown one)
	 */
	u32 *phase_of;
	u32 *phase_order;          /* the phases sorted by identity */
	u32 max_words;             /* the largest word_count */
};

int arena_image_parse(const void *bytes, u64 size, struct arena_image *img);

/* Little-endian loads from a parsed image. */
u64 arena_image_u64(const struct arena_image *img, u64 at);
u32 arena_image_u32(const struct arena_image *img, u64 at);

u64 arena_image_n_launches(const struct arena_image *img);
void arena_image_launch(const struct arena_image *img, u64 l,
			struct arena_launch *out);
void arena_image_repeat(const struct arena_image *img, u64 r,
			struct arena_repeat *out);
u64 arena_image_word(const struct arena_image *img, u64 w);
/* Phase ph's planes: the run [*first, *first + *count) of the planes. */
void arena_image_phase_planes(const struct arena_image *img, u64 ph,
			      u64 *first, u64 *count);
void arena_image_plane(const struct arena_image *img, u64 k,
		       struct arena_plane *out);

/* Bytes of caller memory arena_program_index() needs (16-aligned). */
u64 arena_program_index_bytes(const struct arena_image *img);
int arena_program_index(struct arena_program *p, const struct arena_image *img,
			void *mem);

/* Spec 1.3: reference [first, first + count), after *executed launches;
 * adds its launches to *executed.  -EINVAL: empty, outside the table,
 * cutting a body, or reaching ARENA_EXECUTED_LIMIT.
 */
int arena_ref_check(const struct arena_program *p, u64 first, u64 count,
		    u64 *executed);

/* The words launch l executes at ordinal t of its repeat (t 0 outside
 * one) into out[0 .. word_count); -EFAULT when a value leaves [0, 2^64).
 */
int arena_words_at(const struct arena_program *p, u64 l, u64 t,
		   u64 *out);

#endif
