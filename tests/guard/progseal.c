/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "progseal.h"

struct arena_seal_value prog_seal(enum prog_kind kind,
				  const struct ac_ref *refs, uint32_t n)
{
	size_t len;
	uint8_t *image = prog_image(kind, &len);
	struct arena_seal s;
	struct arena_seal_value v;
	if (!image)
		abort();
	arena_seal_program(&s, image, len);
	arena_seal_refs(&s, (const struct drm_arena_ref *)refs, n);
	arena_seal_value(&s, &v);
	free(image);
	return v;
}
