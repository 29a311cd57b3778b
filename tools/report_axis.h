/* SPDX-License-Identifier: MIT */
/*
 * report_axis.h - the address axis of the HTML report.
 *
 * Device addresses go down the page.  Windows and tensors that overlap or
 * touch are one *pane*; panes are stacked in address order with a space
 * between, so an arena at 0x300000000 is not a sliver of a 12 GiB axis.
 * Inside a pane the axis is cut at every tensor and window endpoint (and
 * at any extra point asked for: a failing word's interval) into
 * elementary intervals, each drawn in proportion to its size, but no
 * tensor thinner than a minimum and no empty stretch taller than a
 * maximum: small planes stay visible, vast empty windows do not crowd
 * them out.  Positions are integers in [0, AXIS_UNITS).
 */
#ifndef ARENAGUARD_REPORT_AXIS_H
#define ARENAGUARD_REPORT_AXIS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <arenaguard/program.h>

#define AXIS_UNITS 1000000u

struct axis;

/* extra: n_extra inclusive intervals [lo, hi] (pairs) to cut at too; they
 * are drawn but do not join panes.  NULL when memory runs out. */
struct axis *axis_new(const struct ac_model *m, const uint64_t *extra,
		      size_t n_extra);
void axis_free(struct axis *a);

/* Where the bytes [lo, hi] (inclusive, inside one pane) are drawn. */
void axis_place(const struct axis *a, uint64_t lo, uint64_t hi,
		uint32_t *y0, uint32_t *y1);

/* The drawn pieces of [lo, hi], which may cross panes and gaps between
 * them: up to max (y0, y1) pairs into out.  Returns how many. */
size_t axis_cover(const struct axis *a, uint64_t lo, uint64_t hi,
		  uint32_t (*out)[2], size_t max);

/* [{"y0", "y1", "lo", "hi", "windows": [[y0, y1, name, index]...],
 *   "ticks": [[y, "0x..", kind]...]}...], kind 1 tensor, 0 empty. */
json_t *axis_json(const struct axis *a);

#endif /* ARENAGUARD_REPORT_AXIS_H */
