/* SPDX-License-Identifier: MIT */
/* The Check suites of guard-tests; main.c runs them all. */
#ifndef GUARD_TESTS_SUITES_H
#define GUARD_TESTS_SUITES_H

#include <check.h>

Suite *suite_unit(void);      /* test_unit.c: the guard's parts, in process */
Suite *suite_record(void);    /* test_record.c: the record renderers agree */
Suite *suite_client(void);    /* test_client.c: guard-client under the guard */
Suite *suite_infer(void);     /* test_infer.c: arena-infer and the launcher */
Suite *suite_audit(void);     /* test_audit.c: the audit's bug classes */
Suite *suite_faults(void);    /* test_faults.c: memory, EINTR, races, log */
Suite *suite_fastpath(void);  /* test_fastpath.c: the cheap paths, safe */
Suite *suite_gate(void);      /* test_gate.c: one handler, seals, the holes */
Suite *suite_strict(void);    /* test_strict.c: ARENAGUARD_STRICT, spec 6 */
Suite *suite_output(void);    /* test_output.c: the guard's output rules */
Suite *suite_cache(void);     /* test_cache.c: the caches' byte budget */
Suite *suite_attack(void);    /* test_attack.c: ordinary clients vs the gate */
Suite *suite_ring(void);      /* test_ring.c: rings, slots, the fd table */
Suite *suite_api(void);       /* test_api.c: guard_api.h for applications */
Suite *suite_options(void);   /* test_options.c: options, logs, SUMMARY, gate */
Suite *suite_records(void);   /* test_records.c: JSON, suppressions, malformed */
Suite *suite_hostile(void);   /* test_hostile.c: seccomp, fork handlers */
Suite *suite_share(void);     /* test_share.c: vfork, clone, spawn; handlers */

/* Set by meson: the built binaries and libraries. */
#if !defined(AG_GUARD_LIB) || !defined(AG_ARENASIM) || \
    !defined(AG_GUARD_CLIENT) || !defined(AG_ARENA_INFER) || \
    !defined(AG_ARENAGUARD) || !defined(AG_ARENA_CERTIFY) || \
    !defined(AG_GUARD_FAILALLOC)
#error "the paths of the built programs must be defined by the build"
#endif
#ifndef AG_PRELOAD_FIRST
#define AG_PRELOAD_FIRST ""   /* a sanitizer runtime, and a space */
#endif

#endif
