/* SPDX-License-Identifier: MIT */
/*
 * The guard's counters (defined in report.c).
 */
#ifndef ARENAGUARD_SHIM_STATS_H
#define ARENAGUARD_SHIM_STATS_H

#include <stdatomic.h>

struct ag_stats {
	atomic_ullong programs_certified;   /* images read and certified */
	atomic_ullong program_hits;         /* images found certified */
	atomic_ullong schedules_certified;  /* verdicts computed */
	atomic_ullong verdict_hits;         /* verdicts found */
	atomic_ullong submissions;
	atomic_ullong blocked;
	atomic_ullong warned;
	atomic_ullong records;              /* distinct records written */
	atomic_ullong records_lost;         /* records no output took */
	atomic_ullong certify_ns;
	atomic_ullong unchecked_sqes;       /* seen too late */
	atomic_ullong suppressed;           /* failing, let through by a
					     * suppression rule */
	atomic_ullong repeats;              /* refusals not recorded: one
					     * like it was already */
};

extern struct ag_stats ag_stats;

#endif
