/* SPDX-License-Identifier: MIT */
/*
 * The checks guard-client and guard-attack print: "ok: ..." or
 * "FAIL: ...", one line each, flushed (a forked child's lines are not
 * lost); a program exits 1 when any failed.  And the device steps every
 * subcommand starts with, checked.
 */
#ifndef GUARD_TESTS_CHECKS_H
#define GUARD_TESTS_CHECKS_H

#include <stdatomic.h>
#include <stdint.h>

#include "cdev.h"
#include "progs.h"

/* The FAIL lines printed so far (by this process). */
extern atomic_int failures;

void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* cdev_open, or exit 1 with a FAIL line. */
void open_or_exit(struct cdev *d, enum cpath path);
/* A program of this kind on d (checked): its handle. */
uint32_t program(struct cdev *d, enum prog_kind kind);
/* A schedule of prog with refs[0, n) appended by d->path (checked). */
uint32_t schedule(struct cdev *d, uint32_t prog, const struct ac_ref *refs,
		  uint32_t n);

#endif
