/* SPDX-License-Identifier: MIT */
/*
 * The submit-time decision (decide.c).
 */
#ifndef ARENAGUARD_SHIM_DECIDE_H
#define ARENAGUARD_SHIM_DECIDE_H

#include "submit.h"

struct ag_sched;

/*
 * The submit-time decision for schedule s (locked; NULL: unknown to the
 * guard): 0 allow, -EPERM block (enforce mode), after reporting.
 */
int ag_decide(struct ag_sched *s, const struct ag_submit *sub);

#endif
