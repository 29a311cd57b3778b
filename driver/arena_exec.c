// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Executing a schedule: its references in order, each
 * launch of a reference in table order, a repeat body all its iterations
 * (ordinal 0 of the whole body, then 1, ...) before the launch after it
 * (spec 1.3); a body word at ordinal t has the value V(t) (the
 * contract's arena_words_at), and a value outside [0, 2^64) faults the
 * submission as an address outside every buffer does.
 *
 * The kernels (contract/kernels.c, built with the FPU flags as
 * arena_kernels.c) run between kernel_fpu_begin() and kernel_fpu_end(),
 * one launch at a time, and pause between rows of a launch's work
 * (leaving the FPU section and rescheduling), so no FPU section is long.
 * Between launches the task may be rescheduled, and a fatal signal stops
 * the execution (reported as a fault): a schedule of 2^62 launches does
 * not keep a killed process alive.
 */
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <asm/fpu/api.h>

#include "arena_drv.h"
#include "../contract/kernels.h"

struct arena_exec {
	struct arena_device_mem mem;
	struct arena_file *af;
	struct arena_prog *prog;
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

static int run_launch(struct arena_exec *x, const u64 *words, u32 n)
{
	int rc;

	if (fatal_signal_pending(current))
		return -EINTR;
	kernel_fpu_begin();
	rc = arena_kernel_run(&x->mem, words, n);
	kernel_fpu_end();
	cond_resched();
	return rc;
}

static int run_launch_at(struct arena_exec *x, u64 l, u64 t)
{
	struct arena_launch la;

	arena_image_launch(&x->prog->img, l, &la);
	if (arena_words_at(&x->prog->index, l, t, x->prog->scratch))
		return -EFAULT;
	return run_launch(x, x->prog->scratch, la.word_count);
}

static int run_ref(struct arena_exec *x, const struct drm_arena_ref *ref)
{
	const struct arena_program *p = &x->prog->index;
	u64 l = ref->first, end = ref->first + ref->count;
	int rc = 0;

	while (l < end && !rc) {
		struct arena_repeat rep;

		if (p->repeat_of[l] == ARENA_NONE32) {
			rc = run_launch_at(x, l, 0);
			l++;
			continue;
		}
		/* a checked reference cuts no body: one holding l starts at l */
		arena_image_repeat(&x->prog->img, p->repeat_of[l], &rep);
		for (u64 t = 0; t < rep.iterations && !rc; t++)
			for (u64 b = l; b < l + rep.count && !rc; b++)
				rc = run_launch_at(x, b, t);
		l += rep.count;
	}
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
		.af = af,
		.prog = prog,
	};
	int rc = 0;

	for (u64 i = 0; i < n_refs && !rc; i++)
		rc = run_ref(&x, &refs[i]);
	return rc;
}
