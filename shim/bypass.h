/* SPDX-License-Identifier: MIT */
/*
 * A library preloaded ahead of the guard (bypass.c).
 */
#ifndef ARENAGUARD_SHIM_BYPASS_H
#define ARENAGUARD_SHIM_BYPASS_H

/* bypass.c: says once, at start, which library preloaded before the
 * guard defines functions it interposes (the guard would not see the
 * requests made through them). */
void ag_bypass_check(void);

#endif
