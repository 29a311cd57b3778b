/* SPDX-License-Identifier: MIT */
/*
 * The guard's decoding of ioctl and io_uring arguments (shim/), in this
 * process, over the fake driver of fake_driver.c (which checks that every
 * submission reaching it is certified).  The input is
 *
 *   byte 0     bit 0: a strict driver (refuses malformed batches, as the
 *              simulator does), else a lax one (takes any); bit 1: the
 *              ring has 128-byte SQEs (IORING_SETUP_SQE128); bit 2: a
 *              driver without seals (else the guard seals both files)
 *   u16 LE n, then n bytes: the application's memory (the pool's start)
 *   operations to the end, each a byte (mod 4) and its operands:
 *     0 ioctl     fd byte, u32 request, u64 argument pointer, 32 bytes of
 *                 argument struct
 *     1 sqes      mode byte, then 1 to 8 SQEs of 64 or 128 bytes
 *     2 register  mode byte, 8 fd bytes: registered files set or updated
 *     3 check     every schedule of the driver submitted by ioctl
 *
 * and a check at the end.  Pointers (the ioctl's argument, an image,
 * references, a sequence number pointer, an SQE's addr) are decoded from
 * 8 bytes into the pool, possibly running off its end into a page that
 * cannot be read, or to NULL or kernel or wrapping addresses: never to
 * anybody else's memory, since the guard and the driver write through
 * some.  fds, handles, reference counts and image sizes are decoded so
 * that most are ones that mean something (fd_of, handle_of, count_of,
 * size_of).
 *
 * Checks, besides no crash and no sanitizer report:
 *   - ag_is_guarded_request agrees with the request's DRM type and
 *     number read here;
 *   - an argument the guard cannot read gives EFAULT without a driver
 *     call, one it cannot write back gives EFAULT; otherwise a request
 *     reaches the driver once, with the canonical number, and gives the
 *     driver's answer, and the application's pointers are its own again
 *     afterwards, but for a blocked submit (EPERM) and an image of
 *     2^64 - 1 bytes (ENOMEM), which do not reach the driver;
 *   - the guard rewrites no SQE but device commands: into an injected
 *     NOP with a negative result and the same user_data, an append
 *     pointed at a copy of the same references, or a submit into the
 *     sealed submit of the same schedule;
 *   - (fake_driver.c) every submission reaching the driver is certified,
 *     and the driver is handed the guard's copies;
 *   - each check (op 3, and at the end) submits every schedule of the
 *     driver by ioctl: a schedule the guard mirrors in good health holds
 *     the driver's references exactly, and is blocked exactly when
 *     libarenacert does not certify them; a sealed driver refuses a
 *     submit (EKEYREJECTED) only of a schedule whose mirror diverged.
 *
 * Left out: image sizes and reference counts the guard would allocate
 * gigabytes for (an allocation of the application's size is the guard's
 * way, as the driver's; out of memory is tested in tests/guard), and
 * SQEs the kernel took before the guard saw them (reported, not checked:
 * docs/guard.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "dedup.h"  /* ag_report_reset */
#include "fake_driver.h"
#include "attach.h"
#include "cache.h"
#include "devices.h"
#include "driver.h"
#include "ioctl.h"
#include "load.h"
#include "mirror.h"
#include "uring.h"
#include "../contract/requests.h"  /* the guarded requests */
#include "sqe_inject.h"

#define DATA_SIZE (64u << 10)   /* the input's bytes */
#define ARG_AT DATA_SIZE        /* argument structs: room for any size */
#define POOL_SIZE (96u << 10)   /* then a page that cannot be read */
#define PAGE 4096u
#define RING_FD 950
#define RING_ENTRIES 8u
#define MAX_SLOTS 8u

static uint8_t *pool;

/* The application's ring, as liburing lays it out. */
static struct io_uring ring;
static unsigned int khead, ktail, kmask = RING_ENTRIES - 1,
		    kentries = RING_ENTRIES;
static unsigned int karray[RING_ENTRIES];
static uint8_t sqes[RING_ENTRIES * 128] __attribute__((aligned(64)));
static int ring_seen;           /* the guard has seen the ring */
static int slot_fd[MAX_SLOTS];  /* registered files, as the kernel has them */
static unsigned int n_slots;

static struct ag_file *devices[FAKE_FILES];

/* ---- decoding ---- */

/* A pointer from 8 input bytes, by its low 3 bits (see the top). */
static uint64_t user_ptr(uint64_t raw)
{
	uint64_t at = raw >> 3;
	switch (raw & 7) {
	case 4:
		return 0;
	case 5:
		return (uintptr_t)pool + POOL_SIZE + at % PAGE;
	case 6:
		return 0xffff800000000000ull | at;
	case 7:
		return UINT64_MAX - at % PAGE;
	default:
		return (uintptr_t)pool + at % POOL_SIZE;
	}
}

/* Whether [p, p + n) lies in the pool (is readable and writable). */
static int in_pool(uint64_t p, uint64_t n)
{
	uint64_t at = p - (uintptr_t)pool;
	return n == 0 || (p >= (uintptr_t)pool && at <= POOL_SIZE &&
			  n <= POOL_SIZE - at);
}

static int fd_of(uint8_t sel)
{
	static const int fds[] = {
		FAKE_FD_DEV0, FAKE_FD_DEV1, FAKE_FD_DEV0_DUP, FAKE_FD_NOTDEV,
		-1, 5000 /* not open */, 1 << 23 /* beyond the fd table */,
	};
	return fds[sel % (sizeof(fds) / sizeof(fds[0]))];
}

/* Handles 0 to 9 (the drivers' are 1 to 8), or any. */
static uint32_t handle_of(uint32_t raw)
{
	return raw >> 31 ? raw : raw % 10;
}

/* A few references, or more than a batch may hold (uapi.h: 2^20). */
static uint32_t count_of(uint32_t raw)
{
	return raw >> 31 ? raw & 0x3fffff : raw % 64;
}

/* Within the pool and past it, or 2^64 - 1 (too large to copy). */
static uint64_t size_of(uint64_t raw)
{
	return raw >> 63 ? UINT64_MAX : raw % (2 * POOL_SIZE);
}

/* Decodes the fields of an argument struct (in the pool) in place. */
static void decode_arg(uint8_t *k, unsigned int nr)
{
	if (nr == DRM_ARENA_PROGRAM_CREATE) {
		fuzz_put(k, 8, user_ptr(fuzz_get(k, 8)));
		fuzz_put(k + 8, 8, size_of(fuzz_get(k + 8, 8)));
		return;
	}
	fuzz_put(k, 4, handle_of(fuzz_get(k, 4)));
	if (nr == DRM_ARENA_SCHEDULE_APPEND) {
		fuzz_put(k + 4, 4, count_of(fuzz_get(k + 4, 4)));
		fuzz_put(k + 8, 8, user_ptr(fuzz_get(k + 8, 8)));
	}
}

/* ---- ioctl ---- */

/* The request: any, or the arena's numbers with any size and direction. */
static unsigned int request_of(uint8_t sel, uint32_t raw)
{
	if (sel & 0x80)
		return raw;
	return (raw & 0xffff0000u) | DRM_IOCTL_BASE << 8 |
	       (DRM_COMMAND_BASE + (raw & 0xf));
}

/* The guarded requests: the contract's table (contract/requests.h). */
static int guarded(unsigned int cmd)
{
	return arena_request_guarded(cmd);
}

/* Where the application's image or references pointer is in a
 * request's struct, or -1. */
static int buffer_field(unsigned int nr)
{
	return nr == DRM_ARENA_PROGRAM_CREATE ? 0
	     : nr == DRM_ARENA_SCHEDULE_APPEND ? 8 : -1;
}

static int call(int fd, unsigned int cmd, uint64_t arg)
{
	struct ag_file *f;
	FUZZ_CHECK(ag_fd_file(fd, &f) == 0 && f, "fd %d is not the device",
		   fd);
	fake_watch.calls = 0;
	int rc = ag_ioctl(f, fd, cmd, arg);
	ag_file_unref(f);
	return rc;
}

static void check_ioctl_result(unsigned int cmd, uint64_t arg, int rc,
			       uint64_t buffer)
{
	unsigned int nr = _IOC_NR(cmd) - DRM_COMMAND_BASE;
	size_t in = cmd & IOC_IN ? _IOC_SIZE(cmd) : 0;
	size_t out = cmd & IOC_OUT ? _IOC_SIZE(cmd) : 0;
	if (!in_pool(arg, in)) {
		FUZZ_CHECK(rc == -EFAULT && fake_watch.calls == 0,
			   "unreadable argument: %d, %d driver calls", rc,
			   fake_watch.calls);
		return;
	}
	/* Not asked: a blocked submit, an append beyond uapi.h's batch
	 * limit (EINVAL, the driver's answer), or no memory in the guard
	 * (an image of 2^64 - 1 bytes). */
	int refused = nr == DRM_ARENA_SCHEDULE_SUBMIT ||
		      nr == DRM_ARENA_SCHEDULE_SUBMIT_SEALED ? -EPERM
		      : nr == DRM_ARENA_SCHEDULE_APPEND ? -EINVAL : -ENOMEM;
	FUZZ_CHECK(fake_watch.calls <= 1, "%d driver calls", fake_watch.calls);
	if (!in_pool(arg, out)) {
		FUZZ_CHECK(rc == -EFAULT, "unwritable argument: %d", rc);
		return;
	}
	FUZZ_CHECK(rc == (fake_watch.calls ? fake_watch.last_rc : refused),
		   "%d, the driver said %d (%d calls)", rc, fake_watch.last_rc,
		   fake_watch.calls);
	/* Copied in, handed over as the guard's copy, copied out: the
	 * application's pointer again. */
	int field = buffer_field(nr);
	if (field >= 0 && in >= (size_t)field + 8 && out >= (size_t)field + 8)
		FUZZ_CHECK(fuzz_get((uint8_t *)(uintptr_t)arg + field, 8) == buffer,
			   "the application's pointer was not put back");
}

static void op_ioctl(struct fuzz_in *in)
{
	uint8_t sel = (uint8_t)fuzz_take(in, 1);
	int fd = fd_of(sel % 3);
	unsigned int cmd = request_of(sel, (uint32_t)fuzz_take(in, 4));
	uint64_t raw = fuzz_take(in, 8);
	uint64_t arg = sel & 0x40 ? user_ptr(raw) : (uintptr_t)pool + ARG_AT;
	memset(pool + ARG_AT, 0, POOL_SIZE - ARG_AT);
	fuzz_take_bytes(in, pool + ARG_AT, 32);
	FUZZ_CHECK(ag_is_guarded_request(cmd) == guarded(cmd),
		   "request 0x%x: the guard's filter says %d", cmd,
		   ag_is_guarded_request(cmd));
	if (!guarded(cmd))
		return;         /* interpose.c hands it to the driver as is */
	unsigned int nr = _IOC_NR(cmd) - DRM_COMMAND_BASE;
	int field = buffer_field(nr);
	uint64_t buffer = 0;
	if (in_pool(arg, 32)) {
		decode_arg((uint8_t *)(uintptr_t)arg, nr);
		if (field >= 0)
			buffer = fuzz_get((uint8_t *)(uintptr_t)arg + field, 8);
	}
	fake_watch.app_buffer = buffer;
	int rc = call(fd, cmd, arg);
	check_ioctl_result(cmd, arg, rc, buffer);
}

/* ---- mirror health ---- */

/* After a submit by ioctl: a schedule the guard mirrors in good health
 * (nothing made it distrust the mirror) holds the driver's references,
 * and the guard blocked it exactly when libarenacert does not certify
 * them (the driver checks the other half). */
static void check_mirror(int file, uint32_t handle, int blocked,
			 int refused)
{
	struct ag_sched *s = ag_sched_lock(devices[file], handle);
	FUZZ_CHECK(s, "the driver's schedule %u is not mirrored", handle);
	if (ag_sched_recorded(s)) {
		uint64_t n, held;
		struct ag_program *p;
		struct ag_refs *refv;
		ag_sched_contents(s, &p, &refv, &held);
		const struct ac_ref *refs = fake_schedule_refs(file, handle, &n);
		FUZZ_CHECK(held == n && (n == 0 || memcmp(refv->v, refs,
						n * sizeof(*refs)) == 0),
			   "schedule %u: %llu references mirrored, the driver "
			   "has %llu", handle, (unsigned long long)held,
			   (unsigned long long)n);
		ag_refs_unref(refv);
		ag_program_unref(p);
		struct fuzz_outcome o;
		fake_schedule_certify(file, handle, &o);
		FUZZ_CHECK(!blocked || o.rc != 0 || o.verdict != 0,
			   "schedule %u is certified, and blocked", handle);
		FUZZ_CHECK(!refused, "schedule %u: the mirror holds the "
			   "driver's references, and its seal was refused",
			   handle);
	}
	ag_sched_unlock(s);
}

static void check_schedules(void)
{
	static const int fds[FAKE_FILES] = { FAKE_FD_DEV0, FAKE_FD_DEV1 };
	for (int file = 0; file < FAKE_FILES; file++)
		for (uint32_t h = 1; h <= FAKE_HANDLES; h++) {
			if (!fake_schedule_live(file, h))
				continue;
			struct drm_arena_schedule_submit sub = { .schedule = h };
			int rc = call(fds[file], DRM_IOCTL_ARENA_SCHEDULE_SUBMIT,
				      (uintptr_t)&sub);
			FUZZ_CHECK(rc == 0 || rc == -EKEYREJECTED
				   ? fake_watch.calls == 1
				   : rc == -EPERM && fake_watch.calls == 0,
				   "submit of schedule %u: %d", h, rc);
			check_mirror(file, h, rc == -EPERM, rc == -EKEYREJECTED);
		}
}

/* ---- io_uring ---- */

static size_t sqe_size(void)
{
	return ring.flags & IORING_SETUP_SQE128 ? 128 : 64;
}

static struct io_uring_sqe *sqe_at(unsigned int i)
{
	return (struct io_uring_sqe *)(sqes + (i & kmask) * sqe_size());
}

static int is_device_cmd(const struct io_uring_sqe *sqe)
{
	return sqe->opcode == IORING_OP_URING_CMD &&
	       (sqe->cmd_op == ARENA_URING_CMD_APPEND ||
		sqe->cmd_op == ARENA_URING_CMD_SUBMIT ||
		sqe->cmd_op == ARENA_URING_CMD_SUBMIT_SEALED);
}

/* One SQE from the input: opcodes with the top bit set are URING_CMDs;
 * fds, registered slots, pointers, handles and counts decoded. */
static void read_sqe(struct fuzz_in *in, struct io_uring_sqe *sqe)
{
	fuzz_take_bytes(in, sqe, sqe_size());
	if (sqe->opcode & 0x80)
		sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = sqe->flags & IOSQE_FIXED_FILE
		  ? (int)((uint32_t)sqe->fd % (MAX_SLOTS + 2))
		  : fd_of((uint8_t)sqe->fd);
	sqe->addr = user_ptr(sqe->addr);
	if (sqe->opcode != IORING_OP_URING_CMD || sqe_size() != 128)
		return;
	if (!(sqe->cmd_op >> 31))
		sqe->cmd_op %= 4;
	fuzz_put(sqe->cmd, 4, handle_of(fuzz_get(sqe->cmd, 4)));
	if (sqe->cmd_op == ARENA_URING_CMD_APPEND)
		fuzz_put(sqe->cmd + 4, 4, count_of(fuzz_get(sqe->cmd + 4, 4)));
	uint64_t p = fuzz_get(sqe->cmd + 8, 8);
	fuzz_put(sqe->cmd + 8, 8, p ? user_ptr(p) : 0);
}

/* An approved submit becomes the sealed submit of the same schedule,
 * flags and sequence number pointer (or stays the plain one on a file
 * without seals): only cmd_op and the seal (algorithm, pad, seal) may
 * change. */
static void check_submit_rewrite(const struct io_uring_sqe *was,
				 const struct io_uring_sqe *now)
{
	size_t op_at = offsetof(struct io_uring_sqe, cmd_op);
	size_t seal_at = offsetof(struct io_uring_sqe, cmd) +
			 offsetof(struct arena_uring_submit_sealed, algorithm);
	size_t seal_end = offsetof(struct io_uring_sqe, cmd) +
			  sizeof(struct arena_uring_submit_sealed);
	const uint8_t *a = (const void *)was, *b = (const void *)now;
	FUZZ_CHECK((now->cmd_op == ARENA_URING_CMD_SUBMIT_SEALED ||
		    now->cmd_op == ARENA_URING_CMD_SUBMIT) &&
		   memcmp(a, b, op_at) == 0 &&
		   memcmp(a + op_at + 4, b + op_at + 4, seal_at - op_at - 4) == 0 &&
		   memcmp(a + seal_end, b + seal_end,
			  sqe_size() - seal_end) == 0,
		   "a submit changed beyond its command and seal");
}

/* What the guard may have done to one SQE: nothing, unless it is a
 * device command; then an injected failure, or an append pointed at a
 * copy of the same references.  A device command forwarded after an
 * SQE linked to it (after_link) also gets IOSQE_ASYNC, so that the
 * kernel copies it at the submit (shim/uring.c, uring_forward). */
static void check_rewrite(const struct io_uring_sqe *orig,
			  const struct io_uring_sqe *now, int after_link)
{
	if (memcmp(orig, now, sqe_size()) == 0)
		return;
	uint8_t buf[128] __attribute__((aligned(64)));
	memcpy(buf, orig, sqe_size());
	const struct io_uring_sqe *was = (const void *)buf;
	if (after_link && now->opcode != IORING_OP_NOP)
		((struct io_uring_sqe *)buf)->flags |= IOSQE_ASYNC;
	FUZZ_CHECK(is_device_cmd(was) && (was->flags & IOSQE_FIXED_FILE ||
					  fake_file_of(was->fd) >= 0),
		   "rewrote an SQE that is no device command (opcode %u)",
		   was->opcode);
	if (now->opcode == IORING_OP_NOP) {
		FUZZ_CHECK(now->rw_flags == IORING_NOP_INJECT_RESULT &&
			   (int)now->len < 0 && now->user_data == was->user_data,
			   "a device command rewritten into something else");
		return;
	}
	if (was->cmd_op != ARENA_URING_CMD_APPEND) {
		check_submit_rewrite(was, now);
		return;
	}
	size_t refs_at = offsetof(struct io_uring_sqe, cmd) + 8;
	FUZZ_CHECK(was->cmd_op == ARENA_URING_CMD_APPEND &&
		   memcmp(was, now, refs_at) == 0 &&
		   memcmp((const uint8_t *)was + refs_at + 8,
			  (const uint8_t *)now + refs_at + 8,
			  sqe_size() - refs_at - 8) == 0,
		   "an append changed beyond its references pointer");
	uint64_t count = fuzz_get(was->cmd + 4, 4);
	uint64_t mine = fuzz_get(was->cmd + 8, 8);
	uint64_t copy = fuzz_get(now->cmd + 8, 8);
	FUZZ_CHECK(in_pool(mine, count * sizeof(struct ac_ref)) &&
		   memcmp((void *)(uintptr_t)mine, (void *)(uintptr_t)copy,
			  count * sizeof(struct ac_ref)) == 0,
		   "an append pointed at other references");
}

/* The open file a URING_CMD reaches in the kernel, or -1. */
static int kernel_target(const struct io_uring_sqe *sqe)
{
	if (!(sqe->flags & IOSQE_FIXED_FILE))
		return fake_file_of(sqe->fd);
	if (sqe->fd < 0 || (unsigned int)sqe->fd >= n_slots)
		return -1;
	return fake_file_of(slot_fd[sqe->fd]);
}

/* The device's commands among SQEs [first, first + n), run as the
 * simulator runs them (sim/uring.c run_pending). */
static void run_kernel(unsigned int first, unsigned int n,
		       const uint8_t *before)
{
	int chain_failed = 0;
	for (unsigned int i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = sqe_at(first + i);
		const struct io_uring_sqe *was =
			(const void *)(before + i * sqe_size());
		int linked = sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK);
		int file = kernel_target(sqe);
		if (sqe->opcode == IORING_OP_URING_CMD && file >= 0) {
			fake_watch.app_buffer = fuzz_get(was->cmd + 8, 8);
			int res = chain_failed ? -ECANCELED
				: fake_uring_cmd(file, sqe_size() == 128, sqe);
			if (res < 0 && (sqe->flags & IOSQE_IO_LINK))
				chain_failed = 1;
		}
		if (!linked)
			chain_failed = 0;
	}
}

/*
 * 1 to 8 SQEs: queued through liburing (the first few published to the
 * kernel by hand) and submitted through liburing, or all published by
 * hand and submitted with io_uring_enter.  Then the kernel runs them and
 * takes them all.
 */
static void op_sqes(struct fuzz_in *in)
{
	unsigned int mode = (unsigned int)fuzz_take(in, 1);
	unsigned int n = 1 + (mode >> 4) % RING_ENTRIES;
	unsigned int hand = (mode >> 1) % 8 % (n + 1);
	/* io_uring_enter on a ring the guard never saw is reported, not
	 * checked (docs/guard.md). */
	int enter = (mode & 1) && ring_seen;
	unsigned int first = ktail;
	uint8_t before[RING_ENTRIES * 128] __attribute__((aligned(64)));
	for (unsigned int i = 0; i < n; i++) {
		read_sqe(in, sqe_at(first + i));
		memcpy(before + i * sqe_size(), sqe_at(first + i), sqe_size());
	}
	ring.sq.sqe_head = first;
	ring.sq.sqe_tail = first + n;
	struct ag_held *held;
	if (enter) {
		ktail = first + n;
		held = ag_uring_enter_check(RING_FD, n, 0);
	} else {
		ktail = first + hand;
		held = ag_uring_check(&ring);
		ring_seen = 1;
	}
	int after_link = 0;
	for (unsigned int i = 0; i < n; i++) {
		const struct io_uring_sqe *was =
			(const void *)(before + i * sqe_size());
		check_rewrite(was, sqe_at(first + i), after_link);
		after_link = !!(was->flags & (IOSQE_IO_LINK |
					      IOSQE_IO_HARDLINK));
	}
	run_kernel(first, n, before);
	ring.sq.sqe_head = ktail = khead = first + n;
	ag_uring_release(enter ? NULL : &ring, held);
}

/* Registered files: a new table (maybe sparse), or an update of some
 * slots, as the kernel took them. */
static void op_register(struct fuzz_in *in)
{
	unsigned int mode = (unsigned int)fuzz_take(in, 1);
	int fds[MAX_SLOTS];
	for (unsigned int i = 0; i < MAX_SLOTS; i++)
		fds[i] = fd_of((uint8_t)fuzz_take(in, 1));
	unsigned int nr = mode % (MAX_SLOTS + 1);
	if ((mode & 0x80) && n_slots) {
		unsigned int off = (mode >> 4) % n_slots;
		if (nr > n_slots - off)
			nr = n_slots - off;
		ag_ring_files_update(&ring, off, fds, nr);
		memcpy(slot_fd + off, fds, nr * sizeof(*fds));
	} else {
		int sparse = mode & 0x40;
		ag_ring_files_set(&ring, sparse ? NULL : fds, nr);
		for (unsigned int i = 0; i < MAX_SLOTS; i++)
			slot_fd[i] = sparse ? -1 : fds[i];
		n_slots = nr;
	}
	ring_seen = 1;
}

/* ---- one input ---- */

static void ring_reset(unsigned int flags)
{
	memset(&ring, 0, sizeof(ring));
	memset(sqes, 0, sizeof(sqes));
	khead = ktail = 0;
	for (unsigned int i = 0; i < RING_ENTRIES; i++)
		karray[i] = i;
	ring.sq.khead = &khead;
	ring.sq.ktail = &ktail;
	ring.sq.kring_mask = &kmask;
	ring.sq.kring_entries = &kentries;
	ring.sq.array = karray;
	ring.sq.sqes = (struct io_uring_sqe *)sqes;
	ring.sq.ring_ptr = &ring;
	ring.sq.ring_mask = kmask;
	ring.sq.ring_entries = RING_ENTRIES;
	ring.flags = flags;
	ring.ring_fd = RING_FD;
	ring_seen = 0;
	n_slots = 0;
}

/* As the guard's probe makes them: attached (sealed, and the dup'ed fd
 * matched to its file by the context id, or, without seals, by hand as
 * kcmp would). */
static void files_open(int with_seals)
{
	static const int fds[] = { FAKE_FD_DEV0, FAKE_FD_DEV1, FAKE_FD_DEV0_DUP };
	devices[0] = ag_file_attach(FAKE_FD_DEV0);
	devices[1] = ag_file_attach(FAKE_FD_DEV1);
	FUZZ_CHECK(devices[0] && devices[1] && devices[0] != devices[1],
		   "attach");
	struct ag_file *dup = ag_file_attach(FAKE_FD_DEV0_DUP);
	FUZZ_CHECK(!with_seals || dup == devices[0],
		   "the dup'ed fd was not matched by its context id");
	ag_file_unref(dup);
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		ag_fd_set(fds[i], devices[fake_file_of(fds[i])]);
}

/* Closes everything, and forgets what the guard caches across files,
 * so that every input runs from the same state. */
static void files_close(void)
{
	ag_fd_forget_range(FAKE_FD_DEV0, FAKE_FD_DEV0_DUP);
	for (int i = 0; i < FAKE_FILES; i++)
		ag_file_unref(devices[i]);
	ag_ring_forget(&ring);
	ag_cache_trim();
	ag_report_reset();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	pool = mmap(NULL, POOL_SIZE + PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	FUZZ_CHECK(pool != MAP_FAILED, "mmap");
	FUZZ_CHECK(mprotect(pool + POOL_SIZE, PAGE, PROT_NONE) == 0, "mprotect");
	setenv("ARENAGUARD", "enforce", 1);
	setenv("ARENAGUARD_LOG", "/dev/null", 1);
	unsetenv("ARENAGUARD_DUMP");
	ag_config_load();
	ag_driver_ioctl = fake_ioctl;
	/* No fd of this process is the device: none is ever probed. */
	for (int fd = 0; fd < 1024; fd++)
		if (fake_file_of(fd) < 0)
			ag_fd_set(fd, AG_FD_NOTDEV);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, data + size };
	unsigned int config = (unsigned int)fuzz_take(&in, 1);
	memset(pool, 0, POOL_SIZE);
	fuzz_take_bytes(&in, pool, (size_t)fuzz_take(&in, 2));
	fake_reset(config & 1, !(config & 4));
	ring_reset(config & 2 ? IORING_SETUP_SQE128 : 0);
	files_open(!(config & 4));
	while (in.p < in.end) {
		switch (fuzz_take(&in, 1) % 4) {
		case 0:
			op_ioctl(&in);
			break;
		case 1:
			op_sqes(&in);
			break;
		case 2:
			op_register(&in);
			break;
		default:
			check_schedules();
			break;
		}
	}
	check_schedules();
	files_close();
	fake_reset(0, 1);
	return 0;
}
