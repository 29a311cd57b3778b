/* SPDX-License-Identifier: MIT */
/* A small blocking HTTP/1.1 client (client.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "client.h"

#define HEAD_MAX 8192

void http_client_init(struct http_client *c, int port)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->port = port;
}

void http_client_close(struct http_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	c->cap = c->len = 0;
}

int http_connect(struct http_client *c)
{
	assert(c->fd < 0 && c->timeout_ms >= 0);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)c->port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in from = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(c->source) };
	struct timeval tv = { .tv_sec = c->timeout_ms / 1000,
			      .tv_usec = c->timeout_ms % 1000 * 1000 };
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if ((c->source && bind(fd, (struct sockaddr *)&from,
			       sizeof(from)) != 0) ||
	    (c->timeout_ms &&
	     (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0)) ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	c->fd = fd;
	return 0;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Reads until the head is complete; *got bytes in head, *end after the
 * blank line.  0, or -1 (closed before any byte: errno ECONNRESET). */
static int read_head(int fd, char *head, size_t *got, size_t *end)
{
	*got = 0;
	for (;;) {
		ssize_t k = recv(fd, head + *got, HEAD_MAX - 1 - *got, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return -1;   /* the client's timeout */
		if (k <= 0) {
			errno = *got ? EPROTO : ECONNRESET;
			return -1;
		}
		*got += (size_t)k;
		head[*got] = 0;
		char *blank = strstr(head, "\r\n\r\n");
		if (blank) {
			*end = (size_t)(blank - head) + 4;
			return 0;
		}
		if (*got == HEAD_MAX - 1) {
			errno = EPROTO;
			return -1;
		}
	}
}

/* The value of a header in head[0, end), or NULL. */
static const char *header(const char *head, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = strstr(head, "\r\n"); p; p = strstr(p + 2, "\r\n"))
		if (strncasecmp(p + 2, name, n) == 0 && p[2 + n] == ':')
			return p + 3 + n;
	return NULL;
}

static int read_response(struct http_client *c)
{
	char head[HEAD_MAX];
	size_t got, end;
	if (read_head(c->fd, head, &got, &end) != 0)
		return -1;
	if (sscanf(head, "HTTP/1.%*d %d", &c->status) != 1) {
		errno = EPROTO;
		return -1;
	}
	const char *cl = header(head, "Content-Length");
	if (!cl) {
		errno = EPROTO;
		return -1;
	}
	size_t length = strtoul(cl, NULL, 10);
	const char *conn = header(head, "Connection");
	int closing = conn && strncasecmp(conn + strspn(conn, " "), "close",
					  5) == 0;
	if (length + 1 > c->cap) {
		char *b = realloc(c->buf, length + 1);
		if (!b) {
			errno = ENOMEM;
			return -1;
		}
		c->buf = b;
		c->cap = length + 1;
	}
	size_t have = got - end < length ? got - end : length;
	memcpy(c->buf, head + end, have);
	while (have < length) {
		ssize_t k = recv(c->fd, c->buf + have, length - have, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			errno = EPROTO;
			return -1;
		}
		have += (size_t)k;
	}
	c->buf[length] = 0;
	c->len = length;
	if (closing) {
		close(c->fd);
		c->fd = -1;
	}
	return 0;
}

int http_call(struct http_client *c, const char *method, const char *path,
	      const char *body)
{
	size_t blen = body ? strlen(body) : 0;
	char head[512];
	int n = snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\n"
			 "Host: 127.0.0.1:%d\r\n"
			 "Content-Type: application/json\r\n"
			 "Content-Length: %zu\r\n\r\n", method, path, c->port,
			 blen);
	if (n < 0 || (size_t)n >= sizeof(head)) {
		errno = EINVAL;
		return -1;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		int fresh = c->fd < 0;
		if (fresh && http_connect(c) != 0)
			return -1;
		if (send_all(c->fd, head, (size_t)n) == 0 &&
		    send_all(c->fd, body ? body : "", blen) == 0 &&
		    read_response(c) == 0)
			return 0;
		int err = errno;
		close(c->fd);
		c->fd = -1;
		/* An idle connection the server closed: once more. */
		if (fresh || (err != ECONNRESET && err != EPIPE)) {
			errno = err;
			return -1;
		}
	}
	return -1;
}

int http_server_port(int fd, char *line, size_t size)
{
	assert(size > 0);
	size_t len = 0;
	ssize_t k;
	while (len < size - 1 &&
	       ((k = read(fd, line + len, 1)) == 1 || (k < 0 && errno == EINTR)))
		if (k == 1 && line[len++] == '\n')
			break;
	line[len] = 0;
	int port;
	if (sscanf(line, "arena-serve: listening on http://127.0.0.1:%d",
		   &port) != 1 || port < 0)
		return -1;
	return port;
}
