/* SPDX-License-Identifier: MIT */
/*
 * process_vm_readv/writev on our own pid: the kernel checks every page
 * and reports EFAULT for unmapped or protected ones, so no signal handler
 * (which would not be thread- or library-safe) is needed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>

#include "usercopy.h"

/* One direction: a short transfer means a bad page further on; retrying
 * from there either makes progress or fails on that page. */
static int copy_user(void *local, uint64_t remote, size_t len, int write)
{
	while (len > 0) {
		struct iovec l = { local, len };
		struct iovec r = { (void *)(uintptr_t)remote, len };
		ssize_t n = write ? process_vm_writev(getpid(), &l, 1, &r, 1, 0)
				  : process_vm_readv(getpid(), &l, 1, &r, 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EFAULT;
		local = (char *)local + n;
		remote += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int copy_from_user(void *dst, uint64_t src, size_t len)
{
	if (src + len < src)
		return -EFAULT;
	return copy_user(dst, src, len, 0);
}

int copy_to_user(uint64_t dst, const void *src, size_t len)
{
	if (dst + len < dst)
		return -EFAULT;
	return copy_user((void *)src, dst, len, 1);
}
