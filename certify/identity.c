/* SPDX-License-Identifier: MIT */
/*
 * A minimal protobuf wire-format walker: just enough to find the last
 * occurrence of field 51 and to reject what the spec calls unparsable.
 * Every byte is bounds-checked; identities are untrusted.
 */
#include <assert.h>
#include <string.h>
#include <xxhash.h>

#include "identity.h"

/* Field 51, wire type 2: tag (51 << 3) | 2 = 410 as a varint. */
static const uint8_t FIELD51_TAG[2] = { 0x9a, 0x03 };
_Static_assert(((IDENTITY_PHASE_FIELD << 3) | 2) == (0x9a & 0x7f) + (0x03 << 7),
	       "FIELD51_TAG is field 51's tag, wire type 2");

unsigned aci_varint_put(uint8_t *dst, uint64_t v)
{
	unsigned n = 0;
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		if (dst)
			dst[n] = b | (v ? 0x80 : 0);
		n++;
	} while (v);
	assert(n <= 10);
	return n;
}

int aci_varint_read(const uint8_t *p, uint64_t len, uint64_t *pos,
		    uint64_t *value)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < 10; i++) {
		if (*pos >= len)
			return -1;              /* truncated */
		uint8_t b = p[(*pos)++];
		if (i == 9 && b > 1)
			return -1;              /* >= 2^64, or an 11th byte */
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*value = v;
			return 0;
		}
	}
	return -1;                              /* unreachable: i == 9 */
}

/*
 * aci_varint_read, with varints of one and two bytes (every tag below field
 * 2048, field 51's among them, and every length below 2^14) taken inline:
 * an identity is parsed for every launch whose bytes were not seen just
 * before.
 */
static inline int varint_next(const uint8_t *p, uint64_t len, uint64_t *pos,
			      uint64_t *value)
{
	uint64_t at = *pos;
	if (at < len && p[at] < 0x80) {
		*value = p[at];
		*pos = at + 1;
		return 0;
	}
	if (at + 1 < len && p[at] >= 0x80 && p[at + 1] < 0x80) {
		*value = (uint64_t)(p[at] & 0x7f) | (uint64_t)p[at + 1] << 7;
		*pos = at + 2;
		return 0;
	}
	return aci_varint_read(p, len, pos, value);
}

/* Skips a field's value of the given wire type. */
static int skip_value(const uint8_t *p, uint64_t len, uint64_t *pos,
		      unsigned wire_type, uint64_t *payload_at,
		      uint64_t *payload_len)
{
	uint64_t n;
	switch (wire_type) {
	case 0:
		return varint_next(p, len, pos, &n);
	case 1:
		n = 8;
		break;
	case 2:
		if (varint_next(p, len, pos, &n) != 0)
			return -1;
		*payload_at = *pos;
		*payload_len = n;
		break;
	case 5:
		n = 4;
		break;
	default:
		return -1;                      /* 3, 4 (groups), 6, 7 */
	}
	if (n > len - *pos)
		return -1;
	*pos += n;
	return 0;
}

/*
 * The common shape of an identity, a kernel's name then its phase: one
 * field of wire type 2 whose tag is one byte (fields 1 to 15) and whose
 * length is one byte, then field 51's two-byte tag, a one-byte length and
 * the payload, ending exactly at len.  1 with out filled when id has that
 * shape, else 0.  The walk below gives the same answer for these bytes
 * (both fields parse, field 51 occurs once, as wire type 2), in about 15
 * instructions instead of 135 for the walk's two fields.
 */
static int parse_name_then_field51(const uint8_t *id, uint64_t len,
				   struct identity_field51 *out)
{
	if (len < 5 || id[0] >= 0x80 || (id[0] & 7) != 2 || id[0] < 8 ||
	    id[1] >= 0x80)
		return 0;
	uint64_t at = 2 + (uint64_t)id[1];     /* field 51's tag */
	if (at > len - 3 || id[at] != FIELD51_TAG[0] ||
	    id[at + 1] != FIELD51_TAG[1] || id[at + 2] >= 0x80 ||
	    len - (at + 3) != id[at + 2])
		return 0;
	*out = (struct identity_field51){ .problem = AC_ID_OK,
		.payload = id + at + 3, .len = id[at + 2] };
	return 1;
}

void aci_identity_parse(const uint8_t *id, uint64_t len,
			struct identity_field51 *out)
{
	if (parse_name_then_field51(id, len, out))
		return;
	int seen = 0, wrong_type = 0;
	uint64_t pos = 0;
	*out = (struct identity_field51){ .problem = AC_ID_OK };
	while (pos < len) {
		uint64_t start = pos, tag, at = 0, n = 0;
		if (varint_next(id, len, &pos, &tag) != 0 ||
		    (tag >> 3) < 1 || (tag >> 3) > (1u << 29) - 1 ||
		    skip_value(id, len, &pos, tag & 7, &at, &n) != 0) {
			out->problem = AC_ID_UNPARSABLE;
			out->offset = start;
			return;
		}
		if ((tag >> 3) != IDENTITY_PHASE_FIELD)
			continue;
		if ((tag & 7) != 2) {
			if (!wrong_type)
				out->offset = start;
			wrong_type = 1;
			continue;
		}
		seen = 1;
		out->payload = id + at;
		out->len = n;
	}
	if (wrong_type)
		out->problem = AC_ID_FIELD51_WIRE_TYPE;
	else if (!seen)
		out->problem = AC_ID_NO_FIELD51;
}

unsigned aci_identity_field51_header(uint8_t *dst, uint64_t len)
{
	if (dst)
		memcpy(dst, FIELD51_TAG, sizeof(FIELD51_TAG));
	return sizeof(FIELD51_TAG) +
	       aci_varint_put(dst ? dst + sizeof(FIELD51_TAG) : NULL, len);
}

int aci_identity_field51_only(const uint8_t *id, uint64_t len,
			      const uint8_t **payload, uint64_t *payload_len)
{
	uint64_t at = sizeof(FIELD51_TAG), n;
	if (len < at || memcmp(id, FIELD51_TAG, at) != 0 ||
	    aci_varint_read(id, len, &at, &n) != 0 ||
	    aci_varint_put(NULL, n) != at - sizeof(FIELD51_TAG) || n != len - at)
		return 0;
	*payload = id + at;
	*payload_len = n;
	return 1;
}

struct byte_probe {
	const uint8_t *data;
	uint64_t len;
};

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t load32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Whether a[0, a_len) and b[0, b_len) are the same bytes.  Identities are
 * mostly 4 to 32 bytes (a kernel's name and its phase's): those are
 * compared as two or four overlapping words, which read only bytes inside
 * both, instead of in a call to memcmp; every launch's identity is
 * compared at least once.
 */
static inline int bytes_equal(const uint8_t *a, uint64_t a_len,
			      const uint8_t *b, uint64_t b_len)
{
	if (a_len != b_len)
		return 0;
	uint64_t n = a_len;
	if (n >= 8 && n <= 16)
		return ((load64(a) ^ load64(b)) |
			(load64(a + n - 8) ^ load64(b + n - 8))) == 0;
	if (n > 16 && n <= 32)
		return ((load64(a) ^ load64(b)) |
			(load64(a + 8) ^ load64(b + 8)) |
			(load64(a + n - 16) ^ load64(b + n - 16)) |
			(load64(a + n - 8) ^ load64(b + n - 8))) == 0;
	if (n >= 4 && n < 8)
		return ((load32(a) ^ load32(b)) |
			(load32(a + n - 4) ^ load32(b + n - 4))) == 0;
	return n == 0 || memcmp(a, b, n) == 0;
}

static int identity_equals(const void *ctx, uint32_t id, const void *probe)
{
	const struct ac_model *m = ctx;
	const struct byte_probe *b = probe;
	const struct ac_bytes *have = &m->phases[id].identity;
	return bytes_equal(have->data, have->len, b->data, b->len);
}

int aci_phase_table_build(const struct ac_model *m, struct hash_index *h,
			  uint32_t *first, uint32_t *dup)
{
	if (aci_hash_index_init(h, m->n_phases) != 0)
		return -1;
	for (uint32_t p = 0; p < m->n_phases; p++) {
		const struct ac_bytes *id = &m->phases[p].identity;
		struct byte_probe b = { id->data, id->len };
		uint32_t got = aci_hash_index_intern(h, XXH3_64bits(b.data, b.len),
						     p, identity_equals, m, &b);
		if (got != p) {
			*first = got;
			*dup = p;
			return 1;
		}
	}
	return 0;
}

uint32_t aci_phase_table_find(const struct hash_index *h, const struct ac_model *m,
			      const uint8_t *bytes, uint64_t len)
{
	struct byte_probe b = { bytes, len };
	return aci_hash_index_find(h, XXH3_64bits(bytes, len), identity_equals, m,
				   &b);
}

/*
 * Launches whose identities were parsed, by a hash of their bytes, for
 * the launches whose bytes are not those a period back (decode: 80
 * layers' kernels a token; adjoint's nodes): a hash_index's slots used as a
 * direct-mapped cache, where a slot keeps the last launch whose bytes
 * hash to it.  Sized by the launches (so that a small program does not
 * pay for it), up to SEEN_LAUNCHES of them (8192 slots).  A collision
 * only costs a parse (the slot is compared byte for byte), so its hash
 * need not resist an adversary: aci_identity_seen_hash.
 */
#define SEEN_LAUNCHES 4096

/*
 * The field 51 payload parsed last and its phase: consecutive distinct
 * identities (a layer's or a node's kernels) mostly name one phase, and
 * comparing the payload with the last one's costs less than its XXH3 and
 * the phase table's probe.  Exact: equal payloads are one phase.
 */
struct last_payload {
	const uint8_t *bytes;        /* NULL: none yet */
	uint64_t len;
	uint32_t phase;
};

/* The phase whose identity is the payload [bytes, bytes + len), from
 * *last when it is the same bytes, else from the phase table; it
 * becomes *last.  *probed counts the table's probes (the tests pin it). */
static uint32_t phase_of_payload(const struct hash_index *h,
				 const struct ac_model *m,
				 struct last_payload *last,
				 const uint8_t *bytes, uint64_t len,
				 uint64_t *probed)
{
	if (last->bytes && bytes_equal(bytes, len, last->bytes, last->len))
		return last->phase;
	(*probed)++;
	uint32_t phase = aci_phase_table_find(h, m, bytes, len);
	*last = (struct last_payload){ bytes, len, phase };
	return phase;
}

/* Launch l's phase, from the last launch before it with the same bytes
 * (*same: that launch, or l when there is none) or by parsing them; l
 * becomes the launch its slot of seen remembers. */
static uint32_t phase_of_new_bytes(const struct ac_model *m,
				   const struct hash_index *h,
				   const struct hash_index *seen,
				   const uint32_t *phase_of, uint32_t l,
				   struct last_payload *last, uint64_t *probed,
				   uint32_t *same)
{
	const struct ac_bytes *b = &m->launches[l].identity;
	uint32_t *slot = &seen->slots[aci_identity_seen_hash(b->data, b->len) & seen->mask];
	uint32_t was = *slot;
	*slot = l;
	if (was != HASH_INDEX_EMPTY) {
		const struct ac_bytes *x = &m->launches[was].identity;
		if (bytes_equal(b->data, b->len, x->data, x->len)) {
			*same = was;
			return phase_of[was];
		}
	}
	*same = l;
	struct identity_field51 id;
	aci_identity_parse(b->data, b->len, &id);
	if (id.problem != AC_ID_OK)
		return NO_PHASE;
	return phase_of_payload(h, m, last, id.payload, id.len, probed);
}

int aci_phases_of_launches(const struct ac_model *m, const struct hash_index *h,
			   uint32_t *phase_of, struct aci_phase_counts *counts)
{
	struct hash_index seen;
	if (aci_hash_index_init(&seen, m->n_launches < SEEN_LAUNCHES ?
				m->n_launches : SEEN_LAUNCHES) != 0)
		return -1;
	/* First the launch `period` back, where the last launch found its
	 * bytes (a run of one kernel: 1; a layer's kernels in turn: their
	 * number; a decode step's: the step's), then the cache. */
	uint32_t period = 1;
	uint64_t cached = 0, probed = 0;
	struct last_payload last = { NULL, 0, 0 };
	const struct ac_launch *launches = m->launches;
	for (uint32_t l = 0; l < m->n_launches; l++) {
		const struct ac_bytes *b = &launches[l].identity;
		if (l >= period) {
			const struct ac_bytes *g = &launches[l - period].identity;
			if (bytes_equal(b->data, b->len, g->data, g->len)) {
				phase_of[l] = phase_of[l - period];
				continue;
			}
		}
		uint32_t same;
		cached++;
		phase_of[l] = phase_of_new_bytes(m, h, &seen, phase_of, l,
						 &last, &probed, &same);
		if (same != l)
			period = l - same;
	}
	aci_hash_index_free(&seen);
	if (counts)
		*counts = (struct aci_phase_counts){ cached, probed };
	return 0;
}
