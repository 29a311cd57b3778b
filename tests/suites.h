/* SPDX-License-Identifier: MIT */
/* The Check suites of arenacert-tests; main.c runs them all. */
#ifndef ARENAGUARD_TEST_SUITES_H
#define ARENAGUARD_TEST_SUITES_H

#include <check.h>

Suite *suite_examples(void);     /* test_examples.c: shared/spec/examples */
Suite *suite_rules(void);        /* test_rules.c: every rule at its boundary */
Suite *suite_schedule(void);     /* test_schedule.c: incremental appends, digest */
Suite *suite_json(void);         /* test_json.c: JSON reader/writer */
Suite *suite_json_ways(void);    /* test_json_ways.c: fast JSON vs jansson */
Suite *suite_image(void);        /* test_image.c: binary image reader/writer */
Suite *suite_differential(void); /* test_differential.c: vs the naive checker */
Suite *suite_cli(void);          /* test_cli.c: arena-certify's contract */
Suite *suite_workloads(void);    /* test_workloads.c: bench/workload's programs */
Suite *suite_parallel(void);     /* test_parallel.c: certification on threads */
Suite *suite_search(void);       /* test_search.c: (C) over many named ranges */
Suite *suite_advisory(void);     /* test_advisory.c: spec 6, advisories */
Suite *suite_followed(void);     /* test_followed.c: (D)'s followed planes */
Suite *suite_replay(void);       /* test_replay.c: (D)'s replay against the walk */
Suite *suite_sort(void);         /* test_sort.c: the sort, adversarial orders */
Suite *suite_result_json(void);  /* test_result_json.c: ac_certify_json */
Suite *suite_walk(void);         /* test_walk.c: ac_walk, instances numbered */
Suite *suite_builder(void);      /* test_builder.c: ac_builder, call by call */

/* Directory of the read-only shared/spec folder (set by meson). */
#ifndef AG_SPEC_DIR
#error "AG_SPEC_DIR must be defined by the build"
#endif

#endif
