/* SPDX-License-Identifier: MIT */
/*
 * A deliberately naive second checker of the device-arena certificate,
 * written from the wording of shared/spec/certificate.md alone and sharing
 * no code with certify/.  It unrolls everything (repeat iterations, the
 * executed sequence, the declaration history) so that each rule is a
 * direct transcription of the spec; the differential suite compares it
 * with the library on generated programs.
 */
#ifndef ARENAGUARD_TEST_NAIVE_H
#define ARENAGUARD_TEST_NAIVE_H

#include <stdint.h>

#include <arenaguard/program.h>

/* Return codes of naive_certify besides 0 (a verdict was stored). */
#define NAIVE_MALFORMED (-1)   /* spec section 1: the program is malformed */
#define NAIVE_TOO_BIG (-2)     /* well-formed, but too large to unroll */

/* Unrolling limits: beyond these the naive checker gives up (though a
 * (D) break within the first NAIVE_MAX_EXECUTED launches is still found). */
#define NAIVE_MAX_EXECUTED 500000u    /* launches of the executed sequence */
#define NAIVE_MAX_ORDINALS 2000000u   /* iterations enumerated for one word */

/* The verdict of spec section 3, or NAIVE_MALFORMED / NAIVE_TOO_BIG. */
int naive_certify(const struct ac_model *m, uint64_t *verdict);

/* What failed, for checking another checker's diagnostics. */
struct naive_detail {
	char condition;        /* 0 (certified), 'A', 'B', 'C' or 'D' */
	int64_t phase;         /* C: the launch's phase (-1: none);
				* D: the breaking instance's phase */
};
int naive_certify_detail(const struct ac_model *m, uint64_t *verdict,
			 struct naive_detail *detail);

/* 1 when every interval of word w of launch l is fine (0 when one is not,
 * or the launch has no phase; NAIVE_TOO_BIG).  Well-formed models only. */
int naive_word_fine(const struct ac_model *m, uint64_t l, uint64_t w);

/* The length of the executed sequence (spec 1.3); -1 when malformed. */
int naive_executed(const struct ac_model *m, uint64_t *executed);

/* The phase (an index into m->phases) of launch l per spec 1.2, or -1 when
 * the launch has no declared phase.  The model must be well-formed. */
int64_t naive_phase_of(const struct ac_model *m, uint64_t l);

#endif
