/* SPDX-License-Identifier: MIT */
/* The Check suites of arena-infer-tests; main.c runs them all. */
#ifndef ARENA_EXAMPLE_SUITES_H
#define ARENA_EXAMPLE_SUITES_H

#include <check.h>

Suite *suite_planner(void);  /* test_planner.c: the plans' certificates */
Suite *suite_host(void);     /* test_host.c: plans run by interp.c */
Suite *suite_device(void);   /* test_device.c: arena-infer on the sim */
Suite *suite_serve(void);    /* test_serve.c: arena-serve under the guard
                                (serve-tests, serve_main.c) */
Suite *suite_health(void);   /* test_health.c: arena-serve's readiness
                                (serve-tests) */

#endif
