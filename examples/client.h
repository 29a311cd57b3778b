/* SPDX-License-Identifier: MIT */
/*
 * client.h - a small blocking HTTP/1.1 client for 127.0.0.1, one
 * keep-alive connection per struct (one thread at a time): arena-serve's
 * tests and load benchmark drive the server with it.
 */
#ifndef ARENA_EXAMPLE_CLIENT_H
#define ARENA_EXAMPLE_CLIENT_H

#include <stddef.h>

struct http_client {
	int fd;             /* -1: not connected */
	int port;
	char *buf;          /* the last response's body, NUL-terminated */
	size_t cap, len;
	int status;         /* the last response's status */
	/* Set after http_client_init, before the first call: */
	unsigned int source;  /* the local IPv4 address to connect from
				 (host order; 0: the kernel's choice) */
	int timeout_ms;       /* each send and receive, at most (0: none) */
};

void http_client_init(struct http_client *c, int port);

/*
 * Connects (from c->source, with c->timeout_ms) without sending: 0, or
 * -1 with errno.  http_call connects by itself; this is for a caller
 * that holds a connection open.
 */
int http_connect(struct http_client *c);

/*
 * Sends one request (body NULL: none) and reads the response into
 * c->status and c->buf/c->len.  Connects first when not connected, and
 * once more if the server closed an idle connection before answering.
 * 0, or -1 with errno (ECONNRESET, EPROTO for a response it cannot
 * read, ENOMEM, EAGAIN when c->timeout_ms passed).
 */
int http_call(struct http_client *c, const char *method, const char *path,
	      const char *body);

void http_client_close(struct http_client *c);

/*
 * The port arena-serve announces on its first line of standard output
 * ("arena-serve: listening on http://127.0.0.1:PORT"), read from fd one
 * byte at a time (nothing after the line is consumed) into line (size >
 * 0, NUL-terminated, for the caller's message).  -1 when the line is not
 * that (the server did not start).
 */
int http_server_port(int fd, char *line, size_t size);

#endif
