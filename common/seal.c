/* SPDX-License-Identifier: MIT */
#include <assert.h>
#include <string.h>

#include "seal.h"

_Static_assert(SHA256_DIGEST_SIZE == ARENA_SEAL_BYTES,
	       "uapi.h's seal is one SHA-256 digest");

static void put_le64(unsigned char *out, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		out[i] = (unsigned char)(v >> (8 * i));
}

void arena_seal_begin(struct arena_seal *s, uint64_t size)
{
	unsigned char len[8];
	assert(s);
	sha256_init(&s->state);
	put_le64(len, size);
	sha256_update(&s->state, sizeof(len), len);
}

void arena_seal_image(struct arena_seal *s, const void *chunk, size_t n)
{
	assert(s && (chunk || n == 0));
	if (n)
		sha256_update(&s->state, n, chunk);
}

void arena_seal_program(struct arena_seal *s, const void *image,
			uint64_t size)
{
	assert(image || size == 0);
	assert(size <= SIZE_MAX);
	arena_seal_begin(s, size);
	arena_seal_image(s, image, (size_t)size);
}

void arena_seal_refs(struct arena_seal *s, const struct drm_arena_ref *refs,
		     uint64_t n)
{
	assert(refs || n == 0);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* The array already is the byte string. */
	_Static_assert(sizeof(*refs) == 16, "a reference is two le64");
	assert(n <= SIZE_MAX / sizeof(*refs));
	if (n)
		sha256_update(&s->state, (size_t)n * sizeof(*refs),
			      (const uint8_t *)refs);
#else
	for (uint64_t i = 0; i < n; i++) {
		unsigned char b[16];
		put_le64(b, refs[i].first);
		put_le64(b + 8, refs[i].count);
		sha256_update(&s->state, sizeof(b), b);
	}
#endif
}

void arena_seal_value(const struct arena_seal *s, struct arena_seal_value *out)
{
	/* Nettle's digest resets the context it finalizes: finalize a
	 * copy, so that the schedule's state can take more references. */
	struct sha256_ctx copy = s->state;
	sha256_digest(&copy, sizeof(out->bytes), out->bytes);
}

int arena_seal_equal(const struct arena_seal_value *a, const uint8_t *b)
{
	assert(a && b);
	return memcmp(a->bytes, b, sizeof(a->bytes)) == 0;
}

uint32_t arena_seal_pick(uint32_t algorithms)
{
	return (algorithms & (1u << ARENA_SEAL_SHA256)) ? ARENA_SEAL_SHA256
							 : 0;
}
