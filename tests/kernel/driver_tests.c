/* SPDX-License-Identifier: MIT */
/*
 * driver-tests: what only arena.ko has, run by the kernel stage in the VM
 * (tests/kernel/tests.list): the SHA-256 seal (uapi.h)
 * by ioctl and io_uring, a URING_CMD run inside io_uring_submit, the
 * require_seal module parameter, and buffer
 * lifetimes across destroy, close and mappings, impossible sizes, and a
 * long execution stopped by SIGKILL.  The expected seal is
 * computed by sha256sum(1) (busybox's in the VM), not by code of ours.
 *
 *   driver-tests                   the suites "seal" and "lifetime"
 *   driver-tests --require-seal    the suite "require-seal" (the module
 *                                  loaded with require_seal=1), with
 *                                  uring_runs_in_submit again
 *   driver-tests --images DIR      every file of DIR through PROGRAM_CREATE,
 *                                  against libarenacert's verdict on it
 *
 * Ends with "N passed, N failed".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include <arenaguard/uapi.h>
#include <arenaguard/certify.h>

#include "../sim/device.h"
#include "../summary.h"

/* The seal of image + refs: SHA-256 of le64(size) || image || refs
 * (x86-64 is little-endian), by sha256sum. */
static void expected_seal(const uint8_t *img, size_t len,
			  const struct drm_arena_ref *refs, size_t n,
			  uint8_t out[ARENA_SEAL_BYTES])
{
	char path[] = "/tmp/driver-tests-seal-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	uint64_t size = len;
	ck_assert_int_eq(write(fd, &size, 8), 8);
	ck_assert_int_eq(write(fd, img, len), (ssize_t)len);
	ck_assert_int_eq(write(fd, refs, n * sizeof(*refs)),
			 (ssize_t)(n * sizeof(*refs)));
	close(fd);
	char cmd[128], hex[65] = "";
	snprintf(cmd, sizeof(cmd), "sha256sum %s", path);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(fscanf(p, "%64s", hex), 1);
	pclose(p);
	unlink(path);
	ck_assert_uint_eq(strlen(hex), 64);
	for (int i = 0; i < ARENA_SEAL_BYTES; i++) {
		unsigned int v;
		ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

static int seal_fd(int fd, struct drm_arena_seal *s)
{
	memset(s, 0, sizeof(*s));
	return xioctl(fd, DRM_IOCTL_ARENA_SEAL, s);
}

static int submit_sealed(int fd, uint32_t schedule, uint32_t algorithm,
			 const uint8_t seal[ARENA_SEAL_BYTES], uint64_t *seqno)
{
	struct drm_arena_schedule_submit_sealed s = {
		.schedule = schedule, .algorithm = algorithm,
	};
	memcpy(s.seal, seal, ARENA_SEAL_BYTES);
	int rc = xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED, &s);
	*seqno = s.seqno;
	return rc;
}

static int submit_plain(int fd, uint32_t schedule)
{
	struct drm_arena_schedule_submit s = { .schedule = schedule };
	return xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &s);
}

/* A context with a buffer at 0x10000 and two_fills_image's program; one
 * schedule holding launch 0 (FILL 1.0 at 0x10000). */
struct setup {
	int fd;
	uint32_t bo, schedule;
	uint8_t seal[ARENA_SEAL_BYTES];
};

/* with_seal: s->seal computed too (a sha256sum process). */
static void setup_unsealed(struct setup *s, int with_seal)
{
	size_t len;
	uint8_t *img = two_fills_image(&len);
	struct drm_arena_ref ref = { 0, 1 };
	s->fd = dev_open();
	s->bo = bo_new(s->fd, 0x10000, 4096);
	s->schedule = sched_new(s->fd, prog_from_image(s->fd, img, len));
	ck_assert_int_eq(sched_append(s->fd, s->schedule, &ref, 1), 0);
	if (with_seal)
		expected_seal(img, len, &ref, 1, s->seal);
	free(img);
}

static void setup(struct setup *s)
{
	setup_unsealed(s, 1);
}

static float first_float(const struct setup *s)
{
	float v;
	bo_get(s->fd, s->bo, 0, &v, sizeof(v));
	return v;
}

START_TEST(seal_ioctl)
{
	struct setup s;
	setup(&s);
	uint64_t seqno = 0;
	uint8_t wrong[ARENA_SEAL_BYTES];
	memcpy(wrong, s.seal, sizeof(wrong));
	wrong[31] ^= 1;

	/* Unsealed context: the sealed submit runs when the seal is right. */
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule, ARENA_SEAL_SHA256,
				       wrong, &seqno), EKEYREJECTED);
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule, 0, s.seal, &seqno),
			 EINVAL);
	ck_assert_int_eq(dev_wait(s.fd, 1), EINVAL);   /* nothing consumed */
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule, ARENA_SEAL_SHA256,
				       s.seal, &seqno), 0);
	ck_assert_uint_eq(seqno, 1);
	ck_assert(first_float(&s) == 1.0f);

	/* Sealing: for good, the same context on a dup, algorithms out. */
	struct drm_arena_seal a, b;
	ck_assert_int_eq(seal_fd(s.fd, &a), 0);
	ck_assert_uint_eq(a.algorithms, 1u << ARENA_SEAL_SHA256);
	ck_assert_uint_ne(a.context, 0);
	int dup_fd = dup(s.fd);
	ck_assert_int_eq(seal_fd(dup_fd, &b), 0);
	ck_assert_uint_eq(a.context, b.context);
	close(dup_fd);
	int other = dev_open();
	ck_assert_int_eq(seal_fd(other, &b), 0);
	ck_assert_uint_ne(a.context, b.context);
	close(other);
	struct drm_arena_seal flags = { .flags = 1 };
	ck_assert_int_eq(xioctl(s.fd, DRM_IOCTL_ARENA_SEAL, &flags), EINVAL);

	ck_assert_int_eq(submit_plain(s.fd, s.schedule), ENOKEY);
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule, ARENA_SEAL_SHA256,
				       wrong, &seqno), EKEYREJECTED);
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule, ARENA_SEAL_SHA256,
				       s.seal, &seqno), 0);
	ck_assert_uint_eq(seqno, 2);

	/* Appending changes the seal: the old one is refused. */
	struct drm_arena_ref more = { 1, 1 };
	ck_assert_int_eq(sched_append(s.fd, s.schedule, &more, 1), 0);
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule, ARENA_SEAL_SHA256,
				       s.seal, &seqno), EKEYREJECTED);
	/* A refused batch does not change it. */
	struct drm_arena_ref bad = { 7, 1 };
	ck_assert_int_eq(sched_append(s.fd, s.schedule, &bad, 1), EINVAL);
	size_t len;
	uint8_t *img = two_fills_image(&len);
	struct drm_arena_ref both[2] = { { 0, 1 }, { 1, 1 } };
	uint8_t seal2[ARENA_SEAL_BYTES];
	expected_seal(img, len, both, 2, seal2);
	free(img);
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule, ARENA_SEAL_SHA256,
				       seal2, &seqno), 0);
	ck_assert_uint_eq(seqno, 3);
	close(s.fd);
}
END_TEST

static void ring_cmd(struct io_uring *ring, int fd, uint32_t op,
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

/* Submits what is queued and reaps n completions into res[user_data]. */
static void ring_run(struct io_uring *ring, unsigned int n, int *res)
{
	ck_assert_int_eq(io_uring_submit_and_wait(ring, n), (int)n);
	for (unsigned int i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;
		ck_assert_int_eq(io_uring_wait_cqe(ring, &cqe), 0);
		res[cqe->user_data] = cqe->res;
		io_uring_cqe_seen(ring, cqe);
	}
}

START_TEST(seal_uring)
{
	struct setup s;
	setup(&s);
	struct io_uring ring;
	ck_assert_int_eq(io_uring_queue_init(8, &ring, IORING_SETUP_SQE128), 0);
	struct drm_arena_seal a;
	ck_assert_int_eq(seal_fd(s.fd, &a), 0);
	uint64_t seq_plain = 0, seq_wrong = 77, seq_alg = 77, seq_right = 0;
	struct arena_uring_submit plain = {
		.schedule = s.schedule, .seqno = (uintptr_t)&seq_plain };
	struct arena_uring_submit_sealed wrong = {
		.schedule = s.schedule, .seqno = (uintptr_t)&seq_wrong,
		.algorithm = ARENA_SEAL_SHA256 };
	memcpy(wrong.seal, s.seal, ARENA_SEAL_BYTES);
	wrong.seal[0] ^= 0x80;
	struct arena_uring_submit_sealed alg = wrong;
	alg.seqno = (uintptr_t)&seq_alg;
	alg.algorithm = 2;
	memcpy(alg.seal, s.seal, ARENA_SEAL_BYTES);
	struct arena_uring_submit_sealed right = alg;
	right.seqno = (uintptr_t)&seq_right;
	right.algorithm = ARENA_SEAL_SHA256;
	int res[8] = { 0 };

	ring_cmd(&ring, s.fd, ARENA_URING_CMD_SUBMIT, &plain, sizeof(plain), 0);
	ring_cmd(&ring, s.fd, ARENA_URING_CMD_SUBMIT_SEALED, &wrong,
		 sizeof(wrong), 1);
	ring_cmd(&ring, s.fd, ARENA_URING_CMD_SUBMIT_SEALED, &alg, sizeof(alg), 2);
	ring_cmd(&ring, s.fd, ARENA_URING_CMD_SUBMIT_SEALED, &right,
		 sizeof(right), 3);
	ring_run(&ring, 4, res);
	ck_assert_int_eq(res[0], -ENOKEY);
	ck_assert_int_eq(res[1], -EKEYREJECTED);
	ck_assert_int_eq(res[2], -EINVAL);
	ck_assert_int_eq(res[3], 0);
	ck_assert_uint_eq(seq_plain, 0);
	ck_assert_uint_eq(seq_wrong, 77);
	ck_assert_uint_eq(seq_alg, 77);
	ck_assert_uint_eq(seq_right, 1);
	ck_assert_int_eq(dev_wait(s.fd, 1), 0);
	ck_assert(first_float(&s) == 1.0f);
	io_uring_queue_exit(&ring);
	close(s.fd);
}
END_TEST

/* A URING_CMD issued from io_uring_enter has run when io_uring_submit
 * returns, as an ioctl has when it returns (docs/driver.md, "io_uring"):
 * an append handed over by io_uring_submit, then at once, without
 * waiting for its completion, a sealed submit by ioctl whose seal covers
 * it runs, and the append's CQE is already there.  The guard relies on
 * it (it mirrors an append when the submitting call returns).  A driver
 * that runs the command later, from io-wq, refuses the submit
 * (EKEYREJECTED: the schedule is still empty) in some rounds. */
START_TEST(uring_runs_in_submit)
{
	enum { ROUNDS = 64 };
	size_t len;
	uint8_t *img = two_fills_image(&len);
	struct drm_arena_ref ref = { 0, 1 };
	uint8_t seal[ARENA_SEAL_BYTES];
	expected_seal(img, len, &ref, 1, seal);
	int fd = dev_open();
	bo_new(fd, 0x10000, 4096);
	uint32_t program = prog_from_image(fd, img, len);
	free(img);
	struct io_uring ring;
	ck_assert_int_eq(io_uring_queue_init(8, &ring, IORING_SETUP_SQE128), 0);
	int refused = 0, late = 0;
	for (int i = 0; i < ROUNDS; i++) {
		uint32_t schedule = sched_new(fd, program);
		struct drm_arena_schedule_append a = {
			.schedule = schedule, .count = 1,
			.refs = (uintptr_t)&ref };
		ring_cmd(&ring, fd, ARENA_URING_CMD_APPEND, &a, sizeof(a), 9);
		ck_assert_int_eq(io_uring_submit(&ring), 1);
		uint64_t seqno = 0;
		int rc = submit_sealed(fd, schedule, ARENA_SEAL_SHA256, seal,
				       &seqno);
		refused += rc != 0;
		struct io_uring_cqe *cqe;
		late += io_uring_peek_cqe(&ring, &cqe) != 0;
		ck_assert_int_eq(io_uring_wait_cqe(&ring, &cqe), 0);
		ck_assert_int_eq(cqe->res, 0);
		ck_assert_uint_eq(cqe->user_data, 9);
		io_uring_cqe_seen(&ring, cqe);
		struct drm_arena_handle h = { .handle = schedule };
		ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_DESTROY,
					&h), 0);
	}
	ck_assert_msg(refused == 0 && late == 0,
		      "of %d appends by io_uring_submit, %d sealed submits "
		      "right after were refused, %d completions were not "
		      "there when io_uring_submit returned",
		      ROUNDS, refused, late);
	io_uring_queue_exit(&ring);
	close(fd);
}
END_TEST

/* A mapping outlives BO_DESTROY and the file's close, as GEM's do; a
 * destroyed buffer's address is free again. */
START_TEST(mapping_outlives_buffer)
{
	int fd = dev_open();
	uint32_t bo = bo_new(fd, 0x10000, 8192);
	float *p = bo_map(fd, bo, 8192);
	p[0] = 3.0f;
	struct drm_arena_handle h = { .handle = bo };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_DESTROY, &h), 0);
	p[1] = 4.0f;                          /* still mapped memory */
	uint32_t again = bo_new(fd, 0x10000, 4096);
	float v;
	bo_get(fd, again, 0, &v, sizeof(v));
	ck_assert(v == 0.0f);                 /* fresh pages, not the old */
	close(fd);
	ck_assert(p[0] == 3.0f && p[1] == 4.0f);
	ck_assert_int_eq(munmap(p, 8192), 0);
}
END_TEST

/* Contexts opened and closed with everything in them, many times. */
START_TEST(close_with_objects)
{
	for (int i = 0; i < 16; i++) {
		struct setup s;
		setup_unsealed(&s, 0);
		uint32_t extra = sched_new(s.fd, 1);
		(void)extra;
		bo_new(s.fd, 0x100000, 65536);
		ck_assert_int_eq(submit_plain(s.fd, s.schedule), 0);
		close(s.fd);
	}
}
END_TEST

/* Sizes no machine gives are ENOMEM for the caller, never a warning in
 * the kernel log (the harness fails on one). */
START_TEST(impossible_sizes)
{
	int fd = dev_open();
	struct drm_arena_bo_create bo = { .address = 0x10000,
					  .size = 1ull << 40 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_CREATE, &bo), ENOMEM);
	bo.size = 1ull << 62;
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_CREATE, &bo), ENOMEM);
	static uint8_t small[64];
	struct drm_arena_program_create p = { .image = (uintptr_t)small,
					       .size = 3ull << 30 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, &p), ENOMEM);
	/* Within kvmalloc's limit, beyond the VM's 2 GiB: the copy of the
	 * image cannot be made. */
	p.size = (1ull << 31) - 8;
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, &p), ENOMEM);
	close(fd);
}
END_TEST

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A schedule of 2^32 - 1 launches runs for hours; SIGKILL stops it: the
 * process dies within seconds, not when the device is done. */
START_TEST(killed_mid_execution)
{
	int fd = dev_open();
	volatile float *p = bo_map(fd, bo_new(fd, 0x10000, 4096), 4096);
	struct pb *b = pb_new();
	pb_phase(b, "P");
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, 0x10000, 1024, f32_bits(1.0f)));
	pb_repeat(b, 0, 1, 0xffffffffull);
	uint32_t schedule = sched_new(fd, prog_new(fd, b));
	struct drm_arena_ref ref = { 0, 1 };
	ck_assert_int_eq(sched_append(fd, schedule, &ref, 1), 0);
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		submit_plain(fd, schedule);
		_exit(0);
	}
	/* Executing: the first launch has filled the buffer. */
	double until = now() + 30.0;
	while (p[0] != 1.0f && now() < until)
		usleep(10 * 1000);
	ck_assert_msg(p[0] == 1.0f, "the submission did not start in 30 s");
	double start = now();
	ck_assert_int_eq(kill(child, SIGKILL), 0);
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	ck_assert_msg(now() - start < 5.0, "the child took %.1f s to die",
		      now() - start);
	/* The context goes on: the submission is a fault, not a hang. */
	ck_assert_int_eq(dev_wait(fd, 1), EIO);
	munmap((void *)p, 4096);
	close(fd);
}
END_TEST

/* Loaded with require_seal=1: every context is sealed from its open. */
START_TEST(sealed_from_open)
{
	struct setup s;
	setup(&s);
	uint64_t seqno = 0;
	ck_assert_int_eq(submit_plain(s.fd, s.schedule), ENOKEY);
	ck_assert_int_eq(submit_sealed(s.fd, s.schedule, ARENA_SEAL_SHA256,
				       s.seal, &seqno), 0);
	ck_assert_uint_eq(seqno, 1);
	ck_assert(first_float(&s) == 1.0f);
	close(s.fd);
}
END_TEST

/* The module's image rules are libarenacert's: every image of a corpus
 * (malformed ones included) is created by PROGRAM_CREATE exactly when
 * libarenacert reads it, finds its own schedule empty and accepts the
 * program; otherwise EINVAL.  Returns the number of disagreements. */
static int compare_corpus(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "driver-tests: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	int fd = open(ARENA_NODE_PATH, O_RDWR | O_CLOEXEC), bad = 0, n = 0;
	if (fd < 0) {
		fprintf(stderr, "driver-tests: %s: %s\n", ARENA_NODE_PATH,
			strerror(errno));
		closedir(d);
		return 1;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		char path[512];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		static uint8_t buf[1 << 20];
		size_t len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		struct ac_model *m = NULL;
		ac_program *p = NULL;
		int want = ac_model_read_image(buf, len, &m, NULL) == 0 &&
			   m->n_refs == 0 && (p = ac_program_new(m, NULL));
		ac_program_free(p);
		ac_model_free(m);
		struct drm_arena_program_create c = {
			.image = (uintptr_t)buf, .size = len };
		int rc = xioctl(fd, DRM_IOCTL_ARENA_PROGRAM_CREATE, &c);
		if (len == 0 ? rc != EINVAL : rc != (want ? 0 : EINVAL)) {
			printf("%s: libarenacert %s, the module %s\n", e->d_name,
			       want ? "accepts" : "refuses", strerror(rc));
			bad++;
		}
		if (rc == 0) {
			struct drm_arena_handle h = { .handle = c.handle };
			xioctl(fd, DRM_IOCTL_ARENA_PROGRAM_DESTROY, &h);
		}
		n++;
	}
	closedir(d);
	close(fd);
	printf("driver-tests: %d images of %s, %d disagreements\n", n, dir, bad);
	return bad || n == 0;
}

int main(int argc, char **argv)
{
	Suite *s;
	TCase *tc;
	if (argc == 3 && strcmp(argv[1], "--images") == 0)
		return compare_corpus(argv[2]) ? EXIT_FAILURE : EXIT_SUCCESS;
	if (argc == 2 && strcmp(argv[1], "--require-seal") == 0) {
		s = suite_create("require-seal");
		tc = tcase_create("require-seal");
		tcase_add_test(tc, sealed_from_open);
		tcase_add_test(tc, uring_runs_in_submit);
		suite_add_tcase(s, tc);
		return run_and_summarize(srunner_create(s));
	}
	s = suite_create("seal");
	tc = tcase_create("seal");
	tcase_add_test(tc, seal_ioctl);
	tcase_add_test(tc, seal_uring);
	tcase_add_test(tc, uring_runs_in_submit);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	s = suite_create("lifetime");
	tc = tcase_create("lifetime");
	tcase_add_test(tc, mapping_outlives_buffer);
	tcase_add_test(tc, close_with_objects);
	tcase_add_test(tc, impossible_sizes);
	tcase_add_test(tc, killed_mid_execution);
	suite_add_tcase(s, tc);
	srunner_add_suite(sr, s);
	return run_and_summarize(sr);
}
