// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Executing a schedule: the contract's walk (contract/execute.c: the
 * references in order, repeat bodies all their iterations, each launch
 * with its words at its ordinal, V(t)), each launch run here; a value
 * outside [0, 2^64) faults the submission as an address outside every
 * buffer does.
 *
 * The kernels (contract/kernels.c, built with the FPU flags as
 * arena_kernels.c) run between kernel_fpu_begin() and kernel_fpu_end(),
 * one launch at a time, and pause between rows of a launch's work
 * (leaving the FPU section and rescheduling), so no FPU section is long.
 * Between launches the task may be rescheduled, and a fatal signal stops
 * the execution (reported as a fault): a schedule of 2^62 launches does
 * not keep a killed process alive.
 *
 * A context opened with the poison parameter set poisons as the
 * contract's walk says (contract/execute.h: each phase instance's fresh
 * planes, before its first launch), outside any FPU section, through
 * arena_bo_fill (bounded by the buffers' bytes, rescheduling between
 * chunks, stopped by a fatal signal).
 */
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <asm/fpu/api.h>

#include "arena_drv.h"
#include "../contract/execute.h"
#include "../contract/kernels.h"

struct arena_exec {
	struct arena_device_mem mem;
	struct arena_walker walker;
	struct arena_file *af;
};

static u8 *exec_range(struct arena_device_mem *mem, u64 address, u64 len)
{
	struct arena_exec *x = container_of(mem, struct arena_exec, mem);

	return arena_bo_range(x->af, address, len);
}

static void exec_pause(struct arena_device_mem *mem)
{
	if (!need_resched())
		return;
	kernel_fpu_end();
	cond_resched();
	kernel_fpu_begin();
}

/* The contract's poison (execute.h), when the context poisons. */
static int exec_poison(struct arena_walker *w, u64 address, u64 size)
{
	struct arena_exec *x = container_of(w, struct arena_exec, walker);

	/* a phase may have 2^32 - 1 planes, none in a buffer */
	if (fatal_signal_pending(current))
		return -EINTR;
	cond_resched();
	return arena_bo_fill(x->af, address, size, ARENA_POISON_BYTE);
}

static int exec_launch(struct arena_walker *w, u64 l, const u64 *words, u32 n)
{
	struct arena_exec *x = container_of(w, struct arena_exec, walker);
	int rc;

	if (fatal_signal_pending(current))
		return -EINTR;
	kernel_fpu_begin();
	rc = arena_kernel_run(&x->mem, words, n);
	kernel_fpu_end();
	cond_resched();
	return rc;
}

/**
 * arena_execute() - run references of a program on the context's memory
 * @af: the context (locked)
 * @prog: the program
 * @refs: references, checked when appended
 * @n_refs: how many
 *
 * Return: 0, or -EFAULT (or -EINTR on a fatal signal): a launch faulted
 * and execution stopped there.
 */
int arena_execute(struct arena_file *af, struct arena_prog *prog,
		  const struct drm_arena_ref *refs, u64 n_refs)
{
	struct arena_exec x = {
		.mem = { .range = exec_range, .pause = exec_pause },
		.walker = { .launch = exec_launch,
			    .poison = af->poison ? exec_poison : NULL,
			    .scratch = prog->scratch },
		.af = af,
	};

	BUILD_BUG_ON(sizeof(struct arena_ref) != sizeof(struct drm_arena_ref));
	return arena_walk(&prog->index, (const struct arena_ref *)refs, n_refs,
			  &x.walker);
}
