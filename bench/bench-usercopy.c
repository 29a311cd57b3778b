/* SPDX-License-Identifier: MIT */
/*
 * bench-usercopy: what a copy of application memory costs where it takes
 * the pipe (common/usercopy.c; docs/performance.md, "Copies through a
 * pipe"), transactions off: an EFAULT (a PROT_NONE page, which
 * process_vm_readv refuses and the pipe confirms), a read of a
 * PROT_WRITE-only page (refused by process_vm_readv, read by the pipe),
 * and, under a seccomp filter that denies process_vm_readv/writev
 * (EPERM), a heap read of 256 bytes and of 1 MiB, every one through the
 * pipe.  Each line: the median over ROUNDS rounds of N copies, in µs a
 * copy.
 *
 *   bench-usercopy [N [ROUNDS]]      (defaults 2000 and 5)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#include "usercopy.h"

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* process_vm_readv/writev answer EPERM from now on. */
static void deny_process_vm(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 1,
			 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("bench-usercopy: seccomp");
		exit(1);
	}
}

/* The median µs a copy of len bytes from src, which must give want. */
static double measure(const char *name, const void *src, size_t len,
		      int want, int n, int rounds)
{
	char *buf = malloc(len);
	double us[64];
	for (int r = 0; r < rounds; r++) {
		double t = now_ns();
		for (int i = 0; i < n; i++)
			if (copy_from_user(buf, (uintptr_t)src, len) != want) {
				fprintf(stderr, "bench-usercopy: %s: not %d\n",
					name, want);
				exit(1);
			}
		us[r] = (now_ns() - t) / n / 1e3;
	}
	free(buf);
	qsort(us, (size_t)rounds, sizeof(us[0]), by_value);
	printf("%-36s %10.2f us/copy (rounds %.2f to %.2f)\n", name,
	       us[rounds / 2], us[0], us[rounds - 1]);
	return us[rounds / 2];
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	if (n < 1 || rounds < 1 || rounds > 64) {
		fprintf(stderr, "usage: bench-usercopy [N [ROUNDS (1..64)]]\n");
		return 2;
	}
	usercopy_set_transactions(0);
	size_t page = 4096, big = 1 << 20;
	char *none = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	char *wonly = mmap(NULL, page, PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *heap = malloc(big);
	if (none == MAP_FAILED || wonly == MAP_FAILED || !heap)
		return 1;
	memset(heap, 1, big);
	wonly[0] = 1;
	measure("EFAULT, 256 B on a PROT_NONE page", none, 256, -EFAULT, n,
		rounds);
	measure("256 B of a PROT_WRITE-only page", wonly, 256, 0, n, rounds);
	measure("heap 256 B, process_vm_* allowed", heap, 256, 0, n, rounds);
	deny_process_vm();
	measure("heap 256 B, process_vm_* denied", heap, 256, 0, n, rounds);
	measure("heap 1 MiB, process_vm_* denied", heap, big, 0,
		n / 100 > 0 ? n / 100 : 1, rounds);
	return 0;
}
