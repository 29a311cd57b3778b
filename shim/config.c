/* SPDX-License-Identifier: MIT */
/*
 * The environment (docs/arenaguard.7), read once at load time:
 *
 *   ARENAGUARD        enforce (also when unset or empty) | warn | off
 *   ARENAGUARD_LOG    file to append records to (default: stderr)
 *   ARENAGUARD_DUMP   directory for failing programs as images
 *   ARENAGUARD_STATS  1: counters on stderr (or the log) at exit
 *   ARENAGUARD_STRICT 1: strict mode (spec 6): a program with advisories
 *                     is refused like one that fails
 *   ARENAGUARD_CACHE_MB  the caches' budget in MiB (default 256)
 *
 * An ARENAGUARD value that is not understood means enforce: a typo must
 * not switch the guard off.  A value that cannot be honoured (not
 * understood, or a path longer than a path can be) is kept as what it
 * is, and report.c says so once, at start (ag_output_open).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "guard.h"

struct ag_config ag_cfg = {
	.mode = AG_ENFORCE,
	.cache_bytes = (size_t)AG_CACHE_MB_DEFAULT << 20,
};

__thread int ag_inside __attribute__((tls_model("initial-exec")));

/* Copies the variable into dst[0, len); returns 0, or the value's
 * length when it does not fit (dst is then ""). */
static size_t copy_env(char *dst, size_t len, const char *name)
{
	assert(len > 0);
	const char *v = getenv(name);
	size_t n = v ? strlen(v) : 0;
	dst[0] = 0;
	if (n >= len)
		return n;
	if (v)
		memcpy(dst, v, n + 1);
	return 0;
}

static enum ag_mode parse_mode(const char *v, char *bad, size_t len,
			       size_t *bad_len)
{
	assert(len > 1);
	bad[0] = 0;
	*bad_len = 0;
	if (!v || !*v || !strcasecmp(v, "enforce"))
		return AG_ENFORCE;
	if (!strcasecmp(v, "warn"))
		return AG_WARN;
	if (!strcasecmp(v, "off"))
		return AG_OFF;
	*bad_len = strlen(v);
	strncpy(bad, v, len - 1);
	bad[len - 1] = 0;
	return AG_ENFORCE;
}

/* MiB from 0 to AG_CACHE_MB_MAX in decimal, else the default. */
static size_t parse_cache_mb(const char *v)
{
	if (!v || *v < '0' || *v > '9')
		return AG_CACHE_MB_DEFAULT;
	char *end;
	unsigned long mb = strtoul(v, &end, 10);
	return *end || mb > AG_CACHE_MB_MAX ? AG_CACHE_MB_DEFAULT : mb;
}

void ag_config_load(void)
{
	ag_cfg.mode = parse_mode(getenv("ARENAGUARD"), ag_cfg.bad_mode,
				 sizeof(ag_cfg.bad_mode), &ag_cfg.bad_mode_len);
	ag_cfg.log_too_long = copy_env(ag_cfg.log_path,
				       sizeof(ag_cfg.log_path),
				       "ARENAGUARD_LOG");
	ag_cfg.dump_too_long = copy_env(ag_cfg.dump_dir,
					sizeof(ag_cfg.dump_dir),
					"ARENAGUARD_DUMP");
	const char *s = getenv("ARENAGUARD_STATS");
	ag_cfg.stats = s && *s && strcmp(s, "0") != 0;
	s = getenv("ARENAGUARD_STRICT");
	ag_cfg.strict = s && *s && strcmp(s, "0") != 0;
	ag_cfg.cache_bytes = parse_cache_mb(getenv("ARENAGUARD_CACHE_MB"))
			     << 20;
	ag_output_open();
}

const char *ag_mode_name(enum ag_mode mode)
{
	switch (mode) {
	case AG_OFF: return "off";
	case AG_WARN: return "warn";
	default: return "enforce";
	}
}

char *ag_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}
