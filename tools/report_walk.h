/* SPDX-License-Identifier: MIT */
/*
 * report_walk.h - the executed sequence of a program, folded, for the
 * HTML report (html_report.h).
 *
 * The walk follows the schedule as certificate.md section 1.3 executes it
 * and cuts it into instances as (D) does (maximal runs of one phase,
 * across references and iterations), numbering them exactly.  It never
 * unrolls anything long: a repeat body runs its iterations 0, 1, N-1 and
 * any one extra ordinal asked for, and the iterations between are one
 * fold whose instances are counted, not visited.  A stretch of identical
 * consecutive references is folded the same way.  This is exact for the
 * same reason it is in certify/schedule.c: a body's declarations depend
 * only on the body, so from its second run on every run starts from the
 * same state, and instance numbers after a fold are counted exactly.
 *
 * Launches without a declared phase (only in programs that fail (C)) form
 * runs of their own, numbered like instances.
 */
#ifndef ARENAGUARD_REPORT_WALK_H
#define ARENAGUARD_REPORT_WALK_H

#include <stdint.h>

#include <arenaguard/certify.h>

/* A new column: an instance starts, or one that began in a fold shows. */
struct walk_col {
	uint64_t instance;
	uint64_t phase;       /* AC_NONE: launches without a declared phase */
	uint64_t ref;         /* schedule index of its first shown launch */
	int continued;        /* began inside folded iterations */
};

/* Iterations (or identical references) counted, not visited. */
struct walk_fold {
	int of_refs;          /* 1: references; 0: a repeat's iterations */
	uint64_t index;       /* the repeat, or the first reference of the run */
	uint64_t first, last; /* the folded iterations, from 0 */
	uint64_t total;       /* iterations (or references) in all */
	uint64_t instances;   /* instances that start inside the fold ... */
	uint64_t first_instance;  /* ... from this one */
};

/* A shown iteration of a repeat (of_refs 0) or of a reference run. */
struct walk_iter {
	int of_refs;
	uint64_t index;       /* the repeat, or the first reference of the run */
	uint64_t iteration;
	uint64_t total;
};

struct walk_hooks {
	void *ctx;
	void (*column)(void *ctx, const struct walk_col *col);
	/* launches [first, first + count) of one phase join the last column */
	void (*run)(void *ctx, uint64_t first, uint64_t count,
		    uint64_t ordinal, uint64_t ref);
	void (*fold)(void *ctx, const struct walk_fold *fold);
	void (*iter_begin)(void *ctx, const struct walk_iter *it);
	void (*iter_end)(void *ctx);
};

struct walk;

/*
 * Prepares a walk of the program's own schedule.  extra_repeat and
 * extra_ordinal (AC_NONE for none) ask that one more iteration of one
 * repeat be shown, for a (C) failure at that ordinal.  NULL when memory
 * runs out.
 */
struct walk *walk_new(const ac_program *program, uint64_t extra_repeat,
		      uint64_t extra_ordinal);
void walk_free(struct walk *w);

/* Runs the whole walk, calling the hooks in order, and returns the number
 * of instances executed.  May be run again. */
uint64_t walk_run(struct walk *w, const struct walk_hooks *hooks);

/* The iterations of a repeat of n the walk shows: 0, 1, extra (AC_NONE
 * for none) and n - 1, those below n, sorted, each once.  Returns how
 * many (at most WALK_SHOWN). */
#define WALK_SHOWN 4
int walk_shown(uint64_t n, uint64_t extra, uint64_t out[WALK_SHOWN]);

/* The phase of launch l (AC_NONE if none), and the repeat whose body
 * holds it (AC_NONE if none). */
uint64_t walk_phase(const struct walk *w, uint64_t launch);
uint64_t walk_repeat(const struct walk *w, uint64_t launch);

#endif /* ARENAGUARD_REPORT_WALK_H */
