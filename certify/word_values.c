/* SPDX-License-Identifier: MIT */
/*
 * Spec 1.2's V(t) = B(t) + t * D: the value of a word at ordinal t of its
 * repeat, B(t) its table value of frame t mod F (or the written word), D
 * its summed deltas.  One word at a time (ac_program_word_value, for
 * diagnostics), or every word of a launch from an index made once
 * (ac_word_values, for a device executing the program).  (C) walks the
 * same values as intervals (words.c).
 */
#include <assert.h>
#include <stdlib.h>

#include "program_impl.h"

/* V(t) of word idx (an index into m->words) of a body of `rep`, whose
 * table slot is `slot` (-1: none) and deltas sum to d. */
static __int128 value_at(const struct ac_model *m, const struct ac_repeat *rep,
			 uint64_t idx, int64_t slot, __int128 d, uint64_t t)
{
	__int128 b = m->words[idx];
	if (slot >= 0) {
		assert(rep->frame_count && (uint64_t)slot < rep->slot_count);
		b = m->frame_values[rep->frame_value_first +
				    (t % rep->frame_count) * rep->slot_count +
				    (uint64_t)slot];
	}
	return b + (__int128)t * d;
}

struct ac_wide ac_program_word_value(const ac_program *p, uint64_t launch,
				     uint64_t word, uint64_t t)
{
	const struct ac_model *m = p->m;
	uint64_t idx = m->launches[launch].word_first + word;
	__int128 v = m->words[idx];
	uint64_t r = ac_program_repeat_of(p, launch);
	if (r != AC_NONE) {
		const struct ac_repeat *rep = &m->repeats[r];
		__int128 d = 0;
		int64_t slot = -1;
		for (uint32_t i = 0; i < rep->delta_count; i++) {
			const struct ac_delta *x = &m->deltas[rep->delta_first + i];
			if (x->launch == launch && x->word == word)
				d += x->delta;
		}
		for (uint32_t s = 0; s < rep->slot_count && rep->frame_count; s++) {
			const struct ac_slot *x = &m->slots[rep->slot_first + s];
			if (x->launch == launch && x->word == word)
				slot = s;
		}
		v = value_at(m, rep, idx, slot, d, t);
	}
	return (struct ac_wide){ (int64_t)(v >> 64), (uint64_t)v };
}

struct ac_word_values {
	const struct ac_program *p;
	/* per word of m->words, for body words: D and the table slot (-1:
	 * none); NULL when the program has no repeats */
	__int128 *delta_sum;
	int64_t *slot_of;
};

ac_word_values *ac_word_values_new(const ac_program *p)
{
	const struct ac_model *m = p->m;
	ac_word_values *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->p = p;
	if (m->n_repeats == 0)
		return w;
	w->delta_sum = calloc(m->n_words + 1, sizeof(*w->delta_sum));
	w->slot_of = malloc((m->n_words + 1) * sizeof(*w->slot_of));
	if (!w->delta_sum || !w->slot_of) {
		ac_word_values_free(w);
		return NULL;
	}
	for (uint64_t i = 0; i < m->n_words; i++)
		w->slot_of[i] = -1;
	/* ac_program_new checked that deltas and slots name words of their
	 * body (validate.c) */
	for (uint32_t r = 0; r < m->n_repeats; r++) {
		const struct ac_repeat *rep = &m->repeats[r];
		for (uint32_t k = 0; k < rep->delta_count; k++) {
			const struct ac_delta *d = &m->deltas[rep->delta_first + k];
			assert(d->launch < m->n_launches &&
			       d->word < m->launches[d->launch].word_count);
			w->delta_sum[m->launches[d->launch].word_first + d->word] +=
				d->delta;
		}
		for (uint32_t s = 0; rep->frame_count && s < rep->slot_count; s++) {
			const struct ac_slot *sl = &m->slots[rep->slot_first + s];
			assert(sl->launch < m->n_launches &&
			       sl->word < m->launches[sl->launch].word_count);
			w->slot_of[m->launches[sl->launch].word_first + sl->word] = s;
		}
	}
	return w;
}

void ac_word_values_free(ac_word_values *w)
{
	if (!w)
		return;
	free(w->delta_sum);
	free(w->slot_of);
	free(w);
}

int ac_word_values_at(const ac_word_values *w, uint64_t launch, uint64_t t,
		      uint64_t *out)
{
	const struct ac_model *m = w->p->m;
	assert(launch < m->n_launches);
	const struct ac_launch *la = &m->launches[launch];
	uint64_t r = w->delta_sum ? ac_program_repeat_of(w->p, launch) : AC_NONE;
	if (r == AC_NONE) {
		for (uint32_t i = 0; i < la->word_count; i++)
			out[i] = m->words[la->word_first + i];
		return 0;
	}
	const struct ac_repeat *rep = &m->repeats[r];
	for (uint32_t i = 0; i < la->word_count; i++) {
		uint64_t idx = la->word_first + i;
		__int128 v = value_at(m, rep, idx, w->slot_of[idx],
				      w->delta_sum[idx], t);
		if (v < 0 || v > (__int128)UINT64_MAX)
			return -1;
		out[i] = (uint64_t)v;
	}
	return 0;
}
