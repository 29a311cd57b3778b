/* SPDX-License-Identifier: MIT */
/*
 * The incremental schedule API: appends one at a time and in batches,
 * atomic rejection of malformed references, the 2^62 executed-launch
 * limit, and the verdict-cache digest.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "suites.h"
#include "util.h"

/* Spec example 3's plan and launches: P, Q, R. */
static const char *const plan_pqr =
	"{\"alignment\": 64,"
	" \"windows\": [{\"base\": \"0x1000\", \"size\": \"0x1000\"}],"
	" \"phases\": ["
	"  {\"identity\": \"P\", \"planes\": [{\"name\": \"a\", \"offset\": \"0x1400\", \"size\": 256, \"carried\": false}]},"
	"  {\"identity\": \"Q\", \"planes\": [{\"name\": \"a\", \"offset\": \"0x1400\", \"size\": 256, \"carried\": true}]},"
	"  {\"identity\": \"R\", \"planes\": [{\"name\": \"z\", \"offset\": \"0x1400\", \"size\": 64, \"carried\": false}]}],"
	" \"launches\": [{\"phase\": \"P\"}, {\"phase\": \"Q\"}, {\"phase\": \"R\"},"
	"  {\"phase\": \"Q\"}, {\"phase\": \"P\"}],"
	" \"repeats\": [{\"first\": 3, \"count\": 2, \"iterations\": 1000}]}";

struct fixture {
	struct ac_model *m;
	ac_program *p;
	ac_schedule *s;
};

static void open_fixture(struct fixture *f, const char *json)
{
	struct ac_error err;
	f->m = util_model_json(json);
	f->p = ac_program_new(f->m, &err);
	ck_assert_ptr_nonnull(f->p);
	f->s = ac_schedule_new(f->p);
	ck_assert_ptr_nonnull(f->s);
}

static void close_fixture(struct fixture *f)
{
	ac_schedule_free(f->s);
	ac_program_free(f->p);
	ac_model_free(f->m);
}

static void append_ok(ac_schedule *s, uint64_t first, uint64_t count)
{
	struct ac_ref ref = { first, count };
	struct ac_error err;
	char text[256];
	ck_assert_msg(ac_schedule_append(s, &ref, 1, &err) == 0, "%s",
		      ac_error_text(&err, text, sizeof(text)));
}

START_TEST(verdict_so_far)
{
	struct fixture f;
	open_fixture(&f, plan_pqr);
	ck_assert_uint_eq(ac_schedule_verdict(f.s, NULL), 0);  /* empty */
	append_ok(f.s, 0, 2);                                 /* P Q */
	ck_assert_uint_eq(ac_schedule_verdict(f.s, NULL), 0);
	append_ok(f.s, 2, 1);                                 /* R */
	ck_assert_uint_eq(ac_schedule_verdict(f.s, NULL), 0);
	append_ok(f.s, 1, 1);                                 /* Q breaks */
	ck_assert_uint_eq(ac_schedule_verdict(f.s, NULL), 2 + 5 + 3);
	append_ok(f.s, 0, 2);                 /* later appends keep it */
	ck_assert_uint_eq(ac_schedule_verdict(f.s, NULL), 2 + 5 + 3);
	ck_assert_uint_eq(ac_schedule_length(f.s), 4);
	ck_assert_uint_eq(ac_schedule_executed(f.s), 6);
	close_fixture(&f);
}
END_TEST

START_TEST(batch_equals_one_by_one)
{
	struct ac_ref refs[] = { { 0, 1 }, { 3, 2 }, { 0, 2 }, { 3, 2 },
				 { 2, 1 }, { 0, 5 } };
	size_t n = sizeof(refs) / sizeof(refs[0]);
	struct fixture a, b;
	open_fixture(&a, plan_pqr);
	open_fixture(&b, plan_pqr);
	ck_assert_int_eq(ac_schedule_append(a.s, refs, n, NULL), 0);
	for (size_t i = 0; i < n; i++)
		append_ok(b.s, refs[i].first, refs[i].count);
	struct ac_diag da, db;
	ck_assert_uint_eq(ac_schedule_verdict(a.s, &da),
			  ac_schedule_verdict(b.s, &db));
	ck_assert_int_eq(memcmp(&da, &db, sizeof(da)), 0);
	ck_assert_uint_eq(ac_schedule_executed(a.s), ac_schedule_executed(b.s));
	struct ac_digest ga, gb;
	ac_schedule_digest(a.s, &ga);
	ac_schedule_digest(b.s, &gb);
	ck_assert(ga.high == gb.high && ga.low == gb.low);
	close_fixture(&a);
	close_fixture(&b);
}
END_TEST

/* A malformed reference anywhere in a batch appends nothing. */
static void rejected(struct ac_ref bad, const char *where)
{
	struct fixture f;
	open_fixture(&f, plan_pqr);
	append_ok(f.s, 0, 1);
	struct ac_digest before, after;
	ac_schedule_digest(f.s, &before);
	struct ac_ref batch[] = { { 0, 2 }, bad };
	struct ac_error err;
	ck_assert_int_eq(ac_schedule_append(f.s, batch, 2, &err), -1);
	ck_assert_str_eq(err.where, where);
	ck_assert_uint_eq(ac_schedule_length(f.s), 1);
	ck_assert_uint_eq(ac_schedule_executed(f.s), 1);
	ac_schedule_digest(f.s, &after);
	ck_assert(before.high == after.high && before.low == after.low);
	close_fixture(&f);
}

START_TEST(malformed_references)
{
	rejected((struct ac_ref){ 0, 0 }, "schedule[2]");          /* empty */
	rejected((struct ac_ref){ 5, 1 }, "schedule[2]");          /* past */
	rejected((struct ac_ref){ 4, 2 }, "schedule[2]");
	rejected((struct ac_ref){ UINT64_MAX, 2 }, "schedule[2]"); /* wraps */
	rejected((struct ac_ref){ 1, UINT64_MAX }, "schedule[2]");
	rejected((struct ac_ref){ 2, 2 }, "schedule[2]");          /* cuts body */
	rejected((struct ac_ref){ 4, 1 }, "schedule[2]");
	rejected((struct ac_ref){ 0, 4 }, "schedule[2]");
}
END_TEST

/* A batch without its array (refs NULL, count > 0) is a bad argument:
 * -1 and *err naming "refs", nothing appended; NULL with count 0 is an
 * empty batch. */
START_TEST(null_batch_is_an_error)
{
	struct fixture f;
	open_fixture(&f, plan_pqr);
	append_ok(f.s, 0, 1);
	struct ac_digest before, after;
	ac_schedule_digest(f.s, &before);
	struct ac_error err;
	ck_assert_int_eq(ac_schedule_append(f.s, NULL, 2, &err), -1);
	ck_assert_str_eq(err.where, "refs");
	ck_assert_ptr_nonnull(strstr(err.message, "NULL"));
	ck_assert_int_eq(ac_schedule_append(f.s, NULL, 1, NULL), -1);
	ck_assert_uint_eq(ac_schedule_length(f.s), 1);
	ck_assert_uint_eq(ac_schedule_executed(f.s), 1);
	ac_schedule_digest(f.s, &after);
	ck_assert(before.high == after.high && before.low == after.low);
	ck_assert_int_eq(ac_schedule_append(f.s, NULL, 0, &err), 0);
	ck_assert_uint_eq(ac_schedule_length(f.s), 1);
	close_fixture(&f);
}
END_TEST

/* The reference check alone (spec 1.3), as a device keeping its own
 * references calls it: the launches added, the location named, and
 * nothing added on a failure. */
START_TEST(check_ref_alone)
{
	struct fixture f;
	open_fixture(&f, plan_pqr);
	struct ac_error err;
	uint64_t executed = 7;
	ck_assert_int_eq(ac_program_check_ref(f.p, &(struct ac_ref){ 0, 3 }, 0,
					      &executed, &err), 0);
	ck_assert_uint_eq(executed, 10);
	/* the body [3, 5) runs 1000 iterations of 2 launches */
	ck_assert_int_eq(ac_program_check_ref(f.p, &(struct ac_ref){ 2, 3 }, 1,
					      &executed, NULL), 0);
	ck_assert_uint_eq(executed, 10 + 1 + 2000);
	ck_assert_int_eq(ac_program_check_ref(f.p, &(struct ac_ref){ 4, 1 }, 41,
					      &executed, &err), -1);
	ck_assert_str_eq(err.where, "schedule[41]");
	ck_assert(strstr(err.message, "cuts a repeat body") != NULL);
	ck_assert_int_eq(ac_program_check_ref(f.p, &(struct ac_ref){ 5, 1 }, 3,
					      &executed, &err), -1);
	ck_assert(strstr(err.message, "not inside the launch table") != NULL);
	ck_assert_uint_eq(executed, 2011);
	/* the limit counts what came before: 2^62 - 3 + 2 is below it,
	 * + 3 reaches it */
	executed = ((uint64_t)1 << 62) - 3;
	ck_assert_int_eq(ac_program_check_ref(f.p, &(struct ac_ref){ 0, 3 }, 9,
					      &executed, &err), -1);
	ck_assert(strstr(err.message, "2^62") != NULL);
	ck_assert_int_eq(ac_program_check_ref(f.p, &(struct ac_ref){ 0, 2 }, 9,
					      &executed, &err), 0);
	ck_assert_uint_eq(executed, ((uint64_t)1 << 62) - 1);
	close_fixture(&f);
}
END_TEST

/* A device's V(t) (ac_word_values_at) is ac_program_word_value's for
 * every word, iteration and launch, and refuses exactly the launches
 * with a value outside [0, 2^64). */
START_TEST(word_values_are_the_programs)
{
	static const char *const json =
		"{\"alignment\": 1,"
		" \"windows\": [{\"base\": 0, \"size\": \"0x1000\"}],"
		" \"phases\": [{\"identity\": \"P\", \"planes\": []}],"
		" \"launches\": [{\"phase\": \"P\", \"words\": [100, 5, 27]},"
		"  {\"phase\": \"P\", \"words\": [1]},"
		"  {\"phase\": \"P\", \"words\": [\"18446744073709551615\"]}],"
		" \"repeats\": [{\"first\": 0, \"count\": 2, \"iterations\": 4,"
		"  \"deltas\": [{\"launch\": 0, \"word\": 0, \"delta\": 3},"
		"   {\"launch\": 0, \"word\": 0, \"delta\": 2},"
		"   {\"launch\": 0, \"word\": 2, \"delta\": -10},"
		"   {\"launch\": 1, \"word\": 0, \"delta\": 1}],"
		"  \"table\": {\"slots\": [{\"launch\": 0, \"word\": 1}],"
		"   \"frames\": [[10], [20]]}}]}";
	struct fixture f;
	open_fixture(&f, json);
	ac_word_values *w = ac_word_values_new(f.p);
	ck_assert_ptr_nonnull(w);
	int refused = 0;
	for (uint64_t l = 0; l < 3; l++) {
		for (uint64_t t = 0; t < 4; t++) {
			uint64_t out[3];
			int rc = ac_word_values_at(w, l, t, out);
			int outside = 0;
			uint32_t n = f.m->launches[l].word_count;
			for (uint32_t i = 0; i < n; i++) {
				struct ac_wide v = ac_program_word_value(
					f.p, l, i, l < 2 ? t : 0);
				if (v.high != 0) {
					outside = 1;
					break;
				}
				ck_assert_uint_eq(out[i], v.low);
			}
			ck_assert_int_eq(rc, outside ? -1 : 0);
			refused += outside;
		}
	}
	/* launch 0's third word, 27 - 10 t, is negative from t = 3 */
	ck_assert_int_eq(refused, 1);
	uint64_t out[3];
	ck_assert_int_eq(ac_word_values_at(w, 0, 2, out), 0);
	ck_assert_uint_eq(out[0], 110);
	ck_assert_uint_eq(out[1], 10);
	ck_assert_uint_eq(out[2], 7);
	ac_word_values_free(w);
	close_fixture(&f);
}
END_TEST

/* A model built in C: one phase, `launches` launches with no words, one
 * repeat over all of them with N = 2^32 - 1. */
static struct ac_model *long_body_model(uint32_t launches)
{
	static const uint8_t identity[] = { 0x9a, 0x03, 0x01, 'P' };
	struct ac_model *m = calloc(1, sizeof(*m));
	struct ac_phase *ph = calloc(1, sizeof(*ph));
	struct ac_launch *l = calloc(launches, sizeof(*l));
	struct ac_repeat *r = calloc(1, sizeof(*r));
	ph->identity = (struct ac_bytes){ identity + 3, 1 };
	for (uint32_t i = 0; i < launches; i++)
		l[i].identity = (struct ac_bytes){ identity, sizeof(identity) };
	*r = (struct ac_repeat){ .first = 0, .count = launches,
				 .iterations = 4294967295u };
	*m = (struct ac_model){ .alignment = 1, .n_phases = 1, .phases = ph,
				.n_launches = launches, .launches = l,
				.n_repeats = 1, .repeats = r };
	return m;
}

static void free_long_body_model(struct ac_model *m)
{
	free((void *)m->phases);
	free((void *)m->launches);
	free((void *)m->repeats);
	free(m);
}

START_TEST(executed_limit_is_2_pow_62)
{
	/* each reference executes 2^16 * (2^32 - 1) launches; 2^62 is
	 * reached by the 2^14-th, rounded up */
	const uint32_t body = 1u << 16;
	const uint64_t per_ref = (uint64_t)body * 4294967295u;
	struct ac_model *m = long_body_model(body);
	ac_program *p = ac_program_new(m, NULL);
	ck_assert_ptr_nonnull(p);
	ac_schedule *s = ac_schedule_new(p);
	struct ac_ref ref = { 0, body };
	uint64_t fits = ((uint64_t)1 << 62) / per_ref;
	if (fits * per_ref == (uint64_t)1 << 62)
		fits--;
	for (uint64_t i = 0; i < fits; i++)
		ck_assert_int_eq(ac_schedule_append(s, &ref, 1, NULL), 0);
	ck_assert_uint_eq(ac_schedule_executed(s), fits * per_ref);
	struct ac_error err;
	ck_assert_int_eq(ac_schedule_append(s, &ref, 1, &err), -1);
	ck_assert(strstr(err.message, "2^62") != NULL);
	ck_assert_uint_eq(ac_schedule_verdict(s, NULL), 0);
	ac_schedule_free(s);
	ac_program_free(p);
	free_long_body_model(m);
}
END_TEST

static void digest_of(const char *json, const struct ac_ref *refs, size_t n,
		      struct ac_digest *out)
{
	struct fixture f;
	open_fixture(&f, json);
	ck_assert_int_eq(ac_schedule_append(f.s, refs, n, NULL), 0);
	ac_schedule_digest(f.s, out);
	close_fixture(&f);
}

START_TEST(digest_tracks_program_and_schedule)
{
	struct ac_ref one[] = { { 0, 2 } }, two[] = { { 0, 2 }, { 2, 1 } };
	struct ac_digest a, b, c, d;
	digest_of(plan_pqr, one, 1, &a);
	digest_of(plan_pqr, one, 1, &b);
	digest_of(plan_pqr, two, 2, &c);
	ck_assert(a.high == b.high && a.low == b.low);
	ck_assert(a.high != c.high || a.low != c.low);
	/* the same schedule on a program differing in one byte of a name */
	char *other = strdup(plan_pqr);
	strstr(other, "\"z\"")[1] = 'y';
	digest_of(other, one, 1, &d);
	ck_assert(a.high != d.high || a.low != d.low);
	free(other);
}
END_TEST

/* The digest as docs/certify.md defines it, from the public writer. */
static void digest_by_definition(const struct ac_model *m,
				 const struct ac_ref *refs, size_t n,
				 struct ac_digest *out)
{
	struct ac_model bare = *m;
	bare.n_refs = 0;
	size_t len;
	uint8_t *image = ac_model_write_image(&bare, &len, NULL);
	ck_assert_ptr_nonnull(image);
	XXH128_hash_t prog = XXH3_128bits(image, len);
	free(image);
	uint8_t *le = malloc(16 * n + 1);
	ck_assert_ptr_nonnull(le);
	for (size_t i = 0; i < n; i++) {
		util_put_le64(le + 16 * i, refs[i].first);
		util_put_le64(le + 16 * i + 8, refs[i].count);
	}
	XXH128_hash_t ref = XXH3_128bits(le, 16 * n);
	free(le);
	uint8_t both[32];
	util_put_le64(both, prog.high64);
	util_put_le64(both + 8, prog.low64);
	util_put_le64(both + 16, ref.high64);
	util_put_le64(both + 24, ref.low64);
	XXH128_hash_t h = XXH3_128bits(both, sizeof(both));
	*out = (struct ac_digest){ h.high64, h.low64 };
	/* which is what ac_digest_combine computes from the halves */
	struct ac_digest p = { prog.high64, prog.low64 }, r = { ref.high64, ref.low64 };
	struct ac_digest combined;
	ac_digest_combine(&p, &r, &combined);
	ck_assert(combined.high == out->high && combined.low == out->low);
}

/* A caller keeping its own references: ac_image_digest of the canonical
 * image and an ac_digester give ac_schedule_digest's value, batch by
 * batch, and undo takes back the last batch. */
START_TEST(digester_is_the_schedules_digest)
{
	struct ac_ref refs[] = { { 0, 2 }, { 2, 1 }, { 1, 1 }, { 3, 2 } };
	struct fixture f;
	open_fixture(&f, plan_pqr);
	size_t len;
	uint8_t *image = ac_model_write_image(f.m, &len, NULL);
	ck_assert_ptr_nonnull(image);
	struct ac_digest p, got, want;
	ac_image_digest(image, len, &p);
	free(image);
	ac_digester *d = ac_digester_new(&p);
	ck_assert_ptr_nonnull(d);
	/* empty, then batches of 1 and 3 */
	ac_schedule_digest(f.s, &want);
	ac_digester_value(d, &got);
	ck_assert(got.high == want.high && got.low == want.low);
	ac_digester_add(d, refs, 1);
	ck_assert_int_eq(ac_schedule_append(f.s, refs, 1, NULL), 0);
	ac_schedule_digest(f.s, &want);
	ac_digester_value(d, &got);
	ck_assert(got.high == want.high && got.low == want.low);
	ac_digester_add(d, refs + 1, 3);
	ck_assert_int_eq(ac_schedule_append(f.s, refs + 1, 3, NULL), 0);
	ac_schedule_digest(f.s, &want);
	ac_digester_value(d, &got);
	ck_assert(got.high == want.high && got.low == want.low);
	ac_digester_add(d, refs, 2);
	ac_digester_undo(d);
	ac_digester_value(d, &got);
	ck_assert(got.high == want.high && got.low == want.low);
	ac_digester_free(d);
	close_fixture(&f);
}
END_TEST

/* A small fixed-seed generator (xorshift64*), so that a failing
 * chunking can be reproduced from the printed seed. */
static uint64_t next_random(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * UINT64_C(2685821657736338717);
}

/* An image digested in chunks, however it is cut (empty chunks, single
 * bytes, cuts at and around XXH3's 240-byte, stripe and block sizes,
 * random cuts), gives the one-shot ac_image_digest, which is XXH3-128 of
 * the bytes; and reading the value midway changes nothing. */
START_TEST(image_digester_equals_one_shot)
{
	enum { MAX = 200000 };
	static const size_t sizes[] = { 0, 1, 16, 17, 128, 129, 239, 240,
					241, 1023, 1024, 1025, 65536, MAX };
	const uint64_t seed = UINT64_C(0x5eed00c0ffee0032);
	uint64_t x = seed;
	printf("image_digester_equals_one_shot: seed 0x%016llx\n",
	       (unsigned long long)seed);
	uint8_t *bytes = malloc(MAX);
	ck_assert_ptr_nonnull(bytes);
	for (size_t i = 0; i < MAX; i++)
		bytes[i] = (uint8_t)next_random(&x);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t len = sizes[k];
		struct ac_digest want, got, mid;
		ac_image_digest(bytes, len, &want);
		XXH128_hash_t h = XXH3_128bits(bytes, len);
		ck_assert(want.high == h.high64 && want.low == h.low64);
		for (int round = 0; round < 40; round++) {
			ac_image_digester *d = ac_image_digester_new();
			ck_assert_ptr_nonnull(d);
			/* round 0: one chunk; 1: bytes one at a time (small
			 * images); else random cuts of up to 2^(round % 18)
			 * bytes, some of them empty. */
			size_t at = 0;
			while (at < len) {
				size_t n;
				if (round == 0)
					n = len;
				else if (round == 1)
					n = len <= 4096 ? 1 : 4096;
				else
					n = (size_t)(next_random(&x) %
						     ((UINT64_C(1) <<
						       (round % 18)) + 1));
				if (n > len - at)
					n = len - at;
				ac_image_digester_add(d, bytes + at, n);
				at += n;
				if (next_random(&x) % 8 == 0)
					ac_image_digester_value(d, &mid);
			}
			ac_image_digester_add(d, bytes + len, 0);
			ac_image_digester_value(d, &got);
			ck_assert_msg(got.high == want.high &&
				      got.low == want.low,
				      "%zu bytes, round %d: streamed digest "
				      "differs (seed 0x%016llx)", len, round,
				      (unsigned long long)seed);
			ac_image_digester_free(d);
		}
	}
	free(bytes);
}
END_TEST

START_TEST(digest_follows_its_definition)
{
	struct ac_ref refs[] = { { 0, 2 }, { 2, 1 }, { 1, 1 } };
	for (size_t n = 0; n <= 3; n++) {
		struct fixture f;
		open_fixture(&f, plan_pqr);
		ck_assert_int_eq(ac_schedule_append(f.s, refs, n, NULL), 0);
		struct ac_digest got, want;
		ac_schedule_digest(f.s, &got);
		digest_by_definition(f.m, refs, n, &want);
		ck_assert(got.high == want.high && got.low == want.low);
		close_fixture(&f);
	}
}
END_TEST

/* The program half is computed by whichever thread asks first: threads
 * asking at once must all get the one right value. */
struct digest_thread {
	const ac_program *p;
	struct ac_digest out;
};

static void *digest_in_thread(void *arg)
{
	struct digest_thread *t = arg;
	ac_schedule *s = ac_schedule_new(t->p);
	struct ac_ref ref = { 0, 2 };
	if (s && ac_schedule_append(s, &ref, 1, NULL) == 0)
		ac_schedule_digest(s, &t->out);
	ac_schedule_free(s);
	return NULL;
}

START_TEST(digest_is_computed_once_for_all_threads)
{
	struct fixture f;
	open_fixture(&f, plan_pqr);
	struct digest_thread t[4];
	pthread_t id[4];
	for (int i = 0; i < 4; i++) {
		t[i] = (struct digest_thread){ f.p, { 0, 0 } };
		ck_assert_int_eq(pthread_create(&id[i], NULL, digest_in_thread,
						&t[i]), 0);
	}
	struct ac_digest want;
	struct ac_ref ref = { 0, 2 };
	digest_by_definition(f.m, &ref, 1, &want);
	for (int i = 0; i < 4; i++) {
		pthread_join(id[i], NULL);
		ck_assert(t[i].out.high == want.high && t[i].out.low == want.low);
	}
	close_fixture(&f);
}
END_TEST

START_TEST(schedules_of_one_program_are_independent)
{
	struct fixture f;
	open_fixture(&f, plan_pqr);
	ac_schedule *t = ac_schedule_new(f.p);
	append_ok(f.s, 1, 1);                       /* Q first: breaks */
	append_ok(t, 0, 2);                         /* P Q: fine */
	ck_assert_uint_eq(ac_schedule_verdict(f.s, NULL), 2 + 5 + 0);
	ck_assert_uint_eq(ac_schedule_verdict(t, NULL), 0);
	ac_schedule_free(t);
	close_fixture(&f);
}
END_TEST

Suite *suite_schedule(void)
{
	Suite *s = suite_create("schedule");
	TCase *tc = tcase_create("append");
	tcase_add_test(tc, verdict_so_far);
	tcase_add_test(tc, batch_equals_one_by_one);
	tcase_add_test(tc, malformed_references);
	tcase_add_test(tc, null_batch_is_an_error);
	tcase_add_test(tc, check_ref_alone);
	tcase_add_test(tc, word_values_are_the_programs);
	tcase_add_test(tc, executed_limit_is_2_pow_62);
	tcase_add_test(tc, schedules_of_one_program_are_independent);
	suite_add_tcase(s, tc);
	tc = tcase_create("digest");
	tcase_add_test(tc, digest_tracks_program_and_schedule);
	tcase_add_test(tc, digest_follows_its_definition);
	tcase_add_test(tc, digester_is_the_schedules_digest);
	tcase_add_test(tc, image_digester_equals_one_shot);
	tcase_add_test(tc, digest_is_computed_once_for_all_threads);
	suite_add_tcase(s, tc);
	return s;
}
