// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Schedules, submissions, sequence numbers, the seal.
 *
 * A batch of references is copied from user memory, checked whole by the
 * contract (arena_ref_check: spec 1.3 and the executed-sequence limit)
 * and only then appended and fed to the schedule's seal state: a batch
 * is atomic.  A submission executes the whole schedule synchronously
 * (arena_exec.c); every refusal comes before a sequence number is
 * consumed.  Seals are SHA-256 (uapi.h, "Sealed submissions"): a sealed
 * submit costs one sha256_final of a copy of the schedule's state.
 */
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <crypto/algapi.h>
#include <asm/byteorder.h>

#include "arena_drv.h"
#include "../contract/requests.h"

/* uapi.h's seal ABI, whose sizes the ioctl numbers also encode */
static_assert(sizeof(struct drm_arena_seal) == 16);
static_assert(sizeof(struct drm_arena_schedule_submit_sealed) == 56);
static_assert(sizeof(struct arena_uring_submit_sealed) == 56);
static_assert(ARENA_SEAL_SHA256 == 1 && ARENA_SEAL_BYTES == 32);

int arena_schedule_create(struct arena_file *af,
			  struct drm_arena_schedule_create *arg)
{
	struct arena_prog *prog = xa_load(&af->programs, arg->program);
	struct arena_schedule *s;
	u32 handle;
	int rc;

	if (!prog)
		return -ENOENT;
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return -ENOMEM;
	s->prog = prog;
	s->seal = prog->seal;
	rc = xa_alloc(&af->schedules, &handle, s, xa_limit_32b,
		      GFP_KERNEL_ACCOUNT);
	if (rc) {
		kfree(s);
		return -ENOMEM;
	}
	prog->schedules++;
	arg->handle = handle;
	return 0;
}

static int reserve_refs(struct arena_schedule *s, u64 more)
{
	struct drm_arena_ref *grown;
	u64 cap = s->cap_refs ? s->cap_refs : 16;

	if (s->n_refs + more <= s->cap_refs)
		return 0;
	while (cap < s->n_refs + more)
		cap *= 2;
	if (cap > INT_MAX / sizeof(*grown))
		return -ENOMEM;
	grown = kvrealloc(s->refs, cap * sizeof(*grown), ARENA_GFP);
	if (!grown)
		return -ENOMEM;
	s->refs = grown;
	s->cap_refs = cap;
	return 0;
}

/* References as the seal hashes them: le64(first) || le64(count). */
static void seal_refs(struct sha256_state *seal,
		      const struct drm_arena_ref *refs, u32 count)
{
	for (u32 i = 0; i < count; i++) {
		__le64 le[2] = { cpu_to_le64(refs[i].first),
				 cpu_to_le64(refs[i].count) };

		sha256_update(seal, (const u8 *)le, sizeof(le));
	}
}

int arena_schedule_append(struct arena_file *af,
			  const struct drm_arena_schedule_append *arg)
{
	struct arena_schedule *s = xa_load(&af->schedules, arg->schedule);
	struct drm_arena_ref *refs;
	u64 executed;
	int rc = 0;

	if (!s)
		return -ENOENT;
	if (arg->count == 0)
		return 0;
	if (!arena_append_count_ok(arg->count))
		return -EINVAL;
	refs = kvmalloc_array(arg->count, sizeof(*refs), ARENA_GFP);
	if (!refs)
		return -ENOMEM;
	if (copy_from_user(refs, u64_to_user_ptr(arg->refs),
			   arg->count * sizeof(*refs)))
		rc = -EFAULT;
	executed = s->executed;
	for (u32 i = 0; i < arg->count && !rc; i++)
		rc = arena_ref_check(&s->prog->index, refs[i].first,
				     refs[i].count, &executed);
	if (!rc)
		rc = reserve_refs(s, arg->count);
	if (!rc) {
		memcpy(&s->refs[s->n_refs], refs, arg->count * sizeof(*refs));
		s->n_refs += arg->count;
		s->executed = executed;
		seal_refs(&s->seal, refs, arg->count);
	}
	kvfree(refs);
	return rc;
}

/* Whether check's seal is the digest of what the driver holds for s. */
static bool seal_matches(const struct arena_schedule *s,
			 const struct arena_seal_check *check)
{
	struct sha256_state state = s->seal;
	u8 digest[SHA256_DIGEST_SIZE];
	bool same;

	BUILD_BUG_ON(SHA256_DIGEST_SIZE != ARENA_SEAL_BYTES);
	sha256_final(&state, digest);
	same = !crypto_memneq(digest, check->seal, sizeof(digest));
	memzero_explicit(&state, sizeof(state));
	return same;
}

/**
 * arena_schedule_submit() - run a schedule
 * @af: the context (locked)
 * @schedule: its handle
 * @flags: must be 0
 * @check: the seal the submission carries, if any
 * @seqno: out: the submission's sequence number
 * @seqno_user: NULL, or where to store the number first (io_uring)
 *
 * Every refusal (EINVAL, ENOKEY, ENOENT, EKEYREJECTED, EFAULT) comes
 * before a number is consumed; a launch that faults is reported by
 * arena_wait() (EIO), not here.
 *
 * Return: 0 or -errno.
 */
int arena_schedule_submit(struct arena_file *af, u32 schedule, u32 flags,
			  const struct arena_seal_check *check, u64 *seqno,
			  u64 __user *seqno_user)
{
	struct arena_schedule *s;
	u64 next;
	int rc;

	rc = arena_submit_check(flags, check->sealed, check->algorithm,
				check->pad, af->sealed);
	if (rc)
		return rc;
	s = xa_load(&af->schedules, schedule);
	if (!s)
		return -ENOENT;
	if (check->sealed && !seal_matches(s, check))
		return -EKEYREJECTED;
	rc = xa_reserve(&af->faulted, af->last_seqno + 1, GFP_KERNEL);
	if (rc)
		return rc;
	next = af->last_seqno + 1;
	if (seqno_user && put_user(next, seqno_user)) {
		xa_release(&af->faulted, next);
		return -EFAULT;
	}
	af->last_seqno = next;
	*seqno = next;
	if (arena_execute(af, s->prog, s->refs, s->n_refs))
		xa_store(&af->faulted, next, xa_mk_value(1), GFP_KERNEL);
	else
		xa_release(&af->faulted, next);
	return 0;
}

int arena_seal(struct arena_file *af, struct drm_arena_seal *arg)
{
	if (arg->flags)
		return -EINVAL;
	af->sealed = true;
	arg->algorithms = ARENA_SEAL_ALGORITHMS;
	arg->context = af->context;
	return 0;
}

int arena_wait(struct arena_file *af, const struct drm_arena_wait *arg)
{
	if (!arena_wait_seqno_ok(arg->seqno, af->last_seqno))
		return -EINVAL;
	return xa_load(&af->faulted, arg->seqno) ? -EIO : 0;
}

static void schedule_free(struct arena_schedule *s)
{
	s->prog->schedules--;
	kvfree(s->refs);
	kfree(s);
}

int arena_schedule_destroy(struct arena_file *af,
			   const struct drm_arena_handle *arg)
{
	struct arena_schedule *s;

	if (arg->pad)
		return -EINVAL;
	s = xa_erase(&af->schedules, arg->handle);
	if (!s)
		return -ENOENT;
	schedule_free(s);
	return 0;
}

/**
 * arena_schedule_drop() - free a schedule already erased from its table
 * @af: the context (locked)
 * @obj: the struct arena_schedule
 */
void arena_schedule_drop(struct arena_file *af, void *obj)
{
	schedule_free(obj);
}
