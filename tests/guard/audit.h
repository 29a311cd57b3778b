/* SPDX-License-Identifier: MIT */
/*
 * The audit's bug classes (shared/seeds/003_*) as small programs for the
 * simulated device: for each planner bug a plan-level certificate can
 * catch, the program as the audited planner planned it (buggy), the same
 * program planned right (the twin), and the twin with every workspace
 * value in bytes of its own (private: no reuse at all, so no reuse bug;
 * its output is the right output).  audit.c derives, by hand from the
 * spec, the verdict and diagnostic each buggy plan must get.
 *
 * Every program lives in one window [0x10000, 0x20000), which is the
 * buffer guard-client makes: workspace from 0x10000, globals from
 * 0x18000.  Its first phase, "load", fills the globals it reads; its
 * output is the global "out".  Its schedule is one reference over the
 * whole launch table.
 */
#ifndef GUARD_TESTS_AUDIT_H
#define GUARD_TESTS_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include <arenaguard/certify.h>

enum audit_plan {
	AUDIT_BUGGY,      /* as the audited planner placed and bound it */
	AUDIT_RIGHT,      /* the twin: the same program planned right */
	AUDIT_PRIVATE,    /* the twin without any reuse of bytes */
};

struct audit_prog {
	const char *name;         /* "repeat-yield", ...: the test case */
	/* Builds the program under a plan: a program image with its
	 * schedule; free with free(). */
	uint8_t *(*image)(enum audit_plan plan, size_t *len);
	/* The buggy plan's verdict and diagnostic, by hand: the fields its
	 * condition and reason define (struct ac_diag); the rest unused. */
	struct ac_diag expect;
};

extern const struct audit_prog audit_progs[];
extern const size_t audit_n_progs;

#endif
