/* SPDX-License-Identifier: MIT */
/*
 * html_report.h - a program's memory over time as one HTML page
 * (arena-certify --html).
 *
 * The page is self-contained: inline CSS, SVG drawn by a little inline
 * JavaScript (report.js) from a JSON blob of the data, and a Content
 * Security Policy that forbids loading anything.  Across: the executed
 * phase instances (ac_walk in certify.h, report_timeline.h); down: device
 * addresses (report_axis.h); each live plane value a box
 * (report_live.h); the verdict's failing objects marked
 * (report_fail.h).  Every name reaches the page as JSON text and is put
 * in the document as text, never as markup; the little static text (file
 * name, verdict, explanation) is HTML-escaped.
 */
#ifndef ARENAGUARD_HTML_REPORT_H
#define ARENAGUARD_HTML_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include <arenaguard/certify.h>

struct report_input {
	const char *file;            /* the input's name, for the title */
	const ac_program *program;
	uint64_t verdict;
	const struct ac_diag *diag;
	uint64_t executed;           /* executed launches */
	const char *explanation;     /* what arena-certify prints for it */
	const struct ac_advisory *advisories;  /* spec 6, each tensor marked */
	uint64_t n_advisories;
	int strict;                  /* advisories fail (--strict) */
};

/* The page (malloc'ed, *len bytes), or NULL when memory runs out. */
char *html_report(const struct report_input *in, size_t *len);

#endif /* ARENAGUARD_HTML_REPORT_H */
