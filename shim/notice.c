/* SPDX-License-Identifier: MIT */
/*
 * Notices (notice.h): formatted and deduplicated here, in the base
 * layer, and written through the sink the output layer registered.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#include "dedup.h"
#include "notice.h"
#include "stats.h"

static _Atomic(ag_say_fn *) sink;

void ag_notice_sink(ag_say_fn *say)
{
	atomic_store(&sink, say);
}

void ag_report_once(const char *key, const char *fmt, ...)
{
	assert(key && fmt);
	ag_say_fn *say = atomic_load(&sink);
	if (!say) {
		atomic_fetch_add(&ag_stats.records_lost, 1);
		return;
	}
	if (ag_dedup_seen(key))
		return;
	char msg[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	atomic_fetch_add(&ag_stats.records, 1);
	say("arenaguard: %s", msg);
}
