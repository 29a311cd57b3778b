/* SPDX-License-Identifier: MIT */
/*
 * The SHA-256 seal ABI, ahead of uapi.h.
 *
 * MOVES TO uapi.h WITH THE SEAL BRANCH: these are the lead's definitions
 * for the seal (SHA-256 instead of XXH64).  Until the `seal` branch's
 * uapi.h is merged, this header includes uapi.h with its XXH64 seal
 * structs renamed out of the way and defines the SHA-256 ones under the
 * real names; the ioctl numbers (DRM_IOCTL_ARENA_SEAL, ..._SUBMIT_SEALED)
 * expand to the sizes of these.  After the merge, this file is deleted
 * and its includers include uapi.h.
 */
#ifndef ARENA_SEAL_ABI_H
#define ARENA_SEAL_ABI_H

#define drm_arena_seal arena_xxh64_seal_superseded
#define drm_arena_schedule_submit_sealed arena_xxh64_submit_sealed_superseded
#define arena_uring_submit_sealed arena_xxh64_uring_sealed_superseded
#include <arenaguard/uapi.h>
#undef drm_arena_seal
#undef drm_arena_schedule_submit_sealed
#undef arena_uring_submit_sealed

#define ARENA_SEAL_SHA256 1
#define ARENA_SEAL_BYTES 32

struct drm_arena_seal {
	__u32 flags;          /* must be 0 */
	__u32 algorithms;     /* out: 1u << ARENA_SEAL_SHA256 */
	__u64 context;        /* out */
};

struct drm_arena_schedule_submit_sealed {
	__u32 schedule;
	__u32 flags;          /* must be 0 */
	__u64 seqno;          /* out */
	__u32 algorithm;      /* not offered: EINVAL */
	__u32 pad;
	__u8 seal[ARENA_SEAL_BYTES];
};

struct arena_uring_submit_sealed {
	__u32 schedule;
	__u32 flags;
	__u64 seqno;          /* user pointer to a __u64, or 0 */
	__u32 algorithm;
	__u32 pad;
	__u8 seal[ARENA_SEAL_BYTES];
};

/* seal = SHA-256(le64(size) || image || ref_0 || ref_1 ...), each ref
 * le64 first || le64 count; per program a state after the image, per
 * schedule a state fed as batches are accepted.
 */

#endif
