/* SPDX-License-Identifier: MIT */
/*
 * What libarenaguard.so costs an application (issue 5, items 6 and 7),
 * side by side in one run: every figure compares child processes that
 * differ only in LD_PRELOAD and ARENAGUARD, run alternately (ABBA) over
 * several rounds, and is the median of the per-round ratios or
 * differences, so that the machine's drift cancels out.
 *
 *   unrelated ioctl       FIONREAD on a pipe: with the guard preloaded
 *                         vs without; ratio
 *   unrelated io_uring    an 8-byte read of /dev/zero; ratio
 *   cached submit         the same certified schedule submitted again
 *                         (ioctl with the argument on the stack, as
 *                         libdrm callers do, and on the heap; io_uring):
 *                         enforce vs ARENAGUARD=off, microseconds extra
 *   rebuild               the same schedule created, appended, submitted
 *                         and destroyed again; microseconds extra
 *   create 1 MB           PROGRAM_CREATE and PROGRAM_DESTROY of one
 *                         1 MB image again and again (the guard's copy
 *                         and cache digest of every byte; its program
 *                         cache spares the certification and the seal):
 *                         enforce vs ARENAGUARD=off; ratio
 *   create 1 MB, new      the same with an image the guard has not seen
 *                         (one word changed each time): its copy, digest,
 *                         certification and seal; ratio
 *   append 1 MB           a schedule created, 65,536 references (1 MiB)
 *                         appended in one batch, destroyed: the guard's
 *                         copy, seal, digest and (D); ratio
 *   decode loop           arena-infer --decode K (ioctl, --uring) on the
 *                         simulator, with the guard vs without; ratio
 *   registering files     one IORING_OP_FILES_UPDATE SQE of 16,384
 *                         descriptors (256 distinct pipe ends) into a
 *                         sparse table; ratio
 *   memory                the guard's resident memory after creating a
 *                         large workload program (bench/workload), and
 *                         after its schedule: enforce minus off, as a
 *                         multiple of the image size
 *   cache churn           the guard's resident memory after distinct
 *                         programs (each run once, then destroyed) and
 *                         long schedules (each submitted, then destroyed)
 *                         went through its caches: enforce minus off,
 *                         against the caches' budget (ARENAGUARD_CACHE_MB)
 *   guarded/unguarded     a cached submit (ioctl, argument on the stack
 *                         or the heap; io_uring) with the guard preloaded
 *                         vs without it: the device alone; ratio
 *   fork + exit           a child forked (one liburing ring open) that
 *                         exits at once, reaped; with the guard
 *                         preloaded vs without; ratio
 *   ring life             a liburing ring set up and torn down; ratio
 *   start                 this program started again (fork, exec,
 *                         exit, reaped); microseconds extra
 *
 * --device sim|kernel runs only the rows that compare a device with and
 * without the guard (DEVICE rows): on libarenasim.so (preloaded in both
 * configurations, as everywhere by default) or on the kernel's arena.ko
 * (nothing preloaded but the guard: tests/kernel/bench.list runs it in
 * the VM), so that the same command gives the two devices' figures.
 *
 * --fastest makes each timed child report its fastest batch (of about
 * 50 us) rather than its median one (time_op): for a guest whose clock
 * counts the host's preemptions, where most batches are slowed.
 *
 * Usage: bench-guard [--quick] [--rounds N] [--only WORD]
 *                    [--device sim|kernel] [--fastest]
 *        bench-guard --child WHAT N   (one measurement; the parent runs it)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arenaguard/program.h>

#include "workload.h"

#include "cdev.h"
#include "progs.h"
#include "rss.h"

#if !defined(AG_GUARD_LIB) || !defined(AG_ARENASIM) || !defined(AG_ARENA_INFER)
#error "the paths of the guard, the simulator and arena-infer come from the build"
#endif
#ifndef AG_PRELOAD_FIRST
#define AG_PRELOAD_FIRST ""   /* a sanitizer runtime, and a space */
#endif

extern char **environ;

/* ---- children: one measurement each, printed on standard output ---- */

/* The clock time_op reads: wall time, or the calling thread's CPU time
 * for a child that asks for it (the create row: a figure that other
 * processes on a loaded machine do not inflate). */
static clockid_t op_clock = CLOCK_MONOTONIC;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(op_clock, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

_Noreturn static void die(const char *what, int err)
{
	fprintf(stderr, "bench-guard: %s: %s\n", what, strerror(err));
	exit(1);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define BATCHES 101

/* --fastest: batches of about this long, at most this many. */
#define FAST_BATCH_NS 50000.0
#define FAST_BATCHES_MAX 20000

/* Set in a child by its parent's --fastest: report the fastest batch. */
static int fastest;

/*
 * Nanoseconds per op(ctx): the median of BATCHES batches of n / BATCHES
 * calls each.  Batches that another process's time slice fell into are
 * the slow ones; on a shared machine the median batch is not one.
 *
 * With fastest set: the fastest of up to n / (ops in FAST_BATCH_NS)
 * batches of about FAST_BATCH_NS each (at least BATCHES, at most
 * FAST_BATCHES_MAX).  Where the machine's noise only ever adds time and
 * strikes most batches, as in a TCG guest on a loaded host (the guest
 * clock runs on while its vCPU thread waits for a host core), the
 * median batch is a slowed one and the fastest is the cost itself.
 */
static double time_op(void (*op)(void *), void *ctx, long n)
{
	double per[BATCHES];
	long each = n / BATCHES + 1;
	op(ctx);                                    /* warm */
	if (fastest) {
		double one = 0, best = 0;
		for (int k = 0; k < 5; k++) {       /* one op, at its fastest */
			double t = now_ns();
			op(ctx);
			t = now_ns() - t;
			one = k == 0 || t < one ? t : one;
		}
		each = one >= FAST_BATCH_NS ? 1 : (long)(FAST_BATCH_NS / one);
		long batches = n / each;
		batches = batches < BATCHES ? BATCHES
			: batches > FAST_BATCHES_MAX ? FAST_BATCHES_MAX : batches;
		for (long b = 0; b < batches; b++) {
			double t = now_ns();
			for (long i = 0; i < each; i++)
				op(ctx);
			t = (now_ns() - t) / (double)each;
			best = b == 0 || t < best ? t : best;
		}
		return best;
	}
	for (int b = 0; b < BATCHES; b++) {
		double t = now_ns();
		for (long i = 0; i < each; i++)
			op(ctx);
		per[b] = (now_ns() - t) / (double)each;
	}
	return median(per, BATCHES);
}

static void fionread(void *ctx)
{
	int avail;
	if (ioctl(*(int *)ctx, FIONREAD, &avail) != 0)
		die("FIONREAD", errno);
}

static double child_fionread(long n)
{
	int p[2];
	if (pipe(p) != 0)
		die("pipe", errno);
	return time_op(fionread, &p[0], n);
}

/* An unrelated close: a dup of a pipe's end, closed (the guard's dup
 * and close wrappers, neither fd a device). */
static void dup_close(void *ctx)
{
	int fd = dup(*(int *)ctx);
	if (fd < 0 || close(fd) != 0)
		die("dup and close", errno);
}

static double child_dup_close(long n)
{
	int p[2];
	if (pipe(p) != 0)
		die("pipe", errno);
	return time_op(dup_close, &p[0], n);
}

struct reader {
	struct io_uring ring;
	int fd;
	uint64_t buf;
};

static void uring_read(void *ctx)
{
	struct reader *r = ctx;
	struct io_uring_cqe *cqe;
	io_uring_prep_read(io_uring_get_sqe(&r->ring), r->fd, &r->buf,
			   sizeof(r->buf), 0);
	int rc = io_uring_submit_and_wait(&r->ring, 1);
	/* Nothing submitted (rc 0) leaves no completion to read. */
	rc = rc == 1 ? io_uring_wait_cqe(&r->ring, &cqe) : rc < 0 ? rc : -EIO;
	if (rc < 0 || cqe->res != sizeof(r->buf))
		die("io_uring read", rc < 0 ? -rc : EIO);
	io_uring_cqe_seen(&r->ring, cqe);
}

static double child_uring_read(long n)
{
	struct reader r;
	r.fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	int rc = r.fd < 0 ? errno : -io_uring_queue_init(8, &r.ring, 0);
	if (rc)
		die("io_uring on /dev/zero", rc);
	return time_op(uring_read, &r, n);
}

/* One FILES_UPDATE SQE of FILES_N descriptors, as a server that keeps
 * its sockets in fixed slots refreshes them: FILES_DISTINCT fds over
 * and over. */
#define FILES_N 16384
#define FILES_DISTINCT 256

struct updater {
	struct io_uring ring;
	int fds[FILES_N];
};

static void files_update(void *ctx)
{
	struct updater *u = ctx;
	struct io_uring_cqe *cqe = NULL;
	io_uring_prep_files_update(io_uring_get_sqe(&u->ring), u->fds, FILES_N,
				   0);
	int rc = io_uring_submit_and_wait(&u->ring, 1);
	if (rc == 1)
		rc = io_uring_wait_cqe(&u->ring, &cqe);
	if (rc < 0 || !cqe || cqe->res != FILES_N)
		die("FILES_UPDATE", rc < 0 ? -rc : EIO);
	io_uring_cqe_seen(&u->ring, cqe);
}

static double child_files_update(long n)
{
	static struct updater u;
	int rc = -io_uring_queue_init(8, &u.ring, 0);
	if (rc == 0)
		rc = -io_uring_register_files_sparse(&u.ring, FILES_N);
	if (rc)
		die("io_uring sparse table", rc);
	for (int i = 0; i < FILES_DISTINCT; i += 2)
		if (pipe(&u.fds[i]) != 0)
			die("pipe", errno);
	for (int i = FILES_DISTINCT; i < FILES_N; i++)
		u.fds[i] = u.fds[i % FILES_DISTINCT];
	return time_op(files_update, &u, n);
}

/* ---- the process's life (issue 32): fork + exit, a ring's set-up and
 * tear-down, a start ---- */

/* fork(2), dying if it fails. */
static pid_t fork_or_die(void)
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork", errno);
	return pid;
}

/* Waits for child pid, which must exit 0. */
static void reap(pid_t pid, const char *what)
{
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		die(what, ECHILD);
}

/* A child forked and reaped, the child exiting at once (its exit
 * handlers run: the guard's exit-time work is counted). */
static void fork_exit(void *ctx)
{
	(void)ctx;
	pid_t pid = fork_or_die();
	if (pid == 0)
		exit(0);
	reap(pid, "fork's child");
}

/* fork + exit with one liburing ring open, as a server that forks
 * after setting up its ring (the ring's locks are taken at fork). */
static double child_fork_exit(long n)
{
	static struct io_uring ring;
	int rc = -io_uring_queue_init(8, &ring, 0);
	if (rc)
		die("io_uring_queue_init", rc);
	return time_op(fork_exit, NULL, n);
}

/* A liburing ring set up and torn down. */
static void ring_life(void *ctx)
{
	(void)ctx;
	struct io_uring ring;
	int rc = -io_uring_queue_init(8, &ring, 0);
	if (rc)
		die("io_uring_queue_init", rc);
	io_uring_queue_exit(&ring);
}

static double child_ring_life(long n)
{
	return time_op(ring_life, NULL, n);
}

/* A process started and reaped: this program (its `--child noop`),
 * under the same environment (so with or without the guard loaded). */
static char self[4096];

static void start(void *ctx)
{
	(void)ctx;
	pid_t pid = fork_or_die();
	if (pid == 0) {
		char *argv[] = { self, "--child", "noop", "0", NULL };
		execv(self, argv);
		_exit(127);
	}
	reap(pid, "the started child");
}

static double child_start(long n)
{
	return time_op(start, NULL, n);
}

/* The device with tests/guard's program and its certified schedule,
 * submitted once so that the guard's verdict is known. */
struct submitter {
	struct cdev d;
	uint32_t prog, schedule;
	struct drm_arena_schedule_submit *heap_arg;
};

static void certified_schedule(struct submitter *t, enum cpath path)
{
	size_t len;
	uint8_t *image = prog_image(PROG_GOOD, &len);
	uint64_t seqno;
	int rc = cdev_open(&t->d, path);
	if (rc == 0)
		rc = cdev_program(&t->d, image, len, &t->prog);
	if (rc == 0)
		rc = cdev_schedule(&t->d, t->prog, &t->schedule);
	if (rc == 0)
		rc = cdev_append(&t->d, t->schedule, prog_good_refs, 2);
	if (rc == 0)
		rc = cdev_submit(&t->d, t->schedule, &seqno);
	free(image);
	if (rc)
		die("setting up the device", -rc);
}

/* By cdev's path: an ioctl with the argument on the stack, as libdrm
 * callers do, or a URING_CMD waited for. */
static void submit(void *ctx)
{
	struct submitter *t = ctx;
	uint64_t seqno;
	if (cdev_submit(&t->d, t->schedule, &seqno) != 0)
		die("submit", EIO);
}

/* The argument where an application's own structures live: the guard
 * cannot read it without a system call (common/usercopy.c). */
static void submit_heap(void *ctx)
{
	struct submitter *t = ctx;
	if (ioctl(t->d.fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, t->heap_arg) != 0)
		die("submit", errno);
}

/* An identical schedule built again and submitted, as a decoder that
 * builds one per token does: the guard's digest lookup, and its copies
 * of references the application keeps off the stack. */
static void rebuild(void *ctx)
{
	struct submitter *t = ctx;
	uint32_t s;
	uint64_t seqno;
	if (cdev_schedule(&t->d, t->prog, &s) != 0 ||
	    cdev_append(&t->d, s, prog_good_refs, 2) != 0 ||
	    cdev_submit(&t->d, s, &seqno) != 0 ||
	    cdev_destroy_schedule(&t->d, s) != 0)
		die("rebuild", EIO);
}

static double time_submits(long n, enum cpath path, void (*op)(void *))
{
	struct submitter t;
	certified_schedule(&t, path);
	t.heap_arg = calloc(1, sizeof(*t.heap_arg));
	if (!t.heap_arg)
		die("submit", ENOMEM);
	t.heap_arg->schedule = t.schedule;
	double ns = time_op(op, &t, n);
	free(t.heap_arg);
	return ns;
}

static double child_submit_ioctl(long n)
{
	return time_submits(n, CP_IOCTL, submit);
}

static double child_submit_heap(long n)
{
	return time_submits(n, CP_IOCTL, submit_heap);
}

static double child_submit_uring(long n)
{
	return time_submits(n, CP_URING, submit);
}

static double child_rebuild(long n)
{
	return time_submits(n, CP_IOCTL, rebuild);
}

/* ---- the bytes of PROGRAM_CREATE and SCHEDULE_APPEND ---- */

#define BYTES_LAUNCHES 17500          /* a 1.05 MB program image */
#define BYTES_REFS 65536              /* 1 MiB of references */

struct bytes {
	struct cdev d;
	uint8_t *image;
	size_t len;
	uint32_t prog;
	struct ac_ref *refs;
	uint8_t *fill_value;        /* launch 0's fill value in the image */
};

static void create_destroy(void *ctx);

static void bytes_setup(struct bytes *b)
{
	b->image = prog_image_wide(BYTES_LAUNCHES, 0x3f800000u, &b->len);
	b->refs = malloc(BYTES_REFS * sizeof(*b->refs));
	if (!b->refs || cdev_open(&b->d, CP_IOCTL) != 0 ||
	    cdev_program(&b->d, b->image, b->len, &b->prog) != 0)
		die("setting up the device", ENODEV);
	for (uint32_t k = 0; k < BYTES_REFS; k++)
		b->refs[k] = (struct ac_ref){ 0, 1 };  /* certified */
	/* The first word (8-byte aligned) holding the fill value 1.0f. */
	const uint8_t one[8] = { 0x00, 0x00, 0x80, 0x3f };
	b->fill_value = NULL;
	for (size_t at = 0; !b->fill_value && at + 8 <= b->len; at += 8)
		if (!memcmp(b->image + at, one, sizeof(one)))
			b->fill_value = b->image + at;
	if (!b->fill_value)
		die("the image's fill value", ENOENT);
}

/* A new image each time: a word no other field depends on changed. */
static void create_new(void *ctx)
{
	struct bytes *b = ctx;
	uint32_t v;
	memcpy(&v, b->fill_value, sizeof(v));
	v++;
	memcpy(b->fill_value, &v, sizeof(v));
	create_destroy(ctx);
}

/* A program created from image[0, len) on d and destroyed. */
static void create_then_destroy(struct cdev *d, const uint8_t *image,
				size_t len)
{
	uint32_t prog;
	if (cdev_program(d, image, len, &prog) != 0 ||
	    cdev_destroy_program(d, prog) != 0)
		die("create", EIO);
}

static void create_destroy(void *ctx)
{
	struct bytes *b = ctx;
	create_then_destroy(&b->d, b->image, b->len);
}

static void append_batch(void *ctx)
{
	struct bytes *b = ctx;
	uint32_t s;
	if (cdev_schedule(&b->d, b->prog, &s) != 0 ||
	    cdev_append(&b->d, s, b->refs, BYTES_REFS) != 0 ||
	    cdev_destroy_schedule(&b->d, s) != 0)
		die("append", EIO);
}

static double child_create(long n)
{
	static struct bytes b;
	bytes_setup(&b);
	return time_op(create_destroy, &b, n);
}

static double child_create_new(long n)
{
	static struct bytes b;
	bytes_setup(&b);
	return time_op(create_new, &b, n);
}

static double child_append(long n)
{
	static struct bytes b;
	bytes_setup(&b);
	return time_op(append_batch, &b, n);
}

/* ---- a large program, for the memory figure ---- */

/* A workload's program image with an empty schedule section (schedules
 * are built with the schedule requests), and its references. */
static uint8_t *workload_image(enum workload_kind kind, uint64_t words,
			       size_t *len, struct workload **w)
{
	struct workload_spec spec = { kind, WORKLOAD_SOUND, words, 0 };
	const char *why;
	*w = workload_new(&spec, &why);
	if (!*w) {
		fprintf(stderr, "bench-guard: workload: %s\n", why);
		exit(1);
	}
	struct ac_model m = (*w)->model;
	m.n_refs = 0;
	m.refs = NULL;
	struct ac_error err;
	uint8_t *image = ac_model_write_image(&m, len, &err);
	if (!image)
		die("writing the workload's image", ENOMEM);
	return image;
}

/* ---- a new workload image (issue 32): PROGRAM_CREATE's passes ---- */

#define FRESH_TAG "bench-guard-create-0000000000000000"

struct fresh {
	struct cdev d;
	uint8_t *image;
	size_t len;
	char *tag;                  /* the counter's 16 hex digits, in image */
	uint64_t count;
};

/* A new image each time: the counter in window 0's name (for
 * diagnostics only: the verdict is the same) is advanced, so the guard
 * copies, digests, certifies and seals every create. */
static void create_fresh(void *ctx)
{
	struct fresh *f = ctx;
	char digits[17];
	snprintf(digits, sizeof(digits), "%016llx",
		 (unsigned long long)++f->count);
	memcpy(f->tag, digits, 16);
	create_then_destroy(&f->d, f->image, f->len);
}

/* XXH3-128 over the same image (ac_image_digest is exactly that). */
static void xxh3_image(void *ctx)
{
	struct fresh *f = ctx;
	struct ac_digest d;
	ac_image_digest(f->image, f->len, &d);
	__asm__ volatile("" : : "r"(d.low), "r"(d.high));
}

/* The image: a vit workload of about 10^5 parameter words (1.5 MB). */
#define CREATE_WORDS 100000

/*
 * `--child create-image N`: nanoseconds per PROGRAM_CREATE +
 * PROGRAM_DESTROY (about N of them) of a vit workload image that is new
 * to the guard every time, then nanoseconds per XXH3 over that image in
 * this process, then the image's size: "create xxh3 bytes".  Both in
 * the thread's CPU time: the guard and the simulator work in the
 * calling thread (the guard's threads=1, its default), and a loaded
 * machine's other processes then add only their cache misses.
 */
static void child_create_image(long n)
{
	static struct fresh f;
	struct workload_spec spec = { WORKLOAD_VIT, WORKLOAD_SOUND,
				      CREATE_WORDS, 0 };
	const char *why;
	struct workload *w = workload_new(&spec, &why);
	if (!w) {
		fprintf(stderr, "bench-guard: workload: %s\n", why);
		exit(1);
	}
	struct ac_model m = w->model;
	m.n_refs = 0;
	m.refs = NULL;
	if (m.n_windows == 0)
		die("the workload's windows", ENOENT);
	struct ac_window *windows = malloc(m.n_windows * sizeof(*windows));
	if (!windows)
		die("windows", ENOMEM);
	memcpy(windows, m.windows, m.n_windows * sizeof(*windows));
	windows[0].name = (struct ac_bytes){ (const uint8_t *)FRESH_TAG,
					     (uint32_t)strlen(FRESH_TAG) };
	m.windows = windows;
	struct ac_error err;
	f.image = ac_model_write_image(&m, &f.len, &err);
	if (!f.image)
		die("writing the workload's image", ENOMEM);
	f.tag = memmem(f.image, f.len, FRESH_TAG, strlen(FRESH_TAG));
	if (!f.tag || memmem(f.tag + 1, f.len - (size_t)((uint8_t *)f.tag -
			     f.image) - 1, FRESH_TAG, strlen(FRESH_TAG)))
		die("the image's one tag", ENOENT);
	f.tag += strlen(FRESH_TAG) - 16;
	if (cdev_open(&f.d, CP_IOCTL) != 0)
		die("opening the device", ENODEV);
	op_clock = CLOCK_THREAD_CPUTIME_ID;   /* the guard works in it */
	double create = time_op(create_fresh, &f, n);
	double xxh3 = time_op(xxh3_image, &f, n * 20);
	printf("%.1f %.1f %zu\n", create, xxh3, f.len);
	free(windows);
	workload_free(w);
}

/* Anonymous memory resident in this process (rss.h). */
static size_t resident(void)
{
	size_t bytes = rss_anon();
	if (!bytes)
		die("RssAnon in /proc/self/status", ENOENT);
	return bytes;
}

/* Resident bytes that creating a workload's program leaves behind, then
 * also its schedule (appended and submitted), and the image's size:
 * "program schedule image". */
static void child_memory(const char *kind, long words)
{
	struct cdev d;
	size_t len;
	uint32_t prog, s;
	uint64_t seqno;
	struct workload *w;
	uint8_t *image = workload_image(workload_kind_parse(kind),
					(uint64_t)words, &len, &w);
	if (cdev_open(&d, CP_IOCTL) != 0)
		die("opening the device", ENODEV);
	size_t before = resident();
	int rc = cdev_program(&d, image, len, &prog);
	size_t program = resident() - before;
	if (rc == 0)
		rc = cdev_schedule(&d, prog, &s);
	for (uint64_t i = 0; rc == 0 && i < w->model.n_refs; i += 1024) {
		uint64_t n = w->model.n_refs - i < 1024 ? w->model.n_refs - i
							: 1024;
		rc = cdev_append(&d, s, &w->model.refs[i], (uint32_t)n);
	}
	if (rc == 0)
		rc = cdev_submit(&d, s, &seqno);
	if (rc)
		die("creating and submitting the workload", -rc);
	printf("%zu %zu %zu\n", program, resident() - before, len);
}

/* ---- churn through the guard's caches ---- */

/* Resident anonymous memory once the allocator has returned its free
 * pages: what is held (rss.h). */
static size_t held(void)
{
	size_t bytes = rss_held();
	if (!bytes)
		die("RssAnon in /proc/self/status", ENOENT);
	return bytes;
}

#define CHURN_LAUNCHES 32768          /* a 1.97 MB program */
#define CHURN_REFS (1u << 20)         /* per schedule */
#define CHURN_BATCH 65536             /* references per append */

/* n distinct programs created, run once and destroyed: the resident
 * bytes they leave behind, and one image's size. */
static void child_churn_programs(long n)
{
	struct cdev d;
	if (cdev_open(&d, CP_IOCTL) != 0)
		die("opening the device", ENODEV);
	size_t before = held(), len = 0;
	struct ac_ref all = { 0, CHURN_LAUNCHES };
	for (long i = 0; i < n; i++) {
		uint8_t *image = prog_image_wide(CHURN_LAUNCHES,
						 0x3f800000u + (uint32_t)i, &len);
		uint32_t prog, s;
		int rc = cdev_program(&d, image, len, &prog);
		if (rc == 0)
			rc = cdev_schedule(&d, prog, &s);
		if (rc == 0)
			rc = cdev_append(&d, s, &all, 1);
		if (rc == 0)
			rc = cdev_run(&d, s);
		if (rc == 0)
			rc = cdev_destroy_schedule(&d, s);
		if (rc == 0)
			rc = cdev_destroy_program(&d, prog);
		free(image);
		if (rc)
			die("a churned program", -rc);
	}
	printf("%zu %zu\n", held() - before, len);
}

/* n distinct schedules of about 2^20 references on one program, each
 * submitted and destroyed: the resident bytes they leave behind. */
static void child_churn_verdicts(long n)
{
	struct cdev d;
	size_t len;
	uint8_t *image = prog_image(PROG_GOOD, &len);
	struct ac_ref *refs = malloc(CHURN_BATCH * sizeof(*refs));
	uint32_t prog;
	if (!refs || cdev_open(&d, CP_IOCTL) != 0 ||
	    cdev_program(&d, image, len, &prog) != 0)
		die("setting up the device", ENODEV);
	for (uint32_t k = 0; k < CHURN_BATCH; k++)
		refs[k] = (struct ac_ref){ 0, 2 };   /* P then Q: certified */
	size_t before = held();
	for (long i = 0; i < n; i++) {
		uint32_t s;
		int rc = cdev_schedule(&d, prog, &s);
		/* schedule i: 2^20 - i references, so the verdicts differ */
		for (uint64_t at = 0, total = CHURN_REFS - (uint64_t)i;
		     rc == 0 && at < total; at += CHURN_BATCH)
			rc = cdev_append(&d, s, refs, (uint32_t)(total - at <
				CHURN_BATCH ? total - at : CHURN_BATCH));
		if (rc == 0)
			rc = cdev_run(&d, s);
		if (rc == 0)
			rc = cdev_destroy_schedule(&d, s);
		if (rc)
			die("a churned schedule", -rc);
	}
	printf("%zu\n", held() - before);
	free(refs);
	free(image);
}

static int child(const char *what, long n)
{
	static const struct {
		const char *name;
		double (*fn)(long);
	} timed[] = {
		{ "fionread", child_fionread },
		{ "dup-close", child_dup_close },
		{ "uring-read", child_uring_read },
		{ "submit-ioctl", child_submit_ioctl },
		{ "submit-heap", child_submit_heap },
		{ "submit-uring", child_submit_uring },
		{ "rebuild", child_rebuild },
		{ "create", child_create },
		{ "create-new", child_create_new },
		{ "append", child_append },
		{ "files-update", child_files_update },
		{ "fork-exit", child_fork_exit },
		{ "ring-life", child_ring_life },
		{ "start", child_start },
	};
	if (!strcmp(what, "noop"))
		return 0;
	for (size_t i = 0; i < sizeof(timed) / sizeof(timed[0]); i++)
		if (!strcmp(what, timed[i].name)) {
			printf("%.1f\n", timed[i].fn(n));
			return 0;
		}
	if (!strcmp(what, "create-image")) {
		child_create_image(n);
		return 0;
	}
	if (!strcmp(what, "churn-programs")) {
		child_churn_programs(n);
		return 0;
	}
	if (!strcmp(what, "churn-verdicts")) {
		child_churn_verdicts(n);
		return 0;
	}
	if (strncmp(what, "memory-", 7) || workload_kind_parse(what + 7) < 0)
		return 2;
	child_memory(what + 7, n);
	return 0;
}

/* ---- the parent: configurations, rounds, the table ---- */

struct config {
	const char *name;
	const char *preload;        /* LD_PRELOAD, or NULL */
	const char *mode;           /* ARENAGUARD, or NULL */
};

static const struct config no_guard = { "without", NULL, NULL };
static const struct config guard = {
	"with", "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_LIB, NULL };
static const struct config sim = {
	"without", "LD_PRELOAD=" AG_PRELOAD_FIRST AG_ARENASIM, NULL };
static const struct config guard_sim = {
	"with", "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_LIB " " AG_ARENASIM,
	NULL };
static const struct config off = {
	"off", "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_LIB " " AG_ARENASIM,
	"ARENAGUARD=off" };
static const struct config enforce = {
	"enforce", "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_LIB " " AG_ARENASIM,
	"ARENAGUARD=enforce" };
/* Enforcing (ARENAGUARD unset) within a cache budget of MB MiB. */
#define ENFORCE_WITHIN(mb)                                                  \
	{ "enforce", "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_LIB " "        \
		     AG_ARENASIM, "ARENAGUARD_CACHE_MB=" #mb }
static const struct config enforce_256 = ENFORCE_WITHIN(256);
static const struct config enforce_64 = ENFORCE_WITHIN(64);
/* On the kernel's driver (--device kernel) the guard alone is preloaded. */
static const struct config kernel_off = {
	"off", "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_LIB, "ARENAGUARD=off" };
static const struct config kernel_enforce = {
	"enforce", "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_LIB,
	"ARENAGUARD=enforce" };

/* Whether the device is the kernel's arena.ko rather than the simulator
 * (--device kernel). */
static int on_kernel;

/*
 * c as it runs on the chosen device: on the kernel, the configurations
 * that preload the simulator preload nothing in its place (the device
 * alone) or the guard alone.  The rows that need the simulator's
 * preload otherwise (memory, churn, arena-infer) are not DEVICE rows.
 */
static const struct config *on_device(const struct config *c)
{
	if (!on_kernel)
		return c;
	if (c == &sim)
		return &no_guard;
	if (c == &guard_sim)
		return &guard;
	if (c == &off)
		return &kernel_off;
	if (c == &enforce)
		return &kernel_enforce;
	return c;
}

/* The environment without the variables a configuration sets. */
static char **environment(const struct config *c)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 3, sizeof(*env));
	if (!env)
		die("environment", ENOMEM);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) &&
		    strncmp(environ[i], "ARENAGUARD", 10))
			env[k++] = environ[i];
	if (c->preload)
		env[k++] = (char *)c->preload;
	if (c->mode)
		env[k++] = (char *)c->mode;
	return env;
}

/* Runs argv under c; its standard output, NUL-terminated, in out. */
static void run(const struct config *c, char *const argv[], char *out,
		size_t size)
{
	int p[2];
	if (pipe(p) != 0)
		die("pipe", errno);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		execve(argv[0], argv, environment(c));
		_exit(127);
	}
	close(p[1]);
	size_t used = 0;
	ssize_t got;
	while (used + 1 < size &&
	       (got = read(p[0], out + used, size - 1 - used)) > 0)
		used += (size_t)got;
	out[used] = 0;
	close(p[0]);
	int status;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench-guard: %s failed (%s): %s\n", argv[0],
			c->name, out);
		exit(1);
	}
}

static double run_child(const struct config *c, const char *what, long n)
{
	char count[32], out[256];
	snprintf(count, sizeof(count), "%ld", n);
	char *argv[] = { self, "--child", (char *)what, count,
			 fastest ? "fastest" : NULL, NULL };
	run(c, argv, out, sizeof(out));
	return strtod(out, NULL);
}

/* Microseconds per forward pass, as arena-infer reports it. */
static double run_infer(const struct config *c, const char *path, long n)
{
	char count[32], out[65536];
	snprintf(count, sizeof(count), "%ld", n);
	char *argv[] = { AG_ARENA_INFER, "--decode", count, (char *)path,
			 NULL };
	run(c, argv, out, sizeof(out));
	const char *at = strstr(out, " us each)");
	while (at && at > out && at[-1] != '(')
		at--;
	if (!at)
		die("arena-infer's output", EPROTO);
	return strtod(at, NULL) * 1e3;
}

enum kind { RATIO, EXTRA_US };

struct measure {
	const char *label;
	const char *child[2];       /* --child WHAT, base and test; NULL:
				     * arena-infer */
	const char *path;           /* arena-infer's --uring, or NULL */
	const struct config *config[2];
	enum kind kind;
	double target;              /* <= this; 0: none */
	long n, quick_n;
	int more_rounds;            /* times the rounds: for the figures
				     * whose noise is near their target */
	int device;                 /* DEVICE: runs with --device (either) */
};

#define DEVICE 1

/*
 * The heap row compares against the stack baseline: the simulator pays
 * system calls to read a heap argument that a kernel driver reads for
 * free, and under the guard it reads the guard's copy (on the stack)
 * instead, so "off" with the heap argument would hide what the guard's
 * own copies cost.
 */
static const struct measure measures[] = {
	{ "unrelated ioctl (FIONREAD, pipe)", { "fionread", "fionread" },
	  NULL, { &no_guard, &guard }, RATIO, 1.05, 100000, 20000, 3,
	  DEVICE },
	{ "unrelated close (dup and close of a pipe fd)",
	  { "dup-close", "dup-close" }, NULL, { &no_guard, &guard }, RATIO,
	  0, 100000, 20000, 3, 0 },
	{ "unrelated io_uring read (/dev/zero)",
	  { "uring-read", "uring-read" }, NULL, { &no_guard, &guard }, RATIO,
	  1.05, 100000, 10000, 3, DEVICE },
	{ "cached submit, ioctl (arg on stack)",
	  { "submit-ioctl", "submit-ioctl" }, NULL, { &off, &enforce },
	  EXTRA_US, 1.0, 100000, 10000, 1, DEVICE },
	{ "cached submit, ioctl (arg on heap)",
	  { "submit-ioctl", "submit-heap" }, NULL, { &off, &enforce },
	  EXTRA_US, 0, 100000, 10000, 1, 0 },
	{ "cached submit, io_uring", { "submit-uring", "submit-uring" },
	  NULL, { &off, &enforce }, EXTRA_US, 1.0, 100000, 10000, 1, DEVICE },
	{ "guarded/unguarded submit, ioctl, stack",
	  { "submit-ioctl", "submit-ioctl" }, NULL, { &sim, &guard_sim },
	  RATIO, 0, 100000, 10000, 1, DEVICE },
	{ "guarded/unguarded submit, ioctl, heap",
	  { "submit-heap", "submit-heap" }, NULL, { &sim, &guard_sim },
	  RATIO, 0, 100000, 10000, 1, DEVICE },
	{ "guarded/unguarded submit, io_uring",
	  { "submit-uring", "submit-uring" }, NULL, { &sim, &guard_sim },
	  RATIO, 0, 100000, 10000, 1, DEVICE },
	{ "rebuild: create, append, submit, destroy",
	  { "rebuild", "rebuild" }, NULL, { &off, &enforce }, EXTRA_US, 0,
	  50000, 5000, 1, 0 },
	{ "PROGRAM_CREATE + DESTROY, 1.05 MB image",
	  { "create", "create" }, NULL, { &off, &enforce }, RATIO, 0,
	  2000, 400, 1, 0 },
	{ "PROGRAM_CREATE + DESTROY, 1.05 MB, new",
	  { "create-new", "create-new" }, NULL, { &off, &enforce }, RATIO, 0,
	  400, 100, 1, 0 },
	{ "SCHEDULE_APPEND 1 MiB (+create, destroy)",
	  { "append", "append" }, NULL, { &off, &enforce }, RATIO, 0,
	  1000, 200, 1, 0 },
	{ "registering files: FILES_UPDATE of 16,384",
	  { "files-update", "files-update" }, NULL, { &no_guard, &guard },
	  RATIO, 2.0, 101, 101, 1, 0 },
	{ "fork + exit (a liburing ring open)",
	  { "fork-exit", "fork-exit" }, NULL, { &no_guard, &guard }, RATIO,
	  1.1, 2000, 400, 1, 0 },
	{ "ring life: liburing set-up + tear-down",
	  { "ring-life", "ring-life" }, NULL, { &no_guard, &guard }, RATIO,
	  1.1, 20000, 4000, 1, 0 },
	{ "start: fork + exec + exit of a process",
	  { "start", "start" }, NULL, { &no_guard, &guard }, EXTRA_US,
	  100, 400, 100, 1, 0 },
	{ "arena-infer decode loop, ioctl", { NULL, NULL }, NULL,
	  { &sim, &guard_sim }, RATIO, 1.03, 100, 50, 3, 0 },
	{ "arena-infer decode loop, io_uring", { NULL, NULL }, "--uring",
	  { &sim, &guard_sim }, RATIO, 1.03, 100, 50, 3, 0 },
};

/* One measurement of side 0 (the baseline) or 1 (the guard). */
static double sample(const struct measure *m, int side, long n)
{
	const struct config *c = on_device(m->config[side]);
	return m->child[side] ? run_child(c, m->child[side], n)
			      : run_infer(c, m->path, n);
}

#define MAX_ROUNDS 255

/*
 * One row: rounds of both sides (ABBA), the median of the per-round
 * ratios or differences, and their spread (the smallest and largest
 * round's), so that a figure taken on a loaded machine says how far a
 * single round strayed.
 */
static void bench(const struct measure *m, int rounds, int quick)
{
	double v[2][MAX_ROUNDS], diff[MAX_ROUNDS];
	long n = quick ? m->quick_n : m->n;
	rounds *= m->more_rounds;
	if (rounds > MAX_ROUNDS)
		rounds = MAX_ROUNDS;
	for (int r = 0; r < rounds; r++) {
		/* ABBA: drift within a round hits both sides alike. */
		int first = r % 2;
		v[first][r] = sample(m, first, n);
		v[!first][r] = sample(m, !first, n);
		diff[r] = m->kind == RATIO ? v[1][r] / v[0][r]
					   : (v[1][r] - v[0][r]) / 1e3;
	}
	double result = median(diff, rounds);  /* sorts diff */
	char target[32] = "";
	if (m->target)
		snprintf(target, sizeof(target), "<= %.2f %s", m->target,
			 result <= m->target ? "met" : "MISSED");
	printf("| %-41s | %3d | %-7s %9.3f | %-7s %9.3f | %-8s %6.3f | "
	       "%6.3f to %6.3f | %-12s |\n", m->label, rounds,
	       on_device(m->config[0])->name, median(v[0], rounds) / 1e3,
	       on_device(m->config[1])->name, median(v[1], rounds) / 1e3,
	       m->kind == RATIO ? "ratio" : "extra us", result, diff[0],
	       diff[rounds - 1], target);
	fflush(stdout);
}

/*
 * PROGRAM_CREATE of a new workload image, unguarded (the simulator
 * alone) against guarded, ABBA over rounds: the median of each side's
 * CPU time per create, of the per-round extra, and of the per-round
 * extra over XXH3 of the same image timed in the same children (the
 * floor a pass over the bytes costs: the figure issue 32 asks for).
 */
static void bench_create_image(int rounds, int quick)
{
	const struct config *side[2] = { on_device(&sim),
					 on_device(&guard_sim) };
	double t[2][MAX_ROUNDS], extra[MAX_ROUNDS], ratio[MAX_ROUNDS];
	double xxh3[2 * MAX_ROUNDS], len = 0;
	char count[32], out[256];
	snprintf(count, sizeof(count), "%d", quick ? 2 * BATCHES : 5 * BATCHES);
	char *argv[] = { self, "--child", "create-image", count,
			 fastest ? "fastest" : NULL, NULL };
	for (int r = 0; r < rounds; r++) {
		double x[2];
		for (int k = 0; k < 2; k++) {
			int s = (r % 2) ^ k;            /* ABBA */
			run(side[s], argv, out, sizeof(out));
			if (sscanf(out, "%lf %lf %lf", &t[s][r], &x[s], &len)
			    != 3)
				die("the create child's output", EPROTO);
			xxh3[2 * r + s] = x[s];
		}
		extra[r] = t[1][r] - t[0][r];
		ratio[r] = extra[r] / ((x[0] + x[1]) / 2);
	}
	double e = median(extra, rounds), q = median(ratio, rounds);
	printf("| %-41s | %3d | %-7s %9.3f | %-7s %9.3f | %-8s %6.2f | "
	       "%6.2f to %6.2f | extra %.3f ms, XXH3 %.1f us, %.0f bytes |\n",
	       "program create, new image (vit 10^5 words)", rounds,
	       side[0]->name, median(t[0], rounds) / 1e3, side[1]->name,
	       median(t[1], rounds) / 1e3, "x XXH3", q, ratio[0],
	       ratio[rounds - 1], e / 1e6, median(xxh3, 2 * rounds) / 1e3,
	       len);
	fflush(stdout);
}

/* Heap the guard keeps for a large program and its schedule: enforce
 * minus off, each from one child (malloc's accounting is exact). */
static void bench_memory(const char *kind, long words)
{
	char what[32], count[32], out[2][256];
	snprintf(what, sizeof(what), "memory-%s", kind);
	snprintf(count, sizeof(count), "%ld", words);
	char *argv[] = { self, "--child", what, count, NULL };
	run(&off, argv, out[0], sizeof(out[0]));
	run(&enforce, argv, out[1], sizeof(out[1]));
	double off_prog, off_all, on_prog, on_all, image;
	if (sscanf(out[0], "%lf %lf", &off_prog, &off_all) != 2 ||
	    sscanf(out[1], "%lf %lf %lf", &on_prog, &on_all, &image) != 3)
		die("the memory child's output", EPROTO);
	double prog = (on_prog - off_prog) / image;
	printf("| %-8s | %10.0f | %10.0f | %5.2f | %10.0f | %5.2f | %-12s |\n",
	       kind, image, on_prog - off_prog, prog, on_all - off_all,
	       (on_all - off_all) / image,
	       prog <= 2 ? "<= 2 met" : "<= 2 MISSED");
}

static void bench_memories(int quick)
{
	long words = quick ? 100000 : 10000000;
	printf("\nthe guard's resident memory (RssAnon, enforce minus off) "
	       "after creating a workload's program of about %ld parameter "
	       "words, then after appending and submitting its schedule; "
	       "bytes\n\n", words);
	printf("| workload | image      | program    | x img | + schedule | "
	       "x img | target       |\n");
	printf("| --- | --- | --- | --- | --- | --- | --- |\n");
	for (int k = 0; k < WORKLOAD_KINDS; k++)
		bench_memory(workload_kind_name(k), words);
}

/* The guard's resident memory after a churn (enforce minus off) against
 * the budget it ran with. */
static void bench_churn(const char *what, long n, const struct config *c,
			size_t budget_mb)
{
	char count[32], out[2][256];
	snprintf(count, sizeof(count), "%ld", n);
	char *argv[] = { self, "--child", (char *)what, count, NULL };
	run(&off, argv, out[0], sizeof(out[0]));
	run(c, argv, out[1], sizeof(out[1]));
	double off_bytes, on_bytes;
	if (sscanf(out[0], "%lf", &off_bytes) != 1 ||
	    sscanf(out[1], "%lf", &on_bytes) != 1)
		die("the churn child's output", EPROTO);
	double extra = (on_bytes - off_bytes) / (1 << 20);
	printf("| %-14s | %4ld | %4zu MiB | %8.1f MiB | %-16s |\n", what, n,
	       budget_mb, extra,
	       extra <= (double)budget_mb ? "<= budget met" : "<= budget MISSED");
}

static void bench_churns(int quick)
{
	long programs = quick ? 40 : 150, schedules = quick ? 6 : 20;
	printf("\nthe guard's resident memory (RssAnon after malloc_trim, "
	       "enforce minus off) after churn through its caches: distinct %d-launch programs "
	       "(1.97 MB images) created, run once and destroyed; schedules "
	       "of 2^20 references submitted and destroyed\n\n",
	       CHURN_LAUNCHES);
	printf("| churn          | n    | budget   | guard keeps  | target "
	       "          |\n");
	printf("| --- | --- | --- | --- | --- |\n");
	bench_churn("churn-programs", programs, &enforce_256, 256);
	bench_churn("churn-programs", programs, &enforce_64, 64);
	bench_churn("churn-verdicts", schedules, &enforce_256, 256);
	bench_churn("churn-verdicts", schedules, &enforce_64, 64);
}

static void machine(int argc, char **argv)
{
	struct utsname u;
	uname(&u);
	char cpu[256] = "?", line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(cpu, sizeof(cpu), "%s", strchr(line, ':') + 2);
			cpu[strcspn(cpu, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
	printf("command:");
	for (int i = 0; i < argc; i++)
		printf(" %s", argv[i]);
	printf("\nmachine: %s %s, %s, %ld cores\n", u.sysname, u.release, cpu,
	       sysconf(_SC_NPROCESSORS_ONLN));
}

static int usage(void)
{
	fprintf(stderr, "usage: bench-guard [--quick] [--rounds N] "
		"[--only WORD] [--device sim|kernel] [--fastest]\n");
	return 2;
}

int main(int argc, char **argv)
{
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0)
		die("/proc/self/exe", errno);
	self[len] = 0;
	if ((argc == 4 || (argc == 5 && !strcmp(argv[4], "fastest"))) &&
	    !strcmp(argv[1], "--child")) {
		fastest = argc == 5;
		return child(argv[2], strtol(argv[3], NULL, 10));
	}
	int quick = 0, rounds = 0;
	const char *only = NULL;
	int device_rows = 0;        /* --device: the DEVICE rows alone */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--fastest"))
			fastest = 1;
		else if (!strcmp(argv[i], "--device") && i + 1 < argc &&
			 (!strcmp(argv[i + 1], "sim") ||
			  !strcmp(argv[i + 1], "kernel"))) {
			on_kernel = !strcmp(argv[++i], "kernel");
			device_rows = 1;
		}
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else
			return usage();
	}
	if (rounds <= 0)
		rounds = quick ? 5 : 21;
	if (rounds > MAX_ROUNDS)
		rounds = MAX_ROUNDS;

	machine(argc, argv);
	printf("device: %s\n", on_kernel ? "the kernel's arena.ko (nothing "
	       "preloaded without the guard)" : "libarenasim.so (preloaded "
	       "in every device configuration)");
	if (fastest)
		printf("medians over rounds, configurations alternated; in a "
		       "timed child, the fastest of its batches of about %.0f "
		       "us; microseconds per operation; spread: the smallest "
		       "and largest round's result\n\n", FAST_BATCH_NS / 1e3);
	else
		printf("medians over rounds, configurations alternated; in a "
		       "timed child, the median of %d batches; microseconds "
		       "per operation; spread: the smallest and largest "
		       "round's result\n\n", BATCHES);
	printf("| %-41s | %-3s | %-17s | %-17s | %-15s | %-16s | %-12s |\n",
	       "measure", "rds", "baseline (us)", "guard (us)", "result",
	       "spread", "target");
	printf("| --- | --- | --- | --- | --- | --- | --- |\n");
	for (size_t i = 0; i < sizeof(measures) / sizeof(measures[0]); i++)
		if ((!only || strstr(measures[i].label, only)) &&
		    (!device_rows || measures[i].device))
			bench(&measures[i], rounds, quick);
	if (!only || strstr("program create, new image", only))
		bench_create_image(rounds, quick);
	if (!device_rows && (!only || strstr("memory", only)))
		bench_memories(quick);
	if (!device_rows && (!only || strstr("churn", only)))
		bench_churns(quick);
	return 0;
}
