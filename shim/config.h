/* SPDX-License-Identifier: MIT */
/*
 * The guard's options (docs/arenaguard.7, docs/guard.md "Options"):
 * struct ag_config, generated from the options' one table (options.inc),
 * and its one parser (options.c).  The guard reads its
 * configuration with it at load (load.c); the launcher (tools/arenaguard)
 * links options.c too and judges the caller's environment with the
 * very same parser before it runs a command, so that the two can never
 * disagree on what a value means.  Nothing here allocates, opens or
 * writes anything.
 */
#ifndef ARENAGUARD_SHIM_CONFIG_H
#define ARENAGUARD_SHIM_CONFIG_H

#include <stddef.h>

enum ag_mode { AG_OFF, AG_WARN, AG_ENFORCE };

/* The longest path a setting may name (PATH_MAX less its NUL). */
#define AG_PATH_MAX 4095

/*
 * The launcher's own channel: options in ARENAGUARD_OPTIONS' syntax,
 * read after ARENAGUARD_OPTIONS and the old variables, so that what
 * the launcher sets (its flags, summary_file) wins whatever the
 * caller's environment holds (docs/arenaguard.7).
 */
#define AG_LAUNCHER_VAR "ARENAGUARD_LAUNCHER_OPTIONS"

/* The caches' budget when ARENAGUARD_CACHE_MB is unset or not a number
 * of MiB from 0 to AG_CACHE_MB_MAX (docs/guard.md, "Caches"). */
#define AG_CACHE_MB_DEFAULT 256
#define AG_CACHE_MB_MAX (1u << 20)
/* The most threads= takes (the library starts at most 63 workers). */
#define AG_THREADS_MAX 64

/* Each kind of option (options.inc): the type of its field and its
 * default as the field's initializer. */
#define AG_TYPE_MODE(f) enum ag_mode f
#define AG_TYPE_PATH(f) char f[AG_PATH_MAX + 1]
#define AG_TYPE_FLAG(f) int f
#define AG_TYPE_MIB(f) size_t f          /* in bytes */
#define AG_TYPE_FORMAT(f) int f          /* 1: json */
#define AG_TYPE_THREADS(f) unsigned f
#define AG_INIT_MODE(d) d
#define AG_INIT_PATH(d) d
#define AG_INIT_FLAG(d) d
#define AG_INIT_MIB(d) ((size_t)(d) << 20)
#define AG_INIT_FORMAT(d) d
#define AG_INIT_THREADS(d) d

/* A row of options.inc as a designated initializer of its default:
 *   struct ag_config c = {
 *   #define AG_OPTION AG_OPTION_DEFAULT
 *   #include "options.inc"
 *   #undef AG_OPTION
 *   }; */
#define AG_OPTION_DEFAULT(key, env, kind, field, def, help, launcher) \
	.field = AG_INIT_##kind(def),

struct ag_config {
	/* The options, a field each (options.inc): mode, log_template
	 * (log_path as set: %p, %e), dump_dir ("" : no dumps),
	 * cache_bytes, threads, summary_file (the launcher's), log_json,
	 * suppressions ("" : none), the flags. */
#define AG_OPTION(key, env, kind, field, def, help, launcher) \
	AG_TYPE_##kind(field);
#include "options.inc"
#undef AG_OPTION
	/* What reading them found. */
	char log_path[AG_PATH_MAX + 1];  /* expanded; "" : standard error */
	char notes[2048];       /* lines to say at start: bad options */
	char bad_mode[64];      /* an ARENAGUARD value not understood */
	size_t bad_mode_len;    /* its whole length (bad_mode may be cut) */
	size_t log_too_long;    /* ARENAGUARD_LOG's length if over the max */
	size_t dump_too_long;   /* ARENAGUARD_DUMP's length if over the max */
};



/* How the parser's users say a line (the guard: ag_log; the launcher:
 * standard error). */
typedef void ag_say_fn(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/*
 * Reads the environment into *cfg: the defaults, then the old
 * variables (ARENAGUARD, ARENAGUARD_LOG, ...), then ARENAGUARD_OPTIONS,
 * then AG_LAUNCHER_VAR; a later setting of an option wins.  What does
 * not parse keeps the option's default (a mode: enforce) and is kept
 * in cfg->notes, bad_mode, log_too_long or dump_too_long for
 * ag_config_say.  Allocates nothing; any bytes are accepted.
 */
void ag_config_read(struct ag_config *cfg);
/* Whether reading the environment into cfg found anything that does
 * not parse (what ag_config_say would say). */
int ag_config_bad(const struct ag_config *cfg);
/* Says, a line each through say, every setting of cfg that does not
 * parse, naming the variable and the value. */
void ag_config_say(const struct ag_config *cfg, ag_say_fn *say);
const char *ag_mode_name(enum ag_mode mode);
/* Lists every option with its default and meaning (help=1). */
void ag_options_help(ag_say_fn *say);
/* Whether the guard takes value for the option key (a key of
 * options.inc): 1, or 0 when key is no option or value does not parse
 * as its kind.  Reads and changes nothing (the launcher checks its
 * flags' values with it). */
int ag_option_takes(const char *key, const char *value);

#endif
