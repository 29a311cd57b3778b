/* SPDX-License-Identifier: MIT */
/*
 * Small things every file may use: the re-entry flag and ag_strdup
 * (load.c), ag_printf and the clock (report.c).
 */
#ifndef ARENAGUARD_SHIM_UTIL_H
#define ARENAGUARD_SHIM_UTIL_H

#include <stdint.h>

/*
 * How deep this thread is in the guard's code: a guarded request, a
 * checked submit or enter, the ring bookkeeping, a probe, the start-up.
 * The guard's own calls to the driver go to it directly (ag_driver_ioctl,
 * the next functions), never through the interposed ones, so a guarded
 * request that arrives while it is nonzero comes from a signal handler
 * that interrupted the guard (its thread may hold the guard's locks):
 * it is refused with EDEADLK and a record (ag_report_reentered), never
 * forwarded.  initial-exec: the library is preloaded, and a TLS access
 * must never allocate.
 */
extern __thread int ag_inside __attribute__((tls_model("initial-exec")));

char *ag_strdup(const char *s);
char *ag_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t ag_now_ns(void);

#endif
