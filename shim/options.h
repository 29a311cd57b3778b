/* SPDX-License-Identifier: MIT */
/*
 * ag_cfg: the options in effect (read at load, load.c).
 */
#ifndef ARENAGUARD_SHIM_OPTIONS_H
#define ARENAGUARD_SHIM_OPTIONS_H

#include "config.h"

/* The options' parser and struct ag_config: config.h (the launcher
 * links options.c too). */
extern struct ag_config ag_cfg;

#endif
