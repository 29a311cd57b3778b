/* SPDX-License-Identifier: MIT */
/* libguard-atfork.so (atfork_lib.c): fork handlers that submit. */
#ifndef GUARD_TESTS_ATFORK_LIB_H
#define GUARD_TESTS_ATFORK_LIB_H

#include <stdint.h>

/* Each handler's submit: 0 or -errno; 1 before it has run. */
struct atfork_results {
	int prepare_certified, prepare_failing, parent, child;
	int prepared;                  /* prepare handlers run */
};
extern struct atfork_results atfork_results;

/* From now on, the handlers submit these schedules on fd. */
void atfork_lib_arm(int fd, uint32_t certified_schedule,
		    uint32_t failing_schedule);

#endif
