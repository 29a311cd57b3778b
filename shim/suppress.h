/* SPDX-License-Identifier: MIT */
/*
 * Suppression rules (suppress.c, docs/guard.md).
 */
#ifndef ARENAGUARD_SHIM_SUPPRESS_H
#define ARENAGUARD_SHIM_SUPPRESS_H

#include <stddef.h>

struct ag_rule;
struct ag_program;
struct ag_verdict;
/* Reads ag_cfg.suppressions (after the outputs are open: a file that
 * cannot be read and every bad rule are said, with their line). */
void ag_suppress_load(void);
/* The first rule that matches failing verdict v of program p, counted,
 * or NULL.  No lock: the rules never change once the guard runs. */
const struct ag_rule *ag_suppress_match(const struct ag_program *p,
					const struct ag_verdict *v);
/* The rule that would suppress v ("digest:HEX condition:C") into out:
 * 0, or -1 when v is no verdict a rule can match. */
int ag_suppress_hint(const struct ag_program *p, const struct ag_verdict *v,
		     char *out, size_t len);
const char *ag_rule_text(const struct ag_rule *r);
/* The rules in effect (0 before ag_suppress_load, or in mode off). */
unsigned ag_suppress_count(void);
unsigned ag_rule_line(const struct ag_rule *r);
/* At exit: the rules that matched nothing (when the process submitted
 * anything), every rule's count under print_suppressions, and digest
 * prefixes that matched more than one program. */
void ag_suppress_report(int submitted);
/* fork: the lock of the rules' first matches, held across it so that
 * a child never inherits it held by a thread it does not have. */
void ag_suppress_lock_all(void);
void ag_suppress_unlock_all(void);
/* A program digest as the 32 lower-case hex digits records show. */
struct ac_digest;
void ag_digest_text(const struct ac_digest *d, char out[33]);

#endif
