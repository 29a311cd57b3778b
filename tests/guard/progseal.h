/* SPDX-License-Identifier: MIT */
/*
 * The seal (common/seal.c, uapi.h "Sealed submissions") of a test
 * program with references appended: what a process that computes seals
 * itself, leaving the guard out, gives the driver (guard-attack's
 * appseal, gate-share).
 */
#ifndef GUARD_TESTS_PROGSEAL_H
#define GUARD_TESTS_PROGSEAL_H

#include <stdint.h>

#include "progs.h"
#include "seal.h"

/* The seal of prog_image(kind) with refs[0, n) appended. */
struct arena_seal_value prog_seal(enum prog_kind kind,
				  const struct ac_ref *refs, uint32_t n);

#endif
