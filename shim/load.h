/* SPDX-License-Identifier: MIT */
/*
 * Loading the configuration (load.c).
 */
#ifndef ARENAGUARD_SHIM_LOAD_H
#define ARENAGUARD_SHIM_LOAD_H

/*
 * Hands the state layer the driver (attach.c) and the note of unseen
 * rings (devices.c), reads the environment into ag_cfg
 * (ag_config_read), (re)opens the guard's outputs (ag_output_open),
 * loads the suppressions and tells the launcher the guard is loaded:
 * the latest call wins.  Settings
 * that cannot be honoured are reported then, once per call.
 */
void ag_config_load(void);

#endif
