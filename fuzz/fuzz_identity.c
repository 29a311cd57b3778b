/* SPDX-License-Identifier: MIT */
/*
 * The source-identity parser (spec 1.2) on arbitrary bytes, checked
 * against a reference parser written here from the spec's words alone.
 *
 * The model: two phases without planes, "P" and "" (the empty identity
 * is a phase like any other), and one launch without words whose source
 * identity is the input, scheduled once.  Nothing can fail but the
 * launch's phase, so the verdict is 0 when it declares one and 2
 * (launch 0 breaks (C)) when it does not.
 */
#include "fuzz.h"

/* The reference.  A varint is up to 10 bytes; its 10th byte may only
 * carry bit 63, so it is 0 or 1 (anything else is >= 2^64 or an 11th
 * byte).  Returns 0 and advances *at, or -1. */
static int ref_varint(const uint8_t *p, size_t n, size_t *at, uint64_t *value)
{
	size_t k = 0;                   /* bytes with the continuation bit */
	while (k < 10 && *at + k < n && (p[*at + k] & 0x80))
		k++;
	if (k == 10 || *at + k >= n)
		return -1;
	if (k == 9 && p[*at + 9] > 1)
		return -1;
	uint64_t v = 0;
	for (size_t j = k + 1; j-- > 0;)
		v = (v << 7) | (p[*at + j] & 0x7f);
	*at += k + 1;
	*value = v;
	return 0;
}

struct ref_phase {
	enum ac_identity_problem problem;
	size_t offset;                  /* field where it went wrong */
	uint64_t phase;                 /* 0 "P", 1 "", or AC_NONE */
};

static struct ref_phase ref_parse(const uint8_t *p, size_t n)
{
	struct ref_phase r = { AC_ID_OK, 0, AC_NONE };
	const uint8_t *last = NULL;     /* payload of the last field 51 */
	size_t last_len = 0, wrong_at = 0;
	int seen = 0, wrong = 0;

	for (size_t at = 0; at < n;) {
		size_t field = at;
		uint64_t tag, len;
		if (ref_varint(p, n, &at, &tag) != 0 || tag >> 3 == 0 ||
		    tag >> 3 >= ((uint64_t)1 << 29))
			return (struct ref_phase){ AC_ID_UNPARSABLE, field, AC_NONE };
		switch (tag & 7) {
		case 0:
			if (ref_varint(p, n, &at, &len) != 0)
				return (struct ref_phase){ AC_ID_UNPARSABLE, field, AC_NONE };
			len = 0;
			break;
		case 1: len = 8; break;
		case 5: len = 4; break;
		case 2:
			if (ref_varint(p, n, &at, &len) != 0)
				return (struct ref_phase){ AC_ID_UNPARSABLE, field, AC_NONE };
			break;
		default:
			return (struct ref_phase){ AC_ID_UNPARSABLE, field, AC_NONE };
		}
		if (len > n - at)
			return (struct ref_phase){ AC_ID_UNPARSABLE, field, AC_NONE };
		if (tag >> 3 == 51 && (tag & 7) == 2) {
			seen = 1;
			last = p + at;
			last_len = len;
		} else if (tag >> 3 == 51 && !wrong) {
			wrong = 1;
			wrong_at = field;
		}
		at += len;
	}
	if (wrong)
		return (struct ref_phase){ AC_ID_FIELD51_WIRE_TYPE, wrong_at, AC_NONE };
	if (!seen)
		return (struct ref_phase){ AC_ID_NO_FIELD51, 0, AC_NONE };
	if (last_len == 1 && last[0] == 'P')
		r.phase = 0;
	else if (last_len == 0)
		r.phase = 1;
	else
		r.problem = AC_ID_UNKNOWN_PHASE;
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > UINT32_MAX)
		return 0;
	const struct ac_phase phases[] = {
		{ { (const uint8_t *)"P", 1 }, 0, 0 },
		{ { NULL, 0 }, 0, 0 },
	};
	/* the launch points straight at libFuzzer's exact-size buffer, so
	 * ASan sees any read past the identity */
	const struct ac_launch launch = { { data, (uint32_t)size }, 0, 0, 0 };
	const struct ac_ref ref = { 0, 1 };
	/* planes stays NULL, as a hand-built model says "none" (this once
	 * found NULL + 0 in layout.c: docs/reliability.md) */
	const struct ac_model m = {
		.alignment = 64,
		.n_phases = 2, .phases = phases,
		.n_launches = 1, .launches = &launch,
		.n_refs = 1, .refs = &ref,
	};

	struct ref_phase want = ref_parse(data, size);
	struct fuzz_outcome got;
	fuzz_certify(&m, &got);
	FUZZ_CHECK(got.rc == 0, "no verdict: %s", got.error);
	FUZZ_CHECK(got.verdict == (want.phase == AC_NONE ? 2 : 0),
		   "verdict %llu, reference phase %llu (problem %d)",
		   (unsigned long long)got.verdict,
		   (unsigned long long)want.phase, (int)want.problem);

	struct ac_error err;
	ac_program *p = ac_program_new(&m, &err);
	FUZZ_CHECK(p, "ac_program_new: %s", err.message);
	FUZZ_CHECK(ac_program_launch_phase(p, 0) == want.phase,
		   "launch phase %llu, reference %llu",
		   (unsigned long long)ac_program_launch_phase(p, 0),
		   (unsigned long long)want.phase);
	ac_program_free(p);

	if (got.verdict == 2) {
		FUZZ_CHECK(got.diag.reason == AC_LAUNCH_NO_PHASE, "reason %d",
			   (int)got.diag.reason);
		FUZZ_CHECK(got.diag.identity_problem == want.problem,
			   "identity problem %s, reference %s",
			   ac_identity_problem_name(got.diag.identity_problem),
			   ac_identity_problem_name(want.problem));
		/* only these two problems name a byte */
		if (want.problem == AC_ID_UNPARSABLE ||
		    want.problem == AC_ID_FIELD51_WIRE_TYPE)
			FUZZ_CHECK(got.diag.identity_offset == want.offset,
				   "identity offset %llu, reference %zu",
				   (unsigned long long)got.diag.identity_offset,
				   want.offset);
	}
	return 0;
}
