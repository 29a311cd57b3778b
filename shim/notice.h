/* SPDX-License-Identifier: MIT */
/*
 * Notices (notice.c): a free-form line ("cannot see ...") said once per
 * distinct key, from any layer.  The base layer formats and deduplicates
 * it; where it is written is the output layer's, which registers its
 * sink at load (report.c's ag_output_open registers ag_log), so that the
 * state layer says a notice without calling above itself.
 */
#ifndef ARENAGUARD_SHIM_NOTICE_H
#define ARENAGUARD_SHIM_NOTICE_H

#include "config.h"

/* Sets where notices are written from now on (say: a line's printf
 * format and arguments; NULL: nowhere).  Atomic: a notice said meanwhile
 * goes to the old sink or the new one. */
void ag_notice_sink(ag_say_fn *say);

/* A free-form notice, once per distinct key (dedup.c): "arenaguard: "
 * and the formatted text, at most 4095 bytes, as one line to the sink,
 * counted in ag_stats.records.  With no sink registered it is counted in
 * ag_stats.records_lost and not marked said (a later one, with a sink,
 * is written). */
void ag_report_once(const char *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
