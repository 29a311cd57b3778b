/* SPDX-License-Identifier: MIT */
/*
 * Copying from and to application memory without trusting the pointer,
 * for code that plays the kernel's part inside the application's own
 * process (the simulated device, the guard).  A bad pointer gives -EFAULT,
 * as copy_from_user() does in a driver, instead of a SIGSEGV in the host.
 * Both work where a seccomp profile denies process_vm_readv/writev (a
 * pipe instead, made by a task of their own that shares the memory but
 * not the descriptor table; -EFAULT also when pipe2 is denied or kills
 * as well).  Up to a
 * page off the calling thread's stack, a CPU with hardware transactions
 * (x86 RTM) copies with no system call.
 * Async-signal-safe after a thread's first call.
 */
#ifndef ARENAGUARD_USERCOPY_H
#define ARENAGUARD_USERCOPY_H

#include <stddef.h>
#include <stdint.h>

/* 0, or -EFAULT when any byte of [src, src + len) cannot be read. */
int copy_from_user(void *dst, uint64_t src, size_t len);

/* 0, or -EFAULT when any byte of [dst, dst + len) cannot be written. */
int copy_to_user(uint64_t dst, const void *src, size_t len);

/* Whether copies of up to a page off the stack try a hardware
 * transaction first (the CPU has RTM, and the process's transactions
 * have not kept aborting): 1 or 0.  usercopy_set_transactions(0) turns
 * them off for the process, (1) back on where the CPU has them: for
 * the tests, which check both ways. */
int usercopy_transactions(void);
void usercopy_set_transactions(int on);

/* Fork handlers of a module that copies: prepare (last, after the
 * module's locks) waits for the pipes of copies in flight to be
 * recorded; parent reopens; the child's closes the pipes of copies
 * other threads had in flight, which it inherited and nothing else
 * would close.  Only pipes in the process's own descriptor table need
 * them: those of copies where no task of their own could be made. */
void usercopy_fork_prepare(void);
void usercopy_fork_parent(void);
void usercopy_forked(void);

#endif
