/* SPDX-License-Identifier: MIT */
/*
 * report_fail.h - the failing objects of a verdict, for the HTML report.
 *
 * From a diagnostic (struct ac_diag): which columns the report must show
 * (fail_want), where to cut the address axis so a failing word is drawn
 * exactly (fail_cut), and the marks that point at the cause (fail_json):
 *
 *   (A), (B)  the tensors ("tensor") and the bytes two of them share
 *             ("overlap");
 *   (C)       the launch's column ("launch"), the word's interval
 *             ("word") and the nearest named ranges ("near");
 *   (D)       instance k ("instance"), its carried plane ("carried"), the
 *             earlier declaration j ("earlier"), the instance between
 *             ("intervening") and the plane it declared ("overwriter")
 *             over the carried plane's bytes ("overlap").
 *
 * and, whatever the verdict, the advisories' tensors (advisory_marks).
 */
#ifndef ARENAGUARD_REPORT_FAIL_H
#define ARENAGUARD_REPORT_FAIL_H

#include <jansson.h>

#include <arenaguard/certify.h>

#include "report_axis.h"
#include "report_timeline.h"

/* The columns to show, and the one repeat iteration (extra_repeat,
 * extra_ordinal; AC_NONE for none) a (C) word fails at. */
void fail_want(const ac_program *p, const struct ac_diag *d,
	       struct tl_want *want, uint64_t *extra_repeat,
	       uint64_t *extra_ordinal);

/* The failing word's interval inside [0, 2^64) as out[0..1]; 0 if none. */
int fail_cut(const struct ac_diag *d, uint64_t out[2]);

/*
 * {"cols": [[column, role]...], "marks": [{"role", "c0", "c1", "full",
 * "y": [[y0, y1]...], "title", "info": [[label, text]...]}...]}.  Adds a
 * column to tl for a failing object whose phase never executes.
 */
json_t *fail_json(const ac_program *p, const struct ac_diag *d,
		  const struct axis *a, struct timeline *tl,
		  const struct tl_found *found);

/*
 * The advisories' marks (spec section 6), role "advisory", one per
 * advisory: its tensor across the whole chart (bytes in no window are
 * reachable from any instance), titled as arena-certify explains it, the
 * first byte outside in its info.
 */
json_t *advisory_marks(const ac_program *p, const struct ac_advisory *adv,
		       uint64_t n, const struct axis *a);

#endif /* ARENAGUARD_REPORT_FAIL_H */
