/* SPDX-License-Identifier: MIT */
/*
 * contract/image.c, the image rules arena.ko runs in the kernel, on
 * arbitrary bytes, against libarenacert: the contract must accept exactly
 * the images ac_model_read_image accepts, index exactly the programs
 * ac_program_new accepts, accept exactly the image's references
 * ac_program_check_ref accepts (with the same executed count), and give
 * every launch the same words at its first and last ordinal as
 * ac_word_values_at.  ASan and UBSan watch the contract's reads: after
 * arena_image_parse() no read may leave the input.
 */
#include "fuzz.h"
#include "../contract/image.h"

static void compare_words(const struct arena_program *cp, const ac_program *p,
			  const struct ac_model *m)
{
	ac_word_values *wv = ac_word_values_new(p);
	FUZZ_CHECK(wv, "ac_word_values_new");
	uint64_t *a = malloc(((size_t)cp->max_words + 1) * 8);
	uint64_t *b = malloc(((size_t)cp->max_words + 1) * 8);
	FUZZ_CHECK(a && b, "malloc");
	for (uint64_t l = 0; l < m->n_launches; l++) {
		uint64_t last = 0;
		if (cp->repeat_of[l] != ARENA_NONE32)
			last = m->repeats[cp->repeat_of[l]].iterations - 1;
		for (uint64_t t = 0; t <= last; t += last ? last : 1) {
			int x = arena_words_at(cp, l, t, a);
			int y = ac_word_values_at(wv, l, t, b);
			FUZZ_CHECK((x == 0) == (y == 0),
				   "launch %llu t %llu: contract %d, libarenacert %d",
				   (unsigned long long)l, (unsigned long long)t,
				   x, y);
			if (x == 0)
				FUZZ_CHECK(memcmp(a, b, m->launches[l].word_count *
						  8) == 0,
					   "launch %llu t %llu: words differ",
					   (unsigned long long)l,
					   (unsigned long long)t);
			if (!last)
				break;
		}
	}
	free(a);
	free(b);
	ac_word_values_free(wv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena_image img;
	struct ac_model *m = NULL;
	struct ac_error err;
	int c = arena_image_parse(data, size, &img);
	int r = ac_model_read_image(data, size, &m, &err);
	FUZZ_CHECK((c == 0) == (r == 0), "parse: contract %d (byte %llu), "
		   "libarenacert %d (%s)", c,
		   (unsigned long long)img.error_at, r, r ? err.message : "");
	if (c != 0)
		return 0;
	uint64_t bytes = arena_program_index_bytes(&img);
	void *mem = aligned_alloc(16, (bytes + 16) & ~(uint64_t)15);
	FUZZ_CHECK(mem, "aligned_alloc %llu", (unsigned long long)bytes);
	struct arena_program cp;
	int ci = arena_program_index(&cp, &img, mem);
	ac_program *p = ac_program_new(m, &err);
	FUZZ_CHECK((ci == 0) == (p != NULL), "program: contract %d (byte %llu), "
		   "libarenacert %s", ci, (unsigned long long)img.error_at,
		   p ? "accepts" : err.message);
	if (p) {
		uint64_t ce = 0, le = 0;
		for (uint64_t i = 0; i < m->n_refs; i++) {
			const struct ac_ref *ref = &m->refs[i];
			int x = arena_ref_check(&cp, ref->first, ref->count, &ce);
			int y = ac_program_check_ref(p, ref, i, &le, NULL);
			FUZZ_CHECK((x == 0) == (y == 0) && ce == le,
				   "schedule[%llu]: contract %d (%llu), "
				   "libarenacert %d (%llu)",
				   (unsigned long long)i, x,
				   (unsigned long long)ce, y,
				   (unsigned long long)le);
			if (x)
				break;
		}
		compare_words(&cp, p, m);
		for (uint64_t l = 0; l < m->n_launches; l++) {
			uint64_t want = ac_program_launch_phase(p, l);
			FUZZ_CHECK(cp.phase_of[l] == (want == AC_NONE ?
						      ARENA_NONE32 : want),
				   "launch %llu: contract phase %u, "
				   "libarenacert %llu", (unsigned long long)l,
				   cp.phase_of[l], (unsigned long long)want);
		}
		ac_program_free(p);
	}
	free(mem);
	ac_model_free(m);
	return 0;
}
