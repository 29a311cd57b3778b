/* SPDX-License-Identifier: MIT */
/* The phase a launch declares in its source identity (spec 1.2). */
#ifndef ARENACERT_IDENTITY_H
#define ARENACERT_IDENTITY_H

#include <stdint.h>

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

/* Every launch's phase (NO_PHASE when it has no declared phase) for a
 * model whose phase identities are distinct.  -1 on out-of-memory. */
int aci_phases_of_launches(const struct ac_model *m, uint32_t *phase_of);

#endif
