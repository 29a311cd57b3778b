/* SPDX-License-Identifier: MIT */
/*
 * The guard's configuration, read once at load (and again by a test):
 * ag_cfg from the environment with the options' parser (options.c,
 * config.h), then the outputs opened and what did not parse said
 * (report.c), the suppressions loaded (suppress.c), and the launcher
 * told that this process is guarded (summary.c, ag_report_loaded), and
 * the guard's path kept for the exec check (exec.c).
 */
#define _GNU_SOURCE
#include <stddef.h>

#include "exec.h"
#include "load.h"
#include "options.h"
#include "report.h"
#include "summary.h"
#include "suppress.h"

void ag_config_load(void)
{
	ag_config_read(&ag_cfg);
	ag_output_open();
	ag_suppress_load(ag_log);
	ag_report_loaded();
	ag_exec_load();
}
