/* SPDX-License-Identifier: MIT */
/*
 * The test clients' verdict lines (checks.c): "ok: ..." or "FAIL: ...",
 * flushed at once (a child that dies keeps what it said), and the count
 * of FAILs so far.
 */
#ifndef GUARD_TESTS_CHECKS_H
#define GUARD_TESTS_CHECKS_H

#include <stdatomic.h>

extern atomic_int failures;

void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
