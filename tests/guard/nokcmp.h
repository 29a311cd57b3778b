/* SPDX-License-Identifier: MIT */
/*
 * A seccomp filter that denies kcmp(2) (EPERM) from now on, in this
 * process and its children, as Docker's default profile does without
 * CAP_SYS_PTRACE: the guard then matches fd copies by the context id
 * the seal gives (shim/attach.c) and tells a child sharing its memory
 * by its MADV_WIPEONFORK witness (shim/process.c).  Checked (checks.h).
 */
#ifndef GUARD_TESTS_NOKCMP_H
#define GUARD_TESTS_NOKCMP_H

void deny_kcmp(void);

#endif
