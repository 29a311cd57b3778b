/* SPDX-License-Identifier: MIT */
/*
 * A submission as the guard's records and decisions name it.
 */
#ifndef ARENAGUARD_SHIM_SUBMIT_H
#define ARENAGUARD_SHIM_SUBMIT_H

#include <stdint.h>

enum ag_path { AG_PATH_IOCTL, AG_PATH_URING };

struct ag_submit {
	int fd;
	uint32_t schedule;
	enum ag_path path;
};

#endif
