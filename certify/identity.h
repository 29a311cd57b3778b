/* SPDX-License-Identifier: MIT */
/* The phase a launch declares in its source identity (spec 1.2). */
#ifndef ARENACERT_IDENTITY_H
#define ARENACERT_IDENTITY_H

#include <stdint.h>
#include <string.h>
#include <xxhash.h>

#include <arenaguard/certify.h>

/* Protobuf field 51, deviceArenaPhaseIdentity. */
#define IDENTITY_PHASE_FIELD 51
#define NO_PHASE UINT32_MAX

struct identity_field51 {
	enum ac_identity_problem problem; /* AC_ID_OK or why there is none */
	uint64_t offset;                  /* where parsing failed */
	const uint8_t *payload;           /* last field 51's bytes */
	uint64_t len;
};

/* Protobuf varints, the one codec: aci_varint_put writes v minimally into
 * dst (NULL: only counts) and returns its bytes (1 to 10); aci_varint_read
 * reads one at *pos of p[0..len) (at most 10 bytes, value below 2^64),
 * advancing *pos: 0, or -1 when truncated or too long. */
unsigned aci_varint_put(uint8_t *dst, uint64_t v);
int aci_varint_read(const uint8_t *p, uint64_t len, uint64_t *pos,
		    uint64_t *value);

/* The canonical identity of a phase whose field 51 holds `len` bytes: the
 * message holding only field 51 (tag 0x9A 0x03, the length as a minimal
 * varint, the payload).  aci_identity_field51_header writes its bytes before
 * the payload into dst (NULL: only counts) and returns how many. */
unsigned aci_identity_field51_header(uint8_t *dst, uint64_t len);

/* Whether id is exactly a canonical field-51 message; then its payload. */
int aci_identity_field51_only(const uint8_t *id, uint64_t len,
			      const uint8_t **payload, uint64_t *payload_len);

/*
 * Parses a source identity.  problem is AC_ID_OK when the identity parses
 * and its last field 51 is length-delimited; the caller then looks the
 * payload up among the plan's phases (AC_ID_UNKNOWN_PHASE if absent).
 */
void aci_identity_parse(const uint8_t *id, uint64_t len,
			struct identity_field51 *out);


#include "hash_index.h"

/*
 * The plan's phases indexed by identity.  Returns 0, or 1 when two phases
 * share an identity (*dup = the later one, *first = the earlier), or -1 on
 * out-of-memory.
 */
int aci_phase_table_build(const struct ac_model *m, struct hash_index *h,
			  uint32_t *first, uint32_t *dup);

/* The phase whose identity is these bytes, or HASH_INDEX_EMPTY. */
uint32_t aci_phase_table_find(const struct hash_index *h, const struct ac_model *m,
			      const uint8_t *bytes, uint64_t len);

/*
 * The hash of a launch identity's bytes that picks its slot in
 * aci_phases_of_launches' cache of parsed identities, where a collision
 * only costs a parse (a slot is compared byte for byte), so it need not
 * resist an adversary: identities of up to 32 bytes (a kernel's name and
 * its phase's) mixed from their first and last words, inline, so that a
 * launch's first sight costs one XXH3 (its payload's, for the phase
 * table) and not two; longer ones by XXH3.
 */
static inline uint64_t aci_identity_seen_hash(const uint8_t *p, uint64_t n)
{
	uint64_t w[4] = { 0, 0, 0, 0 };
	if (n > 32)
		return XXH3_64bits(p, n);
	if (n > 16) {
		memcpy(&w[0], p, 16);
		memcpy(&w[2], p + n - 16, 16);
	} else if (n >= 8) {
		memcpy(&w[0], p, 8);
		memcpy(&w[2], p + n - 8, 8);
	} else if (n >= 4) {
		memcpy(&w[0], p, 4);
		memcpy(&w[2], p + n - 4, 4);
	} else if (n) {
		w[0] = (uint64_t)p[0] << 16 | (uint64_t)p[n / 2] << 8 | p[n - 1];
	}
	uint64_t a = w[0] ^ (w[1] * 0x9e3779b97f4a7c15ull);
	uint64_t b = w[2] ^ (w[3] * 0xc2b2ae3d27d4eb4full);
	uint64_t h = (a ^ (b * 0xff51afd7ed558ccdull) ^ n) *
		     0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

/* What aci_phases_of_launches did, for the tests to pin. */
struct aci_phase_counts {
	uint64_t looked_up;   /* launches looked up in the cache of parsed
			       * identities, not found the period back */
	uint64_t probed;      /* payloads looked up in the phase table, not
			       * the same bytes as the payload parsed last */
};

/*
 * Every launch's phase (NO_PHASE when it has no declared phase) for a
 * model whose phase identities are distinct; h: its phase table
 * (aci_phase_table_build, built once by the validation and shared, read
 * only, by every chunk of launches).  *counts (when not NULL): what it
 * looked up.  0, or -1 on out-of-memory.
 */
int aci_phases_of_launches(const struct ac_model *m, const struct hash_index *h,
			   uint32_t *phase_of, struct aci_phase_counts *counts);

#endif
