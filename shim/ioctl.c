/* SPDX-License-Identifier: MIT */
/*
 * The ioctl front end, shaped like drm_ioctl(): the guarded requests are
 * recognised by their DRM number (as the kernel dispatches them, so a
 * request encoded with another size cannot slip past), the argument is
 * copied in once (as many bytes as the request says go in, zero
 * extended to the size its handler reads), handled by the request's one
 * handler (request.c), and copied back out (as many bytes as the
 * request says come out), the handler having put the application's own
 * pointers back first.  A bad pointer anywhere gets EFAULT, as from the
 * driver, never a signal.  Forwarding is a call of the driver, whose
 * answer the handler sees.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "driver.h"
#include "ioctl.h"
#include "mirror.h"
#include "report.h"
#include "request.h"
#include "submit.h"
#include "usercopy.h"

/* Set by interpose.c to the next ioctl; by tests to a fake driver. */
int (*ag_driver_ioctl)(int fd, unsigned int cmd, void *arg);

#define IN (_IOC_WRITE << _IOC_DIRSHIFT)
#define OUT (_IOC_READ << _IOC_DIRSHIFT)

static int forward(struct ag_call *c, struct ag_sched *s, unsigned int cmd,
		   void *arg)
{
	(void)s;
	return ag_driver_ioctl(c->fd, cmd, arg);
}

/* The schedule's lock is held across the forward: nothing to wait for
 * but io_uring submits between their check and the kernel. */
static int wait_holds(struct ag_call *c, struct ag_sched *s)
{
	(void)c;
	ag_sched_wait_holds(s, 0);
	return 0;
}

static const struct ag_front ioctl_front = {
	.path = AG_PATH_IOCTL,
	.deferred = 0,
	.forward = forward,
	.wait_holds = wait_holds,
	.keep = NULL,
};

int ag_ioctl(struct ag_file *f, int fd, unsigned int cmd, uint64_t arg)
{
	const struct ag_request *req = ag_request_by_nr(_IOC_NR(cmd));
	if (!req)
		return -ENOTTY;
	size_t in = cmd & IN ? _IOC_SIZE(cmd) : 0;
	size_t out = cmd & OUT ? _IOC_SIZE(cmd) : 0;
	size_t ksize = req->size;
	if (in > ksize)
		ksize = in;
	if (out > ksize)
		ksize = out;

	uint64_t stack[16];
	void *k = ksize <= sizeof(stack) ? (void *)stack : malloc(ksize);
	if (!k)
		return ag_no_memory("a request with a large argument");
	int rc = copy_from_user(k, arg, in);
	if (rc == 0) {
		memset((char *)k + in, 0, ksize - in);
		struct ag_call c = { &ioctl_front, f, fd, NULL };
		rc = req->handle(&c, k);
		if (copy_to_user(arg, k, out) != 0)
			rc = -EFAULT;
	}
	if (k != stack)
		free(k);
	return rc;
}
