/* SPDX-License-Identifier: MIT */
/*
 * A fake driver under the guard's core, in the test process (fake.c):
 * it hands out handles and sequence numbers and checks nothing, so that
 * a test sees exactly what the guard does and what it lets through.
 */
#ifndef GUARD_TESTS_FAKE_H
#define GUARD_TESTS_FAKE_H

#include <stdint.h>

#include "guard.h"
#include "progs.h"

/* Requests that reached the driver, by DRM_ARENA_* number. */
extern int fake_calls[16];

/* The guard in enforce mode on the fake driver, with empty caches,
 * logging to scratch_path("log"); nothing failing. */
void fake_setup(void);

/* The next `times` requests `cmd` fail in the driver with -err before
 * it does anything (EINTR: a signal came; EAGAIN). */
void fake_fail(unsigned int cmd, int err, int times);

/* A guarded request on f (as fd 42): 0 or -errno. */
int fake_call(struct ag_file *f, unsigned int cmd, void *arg);

/* Requests that must succeed: a program; a schedule of n references
 * appended `batch` at a time.  The handles. */
uint32_t fake_program(struct ag_file *f, enum prog_kind kind);
uint32_t fake_schedule(struct ag_file *f, uint32_t prog,
		       const struct ac_ref *refs, uint32_t n, uint32_t batch);
int fake_submit(struct ag_file *f, uint32_t s);
/* A schedule of the good program with the (D) references on f, whose
 * submit the guard blocks (PROG_BAD_D_VERDICT): its handle. */
uint32_t fake_bad_d(struct ag_file *f);

#endif
