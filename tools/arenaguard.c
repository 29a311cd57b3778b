/* SPDX-License-Identifier: MIT */
/*
 * arenaguard - runs a command under the submission-time guard, the way
 * valgrind or compute-sanitizer are used:
 *
 *   arenaguard [--mode M] [--log F] [--log-format F] [--dump D]
 *              [--stats] [--strict] [--halt-on-error]
 *              [--suppressions FILE] [--print-suppressions]
 *              [--threads N]
 *              [--error-exitcode N] [--quiet] [--lib PATH]
 *              [--] COMMAND [ARG...]
 *
 * The flags of guard options are generated from their rows in
 * shim/options.inc (AG_FLAG: name, rank, how the value is passed, the
 * --help lines), with the launcher's own flags (own_flags) merged in
 * rank order.  Every such flag is a key of the guard's options
 * (docs/arenaguard.7), which
 * the launcher passes in a channel of its own, ARENAGUARD_LAUNCHER_OPTIONS
 * (AG_LAUNCHER_VAR), that the guard reads after ARENAGUARD_OPTIONS and
 * the old variables: the launcher's flags win whatever the caller's
 * environment holds.  The caller's settings are first judged with the
 * guard's own parser (shim/options.c, linked in): what the guard would
 * not parse is said and the command is not run (exit 125), nor is it
 * when they switch the guard off and no --mode says so.  The
 * launcher puts libarenaguard.so first in LD_PRELOAD (after the
 * sanitizer runtime the command's binary links against, if any, and
 * before anything already there, such as the simulated device: the
 * guard must see a request before the device does), runs the command
 * as its child and waits for it.  Every guarded process of the command
 * tells the launcher through a private file (summary_file) that it
 * loaded the guard, its first refusal when it happens, its counts at
 * exit.  The launcher then prints the one SUMMARY line of the run
 * (unless --quiet) and exits with the command's status, or with N
 * under --error-exitcode N when any submission was blocked or warned
 * (not suppressed).  When no process of the command loaded the guard
 * (a static binary, one ld.so runs in secure mode), or a guarded one
 * said that it executes a program that will not load it ("unguarded",
 * shim/exec.c), it says that the command ran unguarded and exits with
 * N, or 125 without --error-exitcode.
 *
 * The library is found in the build tree (../shim/) when this is the
 * build tree's executable, else where it was installed (AG_GUARD_LIB),
 * unless --lib or ARENAGUARD_LIB names it.  A library path that
 * LD_PRELOAD cannot carry (a space or a colon) is refused (exit 125):
 * the command is never run unguarded silently.
 * Manual: docs/arenaguard.1.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "needed.h"

#ifndef AG_GUARD_LIB
#error "AG_GUARD_LIB (the installed libarenaguard.so) must be defined"
#endif
#ifndef AG_BUILD_TOOLS_DIR
#error "AG_BUILD_TOOLS_DIR (where this executable is built) must be defined"
#endif
#ifndef AG_VERSION
#define AG_VERSION "unknown"
#endif

/*
 * The launcher's flags: one for each guard option whose row in
 * shim/options.inc has an AG_FLAG (how the value is passed: AG_LF_*
 * below), and the launcher's own (OWN_FLAGS), in rank order: --help's
 * lines and getopt's table (whose order its "ambiguous" message
 * lists) both follow it.
 */
enum {
	AG_LF_SET,       /* no value: the option is set to 1 */
	AG_LF_WORD,      /* a value the guard's parser takes (ag_option_takes),
			  * spelled as --help does (lower case), else said
			  * with the row's "takes" and the command not run */
	AG_LF_ABSOLUTE,  /* a path, made absolute with the current directory */
	AG_LF_DIRECTORY, /* a directory (checked before the command runs),
			  * passed as realpath names it */
	AG_LF_RULES,     /* a readable regular file, passed as realpath
			  * names it */
	LF_OWN,          /* the launcher's own flag, handled in main */
};

struct flag {
	int rank;              /* place in --help and getopt's table */
	int short_name;        /* -X, or 0 */
	const char *name;      /* --name */
	int how;               /* AG_LF_* or LF_OWN */
	int has_arg;           /* getopt's: no_argument, required_argument */
	const char *takes;     /* AG_LF_WORD: what the value must be */
	const char *usage;     /* its lines of --help */
	const char *key;       /* the guard option's key; NULL: LF_OWN */
};

#define FLAG_ARG(how) ((how) == AG_LF_SET ? no_argument : required_argument)
#define AG_FLAG(rank, short_name, name, how, takes, usage) \
	{ rank, short_name, name, how, FLAG_ARG(how), takes, usage,
#define AG_NO_FLAG { 0, 0, NULL, 0, 0, NULL, NULL,
static const struct flag guard_flags[] = {
#define AG_OPTION(key, env, kind, field, def, help, launcher) \
	launcher #key },
#include "options.inc"
#undef AG_OPTION
};
#undef AG_FLAG
#undef AG_NO_FLAG

enum { OWN_EXITCODE, OWN_QUIET, OWN_LIB, OWN_HELP, OWN_VERSION, N_OWN };
static const struct flag own_flags[N_OWN] = {
	[OWN_EXITCODE] = { 70, 0, "error-exitcode", LF_OWN, required_argument,
		NULL,
		"  --error-exitcode N  exit N when any submission was blocked or warned\n",
		NULL },
	[OWN_QUIET] = { 80, 0, "quiet", LF_OWN, no_argument, NULL,
		"  --quiet             do not print the SUMMARY line at the end\n",
		NULL },
	[OWN_LIB] = { 130, 0, "lib", LF_OWN, required_argument, NULL,
		"  --lib PATH          the libarenaguard.so to preload\n", NULL },
	[OWN_HELP] = { 140, 'h', "help", LF_OWN, no_argument, NULL,
		"  --help              show this help;  --version  show the version\n",
		NULL },
	[OWN_VERSION] = { 150, 0, "version", LF_OWN, no_argument, NULL, "",
		NULL },
};

#define N_GUARD_FLAGS (sizeof(guard_flags) / sizeof(guard_flags[0]))
#define N_FLAGS (N_GUARD_FLAGS + N_OWN)

/* Every flag, guard options' and own, sorted by rank (sort_flags). */
static const struct flag *flags[N_FLAGS];
static size_t n_flags;

/* Fills flags[] in rank order (an insertion sort of a few rows). */
static void sort_flags(void)
{
	n_flags = 0;
	for (size_t i = 0; i < N_FLAGS; i++) {
		const struct flag *f = i < N_GUARD_FLAGS ? &guard_flags[i]
					: &own_flags[i - N_GUARD_FLAGS];
		if (!f->name)
			continue;        /* an option without a flag */
		size_t at = n_flags++;
		while (at > 0 && flags[at - 1]->rank > f->rank) {
			flags[at] = flags[at - 1];
			at--;
		}
		flags[at] = f;
	}
}

/* --help's text: the head, each flag's lines in rank order, the tail. */
static void usage(FILE *to)
{
	fputs("Usage: arenaguard [OPTION...] [--] COMMAND [ARG...]\n"
	      "Run COMMAND with libarenaguard.so preloaded: every program it submits\n"
	      "to the arena accelerator is certified first, and (in enforce mode)\n"
	      "blocked with EPERM if it fails the device-arena certificate.\n"
	      "\n", to);
	for (size_t i = 0; i < n_flags; i++)
		fputs(flags[i]->usage, to);
	fputs("\n"
	      "At the end: \"arenaguard: SUMMARY: N submissions, N blocked, N warned,\n"
	      "N suppressed\", over every guarded process of COMMAND.\n"
	      "Exit status: COMMAND's (128+N when a signal N ended it), N of\n"
	      "--error-exitcode when a submission was blocked or warned, or when\n"
	      "no process of COMMAND loaded the guard or a guarded one executed a\n"
	      "program that does not (125 without it), 125 for a\n"
	      "usage error or guard options in the environment that do not parse\n"
	      "(or switch the guard off without --mode off),\n"
	      "126/127 when COMMAND cannot be run.\n", to);
}

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

/*
 * The guard first (after any sanitizer runtime), then whatever was
 * preloaded already: it must see a request before the device does.
 * runtime: the soname of the sanitizer runtime the command's binary
 * needs (DT_NEEDED), or NULL; when LD_PRELOAD does not start with a
 * sanitizer runtime already, it goes first, by that soname, which
 * ld.so resolves exactly as it resolves the binary's DT_NEEDED entry
 * (the same name, searched for the main program: its RUNPATH,
 * LD_LIBRARY_PATH, the cache): the very library the binary would load.
 */
static int preload(const char *lib, const char *runtime)
{
	const char *old = getenv("LD_PRELOAD");
	if (!old)
		old = "";
	size_t len = (runtime ? strlen(runtime) : 0) + strlen(lib) +
		     strlen(old) + 3;
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
	const char *rest = old + keep + strspn(old + keep, " :");
	if (keep)
		snprintf(v, len, "%.*s %s%s%s", (int)keep, old, lib,
			 *rest ? " " : "", rest);
	else
		snprintf(v, len, "%s%s%s%s%s", runtime ? runtime : "",
			 runtime ? " " : "", lib, *rest ? " " : "", rest);
	int rc = set("LD_PRELOAD", v);
	free(v);
	return rc;
}

/* The launcher's channel (AG_LAUNCHER_VAR): what an enclosing launcher
 * set in it (judged with the rest of the environment), then key=value
 * for each flag, appended by add_option. */
static char *options;

/* Appends key=value, quoted so that the guard reads value back whole
 * (':' separates options).  -1 for a value no quote can carry. */
static int add_option(const char *key, const char *value)
{
	char quote = strchr(value, '\'') ? '"' : '\'';
	if (strchr(value, '\'') && strchr(value, '"')) {
		fprintf(stderr, "arenaguard: the value of %s has both kinds "
			"of quote, which ARENAGUARD_OPTIONS cannot carry: "
			"'%s'\n", key, value);
		return -1;
	}
	size_t old = options ? strlen(options) : 0;
	size_t len = old + strlen(key) + strlen(value) + 5;
	char *v = realloc(options, len);
	if (!v) {
		fprintf(stderr, "arenaguard: out of memory\n");
		return -1;
	}
	snprintf(v + old, len - old, "%s%s=%c%s%c", old ? ":" : "", key,
		 quote, value, quote);
	options = v;
	return 0;
}

/* The counts of the run, summed over the lines its guarded processes
 * appended to the summary file: "counts PID SUBMITTED BLOCKED WARNED
 * SUPPRESSED" at exit, "refused PID" at a process's first refusal. */
struct run_counts {
	unsigned long long submissions, blocked, warned, suppressed;
	int refused;          /* a "refused" line: some process refused */
	int loaded;           /* "loaded" lines: processes the guard loaded in */
	int unfinished;       /* processes that refused and gave no counts */
	/* "unguarded PID PATH WHY" lines a later "execfailed PID" did not
	 * take back: programs of the command that ran without the guard
	 * (shim/exec.c); the first UNGUARDED_SHOWN of them, to name. */
	int unguarded;
	struct unguarded {
		int pid;
		char path[256];
		char why[16];
	} shown[8];
};
#define UNGUARDED_SHOWN 8

/* Counts the line "unguarded PID PATH WHY" (after its first word),
 * named when among the first UNGUARDED_SHOWN (a malformed one counts,
 * unnamed: never a clean run). */
static void note_unguarded(struct run_counts *rc, const char *fields)
{
	int pid = -1, end = 0;
	rc->unguarded++;
	if (rc->unguarded > UNGUARDED_SHOWN ||
	    sscanf(fields, "%d %n", &pid, &end) != 1 || !end)
		return;
	struct unguarded *u = &rc->shown[rc->unguarded - 1];
	const char *path = fields + end, *why = strrchr(path, ' ');
	if (!why)
		return;
	size_t plen = (size_t)(why - path), wlen = strcspn(why + 1, "\n");
	u->pid = pid;
	snprintf(u->path, sizeof(u->path), "%.*s", (int)plen, path);
	snprintf(u->why, sizeof(u->why), "%.*s", (int)wlen, why + 1);
}

/* "execfailed PID": the last "unguarded" line of PID ran nothing (its
 * exec failed); taken back when it is still known (named), else the
 * count stays (never a clean run by mistake). */
static void forget_unguarded(struct run_counts *rc, int pid)
{
	int n = rc->unguarded < UNGUARDED_SHOWN ? rc->unguarded
						: UNGUARDED_SHOWN;
	if (rc->unguarded > UNGUARDED_SHOWN)
		return;
	for (int i = n - 1; i >= 0; i--)
		if (rc->shown[i].pid == pid) {
			memmove(&rc->shown[i], &rc->shown[i + 1],
				(size_t)(n - 1 - i) * sizeof(rc->shown[0]));
			rc->unguarded--;
			return;
		}
}

/* What the guard's word for an unguarded program means (shim/exec.c). */
static const char *unguarded_reason(const char *why)
{
	static const char *const words[][2] = {
		{ "preload", "LD_PRELOAD in its environment does not name "
			     "the guard" },
		{ "static", "statically linked" },
		{ "foreign", "an ELF file of another machine or class" },
		{ "setuid", "secure mode: setuid" },
		{ "setgid", "secure mode: setgid" },
		{ "capabilities", "secure mode: file capabilities" },
		{ "caller-ids", "secure mode: the caller's effective ids are "
				"not its real ones" },
		{ "unreadable", "its file cannot be read to tell" },
	};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(why, words[i][0]))
			return words[i][1];
	return why;
}

/* The summary file as created (mkstemp): a file of another identity at
 * its path at the end is not the run's. */
static dev_t counts_dev;
static ino_t counts_ino;

/* 0, or -1 when path is no longer the file the launcher created (the
 * command removed it, or replaced it: a symbolic link to /dev/zero
 * would be read forever, a FIFO waited on). */
static int read_counts(const char *path, struct run_counts *rc)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
			st.st_dev != counts_dev || st.st_ino != counts_ino)) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -1;
	}
	char line[256];
	pid_t refused_pid[64];
	int n_refused = 0;
	while (f && fgets(line, sizeof(line), f)) {
		int pid;
		unsigned long long s, b, w, x;
		if (sscanf(line, "counts %d %llu %llu %llu %llu", &pid, &s, &b,
			   &w, &x) == 5) {
			rc->submissions += s;
			rc->blocked += b;
			rc->warned += w;
			rc->suppressed += x;
			for (int i = 0; i < n_refused; i++)
				if (refused_pid[i] == pid)
					refused_pid[i] = -1;
		} else if (sscanf(line, "loaded %d", &pid) == 1) {
			rc->loaded++;
		} else if (!strncmp(line, "unguarded ", 10)) {
			note_unguarded(rc, line + 10);
		} else if (sscanf(line, "execfailed %d", &pid) == 1) {
			forget_unguarded(rc, pid);
		} else if (sscanf(line, "refused %d", &pid) == 1) {
			rc->refused = 1;
			if (n_refused < 64)
				refused_pid[n_refused++] = pid;
		}
	}
	for (int i = 0; i < n_refused; i++)
		rc->unfinished += refused_pid[i] != -1;
	fclose(f);
	return 0;
}

/* The room reserved for the summary file: about 30,000 processes'
 * lines. */
#define COUNTS_RESERVE (1 << 20)

/* Room for one more line of the guard's (read_counts reads lines of at
 * most 256 bytes). */
#define COUNTS_LINE 256

/*
 * Whether the summary file at path (the launcher's, checked as
 * read_counts checks it) had filled its file system by the end: no room
 * is left for one more line beyond what was written.  The guard appends
 * its lines quietly, so a line that found no room is lost without a
 * trace: a process's refusal among them would make a run that blocked
 * pass for a clean one.  A nearly full disk reserves only a few KiB
 * (run), which a few hundred processes' lines use up.  A file system
 * that cannot reserve (EOPNOTSUPP) is not judged.
 */
static int counts_filled(const char *path)
{
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	int full = 0;
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_dev == counts_dev && st.st_ino == counts_ino)
		full = fallocate(fd, FALLOC_FL_KEEP_SIZE, st.st_size,
				 COUNTS_LINE) != 0 && errno == ENOSPC;
	close(fd);
	return full;
}

/* The child signals are forwarded to: set only while it is unreaped
 * (alive or a zombie, so that its pid is not anyone else's), 0 before
 * the fork and from just before the reap (forwarded signals blocked
 * around both changes). */
static pid_t child;

static void forward_signal(int sig)
{
	int saved = errno;
	if (child > 0)
		kill(child, sig);
	errno = saved;
}

/* Runs argv as a child and waits: its status as a shell gives it, or
 * 126/127 when it cannot be run (said here). */
static int run(char **argv, int *ran)
{
	int report[2];
	if (pipe2(report, O_CLOEXEC) != 0) {
		fprintf(stderr, "arenaguard: pipe: %s\n", strerror(errno));
		return 125;
	}
	/* Before the fork, so that no signal finds the launcher without
	 * its handler; one the caller ignores stays ignored (a shell's
	 * background job), and exec gives the child the default for
	 * those handled here.  They are blocked until `child` is set (one
	 * that came meanwhile is forwarded then), and the child gets the
	 * caller's mask back before its exec. */
	static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	sigset_t fwd, caller_mask;
	sigemptyset(&fwd);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&fwd, forwarded[i]);
	sigprocmask(SIG_BLOCK, &fwd, &caller_mask);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++) {
		struct sigaction was;
		if (sigaction(forwarded[i], NULL, &was) == 0 &&
		    was.sa_handler != SIG_IGN)
			signal(forwarded[i], forward_signal);
	}
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "arenaguard: fork: %s\n", strerror(errno));
		sigprocmask(SIG_SETMASK, &caller_mask, NULL);
		return 125;
	}
	if (pid == 0) {
		close(report[0]);
		sigprocmask(SIG_SETMASK, &caller_mask, NULL);
		execvp(argv[0], argv);
		int err = errno;
		if (write(report[1], &err, sizeof(err)) < 0)
			_exit(126);
		_exit(err == ENOENT ? 127 : 126);
	}
	child = pid;
	sigprocmask(SIG_SETMASK, &caller_mask, NULL);
	close(report[1]);
	int err = 0;
	ssize_t got;
	do
		got = read(report[0], &err, sizeof(err));
	while (got < 0 && errno == EINTR);
	close(report[0]);
	/* Waited for without reaping it (WNOWAIT): a signal forwarded now
	 * reaches the child or its zombie, never a process that reused
	 * its pid.  Forwarding ends (blocked, `child` cleared) before the
	 * reap. */
	siginfo_t info;
	while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) < 0 &&
	       errno == EINTR)
		;
	sigprocmask(SIG_BLOCK, &fwd, NULL);
	child = 0;
	sigprocmask(SIG_SETMASK, &caller_mask, NULL);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got == sizeof(err)) {
		fprintf(stderr, "arenaguard: %s: %s\n", argv[0],
			strerror(err));
		return err == ENOENT ? 127 : 126;
	}
	*ran = 1;
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

/* path made absolute with the current directory (malloc'd), or NULL
 * (said). */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX];
	if (path[0] == '/' || !path[0])
		return strdup(path);
	if (!getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "arenaguard: the current directory: %s\n",
			strerror(errno));
		return NULL;
	}
	char *out = malloc(strlen(cwd) + strlen(path) + 2);
	if (!out) {
		fprintf(stderr, "arenaguard: out of memory\n");
		return NULL;
	}
	sprintf(out, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", path);
	return out;
}

static int parse_exitcode(const char *v, int *out)
{
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (!*v || *end || errno || n < 0 || n > 255) {
		fprintf(stderr, "arenaguard: --error-exitcode takes a number "
			"from 0 to 255, not '%s'\n", v);
		return -1;
	}
	*out = (int)n;
	return 0;
}

static void say_err(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void say_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* What the guard would read from the environment (static: it is big). */
static struct ag_config cfg;

/* The caller's guard settings (the old variables, ARENAGUARD_OPTIONS,
 * an enclosing launcher's channel), judged with the guard's own parser:
 * 0, or -1 when any of them does not parse (said, with where). */
static int judge_environment(void)
{
	ag_config_read(&cfg);
	if (!ag_config_bad(&cfg))
		return 0;
	ag_config_say(&cfg, say_err);
	fprintf(stderr, "arenaguard: the guard's settings in the environment "
		"(above) do not parse; COMMAND not run: fix or unset them\n");
	return -1;
}

/* The summary_file the environment already named (an enclosing
 * launcher's channel), which the launcher's own replaces for the
 * command: what this run counted is told to it at the end
 * (tell_enclosing), so that an enclosing launcher's SUMMARY and
 * --error-exitcode see through this one.  "": none. */
static char enclosing[AG_PATH_MAX + 1];

/* Appends this run's counts to the enclosing launcher's file, as one
 * guarded process of its run: "refused PID" when a process here
 * refused, then "counts PID ...". */
static void tell_enclosing(const struct run_counts *rc)
{
	if (!enclosing[0])
		return;
	int fd = open(enclosing, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY |
		      O_NONBLOCK);
	if (fd < 0)
		return;
	char line[256];
	int pid = (int)getpid(), n = 0;
	if (rc->refused)
		n = snprintf(line, sizeof(line), "refused %d\n", pid);
	if (rc->unguarded)     /* ran unguarded inside: so did the outer's */
		n += snprintf(line + n, sizeof(line) - (size_t)n,
			      "unguarded %d %.100s %.15s\n", pid,
			      rc->shown[0].path[0] ? rc->shown[0].path
						   : "(unnamed)",
			      rc->shown[0].why[0] ? rc->shown[0].why : "?");
	n += snprintf(line + n, sizeof(line) - (size_t)n,
		      "counts %d %llu %llu %llu %llu\n", pid, rc->submissions,
		      rc->blocked, rc->warned, rc->suppressed);
	if (write(fd, line, (size_t)n) < 0)
		fprintf(stderr, "arenaguard: cannot tell the enclosing "
			"launcher (%s): %s\n", enclosing, strerror(errno));
	close(fd);
}

/* Whether the guard, reading the environment as set now, takes the
 * launcher's channel: everything parses and summary_file is counts
 * (the one thing every run needs); said if not. */
static int options_take_effect(const char *counts)
{
	ag_config_read(&cfg);
	if (!ag_config_bad(&cfg) && !strcmp(cfg.summary_file, counts))
		return 1;
	ag_config_say(&cfg, say_err);
	fprintf(stderr, "arenaguard: the guard would not take the launcher's "
		"options (%s); COMMAND not run\n", AG_LAUNCHER_VAR);
	return 0;
}

/* Whether v is spelled in lower case (as --help spells every word). */
static int lower_case(const char *v)
{
	for (; *v; v++)
		if (*v >= 'A' && *v <= 'Z')
			return 0;
	return 1;
}

/*
 * Passes the guard option flag f's value v (NULL for AG_LF_SET) in the
 * launcher's channel, as f's row says (AG_LF_*).  0; -1 when it could
 * not be added (said; the command is not run); 125 when v is refused
 * (said; the launcher exits at once).  *dump: the --dump directory,
 * checked once the environment is judged.
 */
static int guard_flag(const struct flag *f, const char *v, const char **dump)
{
	struct stat st;
	char *abs;
	int bad;
	switch (f->how) {
	case AG_LF_SET:
		return add_option(f->key, "1");
	case AG_LF_WORD:
		if (!lower_case(v) || !ag_option_takes(f->key, v)) {
			fprintf(stderr, "arenaguard: --%s takes %s, not '%s'\n",
				f->name, f->takes, v);
			return 125;
		}
		return add_option(f->key, v);
	case AG_LF_ABSOLUTE:
		/* Absolute, like the suppressions: a process of the run
		 * that changed directory (make -C) logs where it was
		 * asked. */
		abs = absolute(v);
		bad = !abs || add_option(f->key, abs);
		free(abs);
		return bad ? -1 : 0;
	case AG_LF_DIRECTORY:
		*dump = v;
		abs = realpath(v, NULL);
		bad = add_option(f->key, abs ? abs : v);
		free(abs);
		return bad;
	case AG_LF_RULES:
		/* A rules file the guard could not read would leave the
		 * run gated on rules nobody checked; the guard reads only
		 * a regular file. */
		if (access(v, R_OK) != 0 || stat(v, &st)) {
			fprintf(stderr, "arenaguard: --%s %s: %s\n", f->name, v,
				strerror(errno));
			return 125;
		}
		if (!S_ISREG(st.st_mode)) {
			fprintf(stderr, "arenaguard: --%s %s: not a regular "
				"file\n", f->name, v);
			return 125;
		}
		/* Absolute: a process of the run that changed directory
		 * (make -C) reads the same rules. */
		abs = realpath(v, NULL);
		bad = add_option(f->key, abs ? abs : v);
		free(abs);
		return bad;
	}
	assert(0);
	return 125;
}

int main(int argc, char **argv)
{
	/* getopt's tables, from flags[] in rank order: a flag's val is
	 * its short name, or 256 + its place. */
	static struct option longopts[N_FLAGS + 1];
	static char shortopts[1 + 2 * N_FLAGS + 1] = "+";  /* "+": stop at
						  * the first non-option */
	sort_flags();
	for (size_t i = 0, n = 1; i < n_flags; i++) {
		const struct flag *f = flags[i];
		longopts[i] = (struct option){ f->name, f->has_arg, NULL,
			f->short_name ? f->short_name : 256 + (int)i };
		if (f->short_name) {
			shortopts[n++] = (char)f->short_name;
			if (f->has_arg == required_argument)
				shortopts[n++] = ':';
		}
	}
	const char *old = getenv(AG_LAUNCHER_VAR);
	options = old && *old ? strdup(old) : NULL;
	const char *lib = NULL, *dump = NULL;
	int error_exitcode = -1, quiet = 0, c, bad = 0, mode_flag = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct flag *f = NULL;
		for (size_t i = 0; i < n_flags && !f; i++)
			if (longopts[i].val == c)
				f = flags[i];
		if (!f) {
			usage(stderr);
			return 125;
		}
		if (f->key) {
			int rc = guard_flag(f, optarg, &dump);
			if (rc == 125)
				return 125;
			bad |= rc != 0;
			mode_flag |= !strcmp(f->key, "mode");
			continue;
		}
		switch (f - own_flags) {
		case OWN_EXITCODE:
			if (parse_exitcode(optarg, &error_exitcode) != 0)
				return 125;
			break;
		case OWN_QUIET: quiet = 1; break;
		case OWN_LIB: lib = optarg; break;
		case OWN_HELP:
			usage(stdout);
			return 0;
		case OWN_VERSION:
			printf("arenaguard %s\n", AG_VERSION);
			return 0;
		}
	}
	if (bad)
		return 125;
	if (judge_environment() != 0)
		return 125;
	strcpy(enclosing, cfg.summary_file);
	if (optind >= argc) {
		fprintf(stderr, "arenaguard: no command given\n");
		usage(stderr);
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

	/* The private channel: a file only this user can read, named in
	 * the guard's options, removed at the end. */
	const char *tmp = getenv("TMPDIR");
	char counts[PATH_MAX];
	snprintf(counts, sizeof(counts), "%s/arenaguard-counts-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(counts);
	struct stat made;
	if (fd < 0 || fstat(fd, &made) != 0) {
		fprintf(stderr, "arenaguard: cannot create the counts file %s: "
			"%s\n", counts, strerror(errno));
		return 125;
	}
	counts_dev = made.st_dev;
	counts_ino = made.st_ino;
	/* Its room reserved now (the size stays 0: lines are appended):
	 * a disk that fills during the run must not swallow a refusal or
	 * counts, which would make a run that blocked pass for a clean
	 * one.  A file system that cannot reserve is used as it is. */
	off_t room = COUNTS_RESERVE;
	while (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, room) != 0 &&
	       errno == ENOSPC && room > 4096)
		room /= 16;     /* a nearly full disk: what it has */
	if (room <= 4096 && fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, room) != 0 &&
	    errno == ENOSPC) {
		fprintf(stderr, "arenaguard: no room for the counts file %s: "
			"%s\n", counts, strerror(errno));
		close(fd);
		unlink(counts);
		return 125;
	}
	close(fd);
	/* Absolute (a relative TMPDIR): a process of the command that
	 * changed directory still finds it. */
	char *abs_counts = realpath(counts, NULL);
	if (abs_counts && strlen(abs_counts) < sizeof(counts))
		strcpy(counts, abs_counts);
	free(abs_counts);
	char runtime[256];
	const char *needs = needed_sanitizer(argv[optind], runtime,
					     sizeof(runtime)) == 0 ? runtime
								   : NULL;
	if (add_option("summary_file", counts) != 0 ||
	    set(AG_LAUNCHER_VAR, options) != 0 ||
	    !options_take_effect(counts) || preload(path, needs) != 0) {
		unlink(counts);
		return 125;
	}
	if (cfg.mode == AG_OFF && !mode_flag && !enclosing[0]) {
		/* The launcher's default is enforce: a run it would report
		 * clean must not be an unchecked one because a variable
		 * was left in the environment.  Inside another launcher
		 * (enclosing), off is that one's --mode off: it refuses
		 * an environment that switches the guard off itself. */
		fprintf(stderr, "arenaguard: the environment switches the "
			"guard off (ARENAGUARD=off, or mode=off in "
			"ARENAGUARD_OPTIONS or %s): %s would run unchecked; "
			"not run (unset it, or say --mode off)\n",
			AG_LAUNCHER_VAR, argv[optind]);
		unlink(counts);
		return 125;
	}

	int ran = 0;
	int status = run(&argv[optind], &ran);
	struct run_counts rc = { 0 };
	int lost = read_counts(counts, &rc);
	int filled = !lost && counts_filled(counts);
	unlink(counts);
	tell_enclosing(&rc);
	if (!ran)
		return status;
	if (lost) {
		/* Said even under --quiet: what the run blocked is not
		 * known, so it must not pass for a clean one. */
		fprintf(stderr, "arenaguard: the run's summary file %s was "
			"removed or replaced while %s ran: its counts are "
			"lost\n", counts, argv[optind]);
		return error_exitcode >= 0 ? error_exitcode : 125;
	}
	if (filled) {
		/* Said even under --quiet, as lost counts are. */
		fprintf(stderr, "arenaguard: the run's summary file %s filled "
			"its file system while %s ran: lines of its processes "
			"may be lost (refusals among them); free space in "
			"TMPDIR (%s) and run it again\n", counts, argv[optind],
			getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR")
							      : "/tmp");
		return error_exitcode >= 0 ? error_exitcode : 125;
	}
	if (!rc.loaded) {
		/* Said even under --quiet: a clean-looking run that nothing
		 * guarded must never pass for a guarded one. */
		fprintf(stderr, "arenaguard: %s ran unguarded: no process of "
			"it loaded the guard (a statically linked program, or "
			"one that ld.so runs in secure mode: setuid, setgid or "
			"file capabilities, where LD_PRELOAD entries with a "
			"slash are dropped); see arenaguard(1)\n",
			argv[optind]);
		return error_exitcode >= 0 ? error_exitcode : 125;
	}
	if (rc.unguarded) {
		/* Said even under --quiet: a program the guard did not see
		 * may have run what it would have refused. */
		int n = rc.unguarded < UNGUARDED_SHOWN ? rc.unguarded
						       : UNGUARDED_SHOWN;
		for (int i = 0; i < n; i++)
			if (rc.shown[i].path[0])
				fprintf(stderr, "arenaguard: %s ran unguarded "
					"(%s)\n", rc.shown[i].path,
					unguarded_reason(rc.shown[i].why));
		if (rc.unguarded > n || !rc.shown[0].path[0])
			fprintf(stderr, "arenaguard: %d program%s of %s ran "
				"unguarded in all\n", rc.unguarded,
				rc.unguarded > 1 ? "s" : "", argv[optind]);
		fprintf(stderr, "arenaguard: %s was guarded only in part; "
			"see arenaguard(1)\n", argv[optind]);
	}
	if (!quiet) {
		fprintf(stderr, "arenaguard: SUMMARY: %llu submissions, %llu "
			"blocked, %llu warned, %llu suppressed\n",
			rc.submissions, rc.blocked, rc.warned, rc.suppressed);
		if (rc.unfinished)
			fprintf(stderr, "arenaguard: (%d process%s refused a "
				"submission and ended without giving %s counts: "
				"killed, or an exec)\n", rc.unfinished,
				rc.unfinished > 1 ? "es" : "",
				rc.unfinished > 1 ? "their" : "its");
	}
	if (error_exitcode >= 0 && (rc.blocked || rc.warned || rc.refused))
		return error_exitcode;
	if (rc.unguarded)
		return error_exitcode >= 0 ? error_exitcode : 125;
	return status;
}
