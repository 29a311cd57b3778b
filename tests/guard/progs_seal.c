/* SPDX-License-Identifier: MIT */
/*
 * prog_seal (progs.h): apart from progs.c, so that only the clients that
 * compute seals link common/seal.c (Nettle).
 */
#include <stdlib.h>
#include <string.h>

#include <arenaguard/uapi.h>

#include "progs.h"
#include "seal.h"

_Static_assert(ARENA_SEAL_BYTES == 32, "prog_seal's size");

void prog_seal(enum prog_kind kind, const struct ac_ref *refs, uint32_t n,
	       uint8_t seal[32])
{
	size_t len;
	uint8_t *image = prog_image(kind, &len);
	struct arena_seal s;
	struct arena_seal_value v;
	arena_seal_program(&s, image, len);
	arena_seal_refs(&s, (const struct drm_arena_ref *)refs, n);
	arena_seal_value(&s, &v);
	free(image);
	memcpy(seal, v.bytes, sizeof(v.bytes));
}
