/* SPDX-License-Identifier: MIT */
/*
 * report_timeline.h - the columns and boxes of the HTML report.
 *
 * The walk (libarenacert's ac_walk, certify.h) gives the executed sequence as columns:
 * instances and folds.  A long one is cut down to at most TL_MAX_COLUMNS:
 * its start, its end and the neighbourhood of every column the report
 * must show (the failing objects) are kept; each stretch between them
 * becomes one *gap* column that says what it stands for.  The boxes of
 * report_live.h are computed over the whole walk (the state must be) and
 * then mapped onto the kept columns: a box inside one gap is counted, not
 * kept, and at most TL_MAX_BOXES are kept, those at wanted columns always.
 */
#ifndef ARENAGUARD_REPORT_TIMELINE_H
#define ARENAGUARD_REPORT_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include <arenaguard/certify.h>

#include "report_live.h"

#define TL_MAX_COLUMNS 3000
#define TL_MAX_BOXES 30000

enum tl_kind {
	TL_INSTANCE,   /* an instance (or its shown part) */
	TL_CONTINUED,  /* an instance that began inside a fold */
	TL_FOLD,       /* folded iterations or references */
	TL_GAP,        /* columns left out of a long walk */
	TL_EXTRA,      /* what never executes, for a failing object */
};

struct tl_col {
	enum tl_kind kind;
	uint64_t instance;      /* gap: its first instance; extra: AC_NONE */
	uint64_t instance_last; /* gap: its last instance */
	uint64_t phase;
	uint64_t ref;           /* reference of the first launch shown */
	uint64_t launch_first, ordinal_first;  /* launches shown, as written */
	uint64_t launch_last, ordinal_last;    /* (ordinal AC_NONE: none) */
	uint64_t launches;      /* launches shown in it */
	uint64_t columns;       /* gap: walk columns it stands for */
	struct ac_walk_fold fold;  /* fold */
};

/* A shown iteration of a repeat or of a run of identical references. */
struct tl_span {
	size_t first, last;     /* columns */
	struct ac_walk_iter it;
};

struct tl_box {
	uint32_t key, flags;    /* as report_live.h */
	size_t first, last;     /* columns */
};

/* What must be shown; AC_NONE where nothing is wanted. */
struct tl_want {
	uint64_t instance[3];
	uint64_t launch, ordinal;   /* ordinal AC_NONE: any iteration */
	uint64_t phase[2];
};

/* The columns of the wanted objects, or AC_NONE when not executed. */
struct tl_found {
	uint64_t instance[3];
	uint64_t launch;
	uint64_t phase[2];
};

struct timeline {
	struct tl_col *cols;
	size_t n_cols;
	struct tl_span *spans;
	size_t n_spans;
	struct tl_box *boxes;
	size_t n_boxes;
	uint64_t boxes_left_out;  /* inside gaps, or past TL_MAX_BOXES */
	uint64_t walk_columns;    /* columns of the whole walk */
	uint64_t instances;       /* instances it executes */
	struct live *live;        /* its keys */
};

/* NULL when memory runs out. */
struct timeline *timeline_new(const ac_program *program, ac_walk *walk,
			      const struct tl_want *want, struct tl_found *found);
void timeline_free(struct timeline *tl);

/* Appends an extra column for a failing object that never executes: a
 * launch (AC_NONE for none) of a phase (AC_NONE for none), with boxes for
 * the phase's planes.  Returns the column, or AC_NONE when memory runs
 * out. */
uint64_t timeline_add_extra(struct timeline *tl, const struct ac_model *m,
			    uint64_t phase, uint64_t launch);

/* The kept box of `key` that covers column c, or NULL. */
const struct tl_box *timeline_box_at(const struct timeline *tl, uint32_t key,
				     size_t c);

#endif /* ARENAGUARD_REPORT_TIMELINE_H */
