/* SPDX-License-Identifier: MIT */
/*
 * The guard's two process-wide values, in its bottom layer so that
 * every file reads them without depending on the file that fills them:
 * ag_cfg, the options in effect (options.h; load.c reads them at load),
 * and ag_stats, the counters (stats.h).  Calls nothing.
 */
#include "options.h"
#include "stats.h"

/* The defaults until the environment is read (options.inc). */
struct ag_config ag_cfg = {
#define AG_OPTION AG_OPTION_DEFAULT
#include "options.inc"
#undef AG_OPTION
};

struct ag_stats ag_stats;
