// SPDX-License-Identifier: MIT
/*
 * The device's walk of a schedule (execute.h).  References were checked
 * when appended (arena_ref_check), so one that holds a body's launch
 * starts at the body's first.
 */
#include "execute.h"

static int run_at(const struct arena_program *p, struct arena_walker *w,
		  u64 l, u64 t)
{
	struct arena_launch la;

	arena_image_launch(p->image, l, &la);
	if (arena_words_at(p, l, t, w->scratch))
		return -EFAULT;
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

	for (u64 i = 0; i < n_refs && !rc; i++)
		rc = walk_ref(p, &refs[i], w);
	return rc;
}
