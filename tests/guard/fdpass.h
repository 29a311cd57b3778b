/* SPDX-License-Identifier: MIT */
/*
 * Passing an open file between processes over a unix socket
 * (SCM_RIGHTS), for the clients that share the device's open file with
 * another process (guard-attack's scm, gate-share's scm).
 */
#ifndef GUARD_TESTS_FDPASS_H
#define GUARD_TESTS_FDPASS_H

/* Sends fd over the connected unix socket sock, with one byte: 0, or
 * -errno. */
int fd_send(int sock, int fd);
/* Receives one fd sent by fd_send on sock: the new fd (close-on-exec),
 * or -errno (-EPROTO: a message without one). */
int fd_recv(int sock);

#endif
