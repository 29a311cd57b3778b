/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "fdpass.h"

/* One byte of data with room for one fd of control data. */
struct fd_msg {
	char byte;
	struct iovec iov;
	struct msghdr m;
	/* Last: to clang, an array sized by CMSG_SPACE is variably sized. */
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
};

static void fd_msg_init(struct fd_msg *f)
{
	memset(f, 0, sizeof(*f));
	f->iov = (struct iovec){ &f->byte, 1 };
	f->m = (struct msghdr){ .msg_iov = &f->iov, .msg_iovlen = 1,
				.msg_control = f->u.buf,
				.msg_controllen = sizeof(f->u.buf) };
}

int fd_send(int sock, int fd)
{
	struct fd_msg f;
	fd_msg_init(&f);
	struct cmsghdr *c = CMSG_FIRSTHDR(&f.m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &f.m, 0) == 1 ? 0 : -errno;
}

int fd_recv(int sock)
{
	struct fd_msg f;
	fd_msg_init(&f);
	ssize_t n = recvmsg(sock, &f.m, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	struct cmsghdr *c = CMSG_FIRSTHDR(&f.m);
	if (n != 1 || !c || c->cmsg_level != SOL_SOCKET ||
	    c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
		return -EPROTO;
	int fd;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}
