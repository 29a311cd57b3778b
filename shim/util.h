/* SPDX-License-Identifier: MIT */
/*
 * Small things every file of the guard may use (util.c): strings, the
 * clock, a digest as text; and what the re-entry flag means to the
 * guard.  Calls nothing of the guard.
 */
#ifndef ARENAGUARD_SHIM_UTIL_H
#define ARENAGUARD_SHIM_UTIL_H

#include <stdint.h>

#include "reentry.h"

/*
 * The re-entry flag (the preload core's, preload/reentry.h:
 * preload_enter, preload_leave, preload_inside) counts how deep this
 * thread is in the guard's code: a guarded request, a
 * checked submit or enter, the ring bookkeeping, a probe, the start-up.
 * The guard's own calls to the driver go to it directly (ag_driver_ioctl,
 * the next functions), never through the interposed ones, so a guarded
 * request that arrives while it is nonzero comes from a signal handler
 * that interrupted the guard (its thread may hold the guard's locks):
 * it is refused with EDEADLK and a record (ag_report_reentered), never
 * forwarded.
 */

/* strdup(s), NULL for NULL (and when memory runs out). */
char *ag_strdup(const char *s);
/* A malloc'ed printf-formatted string, or NULL when memory runs out. */
char *ag_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The lowest number the guard's own descriptors take (its outputs, the
 * fd table's held copies): high, away from the numbers applications
 * use and reuse, within the descriptor limit. */
int ag_high_fd_base(void);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t ag_now_ns(void);
/* A program digest as the 32 lower-case hex digits records show. */
struct ac_digest;
void ag_digest_text(const struct ac_digest *d, char out[33]);

#endif
