/* SPDX-License-Identifier: MIT */
/*
 * The verdict-cache digest (docs/certify.md): XXH3-128 of (P, R), P the
 * XXH3-128 of the canonical image without its schedule, R that of the
 * references, two little-endian u64 each.  The one place that lays the
 * bytes out: ac_schedule (schedule.c) hashes its references with
 * aci_digest_refs, and a caller keeping its own references (the guard) uses
 * an ac_digester, which is the same state behind the public API.
 */
#include <assert.h>
#include <stdlib.h>

#include "image.h"
#include "program_impl.h"

void aci_digest_refs(XXH3_state_t *state, const struct ac_ref *refs, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* The schedule's image entries (image.h asserts the layout): on
	 * this host, the array itself. */
	if (n)
		XXH3_128bits_update(state, refs, n * sizeof(*refs));
#else
	for (size_t i = 0; i < n; i++) {
		uint8_t le[IMAGE_REF_ENTRY];
		image_put64(le + IMAGE_REF_FIRST, refs[i].first);
		image_put64(le + IMAGE_REF_COUNT, refs[i].count);
		XXH3_128bits_update(state, le, sizeof(le));
	}
#endif
}

/* XXH3-128 of (program digest, references digest), each as high then low
 * 64 bits, little-endian. */
void ac_digest_combine(const struct ac_digest *program,
		       const struct ac_digest *refs, struct ac_digest *out)
{
	uint8_t both[32];
	image_put64(both, program->high);
	image_put64(both + 8, program->low);
	image_put64(both + 16, refs->high);
	image_put64(both + 24, refs->low);
	XXH128_hash_t h = XXH3_128bits(both, sizeof(both));
	out->high = h.high64;
	out->low = h.low64;
}

void ac_image_digest(const void *image, size_t len, struct ac_digest *out)
{
	XXH128_hash_t h = XXH3_128bits(image, len);
	out->high = h.high64;
	out->low = h.low64;
}

struct ac_digester {
	XXH3_state_t *now;           /* R of every reference added */
	XXH3_state_t *before;        /* R before the last ac_digester_add */
	struct ac_digest program;    /* P */
};

void ac_digester_free(ac_digester *d)
{
	if (!d)
		return;
	XXH3_freeState(d->now);
	XXH3_freeState(d->before);
	free(d);
}

ac_digester *ac_digester_new(const struct ac_digest *program)
{
	assert(program);
	ac_digester *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->program = *program;
	d->now = XXH3_createState();
	d->before = XXH3_createState();
	if (!d->now || !d->before ||
	    XXH3_128bits_reset(d->now) == XXH_ERROR) {
		ac_digester_free(d);
		return NULL;
	}
	XXH3_copyState(d->before, d->now);
	return d;
}

void ac_digester_add(ac_digester *d, const struct ac_ref *refs, size_t n)
{
	XXH3_copyState(d->before, d->now);
	aci_digest_refs(d->now, refs, n);
}

void ac_digester_undo(ac_digester *d)
{
	XXH3_copyState(d->now, d->before);
}

void ac_digester_value(const ac_digester *d, struct ac_digest *out)
{
	XXH128_hash_t h = XXH3_128bits_digest(d->now);
	struct ac_digest refs = { h.high64, h.low64 };
	ac_digest_combine(&d->program, &refs, out);
}
