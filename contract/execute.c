// SPDX-License-Identifier: MIT
/*
 * The device's walk of a schedule (execute.h).  References were checked
 * when appended (arena_ref_check), so one that holds a body's launch
 * starts at the body's first.
 */
#include "execute.h"

/* Launch l is about to run (its words valued): when it starts an
 * instance, poison its phase's fresh planes.
 */
static int enter(const struct arena_program *p, struct arena_walker *w, u64 l)
{
	u32 phase = p->phase_of[l];
	u64 first, count;
	int rc = 0;

	if (w->in_instance && phase == w->phase)
		return 0;
	w->in_instance = 1;
	w->phase = phase;
	if (phase == ARENA_NONE32)
		return 0;
	arena_image_phase_planes(p->image, phase, &first, &count);
	for (u64 k = first; k < first + count && !rc; k++) {
		struct arena_plane pl;

		arena_image_plane(p->image, k, &pl);
		if (!pl.carried && pl.size)
			rc = w->poison(w, pl.offset, pl.size);
	}
	return rc;
}

static int run_at(const struct arena_program *p, struct arena_walker *w,
		  u64 l, u64 t)
{
	struct arena_launch la;
	int rc;

	arena_image_launch(p->image, l, &la);
	if (arena_words_at(p, l, t, w->scratch))
		return -EFAULT;
	if (w->poison) {
		rc = enter(p, w, l);
		if (rc)
			return rc;
	}
	return w->launch(w, l, w->scratch, la.word_count);
}

static int walk_ref(const struct arena_program *p, const struct arena_ref *ref,
		    struct arena_walker *w)
{
	u64 l = ref->first, end = ref->first + ref->count;
	int rc = 0;

	while (l < end && !rc) {
		struct arena_repeat rep;

		if (p->repeat_of[l] == ARENA_NONE32) {
			rc = run_at(p, w, l, 0);
			l++;
			continue;
		}
		arena_image_repeat(p->image, p->repeat_of[l], &rep);
		for (u64 t = 0; t < rep.iterations && !rc; t++)
			for (u64 b = l; b < l + rep.count && !rc; b++)
				rc = run_at(p, w, b, t);
		l += rep.count;
	}
	return rc;
}

int arena_walk(const struct arena_program *p, const struct arena_ref *refs,
	       u64 n_refs, struct arena_walker *w)
{
	int rc = 0;

	w->in_instance = 0;
	for (u64 i = 0; i < n_refs && !rc; i++)
		rc = walk_ref(p, &refs[i], w);
	return rc;
}
