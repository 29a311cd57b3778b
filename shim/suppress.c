/* SPDX-License-Identifier: MIT */
/*
 * Suppressions (docs/guard.md, "Suppressions"): a file of rules, named
 * by the suppressions option, read once at start.  A rule is one line of
 * terms separated by blanks, all of which must hold:
 *
 *   digest:HEX        the program's digest (the 32 hex digits a record
 *                     shows, or a prefix of at least 8 of them)
 *   condition:C       the failing condition: A, B, C, D (or A/B: A or B)
 *   phase:PATTERN     a phase the diagnostic names, by its identity
 *   plane:PATTERN     a plane (or global) the diagnostic names, by name
 *
 * PATTERN is a shell wildcard (fnmatch: *, ?, [...]); '#' starts a
 * comment; blank lines are skipped.  A failing verdict that a rule
 * matches is submitted as in warn mode and counted as suppressed, with
 * no record (the rule says it is known).  Only verdicts are suppressed:
 * a submission the guard could not decide (a schedule it never saw, a
 * malformed image, a mirror it cannot trust) is no known failure, and a
 * strict-mode refusal is turned off by turning strict mode off.
 *
 * At exit (ag_suppress_report) every rule that matched nothing is said,
 * and with print_suppressions=1 how often each one matched; a prefix
 * that matched two programs is said too, since it was meant for one.
 *
 * The rules are read before the application runs and never change, so
 * matching takes no lock; counts are atomic.  At most AG_RULES_MAX
 * rules: more are said and ignored (nothing grows without bound).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "cache.h"
#include "options.h"
#include "suppress.h"
#include "util.h"
#include "certify/internal.h"   /* aci_model_tensor */

#define AG_RULES_MAX 256
#define RULE_TEXT_MAX 240       /* a rule's text, as reports show it */
#define PATTERN_MAX 120
#define DIGEST_HEX 32
#define DIGEST_PREFIX_MIN 8

/* Conditions a rule names (condition:), as bits of enum ac_condition. */
#define COND_BIT(c) (1u << (c))

struct ag_rule {
	unsigned line;
	char text[RULE_TEXT_MAX + 1];
	char digest[DIGEST_HEX + 1];  /* lower-case hex prefix, "" : any */
	size_t digest_len;
	unsigned conditions;          /* 0: any */
	char phase[PATTERN_MAX + 1];  /* "" : any */
	char plane[PATTERN_MAX + 1];  /* "" : any */
	atomic_ullong matched;
	/* The first program matched, for a prefix that matches two
	 * (first_lock's). */
	struct ac_digest first;
	int first_set, ambiguous;
};

static struct ag_rule rules[AG_RULES_MAX];
static unsigned n_rules;

/* ---- reading the file ---- */

/* One term of a rule, s[0, len): 0, or -EINVAL with why[] said. */
static int parse_term(struct ag_rule *r, const char *s, size_t len,
		      char *why, size_t why_len)
{
	const char *colon = memchr(s, ':', len);
	if (!colon || colon == s + len - 1) {
		snprintf(why, why_len, "'%.*s' is not kind:value (digest:, "
			 "condition:, phase: or plane:)", (int)len, s);
		return -EINVAL;
	}
	size_t klen = (size_t)(colon - s), vlen = len - klen - 1;
	const char *v = colon + 1;
	if (klen == 6 && !memcmp(s, "digest", 6)) {
		if (vlen < DIGEST_PREFIX_MIN || vlen > DIGEST_HEX) {
			snprintf(why, why_len, "digest:%.*s: a digest is %d "
				 "hex digits, or a prefix of at least %d",
				 (int)vlen, v, DIGEST_HEX, DIGEST_PREFIX_MIN);
			return -EINVAL;
		}
		for (size_t i = 0; i < vlen; i++) {
			if (!isxdigit((unsigned char)v[i])) {
				snprintf(why, why_len, "digest:%.*s: not hex",
					 (int)vlen, v);
				return -EINVAL;
			}
			r->digest[i] = (char)tolower((unsigned char)v[i]);
		}
		r->digest[vlen] = 0;
		r->digest_len = vlen;
		return 0;
	}
	if (klen == 9 && !memcmp(s, "condition", 9)) {
		static const struct {
			const char *name;
			unsigned bits;
		} names[] = {
			{ "A", COND_BIT(AC_COND_A) },
			{ "B", COND_BIT(AC_COND_B) },
			{ "A/B", COND_BIT(AC_COND_A) | COND_BIT(AC_COND_B) },
			{ "C", COND_BIT(AC_COND_C) },
			{ "D", COND_BIT(AC_COND_D) },
		};
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == vlen &&
			    !strncasecmp(names[i].name, v, vlen)) {
				r->conditions |= names[i].bits;
				return 0;
			}
		snprintf(why, why_len, "condition:%.*s: not A, B, A/B, C or D",
			 (int)vlen, v);
		return -EINVAL;
	}
	char *pattern = klen == 5 && !memcmp(s, "phase", 5) ? r->phase
		      : klen == 5 && !memcmp(s, "plane", 5) ? r->plane : NULL;
	if (!pattern) {
		snprintf(why, why_len, "'%.*s' is not digest, condition, phase "
			 "or plane", (int)klen, s);
		return -EINVAL;
	}
	if (vlen > PATTERN_MAX) {
		snprintf(why, why_len, "%.*s: a pattern of more than %d bytes",
			 (int)klen, s, PATTERN_MAX);
		return -EINVAL;
	}
	memcpy(pattern, v, vlen);
	pattern[vlen] = 0;
	return 0;
}

/* One line (comment stripped): a rule, nothing, or a bad line said.
 * 0, or -ENOSPC when it is a rule and there is no room for it (said once:
 * the rest of the file is not read). */
static int parse_line(const char *file, unsigned line_no, char *s,
		      ag_say_fn *say)
{
	char *hash = strchr(s, '#');
	if (hash)
		*hash = 0;
	struct ag_rule r;
	memset(&r, 0, sizeof(r));
	r.line = line_no;
	size_t terms = 0, text_len = 0;
	for (char *p = s;;) {
		p += strspn(p, " \t\n\r\v\f");
		size_t len = strcspn(p, " \t\n\r\v\f");
		if (!len)
			break;
		char why[400];
		if (parse_term(&r, p, len, why, sizeof(why)) != 0) {
			say("arenaguard: suppressions %s:%u: %s; the rule "
			       "is ignored", file, line_no, why);
			return 0;
		}
		int w = snprintf(r.text + text_len, sizeof(r.text) - text_len,
				 "%s%.*s", terms ? " " : "", (int)len, p);
		text_len += w > 0 ? (size_t)w : 0;
		if (text_len >= sizeof(r.text))
			text_len = sizeof(r.text) - 1;
		terms++;
		p += len;
	}
	if (!terms)
		return 0;
	if (n_rules == AG_RULES_MAX) {
		say("arenaguard: suppressions %s:%u: more than %d rules; "
		       "the rest are ignored", file, line_no, AG_RULES_MAX);
		return -ENOSPC;
	}
	rules[n_rules++] = r;
	return 0;
}

/* Opens path for reading if it is a regular file: a FIFO would wait for
 * a writer and a device (/dev/zero) never ends, at load, inside the
 * application.  The stream, or NULL with why said. */
static FILE *open_rules(const char *path, ag_say_fn *say)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	const char *why = NULL;
	if (fd < 0)
		why = strerror(errno);
	else if (fstat(fd, &st) != 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	FILE *f = why ? NULL : fdopen(fd, "r");
	if (!f && !why)
		why = strerror(errno);
	if (!f) {
		/* close(2) itself: the guard's own close is not ready
		 * while it loads. */
		if (fd >= 0)
			syscall(SYS_close, fd);
		say("arenaguard: cannot read the suppressions %s: %s; no "
		       "failure is suppressed", path, why);
	}
	return f;
}

unsigned ag_suppress_count(void)
{
	return n_rules;
}

void ag_suppress_load(ag_say_fn *say)
{
	n_rules = 0;
	const char *path = ag_cfg.suppressions;
	if (!path[0] || ag_cfg.mode == AG_OFF)
		return;
	FILE *f = open_rules(path, say);
	if (!f)
		return;
	/* A line at a time, by bytes: a NUL byte or a line too long for
	 * line[] makes the whole line bad (said), never a shorter rule
	 * that would match more than was written. */
	char line[1024];
	size_t len = 0;
	int nul = 0, c;
	unsigned line_no = 0;
	do {
		c = getc_unlocked(f);
		if (c != EOF && c != '\n') {
			nul |= c == 0;
			if (len < sizeof(line) - 1)
				line[len] = (char)c;
			len++;
			continue;
		}
		if (c == EOF && !len)
			break;
		line_no++;
		if (nul)
			say("arenaguard: suppressions %s:%u: a NUL byte; "
			       "the rule is ignored", path, line_no);
		else if (len >= sizeof(line))
			say("arenaguard: suppressions %s:%u: a line "
			       "longer than %zu bytes; the rule is ignored",
			       path, line_no, sizeof(line) - 1);
		else if (line[len] = 0, parse_line(path, line_no, line, say) != 0)
			break;
		len = 0;
		nul = 0;
	} while (c != EOF);
	if (ferror(f))
		say("arenaguard: cannot read the suppressions %s: %s; the "
		       "rules after line %u are not used", path,
		       strerror(errno), line_no);
	fclose(f);
}

/* ---- matching ---- */

/* Whether bytes b, as a C string, match pattern (a name with a NUL byte
 * matches nothing but "*"-only patterns' fnmatch of its first part, so
 * it is refused outright). */
static int name_matches(const char *pattern, struct ac_bytes b)
{
	char name[512];
	if (b.len >= sizeof(name) || (b.len && memchr(b.data, 0, b.len)))
		return 0;
	if (b.len)
		memcpy(name, b.data, b.len);
	name[b.len] = 0;
	return fnmatch(pattern, name, 0) == 0;
}

static int phase_matches(const char *pattern, const struct ac_model *m,
			 uint64_t phase)
{
	return phase < m->n_phases &&
	       name_matches(pattern, m->phases[phase].identity);
}

/* Whether the diagnostic names a phase (by identity) matching pattern:
 * a tensor's phase, the failing launch's, or (D)'s instances'. */
static int diag_phase_matches(const char *pattern, const ac_program *prog,
			      const struct ac_diag *d)
{
	const struct ac_model *m = ac_program_model(prog);
	const struct ac_tensor_ref refs[] = { d->tensor[0], d->tensor[1],
					      d->near[0], d->near[1] };
	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++)
		if (refs[i].phase != AC_NONE &&
		    phase_matches(pattern, m, refs[i].phase))
			return 1;
	if (d->condition == AC_COND_C && d->launch != AC_NONE &&
	    phase_matches(pattern, m,
			  ac_program_launch_phase(prog, d->launch)))
		return 1;
	return d->condition == AC_COND_D &&
	       (phase_matches(pattern, m, d->phase) ||
		phase_matches(pattern, m, d->earlier_phase));
}

/* Whether the diagnostic names a plane or global matching pattern. */
static int diag_plane_matches(const char *pattern, const ac_program *prog,
			      const struct ac_diag *d)
{
	const struct ac_model *m = ac_program_model(prog);
	const struct ac_tensor_ref refs[] = { d->tensor[0], d->tensor[1],
					      d->near[0], d->near[1] };
	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
		if (refs[i].phase == AC_NONE && refs[i].index == AC_NONE)
			continue;
		const struct ac_tensor *t = aci_model_tensor(m, refs[i]);
		if (t && name_matches(pattern, t->name))
			return 1;
	}
	return 0;
}

static int rule_matches(const struct ag_rule *r, const char *hex,
			const ac_program *prog, const struct ac_diag *d)
{
	return (!r->digest_len || !memcmp(hex, r->digest, r->digest_len)) &&
	       (!r->conditions || (r->conditions & COND_BIT(d->condition))) &&
	       (!r->phase[0] || diag_phase_matches(r->phase, prog, d)) &&
	       (!r->plane[0] || diag_plane_matches(r->plane, prog, d));
}

/* first and ambiguous of every rule: matching is rare (a failing
 * verdict), so one lock. */
static pthread_mutex_t first_lock = PTHREAD_MUTEX_INITIALIZER;

void ag_suppress_lock_all(void)
{
	pthread_mutex_lock(&first_lock);
}

void ag_suppress_unlock_all(void)
{
	pthread_mutex_unlock(&first_lock);
}

/* Notes that r matched program d: a prefix that matches a second
 * program is ambiguous (said at exit). */
static void count_match(struct ag_rule *r, const struct ac_digest *d)
{
	atomic_fetch_add(&r->matched, 1);
	if (!r->digest_len || r->digest_len == DIGEST_HEX)
		return;
	pthread_mutex_lock(&first_lock);
	if (!r->first_set) {
		r->first = *d;
		r->first_set = 1;
	} else if (r->first.high != d->high || r->first.low != d->low) {
		r->ambiguous = 1;
	}
	pthread_mutex_unlock(&first_lock);
}

const struct ag_rule *ag_suppress_match(const struct ag_program *p,
					const struct ag_verdict *v)
{
	assert(v && v->verdict != 0);
	if (!n_rules || !p || !p->prog)
		return NULL;
	char hex[DIGEST_HEX + 1];
	ag_digest_text(&p->digest, hex);
	for (unsigned i = 0; i < n_rules; i++) {
		if (rule_matches(&rules[i], hex, p->prog, &v->diag)) {
			count_match(&rules[i], &p->digest);
			return &rules[i];
		}
	}
	return NULL;
}

int ag_suppress_hint(const struct ag_program *p, const struct ag_verdict *v,
		     char *out, size_t len)
{
	char hex[DIGEST_HEX + 1];
	if (!p || !v || v->verdict == 0 || v->verdict == AC_NONE)
		return -EINVAL;
	ag_digest_text(&p->digest, hex);
	snprintf(out, len, "digest:%s condition:%s", hex,
		 ac_condition_name(v->diag.condition));
	return 0;
}

const char *ag_rule_text(const struct ag_rule *r)
{
	return r->text;
}

unsigned ag_rule_line(const struct ag_rule *r)
{
	return r->line;
}

void ag_suppress_report(int submitted, ag_say_fn *say)
{
	for (unsigned i = 0; i < n_rules; i++) {
		struct ag_rule *r = &rules[i];
		unsigned long long n = atomic_load(&r->matched);
		if (ag_cfg.print_suppressions)
			say("arenaguard: suppression %s:%u matched %llu "
			       "time%s: %s", ag_cfg.suppressions, r->line, n,
			       n == 1 ? "" : "s", r->text);
		else if (!n && submitted)
			say("arenaguard: suppression %s:%u matched nothing: "
			       "%s", ag_cfg.suppressions, r->line, r->text);
		pthread_mutex_lock(&first_lock);
		int ambiguous = r->ambiguous;
		pthread_mutex_unlock(&first_lock);
		if (ambiguous)
			say("arenaguard: suppression %s:%u: digest:%s "
			       "matched more than one program; give more of "
			       "the digest", ag_cfg.suppressions, r->line,
			       r->digest);
	}
}
