/* SPDX-License-Identifier: MIT */
/*
 * Whole certification, incremental API included.  The input is
 *
 *   u32 LE n, then n bytes of program image (its own schedule is ignored),
 *   then batches: one byte b, then (b mod 8) references of 16 bytes
 *   (u64 LE first, u64 LE count); the last batch may be cut short.
 *
 * The batches go to ac_schedule_append one by one, reading the verdict
 * after each.  A rejected batch must change nothing; a verdict once
 * non-zero must stay; and at the end, one-shot ac_certify of the model
 * with the accepted references, and one append of them all, must agree
 * with the incremental schedule on verdict, executed length and digest.
 * The word values the program reports (ac_program_word_value) are checked
 * on the way.
 */
#include "fuzz.h"

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* ac_wide_text read back: an optional '-', "0x", hex digits. */
static struct ac_wide wide_parse(const char *text)
{
	const char *s = text + (*text == '-');
	unsigned __int128 v = 0;
	FUZZ_CHECK(s[0] == '0' && s[1] == 'x' && s[2], "wide text '%s'", text);
	for (s += 2; *s; s++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0'
		      : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;
		FUZZ_CHECK(d >= 0 && v >> 124 == 0, "wide text '%s'", text);
		v = v * 16 + (unsigned)d;
	}
	if (*text == '-')
		v = -v;
	return (struct ac_wide){ (int64_t)(uint64_t)(v >> 64), (uint64_t)v };
}

/*
 * ac_program_repeat_of and ac_program_word_value against spec 1.2 read
 * literally (V(t) = B(t) + t * D), on the first launches and words and a
 * few ordinals; and each value's ac_wide_text read back.
 */
static void check_word_values(const ac_program *p, const struct ac_model *m)
{
	for (uint32_t l = 0; l < m->n_launches && l < 64; l++) {
		uint64_t r = AC_NONE;
		for (uint32_t i = 0; i < m->n_repeats; i++)
			if (l >= m->repeats[i].first &&
			    l - m->repeats[i].first < m->repeats[i].count)
				r = i;
		FUZZ_CHECK(ac_program_repeat_of(p, l) == r,
			   "repeat_of(%u) %llu, expected %llu", l,
			   (unsigned long long)ac_program_repeat_of(p, l),
			   (unsigned long long)r);
		const struct ac_launch *la = &m->launches[l];
		const struct ac_repeat *rep = r == AC_NONE ? NULL : &m->repeats[r];
		for (uint32_t w = 0; w < la->word_count && w < 8; w++) {
			__int128 x = m->words[la->word_first + w], d = 0;
			uint64_t n = rep ? rep->iterations : 1;
			int slot = -1;
			for (uint32_t i = 0; rep && i < rep->delta_count; i++) {
				const struct ac_delta *e = &m->deltas[rep->delta_first + i];
				if (e->launch == l && e->word == w)
					d += e->delta;
			}
			for (uint32_t s = 0; rep && rep->frame_count && s < rep->slot_count; s++) {
				const struct ac_slot *e = &m->slots[rep->slot_first + s];
				if (e->launch == l && e->word == w)
					slot = (int)s;
			}
			const uint64_t ts[] = { 0, 1, n / 2, n - 1 };
			for (size_t k = 0; k < 4; k++) {
				uint64_t t = ts[k];
				if (t >= n)
					continue;
				__int128 b = slot < 0 ? x : m->frame_values[rep->frame_value_first +
					(t % rep->frame_count) * rep->slot_count + (uint32_t)slot];
				__int128 want = b + (__int128)t * d;
				struct ac_wide v = ac_program_word_value(p, l, w, t);
				FUZZ_CHECK(v.high == (int64_t)(want >> 64) &&
					   v.low == (uint64_t)want,
					   "V(%llu) of launch %u word %u",
					   (unsigned long long)t, l, w);
				char text[64];
				struct ac_wide back = wide_parse(ac_wide_text(v, text, sizeof(text)));
				FUZZ_CHECK(back.high == v.high && back.low == v.low,
					   "ac_wide_text '%s'", text);
			}
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	size_t n = (size_t)data[0] | (size_t)data[1] << 8 |
		   (size_t)data[2] << 16 | (size_t)data[3] << 24;
	if (n > size - 4)
		n = size - 4;
	/* an exact-size copy, so ASan sees a read past the image */
	uint8_t *image = malloc(n ? n : 1);
	FUZZ_CHECK(image, "malloc");
	memcpy(image, data + 4, n);
	const uint8_t *in = data + 4 + n, *end = data + size;

	struct ac_model *m;
	struct ac_error err;
	int read = ac_model_read_image(image, n, &m, &err);
	free(image);
	if (read != 0)
		return 0;

	struct fuzz_outcome once;
	ac_program *p = ac_program_new(m, &err);
	if (!p) {
		fuzz_certify(m, &once);
		FUZZ_CHECK(once.rc != 0, "ac_program_new failed, ac_certify did not");
		ac_model_free(m);
		return 0;
	}
	check_word_values(p, m);
	uint64_t program_verdict = ac_program_verdict(p);
	ac_schedule *s = ac_schedule_new(p);
	FUZZ_CHECK(s, "ac_schedule_new");

	/* at most (size / 16) references can be accepted */
	struct ac_ref *accepted = malloc((size / 16 + 1) * sizeof(*accepted));
	FUZZ_CHECK(accepted, "malloc");
	size_t n_accepted = 0;
	uint64_t verdict = ac_schedule_verdict(s, NULL);
	FUZZ_CHECK(verdict == program_verdict, "empty schedule's verdict %llu, "
		   "program's %llu", (unsigned long long)verdict,
		   (unsigned long long)program_verdict);

	while (in < end) {
		size_t want = *in++ % 8, got = 0;
		struct ac_ref *batch = malloc(want ? want * sizeof(*batch) : 1);
		FUZZ_CHECK(batch, "malloc");
		for (; got < want && end - in >= 16; got++, in += 16)
			batch[got] = (struct ac_ref){ le64(in), le64(in + 8) };
		if (got < want)
			in = end;
		uint64_t executed = ac_schedule_executed(s);
		if (ac_schedule_append(s, batch, got, &err) == 0) {
			memcpy(accepted + n_accepted, batch, got * sizeof(*batch));
			n_accepted += got;
		} else {
			FUZZ_CHECK(strncmp(err.where, "schedule[", 9) == 0,
				   "rejected batch names '%s'", err.where);
			FUZZ_CHECK(ac_schedule_executed(s) == executed,
				   "a rejected batch changed the executed length");
		}
		free(batch);
		FUZZ_CHECK(ac_schedule_length(s) == n_accepted,
			   "length %llu, accepted %zu",
			   (unsigned long long)ac_schedule_length(s), n_accepted);

		uint64_t now = ac_schedule_verdict(s, NULL);
		FUZZ_CHECK(verdict == 0 || now == verdict,
			   "verdict changed from %llu to %llu",
			   (unsigned long long)verdict, (unsigned long long)now);
		FUZZ_CHECK(program_verdict == 0 ? now == 0 || now >= 2 + (uint64_t)m->n_launches
						: now == program_verdict,
			   "verdict %llu with program verdict %llu",
			   (unsigned long long)now,
			   (unsigned long long)program_verdict);
		verdict = now;
	}

	/* The same references in one batch, on a fresh schedule. */
	ac_schedule *all = ac_schedule_new(p);
	FUZZ_CHECK(all, "ac_schedule_new");
	FUZZ_CHECK(ac_schedule_append(all, accepted, n_accepted, &err) == 0,
		   "accepted references rejected as one batch: %s: %s",
		   err.where, err.message);
	struct ac_diag d1, d2;
	FUZZ_CHECK(ac_schedule_verdict(all, &d2) == ac_schedule_verdict(s, &d1),
		   "one batch %llu, incremental %llu",
		   (unsigned long long)d2.verdict, (unsigned long long)d1.verdict);
	FUZZ_CHECK(d1.condition == d2.condition && d1.reason == d2.reason &&
		   d1.instance == d2.instance && d1.earlier == d2.earlier &&
		   d1.intervening == d2.intervening,
		   "one batch and incremental diagnostics differ");
	FUZZ_CHECK(ac_schedule_executed(all) == ac_schedule_executed(s),
		   "executed lengths differ");
	struct ac_digest g1, g2;
	ac_schedule_digest(s, &g1);
	ac_schedule_digest(all, &g2);
	FUZZ_CHECK(g1.high == g2.high && g1.low == g2.low, "digests differ");

	char text[4096];
	ac_diag_render(&d1, p, text, sizeof(text));

	/* One shot, on a copy of the model whose schedule is the accepted one. */
	struct ac_model copy = *m;
	copy.refs = accepted;
	copy.n_refs = n_accepted;
	fuzz_certify(&copy, &once);
	FUZZ_CHECK(once.rc == 0, "ac_certify failed: %s", once.error);
	FUZZ_CHECK(once.verdict == verdict, "ac_certify %llu, incremental %llu",
		   (unsigned long long)once.verdict,
		   (unsigned long long)verdict);

	ac_schedule_free(all);
	ac_schedule_free(s);
	ac_program_free(p);
	free(accepted);
	ac_model_free(m);
	return 0;
}
