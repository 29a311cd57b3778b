/* SPDX-License-Identifier: MIT */
/*
 * Deduplication of the guard's records (dedup.c): whether a record's
 * key (a program's digest and verdict, a reason, "out of memory REQ")
 * was reported already in this process.
 */
#ifndef ARENAGUARD_SHIM_DEDUP_H
#define ARENAGUARD_SHIM_DEDUP_H

/* Whether key (a C string) was reported before: 1, or 0 after recording
 * it as reported now.  Out of memory the table takes keys while it has
 * room; 1 also when it is full and cannot grow: a repeat is silenced
 * rather than a flood written.  Takes
 * report_lock: not called with it held. */
int ag_dedup_seen(const char *key);

/* Forgets what was reported (tests).  Takes report_lock. */
void ag_report_reset(void);

/* report_lock held across fork (ag_report_lock_all takes it before
 * out_lock); ag_dedup_unlock in the parent and the child after. */
void ag_dedup_lock(void);
void ag_dedup_unlock(void);

#endif
