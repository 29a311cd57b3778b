/* SPDX-License-Identifier: MIT */
/*
 * A fake driver under the guard's core, in the test process (fake.c):
 * it hands out handles (lowest free first, as a kernel's idr) and
 * sequence numbers, and checks nothing but what a sealed driver checks
 * (uapi.h "Sealed submissions", with common/seal.c): so that a test sees
 * exactly what the guard does and what it lets through.  Its state is in
 * shared memory: a forked child using the same fds is another process
 * sharing the open files, as with a kernel driver.
 */
#ifndef GUARD_TESTS_FAKE_H
#define GUARD_TESTS_FAKE_H

#include <stdint.h>

#include <linux/io_uring.h>

#include <arenaguard/certify.h>

#include "progs.h"

struct ag_file;

/* Requests that reached the driver, by DRM_ARENA_* number. */
extern int fake_calls[16];

/* The fds of the fake's two open files: 42 and 43 (a copy of 42) are
 * the first, 44 the second; any other fd is the first too. */
#define FAKE_FD 42
#define FAKE_FD_COPY 43
#define FAKE_FD_OTHER 44

/* The guard in enforce mode on the fake driver, with empty caches,
 * logging to scratch_path("log"); nothing failing; a driver with seals
 * whose open files are not sealed yet. */
void fake_setup(void);

/* From now on the driver has no seals: SEAL and SUBMIT_SEALED answer
 * EINVAL, as a driver without them (an unknown number in its range). */
void fake_without_seals(void);

/* From now on SEAL seals and answers these `algorithms` (uapi.h's bit
 * set; fake_setup: SHA-256 alone), and SUBMIT_SEALED takes only them. */
void fake_seal_algorithms(uint32_t algorithms);

/* fn (NULL: none) runs at the start of every SCHEDULE_APPEND the driver
 * gets, before it looks the schedule up: another thread's request
 * landing in the middle of one. */
void fake_on_append(void (*fn)(void));

/* fn (NULL: none) runs at the start of every PROGRAM_CREATE the driver
 * gets: a driver slow to create (it may block there). */
void fake_on_create(void (*fn)(void));

/* The next `times` requests `cmd` fail in the driver with -err before
 * it does anything (EINTR: a signal came; EAGAIN). */
void fake_fail(unsigned int cmd, int err, int times);

/* A guarded request on f (as fd 42): 0 or -errno. */
int fake_call(struct ag_file *f, unsigned int cmd, void *arg);
/* The same on fd. */
int fake_call_fd(struct ag_file *f, int fd, unsigned int cmd, void *arg);

/* Requests that must succeed: a program; a schedule of n references
 * appended `batch` at a time.  The handles. */
uint32_t fake_program(struct ag_file *f, enum prog_kind kind);
uint32_t fake_schedule(struct ag_file *f, uint32_t prog,
		       const struct ac_ref *refs, uint32_t n, uint32_t batch);
int fake_submit(struct ag_file *f, uint32_t s);
/* A schedule of the good program with the (D) references on f, whose
 * submit the guard blocks (PROG_BAD_D_VERDICT): its handle. */
uint32_t fake_bad_d(struct ag_file *f);

/* The kernel running one SQE on the fake (a URING_CMD on fd, or the
 * NOP the guard injected): its CQE's res. */
int fake_run_sqe(const struct io_uring_sqe *sqe);

/* Submissions the driver ran, and the last one's schedule and its
 * number of references (the driver's own). */
struct fake_ran {
	int n;
	uint32_t schedule;
	uint64_t n_refs;
};
struct fake_ran fake_ran(void);

#endif
