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
#include <stdlib.h>
#include <string.h>

#include "guard.h"

/* The defaults until the environment is read (options.inc). */
struct ag_config ag_cfg = {
#define AG_OPTION AG_OPTION_DEFAULT
#include "options.inc"
#undef AG_OPTION
};

__thread int ag_inside __attribute__((tls_model("initial-exec")));

void ag_config_load(void)
{
	ag_config_read(&ag_cfg);
	ag_output_open();
	ag_suppress_load();
	ag_report_loaded();
	ag_exec_load();
}

char *ag_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}
