/* SPDX-License-Identifier: MIT */
/*
 * The test programs of guard-tests and guard-client: one small plan on
 * one window, and variants that the certificate passes or fails in ways
 * the simulated device makes visible.
 *
 *   window  [0x10000, 0x20000)           one buffer object
 *   global  out    [0x18000, 0x18100)
 *   P       fresh a    [0x10000, 0x10100)
 *   Q       carried a, fresh b [0x10100, 0x10200)
 *   R       fresh z    [0x10000, 0x10040)
 *
 *   launch 0 (P)  FILL a, 64 floats of 1.0
 *   launch 1 (Q)  COPY b <- a
 *   launch 2 (R)  FILL z, 16 floats of 2.0
 *   launch 3 (Q)  COPY out <- b
 *
 * The canary [0x10200, 0x10300) is named by nothing: only a program that
 * fails (C) writes it.
 */
#ifndef GUARD_TESTS_PROGS_H
#define GUARD_TESTS_PROGS_H

#include <stddef.h>
#include <stdint.h>

#include <arenaguard/program.h>

#define PROG_BASE 0x10000ull
#define PROG_SIZE 0x10000ull
#define PROG_A 0x10000ull
#define PROG_B 0x10100ull
#define PROG_CANARY 0x10200ull
#define PROG_OUT 0x18000ull
#define PROG_FLOATS 64

enum prog_kind {
	PROG_GOOD,       /* certified with the good schedules */
	PROG_BAD_C,      /* launch 0 fills the canary: verdict 2 */
	PROG_OUTSIDE,    /* the window ends at 0x18000, so global 'out'
			  * lies outside it: certified (the good schedule),
			  * with the advisory spec 6 gives it */
};

/* The device image (empty schedule section); free with free(). */
uint8_t *prog_image(enum prog_kind kind, size_t *len);

/* A program of `launches` launches of phase P, each filling a with the
 * float whose bits are `seed` (distinct seeds: distinct images), for the
 * caches' memory tests; any run of them is certified.  free() it. */
uint8_t *prog_image_wide(uint32_t launches, uint32_t seed, size_t *len);

/* Schedules: good {[0,2), [3,4)}: out = 1.0; bad_d {[0,1), [2,3), [1,2),
 * [3,4)}: R overwrites a before Q reads it, verdict 2 + 4 + 2 = 8, and
 * out[0..16) = 2.0 on the device. */
extern const struct ac_ref prog_good_refs[2];
extern const struct ac_ref prog_bad_d_refs[4];
#define PROG_BAD_D_VERDICT 8
#define PROG_BAD_C_VERDICT 2

/* The seal (common/seal.c) of a schedule of refs[0, n) of this kind's
 * image, computed as any code in a process can: what a driver with seals
 * runs whoever gives it (uapi.h "Sealed submissions"; ARENA_SEAL_BYTES,
 * asserted in progs_seal.c). */
void prog_seal(enum prog_kind kind, const struct ac_ref *refs, uint32_t n,
	       uint8_t seal[32]);

/* The verdict the library gives an image with these references in its
 * schedule section, or UINT64_MAX when it is malformed. */
uint64_t prog_verdict(const uint8_t *image, size_t len,
		      const struct ac_ref *refs, size_t n);

#endif
