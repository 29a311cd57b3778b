/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "checks.h"
#include "nokcmp.h"

void deny_kcmp(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_kcmp, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	int rc = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (rc == 0)
		rc = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
	check(rc == 0, "kcmp denied by a seccomp filter: %d", rc);
	errno = 0;
	long k = syscall(SYS_kcmp, getpid(), getpid(), 0, 0, 0);
	check(k < 0 && errno == EPERM, "kcmp answers EPERM: %ld", k);
}
