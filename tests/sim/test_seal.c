/* SPDX-License-Identifier: MIT */
/*
 * Sealed submissions (uapi.h, "Sealed submissions"): DRM_IOCTL_ARENA_SEAL,
 * the sealed submit by ioctl (test_uring.c has io_uring's), ENOKEY and
 * EKEYREJECTED,
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
	s->image = two_fills_image(&s->len);
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

/* The plain submit's errno. */
static int submit_plain(int fd, uint32_t schedule, uint64_t *seqno)
{
	struct drm_arena_schedule_submit a = { .schedule = schedule };
	int rc = xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &a);
	*seqno = a.seqno;
	return rc;
}

START_TEST(seal_ioctl)
{
	int fd = dev_open();
	struct drm_arena_seal bad = { .flags = 1 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SEAL, &bad), EINVAL);
	/* algorithms is out only: its input is ignored, and it says
	 * SHA-256 (the one algorithm). */
	struct drm_arena_seal in = { .algorithms = 0xffffffffu };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SEAL, &in), 0);
	ck_assert_uint_eq(in.algorithms, 1u << ARENA_SEAL_SHA256);
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SEAL, BAD), EFAULT);
	uint64_t c1, c2, c3, other;
	ck_assert_int_eq(dev_seal(fd, &c1), 0);
	ck_assert_uint_ne(c1, 0);
	ck_assert_int_eq(dev_seal(fd, &c2), 0);      /* twice: the same */
	ck_assert_uint_eq(c1, c2);
	int d = dup(fd);
	ck_assert_int_eq(dev_seal(d, &c3), 0);       /* a dup: the same */
	ck_assert_uint_eq(c1, c3);
	int fd2 = dev_open();                        /* another open */
	ck_assert_int_eq(dev_seal(fd2, &other), 0);
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
	ck_assert_int_eq(sched_submit_sealed(s.fd, s.schedule,
				       seal_now(&s.seal), &seqno), 0);
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
	ck_assert_int_eq(dev_seal(s.fd, &context), 0);
	/* The plain submit is refused, also through a dup; ENOKEY comes
	 * before the handle is looked up. */
	int d = dup(s.fd);
	ck_assert_int_eq(submit_plain(s.fd, s.schedule, &seqno), ENOKEY);
	ck_assert_int_eq(submit_plain(d, s.schedule, &seqno), ENOKEY);
	ck_assert_int_eq(submit_plain(s.fd, s.schedule + 9, &seqno), ENOKEY);
	close(d);
	ck_assert(at(&s, 0) == 0.0f);
	/* A wrong seal: nothing runs, no sequence number is consumed. */
	struct arena_seal_value right = seal_now(&s.seal);
	ck_assert_int_eq(sched_submit_sealed(s.fd, s.schedule, seal_wrong(right), &seqno),
			 EKEYREJECTED);
	ck_assert(at(&s, 0) == 0.0f);
	ck_assert_int_eq(dev_wait(s.fd, 1), EINVAL);
	/* The right one runs, and gets the first number. */
	ck_assert_int_eq(sched_submit_sealed(s.fd, s.schedule, right, &seqno), 0);
	ck_assert_uint_eq(seqno, 1);
	ck_assert_int_eq(dev_wait(s.fd, 1), 0);
	ck_assert(at(&s, 0) == 1.0f);
	/* Other errors keep their errno. */
	ck_assert_int_eq(sched_submit_sealed(s.fd, s.schedule + 9, right, &seqno),
			 ENOENT);
	/* EINVAL: flags, pad, an algorithm the driver does not offer (0,
	 * and the retired XXH64 is none), even with the right seal. */
	struct drm_arena_schedule_submit_sealed bad[] = {
		{ .schedule = s.schedule, .flags = 1,
		  .algorithm = ARENA_SEAL_SHA256 },
		{ .schedule = s.schedule, .pad = 1,
		  .algorithm = ARENA_SEAL_SHA256 },
		{ .schedule = s.schedule, .algorithm = 0 },
		{ .schedule = s.schedule, .algorithm = 2 },
		{ .schedule = s.schedule, .algorithm = 32 },
		{ .schedule = s.schedule, .algorithm = ~0u },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(bad[i].seal, right.bytes, sizeof(bad[i].seal));
		ck_assert_int_eq(xioctl(s.fd,
					DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED,
					&bad[i]), EINVAL);
	}
	ck_assert_int_eq(dev_wait(s.fd, 2), EINVAL);     /* none ran */
	sealed_fini(&s);
}
END_TEST

START_TEST(seal_follows_appends)
{
	struct sealed s;
	sealed_setup(&s, dev_open());
	uint64_t seqno, context;
	ck_assert_int_eq(dev_seal(s.fd, &context), 0);
	/* An empty schedule's seal is its program's. */
	struct arena_seal_value empty = seal_now(&s.seal);
	ck_assert_int_eq(sched_submit_sealed(s.fd, s.schedule, empty, &seqno), 0);
	sealed_append(&s, 0, 1);
	struct arena_seal_value one = seal_now(&s.seal);
	ck_assert(memcmp(&one, &empty, sizeof(one)) != 0);
	ck_assert_int_eq(sched_submit_sealed(s.fd, s.schedule, empty, &seqno),
			 EKEYREJECTED);
	/* A refused batch does not change the seal. */
	struct drm_arena_ref outside = { 5, 1 };
	ck_assert_int_eq(sched_append(s.fd, s.schedule, &outside, 1), EINVAL);
	/* Nor does an empty one. */
	ck_assert_int_eq(sched_append(s.fd, s.schedule, &outside, 0), 0);
	ck_assert_int_eq(sched_submit_sealed(s.fd, s.schedule, one, &seqno), 0);
	ck_assert_uint_eq(seqno, 2);
	sealed_append(&s, 1, 1);
	ck_assert_int_eq(sched_submit_sealed(s.fd, s.schedule, one, &seqno),
			 EKEYREJECTED);
	ck_assert_int_eq(sched_submit_sealed(s.fd, s.schedule,
				       seal_now(&s.seal), &seqno), 0);
	ck_assert_uint_eq(seqno, 3);
	ck_assert(at(&s, 16) == 2.0f);
	/* Two schedules of one program with the same references have the
	 * same seal; a new schedule starts again from the program's. */
	uint32_t other = sched_new(s.fd, s.program);
	ck_assert_int_eq(sched_submit_sealed(s.fd, other, empty, &seqno), 0);
	struct drm_arena_ref both[] = { { 0, 1 }, { 1, 1 } };
	ck_assert_int_eq(sched_append(s.fd, other, both, 2), 0);
	ck_assert_int_eq(sched_submit_sealed(s.fd, other, seal_now(&s.seal),
				       &seqno), 0);
	sealed_fini(&s);
}
END_TEST

/* ---- ARENASIM_REQUIRE_SEAL ---- */

/* ---- common/seal.c against known SHA-256 values ---- */

/* The hex of a seal. */
static void hex(const struct arena_seal_value *v, char out[65])
{
	for (int i = 0; i < ARENA_SEAL_BYTES; i++)
		snprintf(out + 2 * i, 3, "%02x", v->bytes[i]);
}

static void expect(const struct arena_seal *s, const char *want)
{
	char got[65];
	struct arena_seal_value v = seal_now(s);
	hex(&v, got);
	ck_assert_str_eq(got, want);
}

/* The values are SHA-256 of uapi.h's byte string computed independently
 * (Python's hashlib: sha256(struct.pack('<Q', size) + image +
 * struct.pack('<QQ...', first, count, ...))). */
START_TEST(seal_vectors)
{
	struct arena_seal s;
	/* le64(0): an empty image. */
	arena_seal_program(&s, "", 0);
	expect(&s, "af5570f5a1810b7af78caf4bc70a660f0df51e42baf91d4de5b2328de0e83dfc");
	/* le64(3) || "abc". */
	arena_seal_program(&s, "abc", 3);
	const char *abc = "ce91dc5eec0139adf091900d225971d6ad246a845bad791b5693a9d0d55dd391";
	expect(&s, abc);
	expect(&s, abc);              /* reading changes nothing */
	/* ... || ref {1, 2} || ref {3, 4}, fed in two batches. */
	const struct drm_arena_ref refs[] = { { 1, 2 }, { 3, 4 } };
	arena_seal_refs(&s, refs, 1);
	arena_seal_refs(&s, refs + 1, 1);
	expect(&s, "b60e3ce81f7f8e06dd342bb4dafc4223b5ba113f6585607f75c256b49596bda6");
	/* 100 bytes (past one SHA-256 block), whole and in chunks. */
	uint8_t img[100];
	for (int i = 0; i < 100; i++)
		img[i] = (uint8_t)i;
	const char *hundred = "7b8ca8743e5237991821a89ebea5e9fd22c711277134e37f4514842d514af7c9";
	arena_seal_program(&s, img, sizeof(img));
	expect(&s, hundred);
	arena_seal_begin(&s, sizeof(img));
	arena_seal_image(&s, img, 1);
	arena_seal_image(&s, img + 1, 0);
	arena_seal_image(&s, img + 1, 63);
	arena_seal_image(&s, img + 64, 36);
	expect(&s, hundred);
	/* The one algorithm, picked from a driver's offer. */
	ck_assert_uint_eq(arena_seal_pick(1u << ARENA_SEAL_SHA256),
			  ARENA_SEAL_SHA256);
	ck_assert_uint_eq(arena_seal_pick(~0u), ARENA_SEAL_SHA256);
	ck_assert_uint_eq(arena_seal_pick(0), 0);
	ck_assert_uint_eq(arena_seal_pick(~(1u << ARENA_SEAL_SHA256)), 0);
}
END_TEST

/* `sim-tests --require-seal-demo`: run with ARENASIM_REQUIRE_SEAL=1;
 * exits 0 when every open is sealed from the start. */
int require_seal_demo(void)
{
	struct sealed s;
	sealed_setup(&s, dev_open());
	sealed_append(&s, 0, 1);
	uint64_t seqno, context;
	ck_assert_int_eq(submit_plain(s.fd, s.schedule, &seqno), ENOKEY);
	ck_assert_int_eq(sched_submit_sealed(s.fd, s.schedule,
				       seal_now(&s.seal), &seqno), 0);
	ck_assert_uint_eq(seqno, 1);
	ck_assert_int_eq(dev_seal(s.fd, &context), 0);
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
	tcase_add_test(tc, seal_vectors);
	tcase_add_test(tc, seal_ioctl);
	tcase_add_test(tc, unsealed_context);
	tcase_add_test(tc, sealed_context);
	tcase_add_test(tc, seal_follows_appends);
	suite_add_tcase(s, tc);
	/* Its own case: ARENASIM_REQUIRE_SEAL is the simulator's (the
	 * kernel stage runs case "seal" on arena.ko, and the demo itself
	 * with the module's require_seal=1). */
	tc = tcase_create("require-seal");
	tcase_add_test(tc, require_seal);
	suite_add_tcase(s, tc);
	return s;
}
