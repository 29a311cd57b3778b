/* SPDX-License-Identifier: MIT */
/*
 * The fake driver of fuzz_guard.c.  Programs and schedules are answered
 * in the simulator's order of checks (sim/program.c, sim/schedule.c,
 * sim/uring.c), with handles reused lowest first (what makes a stale
 * mirror entry dangerous), and two checks that the guard above must make
 * hold:
 *
 *   - every submission that reaches the driver is of a schedule that
 *     libarenacert certifies, the program and references being the
 *     driver's own (soundness: the guard blocked everything else);
 *   - the driver never reads the application's own image or references
 *     when the guard could read them: it is handed the guard's copy,
 *     so that what was certified is what runs.
 *
 * It seals as uapi.h says (common/seal.c): an open file that was sealed
 * refuses plain submits (ENOKEY), and a sealed submit runs only with the
 * seal of the driver's own program and references (EKEYREJECTED); a
 * driver "without seals" answers EINVAL to both requests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fake_driver.h"
#include "seal.h"
#include "usercopy.h"
#include "../contract/image.h"  /* arena_append_count_ok: the batch limit */
#include "../contract/requests.h"  /* the requests' argument rules */

#define MAX_IMAGE (1u << 20)    /* larger: ENOMEM, unread */

struct fake_program {
	struct ac_model *m;
	ac_program *p;
	int schedules;
	struct arena_seal seal;
};

struct fake_schedule {
	struct fake_program *program;
	ac_schedule *check;     /* strict: validates batches */
	struct ac_ref *refs;
	uint64_t n;
	struct arena_seal seal;
};

struct fake_file {
	void *programs[FAKE_HANDLES];
	void *schedules[FAKE_HANDLES];
	int sealed;
};

struct fake_watch fake_watch;
static struct fake_file files[FAKE_FILES];
static int strict, seals;

/* ---- handles ---- */

static void *get(void *const *table, uint32_t handle)
{
	return handle >= 1 && handle <= FAKE_HANDLES ? table[handle - 1] : NULL;
}

static int add(void **table, void *obj, uint32_t *handle)
{
	for (uint32_t i = 0; i < FAKE_HANDLES; i++)
		if (!table[i]) {
			table[i] = obj;
			*handle = i + 1;
			return 0;
		}
	return -ENOMEM;
}

/* ---- programs ---- */

static void program_free(struct fake_program *p)
{
	if (!p)
		return;
	ac_program_free(p->p);
	ac_model_free(p->m);
	free(p);
}

/* Image bytes -> program, as sim/program.c: it must read, carry no
 * schedule, and pass ac_program_new. */
static int program_load(struct fake_file *f, const uint8_t *image,
			size_t len, uint32_t *handle)
{
	struct fake_program *p = calloc(1, sizeof(*p));
	FUZZ_CHECK(p, "calloc");
	int rc = -EINVAL;
	if (ac_model_read_image(image, len, &p->m, NULL) == 0 &&
	    p->m->n_refs == 0 && (p->p = ac_program_new(p->m, NULL)))
		rc = add(f->programs, p, handle);
	arena_seal_program(&p->seal, image, len);
	if (rc)
		program_free(p);
	return rc;
}

static int program_create(struct fake_file *f,
			  struct drm_arena_program_create *a)
{
	if (a->flags || a->size == 0)
		return -EINVAL;
	if (a->size > MAX_IMAGE)
		return -ENOMEM;
	uint8_t *image = malloc(a->size);
	FUZZ_CHECK(image, "malloc");
	int rc = copy_from_user(image, a->image, a->size);
	FUZZ_CHECK(rc != 0 || a->image != fake_watch.app_buffer,
		   "the driver read the application's image, not the guard's "
		   "copy");
	if (rc == 0)
		rc = program_load(f, image, a->size, &a->handle);
	free(image);
	return rc;
}

/* What a destroy names, or NULL with *rc the driver's answer. */
static void *destroyed(void *const *table, const struct drm_arena_handle *a,
		       int *rc)
{
	void *obj = a->pad ? NULL : get(table, a->handle);
	*rc = a->pad ? -EINVAL : obj ? 0 : -ENOENT;
	return obj;
}

static int program_destroy(struct fake_file *f,
			   const struct drm_arena_handle *a)
{
	int rc;
	struct fake_program *p = destroyed(f->programs, a, &rc);
	if (!p || p->schedules)
		return p ? -EBUSY : rc;
	f->programs[a->handle - 1] = NULL;
	program_free(p);
	return 0;
}

/* ---- schedules ---- */

static void schedule_free(struct fake_schedule *s)
{
	if (!s)
		return;
	s->program->schedules--;
	ac_schedule_free(s->check);
	free(s->refs);
	free(s);
}

static int schedule_create(struct fake_file *f,
			   struct drm_arena_schedule_create *a)
{
	struct fake_program *p = get(f->programs, a->program);
	if (!p)
		return -ENOENT;
	struct fake_schedule *s = calloc(1, sizeof(*s));
	FUZZ_CHECK(s, "calloc");
	s->program = p;
	s->seal = p->seal;
	p->schedules++;
	if (strict) {
		s->check = ac_schedule_new(p->p);
		FUZZ_CHECK(s->check, "ac_schedule_new");
	}
	int rc = add(f->schedules, s, &a->handle);
	if (rc)
		schedule_free(s);
	return rc;
}

/* Takes a batch (atomic): the simulator's check_batch is the
 * certificate's well-formedness of the references, which is what the
 * strict driver asks libarenacert. */
static int schedule_take(struct fake_schedule *s, const struct ac_ref *refs,
			 uint32_t count)
{
	if (s->check && ac_schedule_append(s->check, refs, count, NULL) != 0)
		return -EINVAL;
	struct ac_ref *v = realloc(s->refs, (s->n + count) * sizeof(*v));
	FUZZ_CHECK(v, "realloc");
	memcpy(v + s->n, refs, count * sizeof(*v));
	s->refs = v;
	s->n += count;
	arena_seal_refs(&s->seal, (const struct drm_arena_ref *)refs, count);
	return 0;
}

static int schedule_append(struct fake_file *f,
			   const struct drm_arena_schedule_append *a)
{
	struct fake_schedule *s = get(f->schedules, a->schedule);
	if (!s)
		return -ENOENT;
	if (a->count == 0)
		return 0;
	if (!arena_append_count_ok(a->count))
		return -EINVAL;
	struct ac_ref *refs = malloc(a->count * sizeof(*refs));
	FUZZ_CHECK(refs, "malloc");
	int rc = copy_from_user(refs, a->refs, a->count * sizeof(*refs));
	FUZZ_CHECK(rc != 0 || a->refs != fake_watch.app_buffer,
		   "the driver read the application's references, not the "
		   "guard's copy");
	if (rc == 0)
		rc = schedule_take(s, refs, a->count);
	free(refs);
	return rc;
}

void fake_schedule_certify(int file, uint32_t handle, struct fuzz_outcome *o)
{
	const struct fake_schedule *s = get(files[file].schedules, handle);
	struct ac_model m = *s->program->m;
	m.refs = s->refs;
	m.n_refs = s->n;
	fuzz_certify(&m, o);
}

/* The point of the guard: nothing uncertified reaches the driver. */
static int schedule_submit(int file, uint32_t handle, uint64_t seqno_user)
{
	if (!get(files[file].schedules, handle))
		return -ENOENT;
	struct fuzz_outcome o;
	fake_schedule_certify(file, handle, &o);
	FUZZ_CHECK(o.rc == 0 && o.verdict == 0, "submission of schedule %u "
		   "reached the driver: verdict %llu %s", handle,
		   (unsigned long long)o.verdict, o.error);
	static const uint64_t seqno = 1;
	return seqno_user ? copy_to_user(seqno_user, &seqno, sizeof(seqno))
			  : 0;
}

/* A plain submit: refused on a sealed open file. */
static int schedule_submit_plain(int file, uint32_t handle, uint32_t flags,
				 uint64_t seqno_user)
{
	int rc = arena_submit_check(flags, 0, 0, 0, files[file].sealed);
	return rc ? rc : schedule_submit(file, handle, seqno_user);
}

/* A sealed submit runs only what the seal names (on any open file). */
static int schedule_submit_sealed(int file, uint32_t handle, uint32_t flags,
				  uint64_t seqno_user, uint32_t algorithm,
				  uint32_t pad, const uint8_t *seal)
{
	int rc = seals ? arena_submit_check(flags, 1, algorithm, pad, 1)
		       : -EINVAL;
	if (rc)
		return rc;
	const struct fake_schedule *s = get(files[file].schedules, handle);
	if (!s)
		return -ENOENT;
	struct arena_seal_value v;
	arena_seal_value(&s->seal, &v);
	if (!arena_seal_equal(&v, seal))
		return -EKEYREJECTED;
	return schedule_submit(file, handle, seqno_user);
}

static int seal_file(int file, struct drm_arena_seal *a)
{
	if (!seals || a->flags)
		return -EINVAL;
	files[file].sealed = 1;
	a->algorithms = ARENA_SEAL_ALGORITHMS;
	a->context = (uint64_t)file + 1;
	return 0;
}

static int schedule_destroy(struct fake_file *f,
			    const struct drm_arena_handle *a)
{
	int rc;
	struct fake_schedule *s = destroyed(f->schedules, a, &rc);
	if (!s)
		return rc;
	f->schedules[a->handle - 1] = NULL;
	schedule_free(s);
	return 0;
}

int fake_schedule_live(int file, uint32_t handle)
{
	return get(files[file].schedules, handle) != NULL;
}

const struct ac_ref *fake_schedule_refs(int file, uint32_t handle,
					uint64_t *n)
{
	const struct fake_schedule *s = get(files[file].schedules, handle);
	*n = s->n;
	return s->refs;
}

/* ---- entry points ---- */

void fake_reset(int strict_batches, int with_seals)
{
	for (int i = 0; i < FAKE_FILES; i++) {
		for (int h = 0; h < FAKE_HANDLES; h++)
			schedule_free(files[i].schedules[h]);
		for (int h = 0; h < FAKE_HANDLES; h++)
			program_free(files[i].programs[h]);
	}
	memset(files, 0, sizeof(files));
	strict = strict_batches;
	seals = with_seals;
}

int fake_file_of(int fd)
{
	switch (fd) {
	case FAKE_FD_DEV0:
	case FAKE_FD_DEV0_DUP:
		return 0;
	case FAKE_FD_DEV1:
		return 1;
	default:
		return -1;
	}
}

/* ---- the guarded requests by ioctl, one function each ---- */

static int ioctl_program_create(int file, void *arg)
{
	return program_create(&files[file], arg);
}

static int ioctl_program_destroy(int file, void *arg)
{
	return program_destroy(&files[file], arg);
}

static int ioctl_schedule_create(int file, void *arg)
{
	return schedule_create(&files[file], arg);
}

static int ioctl_schedule_append(int file, void *arg)
{
	return schedule_append(&files[file], arg);
}

static int ioctl_schedule_submit(int file, void *arg)
{
	struct drm_arena_schedule_submit *s = arg;
	int rc = schedule_submit_plain(file, s->schedule, s->flags, 0);
	if (rc == 0)
		s->seqno = 1;
	return rc;
}

static int ioctl_schedule_destroy(int file, void *arg)
{
	return schedule_destroy(&files[file], arg);
}

static int ioctl_seal(int file, void *arg)
{
	return seal_file(file, arg);
}

static int ioctl_schedule_submit_sealed(int file, void *arg)
{
	struct drm_arena_schedule_submit_sealed *s = arg;
	int rc = schedule_submit_sealed(file, s->schedule, s->flags, 0,
					s->algorithm, s->pad, s->seal);
	if (rc == 0)
		s->seqno = 1;
	return rc;
}

/* The guarded requests of contract/requests.inc, dispatched to the
 * functions above. */
static int dispatch(int file, unsigned int cmd, void *arg)
{
	switch (cmd) {
#define ARENA_REQUEST(name, NAME, type, uop, usize, guarded)		\
	ARENA_GUARDED_##guarded(case DRM_IOCTL_ARENA_##NAME:		\
				return ioctl_##name(file, arg);)
#include "../contract/requests.inc"
	default:
		/* The guard forwards with the canonical number. */
		FUZZ_CHECK(0, "the driver got request 0x%x", cmd);
		return -EINVAL;
	}
}

int fake_ioctl(int fd, unsigned int cmd, void *arg)
{
	int file = fake_file_of(fd);
	FUZZ_CHECK(file >= 0, "the driver got fd %d", fd);
	fake_watch.calls++;
	fake_watch.last_rc = dispatch(file, cmd, arg);
	return fake_watch.last_rc;
}

/* ---- the requests by URING_CMD, one function each ---- */

/* Each reads its command's struct from sqe->cmd, whose bytes after it
 * arena_uring_cmd_arg (contract/requests.h) found zero. */
static int uring_schedule_append(int file, const uint8_t *cmd)
{
	struct drm_arena_schedule_append a;
	memcpy(&a, cmd, sizeof(a));
	return schedule_append(&files[file], &a);
}

static int uring_schedule_submit(int file, const uint8_t *cmd)
{
	struct arena_uring_submit s;
	memcpy(&s, cmd, sizeof(s));
	return schedule_submit_plain(file, s.schedule, s.flags, s.seqno);
}

static int uring_schedule_submit_sealed(int file, const uint8_t *cmd)
{
	struct arena_uring_submit_sealed s;
	memcpy(&s, cmd, sizeof(s));
	return schedule_submit_sealed(file, s.schedule, s.flags, s.seqno,
				      s.algorithm, s.pad, s.seal);
}

/* The commands of contract/requests.inc, indexed by op. */
static int (*const cmds[])(int file, const uint8_t *cmd) = {
#define ARENA_URING_REQUEST(uop, name, ...) [uop] = uring_##name,
#include "../contract/requests.inc"
};

int fake_uring_cmd(int file, int sqe128, const struct io_uring_sqe *sqe)
{
	if (!sqe128 || sqe->__pad1 || sqe->uring_cmd_flags)
		return -EINVAL;
	int rc = arena_uring_cmd_arg(sqe->cmd_op, sqe->cmd);
	if (rc < 0)
		return rc;
	if (sqe->cmd_op >= sizeof(cmds) / sizeof(cmds[0]) || !cmds[sqe->cmd_op])
		return -ENOTTY;
	return cmds[sqe->cmd_op](file, sqe->cmd);
}
