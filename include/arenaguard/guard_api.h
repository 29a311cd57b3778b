/* SPDX-License-Identifier: MIT */
/*
 * arenaguard/guard_api.h - what an application can ask libarenaguard
 * while it runs under it, without linking it.
 *
 * The guard is preloaded (LD_PRELOAD) or absent, so an application finds
 * these functions at run time, as the sanitizers' __sanitizer_* ones are
 * found:
 *
 *     arenaguard_get_counters_fn *get = (arenaguard_get_counters_fn *)
 *             dlsym(RTLD_DEFAULT, ARENAGUARD_GET_COUNTERS);
 *     struct arenaguard_counters c;
 *     if (get && get(&c, sizeof(c)) > 0) ...   (NULL: no guard loaded)
 *
 * Both functions are safe to call from any thread, at any time after the
 * guard is loaded, also with ARENAGUARD=off (the counters then stay 0).
 * They take no lock the application could hold, allocate nothing and
 * never fail the process.
 *
 * The ABI grows only at the end: a new counter is a new field after the
 * last one (one line in ARENAGUARD_COUNTERS below, in order), so a
 * caller built with an older header passes a smaller size and gets the
 * fields it knows; a caller built with a newer header learns from `size`
 * (out) how many the guard it runs under filled.
 */
#ifndef ARENAGUARD_GUARD_API_H
#define ARENAGUARD_GUARD_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The counters, in ABI order (append only): X(name, help).  Each is a
 * count since the guard was loaded in this process (a forked child
 * starts from its parent's counts), never reset.
 */
#define ARENAGUARD_COUNTERS(X) \
	X(programs_certified, "program images read and certified") \
	X(program_hits, "program images found certified already") \
	X(schedules_certified, "schedule verdicts computed") \
	X(verdict_hits, "schedule verdicts found computed already") \
	X(submissions, "submissions decided") \
	X(blocked, "submissions blocked (enforce mode)") \
	X(warned, "failing submissions let through (warn mode)") \
	X(records, "distinct records written") \
	X(records_lost, "records no output took") \
	X(certify_ns, "nanoseconds spent certifying") \
	X(unchecked_sqes, "io_uring SQEs seen too late to check") \
	X(suppressed, "failing submissions let through by a suppression rule")

/* The guard's mode, as ARENAGUARD set it. */
enum arenaguard_mode {
	ARENAGUARD_MODE_OFF = 0,
	ARENAGUARD_MODE_WARN = 1,
	ARENAGUARD_MODE_ENFORCE = 2,
};

struct arenaguard_counters {
	uint32_t size;      /* out: bytes of this struct the guard filled */
	uint32_t mode;      /* out: enum arenaguard_mode */
#define ARENAGUARD_COUNTER_FIELD(name, help) uint64_t name;
	ARENAGUARD_COUNTERS(ARENAGUARD_COUNTER_FIELD)
#undef ARENAGUARD_COUNTER_FIELD
};

/*
 * Fills out[0, min(size, sizeof) ) with the counters (a counter that
 * does not fit whole is left out) and returns the bytes filled, also in
 * out->size; -1 when size < 8 (not even size and mode fit) or out is
 * NULL.
 */
int arenaguard_get_counters(struct arenaguard_counters *out, size_t size);
typedef int arenaguard_get_counters_fn(struct arenaguard_counters *out,
				       size_t size);
#define ARENAGUARD_GET_COUNTERS "arenaguard_get_counters"

/*
 * The last submission the guard refused (enforce mode: blocked) or let
 * through failing (warn mode) in the calling thread: its report's first
 * lines (what was submitted, the verdict, the diagnostic), as the guard
 * logs them but for every refusal, also one whose report was not
 * repeated.  Copies up to size - 1 bytes and a NUL into buf and returns
 * the full length (0: this thread has none since it started, or since
 * the last call with `clear` nonzero, which also forgets it); -1 when buf
 * is NULL or size is 0.
 */
long arenaguard_last_refusal(char *buf, size_t size, int clear);
typedef long arenaguard_last_refusal_fn(char *buf, size_t size, int clear);
#define ARENAGUARD_LAST_REFUSAL "arenaguard_last_refusal"

/*
 * How the guard is set up in this process, for an operator's view (a
 * server's /metrics and /health): what decides its submissions.  Set
 * when the guard loads; the same in a forked child.  Grows only at the
 * end, a 4-byte field at a time, as the counters do.
 */
struct arenaguard_config {
	uint32_t size;          /* out: bytes of this struct the guard filled */
	uint32_t mode;          /* out: enum arenaguard_mode (ARENAGUARD) */
	uint32_t strict;        /* out: 1 when ARENAGUARD_STRICT refuses
				 * programs with advisories, else 0 */
	uint32_t suppressions;  /* out: suppression rules in effect (read
				 * from the suppressions file; 0 when none,
				 * or in mode off) */
};

/*
 * Fills out[0, min(size, sizeof) ) with the configuration, whole fields
 * only, and returns the bytes filled, also in out->size; -1 when size < 8
 * or out is NULL.  Safe as arenaguard_get_counters is.
 */
int arenaguard_get_config(struct arenaguard_config *out, size_t size);
typedef int arenaguard_get_config_fn(struct arenaguard_config *out,
				     size_t size);
#define ARENAGUARD_GET_CONFIG "arenaguard_get_config"

#ifdef __cplusplus
}
#endif

#endif
