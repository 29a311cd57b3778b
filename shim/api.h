/* SPDX-License-Identifier: MIT */
/*
 * The application's interface's state (api.c).
 */
#ifndef ARENAGUARD_SHIM_API_H
#define ARENAGUARD_SHIM_API_H

#include "submit.h"

struct ag_sched;
struct ag_verdict;

/* api.c: keeps the refusal as the calling thread's last one, for
 * arenaguard_last_refusal (include/arenaguard/guard_api.h); decide.c
 * calls it for every refusal, reported or not, and uring.c for a submit
 * on a slot it cannot know.  Same arguments. */
void ag_api_note_refusal(const struct ag_submit *sub,
			 const struct ag_sched *s, const struct ag_verdict *v,
			 const char *why, int blocked);

#endif
