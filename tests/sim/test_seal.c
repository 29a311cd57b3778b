/* SPDX-License-Identifier: MIT */
/*
 * Sealed submissions (uapi.h, "Sealed submissions"): DRM_IOCTL_ARENA_SEAL,
 * the sealed submits by ioctl and by io_uring, ENOKEY and EKEYREJECTED,
 * the seal following accepted appends, ARENASIM_REQUIRE_SEAL, and the
 * context identity across dup and opens.  The expected seal is computed
 * with common/seal.c, the one implementation of it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <liburing.h>

#include "device.h"
#include "seal.h"

/* A program of two FILL launches at 0x10000 (1.0) and 0x10010 (2.0), its
 * image kept to compute seals. */
struct sealed {
	int fd;
	uint32_t bo, program, schedule;
	uint8_t *image;
	size_t len;
	struct arena_seal seal;       /* the expected state */
};

static void sealed_setup(struct sealed *s, int fd)
{
	s->fd = fd;
	s->bo = bo_new(fd, 0x10000, 4096);
	struct pb *b = pb_new();
	pb_phase(b, "P");
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, 0x10000, 1, f32_bits(1.0f)));
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, 0x10010, 1, f32_bits(2.0f)));
	s->image = pb_image(b, &s->len);
	pb_free(b);
	s->program = prog_from_image(fd, s->image, s->len);
	s->schedule = sched_new(fd, s->program);
	arena_seal_program(&s->seal, s->image, s->len);
}

static void sealed_append(struct sealed *s, uint64_t first, uint64_t count)
{
	struct drm_arena_ref ref = { first, count };
	ck_assert_int_eq(sched_append(s->fd, s->schedule, &ref, 1), 0);
	arena_seal_refs(&s->seal, &ref, 1);
}

static void sealed_fini(struct sealed *s)
{
	free(s->image);
	close(s->fd);
}

static float at(const struct sealed *s, uint64_t offset)
{
	float v;
	bo_get(s->fd, s->bo, offset, &v, sizeof(v));
	return v;
}

/* DRM_IOCTL_ARENA_SEAL's errno; *context its out field. */
static int seal_ctx(int fd, uint64_t *context)
{
	struct drm_arena_seal a = { 0 };
	int rc = xioctl(fd, DRM_IOCTL_ARENA_SEAL, &a);
	*context = a.context;
	return rc;
}

/* The plain submit's errno. */
static int submit_plain(int fd, uint32_t schedule, uint64_t *seqno)
{
	struct drm_arena_schedule_submit a = { .schedule = schedule };
	int rc = xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &a);
	*seqno = a.seqno;
	return rc;
}

/* The sealed submit's errno. */
static int submit_sealed(int fd, uint32_t schedule, uint64_t seal,
			 uint64_t *seqno)
{
	struct drm_arena_schedule_submit_sealed a = { .schedule = schedule,
						      .seal = seal };
	int rc = xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED, &a);
	*seqno = a.seqno;
	return rc;
}

START_TEST(seal_ioctl)
{
	int fd = dev_open();
	struct drm_arena_seal bad[] = { { .flags = 1 }, { .pad = 1 } };
	for (size_t i = 0; i < 2; i++)
		ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SEAL, &bad[i]),
				 EINVAL);
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SEAL, BAD), EFAULT);
	uint64_t c1, c2, c3, other;
	ck_assert_int_eq(seal_ctx(fd, &c1), 0);
	ck_assert_uint_ne(c1, 0);
	ck_assert_int_eq(seal_ctx(fd, &c2), 0);      /* twice: the same */
	ck_assert_uint_eq(c1, c2);
	int d = dup(fd);
	ck_assert_int_eq(seal_ctx(d, &c3), 0);       /* a dup: the same */
	ck_assert_uint_eq(c1, c3);
	int fd2 = dev_open();                        /* another open */
	ck_assert_int_eq(seal_ctx(fd2, &other), 0);
	ck_assert_uint_ne(other, c1);
	ck_assert_uint_ne(other, 0);
	close(d);
	close(fd2);
	close(fd);
}
END_TEST

START_TEST(unsealed_context)
{
	/* Both submits run on a context never sealed. */
	struct sealed s;
	sealed_setup(&s, dev_open());
	sealed_append(&s, 0, 1);
	uint64_t seqno;
	ck_assert_int_eq(submit_plain(s.fd, s.schedule, &seqno), 0);
	ck_assert_uint_eq(seqno, 1);
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule,
				       arena_seal_value(&s.seal), &seqno), 0);
	ck_assert_uint_eq(seqno, 2);
	ck_assert(at(&s, 0) == 1.0f);
	sealed_fini(&s);
}
END_TEST

START_TEST(sealed_context)
{
	struct sealed s;
	sealed_setup(&s, dev_open());
	sealed_append(&s, 0, 1);
	uint64_t context, seqno = 77;
	ck_assert_int_eq(seal_ctx(s.fd, &context), 0);
	/* The plain submit is refused, also through a dup; ENOKEY comes
	 * before the handle is looked up. */
	int d = dup(s.fd);
	ck_assert_int_eq(submit_plain(s.fd, s.schedule, &seqno), ENOKEY);
	ck_assert_int_eq(submit_plain(d, s.schedule, &seqno), ENOKEY);
	ck_assert_int_eq(submit_plain(s.fd, s.schedule + 9, &seqno), ENOKEY);
	close(d);
	ck_assert(at(&s, 0) == 0.0f);
	/* A wrong seal: nothing runs, no sequence number is consumed. */
	uint64_t right = arena_seal_value(&s.seal);
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule, right ^ 1, &seqno),
			 EKEYREJECTED);
	ck_assert(at(&s, 0) == 0.0f);
	ck_assert_int_eq(dev_wait(s.fd, 1), EINVAL);
	/* The right one runs, and gets the first number. */
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule, right, &seqno), 0);
	ck_assert_uint_eq(seqno, 1);
	ck_assert_int_eq(dev_wait(s.fd, 1), 0);
	ck_assert(at(&s, 0) == 1.0f);
	/* Other errors keep their errno. */
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule + 9, right, &seqno),
			 ENOENT);
	struct drm_arena_schedule_submit_sealed flags = {
		.schedule = s.schedule, .flags = 1, .seal = right };
	ck_assert_int_eq(xioctl(s.fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED,
				&flags), EINVAL);
	sealed_fini(&s);
}
END_TEST

START_TEST(seal_follows_appends)
{
	struct sealed s;
	sealed_setup(&s, dev_open());
	uint64_t seqno, context;
	ck_assert_int_eq(seal_ctx(s.fd, &context), 0);
	/* An empty schedule's seal is its program's. */
	uint64_t empty = arena_seal_value(&s.seal);
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule, empty, &seqno), 0);
	sealed_append(&s, 0, 1);
	uint64_t one = arena_seal_value(&s.seal);
	ck_assert_uint_ne(one, empty);
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule, empty, &seqno),
			 EKEYREJECTED);
	/* A refused batch does not change the seal. */
	struct drm_arena_ref outside = { 5, 1 };
	ck_assert_int_eq(sched_append(s.fd, s.schedule, &outside, 1), EINVAL);
	/* Nor does an empty one. */
	ck_assert_int_eq(sched_append(s.fd, s.schedule, &outside, 0), 0);
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule, one, &seqno), 0);
	ck_assert_uint_eq(seqno, 2);
	sealed_append(&s, 1, 1);
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule, one, &seqno),
			 EKEYREJECTED);
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule,
				       arena_seal_value(&s.seal), &seqno), 0);
	ck_assert_uint_eq(seqno, 3);
	ck_assert(at(&s, 16) == 2.0f);
	/* Two schedules of one program with the same references have the
	 * same seal; a new schedule starts again from the program's. */
	uint32_t other = sched_new(s.fd, s.program);
	ck_assert_int_eq(submit_sealed(s.fd, other, empty, &seqno), 0);
	struct drm_arena_ref both[] = { { 0, 1 }, { 1, 1 } };
	ck_assert_int_eq(sched_append(s.fd, other, both, 2), 0);
	ck_assert_int_eq(submit_sealed(s.fd, other, arena_seal_value(&s.seal),
				       &seqno), 0);
	sealed_fini(&s);
}
END_TEST

/* ---- io_uring ---- */

static void sealed_cmd(struct io_uring *ring, int fd, uint32_t op,
		       const void *arg, size_t len, uint64_t user_data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	ck_assert_ptr_nonnull(sqe);
	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = op;
	memcpy(sqe->cmd, arg, len);
	sqe->user_data = user_data;
}

/* Submits the ring's n commands; res[user_data] gets each result. */
static void sealed_reap(struct io_uring *ring, unsigned int n, int *res)
{
	ck_assert_int_eq(io_uring_submit_and_wait(ring, n), (int)n);
	for (unsigned int i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;
		ck_assert_int_eq(io_uring_wait_cqe(ring, &cqe), 0);
		ck_assert_uint_lt(cqe->user_data, 16);
		res[cqe->user_data] = cqe->res;
		io_uring_cqe_seen(ring, cqe);
	}
}

START_TEST(uring_sealed)
{
	struct sealed s;
	sealed_setup(&s, dev_open());
	struct io_uring ring;
	ck_assert_int_eq(io_uring_queue_init(8, &ring, IORING_SETUP_SQE128), 0);
	uint64_t seq_plain = 0, seq_right = 0, seq_wrong = 55, seq_unsealed = 0;
	/* Unsealed context: both submits run. */
	struct drm_arena_ref ref = { 0, 1 };
	struct drm_arena_schedule_append a = { .schedule = s.schedule,
					       .count = 1,
					       .refs = (uintptr_t)&ref };
	sealed_cmd(&ring, s.fd, ARENA_URING_CMD_APPEND, &a, sizeof(a), 0);
	arena_seal_refs(&s.seal, &ref, 1);
	struct arena_uring_submit plain = { .schedule = s.schedule,
					    .seqno = (uintptr_t)&seq_plain };
	sealed_cmd(&ring, s.fd, ARENA_URING_CMD_SUBMIT, &plain, sizeof(plain), 1);
	struct arena_uring_submit_sealed unsealed = {
		.schedule = s.schedule, .seqno = (uintptr_t)&seq_unsealed,
		.seal = arena_seal_value(&s.seal) };
	sealed_cmd(&ring, s.fd, ARENA_URING_CMD_SUBMIT_SEALED, &unsealed,
		   sizeof(unsealed), 2);
	int res[16];
	sealed_reap(&ring, 3, res);
	ck_assert_int_eq(res[0], 0);
	ck_assert_int_eq(res[1], 0);
	ck_assert_int_eq(res[2], 0);
	ck_assert_uint_eq(seq_plain, 1);
	ck_assert_uint_eq(seq_unsealed, 2);

	uint64_t context;
	ck_assert_int_eq(seal_ctx(s.fd, &context), 0);
	/* Sealed: plain ENOKEY, wrong seal EKEYREJECTED (the seqno pointer
	 * untouched), right seal runs with the next number. */
	sealed_cmd(&ring, s.fd, ARENA_URING_CMD_SUBMIT, &plain, sizeof(plain), 3);
	struct arena_uring_submit_sealed wrong = {
		.schedule = s.schedule, .seqno = (uintptr_t)&seq_wrong,
		.seal = arena_seal_value(&s.seal) + 1 };
	sealed_cmd(&ring, s.fd, ARENA_URING_CMD_SUBMIT_SEALED, &wrong,
		   sizeof(wrong), 4);
	struct arena_uring_submit_sealed right = wrong;
	right.seal = arena_seal_value(&s.seal);
	right.seqno = (uintptr_t)&seq_right;
	sealed_cmd(&ring, s.fd, ARENA_URING_CMD_SUBMIT_SEALED, &right,
		   sizeof(right), 5);
	/* Nonzero bytes after the struct are padding: EINVAL. */
	struct { struct arena_uring_submit_sealed s; uint64_t pad; } padded =
		{ right, 1 };
	sealed_cmd(&ring, s.fd, ARENA_URING_CMD_SUBMIT_SEALED, &padded,
		   sizeof(padded), 6);
	sealed_reap(&ring, 4, res);
	ck_assert_int_eq(res[3], -ENOKEY);
	ck_assert_int_eq(res[4], -EKEYREJECTED);
	ck_assert_int_eq(res[5], 0);
	ck_assert_int_eq(res[6], -EINVAL);
	ck_assert_uint_eq(seq_wrong, 55);
	ck_assert_uint_eq(seq_plain, 1);
	ck_assert_uint_eq(seq_right, 3);
	io_uring_queue_exit(&ring);
	sealed_fini(&s);
}
END_TEST

/* ---- ARENASIM_REQUIRE_SEAL ---- */

/* `sim-tests --require-seal-demo`: run with ARENASIM_REQUIRE_SEAL=1;
 * exits 0 when every open is sealed from the start. */
int require_seal_demo(void)
{
	struct sealed s;
	sealed_setup(&s, dev_open());
	sealed_append(&s, 0, 1);
	uint64_t seqno, context;
	ck_assert_int_eq(submit_plain(s.fd, s.schedule, &seqno), ENOKEY);
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule,
				       arena_seal_value(&s.seal), &seqno), 0);
	ck_assert_uint_eq(seqno, 1);
	ck_assert_int_eq(seal_ctx(s.fd, &context), 0);
	ck_assert_uint_ne(context, 0);
	sealed_fini(&s);
	return 0;
}

/* Runs `sim-tests --require-seal-demo` with ARENASIM_REQUIRE_SEAL=value;
 * its exit status. */
static int run_require_seal(const char *value)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		setenv("ARENASIM_REQUIRE_SEAL", value, 1);
		unsetenv("CK_RUN_SUITE");     /* the child runs suite "demo" */
		unsetenv("CK_RUN_CASE");
		execl("/proc/self/exe", "sim-tests", "--require-seal-demo",
		      (char *)NULL);
		_exit(127);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

START_TEST(require_seal)
{
	ck_assert_int_eq(run_require_seal("1"), 0);
	/* The demo fails when the option is off: the test can fail. */
	ck_assert_int_ne(run_require_seal("0"), 0);
}
END_TEST

Suite *suite_seal(void)
{
	Suite *s = suite_create("seal");
	TCase *tc = tcase_create("seal");
	tcase_add_test(tc, seal_ioctl);
	tcase_add_test(tc, unsealed_context);
	tcase_add_test(tc, sealed_context);
	tcase_add_test(tc, seal_follows_appends);
	tcase_add_test(tc, uring_sealed);
	tcase_add_test(tc, require_seal);
	suite_add_tcase(s, tc);
	return s;
}
