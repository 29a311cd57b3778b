/* SPDX-License-Identifier: MIT */
/*
 * Dumps of failing programs (dump.c), for arena-certify.
 */
#ifndef ARENAGUARD_SHIM_DUMP_H
#define ARENAGUARD_SHIM_DUMP_H

#include <stddef.h>
#include <stdint.h>

struct ag_program;
struct ac_ref;

/* The dump file for a failing schedule in the dump directory, written
 * whole or not at all: 0 with its name in name[0, len) (len >= 64), or
 * -errno (-EBADF: no dump directory; -ENOMEM: the image could not be
 * composed).  verdict AC_NONE: the program is malformed.  Takes
 * out_lock (outputs.h): not called with it held. */
int ag_dump(const struct ag_program *p, const struct ac_ref *refs,
	    uint64_t n, uint64_t verdict, char *name, size_t len);

#endif
