/* SPDX-License-Identifier: MIT */
/*
 * Writing without waiting or signalling (quiet_write.c): the only way
 * the guard writes a byte.  A write returns 0 or -errno, never waits and never
 * lets a signal reach the application; the caller holds out_lock
 * (ag_output_lock, outputs.h), which blocks its thread's signals.
 */
#ifndef ARENAGUARD_SHIM_QUIET_WRITE_H
#define ARENAGUARD_SHIM_QUIET_WRITE_H

#include <stddef.h>
#include <sys/types.h>

/* The file type of fd (S_IFIFO, S_IFSOCK, ...), or 0 when fstat fails. */
mode_t ag_fd_file_type(int fd);

/* Writes data[0, len) to fd, all of it or up to the first failure: 0 or
 * -errno (-EAGAIN: it would have waited); *written (when not NULL):
 * the bytes that went.  The SIGPIPE or SIGXFSZ the write raised is
 * consumed; one the application had pending is kept. */
int ag_write_quietly(int fd, const void *data, size_t len, size_t *written);

/* The bytes fd (of kind, ag_fd_file_type) can take now without waiting, by
 * estimate, for a record longer than PIPE_BUF; SIZE_MAX where the guard
 * cannot tell or need not (a terminal, a regular file, a datagram
 * socket). */
size_t ag_write_room(int fd, mode_t kind);

#endif
