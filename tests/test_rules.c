/* SPDX-License-Identifier: MIT */
/*
 * Every rule of the certificate at its boundary.  Programs are JSON text
 * over the plan of the spec's worked examples (section 5); where a small
 * version of a program can be unrolled, the naive checker confirms the
 * expected number too, so the large version's number is not taken on
 * faith.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "certify/identity.h"
#include "naive.h"
#include "suites.h"
#include "util.h"

/* The spec's example plan: window [0x1000, 0x2000), global w, phases P
 * (fresh a), Q (carried a, fresh b), R (fresh z over a's bytes). */
#define PLAN_PQR \
	"\"alignment\": 64," \
	"\"windows\": [{\"name\": \"arena0\", \"base\": \"0x1000\", \"size\": \"0x1000\"}]," \
	"\"globals\": [{\"name\": \"w\", \"offset\": \"0x1000\", \"size\": 256}]," \
	"\"phases\": [" \
	" {\"identity\": \"P\", \"planes\": [{\"name\": \"a\", \"offset\": \"0x1400\", \"size\": 256, \"carried\": false}]}," \
	" {\"identity\": \"Q\", \"planes\": [{\"name\": \"a\", \"offset\": \"0x1400\", \"size\": 256, \"carried\": true}," \
	"                                 {\"name\": \"b\", \"offset\": \"0x1500\", \"size\": 256, \"carried\": false}]}," \
	" {\"identity\": \"R\", \"planes\": [{\"name\": \"z\", \"offset\": \"0x1400\", \"size\": 64, \"carried\": false}]}]"

/* Launches 0: P, 1: Q, 2: R, with no words. */
#define LAUNCHES_PQR \
	"\"launches\": [{\"phase\": \"P\"}, {\"phase\": \"Q\"}, {\"phase\": \"R\"}]"

static char *program(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *program(const char *fmt, ...)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	va_list ap;
	va_start(ap, fmt);
	fputc('{', f);
	vfprintf(f, fmt, ap);
	fputc('}', f);
	va_end(ap);
	fclose(f);
	return text;
}

/* The library's verdict, which must agree with the naive checker's when
 * the naive one can unroll the program. */
static uint64_t verdict_of(char *json)
{
	struct ac_error err;
	char text[512];
	struct ac_model *m = util_model_json(json);
	uint64_t v = util_verdict_model(m, &err);
	ck_assert_msg(v != AC_NONE, "malformed: %s",
		      ac_error_text(&err, text, sizeof(text)));
	uint64_t naive;
	int rc = naive_certify(m, &naive);
	if (rc != NAIVE_TOO_BIG) {
		ck_assert_int_eq(rc, 0);
		ck_assert_msg(naive == v, "library %" PRIu64 ", naive %" PRIu64,
			      v, naive);
	}
	ac_model_free(m);
	free(json);
	return v;
}

/* ---- spec 1.2: the phase of a launch ------------------------------ */

/* One launch with raw identity bytes, whose word 0x1400 lies only in P's
 * plane a: verdict 0 iff the identity declares phase P. */
static uint64_t identity_verdict(const char *hex)
{
	return verdict_of(program(PLAN_PQR ", \"launches\": [{\"identity_hex\": "
				  "\"%s\", \"words\": [\"0x1400\"]}]", hex));
}

START_TEST(identity_canonical_and_unknown_fields)
{
	ck_assert_uint_eq(identity_verdict("9a030150"), 0);
	/* varint, fixed64, fixed32 and bytes fields around field 51 */
	ck_assert_uint_eq(identity_verdict("0801" "9a030150" "110102030405060708"
					   "1d01020304" "2202aabb"), 0);
	/* non-minimal length varint: still length 1 */
	ck_assert_uint_eq(identity_verdict("9a03810050"), 0);
	/* field 51 names Q: 0x1400 is Q's carried plane a, still named */
	ck_assert_uint_eq(identity_verdict("9a030151"), 0);
	/* field 51 names nothing in the plan */
	ck_assert_uint_eq(identity_verdict("9a030158"), 2);
	ck_assert_uint_eq(identity_verdict("9a0300"), 2);
	/* no field 51, empty identity */
	ck_assert_uint_eq(identity_verdict("0801"), 2);
	ck_assert_uint_eq(identity_verdict(""), 2);
}
END_TEST

START_TEST(identity_last_occurrence_wins)
{
	/* R's z is [0x1400, 0x1440): a word at 0x1480 is named in P only */
	const char *fmt = PLAN_PQR ", \"launches\": [{\"identity_hex\": \"%s\", "
			  "\"words\": [\"0x1480\"]}]";
	ck_assert_uint_eq(verdict_of(program(fmt, "9a0301529a030150")), 0);
	ck_assert_uint_eq(verdict_of(program(fmt, "9a0301509a030152")), 2);
}
END_TEST

START_TEST(identity_wire_types)
{
	/* field 51 as a varint anywhere: no declared phase */
	ck_assert_uint_eq(identity_verdict("980301" "9a030150"), 2);
	ck_assert_uint_eq(identity_verdict("9a030150" "980301"), 2);
	/* field 51 as fixed32 */
	ck_assert_uint_eq(identity_verdict("9a030150" "9d0301020304"), 2);
	/* groups (3, 4) and reserved wire types (6, 7) do not parse */
	ck_assert_uint_eq(identity_verdict("0b" "9a030150"), 2);
	ck_assert_uint_eq(identity_verdict("0c" "9a030150"), 2);
	ck_assert_uint_eq(identity_verdict("9a030150" "0e"), 2);
	ck_assert_uint_eq(identity_verdict("9a030150" "0f"), 2);
}
END_TEST

START_TEST(identity_varint_limits)
{
	/* a 10-byte varint of value 2^64 - 1 is fine */
	ck_assert_uint_eq(identity_verdict("08ffffffffffffffffff01" "9a030150"), 0);
	/* 10th byte > 1: the value reaches 2^64 */
	ck_assert_uint_eq(identity_verdict("08ffffffffffffffffff02" "9a030150"), 2);
	/* an 11-byte varint */
	ck_assert_uint_eq(identity_verdict("08ffffffffffffffffff8001" "9a030150"), 2);
	/* a 10-byte varint with trailing zero groups is still below 2^64 */
	ck_assert_uint_eq(identity_verdict("0880808080808080808000" "9a030150"), 0);
	/* field numbers: 0 and 2^29 are out of range, 2^29 - 1 is fine */
	ck_assert_uint_eq(identity_verdict("0201aa" "9a030150"), 2);
	ck_assert_uint_eq(identity_verdict("f8ffffff0f01" "9a030150"), 0);
	ck_assert_uint_eq(identity_verdict("8080808010" "01" "9a030150"), 2);
	/* two-byte lengths (128 = 80 01): the bytes there, or one short */
	char hex[2 * 140];
	memset(hex, 'a', sizeof(hex));
	memcpy(hex, "228001", 6);
	strcpy(hex + 6 + 2 * 128, "9a030150");
	ck_assert_uint_eq(identity_verdict(hex), 0);
	strcpy(hex + 6 + 2 * 127, "9a030150");
	ck_assert_uint_eq(identity_verdict(hex), 2);
}
END_TEST

START_TEST(identity_truncation)
{
	ck_assert_uint_eq(identity_verdict("9a"), 2);          /* tag cut */
	ck_assert_uint_eq(identity_verdict("9a03"), 2);        /* no length */
	ck_assert_uint_eq(identity_verdict("9a0302" "50"), 2); /* payload cut */
	ck_assert_uint_eq(identity_verdict("9a030150" "08"), 2);
	ck_assert_uint_eq(identity_verdict("9a030150" "0980"), 2);
	ck_assert_uint_eq(identity_verdict("9a030150" "11010203"), 2);
	ck_assert_uint_eq(identity_verdict("9a030150" "9a03ff"), 2);
	/* a length past the end, even if huge */
	ck_assert_uint_eq(identity_verdict("9a03ffffffffffffffffff01"), 2);
}
END_TEST

/*
 * aci_identity_parse's answer for id (a kernel's name then field 51, the
 * shape it takes without walking) is the walk's: the same identity after
 * a field 1 varint of 0 (08 00, a shape it walks) gives the same problem
 * and payload, two bytes on.  Every one-byte change and every cut of a
 * name-then-phase identity, and its lengths off by one.
 */
static void parse_as_walked(const uint8_t *id, size_t len)
{
	uint8_t walked[64] = { 0x08, 0x00 };
	ck_assert_uint_le(len + 2, sizeof(walked));
	memcpy(walked + 2, id, len);
	struct identity_field51 a, b;
	aci_identity_parse(id, len, &a);
	aci_identity_parse(walked, len + 2, &b);
	ck_assert_int_eq(a.problem, b.problem);
	if (a.problem == AC_ID_OK) {
		ck_assert_uint_eq(a.len, b.len);
		ck_assert_uint_eq((uint64_t)(a.payload - id) + 2,
				  (uint64_t)(b.payload - walked));
	} else if (a.problem != AC_ID_NO_FIELD51) {
		ck_assert_uint_eq(a.offset + 2, b.offset);  /* where it failed */
	}
}

START_TEST(identity_name_then_phase_as_walked)
{
	/* field 1 "add", field 51 "fwd.0" */
	const uint8_t base[] = { 0x0a, 0x03, 'a', 'd', 'd', 0x9a, 0x03, 0x05,
				 'f', 'w', 'd', '.', '0' };
	uint8_t id[sizeof(base)];
	for (size_t cut = 0; cut <= sizeof(base); cut++)
		parse_as_walked(base, cut);
	for (size_t i = 0; i < sizeof(base); i++)
		for (unsigned v = 0; v < 256; v++) {
			memcpy(id, base, sizeof(base));
			id[i] = (uint8_t)v;
			parse_as_walked(id, sizeof(base));
		}
	/* an empty payload, and field 51 twice (the last one counts) */
	const uint8_t empty[] = { 0x12, 0x00, 0x9a, 0x03, 0x00 };
	parse_as_walked(empty, sizeof(empty));
	const uint8_t twice[] = { 0x9a, 0x03, 0x01, 'P', 0x9a, 0x03, 0x01, 'Q' };
	parse_as_walked(twice, sizeof(twice));
}
END_TEST

/* An identity naming phase P, Q or R after an unknown field 1 of two
 * bytes c (different bytes, same phase), as hex into hex[17]. */
static void variant_hex(char *hex, unsigned c, char phase)
{
	snprintf(hex, 17, "0a02%04x9a0301%02x", c & 0xffff, (unsigned)phase);
}

/* The slot of a variant in a direct-mapped cache of 4096 slots by
 * aci_identity_seen_hash of its bytes, like aci_phases_of_launches' cache
 * of parsed identities: two variants in one such slot share a slot of any
 * smaller cache too (this program's has 64). */
static unsigned variant_slot(unsigned c, char phase)
{
	uint8_t b[8] = { 0x0a, 0x02, (uint8_t)(c >> 8), (uint8_t)c, 0x9a,
			 0x03, 0x01, (uint8_t)phase };
	return (unsigned)(aci_identity_seen_hash(b, sizeof(b)) & 4095);
}

/*
 * Launches cycle through more identities than one period, and two of
 * them (A of P, B of Q) share a slot of the cache of parsed identities:
 * each launch still gets its own phase.
 */
START_TEST(identity_cycles_and_collisions)
{
	int owner[4096];
	for (unsigned k = 0; k < 4096; k++)
		owner[k] = -1;
	unsigned a = 0, b = 0;
	for (unsigned c = 0; c < 8192; c++)
		if (owner[variant_slot(c, 'P')] < 0)
			owner[variant_slot(c, 'P')] = (int)c;
	while (owner[variant_slot(b, 'Q')] < 0)
		b++;
	a = (unsigned)owner[variant_slot(b, 'Q')];
	/* A, six R fillers, B, A, the fillers, B, no phase, A */
	char hex[17];
	const uint64_t P = 0, Q = 1, R = 2;
	uint64_t want[32];
	unsigned n = 0;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	fprintf(f, "{" PLAN_PQR ", \"launches\": [");
#define LAUNCH(c, ph, w) do { variant_hex(hex, (c), (ph)); \
	fprintf(f, "%s{\"identity_hex\": \"%s\"}", n ? "," : "", hex); \
	want[n++] = (w); } while (0)
	for (int round = 0; round < 2; round++) {
		LAUNCH(a, 'P', P);
		for (unsigned e = 0; e < 6; e++)
			LAUNCH(10000 + e, 'R', R);
		LAUNCH(b, 'Q', Q);
	}
	LAUNCH(a, 'X', AC_NONE);   /* phase "X" is not in the plan */
	LAUNCH(a, 'P', P);
#undef LAUNCH
	fprintf(f, "]}");
	fclose(f);
	struct ac_model *m = NULL;
	struct ac_error err;
	ck_assert_int_eq(ac_model_read_json(text, len, &m, &err), 0);
	ac_program *p = ac_program_new(m, &err);
	ck_assert_ptr_nonnull(p);
	for (unsigned l = 0; l < n; l++)
		ck_assert_msg(ac_program_launch_phase(p, l) == want[l],
			      "launch %u: phase %" PRIu64 ", want %" PRIu64
			      " (A %u, B %u)", l, ac_program_launch_phase(p, l),
			      want[l], a, b);
	ac_program_free(p);
	ac_model_free(m);
	free(text);
}
END_TEST

/*
 * Rounds of K distinct identities, T rounds; identity k names phase
 * k % 3 (run 1: P, Q, R in turn, a decode step's) or k / run (runs of
 * one phase, a layer's kernels).  Each is looked up in the cache of
 * parsed identities at its first sight (K), and the first launch of
 * the second round once more: it finds its bytes K launches back, and
 * every later launch finds its own there, without a hash (97c4a30,
 * which also compared the last four launches parsed, looked every
 * launch up: K * T).  A parsed payload is looked up in the phase table
 * only when it is not the one parsed just before (2fc1b58 probed every
 * parsed identity: K).  The phases are those of ac_program_new, which
 * reads the same table.
 */
static const struct {
	unsigned k, t, run;
	uint64_t probed;
} identity_rounds[] = {
	{ 12, 10, 1, 12 },     /* phases in turn: each payload differs */
	{ 12, 5, 4, 3 },       /* runs of 4: one probe a run */
};

static unsigned round_phase(unsigned k, unsigned run)
{
	return run == 1 ? k % 3 : k / run;
}

START_TEST(identity_rounds_looked_up)
{
	const unsigned K = identity_rounds[_i].k, T = identity_rounds[_i].t;
	const unsigned run = identity_rounds[_i].run;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	fprintf(f, "{" PLAN_PQR ", \"launches\": [");
	for (unsigned t = 0; t < T; t++)
		for (unsigned k = 0; k < K; k++) {
			char hex[17];
			variant_hex(hex, 100 + k,
				    (char)('P' + round_phase(k, run)));
			fprintf(f, "%s{\"identity_hex\": \"%s\"}",
				t || k ? "," : "", hex);
		}
	fprintf(f, "]}");
	fclose(f);
	struct ac_model *m = NULL;
	struct ac_error err;
	ck_assert_int_eq(ac_model_read_json(text, len, &m, &err), 0);
	struct hash_index h;
	uint32_t first, dup, *phase_of = calloc((size_t)K * T, sizeof(*phase_of));
	ck_assert_ptr_nonnull(phase_of);
	ck_assert_int_eq(aci_phase_table_build(m, &h, &first, &dup), 0);
	struct aci_phase_counts counts;
	ck_assert_int_eq(aci_phases_of_launches(m, &h, phase_of, &counts), 0);
	aci_hash_index_free(&h);
	ck_assert_uint_eq(counts.looked_up, K + 1);
	ck_assert_uint_eq(counts.probed, identity_rounds[_i].probed);
	ac_program *p = ac_program_new(m, &err);
	ck_assert_ptr_nonnull(p);
	for (unsigned l = 0; l < K * T; l++) {
		ck_assert_uint_eq(phase_of[l], round_phase(l % K, run));
		ck_assert_uint_eq(ac_program_launch_phase(p, l),
				  round_phase(l % K, run));
	}
	ac_program_free(p);
	ac_model_free(m);
	free(phase_of);
	free(text);
}
END_TEST

/* ---- spec 2 (C): intervals of words in repeats --------------------- */

/* A single launch of phase P with word x in a repeat of n iterations and
 * the given deltas/table JSON; the window [0x1000, 0x2000) holds no
 * address of a multiple of 0x2000, so per-iteration points at 0, 0x2000,
 * 0x4000, ... are fine while their hull meets the window. */
static uint64_t repeat_verdict(const char *x, uint64_t n, const char *extra)
{
	return verdict_of(program(PLAN_PQR ", \"launches\": [{\"phase\": \"P\", "
				  "\"words\": [\"%s\"]}], \"repeats\": [{\"first\": 0,"
				  " \"count\": 1, \"iterations\": %" PRIu64 "%s}],"
				  " \"schedule\": [{\"first\": 0, \"count\": 1}]",
				  x, n, extra));
}

START_TEST(points_up_to_128_then_hull)
{
	const char *one = ", \"deltas\": [{\"launch\": 0, \"word\": 0, \"delta\": 8192}]";
	ck_assert_uint_eq(repeat_verdict("0", 128, one), 0);
	ck_assert_uint_eq(repeat_verdict("0", 129, one), 2);
	/* two entries naming the word (same sum): hull even at N = 2 */
	const char *two = ", \"deltas\": [{\"launch\": 0, \"word\": 0, \"delta\": 4096},"
			  " {\"launch\": 0, \"word\": 0, \"delta\": 4096}]";
	ck_assert_uint_eq(repeat_verdict("0", 2, two), 2);
	/* one delta and a slot: hull */
	const char *slot = ", \"deltas\": [{\"launch\": 0, \"word\": 0, \"delta\": 8192}],"
			   " \"table\": {\"slots\": [{\"launch\": 0, \"word\": 0}],"
			   " \"frames\": [[\"0\"]]}";
	ck_assert_uint_eq(repeat_verdict("0", 2, slot), 2);
	/* N > 128 with delta 0: the hull is the point (spec example 7) */
	ck_assert_uint_eq(repeat_verdict("0x1400", 200,
		", \"deltas\": [{\"launch\": 0, \"word\": 0, \"delta\": 0}]"), 0);
}
END_TEST

START_TEST(values_leaving_the_64_bit_range)
{
	const char *up = ", \"deltas\": [{\"launch\": 0, \"word\": 0, \"delta\": 1}]";
	const char *down = ", \"deltas\": [{\"launch\": 0, \"word\": 0, \"delta\": -1}]";
	ck_assert_uint_eq(repeat_verdict("0xfffffffffffffffe", 2, up), 0);
	ck_assert_uint_eq(repeat_verdict("0xffffffffffffffff", 2, up), 2);
	ck_assert_uint_eq(repeat_verdict("1", 2, down), 0);
	ck_assert_uint_eq(repeat_verdict("0", 2, down), 2);
	ck_assert_uint_eq(repeat_verdict("0", 300, down), 2);   /* hull */
	/* extreme deltas: still exact, still outside */
	ck_assert_uint_eq(repeat_verdict("0xffffffffffffffff", 4294967295,
		", \"deltas\": [{\"launch\": 0, \"word\": 0, \"delta\": \"9223372036854775807\"},"
		" {\"launch\": 0, \"word\": 0, \"delta\": \"9223372036854775807\"}]"), 2);
	/* a value leaving the range fails even with no window at all */
	ck_assert_uint_eq(verdict_of(program("\"alignment\": 1, \"phases\": "
		"[{\"identity\": \"P\"}], \"launches\": [{\"phase\": \"P\", "
		"\"words\": [\"0xffffffffffffffff\"]}], \"repeats\": [{\"first\": 0,"
		" \"count\": 1, \"iterations\": 2, \"deltas\": [{\"launch\": 0, "
		"\"word\": 0, \"delta\": 1}]}]")), 2);
	ck_assert_uint_eq(verdict_of(program("\"alignment\": 1, \"phases\": "
		"[{\"identity\": \"P\"}], \"launches\": [{\"phase\": \"P\", "
		"\"words\": [\"0xffffffffffffffff\"]}], \"repeats\": [{\"first\": 0,"
		" \"count\": 1, \"iterations\": 1, \"deltas\": [{\"launch\": 0, "
		"\"word\": 0, \"delta\": 1}]}]")), 0);
}
END_TEST

START_TEST(frames_used_and_unused)
{
	/* frame 2 (unnamed 0x1800) is used only from the third iteration */
	const char *table = ", \"table\": {\"slots\": [{\"launch\": 0, \"word\": 0}],"
			    " \"frames\": [[\"0x1400\"], [\"0x1440\"], [\"0x1800\"]]}";
	ck_assert_uint_eq(repeat_verdict("0", 2, table), 0);
	ck_assert_uint_eq(repeat_verdict("0", 3, table), 2);
	/* residue classes: F = 2 with delta 0x40; V(4) = f0 + 0x100 leaves a */
	const char *motion = ", \"deltas\": [{\"launch\": 0, \"word\": 0, \"delta\": 64}],"
			     " \"table\": {\"slots\": [{\"launch\": 0, \"word\": 0}],"
			     " \"frames\": [[\"0x1400\"], [\"0x1400\"]]}";
	ck_assert_uint_eq(repeat_verdict("0", 4, motion), 0);
	ck_assert_uint_eq(repeat_verdict("0", 5, motion), 2);
	ck_assert_uint_eq(repeat_verdict("0", 4294967295u, motion), 2);
	/* a slot makes the written value irrelevant */
	ck_assert_uint_eq(repeat_verdict("0x1800", 2,
		", \"table\": {\"slots\": [{\"launch\": 0, \"word\": 0}],"
		" \"frames\": [[\"0x1400\"]]}"), 0);
}
END_TEST

/* ---- spec 2 (D): instances --------------------------------------- */

static uint64_t schedule_verdict(const char *launches, const char *repeats,
				 const char *schedule)
{
	return verdict_of(program(PLAN_PQR ", %s, \"repeats\": [%s], "
				  "\"schedule\": [%s]", launches, repeats,
				  schedule));
}

#define REF(f, c) "{\"first\": " #f ", \"count\": " #c "}"

START_TEST(instances_merge_across_references)
{
	/* P, Q, Q (one instance), R, Q: instance 3 breaks, n = 3 */
	ck_assert_uint_eq(schedule_verdict(LAUNCHES_PQR, "",
		REF(0, 1) "," REF(1, 1) "," REF(1, 1) "," REF(2, 1) "," REF(1, 1)),
		2 + 3 + 3);
	/* P, P (one instance), Q: certified */
	ck_assert_uint_eq(schedule_verdict(LAUNCHES_PQR, "",
		REF(0, 1) "," REF(0, 1) "," REF(1, 1)), 0);
	/* Q re-declaring its carried a after R does not heal it */
	ck_assert_uint_eq(schedule_verdict(LAUNCHES_PQR, "",
		REF(0, 2) "," REF(2, 1) "," REF(1, 1) "," REF(1, 1)), 2 + 3 + 3);
	/* P re-declares a after R: Q is fine again */
	ck_assert_uint_eq(schedule_verdict(LAUNCHES_PQR, "",
		REF(0, 1) "," REF(2, 1) "," REF(0, 2)), 0);
}
END_TEST

/* Launches 0: P, 1: Q, 2: R, 3: Q, 4: P. */
#define LAUNCHES_PQRQP \
	"\"launches\": [{\"phase\": \"P\"}, {\"phase\": \"Q\"}, {\"phase\": \"R\"}," \
	" {\"phase\": \"Q\"}, {\"phase\": \"P\"}]"

static uint64_t body_verdict(uint64_t first, uint64_t count, uint64_t n,
			     const char *schedule)
{
	char repeat[160];
	snprintf(repeat, sizeof(repeat), "{\"first\": %" PRIu64 ", \"count\": %"
		 PRIu64 ", \"iterations\": %" PRIu64 "}", first, count, n);
	return schedule_verdict(LAUNCHES_PQRQP, repeat, schedule);
}

START_TEST(instances_merge_across_iterations)
{
	/* body [P] alone: one instance whatever N; then Q is fine */
	ck_assert_uint_eq(body_verdict(0, 1, 4294967295u, REF(0, 2)), 0);
	/* body [Q, P] after P: Q P Q P ... all fine */
	ck_assert_uint_eq(body_verdict(3, 2, 5, REF(0, 1) "," REF(3, 2)), 0);
	/* body [P, Q] over N iterations, then R, Q: instances 0 .. 2N-1,
	 * R = 2N, the final Q = 2N + 1 breaks; n = 5 */
	for (uint64_t n = 1; n <= 4; n++)
		ck_assert_uint_eq(body_verdict(0, 2, n, REF(0, 2) "," REF(2, 1) ","
					       REF(3, 1)), 2 + 5 + 2 * n + 1);
	ck_assert_uint_eq(body_verdict(0, 2, 4294967295u, REF(0, 2) "," REF(2, 1)
				       "," REF(3, 1)),
			  2 + 5 + 2 * (uint64_t)4294967295u + 1);
}
END_TEST

START_TEST(merged_body_counts_exactly)
{
	/* body [Q, R, Q] (first phase = last phase) after P fails in its
	 * first iteration: instance 3 (P0 Q1 R2 Q3) */
	ck_assert_uint_eq(body_verdict(1, 3, 7, REF(0, 4)), 2 + 5 + 3);
	/* body [P, Q, R, Q, P] over N: P Q R Q P, then Q R Q P per further
	 * iteration (the P's merge); Q at instance 3 fails at once */
	ck_assert_uint_eq(body_verdict(0, 5, 4294967295u, REF(0, 5)), 2 + 5 + 3);
}
END_TEST

/* Body [Q, R] after P: iteration 0 is fine (a intact at Q, then R takes
 * it), iteration 1's Q breaks.  Instances: P0, Q1, R2, Q3. */
START_TEST(failure_in_second_iteration_of_long_repeat)
{
	const char *sched = REF(0, 1) "," REF(1, 2);
	for (uint64_t n = 2; n <= 5; n++)
		ck_assert_uint_eq(body_verdict(1, 2, n, sched), 2 + 5 + 3);
	ck_assert_uint_eq(body_verdict(1, 2, 1, sched), 0);
	ck_assert_uint_eq(body_verdict(1, 2, 4294967295u, sched), 2 + 5 + 3);

	/* The diagnostic names iteration 1 and the instances around it. */
	char *json = program(PLAN_PQR ", " LAUNCHES_PQRQP ", \"repeats\": "
		"[{\"first\": 1, \"count\": 2, \"iterations\": 4294967295}], "
		"\"schedule\": [" REF(0, 1) "," REF(1, 2) "]");
	struct ac_model *m = util_model_json(json);
	free(json);
	struct ac_diag d;
	uint64_t v;
	ck_assert_int_eq(ac_certify(m, &v, &d, NULL), 0);
	ck_assert_int_eq(d.condition, AC_COND_D);
	ck_assert_int_eq(d.reason, AC_CARRIED_OVERWRITTEN);
	ck_assert_uint_eq(d.instance, 3);
	ck_assert_uint_eq(d.start_launch, 1);
	ck_assert_uint_eq(d.start_ordinal, 1);
	ck_assert_uint_eq(d.earlier, 1);           /* Q declares its carried a */
	ck_assert_uint_eq(d.earlier_phase, 1);
	ck_assert_uint_eq(d.intervening, 2);
	ck_assert_uint_eq(d.tensor[1].phase, 2);   /* R's z */
	ac_model_free(m);
}
END_TEST

START_TEST(failure_index_after_long_repeat)
{
	/* body [P, Q, P] then R, Q: P Q P(merged) Q P ... = 1 + 2N
	 * instances, R = 1 + 2N, Q = 2 + 2N breaks. */
	const char *launches = "\"launches\": [{\"phase\": \"P\"}, {\"phase\": \"Q\"},"
			       " {\"phase\": \"P\"}, {\"phase\": \"R\"}, {\"phase\": \"Q\"}]";
	for (uint64_t n = 1; n <= 4; n++) {
		char repeat[96];
		snprintf(repeat, sizeof(repeat), "{\"first\": 0, \"count\": 3, "
			 "\"iterations\": %" PRIu64 "}", n);
		ck_assert_uint_eq(schedule_verdict(launches, repeat,
			REF(0, 5)), 2 + 5 + 2 + 2 * n);
	}
	ck_assert_uint_eq(schedule_verdict(launches, "{\"first\": 0, \"count\": 3,"
		" \"iterations\": 4294967295}", REF(0, 5)),
		2 + 5 + 2 + 2 * (uint64_t)4294967295u);
	/* the same body referenced twice: the second run starts with P after
	 * P, so it merges again: 2 * (1 + 2N) - 1 instances before R */
	ck_assert_uint_eq(schedule_verdict(launches, "{\"first\": 0, \"count\": 3,"
		" \"iterations\": 4294967295}", REF(0, 3) "," REF(0, 5)),
		2 + 5 + 2 * (1 + 2 * (uint64_t)4294967295u) - 1 + 1);
}
END_TEST

/* ---- spec 2 (A), (B) ---------------------------------------------- */

static uint64_t layout_verdict(const char *globals, const char *planes_p)
{
	return verdict_of(program("\"alignment\": 64, \"windows\": [{\"base\": "
		"\"0x1000\", \"size\": \"0x1000\"}], \"globals\": [%s], \"phases\":"
		" [{\"identity\": \"P\", \"planes\": [%s]}], \"launches\": "
		"[{\"phase\": \"Q\"}]", globals, planes_p));
}

#define T(name, off, size) "{\"name\": \"" name "\", \"offset\": \"" off \
	"\", \"size\": " #size "}"
#define PL(name, off, size, c) "{\"name\": \"" name "\", \"offset\": \"" off \
	"\", \"size\": " #size ", \"carried\": " #c "}"

START_TEST(layout_boundaries)
{
	/* launch 0 has no declared phase: verdict 2 means (A), (B) held */
	ck_assert_uint_eq(layout_verdict(T("g", "0x1000", 64) "," T("h", "0x1040", 64),
					 PL("a", "0x1080", 64, false)), 2);
	ck_assert_uint_eq(layout_verdict(T("g", "0x1000", 65) "," T("h", "0x1040", 64), ""), 1);
	ck_assert_uint_eq(layout_verdict(T("g", "0x1020", 64), ""), 1);
	ck_assert_uint_eq(layout_verdict(T("g", "0x1000", 0), ""), 1);
	ck_assert_uint_eq(layout_verdict(T("g", "0x1000", 64) "," T("h", "0x1000", 64), ""), 1);
	/* a global ending at 2^64 is fine */
	ck_assert_uint_eq(layout_verdict(T("g", "0xffffffffffffffc0", 64), ""), 2);
	ck_assert_uint_eq(layout_verdict("", PL("a", "0x1000", 64, false) ","
					 PL("b", "0x1040", 64, true)), 2);
	ck_assert_uint_eq(layout_verdict("", PL("a", "0x1000", 65, false) ","
					 PL("b", "0x1040", 64, true)), 1);
	ck_assert_uint_eq(layout_verdict("", PL("a", "0x1000", 0, false)), 1);
	ck_assert_uint_eq(layout_verdict("", PL("a", "0x1001", 64, false)), 1);
	ck_assert_uint_eq(layout_verdict(T("g", "0x1040", 64),
					 PL("a", "0x1000", 65, false)), 1);
	ck_assert_uint_eq(layout_verdict(T("g", "0x1000", 64),
					 PL("a", "0x1000", 64, false)), 1);
	ck_assert_uint_eq(layout_verdict(T("g", "0x1000", 128),
					 PL("a", "0x1040", 64, false)), 1);
	/* the globals' hull [0x1000, 0x1080], its ends aligned: a plane
	 * just outside either end meets none, one on either end meets one */
#define TWO_GLOBALS T("g", "0x1000", 64) "," T("h", "0x1080", 1)
	ck_assert_uint_eq(layout_verdict(TWO_GLOBALS,
					 PL("a", "0xfc0", 64, false)), 2);
	ck_assert_uint_eq(layout_verdict(TWO_GLOBALS,
					 PL("a", "0xfc0", 65, false)), 1);
	ck_assert_uint_eq(layout_verdict(TWO_GLOBALS,
					 PL("a", "0x10c0", 64, false)), 2);
	ck_assert_uint_eq(layout_verdict(TWO_GLOBALS,
					 PL("a", "0x1080", 64, false)), 1);
	ck_assert_uint_eq(layout_verdict(TWO_GLOBALS,
					 PL("a", "0x1040", 64, false)), 2);
#undef TWO_GLOBALS
}
END_TEST

/* ---- spec 3: the order of conditions ------------------------------ */

START_TEST(first_failing_condition_wins)
{
	/* (C) fails at launch 1 and (D) at instance 0: (C) reported */
	ck_assert_uint_eq(schedule_verdict("\"launches\": [{\"phase\": \"Q\"},"
		" {\"phase\": \"P\", \"words\": [\"0x1900\"]}]", "", REF(0, 1)),
		2 + 1);
	/* smallest launch index as written, not as executed */
	ck_assert_uint_eq(schedule_verdict("\"launches\": [{\"phase\": \"P\","
		" \"words\": [\"0x1900\"]}, {\"phase\": \"P\", \"words\": "
		"[\"0x1900\"]}]", "", REF(1, 1) "," REF(0, 1)), 2 + 0);
	/* (C) applies to launches that no reference runs */
	ck_assert_uint_eq(schedule_verdict("\"launches\": [{\"phase\": \"P\"},"
		" {\"phase\": \"P\", \"words\": [\"0x1900\"]}]", "", REF(0, 1)), 3);
}
END_TEST

Suite *suite_rules(void)
{
	Suite *s = suite_create("rules");
	TCase *tc = tcase_create("identity");
	tcase_add_test(tc, identity_canonical_and_unknown_fields);
	tcase_add_test(tc, identity_last_occurrence_wins);
	tcase_add_test(tc, identity_wire_types);
	tcase_add_test(tc, identity_varint_limits);
	tcase_add_test(tc, identity_truncation);
	tcase_add_test(tc, identity_name_then_phase_as_walked);
	tcase_add_test(tc, identity_cycles_and_collisions);
	tcase_add_loop_test(tc, identity_rounds_looked_up, 0,
			    sizeof(identity_rounds) / sizeof(identity_rounds[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("intervals");
	tcase_add_test(tc, points_up_to_128_then_hull);
	tcase_add_test(tc, values_leaving_the_64_bit_range);
	tcase_add_test(tc, frames_used_and_unused);
	suite_add_tcase(s, tc);

	tc = tcase_create("instances");
	tcase_add_test(tc, instances_merge_across_references);
	tcase_add_test(tc, instances_merge_across_iterations);
	tcase_add_test(tc, merged_body_counts_exactly);
	tcase_add_test(tc, failure_in_second_iteration_of_long_repeat);
	tcase_add_test(tc, failure_index_after_long_repeat);
	suite_add_tcase(s, tc);

	tc = tcase_create("layout");
	tcase_add_test(tc, layout_boundaries);
	tcase_add_test(tc, first_failing_condition_wins);
	suite_add_tcase(s, tc);
	return s;
}
