/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../../contract/image.h"  /* arena_append_count_ok: the batch limit */
#include "cache.h"
#include "../../contract/requests.h"  /* the URING_CMD argument rule */
#include "dedup.h"
#include "driver.h"
#include "fake.h"
#include "ioctl.h"
#include "load.h"
#include "seal.h"
#include "spawn.h"
#include "usercopy.h"

#define OBJECTS 4096
#define MAX_IMAGE (16u << 20)         /* larger: not read, unsealable */

int fake_calls[16];

enum kind { FREE, PROGRAM, SCHEDULE };

struct object {
	enum kind kind;
	int seal_known;               /* the driver could read what it took */
	struct arena_seal seal;
	uint64_t n_refs;
};

/* The driver's state, shared with forked children. */
struct state {
	int no_seals;
	uint32_t algorithms;          /* SEAL's answer */
	int sealed[2];                /* per open file */
	struct object obj[OBJECTS];   /* handle h is obj[h - 1] */
	struct fake_ran ran;
};

static struct state *st;
static void (*append_hook)(void);
static void (*create_hook)(void);
static struct {
	unsigned int cmd;
	int err, times;
} failing;

static int open_of(int fd)
{
	return fd == FAKE_FD_OTHER;
}

static struct object *get(uint32_t handle, enum kind kind)
{
	if (handle < 1 || handle > OBJECTS || st->obj[handle - 1].kind != kind)
		return NULL;
	return &st->obj[handle - 1];
}

static int add(enum kind kind, uint32_t *handle)
{
	for (uint32_t i = 0; i < OBJECTS; i++)
		if (st->obj[i].kind == FREE) {
			memset(&st->obj[i], 0, sizeof(st->obj[i]));
			st->obj[i].kind = kind;
			*handle = i + 1;
			return 0;
		}
	return -ENOMEM;
}

static int program_create(struct drm_arena_program_create *a)
{
	if (create_hook)
		create_hook();
	int rc = add(PROGRAM, &a->handle);
	if (rc)
		return rc;
	struct object *p = get(a->handle, PROGRAM);
	uint8_t *image = a->size <= MAX_IMAGE ? malloc(a->size + 1) : NULL;
	if (image && copy_from_user(image, a->image, a->size) == 0) {
		arena_seal_program(&p->seal, image, a->size);
		p->seal_known = 1;
	}
	free(image);
	return 0;
}

static int schedule_create(struct drm_arena_schedule_create *a)
{
	struct object *p = get(a->program, PROGRAM);
	int rc = add(SCHEDULE, &a->handle);
	if (rc)
		return rc;
	struct object *s = get(a->handle, SCHEDULE);
	if (p) {
		s->seal = p->seal;
		s->seal_known = p->seal_known;
	}
	return 0;
}

static int schedule_append(const struct drm_arena_schedule_append *a)
{
	if (append_hook)
		append_hook();
	if (!arena_append_count_ok(a->count))
		return -EINVAL;
	struct object *s = get(a->schedule, SCHEDULE);
	if (!s || a->count == 0)
		return 0;
	size_t bytes = (size_t)a->count * sizeof(struct drm_arena_ref);
	struct drm_arena_ref *refs = malloc(bytes);
	if (refs && copy_from_user(refs, a->refs, bytes) == 0)
		arena_seal_refs(&s->seal, refs, a->count);
	else
		s->seal_known = 0;
	free(refs);
	s->n_refs += a->count;
	return 0;
}

static void destroy(uint32_t handle, enum kind kind)
{
	struct object *o = get(handle, kind);
	if (o)
		o->kind = FREE;
}

static int run(uint32_t handle)
{
	struct object *s = get(handle, SCHEDULE);
	st->ran.n++;
	st->ran.schedule = handle;
	st->ran.n_refs = s ? s->n_refs : 0;
	return 0;
}

static int submit(int open, uint32_t handle)
{
	return st->sealed[open] ? -ENOKEY : run(handle);
}

static int submit_sealed(uint32_t handle, uint32_t algorithm,
			 const uint8_t *seal)
{
	if (st->no_seals || algorithm > 31 ||
	    !(st->algorithms & (1u << algorithm)))
		return -EINVAL;
	struct object *s = get(handle, SCHEDULE);
	struct arena_seal_value v;
	if (s && s->seal_known)
		arena_seal_value(&s->seal, &v);
	if (!s || !s->seal_known || !arena_seal_equal(&v, seal))
		return -EKEYREJECTED;
	return run(handle);
}

/* ---- the guarded requests by ioctl, one function each ---- */

static int ioctl_program_create(int open, void *arg)
{
	(void)open;
	return program_create(arg);
}

static int ioctl_program_destroy(int open, void *arg)
{
	(void)open;
	destroy(((struct drm_arena_handle *)arg)->handle, PROGRAM);
	return 0;
}

static int ioctl_schedule_create(int open, void *arg)
{
	(void)open;
	return schedule_create(arg);
}

static int ioctl_schedule_append(int open, void *arg)
{
	(void)open;
	return schedule_append(arg);
}

static int ioctl_schedule_submit(int open, void *arg)
{
	struct drm_arena_schedule_submit *s = arg;
	int rc = submit(open, s->schedule);
	if (rc == 0)
		s->seqno = 1;
	return rc;
}

static int ioctl_schedule_destroy(int open, void *arg)
{
	(void)open;
	destroy(((struct drm_arena_handle *)arg)->handle, SCHEDULE);
	return 0;
}

static int ioctl_seal(int open, void *arg)
{
	if (st->no_seals)
		return -EINVAL;
	st->sealed[open] = 1;
	((struct drm_arena_seal *)arg)->algorithms = st->algorithms;
	((struct drm_arena_seal *)arg)->context = 1000 + (uint64_t)open;
	return 0;
}

static int ioctl_schedule_submit_sealed(int open, void *arg)
{
	struct drm_arena_schedule_submit_sealed *s = arg;
	(void)open;
	int rc = submit_sealed(s->schedule, s->algorithm, s->seal);
	if (rc == 0)
		s->seqno = 1;
	return rc;
}

/* The guarded requests of contract/requests.inc, dispatched to the
 * functions above; any other request succeeds. */
static int fake_ioctl(int fd, unsigned int cmd, void *arg)
{
	if (cmd == failing.cmd && failing.times > 0) {
		failing.times--;
		return -failing.err;
	}
	fake_calls[_IOC_NR(cmd) - DRM_COMMAND_BASE]++;
	int open = open_of(fd);
	switch (cmd) {
#define ARENA_REQUEST(name, NAME, type, uop, usize, guarded)		\
	ARENA_GUARDED_##guarded(case DRM_IOCTL_ARENA_##NAME:		\
				return ioctl_##name(open, arg);)
#include "../../contract/requests.inc"
	default:
		return 0;
	}
}

/* ---- the requests by URING_CMD, one function each ---- */

/* Each reads its command's struct from sqe->cmd, whose bytes after it
 * arena_uring_cmd_arg (contract/requests.h) found zero. */
static int uring_schedule_append(int open, const uint8_t *cmd)
{
	struct drm_arena_schedule_append a;
	(void)open;
	memcpy(&a, cmd, sizeof(a));
	return schedule_append(&a);
}

static int uring_schedule_submit(int open, const uint8_t *cmd)
{
	struct arena_uring_submit s;
	memcpy(&s, cmd, sizeof(s));
	return submit(open, s.schedule);
}

static int uring_schedule_submit_sealed(int open, const uint8_t *cmd)
{
	struct arena_uring_submit_sealed s;
	(void)open;
	memcpy(&s, cmd, sizeof(s));
	return submit_sealed(s.schedule, s.algorithm, s.seal);
}

/* The commands of contract/requests.inc, indexed by op. */
static int (*const cmds[])(int open, const uint8_t *cmd) = {
#define ARENA_URING_REQUEST(uop, name, ...) [uop] = uring_##name,
#include "../../contract/requests.inc"
};

int fake_run_sqe(const struct io_uring_sqe *sqe)
{
	if (sqe->opcode == IORING_OP_NOP)
		return (int)sqe->len;          /* the guard's injected result */
	ck_assert_int_eq(sqe->opcode, IORING_OP_URING_CMD);
	int open = open_of(sqe->fd);
	int rc = arena_uring_cmd_arg(sqe->cmd_op, sqe->cmd);
	if (rc < 0)
		return rc;      /* the driver's answer (contract/requests.h) */
	if (sqe->cmd_op >= sizeof(cmds) / sizeof(cmds[0]) || !cmds[sqe->cmd_op])
		return -ENOTTY;
	return cmds[sqe->cmd_op](open, sqe->cmd);
}

struct fake_ran fake_ran(void)
{
	return st->ran;
}

void fake_setup(void)
{
	if (!st) {
		st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		ck_assert_ptr_ne(st, MAP_FAILED);
	}
	memset(st, 0, sizeof(*st));
	st->algorithms = 1u << ARENA_SEAL_SHA256;
	ag_driver_ioctl = fake_ioctl;
	append_hook = NULL;
	create_hook = NULL;
	failing.times = 0;
	memset(fake_calls, 0, sizeof(fake_calls));
	unsetenv("ARENAGUARD");
	unsetenv("ARENAGUARD_DUMP");
	unsetenv("ARENAGUARD_STRICT");
	setenv("ARENAGUARD_LOG", scratch_path("log"), 1);
	ag_config_load();
	ag_cache_trim();
	ag_report_reset();
}

void fake_without_seals(void)
{
	st->no_seals = 1;
}

void fake_seal_algorithms(uint32_t algorithms)
{
	st->algorithms = algorithms;
}

void fake_on_append(void (*fn)(void))
{
	append_hook = fn;
}

void fake_on_create(void (*fn)(void))
{
	create_hook = fn;
}

void fake_fail(unsigned int cmd, int err, int times)
{
	failing.cmd = cmd;
	failing.err = err;
	failing.times = times;
}

int fake_call_fd(struct ag_file *f, int fd, unsigned int cmd, void *arg)
{
	return ag_ioctl(f, fd, cmd, (uintptr_t)arg);
}

int fake_call(struct ag_file *f, unsigned int cmd, void *arg)
{
	return fake_call_fd(f, FAKE_FD, cmd, arg);
}

uint32_t fake_program(struct ag_file *f, enum prog_kind kind)
{
	size_t len;
	uint8_t *image = prog_image(kind, &len);
	struct drm_arena_program_create c = { .image = (uintptr_t)image,
					      .size = len };
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_PROGRAM_CREATE, &c), 0);
	/* The application's struct is its own again. */
	ck_assert_uint_eq(c.image, (uintptr_t)image);
	free(image);
	return c.handle;
}

uint32_t fake_schedule(struct ag_file *f, uint32_t prog,
		       const struct ac_ref *refs, uint32_t n, uint32_t batch)
{
	struct drm_arena_schedule_create c = { .program = prog };
	ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_CREATE, &c), 0);
	for (uint32_t i = 0; i < n; i += batch) {
		struct drm_arena_schedule_append a = {
			.schedule = c.handle, .count = batch,
			.refs = (uintptr_t)(refs + i) };
		ck_assert_int_eq(fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_APPEND,
					   &a), 0);
	}
	return c.handle;
}

int fake_submit(struct ag_file *f, uint32_t s)
{
	struct drm_arena_schedule_submit sub = { .schedule = s };
	return fake_call(f, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &sub);
}

uint32_t fake_bad_d(struct ag_file *f)
{
	uint32_t prog = fake_program(f, PROG_GOOD);
	return fake_schedule(f, prog, prog_bad_d_refs, 4, 1);
}
