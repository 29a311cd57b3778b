/* SPDX-License-Identifier: MIT */
/*
 * arenaguard - runs a command under the submission-time guard, the way
 * valgrind or compute-sanitizer are used:
 *
 *   arenaguard [--mode M] [--log F] [--dump D] [--stats] [--lib PATH]
 *              [--] COMMAND [ARG...]
 *
 * It sets ARENAGUARD, ARENAGUARD_LOG, ARENAGUARD_DUMP, ARENAGUARD_STATS,
 * puts libarenaguard.so first in LD_PRELOAD (before anything already
 * there, such as the simulated device: the guard must see a request
 * before the device does) and execs the command.  The library is found
 * in the build tree (../shim/) when this is the build tree's executable,
 * else where it was installed (AG_GUARD_LIB), unless --lib or
 * ARENAGUARD_LIB names it.  A library path that LD_PRELOAD cannot carry
 * (a space or a colon) is refused (exit 125): the command is never run
 * unguarded silently.
 * Manual: docs/arenaguard.1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef AG_GUARD_LIB
#error "AG_GUARD_LIB (the installed libarenaguard.so) must be defined"
#endif
#ifndef AG_BUILD_TOOLS_DIR
#error "AG_BUILD_TOOLS_DIR (where this executable is built) must be defined"
#endif
#ifndef AG_VERSION
#define AG_VERSION "unknown"
#endif

static const char usage_text[] =
	"Usage: arenaguard [--mode enforce|warn|off] [--log FILE] [--dump DIR]\n"
	"                  [--stats] [--strict] [--lib PATH] [--] COMMAND [ARG...]\n"
	"Run COMMAND with libarenaguard.so preloaded: every program it submits\n"
	"to the arena accelerator is certified first, and (in enforce mode)\n"
	"blocked with EPERM if it fails the device-arena certificate.\n"
	"\n"
	"  --mode M      enforce (default): block failing submissions;\n"
	"                warn: report them and submit anyway; off: do nothing\n"
	"  --log FILE    append reports to FILE instead of standard error\n"
	"  --dump DIR    write each failing program, with its schedule, as a\n"
	"                binary image in DIR (for arena-certify)\n"
	"  --stats       print the guard's counters when COMMAND exits\n"
	"  --strict      also refuse certified programs with advisories (a\n"
	"                tensor outside every window: specification section 6)\n"
	"  --lib PATH    the libarenaguard.so to preload\n"
	"  --help        show this help;  --version  show the version\n"
	"\n"
	"Exit status: COMMAND's, or 125 for a usage error and 126/127 when\n"
	"COMMAND cannot be run.\n";

static int readable(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* ../shim/libarenaguard.so relative to this executable, when it is the
 * build tree's (AG_BUILD_TOOLS_DIR): an installed copy preloads the
 * installed guard, whatever lies beside it. */
static int build_tree_lib(char *out, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	const char *dir = dirname(self);
	char *built = realpath(AG_BUILD_TOOLS_DIR, NULL);
	int in_tree = built && strcmp(built, dir) == 0;
	free(built);
	if (!in_tree)
		return -1;
	int w = snprintf(out, len, "%s/../shim/libarenaguard.so", dir);
	if (w < 0 || (size_t)w >= len || !readable(out))
		return -1;
	char *real = realpath(out, NULL);
	if (real && strlen(real) < len)
		strcpy(out, real);
	free(real);
	return 0;
}

static const char *find_lib(const char *option, char *buf, size_t len)
{
	if (option)
		return option;
	const char *env = getenv("ARENAGUARD_LIB");
	if (env && *env)
		return env;
	if (build_tree_lib(buf, len) == 0)
		return buf;
	return AG_GUARD_LIB;
}

/* ld.so splits LD_PRELOAD at spaces and colons and has no escape: a
 * path with either would be preloaded as pieces that do not exist
 * ("cannot be preloaded ... ignored"), and the command run unguarded. */
static int preloadable(const char *path)
{
	return path[strcspn(path, " :")] == 0;
}

static int set(const char *name, const char *value)
{
	if (setenv(name, value, 1) != 0) {
		fprintf(stderr, "arenaguard: setenv %s: %s\n", name,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* A sanitizer's runtime, which must stay first in the initial library
 * list (sanitized builds of the tools and tests preload it). */
static int is_sanitizer(const char *entry, size_t len)
{
	static const char *const names[] = { "libasan", "libtsan", "libubsan",
					      "liblsan", "libhwasan" };
	const char *base = entry;
	for (size_t i = 0; i < len; i++)
		if (entry[i] == '/')
			base = entry + i + 1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(base, names[i], strlen(names[i])))
			return 1;
	return 0;
}

/* The guard first (after any sanitizer runtime), then whatever was
 * preloaded already: it must see a request before the device does. */
static int preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	if (!old || !*old)
		return set("LD_PRELOAD", lib);
	size_t len = strlen(lib) + 1 + strlen(old) + 2;
	char *v = malloc(len);
	if (!v) {
		fprintf(stderr, "arenaguard: out of memory\n");
		return -1;
	}
	/* Leading sanitizer entries, separated by spaces or colons. */
	size_t keep = 0;
	for (;;) {
		size_t at = keep + strspn(old + keep, " :");
		size_t n = strcspn(old + at, " :");
		if (!n || !is_sanitizer(old + at, n))
			break;
		keep = at + n;
	}
	snprintf(v, len, "%.*s%s%s %s", (int)keep, old, keep ? " " : "", lib,
		 old + keep + strspn(old + keep, " :"));
	int rc = set("LD_PRELOAD", v);
	free(v);
	return rc;
}

static int valid_mode(const char *m)
{
	return !strcmp(m, "enforce") || !strcmp(m, "warn") || !strcmp(m, "off");
}

int main(int argc, char **argv)
{
	enum { OPT_LIB = 256, OPT_VERSION, OPT_STRICT };
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "log", required_argument, NULL, 'l' },
		{ "dump", required_argument, NULL, 'd' },
		{ "stats", no_argument, NULL, 's' },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "lib", required_argument, NULL, OPT_LIB },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	const char *mode = NULL, *log = NULL, *dump = NULL, *lib = NULL;
	int stats = 0, strict = 0, c;
	/* "+": stop at the first non-option, the command. */
	while ((c = getopt_long(argc, argv, "+m:l:d:sh", longopts, NULL)) != -1) {
		switch (c) {
		case 'm': mode = optarg; break;
		case 'l': log = optarg; break;
		case 'd': dump = optarg; break;
		case 's': stats = 1; break;
		case OPT_STRICT: strict = 1; break;
		case OPT_LIB: lib = optarg; break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case OPT_VERSION:
			printf("arenaguard %s\n", AG_VERSION);
			return 0;
		default:
			fputs(usage_text, stderr);
			return 125;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "arenaguard: no command given\n");
		fputs(usage_text, stderr);
		return 125;
	}
	if (mode && !valid_mode(mode)) {
		fprintf(stderr, "arenaguard: --mode takes enforce, warn or off, "
			"not '%s'\n", mode);
		return 125;
	}
	if (dump) {
		struct stat st;
		if (stat(dump, &st) != 0 || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "arenaguard: --dump %s: not a "
				"directory\n", dump);
			return 125;
		}
	}

	char buf[PATH_MAX];
	const char *path = find_lib(lib, buf, sizeof(buf));
	if (!readable(path)) {
		fprintf(stderr, "arenaguard: cannot find the guard library "
			"(tried %s); use --lib\n", path);
		return 125;
	}
	if (!preloadable(path)) {
		fprintf(stderr, "arenaguard: the guard library's path '%s' "
			"has a space or a colon, where ld.so splits "
			"LD_PRELOAD: COMMAND would run unguarded; not run "
			"(use --lib with a path without them, e.g. a "
			"symbolic link)\n", path);
		return 125;
	}
	if ((mode && set("ARENAGUARD", mode)) ||
	    (log && set("ARENAGUARD_LOG", log)) ||
	    (dump && set("ARENAGUARD_DUMP", dump)) ||
	    (stats && set("ARENAGUARD_STATS", "1")) ||
	    (strict && set("ARENAGUARD_STRICT", "1")) || preload(path))
		return 125;

	execvp(argv[optind], &argv[optind]);
	int err = errno;
	fprintf(stderr, "arenaguard: %s: %s\n", argv[optind], strerror(err));
	return err == ENOENT ? 127 : 126;
}
