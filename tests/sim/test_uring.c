/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_URING_CMD through a real io_uring: the device's commands
 * complete with the driver's result and the application's user_data;
 * everything else on the ring is the kernel's, untouched.  Sealed
 * submissions too (test_seal.c has the ioctl side).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <liburing.h>

#include "device.h"
#include "liburing_newer.h"
#include "seal.h"
#include "uring_abi.h"

/* One FILL launch of 1.0 at 0x10000. */
struct setup {
	int fd;
	uint32_t bo, program, schedule;
	struct drm_arena_ref ref;
};

static void setup(struct setup *s)
{
	s->fd = dev_open();
	s->bo = bo_new(s->fd, 0x10000, 4096);
	struct pb *b = pb_new();
	pb_phase(b, "P");
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, 0x10000, 1, f32_bits(1.0f)));
	s->program = prog_new(s->fd, b);
	s->schedule = sched_new(s->fd, s->program);
	s->ref = (struct drm_arena_ref){ 0, 1 };
}

static float filled(const struct setup *s)
{
	float v;
	bo_get(s->fd, s->bo, 0, &v, sizeof(v));
	return v;
}

static void ring_init(struct io_uring *ring, unsigned int flags)
{
	int rc = io_uring_queue_init(8, ring, flags);
	ck_assert_msg(rc == 0, "io_uring_queue_init: %s", strerror(-rc));
}

static struct io_uring_sqe *cmd(struct io_uring *ring, int fd, uint32_t op,
				const void *arg, size_t len, uint64_t user_data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	ck_assert_ptr_nonnull(sqe);
	memset(sqe, 0, ring->flags & IORING_SETUP_SQE128 ? 128 : 64);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = op;
	if (len)
		memcpy(sqe->cmd, arg, len);
	sqe->user_data = user_data;
	return sqe;
}

static struct io_uring_sqe *append(struct io_uring *ring, int fd,
				   uint32_t schedule,
				   const struct drm_arena_ref *refs,
				   uint32_t count, uint64_t user_data)
{
	struct drm_arena_schedule_append a = { .schedule = schedule,
					       .count = count,
					       .refs = (uintptr_t)refs };
	return cmd(ring, fd, ARENA_URING_CMD_APPEND, &a, sizeof(a), user_data);
}

static struct io_uring_sqe *submit(struct io_uring *ring, int fd,
				   uint32_t schedule, uint64_t *seqno,
				   uint64_t user_data)
{
	struct arena_uring_submit s = { .schedule = schedule,
					.seqno = (uintptr_t)seqno };
	return cmd(ring, fd, ARENA_URING_CMD_SUBMIT, &s, sizeof(s), user_data);
}

/* Waits for n completions; res[i] is the result of user_data i. */
static void reap(struct io_uring *ring, unsigned int n, int *res)
{
	for (unsigned int i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;
		ck_assert_int_eq(io_uring_wait_cqe(ring, &cqe), 0);
		ck_assert_uint_lt(cqe->user_data, 16);
		res[cqe->user_data] = cqe->res;
		io_uring_cqe_seen(ring, cqe);
	}
}

/* A new device set up, and an SQE128 ring holding an append of its
 * reference (user_data 1) and a submit (user_data 2, its seqno into
 * *seqno), not submitted yet. */
static void queue_append_submit(struct setup *s, struct io_uring *ring,
				uint64_t *seqno)
{
	setup(s);
	ring_init(ring, IORING_SETUP_SQE128);
	append(ring, s->fd, s->schedule, &s->ref, 1, 1);
	submit(ring, s->fd, s->schedule, seqno, 2);
}

/* Their completions reaped (what: the entry point that submitted them):
 * both the device's 0, the schedule ran. */
static void check_append_submit(struct setup *s, struct io_uring *ring,
				uint64_t seqno, const char *what)
{
	int res[16] = { [1] = 99, [2] = 99 };
	reap(ring, 2, res);
	ck_assert_msg(res[1] == 0 && res[2] == 0, "%s: the device's answers "
		      "%d, %d", what, res[1], res[2]);
	ck_assert_uint_eq(seqno, 1);
	ck_assert_int_eq(dev_wait(s->fd, seqno), 0);
	ck_assert(filled(s) == 1.0f);
}

START_TEST(append_submit)
{
	struct setup s;
	struct io_uring ring;
	uint64_t seqno = 0;
	queue_append_submit(&s, &ring, &seqno);
	ck_assert_int_eq(io_uring_submit_and_wait(&ring, 2), 2);
	check_append_submit(&s, &ring, seqno, "io_uring_submit_and_wait");
	int res[16];
	/* A null seqno pointer is allowed. */
	submit(&ring, s.fd, s.schedule, NULL, 3);
	ck_assert_int_eq(io_uring_submit(&ring), 1);
	reap(&ring, 1, res);
	ck_assert_int_eq(res[3], 0);
	ck_assert_int_eq(dev_wait(s.fd, 2), 0);
	io_uring_queue_exit(&ring);
	close(s.fd);
}
END_TEST

START_TEST(error_results)
{
	struct setup s;
	setup(&s);
	struct io_uring ring;
	ring_init(&ring, IORING_SETUP_SQE128);
	struct drm_arena_ref outside = { 5, 1 };
	append(&ring, s.fd, s.schedule + 7, &s.ref, 1, 1);      /* ENOENT */
	append(&ring, s.fd, s.schedule, BAD, 1, 2);             /* EFAULT */
	append(&ring, s.fd, s.schedule, &outside, 1, 3);        /* EINVAL */
	cmd(&ring, s.fd, 99, NULL, 0, 4);                       /* ENOTTY */
	append(&ring, s.fd, s.schedule, &s.ref, 1, 5)->cmd[40] = 1;  /* pad */
	submit(&ring, s.fd, s.schedule, BAD, 6);                /* EFAULT */
	struct arena_uring_submit flags = { .schedule = s.schedule, .flags = 1 };
	cmd(&ring, s.fd, ARENA_URING_CMD_SUBMIT, &flags, sizeof(flags), 7);
	/* Last: the kernel's io_uring refuses a nonzero __pad1 when it
	 * prepares the SQE and stops submitting there (without
	 * IORING_SETUP_SUBMIT_ALL), so a later SQE would stay queued. */
	append(&ring, s.fd, s.schedule, &s.ref, 1, 8)->__pad1 = 1;
	ck_assert_int_eq(io_uring_submit(&ring), 8);
	int res[16];
	reap(&ring, 8, res);
	ck_assert_int_eq(res[1], -ENOENT);
	ck_assert_int_eq(res[2], -EFAULT);
	ck_assert_int_eq(res[3], -EINVAL);
	ck_assert_int_eq(res[4], -ENOTTY);
	ck_assert_int_eq(res[5], -EINVAL);
	ck_assert_int_eq(res[6], -EFAULT);
	ck_assert_int_eq(res[7], -EINVAL);
	ck_assert_int_eq(res[8], -EINVAL);
	/* Nothing was appended or submitted. */
	ck_assert_int_eq(dev_wait(s.fd, 1), EINVAL);
	ck_assert(filled(&s) == 0.0f);
	io_uring_queue_exit(&ring);
	close(s.fd);
}
END_TEST

START_TEST(needs_sqe128)
{
	struct setup s;
	setup(&s);
	struct io_uring ring;
	ring_init(&ring, 0);
	cmd(&ring, s.fd, ARENA_URING_CMD_SUBMIT, NULL, 0, 1);
	ck_assert_int_eq(io_uring_submit(&ring), 1);
	int res[16];
	reap(&ring, 1, res);
	ck_assert_int_eq(res[1], -EINVAL);
	io_uring_queue_exit(&ring);
	close(s.fd);
}
END_TEST

START_TEST(fixed_file)
{
	struct setup s;
	setup(&s);
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	struct io_uring ring;
	ring_init(&ring, IORING_SETUP_SQE128);
	int files[] = { p[0], s.fd };
	ck_assert_int_eq(io_uring_register_files(&ring, files, 2), 0);
	uint64_t seqno = 0;
	append(&ring, 1, s.schedule, &s.ref, 1, 1)->flags |= IOSQE_FIXED_FILE;
	submit(&ring, 1, s.schedule, &seqno, 2)->flags |= IOSQE_FIXED_FILE;
	/* Slot 0 is a pipe: the kernel's own answer. */
	submit(&ring, 0, s.schedule, &seqno, 3)->flags |= IOSQE_FIXED_FILE;
	ck_assert_int_eq(io_uring_submit(&ring), 3);
	int res[16];
	reap(&ring, 3, res);
	ck_assert_int_eq(res[1], 0);
	ck_assert_int_eq(res[2], 0);
	ck_assert_int_eq(res[3], -EOPNOTSUPP);
	ck_assert_uint_eq(seqno, 1);
	ck_assert(filled(&s) == 1.0f);

	/* Cleared slot: no longer the device, the kernel says EBADF. */
	int none = -1;
	ck_assert_int_eq(io_uring_register_files_update(&ring, 1, &none, 1), 1);
	submit(&ring, 1, s.schedule, &seqno, 4)->flags |= IOSQE_FIXED_FILE;
	ck_assert_int_eq(io_uring_submit(&ring), 1);
	reap(&ring, 1, res);
	ck_assert_int_eq(res[4], -EBADF);
	/* Set again, through a dup: still the same open file. */
	int d = dup(s.fd);
	ck_assert_int_eq(io_uring_register_files_update(&ring, 1, &d, 1), 1);
	close(d);
	submit(&ring, 1, s.schedule, &seqno, 5)->flags |= IOSQE_FIXED_FILE;
	ck_assert_int_eq(io_uring_submit(&ring), 1);
	reap(&ring, 1, res);
	ck_assert_int_eq(res[5], 0);
	ck_assert_uint_eq(seqno, 2);
	ck_assert_int_eq(io_uring_unregister_files(&ring), 0);

	/* A sparse table filled by update. */
	ck_assert_int_eq(io_uring_register_files_sparse(&ring, 4), 0);
	ck_assert_int_eq(io_uring_register_files_update(&ring, 3, &s.fd, 1), 1);
	submit(&ring, 3, s.schedule, &seqno, 6)->flags |= IOSQE_FIXED_FILE;
	ck_assert_int_eq(io_uring_submit(&ring), 1);
	reap(&ring, 1, res);
	ck_assert_int_eq(res[6], 0);
	ck_assert_uint_eq(seqno, 3);
	/* A registered slot holds the open file, as in the kernel: it
	 * outlives the last fd. */
	close(s.fd);
	submit(&ring, 3, s.schedule, &seqno, 7)->flags |= IOSQE_FIXED_FILE;
	ck_assert_int_eq(io_uring_submit(&ring), 1);
	reap(&ring, 1, res);
	ck_assert_int_eq(res[7], 0);
	ck_assert_uint_eq(seqno, 4);
	io_uring_queue_exit(&ring);
	close(p[0]);
	close(p[1]);
}
END_TEST

START_TEST(links)
{
	struct setup s;
	setup(&s);
	struct io_uring ring;
	ring_init(&ring, IORING_SETUP_SQE128);
	uint64_t seqno = 0;
	/* A failed link cancels the rest of its chain. */
	append(&ring, s.fd, s.schedule + 9, &s.ref, 1, 1)->flags |= IOSQE_IO_LINK;
	submit(&ring, s.fd, s.schedule, &seqno, 2);
	ck_assert_int_eq(io_uring_submit(&ring), 2);
	int res[16];
	reap(&ring, 2, res);
	ck_assert_int_eq(res[1], -ENOENT);
	ck_assert_int_eq(res[2], -ECANCELED);
	ck_assert_uint_eq(seqno, 0);
	ck_assert_int_eq(dev_wait(s.fd, 1), EINVAL);
	/* A hard link does not. */
	append(&ring, s.fd, s.schedule + 9, &s.ref, 1, 3)->flags |=
		IOSQE_IO_HARDLINK;
	append(&ring, s.fd, s.schedule, &s.ref, 1, 4)->flags |= IOSQE_IO_LINK;
	submit(&ring, s.fd, s.schedule, &seqno, 5);
	ck_assert_int_eq(io_uring_submit(&ring), 3);
	reap(&ring, 3, res);
	ck_assert_int_eq(res[3], -ENOENT);
	ck_assert_int_eq(res[4], 0);
	ck_assert_int_eq(res[5], 0);
	ck_assert_uint_eq(seqno, 1);
	ck_assert(filled(&s) == 1.0f);
	io_uring_queue_exit(&ring);
	close(s.fd);
}
END_TEST

/* Sealed submissions (uapi.h): a plain SUBMIT runs on an unsealed
 * context and is refused with ENOKEY on a sealed one; SUBMIT_SEALED runs
 * on both when the seal is right, and is refused with EKEYREJECTED,
 * without consuming a number or writing the seqno, when it is not. */
static struct io_uring_sqe *submit_sealed(struct io_uring *ring, int fd,
					  uint32_t schedule, uint64_t *seqno,
					  struct arena_seal_value seal,
					  uint64_t user_data)
{
	struct arena_uring_submit_sealed s = { .algorithm = ARENA_SEAL_SHA256,
					       .schedule = schedule,
					       .seqno = (uintptr_t)seqno,
					       };
	memcpy(s.seal, seal.bytes, sizeof(s.seal));
	return cmd(ring, fd, ARENA_URING_CMD_SUBMIT_SEALED, &s, sizeof(s),
		   user_data);
}

START_TEST(sealed_submits)
{
	int fd = dev_open();
	uint32_t bo = bo_new(fd, 0x10000, 4096);
	size_t len;
	uint8_t *img = two_fills_image(&len);
	uint32_t schedule = sched_new(fd, prog_from_image(fd, img, len));
	struct drm_arena_ref ref = { 0, 1 };
	struct arena_seal want;
	arena_seal_program(&want, img, len);
	arena_seal_refs(&want, &ref, 1);
	struct arena_seal_value seal = seal_now(&want);
	struct io_uring ring;
	ring_init(&ring, IORING_SETUP_SQE128);
	uint64_t seq_plain = 0, seq_unsealed = 0, seq_wrong = 55, seq_right = 0;
	int res[16];

	/* Unsealed: both run. */
	append(&ring, fd, schedule, &ref, 1, 0);
	submit(&ring, fd, schedule, &seq_plain, 1);
	submit_sealed(&ring, fd, schedule, &seq_unsealed, seal, 2);
	ck_assert_int_eq(io_uring_submit(&ring), 3);
	reap(&ring, 3, res);
	ck_assert_int_eq(res[0], 0);
	ck_assert_int_eq(res[1], 0);
	ck_assert_int_eq(res[2], 0);
	ck_assert_uint_eq(seq_plain, 1);
	ck_assert_uint_eq(seq_unsealed, 2);

	uint64_t context;
	ck_assert_int_eq(dev_seal(fd, &context), 0);
	const float zero = 0.0f;
	bo_put(fd, bo, 0, &zero, sizeof(zero));
	submit(&ring, fd, schedule, &seq_plain, 3);
	submit_sealed(&ring, fd, schedule, &seq_wrong, seal_wrong(seal), 4);
	ck_assert_int_eq(io_uring_submit(&ring), 2);
	reap(&ring, 2, res);
	ck_assert_int_eq(res[3], -ENOKEY);
	ck_assert_int_eq(res[4], -EKEYREJECTED);
	ck_assert_uint_eq(seq_plain, 1);
	ck_assert_uint_eq(seq_wrong, 55);
	float v;
	bo_get(fd, bo, 0, &v, sizeof(v));
	ck_assert(v == 0.0f);                        /* nothing ran */
	ck_assert_int_eq(dev_wait(fd, 3), EINVAL);   /* no number consumed */
	submit_sealed(&ring, fd, schedule, &seq_right, seal, 5);
	/* Nonzero bytes after the struct are padding: EINVAL. */
	submit_sealed(&ring, fd, schedule, &seq_right, seal, 6)->cmd[60] = 1;
	ck_assert_int_eq(io_uring_submit(&ring), 2);
	reap(&ring, 2, res);
	ck_assert_int_eq(res[5], 0);
	ck_assert_int_eq(res[6], -EINVAL);
	ck_assert_uint_eq(seq_right, 3);
	bo_get(fd, bo, 0, &v, sizeof(v));
	ck_assert(v == 1.0f);
	io_uring_queue_exit(&ring);
	free(img);
	close(fd);
}
END_TEST

/* Every liburing submit entry point runs the device's commands. */
START_TEST(submit_variants)
{
	struct setup s;
	setup(&s);
	struct io_uring ring;
	ring_init(&ring, IORING_SETUP_SQE128);
	uint64_t seqno = 0;
	int res[16];
	append(&ring, s.fd, s.schedule, &s.ref, 1, 1);
	ck_assert_int_eq(io_uring_submit_and_get_events(&ring), 1);
	reap(&ring, 1, res);
	ck_assert_int_eq(res[1], 0);
	submit(&ring, s.fd, s.schedule, &seqno, 2);
	struct io_uring_cqe *cqe = NULL;
	struct __kernel_timespec ts = { .tv_sec = 5 };
	ck_assert_int_eq(io_uring_submit_and_wait_timeout(&ring, &cqe, 1, &ts,
							  NULL), 1);
	ck_assert_ptr_nonnull(cqe);
	ck_assert_uint_eq(cqe->user_data, 2);
	ck_assert_int_eq(cqe->res, 0);
	io_uring_cqe_seen(&ring, cqe);
	ck_assert_uint_eq(seqno, 1);
	ck_assert(filled(&s) == 1.0f);
	io_uring_queue_exit(&ring);
	close(s.fd);
}
END_TEST

/* The other submit entry points the preload core interposes: those of
 * liburing 2.8 and 2.9 (ring_stub.c's stand-ins, raw system calls as
 * liburing's own) and the waits with a time-out, which submit the
 * pending SQEs on a kernel without IORING_FEAT_EXT_ARG (the ring's
 * features cleared of it, as there).  _i: the entry point.  Each runs
 * the device's commands: at 97c4a30 the simulator did not interpose
 * them, and the commands reached the kernel, which answered them for the
 * simulator's file (not the device). */
START_TEST(submit_variants_newer)
{
	static const char *const names[] = {
		"io_uring_submit_and_wait_min_timeout",
		"io_uring_submit_and_wait_reg", "io_uring_wait_cqes",
		"io_uring_wait_cqe_timeout" };
	struct setup s;
	struct io_uring ring;
	uint64_t seqno = 0;
	queue_append_submit(&s, &ring, &seqno);
	struct io_uring_cqe *cqe = NULL;
	struct __kernel_timespec ts = { .tv_sec = 5 };
	int rc = -1, want = -1;       /* -1: any count (liburing 2.3's waits
				       * return what they submitted) */
	if (_i >= 2)
		ring.features &= ~IORING_FEAT_EXT_ARG;
	switch (_i) {
	case 0:
		rc = io_uring_submit_and_wait_min_timeout(&ring, &cqe, 2, &ts,
							  0, NULL);
		want = 2;
		break;
	case 1:
		rc = io_uring_submit_and_wait_reg(&ring, &cqe, 2, 0);
		want = 2;
		break;
	case 2:
		rc = io_uring_wait_cqes(&ring, &cqe, 2, &ts, NULL);
		break;
	default:
		rc = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
		break;
	}
	ck_assert_msg(want < 0 ? rc >= 0 : rc == want, "%s: %d", names[_i],
		      rc);
	check_append_submit(&s, &ring, seqno, names[_i]);
	io_uring_queue_exit(&ring);
	close(s.fd);
}
END_TEST

START_TEST(passthrough)
{
	struct setup s;
	setup(&s);
	char path[] = "/tmp/sim-tests-XXXXXX";
	int file = mkstemp(path);
	ck_assert_int_ge(file, 0);
	unlink(path);
	ck_assert_int_eq(write(file, "hello, ring", 11), 11);
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	unsigned int flags[] = { 0, IORING_SETUP_SQE128 };
	for (int i = 0; i < 2; i++) {
		struct io_uring ring;
		ring_init(&ring, flags[i]);
		char buf[16] = { 0 };
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		io_uring_prep_nop(sqe);
		sqe->user_data = 1;
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_read(sqe, file, buf, sizeof(buf), 7);
		sqe->user_data = 2;
		/* A URING_CMD for a file that has none: the kernel's error. */
		cmd(&ring, p[0], ARENA_URING_CMD_SUBMIT, NULL, 0, 3);
		/* Interleaved with a device command. */
		uint64_t seqno = 0;
		submit(&ring, s.fd, s.schedule, flags[i] ? &seqno : NULL, 4);
		ck_assert_int_eq(io_uring_submit(&ring), 4);
		int res[16];
		reap(&ring, 4, res);
		ck_assert_int_eq(res[1], 0);
		ck_assert_int_eq(res[2], 4);
		ck_assert_str_eq(buf, "ring");
		ck_assert_int_eq(res[3], -EOPNOTSUPP);
		ck_assert_int_eq(res[4], flags[i] ? 0 : -EINVAL);
		io_uring_queue_exit(&ring);
	}
	close(file);
	close(p[0]);
	close(p[1]);
	close(s.fd);
}
END_TEST

/* The kernel takes the SQE that sq.array names at each SQ position, not
 * the one at the position's own index: a device command is executed
 * when the array names it, and one the array skips is not (the kernel
 * never sees it).  Here position 0 names SQE 5, a submit of no schedule
 * (ENOENT), while SQE 0, the one io_uring_get_sqe gave, is a submit the
 * kernel never takes. */
START_TEST(sq_array_followed)
{
	struct setup s;
	setup(&s);
	struct io_uring ring;
	ring_init(&ring, IORING_SETUP_SQE128);
	ck_assert_ptr_nonnull(ring.sq.array);
	uint64_t seqno = 0;
	struct io_uring_sqe *skipped = submit(&ring, s.fd, s.schedule,
					      &seqno, 1);
	unsigned int pos = ring.sq.sqe_tail - 1;
	struct io_uring_sqe *named = uring_sqe(ring.sq.sqes, ring.flags, 5);
	memcpy(named, skipped, 128);
	struct arena_uring_submit none = { .schedule = s.schedule + 7 };
	memcpy(named->cmd, &none, sizeof(none));
	named->user_data = 2;
	unsigned int was = ring.sq.array[pos & ring.sq.ring_mask];
	ring.sq.array[pos & ring.sq.ring_mask] = 5;
	ck_assert_int_eq(io_uring_submit(&ring), 1);
	int res[16] = { [1] = 99, [2] = 99 };
	reap(&ring, 1, res);
	ring.sq.array[pos & ring.sq.ring_mask] = was;
	ck_assert_int_eq(res[2], -ENOENT);
	ck_assert_int_eq(res[1], 99);
	/* Nothing was submitted. */
	ck_assert_uint_eq(seqno, 0);
	ck_assert_int_eq(dev_wait(s.fd, 1), EINVAL);
	io_uring_queue_exit(&ring);
	close(s.fd);
}
END_TEST

/* A ring is its SQ mapping, not its fd number: a ring whose fd was
 * closed (its mapping kept) and a new ring given the same number, set
 * up without liburing's queue_init, share no registered files.  The
 * new ring has none, so its fixed-file slot 0 is the kernel's EBADF,
 * not the device the old ring's slot 0 named. */
START_TEST(ring_by_mapping)
{
	struct setup s;
	setup(&s);
	struct io_uring old;
	ring_init(&old, IORING_SETUP_SQE128);
	ck_assert_int_eq(io_uring_register_files(&old, &s.fd, 1), 0);
	int n = old.ring_fd;
	ck_assert_int_eq(close(n), 0);
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };
	int fd = (int)syscall(__NR_io_uring_setup, 8, &p);
	ck_assert_int_eq(fd, n);
	struct io_uring ring;
	ck_assert_int_eq(io_uring_queue_mmap(fd, &p, &ring), 0);
	uint64_t seqno = 0;
	submit(&ring, 0, s.schedule, &seqno, 1)->flags |= IOSQE_FIXED_FILE;
	ck_assert_int_eq(io_uring_submit(&ring), 1);
	int res[16] = { [1] = 99 };
	reap(&ring, 1, res);
	ck_assert_int_eq(res[1], -EBADF);
	ck_assert_uint_eq(seqno, 0);
	ck_assert_int_eq(dev_wait(s.fd, 1), EINVAL);
	io_uring_queue_exit(&ring);
	old.ring_fd = -1;                 /* closed above */
	io_uring_queue_exit(&old);
	close(s.fd);
}
END_TEST

Suite *suite_uring(void)
{
	Suite *s = suite_create("uring");
	TCase *tc = tcase_create("uring");
	tcase_add_test(tc, append_submit);
	tcase_add_test(tc, error_results);
	tcase_add_test(tc, needs_sqe128);
	tcase_add_test(tc, fixed_file);
	tcase_add_test(tc, links);
	tcase_add_test(tc, submit_variants);
	tcase_add_loop_test(tc, submit_variants_newer, 0, 4);
	tcase_add_test(tc, passthrough);
	tcase_add_test(tc, sq_array_followed);
	tcase_add_test(tc, ring_by_mapping);
	suite_add_tcase(s, tc);
	/* Its own case (the kernel stage runs both on arena.ko). */
	tc = tcase_create("uring-seal");
	tcase_add_test(tc, sealed_submits);
	suite_add_tcase(s, tc);
	return s;
}
