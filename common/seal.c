/* SPDX-License-Identifier: MIT */
#include <assert.h>
#include <string.h>

#include "seal.h"

static void put_le64(unsigned char *out, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		out[i] = (unsigned char)(v >> (8 * i));
}

void arena_seal_program(struct arena_seal *s, const void *image,
			uint64_t size)
{
	unsigned char len[8];
	assert(image || size == 0);
	XXH64_reset(&s->state, ARENA_SEAL_SEED);
	put_le64(len, size);
	XXH64_update(&s->state, len, sizeof(len));
	if (size)
		XXH64_update(&s->state, image, (size_t)size);
}

void arena_seal_refs(struct arena_seal *s, const struct drm_arena_ref *refs,
		     uint64_t n)
{
	assert(refs || n == 0);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* The array already is the byte string. */
	_Static_assert(sizeof(*refs) == 16, "a reference is two le64");
	if (n)
		XXH64_update(&s->state, refs, (size_t)n * sizeof(*refs));
#else
	for (uint64_t i = 0; i < n; i++) {
		unsigned char b[16];
		put_le64(b, refs[i].first);
		put_le64(b + 8, refs[i].count);
		XXH64_update(&s->state, b, sizeof(b));
	}
#endif
}

uint64_t arena_seal_value(const struct arena_seal *s)
{
	return XXH64_digest(&s->state);
}
