/* SPDX-License-Identifier: MIT */
/*
 * The verdict-cache digest (docs/certify.md): XXH3-128 of (P, R), P the
 * XXH3-128 of the canonical image without its schedule, R that of the
 * references, two little-endian u64 each.  The one place that lays the
 * bytes out: ac_schedule (schedule.c) hashes its references with
 * aci_digest_refs, and a caller keeping its own references (the guard) uses
 * an ac_digester, which is the same state behind the public API.  P is
 * hashed here too, in one pass or in chunks (aci_image_digest_*: the
 * program's own image as it is emitted, an ac_image_digester's chunks as
 * a guard copies them): XXH3's streamed value is its one-shot value.
 */
#define XXH_STATIC_LINKING_ONLY   /* XXH3_state_t on the stack */
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

/* ---- P: an image's bytes ---- */

void aci_image_digest_begin(XXH3_state_t *state)
{
	assert(state);
	XXH3_128bits_reset(state);
}

void aci_image_digest_add(XXH3_state_t *state, const void *chunk, size_t len)
{
	assert(state && (chunk || len == 0));
	if (len)
		XXH3_128bits_update(state, chunk, len);
}

void aci_image_digest_value(const XXH3_state_t *state, struct ac_digest *out)
{
	XXH128_hash_t h = XXH3_128bits_digest(state);
	out->high = h.high64;
	out->low = h.low64;
}

void ac_image_digest(const void *image, size_t len, struct ac_digest *out)
{
	assert((image || len == 0) && out);
	XXH3_state_t state;
	aci_image_digest_begin(&state);
	aci_image_digest_add(&state, image, len);
	aci_image_digest_value(&state, out);
}

/* XXH3_state_t wants 64-byte alignment: the struct has it, and is
 * allocated with it. */
struct ac_image_digester {
	XXH3_state_t state;
};

ac_image_digester *ac_image_digester_new(void)
{
	ac_image_digester *d = aligned_alloc(_Alignof(ac_image_digester),
					     sizeof(*d));
	if (d)
		aci_image_digest_begin(&d->state);
	return d;
}

void ac_image_digester_free(ac_image_digester *d)
{
	free(d);
}

void ac_image_digester_add(ac_image_digester *d, const void *chunk,
			   size_t len)
{
	assert(d);
	aci_image_digest_add(&d->state, chunk, len);
}

void ac_image_digester_value(const ac_image_digester *d,
			     struct ac_digest *out)
{
	assert(d && out);
	aci_image_digest_value(&d->state, out);
}

/* ---- R and the whole ---- */

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
