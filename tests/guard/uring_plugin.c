/* SPDX-License-Identifier: MIT */
/*
 * libguard-uring-plugin.so: a plugin linked against liburing, loaded by
 * dlopen with RTLD_LOCAL (as CPython loads an extension module), so
 * that its liburing is in no global scope (guard-dlopen-uring local).
 * Its calls of liburing's functions bind to the guard's wrappers, which
 * are first in the global scope.
 */
#define _GNU_SOURCE
#include <liburing.h>

/* A ring set up and torn down: 0, or liburing's -errno. */
int plugin_ring(void);

int plugin_ring(void)
{
	struct io_uring ring;
	int rc = io_uring_queue_init(4, &ring, 0);
	if (rc == 0)
		io_uring_queue_exit(&ring);
	return rc;
}
