/* SPDX-License-Identifier: MIT */
/*
 * Faults around the guard (docs/guard.md, "Faults"): memory running out
 * at each allocation on the way to a submission; a driver interrupted
 * by a signal; a schedule destroyed, or its fd closed, while another
 * thread submits it; fork with schedules half built; a log on a full
 * disk.  Each asserts what the application sees, and that certified
 * schedules still run and failing ones are still blocked.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <liburing.h>

#include "devices.h"
#include "fake.h"
#include "mirror.h"
#include "spawn.h"
#include "suites.h"
#include "uring.h"

/* The guard whose allocations fail on demand, then the simulator. */
#define PRELOAD_FAILALLOC \
	"LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_FAILALLOC " " AG_ARENASIM

static const char *const paths[] = { "ioctl", "uring", "fixed" };

/* ---- no memory ---- */

/* guard-client nomem: every allocation the guard makes for a certified
 * and a blocked submission fails in turn, alone and with all after it.
 * The client checks each request (ENOMEM, then the same request works
 * with memory back; outputs right); here, that the sweep did sweep and
 * the log said why. */
START_TEST(test_nomem)
{
	char log_env[300];
	snprintf(log_env, sizeof(log_env), "ARENAGUARD_LOG=%s",
		 scratch_path("guard.log"));
	const char *env[] = { PRELOAD_FAILALLOC, log_env, NULL };
	struct run r;
	client(&r, env, (const char *[]){ "--path", paths[_i], "nomem",
					  NULL });
	assert_clean(&r);
	unsigned long once = 0, every = 0;
	int refused = 0;
	const char *p = strstr(r.out, "ok: swept the guard's allocations");
	ck_assert_msg(p && sscanf(p, "ok: swept the guard's allocations of a "
				  "pass, each failing alone (%lu) and with all "
				  "after it (%lu): %d", &once, &every,
				  &refused) == 3, "%s", r.out);
	/* Image copy, model, program, states, maps, references, verdict:
	 * dozens, and most of them refuse their request. */
	ck_assert_uint_ge(once, 20);
	ck_assert_uint_ge(every, 20);
	ck_assert_int_ge(refused, 20);
	char *log = slurp(scratch_path("guard.log"));
	ck_assert_msg(strstr(log, "arenaguard: out of memory: PROGRAM_CREATE "
			     "refused with ENOMEM (pid "), "%s", log);
	ck_assert_msg(strstr(log, "arenaguard: out of memory: SCHEDULE_CREATE "
			     "refused with ENOMEM (pid "), "%s", log);
	ck_assert_msg(strstr(log, _i ? "out of memory: URING_CMD APPEND"
				     : "out of memory: SCHEDULE_APPEND"),
		      "%s", log);
	ck_assert_msg(strstr(log, ": cannot certify\narenaguard:   out of "
			     "memory while certifying: refused with ENOMEM"),
		      "%s", log);
	/* Still blocked, memory or not, with its diagnostic. */
	ck_assert_msg(strstr(log, "verdict 8 (D)"), "%s", log);
	free(log);
	run_free(&r);
}
END_TEST

/* ---- the driver interrupted ---- */

/* drmIoctl: a request interrupted (EINTR) or to be retried (EAGAIN) is
 * asked again. */
static int restarted(struct ag_file *f, unsigned int cmd, void *arg,
		     int *interrupted)
{
	int rc;
	while ((rc = fake_call(f, cmd, arg)) == -EINTR || rc == -EAGAIN)
		(*interrupted)++;
	return rc;
}

/* How many programs, or schedules, f's mirror holds. */
static uint32_t programs_of(struct ag_file *f)
{
	uint32_t programs, schedules;
	ag_file_objects(f, &programs, &schedules);
	return programs;
}

static uint32_t schedules_of(struct ag_file *f)
{
	uint32_t programs, schedules;
	ag_file_objects(f, &programs, &schedules);
	return schedules;
}

static uint64_t refs_of(struct ag_file *f, uint32_t handle)
{
	struct ag_sched *s = ag_sched_lock(f, handle);
	ck_assert_ptr_nonnull(s);
	uint64_t n = ag_sched_length(s);
	ag_sched_unlock(s);
	return n;
}

/* Every request the guard mirrors, interrupted twice in the driver:
 * the error comes back as it is, the mirror is as before the request,
 * and the restarted request does what it would have done. */
START_TEST(test_interrupted)
{
	int err = _i ? EAGAIN : EINTR, interrupted = 0;
	fake_setup();
	struct ag_file *f = ag_file_new();
	size_t len;
	uint8_t *image = prog_image(PROG_GOOD, &len);
	struct drm_arena_program_create pc = { .image = (uintptr_t)image,
					       .size = len };
	fake_fail(DRM_IOCTL_ARENA_PROGRAM_CREATE, err, 2);
	ck_assert_int_eq(restarted(f, DRM_IOCTL_ARENA_PROGRAM_CREATE, &pc,
				   &interrupted), 0);
	ck_assert_uint_eq(programs_of(f), 1);
	free(image);

	struct drm_arena_schedule_create sc = { .program = pc.handle };
	fake_fail(DRM_IOCTL_ARENA_SCHEDULE_CREATE, err, 2);
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_CREATE, &sc),
			 -err);
	ck_assert_uint_eq(schedules_of(f), 0);
	ck_assert_int_eq(restarted(f, DRM_IOCTL_ARENA_SCHEDULE_CREATE, &sc,
				   &interrupted), 0);
	ck_assert_uint_eq(schedules_of(f), 1);

	/* The failing schedule, each batch interrupted: the mirror holds
	 * each batch once, so the verdict is the schedule's. */
	for (uint32_t i = 0; i < 4; i++) {
		struct drm_arena_schedule_append a = {
			.schedule = sc.handle, .count = 1,
			.refs = (uintptr_t)&prog_bad_d_refs[i] };
		fake_fail(DRM_IOCTL_ARENA_SCHEDULE_APPEND, err, 2);
		ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_APPEND,
					   &a), -err);
		ck_assert_uint_eq(refs_of(f, sc.handle), i);
		ck_assert_int_eq(restarted(f, DRM_IOCTL_ARENA_SCHEDULE_APPEND,
					   &a, &interrupted), 0);
		ck_assert_uint_eq(refs_of(f, sc.handle), i + 1);
	}
	ck_assert_int_eq(fake_submit(f, sc.handle), -EPERM);

	/* A certified one: its submit interrupted reaches the driver once
	 * restarted. */
	uint32_t good = fake_schedule(f, pc.handle, prog_good_refs, 2, 1);
	struct drm_arena_schedule_submit sub = { .schedule = good };
	fake_fail(DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, err, 2);
	ck_assert_int_eq(restarted(f, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &sub,
				   &interrupted), 0);
	ck_assert_int_eq(fake_calls[DRM_ARENA_SCHEDULE_SUBMIT], 1);

	/* Destroys: the objects stay mirrored until the driver has done. */
	struct drm_arena_handle h = { .handle = good };
	fake_fail(DRM_IOCTL_ARENA_SCHEDULE_DESTROY, err, 2);
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, &h),
			 -err);
	ck_assert_int_eq(fake_submit(f, good), 0);
	ck_assert_int_eq(restarted(f, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, &h,
				   &interrupted), 0);
	ck_assert_ptr_null(ag_sched_lock(f, good));
	h.handle = pc.handle;
	fake_fail(DRM_IOCTL_ARENA_PROGRAM_DESTROY, err, 2);
	ck_assert_int_eq(restarted(f, DRM_IOCTL_ARENA_PROGRAM_DESTROY, &h,
				   &interrupted), 0);
	ck_assert_uint_eq(programs_of(f), 0);

	/* Two for each of the 9 requests, less the 6 answers asserted
	 * before restarting. */
	ck_assert_int_eq(interrupted, 2 * 9 - 6);
	ag_file_unref(f);
}
END_TEST

/* ---- destroyed while an io_uring submit holds it ---- */

/* An io_uring submit, checked and approved, reaches the driver only
 * when the next function returns: a destroy in between gets EBUSY (the
 * driver's answer for a schedule about to execute), so that no new
 * schedule can take the handle the approved submit names. */
START_TEST(test_destroy_while_held)
{
	fake_setup();
	struct ag_file *f = ag_file_new();
	ag_fd_set(42, f);
	uint32_t prog = fake_program(f, PROG_GOOD);
	uint32_t s = fake_schedule(f, prog, prog_good_refs, 2, 2);

	struct io_uring ring;
	ck_assert_int_eq(io_uring_queue_init(4, &ring, IORING_SETUP_SQE128),
			 0);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	ck_assert_ptr_nonnull(sqe);
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = 42;
	sqe->cmd_op = ARENA_URING_CMD_SUBMIT;
	struct arena_uring_submit u = { .schedule = s };
	memcpy(sqe->cmd, &u, sizeof(u));
	struct ag_held *held = ag_uring_check(&ring);
	ck_assert_ptr_nonnull(held);
	ck_assert_int_eq(sqe->opcode, IORING_OP_URING_CMD);   /* approved */

	struct drm_arena_handle h = { .handle = s };
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, &h),
			 -EBUSY);
	ck_assert_int_eq(fake_calls[DRM_ARENA_SCHEDULE_DESTROY], 0);
	ag_uring_release(&ring, held);
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, &h),
			 0);
	ck_assert_int_eq(fake_calls[DRM_ARENA_SCHEDULE_DESTROY], 1);

	io_uring_queue_exit(&ring);
	ag_fd_forget(42);
	ag_file_unref(f);
}
END_TEST

/* ---- destroyed or closed while another thread submits ---- */

START_TEST(test_teardown)
{
	struct run r;
	const char *env[] = { PRELOAD_GUARD, "ARENAGUARD_LOG=/dev/null", NULL };
	client(&r, env, (const char *[]){ "--path", paths[_i], "teardown",
					  "40", NULL });
	assert_clean(&r);
	int ran = 0;
	const char *p = strstr(r.out, "then the fd closed: ");
	ck_assert_msg(p && sscanf(p, "then the fd closed: %d ran", &ran) == 1,
		      "%s", r.out);
	ck_assert_int_ge(ran, 40);
	run_free(&r);
}
END_TEST

/* ---- fork with schedules half built ---- */

START_TEST(test_fork_half_built)
{
	struct run r;
	const char *env[] = { PRELOAD_GUARD, "ARENAGUARD_LOG=/dev/null", NULL };
	client(&r, env, (const char *[]){ "forkhalf", "12", NULL });
	assert_clean(&r);
	ck_assert_int_eq(count(r.out, "ok: child: a new schedule runs"), 12);
	ck_assert_int_eq(count(r.out, "ok: child: the failing schedule "
			       "finished is blocked"), 12);
	ck_assert_int_eq(count(r.out, "ok: child: the certified schedule "
			       "finished runs"), 1);
	ck_assert_int_eq(count(r.out, "ok: child: the certified schedule "
			       "another process finished first is refused"), 11);
	ck_assert_msg(strstr(r.out, "ok: parent: the certified schedule "
			     "another process finished first is refused"),
		      "%s", r.out);
	run_free(&r);
}
END_TEST

/* ---- the log on a full disk ---- */

/* Submissions go on with the right verdicts (the client checks them);
 * the log's failure is said once, and the records go to stderr. */
START_TEST(test_full_log)
{
	struct run r;
	const char *env[] = { PRELOAD_GUARD, "ARENAGUARD_LOG=/dev/full",
			      "ARENAGUARD_STATS=1", NULL };
	const char *basic[] = { "--path", paths[_i % 3], "basic", NULL };
	const char *threads[] = { "threads", "6", "10", NULL };
	client(&r, env, _i < 3 ? basic : threads);
	assert_clean(&r);
	ck_assert_msg(count(r.err, "arenaguard: cannot write the log "
			    "/dev/full: No space left on device; records that "
			    "it cannot take go to standard error\n") == 1,
		      "%s", r.err);
	ck_assert_int_eq(count(r.err, "arenaguard: blocked submission of"),
			 _i < 3 ? 2 : 1);
	ck_assert_int_eq(count(r.err, "arenaguard: stats (pid "), 1);
	run_free(&r);
}
END_TEST

static void teardown(void)
{
	scratch_remove();
}

Suite *suite_faults(void)
{
	Suite *s = suite_create("faults");
	TCase *t = tcase_create("faults");
	tcase_set_timeout(t, 300);
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_loop_test(t, test_nomem, 0, 3);
	tcase_add_loop_test(t, test_interrupted, 0, 2);
	tcase_add_test(t, test_destroy_while_held);
	tcase_add_test(t, test_fork_half_built);
	tcase_add_loop_test(t, test_full_log, 0, 4);
	suite_add_tcase(s, t);
	/* A case of its own, which the kernel stage runs on arena.ko (the
	 * rest of "faults" needs the fake driver or the simulator). */
	t = tcase_create("faults-teardown");
	tcase_set_timeout(t, 300);
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_loop_test(t, test_teardown, 0, 2);
	suite_add_tcase(s, t);
	return s;
}
