/* SPDX-License-Identifier: MIT */
/*
 * Random honest-kernel programs for the soundness test (test_soundness.c).
 *
 * A program is planned as a workspace planner would plan it: phases
 * ph0, ph1, ... in table order, each declaring fresh planes (values it
 * produces) and carried planes (values an earlier phase produced), values
 * placed so that two whose natural lifetimes meet get disjoint bytes and
 * the others may share them (workspace reuse, so planes of different
 * phases overlap often).  Its launches are real kernels of uapi.h and are
 * honest: every address word points into a global or a plane of the
 * launch's own phase, and the kernel's whole range [address, address +
 * 4 * count) stays inside that tensor at every iteration.  Within a
 * phase, a launch reads a fresh plane only after an earlier launch of the
 * phase wrote into it (all of it, often), and unread carried planes are
 * read first, so that what an earlier phase left reaches the output.
 *
 * Some programs are then pushed towards rejection: a value born while an
 * older one is still needed (a later phase carries it) placed over the
 * older one ((D) under the natural schedule), one word pointing at another
 * phase's plane ((C): a stale pointer, still inside that plane), and
 * schedules that run phases out of order, repeat or skip them ((D) or
 * nothing).  Repeats walk their words with deltas (one or two per word,
 * up or down) and take some from tables of frames, whose values may lie
 * in several tensors: honest, but (C) takes a table's hull.
 *
 * Everything lies in one window [HONEST_BASE, HONEST_BASE + HONEST_SPAN):
 * the globals first, then the workspace.  No scalar word (a kernel
 * number, a count, f32 bits) can lie there, since HONEST_BASE >= 2^32.
 */
#ifndef SIM_TESTS_HONEST_H
#define SIM_TESTS_HONEST_H

#include <stdint.h>

#include <arenaguard/program.h>

#include "builder.h"

#define HONEST_BASE UINT64_C(0x300000000)
#define HONEST_SPAN UINT64_C(0x2000)

/* Program `index` of the stream `seed` (reproducible alone), with its
 * schedule, built with b (emptied first).  Free with ac_model_free(). */
struct ac_model *honest_program(struct pb *b, uint64_t seed, uint64_t index);

#endif
