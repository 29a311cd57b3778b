/* SPDX-License-Identifier: MIT */
/*
 * The guard's options (docs/arenaguard.7, docs/guard.md "Options"),
 * parsed from their one table (options.inc):
 *
 *   ARENAGUARD_OPTIONS="key=value:key=value"   the sanitizers' style
 *
 * and, for each option that had one before it, its own variable
 * (ARENAGUARD, ARENAGUARD_LOG, ...), which keeps working; where both
 * set an option, ARENAGUARD_OPTIONS wins, and the launcher's channel
 * (AG_LAUNCHER_VAR, same syntax) wins over both.  A value may be quoted with
 * "..." or '...' to carry a ':'.  `help=1` lists every option with its
 * default and meaning at start.
 *
 * An unknown key or a bad value is said once, at start, and the option
 * keeps its default: a typo must never switch the guard off, so a mode
 * that is not understood means enforce.  Parsing allocates nothing and
 * accepts any bytes; what it has to say waits in the config's notes
 * until report.c opens the outputs (ag_output_open) and says it
 * (ag_config_say).  The launcher links this file alone: it refers to
 * nothing else of the guard.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"

enum option_kind { MODE, PATH, FLAG, MIB, FORMAT, THREADS };

struct option {
	const char *key;   /* in ARENAGUARD_OPTIONS */
	const char *env;   /* its own variable, or NULL */
	const char *help;
	enum option_kind kind;
	size_t off;        /* where in struct ag_config */
	unsigned long long def;   /* the default: a number (PATH: unused) */
	const char *def_path;     /* PATH's default */
};

#define AT(field) offsetof(struct ag_config, field)

/* The options' one table (options.inc), in help=1's order. */
static const struct option options[] = {
#define DEF_NUMBER_MODE(d) AG_INIT_MODE(d)
#define DEF_NUMBER_PATH(d) 0
#define DEF_NUMBER_FLAG(d) AG_INIT_FLAG(d)
#define DEF_NUMBER_MIB(d) AG_INIT_MIB(d)
#define DEF_NUMBER_FORMAT(d) AG_INIT_FORMAT(d)
#define DEF_NUMBER_THREADS(d) AG_INIT_THREADS(d)
#define DEF_PATH_MODE(d) NULL
#define DEF_PATH_PATH(d) AG_INIT_PATH(d)
#define DEF_PATH_FLAG(d) NULL
#define DEF_PATH_MIB(d) NULL
#define DEF_PATH_FORMAT(d) NULL
#define DEF_PATH_THREADS(d) NULL
#define AG_OPTION(key, env, kind, field, def, help, launcher) \
	{ #key, env, help, kind, AT(field), DEF_NUMBER_##kind(def), \
	  DEF_PATH_##kind(def) },
#include "options.inc"
#undef AG_OPTION
};

#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

/* Appends a line to the notes said at start (cut when they are full). */
static void note(struct ag_config *cfg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note(struct ag_config *cfg, const char *fmt, ...)
{
	char *n = cfg->notes;
	size_t cap = sizeof(cfg->notes), used = strnlen(n, cap - 1);
	if (cap - used < 2)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(n + used, cap - used - 1, fmt, ap);
	va_end(ap);
	used = k < 0 ? used : strnlen(n, cap - 2);
	n[used] = '\n';
	n[used + 1] = 0;
}

/* What each kind of option takes, as a bad value is told. */
static const char *const allowed[] = {
	[MODE] = "enforce, warn or off; enforcing",
	[PATH] = "a path of at most 4095 bytes; the default is kept",
	[FLAG] = "0 or 1; the default is kept",
	[MIB] = "a number of MiB from 0 to 1048576; the default is kept",
	[FORMAT] = "text or json; the default is kept",
	[THREADS] = "a number of threads from 1 to 64; the default is kept",
};

static const struct option *find(const char *key, size_t len)
{
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (strlen(options[i].key) == len &&
		    !memcmp(options[i].key, key, len))
			return &options[i];
	return NULL;
}

/* A flag's value v: 0 with *out 1 or 0, or -EINVAL (*out untouched). */
static int parse_flag(const char *v, int *out)
{
	if (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes"))
		*out = 1;
	else if (!strcmp(v, "0") || !strcasecmp(v, "false") ||
		 !strcasecmp(v, "no"))
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

/* Sets option o to v (NUL-terminated, len bytes): 0, or -EINVAL when v
 * is not a value o takes (-ENAMETOOLONG: a path over AG_PATH_MAX; a mode
 * is then enforce; anything else is as it was). */
static int set(struct ag_config *cfg, const struct option *o, const char *v,
	       size_t len)
{
	char *dst = (char *)cfg + o->off;
	switch (o->kind) {
	case MODE:
		if (!strcasecmp(v, "enforce"))
			cfg->mode = AG_ENFORCE;
		else if (!strcasecmp(v, "warn"))
			cfg->mode = AG_WARN;
		else if (!strcasecmp(v, "off"))
			cfg->mode = AG_OFF;
		else
			return cfg->mode = AG_ENFORCE, -EINVAL;
		return 0;
	case FLAG:
		return parse_flag(v, (int *)(void *)dst);
	case MIB: {
		char *end;
		if (*v < '0' || *v > '9')
			return -EINVAL;
		unsigned long mb = strtoul(v, &end, 10);
		if (*end || mb > AG_CACHE_MB_MAX)
			return -EINVAL;
		cfg->cache_bytes = (size_t)mb << 20;
		return 0;
	}
	case THREADS: {
		char *end;
		if (*v < '0' || *v > '9')
			return -EINVAL;
		unsigned long n = strtoul(v, &end, 10);
		if (*end || n < 1 || n > AG_THREADS_MAX)
			return -EINVAL;
		cfg->threads = (unsigned)n;
		return 0;
	}
	case FORMAT:
		if (!strcasecmp(v, "text"))
			cfg->log_json = 0;
		else if (!strcasecmp(v, "json"))
			cfg->log_json = 1;
		else
			return -EINVAL;
		return 0;
	case PATH:
		if (len > AG_PATH_MAX)
			return -ENAMETOOLONG;
		memcpy(dst, v, len + 1);
		return 0;
	}
	assert(0);
	return -EINVAL;
}

/* The old variables: what they always meant (a flag is any value but
 * "" and "0"), with their old messages for values they cannot take. */
static void load_env(struct ag_config *cfg, const struct option *o)
{
	const char *v = getenv(o->env);
	if (!v)
		return;
	size_t len = strlen(v);
	switch (o->kind) {
	case MODE:
		if (*v && set(cfg, o, v, len) != 0) {
			size_t cap = sizeof(cfg->bad_mode);
			cfg->bad_mode_len = len;
			memcpy(cfg->bad_mode, v, len < cap ? len : cap - 1);
			cfg->bad_mode[len < cap ? len : cap - 1] = 0;
		}
		return;
	case FLAG:
		*(int *)(void *)((char *)cfg + o->off) = *v && strcmp(v, "0");
		return;
	case MIB:
		if (set(cfg, o, v, len) != 0) {
			cfg->cache_bytes = (size_t)o->def;
			if (*v)
				note(cfg, "arenaguard: %s=%.200s: not %s",
				     o->env, v, allowed[MIB]);
		}
		return;
	case THREADS:
		if (set(cfg, o, v, len) != 0)
			note(cfg, "arenaguard: %s=%.200s: not %s", o->env, v,
			     allowed[THREADS]);
		return;
	case FORMAT:            /* no variable of its own has one */
		set(cfg, o, v, len);
		return;
	case PATH:
		if (set(cfg, o, v, len) != 0) {
			size_t *too_long = o->off == AT(dump_dir)
				? &cfg->dump_too_long : &cfg->log_too_long;
			*too_long = len;
		}
		return;
	}
	assert(0);
}

/* One "key=value" of ARENAGUARD_OPTIONS, s[0, len), quotes and all. */
static void load_pair(struct ag_config *cfg, const char *prefix,
		      const char *s, size_t len)
{
	const char *eq = memchr(s, '=', len);
	size_t klen = eq ? (size_t)(eq - s) : len;
	int shown = len > 200 ? 200 : (int)len;   /* of a bad pair */
	const struct option *o = find(s, klen);
	if (!o) {
		if (klen)
			note(cfg, "%s%.*s is not an option (help=1 lists "
			     "them); ignored", prefix, klen > 200 ? 200 : (int)klen, s);
		else
			note(cfg, "%s'%.*s': an option without a name; "
			     "ignored", prefix, shown, s);
		return;
	}
	if (!eq) {
		note(cfg, "%s%.*s has no value (key=value); ignored",
		     prefix, shown, s);
		return;
	}
	char v[AG_PATH_MAX + 2];
	size_t n = 0;
	char quote = 0;
	for (const char *p = eq + 1; p < s + len; p++) {
		if (quote ? *p == quote : (*p == '"' || *p == '\'')) {
			quote = quote ? 0 : *p;
			continue;
		}
		if (n < sizeof(v) - 1)
			v[n++] = *p;
	}
	v[n] = 0;
	if (n < sizeof(v) - 1 && set(cfg, o, v, n) == 0)
		return;
	if (o->kind == MODE)
		cfg->mode = AG_ENFORCE;
	note(cfg, "%s%.*s%s: not %s", prefix, shown, s, len > 200 ? "..." : "",
	     allowed[o->kind]);
}

/* Splits ARENAGUARD_OPTIONS at the ':' outside quotes. */
static void load_options(struct ag_config *cfg, const char *prefix,
			 const char *s)
{
	const char *start = s;
	char quote = 0;
	for (const char *p = s;; p++) {
		if (*p && (quote ? *p == quote : (*p == '"' || *p == '\''))) {
			quote = quote ? 0 : *p;
			continue;
		}
		if (*p && (quote || *p != ':'))
			continue;
		if (quote && !*p)
			note(cfg, "%sa quote is not closed; the rest is "
			     "taken as quoted", prefix);
		if (p > start)
			load_pair(cfg, prefix, start, (size_t)(p - start));
		if (!*p)
			return;
		start = p + 1;
	}
}

/* Sets option o of cfg to its default (options.inc). */
static void set_default(struct ag_config *cfg, const struct option *o)
{
	void *dst = (char *)cfg + o->off;
	switch (o->kind) {
	case MODE:
		*(enum ag_mode *)dst = (enum ag_mode)o->def;
		return;
	case PATH:
		snprintf(dst, AG_PATH_MAX + 1, "%s", o->def_path);
		return;
	case FLAG:
	case FORMAT:
		*(int *)dst = (int)o->def;
		return;
	case MIB:
		*(size_t *)dst = (size_t)o->def;
		return;
	case THREADS:
		*(unsigned *)dst = (unsigned)o->def;
		return;
	}
	assert(0);
}

void ag_config_read(struct ag_config *cfg)
{
	/* The defaults, then the old variables, then ARENAGUARD_OPTIONS,
	 * then the launcher's channel. */
	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < N_OPTIONS; i++)
		set_default(cfg, &options[i]);
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (options[i].env)
			load_env(cfg, &options[i]);
	const char *s = getenv("ARENAGUARD_OPTIONS");
	if (s)
		load_options(cfg, "arenaguard: ARENAGUARD_OPTIONS: ", s);
	s = getenv(AG_LAUNCHER_VAR);
	if (s)
		load_options(cfg, "arenaguard: " AG_LAUNCHER_VAR ": ", s);
}

int ag_config_bad(const struct ag_config *cfg)
{
	return cfg->notes[0] || cfg->bad_mode[0] || cfg->log_too_long ||
	       cfg->dump_too_long;
}

static void say_too_long(ag_say_fn *say, const char *name, size_t len,
			 const char *so)
{
	say("arenaguard: %s is %zu bytes long, longer than a path can be "
	    "(%d): %s", name, len, AG_PATH_MAX, so);
}

void ag_config_say(const struct ag_config *cfg, ag_say_fn *say)
{
	for (const char *l = cfg->notes; *l;) {
		const char *nl = strchr(l, '\n');
		say("%.*s", (int)(nl - l), l);
		l = nl + 1;
	}
	if (cfg->bad_mode[0])
		say("arenaguard: ARENAGUARD=%s%s is not enforce, warn or off; "
		    "enforcing", cfg->bad_mode,
		    cfg->bad_mode_len >= sizeof(cfg->bad_mode) ? "..." : "");
	if (cfg->log_too_long)
		say_too_long(say, "ARENAGUARD_LOG", cfg->log_too_long,
			     "records go to standard error");
	if (cfg->dump_too_long)
		say_too_long(say, "ARENAGUARD_DUMP", cfg->dump_too_long,
			     "no dumps are written");
}

/* Option o's default as help=1 shows it: as a value of it would be
 * written ("" for an empty path). */
static void show_default(const struct option *o, char *out, size_t len)
{
	switch (o->kind) {
	case MODE:
		snprintf(out, len, "%s", ag_mode_name((enum ag_mode)o->def));
		return;
	case PATH:
		snprintf(out, len, "%s", *o->def_path ? o->def_path : "\"\"");
		return;
	case FLAG:
	case THREADS:
		snprintf(out, len, "%llu", o->def);
		return;
	case FORMAT:
		snprintf(out, len, "%s", o->def ? "json" : "text");
		return;
	case MIB:
		snprintf(out, len, "%llu", o->def >> 20);
		return;
	}
	assert(0);
}

int ag_option_takes(const char *key, const char *value)
{
	const struct option *o = find(key, strlen(key));
	size_t len = strlen(value);
	if (!o || len > AG_PATH_MAX)
		return 0;
	/* set() writes o's own field of scratch and reads none (20 KiB
	 * of stack, in the launcher). */
	struct ag_config scratch;
	return set(&scratch, o, value, len) == 0;
}

void ag_options_help(ag_say_fn *say)
{
	say("arenaguard: options (ARENAGUARD_OPTIONS=\"key=value:...\"; "
	    "docs/arenaguard.7):");
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct option *o = &options[i];
		char def[32];
		show_default(o, def, sizeof(def));
		say("arenaguard:   %-18s default %-8s %s%s%s%s",
		    o->key, def, o->help,
		    o->env ? " (also " : "", o->env ? o->env : "",
		    o->env ? ")" : "");
	}
}

const char *ag_mode_name(enum ag_mode mode)
{
	switch (mode) {
	case AG_OFF: return "off";
	case AG_WARN: return "warn";
	default: return "enforce";
	}
}
