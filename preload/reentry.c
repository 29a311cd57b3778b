/* SPDX-License-Identifier: MIT */
/*
 * The re-entry flag (reentry.h): one per module, each module's copy of
 * the preload core defining its own.
 */
#include "reentry.h"

__thread int preload_depth __attribute__((tls_model("initial-exec")));
