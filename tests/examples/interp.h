/* SPDX-License-Identifier: MIT */
/*
 * A host-side interpreter of a plan's program: the device's kernels
 * (uapi.h) over the plan's windows in host memory, walking the schedule
 * with its Repeat, and optionally poisoning each phase instance's fresh
 * planes with 0xFF bytes as the simulator's ARENASIM_POISON=1 does.  It
 * lets the planner's launches be checked against the reference without
 * a device.
 */
#ifndef ARENA_EXAMPLE_INTERP_H
#define ARENA_EXAMPLE_INTERP_H

#include "model.h"
#include "planner.h"

/* Runs the program once and copies the output global to out.  0, or -1
 * when a launch faults (an address range outside every window, an
 * unknown kernel) or memory runs out. */
int interp_run(const struct plan *plan, const struct model *m, int poison,
	       float *out);

#endif
