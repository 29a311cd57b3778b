/* SPDX-License-Identifier: MIT */
/*
 * The seal of a schedule (include/arenaguard/uapi.h, "Sealed
 * submissions"): SHA-256 (Nettle's, which uses the CPU's SHA extensions
 * where it has them) of le64(size) || image || ref_0 || ...  The one
 * implementation, used by the simulated device (the driver's side), the
 * guard (the checker's side) and the test and fuzz drivers.  A state is
 * started from a program image and then fed the references in the order
 * they are appended; reading the value finalizes a copy, so a schedule
 * can grow and be submitted again.
 */
#ifndef ARENAGUARD_SEAL_H
#define ARENAGUARD_SEAL_H

#include <stddef.h>
#include <stdint.h>

#include <nettle/sha2.h>

#include <arenaguard/uapi.h>

struct arena_seal {
	struct sha256_ctx state;
};

/* A seal value: ARENA_SEAL_BYTES of SHA-256. */
struct arena_seal_value {
	uint8_t bytes[ARENA_SEAL_BYTES];
};

/* The state of a program: le64(size) || image[0, size). */
void arena_seal_program(struct arena_seal *s, const void *image,
			uint64_t size);
/* The same state in pieces, for a caller that hashes an image as it
 * copies it: arena_seal_begin(size), then arena_seal_image over
 * consecutive chunks whose lengths sum to size. */
void arena_seal_begin(struct arena_seal *s, uint64_t size);
void arena_seal_image(struct arena_seal *s, const void *chunk, size_t n);
/* Feeds n references (as le64 first || le64 count each). */
void arena_seal_refs(struct arena_seal *s, const struct drm_arena_ref *refs,
		     uint64_t n);
/* The seal of what was fed so far (s is unchanged). */
void arena_seal_value(const struct arena_seal *s, struct arena_seal_value *out);
/* Whether two seal values are equal (1) or not (0). */
int arena_seal_equal(const struct arena_seal_value *a, const uint8_t *b);

/*
 * The algorithm a checker uses with a driver that offers `algorithms`
 * (struct drm_arena_seal's bit set): ARENA_SEAL_SHA256, or 0 when the
 * driver offers none this code computes (the caller then cannot seal).
 */
uint32_t arena_seal_pick(uint32_t algorithms);

#endif
