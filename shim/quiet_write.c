/* SPDX-License-Identifier: MIT */
/*
 * Writing without waiting or signalling (quiet_write.h): every byte the
 * guard writes goes through ag_write_quietly (docs/guard.md, "Records
 * and where they go"), so that a full pipe, a closed reader or a file
 * size limit neither stops the application's thread nor signals it.
 * No state: the caller holds out_lock (outputs.h), which keeps its
 * thread's signals blocked.
 */
#define _GNU_SOURCE

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <linux/sockios.h>
#include <unistd.h>

#include "quiet_write.h"

/* Takes the pending sig if this thread's write raised it (err says so)
 * and it was not pending before: one the application had is kept. */
static void consume(int sig, int was_pending, int raised)
{
	if (was_pending || !raised)
		return;
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	struct timespec zero = { 0, 0 };
	while (sigtimedwait(&one, NULL, &zero) < 0 && errno == EINTR)
		;
}

/* One piece of a write that must not wait: 0, or -errno (-EAGAIN: it
 * would have waited).  A socket is sent to with MSG_DONTWAIT (and
 * MSG_NOSIGNAL); anything else but a regular file is polled with a zero
 * time-out first and given at most PIPE_BUF bytes, which a pipe with
 * room takes without waiting.  *done: the bytes written. */
static int write_piece(int fd, mode_t kind, const char *buf, size_t len,
		       size_t *done)
{
	ssize_t n;
	*done = 0;
	if (kind == S_IFSOCK) {
		n = send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	} else {
		if (kind != S_IFREG) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			int ready = poll(&p, 1, 0);
			if (ready < 0)
				return -errno;
			if (p.revents & POLLNVAL)
				return -EBADF;
			if (ready == 0)
				return -EAGAIN;
			if (len > PIPE_BUF)
				len = PIPE_BUF;
		}
		n = write(fd, buf, len);
	}
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ENOSPC;
	*done = (size_t)n;
	return 0;
}

/* The file type of fd (S_IFIFO, S_IFSOCK, ...), or 0. */
mode_t ag_fd_file_type(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? st.st_mode & S_IFMT : 0;
}

/*
 * Writes buf[0, len) to fd, all of it or up to the first failure: 0 or
 * -errno (-EAGAIN: it would have waited); *written (when not NULL):
 * the bytes that went.  Nothing waits (write_piece) and no signal
 * reaches the application: signals are blocked in this thread
 * (ag_output_lock: out_lock held), and the SIGPIPE or SIGXFSZ the write
 * raised is consumed.
 */
int ag_write_quietly(int fd, const void *data, size_t len,
		     size_t *written)
{
	const char *buf = data;
	sigset_t pending;
	sigpending(&pending);
	mode_t kind = ag_fd_file_type(fd);
	int err = 0;
	size_t total = 0;
	while (len > 0 && (err == 0 || err == -EINTR)) {
		size_t done;
		err = write_piece(fd, kind, buf, len, &done);
		buf += done;
		len -= done;
		total += done;
	}
	consume(SIGPIPE, sigismember(&pending, SIGPIPE), err == -EPIPE);
	consume(SIGXFSZ, sigismember(&pending, SIGXFSZ), err == -EFBIG);
	if (written)
		*written = total;
	return err;
}

/*
 * The bytes fd (of kind) can take now without waiting, by estimate, for
 * a record longer than PIPE_BUF (a shorter one needs none: a pipe takes
 * it whole or not at all, a datagram goes whole); SIZE_MAX where the
 * guard cannot tell (a terminal, a device) or need not (a regular
 * file, a datagram socket).  A pipe holds F_GETPIPE_SZ / page buffers,
 * a write of n bytes takes ceil(n / page) new ones, and what is queued
 * (FIONREAD) fills at least ceil(queued / page), one more for the
 * reader's half-read one.  A stream socket: half what its send buffer
 * has left (SO_SNDBUF less SIOCOUTQ), as the kernel counts overhead
 * per packet.  Only an estimate: another writer between it and the
 * write, or a pipe whose buffers hold little each, makes a write stop
 * mid-record; write_record ends that line.
 */
size_t ag_write_room(int fd, mode_t kind)
{
	int queued = 0;
	if (kind == S_IFIFO) {
		int size = fcntl(fd, F_GETPIPE_SZ);
		if (size < 0 || ioctl(fd, FIONREAD, &queued) != 0)
			return SIZE_MAX;
		size_t page = (size_t)getpagesize();
		size_t bufs = (size_t)size / page;
		size_t used = ((size_t)queued + page - 1) / page +
			      (queued > 0);
		return used < bufs ? (bufs - used) * page : 0;
	}
	if (kind == S_IFSOCK) {
		int type = 0, sndbuf = 0;
		socklen_t tl = sizeof(type), sl = sizeof(sndbuf);
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 ||
		    type != SOCK_STREAM ||
		    getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl) != 0 ||
		    ioctl(fd, SIOCOUTQ, &queued) != 0)
			return SIZE_MAX;
		return sndbuf > queued ? (size_t)(sndbuf - queued) / 2 : 0;
	}
	return SIZE_MAX;
}
