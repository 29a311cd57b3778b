/* SPDX-License-Identifier: MIT */
/*
 * The guard's configuration, read once at load (and again by a test):
 * ag_cfg from the environment with the options' parser (options.c,
 * config.h), then the outputs opened and what did not parse said
 * (report.c), the suppressions loaded (suppress.c), and the launcher
 * told that this process is guarded (summary.c, ag_report_loaded), and
 * the guard's path kept for the exec check (exec.c).  First, the state
 * layer is handed what it calls above itself (docs/guard.md, "Layers"):
 * the driver for attach.c's seal, rings.c's note of unseen rings for
 * devices.c's probe.
 */
#define _GNU_SOURCE
#include <stddef.h>

#include "attach.h"
#include "devices.h"
#include "driver.h"
#include "exec.h"
#include "load.h"
#include "options.h"
#include "report.h"
#include "rings.h"
#include "summary.h"
#include "suppress.h"

void ag_config_load(void)
{
	ag_config_read(&ag_cfg);
	/* What the state layer calls above itself, handed in. */
	ag_attach_driver(ag_driver_call);
	ag_devices_on_new_file(ag_uring_note_unseen_rings);
	ag_output_open();
	ag_suppress_load(ag_log);
	ag_report_loaded();
	ag_exec_load();
}
