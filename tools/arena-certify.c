/* SPDX-License-Identifier: MIT */
/*
 * arena-certify - the command-line certifier.
 *
 *   arena-certify [--json] [--quiet] [--strict] [--threads N]
 *                 [--convert OUT] [--html OUT] FILE...
 *
 * Reads each FILE ("-" is standard input) as a JSON program or a binary
 * program image, decides its certificate and reports the verdict with what
 * failed and where.  The contract (output lines, exit status) is the end of
 * shared/spec/program-json.md; docs/arena-certify.1 is the manual.
 *
 * Every file is read whole into memory, up to MAX_INPUT bytes: a regular
 * file is sized (fstat) and refused before it is read; a stream (a pipe, a
 * device) is refused when it reaches the limit, or read no further than
 * its first block when that block cannot begin a program (/dev/zero), so
 * that a stream that never ends gets an error instead of eating the
 * machine.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arenaguard/certify.h>

#include "html_report.h"
#include "certify/result_json.h"

/* Largest input accepted, in bytes (1 GiB). */
#define MAX_INPUT ((size_t)1 << 30)

/* Room for one rendered diagnostic; ac_diag_render truncates past it. */
#define RENDER_LEN RESULT_TEXT_LEN

/* Exit statuses, from the contract. */
enum { EXIT_CERTIFIED = 0, EXIT_VERDICT = 1, EXIT_BAD_INPUT = 2 };

struct options {
	int json;             /* one JSON object per file */
	int quiet;            /* no explanations, no conversion note */
	int strict;           /* a program with advisories is not certified */
	const char *convert;  /* write the program to this path, or NULL */
	const char *html;     /* write the HTML report to this path, or NULL */
	unsigned threads;     /* ac_options.threads */
};

static const char usage_text[] =
	"Usage: arena-certify [--json] [--quiet] [--strict] [--threads N]\n"
	"                     [--convert OUT] [--html OUT] FILE...\n"
	"Decide the device-arena certificate of each program FILE (JSON or\n"
	"binary program image; \"-\" reads standard input).\n"
	"\n"
	"  --json         one JSON object per file, one per line\n"
	"  --quiet, -q    the verdict lines only, no explanations\n"
	"  --strict       a program with advisories (a tensor outside every\n"
	"                 window, ...) counts as not certified\n"
	"  --threads N, -j N  certify a large program on up to N threads\n"
	"                 (default: the online CPUs; 1: this thread alone);\n"
	"                 the verdict and its explanation do not change\n"
	"  --convert OUT  also write the program (exactly one FILE) to OUT:\n"
	"                 JSON if OUT ends in .json, else a binary image;\n"
	"                 nothing is written for a malformed program\n"
	"  --html OUT     also write a report (exactly one FILE) to OUT: one\n"
	"                 self-contained HTML page drawing the program's\n"
	"                 memory over time, the failing objects marked\n"
	"  --help, -h     show this help\n"
	"  --version, -V  show the version\n"
	"\n"
	"Exit status: 0 every file certified, 1 every file got a verdict and\n"
	"some verdict is not 0 (or, with --strict, some program has an\n"
	"advisory), 2 some file is malformed or unreadable (or a usage or\n"
	"conversion error).\n";

/* ---- reading ---- */

static int read_error(struct ac_error *err, const char *why)
{
	err->where[0] = 0;
	snprintf(err->message, sizeof(err->message), "cannot read: %s", why);
	return -1;
}

/*
 * Can a text starting with buf[0, len) be a program?  1 yes or maybe
 * (nothing but JSON whitespace yet), 0 no: its first byte is neither the
 * image magic's nor, after whitespace, one that begins a JSON value.
 * Then the text is malformed at that byte whatever follows it.
 */
static int may_be_program(const char *buf, size_t len)
{
	if (len > 0 && buf[0] == AC_IMAGE_MAGIC[0])
		return 1;
	size_t i = 0;
	while (i < len && strchr(" \t\r\n", buf[i]) && buf[i])
		i++;
	return i == len || (buf[i] && strchr("{[\"-0123456789tfn", buf[i]));
}

/*
 * Reads all of fd into a malloc'ed, NUL-terminated buffer.  Regular files
 * are sized up front and refused past the limit before any read; streams
 * grow the buffer by doubling up to the limit, and stop at the first
 * block that shows they cannot be a program (may_be_program).
 */
static int read_fd(int fd, char **out, size_t *out_len, struct ac_error *err)
{
	struct stat st;
	size_t cap = 65536, len = 0;
	int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	if (regular && st.st_size > 0) {
		if ((uint64_t)st.st_size > MAX_INPUT)
			return read_error(err, "larger than 1 GiB, the limit of arena-certify");
		cap = (size_t)st.st_size + 1; /* +1 sees EOF without a regrow */
	}
	char *buf = malloc(cap + 1);
	if (!buf)
		return read_error(err, strerror(ENOMEM));
	for (;;) {
		if (len == cap) {
			if (cap >= MAX_INPUT) {
				free(buf);
				return read_error(err, "larger than 1 GiB, the limit of arena-certify");
			}
			size_t ncap = cap * 2 > MAX_INPUT ? MAX_INPUT : cap * 2;
			char *nb = realloc(buf, ncap + 1);
			if (!nb) {
				free(buf);
				return read_error(err, strerror(ENOMEM));
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t got = read(fd, buf + len, cap - len);
		if (got == 0)
			break;
		if (got < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			return read_error(err, strerror(e));
		}
		len += (size_t)got;
		if (!regular && !may_be_program(buf, len))
			break;      /* malformed at its first byte: enough */
	}
	buf[len] = 0;
	*out = buf;
	*out_len = len;
	return 0;
}

static int read_input(const char *file, char **out, size_t *len,
		      struct ac_error *err)
{
	if (strcmp(file, "-") == 0)
		return read_fd(STDIN_FILENO, out, len, err);
	int fd = open(file, O_RDONLY);
	if (fd < 0)
		return read_error(err, strerror(errno));
	int r = read_fd(fd, out, len, err);
	close(fd);
	return r;
}

/* ---- converting ---- */

static int ends_with_json(const char *path)
{
	size_t n = strlen(path);
	const char *ext = ".json";
	if (n < 5)
		return 0;
	for (size_t i = 0; i < 5; i++) {
		char c = path[n - 5 + i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != ext[i])
			return 0;
	}
	return 1;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len > 0) {
		ssize_t put = write(fd, p, len);
		if (put < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += put;
		len -= (size_t)put;
	}
	return 0;
}

/*
 * Writes data to path.  A regular file (or a new one) is replaced
 * atomically through a temporary file beside it, so a failed write never
 * destroys what was there; anything else (a device, a FIFO) is written in
 * place.  Returns 0, or -1 with errno set.
 */
static int write_file(const char *path, const void *data, size_t len)
{
	struct stat st;
	int exists = stat(path, &st) == 0;
	if (exists && !S_ISREG(st.st_mode)) {
		int fd = open(path, O_WRONLY | O_TRUNC);
		if (fd < 0)
			return -1;
		int r = write_all(fd, data, len);
		int e = errno;
		if (close(fd) != 0 && r == 0)
			return -1;
		errno = e;
		return r;
	}

	size_t n = strlen(path);
	char *tmp = malloc(n + sizeof(".XXXXXX"));
	if (!tmp)
		return -1;
	memcpy(tmp, path, n);
	memcpy(tmp + n, ".XXXXXX", sizeof(".XXXXXX"));
	int fd = mkstemp(tmp);
	if (fd < 0) {
		free(tmp);
		return -1;
	}
	mode_t mode;
	if (exists) {
		mode = st.st_mode & 07777;
	} else {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	int r = fchmod(fd, mode) == 0 && write_all(fd, data, len) == 0 ? 0 : -1;
	int e = errno;
	if (close(fd) != 0 && r == 0) {
		r = -1;
		e = errno;
	}
	if (r == 0 && rename(tmp, path) != 0) {
		r = -1;
		e = errno;
	}
	if (r != 0)
		unlink(tmp);
	free(tmp);
	errno = e;
	return r;
}

/* Writes the model to opt->convert; reports on stderr.  0 or -1. */
static int convert(const struct options *opt, const struct ac_model *model)
{
	int as_json = ends_with_json(opt->convert);
	struct ac_error err = { "", "" };
	size_t len = 0;
	void *data = as_json ? (void *)ac_model_write_json(model, &len, &err)
			     : (void *)ac_model_write_image(model, &len, &err);
	if (!data) {
		char text[400];
		fprintf(stderr, "arena-certify: cannot convert to %s: %s\n",
			opt->convert, ac_error_text(&err, text, sizeof(text)));
		return -1;
	}
	int r = write_file(opt->convert, data, len);
	int e = errno;
	free(data);
	if (r != 0) {
		fprintf(stderr, "arena-certify: cannot write %s: %s\n",
			opt->convert, strerror(e));
		return -1;
	}
	if (!opt->quiet)
		fprintf(stderr, "arena-certify: wrote %s (%s, %zu bytes)\n",
			opt->convert, as_json ? "JSON" : "program image", len);
	return 0;
}

/* ---- JSON output ---- */

/*
 * Closes the object open in j (aci_result_json_begin, then its keys) and
 * prints it on one line.
 */
static void print_json_line(struct json_out *j)
{
	aci_json_out_end(j);
	char *line = aci_json_out_take(j, 1, NULL);
	if (!line)  /* Out of memory: still one object per file. */
		printf("{\"file\": null, \"verdict\": null, \"error\": \"out of memory\"}\n");
	else
		fputs(line, stdout);
	free(line);
}

/* ---- reporting ---- */

static void report_error(const struct options *opt, const char *file,
			 const struct ac_error *err)
{
	char text[400];
	ac_error_text(err, text, sizeof(text));
	if (!opt->json) {
		printf("%s: error: %s\n", file, text);
		return;
	}
	struct json_out j = JSON_OUT_INIT;
	aci_result_json_begin(&j, file, NULL);
	aci_json_out_string_at(&j, "error", text);
	if (err->where[0])
		aci_json_out_string_at(&j, "where", err->where);
	aci_json_out_string_at(&j, "message", err->message);
	print_json_line(&j);
}

/* Prints text with every line indented, for the plain explanation. */
static void print_indented(const char *text)
{
	while (*text) {
		size_t n = strcspn(text, "\n");
		printf("  %.*s\n", (int)n, text);
		text += n;
		if (*text == '\n')
			text++;
	}
}

/* A program's advisories (spec section 6), computed once per file. */
struct advisories {
	struct ac_advisory *list;
	uint64_t n;
};

/* Plain: one indented line per advisory (not when quiet), then, in strict
 * mode, "strict: fails" when there are any. */
static void print_advisories(const struct options *opt,
			     const ac_program *program,
			     const struct advisories *adv)
{
	char text[1024];
	for (uint64_t i = 0; i < adv->n && !opt->quiet; i++)
		printf("  advisory %s\n", ac_advisory_render(&adv->list[i],
			program, text, sizeof(text)));
	if (opt->strict && adv->n)
		printf("  strict: fails (%" PRIu64 " advisor%s)\n", adv->n,
		       adv->n == 1 ? "y" : "ies");
}

/* Reports a verdict with its explanation (text, "" for none) and the
 * advisories. */
static void report_verdict(const struct options *opt, const char *file,
			   uint64_t verdict, const struct ac_diag *diag,
			   const ac_program *program, const char *text,
			   const struct advisories *adv)
{
	if (!opt->json) {
		printf("%s: verdict %" PRIu64 "\n", file, verdict);
		print_indented(text);
		print_advisories(opt, program, adv);
		return;
	}
	struct json_out j = JSON_OUT_INIT;
	aci_result_json_begin(&j, file, &verdict);
	aci_result_json_fields(&j, program, diag, text, adv->list, adv->n,
			       !opt->quiet);
	if (opt->strict)
		aci_json_out_string_at(&j, "strict", adv->n ? "fails" : "holds");
	print_json_line(&j);
}

/* Writes the HTML report to opt->html; reports on stderr.  0 or -1. */
static int write_html(const struct options *opt, const char *file,
		      uint64_t verdict, const struct ac_diag *diag,
		      const ac_program *program, uint64_t executed,
		      const char *text, const struct advisories *adv)
{
	struct report_input in = { file, program, verdict, diag, executed, text,
				   adv->list, adv->n, opt->strict };
	size_t len = 0;
	char *page = html_report(&in, &len);
	if (!page) {
		fprintf(stderr, "arena-certify: cannot make the report %s: %s\n",
			opt->html, strerror(ENOMEM));
		return -1;
	}
	int r = write_file(opt->html, page, len);
	int e = errno;
	free(page);
	if (r != 0) {
		fprintf(stderr, "arena-certify: cannot write %s: %s\n", opt->html,
			strerror(e));
		return -1;
	}
	if (!opt->quiet)
		fprintf(stderr, "arena-certify: wrote %s (HTML report, %zu bytes)\n",
			opt->html, len);
	return 0;
}

/*
 * Certifies one file and reports it.  Returns its exit status; sets
 * *write_failed when --convert or --html could not write.
 */
static int certify_file(const struct options *opt, const char *file,
			int *write_failed)
{
	struct ac_error err = { "", "" };
	struct ac_model *model = NULL;
	ac_program *program = NULL;
	ac_schedule *schedule = NULL;
	struct advisories adv = { NULL, 0 };
	char *data = NULL;
	size_t len = 0;
	int status = EXIT_BAD_INPUT;

	if (read_input(file, &data, &len, &err) != 0)
		goto fail;
	/* the model may point into data: freed after it.  Read and checked
	 * in one call, which skips a pass over an image's launches. */
	struct ac_options copt = { .threads = opt->threads };
	program = ac_program_view(data, len, &copt, &model, &err);
	if (!program)
		goto fail;
	schedule = ac_schedule_new(program);
	if (!schedule) {
		err.where[0] = 0;
		snprintf(err.message, sizeof(err.message), "%s", strerror(ENOMEM));
		goto fail;
	}
	if (ac_schedule_append(schedule, model->refs, (size_t)model->n_refs,
			       &err) != 0)
		goto fail;
	/* Only a well-formed program is converted: nothing is written for
	 * one that is malformed (reported below, at fail). */
	if (opt->convert && convert(opt, model) != 0)
		*write_failed = 1;
	if (ac_program_advisories(program, &adv.list, &adv.n, &err) != 0)
		goto fail;

	struct ac_diag diag;
	memset(&diag, 0, sizeof(diag));
	uint64_t verdict = ac_schedule_verdict(schedule, &diag);
	uint64_t executed = ac_schedule_executed(schedule);
	static char text[RENDER_LEN];
	text[0] = 0;
	if (!opt->quiet || opt->html)   /* the report explains even when quiet */
		aci_result_explain(text, RENDER_LEN, verdict, &diag, program,
				   executed);
	report_verdict(opt, file, verdict, &diag, program, opt->quiet ? "" : text,
		       &adv);
	if (opt->html && write_html(opt, file, verdict, &diag, program, executed,
				    text, &adv) != 0)
		*write_failed = 1;
	status = verdict == 0 && !(opt->strict && adv.n) ? EXIT_CERTIFIED
							 : EXIT_VERDICT;
	goto done;
fail:
	report_error(opt, file, &err);
	if (opt->convert)
		fprintf(stderr, "arena-certify: nothing written to %s: %s is "
			"malformed or unreadable\n", opt->convert, file);
	if (opt->html)
		fprintf(stderr, "arena-certify: no report written to %s: %s has "
			"no verdict\n", opt->html, file);
done:
	free(adv.list);
	ac_schedule_free(schedule);
	ac_program_free(program);
	ac_model_free(model);
	free(data);
	return status;
}

/* ---- main ---- */

static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "arena-certify: %s%s\nTry 'arena-certify --help'.\n",
		what, arg);
	return EXIT_BAD_INPUT;
}

int main(int argc, char **argv)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct options opt = { 0, 0, 0, NULL, NULL,
			       cpus > 0 && cpus < 1024 ? (unsigned)cpus : 1 };
	char **files = argv;  /* the operands, compacted in place */
	int n_files = 0, options_done = 0;

	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (options_done || a[0] != '-' || strcmp(a, "-") == 0)
			files[n_files++] = a;
		else if (strcmp(a, "--") == 0)
			options_done = 1;
		else if (strcmp(a, "--json") == 0)
			opt.json = 1;
		else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0)
			opt.quiet = 1;
		else if (strcmp(a, "--strict") == 0)
			opt.strict = 1;
		else if (strcmp(a, "--threads") == 0 || strcmp(a, "-j") == 0 ||
			 strncmp(a, "--threads=", 10) == 0) {
			const char *n = a[1] == 'j' || a[9] != '=' ? NULL : a + 10;
			if (!n && i + 1 == argc)
				return usage_error("missing thread count after ", a);
			if (!n)
				n = argv[++i];
			char *end;
			errno = 0;
			unsigned long t = strtoul(n, &end, 10);
			if (!*n || *end || errno || t < 1 || t > 1024 ||
			    n[0] == '-' || n[0] == '+')
				return usage_error("--threads takes a count from "
						   "1 to 1024, not ", n);
			opt.threads = (unsigned)t;
		} else if (strcmp(a, "--convert") == 0) {
			if (i + 1 == argc)
				return usage_error("missing output file after ", a);
			opt.convert = argv[++i];
		} else if (strncmp(a, "--convert=", 10) == 0)
			opt.convert = a + 10;
		else if (strcmp(a, "--html") == 0) {
			if (i + 1 == argc)
				return usage_error("missing output file after ", a);
			opt.html = argv[++i];
		} else if (strncmp(a, "--html=", 7) == 0)
			opt.html = a + 7;
		else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage_text, stdout);
			return 0;
		} else if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
			printf("arena-certify %s\n", AG_VERSION);
			return 0;
		} else
			return usage_error("unknown option ", a);
	}
	if (n_files == 0)
		return usage_error("no input file (use - for standard input)", "");
	if (opt.convert && n_files != 1)
		return usage_error("--convert takes exactly one input FILE", "");
	if (opt.convert && (!opt.convert[0] || strcmp(opt.convert, "-") == 0))
		return usage_error("--convert needs a file name (its extension "
				   "picks the format), not ", opt.convert);
	if (opt.html && n_files != 1)
		return usage_error("--html takes exactly one input FILE", "");
	if (opt.html && (!opt.html[0] || strcmp(opt.html, "-") == 0))
		return usage_error("--html needs a file name, not ", opt.html);

	int any_verdict = 0, any_bad = 0, write_failed = 0;
	for (int i = 0; i < n_files; i++) {
		int s = certify_file(&opt, files[i], &write_failed);
		any_verdict |= s == EXIT_VERDICT;
		any_bad |= s == EXIT_BAD_INPUT;
	}

	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "arena-certify: writing output: %s\n",
			strerror(errno));
		return EXIT_BAD_INPUT;
	}
	if (any_bad || write_failed)
		return EXIT_BAD_INPUT;
	return any_verdict ? EXIT_VERDICT : EXIT_CERTIFIED;
}
