/* SPDX-License-Identifier: MIT */
/*
 * The guard's parts in this process, without preloading anything: the
 * request filter, handle maps, the environment, the digest (it must be
 * libarenacert's), the verdict cache's byte comparison, the fd table,
 * records and dumps, and the mirror against a fake driver (laziness: a
 * rebuilt schedule costs a lookup), and the mark of a fork's child.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "fake.h"
#include "attach.h"
#include "cache.h"
#include "devices.h"
#include "handles.h"
#include "ioctl.h"
#include "load.h"
#include "mirror.h"
#include "options.h"
#include "process.h"
#include "stats.h"
#include "util.h"
#include "progs.h"
#include "spawn.h"
#include "suites.h"
#include "uring_abi.h"

/* ---- the request filter ---- */

START_TEST(test_guarded_requests)
{
	static const unsigned int guarded[] = {
		DRM_IOCTL_ARENA_PROGRAM_CREATE, DRM_IOCTL_ARENA_PROGRAM_DESTROY,
		DRM_IOCTL_ARENA_SCHEDULE_CREATE, DRM_IOCTL_ARENA_SCHEDULE_APPEND,
		DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, DRM_IOCTL_ARENA_SCHEDULE_DESTROY,
		DRM_IOCTL_ARENA_SEAL, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED,
	};
	static const unsigned int passed[] = {
		DRM_IOCTL_ARENA_BO_CREATE, DRM_IOCTL_ARENA_BO_MMAP,
		DRM_IOCTL_ARENA_BO_WRITE, DRM_IOCTL_ARENA_BO_READ,
		DRM_IOCTL_ARENA_BO_DESTROY, DRM_IOCTL_ARENA_WAIT,
		DRM_IOCTL_VERSION, 0x541B /* FIONREAD */, 0x5401 /* TCGETS */,
		0, 0xffffffffu,
	};
	for (size_t i = 0; i < sizeof(guarded) / sizeof(guarded[0]); i++) {
		ck_assert(ag_is_guarded_request(guarded[i]));
		/* drm_ioctl dispatches by number: any size, any direction. */
		ck_assert(ag_is_guarded_request(guarded[i] &
						 ~(_IOC_SIZEMASK << _IOC_SIZESHIFT)));
		ck_assert(ag_is_guarded_request(_IO(DRM_IOCTL_BASE,
						    _IOC_NR(guarded[i]))));
	}
	for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++)
		ck_assert(!ag_is_guarded_request(passed[i]));
}
END_TEST

/* ---- handles ---- */

START_TEST(test_handles)
{
	struct ag_handles h = { 0 };
	int err;
	static int values[5000];
	for (uint32_t k = 0; k < 5000; k++)
		ck_assert_ptr_null(ag_handles_put(&h, k * 7919u, &values[k],
						  &err));
	for (uint32_t k = 0; k < 5000; k += 2)
		ck_assert_ptr_eq(ag_handles_del(&h, k * 7919u), &values[k]);
	for (uint32_t k = 0; k < 5000; k++)
		ck_assert_ptr_eq(ag_handles_get(&h, k * 7919u),
				 k % 2 ? &values[k] : NULL);
	/* Replacing returns the old value; 0 and UINT32_MAX are keys. */
	int a, b;
	ck_assert_ptr_null(ag_handles_put(&h, 0, &a, &err));
	ck_assert_ptr_eq(ag_handles_put(&h, 0, &b, &err), &a);
	ck_assert_ptr_null(ag_handles_put(&h, UINT32_MAX, &a, &err));
	ck_assert_ptr_eq(ag_handles_get(&h, 0), &b);
	ck_assert_ptr_eq(ag_handles_get(&h, UINT32_MAX), &a);
	ck_assert_uint_eq(h.used, 2502);
	ag_handles_free(&h);
	ck_assert_ptr_null(ag_handles_get(&h, 1));
}
END_TEST

/* ---- the environment ---- */

START_TEST(test_config)
{
	static const struct { const char *v; enum ag_mode mode; int bad; } c[] = {
		{ NULL, AG_ENFORCE, 0 }, { "", AG_ENFORCE, 0 },
		{ "enforce", AG_ENFORCE, 0 }, { "warn", AG_WARN, 0 },
		{ "WARN", AG_WARN, 0 }, { "off", AG_OFF, 0 },
		{ "of", AG_ENFORCE, 1 }, { "0", AG_ENFORCE, 1 },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		if (c[i].v)
			setenv("ARENAGUARD", c[i].v, 1);
		else
			unsetenv("ARENAGUARD");
		ag_config_load();
		ck_assert_int_eq(ag_cfg.mode, c[i].mode);
		ck_assert_int_eq(ag_cfg.bad_mode[0] != 0, c[i].bad);
	}
	setenv("ARENAGUARD_LOG", scratch_path("x.log"), 1);
	setenv("ARENAGUARD_DUMP", scratch(), 1);
	setenv("ARENAGUARD_STATS", "0", 1);
	ag_config_load();
	ck_assert_str_eq(ag_cfg.log_path, scratch_path("x.log"));
	ck_assert_str_eq(ag_cfg.dump_dir, scratch());
	ck_assert_int_eq(ag_cfg.stats, 0);
	setenv("ARENAGUARD_STATS", "1", 1);
	ag_config_load();
	ck_assert_int_eq(ag_cfg.stats, 1);
}
END_TEST

/* ---- the digest ---- */

static struct ag_program *good_program(void)
{
	size_t len;
	uint8_t *image = prog_image(PROG_GOOD, &len);
	struct ag_program *p = ag_program_get(image, len);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_null(p->error);
	return p;
}

/* The guard's digest, made without an ac_schedule, is libarenacert's
 * ac_schedule_digest, batch by batch. */
START_TEST(test_digest_is_libarenacerts)
{
	struct ag_program *p = good_program();
	ac_schedule *s = ac_schedule_new(p->prog);
	ac_digester *mine = ac_digester_new(&p->digest);
	ck_assert_ptr_nonnull(mine);
	const struct ac_ref *batches[] = { prog_bad_d_refs, prog_good_refs,
					   prog_bad_d_refs + 1 };
	const size_t sizes[] = { 4, 2, 3 };
	for (int i = 0; i < 4; i++) {
		struct ac_digest want;
		struct ac_digest got;
		ac_schedule_digest(s, &want);
		ac_digester_value(mine, &got);
		ck_assert_uint_eq(got.high, want.high);
		ck_assert_uint_eq(got.low, want.low);
		if (i == 3)
			break;
		ck_assert_int_eq(ac_schedule_append(s, batches[i], sizes[i],
						    NULL), 0);
		ac_digester_add(mine, batches[i], sizes[i]);
	}
	/* undo takes back the last batch */
	ac_digester_add(mine, prog_good_refs, 1);
	ac_digester_undo(mine);
	struct ac_digest want, got;
	ac_schedule_digest(s, &want);
	ac_digester_value(mine, &got);
	ck_assert(got.high == want.high && got.low == want.low);
	ac_digester_free(mine);
	ac_schedule_free(s);
	ag_program_unref(p);
}
END_TEST

/* ---- the registered-file update's fd array (common/uring_abi.c) ---- */

struct slots_seen {
	int v[2100];
	unsigned int calls;
};

static void seen_set(void *ctx, unsigned int slot, int fd)
{
	struct slots_seen *s = ctx;
	ck_assert_uint_lt(slot, 2100);
	s->v[slot] = fd;
	s->calls++;
}

/* Slots inside the table only, SKIP leaves a slot, no array or an
 * unreadable one reads as -1s, across the chunks of 1024. */
START_TEST(test_uring_files_each)
{
	static int fds[2100];
	for (int i = 0; i < 2100; i++)
		fds[i] = i % 7 == 3 ? IORING_REGISTER_FILES_SKIP : 100 + i;
	struct slots_seen s;
	memset(&s, 0x55, sizeof(s.v));
	s.calls = 0;
	uring_files_each((uintptr_t)fds, 10, 2100, 2090, seen_set, &s);
	unsigned int want = 0;
	for (int i = 0; i < 2080; i++) {
		if (i % 7 == 3) {
			ck_assert_int_eq(s.v[10 + i], 0x55555555);
		} else {
			ck_assert_int_eq(s.v[10 + i], 100 + i);
			want++;
		}
	}
	ck_assert_uint_eq(s.calls, want);            /* none past 2090 */
	ck_assert_int_eq(s.v[9], 0x55555555);
	s.calls = 0;
	uring_files_each(0, 0, 3, 5, seen_set, &s);  /* all unset */
	ck_assert_uint_eq(s.calls, 3);
	ck_assert_int_eq(s.v[0], -1);
	ck_assert_int_eq(s.v[2], -1);
	s.calls = 0;
	uring_files_each(8, 0, 2, 5, seen_set, &s);  /* unreadable */
	ck_assert_uint_eq(s.calls, 2);
	ck_assert_int_eq(s.v[1], -1);
	s.calls = 0;
	uring_files_each((uintptr_t)fds, 7, 2, 5, seen_set, &s); /* past */
	ck_assert_uint_eq(s.calls, 0);
}
END_TEST

/* Equal images share one certified program. */
START_TEST(test_program_cache)
{
	unsigned long long before = atomic_load(&ag_stats.programs_certified);
	struct ag_program *a = good_program(), *b = good_program();
	ck_assert_ptr_eq(a, b);
	ck_assert_uint_eq(atomic_load(&ag_stats.programs_certified), before + 1);
	size_t len;
	uint8_t *image = prog_image(PROG_BAD_C, &len);
	struct ag_program *c = ag_program_get(image, len);
	ck_assert_ptr_ne(a, c);
	ck_assert_uint_eq(ac_program_verdict(c->prog), PROG_BAD_C_VERDICT);
	/* A malformed image: an error that says where. */
	image = prog_image(PROG_GOOD, &len);
	image[16] ^= 8;
	struct ag_program *d = ag_program_get(image, len);
	ck_assert_ptr_nonnull(d->error);
	ck_assert_msg(strstr(d->error, "malformed program image: byte 16 "
			     "(header.image_size)"), "%s", d->error);
	ag_program_unref(a);
	ag_program_unref(b);
	ag_program_unref(c);
	ag_program_unref(d);
}
END_TEST

/* PROG_GOOD's image with a schedule section, and with alignment set to
 * `alignment` (3: a malformed program). */
static uint8_t *image_with_refs(uint64_t alignment, size_t *len)
{
	uint8_t *good = prog_image(PROG_GOOD, len);
	struct ac_model *m = NULL;
	ck_assert_int_eq(ac_model_read_image(good, *len, &m, NULL), 0);
	static const struct ac_ref refs[] = { { 0, 1 } };
	struct ac_model with = *m;
	with.refs = refs;
	with.n_refs = 1;
	with.alignment = alignment;
	uint8_t *image = ac_model_write_image(&with, len, NULL);
	ck_assert_ptr_nonnull(image);
	ac_model_free(m);
	free(good);
	return image;
}

/* The image must not carry a schedule: that error, and no program, even
 * when the program is malformed too (the guard reads and certifies the
 * image in one call, and looks at the schedule section after it). */
START_TEST(test_program_with_schedule)
{
	static const uint64_t alignments[] = { 64, 3 };
	for (size_t i = 0; i < 2; i++) {
		size_t len;
		uint8_t *image = image_with_refs(alignments[i], &len);
		struct ag_program *p = ag_program_get(image, len);
		ck_assert_ptr_nonnull(p);
		ck_assert_ptr_null(p->prog);
		ck_assert_ptr_nonnull(p->error);
		ck_assert_msg(strstr(p->error, "the image's schedule section "
				     "is not empty"), "%s", p->error);
		ag_program_unref(p);
	}
	/* without the schedule, alignment 3 is the program's error */
	size_t len;
	uint8_t *good = prog_image(PROG_GOOD, &len);
	struct ac_model *m = NULL;
	ck_assert_int_eq(ac_model_read_image(good, len, &m, NULL), 0);
	struct ac_model bad = *m;
	bad.alignment = 3;
	uint8_t *image = ac_model_write_image(&bad, &len, NULL);
	ck_assert_ptr_nonnull(image);
	ac_model_free(m);
	free(good);
	struct ag_program *p = ag_program_get(image, len);
	ck_assert_ptr_null(p->prog);
	ck_assert_msg(strstr(p->error, "malformed program: alignment: "),
		      "%s", p->error);
	ag_program_unref(p);
}
END_TEST

/* A digest hit is not enough: the bytes must match. */
START_TEST(test_verdict_cache_compares_bytes)
{
	struct ag_program *p = good_program();
	struct ag_refs *r = ag_refs_grow(NULL, 0, 4);
	memcpy(r->v, prog_bad_d_refs, sizeof(prog_bad_d_refs));
	struct ag_verdict *v = ag_verdict_new();
	v->digest = (struct ac_digest){ 1, 2 };       /* forged */
	v->program = p;
	atomic_fetch_add(&p->refcount, 1);
	v->refv = r;
	v->n_refs = 4;
	v->verdict = PROG_BAD_D_VERDICT;
	v->text = ag_strdup("x");
	struct ag_verdict *pub = ag_verdict_publish(v);
	ck_assert_ptr_eq(pub, v);

	struct ac_ref copy[4];
	memcpy(copy, prog_bad_d_refs, sizeof(copy));
	struct ag_verdict *hit = ag_verdict_find(&v->digest, p, copy, 4);
	ck_assert_ptr_eq(hit, v);
	ag_verdict_unref(hit);
	copy[3].count = 2;          /* same digest, other bytes */
	ck_assert_ptr_null(ag_verdict_find(&v->digest, p, copy, 4));
	ck_assert_ptr_null(ag_verdict_find(&v->digest, p, copy, 3));
	size_t len;
	uint8_t *image = prog_image(PROG_BAD_C, &len);
	struct ag_program *other = ag_program_get(image, len);
	ck_assert_ptr_null(ag_verdict_find(&v->digest, other,
					   prog_bad_d_refs, 4));
	ag_program_unref(other);
	ag_verdict_unref(pub);
	ag_program_unref(p);
	ag_cache_trim();
}
END_TEST

/* ---- the fd table ---- */

START_TEST(test_fd_table)
{
	struct ag_file *f = ag_file_new();
	ag_fd_set(5, f);
	ag_fd_set(3000, f);
	ag_file_unref(f);                 /* the table's references remain */
	ck_assert_ptr_eq(ag_fd_peek(5), f);
	ag_fd_dup(5, 7);
	ck_assert_ptr_eq(ag_fd_peek(7), f);
	ag_fd_forget(5);
	ck_assert_ptr_eq(ag_fd_peek(5), AG_FD_UNKNOWN);
	ck_assert_uint_eq(ag_file_refcount(f), 2);
	ag_fd_set(9, AG_FD_NOTDEV);
	ag_fd_dup(9, 7);                  /* 7 is no longer f */
	ck_assert_ptr_eq(ag_fd_peek(7), AG_FD_UNKNOWN);
	ag_fd_forget_range(100, UINT32_MAX);
	ck_assert_ptr_eq(ag_fd_peek(3000), AG_FD_UNKNOWN);
	ck_assert_uint_eq(ag_file_refcount(f), 0);
	ag_fd_forget_range(0, UINT32_MAX);
	/* A pipe is not the device: probed once, remembered. */
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(ag_probe_device(p[0]), 0);
	struct ag_file *none;
	ck_assert_int_eq(ag_fd_file(p[0], &none), 0);
	ck_assert_ptr_null(none);
	ck_assert_ptr_eq(ag_fd_peek(p[0]), AG_FD_NOTDEV);
	close(p[0]);
	close(p[1]);
	ck_assert_int_eq(ag_probe_device(p[0]), -EBADF);   /* closed */
}
END_TEST

/* ---- the mirror, on the fake driver ---- */

static int is_lazy(struct ag_file *f, uint32_t handle)
{
	struct ag_sched *s = ag_sched_lock(f, handle);
	ck_assert_ptr_nonnull(s);
	int lazy = ag_sched_lazy(s);
	ag_sched_unlock(s);
	return lazy;
}

/* ag_fd_file answers by its return value alone (0, or the -errno to
 * refuse the request with: the guard's one convention) and leaves errno
 * as it was, whatever path it takes: the device's file, a pipe probed
 * and then known as not the device, a closed fd known and unknown. */
static void fd_file_is(int fd, int rc, struct ag_file *want)
{
	struct ag_file *f = AG_SLOT_UNCERTAIN;
	errno = EXDEV;
	ck_assert_int_eq(ag_fd_file(fd, &f), rc);
	ck_assert_int_eq(errno, EXDEV);
	ck_assert_ptr_eq(f, want);
	ag_file_unref(f);
}

START_TEST(test_fd_file_errno)
{
	fake_setup();
	struct ag_file *dev = ag_file_attach(FAKE_FD);
	ck_assert_ptr_nonnull(dev);
	ag_fd_set(FAKE_FD, dev);
	fd_file_is(FAKE_FD, 0, dev);
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	fd_file_is(p[0], 0, NULL);                  /* probed: not it */
	ck_assert_ptr_eq(ag_fd_peek(p[0]), AG_FD_NOTDEV);
	fd_file_is(p[0], 0, NULL);                  /* known: not it */
	close(p[0]);
	close(p[1]);
	fd_file_is(p[0], 0, NULL);                  /* known, now closed */
	ag_fd_forget(p[0]);
	fd_file_is(p[0], 0, NULL);                  /* closed, unknown */
	ag_fd_forget(FAKE_FD);
	ag_file_unref(dev);
}
END_TEST

START_TEST(test_rebuild_is_a_lookup)
{
	fake_setup();
	struct ag_file *f = ag_file_new();
	uint32_t prog = fake_program(f, PROG_GOOD);
	unsigned long long computed = atomic_load(&ag_stats.schedules_certified);

	uint32_t first = fake_schedule(f, prog, prog_bad_d_refs, 4, 2);
	ck_assert(!is_lazy(f, first));        /* new: (D) as appended */
	ck_assert_int_eq(fake_submit(f, first), -EPERM);
	ck_assert_int_eq(fake_calls[DRM_ARENA_SCHEDULE_SUBMIT], 0);

	for (int i = 0; i < 5; i++) {
		uint32_t again = fake_schedule(f, prog, prog_bad_d_refs, 4, 2);
		ck_assert(is_lazy(f, again));  /* no (D) work at all */
		ck_assert_int_eq(fake_submit(f, again), -EPERM);
	}
	ck_assert_uint_eq(atomic_load(&ag_stats.schedules_certified),
			  computed + 1);
	/* Same references, other batches: not lazy, still a cache hit. */
	uint32_t other = fake_schedule(f, prog, prog_bad_d_refs, 4, 1);
	ck_assert(!is_lazy(f, other));
	ck_assert_int_eq(fake_submit(f, other), -EPERM);
	ck_assert_uint_eq(atomic_load(&ag_stats.schedules_certified),
			  computed + 1);

	/* One record for all of it. */
	char *log = slurp(scratch_path("log"));
	ck_assert_int_eq(count(log, "arenaguard: blocked submission"), 1);
	ck_assert_msg(strstr(log, "verdict 8 (D)"), "%s", log);
	free(log);

	uint32_t good = fake_schedule(f, prog, prog_good_refs, 2, 2);
	ck_assert_int_eq(fake_submit(f, good), 0);
	ck_assert_int_eq(fake_calls[DRM_ARENA_SCHEDULE_SUBMIT], 1);
	ag_file_unref(f);
}
END_TEST

/* A schedule grown after its last submit is decided again. */
START_TEST(test_append_after_submit)
{
	fake_setup();
	struct ag_file *f = ag_file_new();
	uint32_t prog = fake_program(f, PROG_GOOD);
	uint32_t s = fake_schedule(f, prog, prog_bad_d_refs, 1, 1);  /* P */
	ck_assert_int_eq(fake_submit(f, s), 0);
	struct drm_arena_schedule_append a = {
		.schedule = s, .count = 3, .refs = (uintptr_t)(prog_bad_d_refs + 1) };
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a), 0);
	ck_assert_int_eq(fake_submit(f, s), -EPERM);
	ag_file_unref(f);
}
END_TEST

/* Warn mode: the same record, and the submission goes through. */
START_TEST(test_warn_mode)
{
	fake_setup();
	ag_cfg.mode = AG_WARN;
	struct ag_file *f = ag_file_new();
	uint32_t prog = fake_program(f, PROG_BAD_C);
	uint32_t s = fake_schedule(f, prog, prog_good_refs, 2, 2);
	ck_assert_int_eq(fake_submit(f, s), 0);
	ck_assert_int_eq(fake_calls[DRM_ARENA_SCHEDULE_SUBMIT], 1);
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(strstr(log, "arenaguard: warning: submitting schedule 2 "
			     "(program 1, fd 42, ioctl, pid "), "%s", log);
	ck_assert_msg(strstr(log, "verdict 2 (C)"), "%s", log);
	free(log);
	ag_file_unref(f);
	ag_cfg.mode = AG_ENFORCE;
}
END_TEST

/* Dumps: the image with the schedule, which arena-certify decides the
 * same way. */
START_TEST(test_dump_reproduces)
{
	fake_setup();
	setenv("ARENAGUARD_DUMP", scratch(), 1);
	ag_config_load();
	struct ag_file *f = ag_file_new();
	ck_assert_int_eq(fake_submit(f, fake_bad_d(f)), -EPERM);
	char *log = slurp(scratch_path("log"));
	const char *p = strstr(log, "render with: arena-certify ");
	ck_assert_msg(p, "%s", log);
	char file[512];
	ck_assert_int_eq(sscanf(p, "render with: arena-certify %511s", file),
			 1);
	size_t len = 0;
	FILE *in = fopen(file, "rb");
	ck_assert_ptr_nonnull(in);
	uint8_t image[4096];
	len = fread(image, 1, sizeof(image), in);
	fclose(in);
	struct ac_model *m;
	ck_assert_int_eq(ac_model_read_image(image, len, &m, NULL), 0);
	ck_assert_uint_eq(m->n_refs, 4);
	uint64_t verdict;
	ck_assert_int_eq(ac_certify(m, &verdict, NULL, NULL), 0);
	ck_assert_uint_eq(verdict, PROG_BAD_D_VERDICT);
	ac_model_free(m);
	free(log);
	ag_file_unref(f);
	unsetenv("ARENAGUARD_DUMP");
}
END_TEST

/* A program the driver took that the guard cannot read is blocked. */
START_TEST(test_unreadable_program)
{
	fake_setup();
	struct ag_file *f = ag_file_new();
	struct drm_arena_program_create c = { .image = 8, .size = 100 };
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_PROGRAM_CREATE, &c), 0);
	uint32_t s = fake_schedule(f, c.handle, prog_good_refs, 2, 2);
	ck_assert_int_eq(fake_submit(f, s), -EPERM);
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(strstr(log, "cannot certify\narenaguard:   the guard "
			     "could not read the image the driver took"),
		      "%s", log);
	free(log);
	ag_file_unref(f);
}
END_TEST

/* The chunk mirror.c copies and digests at a time (CREATE_CHUNK). */
#define CHUNK ((size_t)256 << 10)

/* An image of several chunks, the last one partial, is copied and
 * digested chunk by chunk (mirror.c copy_image): the program the guard
 * keeps is the image byte for byte, under ac_image_digest's key (the
 * same image digested in one pass finds it in the cache), with the
 * image's seal, and it runs.  The same image running into a page
 * without access after its first two chunks is unreadable to the guard:
 * the driver's answer (the fake takes it) and a program the guard
 * blocks. */
START_TEST(test_create_in_chunks)
{
	fake_setup();
	struct ag_file *f = ag_file_new();
	size_t len;
	uint8_t *image = prog_image_wide(17500, 0x3f800000u, &len);
	ck_assert_uint_gt(len, 4 * CHUNK);
	ck_assert_uint_ne(len % CHUNK, 0);
	struct drm_arena_program_create c = { .image = (uintptr_t)image,
					       .size = len };
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_PROGRAM_CREATE, &c), 0);
	const struct ac_ref run = { 0, 1 };
	uint32_t s = fake_schedule(f, c.handle, &run, 1, 1);
	struct ag_sched *sched = ag_sched_lock(f, s);
	ck_assert_ptr_nonnull(sched);
	const struct ag_program *p = ag_sched_program(sched);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_null(p->error);
	ck_assert_uint_eq(p->len, len);
	ck_assert(memcmp(p->image, image, len) == 0);
	struct ac_digest want;
	ac_image_digest(image, len, &want);
	ck_assert(p->digest.high == want.high && p->digest.low == want.low);
	struct arena_seal seal;
	struct arena_seal_value got_seal, want_seal;
	arena_seal_program(&seal, image, len);
	arena_seal_value(&seal, &want_seal);
	arena_seal_value(&p->seal, &got_seal);
	ck_assert(arena_seal_equal(&got_seal, want_seal.bytes));
	uint8_t *again = malloc(len);
	ck_assert_ptr_nonnull(again);
	memcpy(again, image, len);
	struct ag_program *found = ag_program_get(again, len);
	ck_assert_ptr_eq(found, p);
	ag_program_unref(found);
	ag_sched_unlock(sched);
	ck_assert_int_eq(fake_submit(f, s), 0);

	/* Two chunks and 100 bytes readable, the rest on a page without
	 * access. */
	long page = sysconf(_SC_PAGESIZE);
	size_t readable = 2 * CHUNK + 100;
	size_t span = (readable + (size_t)page - 1) / (size_t)page *
		      (size_t)page;
	uint8_t *map = mmap(NULL, span + (size_t)page, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(map != MAP_FAILED);
	ck_assert_int_eq(mprotect(map + span, (size_t)page, PROT_NONE), 0);
	uint8_t *tail = map + span - readable;
	memcpy(tail, image, readable);
	c = (struct drm_arena_program_create){ .image = (uintptr_t)tail,
					       .size = len };
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_PROGRAM_CREATE, &c), 0);
	s = fake_schedule(f, c.handle, &run, 1, 1);
	ck_assert_int_eq(fake_submit(f, s), -EPERM);
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(strstr(log, "the guard could not read the image the "
			     "driver took"), "%s", log);
	free(log);
	munmap(map, span + (size_t)page);
	free(image);
	ag_file_unref(f);
}
END_TEST

#ifndef NDEBUG
/* "s locked" is asserted (debug builds): a schedule's state read by a
 * thread that does not hold its lock aborts. */
START_TEST(test_unlocked_schedule_asserted)
{
	fake_setup();
	struct ag_file *f = ag_file_new();
	uint32_t prog = fake_program(f, PROG_GOOD);
	uint32_t h = fake_schedule(f, prog, prog_good_refs, 2, 1);
	struct ag_sched *s = ag_sched_lock(f, h);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(ag_sched_length(s), 2);      /* held: read */
	ag_sched_hold(s);               /* a reference beyond the lock */
	ag_sched_unlock(s);
	scratch_remove();               /* the teardown will not run */
	(void)ag_sched_length(s);       /* not held: aborts */
}
END_TEST
#endif

/* The stats of /proc/self/ns/pid this process made (process.c's one way
 * to ask its pid namespace): guard-tests is linked with --wrap=stat64,
 * the symbol stat is with the build's 64-bit file offsets. */
static unsigned int pidns_stats;

int __real_stat64(const char *path, struct stat *st);
int __wrap_stat64(const char *path, struct stat *st);
int __wrap_stat64(const char *path, struct stat *st)
{
	if (strcmp(path, "/proc/self/ns/pid") == 0)
		pidns_stats++;
	return __real_stat64(path, st);
}

/* In the child of a fork (a new pid namespace's first when `newpid`),
 * marked by the atfork handler's call: 0 if it asked its namespace
 * exactly when it had to (not when its parent is the marked process in
 * its own namespace; when it is in another) and is then its own guard's
 * process, 1 if not, 2 if the namespace could not be made. */
static int forked_child(int newpid)
{
	ag_process_mark();
	if (newpid && unshare(CLONE_NEWPID) != 0)
		return 2;
	pid_t c = fork();
	if (c == 0) {
		unsigned int before = pidns_stats;
		ag_process_forked();
		int asked = pidns_stats != before;
		_exit(asked == newpid && ag_process_shares_fds() == 1 ? 0 : 1);
	}
	int status = 0;
	if (c < 0 || waitpid(c, &status, 0) != c || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

/* A fork's child asks the kernel for its pid namespace only when it may
 * be another than its marked parent's (issue 32: the stat of
 * /proc/self/ns/pid made the new pid's proc inodes at every fork, about
 * 2 % of a guarded fork + exit); after unshare(CLONE_NEWPID) it does,
 * and is its own process (a namespace taken for the parent's would make
 * it a stranger to its own guard state).  The namespace is made in a
 * child of the test, whose later forks it would change. */
START_TEST(test_fork_child_pidns)
{
	ck_assert_int_eq(forked_child(0), 0);
	pid_t c = fork();
	ck_assert_int_ge(c, 0);
	if (c == 0)
		_exit(forked_child(1));
	int status = 0;
	ck_assert_int_eq(waitpid(c, &status, 0), c);
	ck_assert(WIFEXITED(status));
	if (WEXITSTATUS(status) == 2 && geteuid() != 0)
		return;   /* no CAP_SYS_ADMIN: no namespace to make */
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

static void teardown(void)
{
	scratch_remove();
}

Suite *suite_unit(void)
{
	Suite *s = suite_create("unit");
	TCase *t = tcase_create("unit");
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_test(t, test_guarded_requests);
	tcase_add_test(t, test_handles);
	tcase_add_test(t, test_config);
	tcase_add_test(t, test_digest_is_libarenacerts);
	tcase_add_test(t, test_program_cache);
	tcase_add_test(t, test_program_with_schedule);
	tcase_add_test(t, test_uring_files_each);
	tcase_add_test(t, test_verdict_cache_compares_bytes);
	tcase_add_test(t, test_fd_table);
	tcase_add_test(t, test_fd_file_errno);
	tcase_add_test(t, test_rebuild_is_a_lookup);
	tcase_add_test(t, test_append_after_submit);
	tcase_add_test(t, test_warn_mode);
	tcase_add_test(t, test_dump_reproduces);
	tcase_add_test(t, test_unreadable_program);
	tcase_add_test(t, test_create_in_chunks);
	tcase_add_test(t, test_fork_child_pidns);
#ifndef NDEBUG
	tcase_add_test_raise_signal(t, test_unlocked_schedule_asserted,
				    SIGABRT);
#endif
	suite_add_tcase(s, t);
	return s;
}
