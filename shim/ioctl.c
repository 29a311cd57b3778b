/* SPDX-License-Identifier: MIT */
/*
 * The ioctl front end, shaped like drm_ioctl(): the guarded requests are
 * recognised by their DRM number (as the kernel dispatches them, so a
 * request encoded with another size cannot slip past), the argument is
 * copied in once (as many bytes as the request says go in, zero
 * extended to the size its handler reads), handled by the request's one
 * handler (request.c), and copied back out (as many bytes as the
 * request says come out), the handler having put the application's own
 * pointers back first: contract/drm_call.h, the simulator's too.  A bad pointer anywhere gets EFAULT, as from the
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
#include "../contract/drm_call.h"  /* the copy in, zero-extend, copy out */

/* Set by interpose.c to the next ioctl; by tests to a fake driver. */
int (*ag_driver_ioctl)(int fd, unsigned int cmd, void *arg);

int ag_driver_call(int fd, unsigned int cmd, void *arg)
{
	return ag_driver_ioctl(fd, cmd, arg);
}

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

/* One guarded ioctl, for arena_drm_call's callbacks. */
struct ioctl_call {
	const struct ag_request *req;
	struct ag_file *f;
	int fd;
};

/* The request's handler on the guard's copy k of the argument. */
static int handle(void *ctx, void *k)
{
	struct ioctl_call *i = ctx;
	struct ag_call c = { &ioctl_front, i->f, i->fd, NULL };
	return i->req->handle(&c, k);
}

/* No memory for a large argument's copy: said once, -ENOMEM. */
static int no_memory(void *ctx)
{
	(void)ctx;
	return ag_no_memory("a request with a large argument");
}

int ag_ioctl(struct ag_file *f, int fd, unsigned int cmd, uint64_t arg)
{
	const struct ag_request *req = ag_request_by_nr(_IOC_NR(cmd));
	if (!req)
		return -ENOTTY;
	struct ioctl_call i = { req, f, fd };
	return arena_drm_call(cmd, req->cmd, req->size, arg, handle,
			      no_memory, &i);
}
