/* SPDX-License-Identifier: MIT */
/*
 * Every symbol libarenasim.so exports, once (X-macro lists): interpose.c
 * and uring.c define these functions and declare and resolve the real
 * definition of each (real_<name>, next_<name>) from the lists, and the
 * version script that exports them and nothing else is generated from
 * this file (scripts/version_script.py, sim/meson.build).
 */
#ifndef ARENASIM_SYMBOLS_H
#define ARENASIM_SYMBOLS_H

#include "interposed.h"

/* libc's: interpose.c, real_<name>.  Every variant glibc 2.36 exports. */
#define SIM_LIBC_SYMBOLS(X) \
	X(open) X(open64) X(openat) X(openat64) \
	X(__open_2) X(__open64_2) X(__openat_2) X(__openat64_2) \
	PRELOAD_FD_SYMBOLS(X) X(fcntl) X(fcntl64) \
	X(stat) X(stat64) X(lstat) X(lstat64) \
	X(fstat) X(fstat64) X(fstatat) X(fstatat64) \
	X(__xstat) X(__xstat64) X(__lxstat) X(__lxstat64) \
	X(__fxstat) X(__fxstat64) X(__fxstatat) X(__fxstatat64) \
	X(statx) X(access) X(faccessat) \
	X(getxattr) X(lgetxattr) X(listxattr) X(llistxattr) \
	X(ioctl) X(mmap) X(mmap64)

/* init.c: pthread_atfork's registration, so that the device's fork
 * handlers come before those of anything that registers through it
 * (whose handlers may then submit: see init.c). */
#define SIM_OWN_SYMBOLS(X) X(__register_atfork)

/* liburing's: the preload core's list, defined by its wrappers
 * (preload/uring_wrappers.inc, included by uring.c), which call uring.c's hooks. */
#define SIM_URING_SYMBOLS(X) PRELOAD_URING_SYMBOLS(X)

#endif
