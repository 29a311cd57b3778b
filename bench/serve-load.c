/* SPDX-License-Identifier: MIT */
/*
 * serve-load: arena-serve under load with ARENAGUARD=off, warn and
 * enforce side by side (docs/performance.md, "A server under load").
 *
 *   serve-load [--quick] [--rounds R] [--seconds S] [--connections C]
 *              [--threads N] [--max-tokens K] [--rss-requests N]
 *              [--only load|rss] [--baseline LIB]
 *
 * Every server is a child with LD_PRELOAD="libarenaguard.so
 * libarenasim.so" and only ARENAGUARD differing.  A round starts one
 * server per mode, in an order that rotates from round to round, and
 * for each: the time from fork to the first served completion (the
 * server's start-up, the guard's load, the first program's creation and
 * certification), a warm-up that creates every shape's program, then C
 * closed-loop keep-alive connections for S seconds, each request a
 * prompt of 2 to 8 random tokens and K new tokens.  Per mode: requests
 * and tokens per second, p50 and p99 latency, and the server's CPU time
 * per request (its threads' schedstat, which other processes on a shared
 * machine do not inflate as they do wall time); the table gives the
 * medians over the rounds, and of the per-round ratios guard / off.
 * --baseline LIB adds a fourth server per round, enforcing with another
 * build's libarenaguard.so (the same server and simulator): a guard
 * change measured side by side with the guard before it.
 *
 * Resident memory: one enforce server (and one off server, for
 * reference) served 10^3 requests, then up to --rss-requests (10^5);
 * VmRSS of the server after each, and their ratio.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "model.h"

#ifndef AG_ARENA_SERVE
#error "AG_ARENA_SERVE must be defined by the build"
#endif

enum mode { OFF, WARN, ENFORCE, BASELINE, MODES };
static const char *const mode_name[MODES] = { "off", "warn", "enforce",
					      "baseline" };

struct options {
	int rounds, seconds, connections, threads, max_tokens;
	long rss_requests;
	const char *only;
	const char *baseline;   /* another guard library, or NULL */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "serve-load: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* ---- a server ---- */

struct server {
	pid_t pid;
	int port;
	uint64_t started;   /* fork */
};

static void start_server(struct server *s, enum mode m,
			 const struct options *o)
{
	char threads[16], seqs[16];
	snprintf(threads, sizeof(threads), "%d", o->threads);
	snprintf(seqs, sizeof(seqs), "%d", o->connections);
	char *argv[] = { (char *)AG_ARENA_SERVE, "--port", "0", "--layers",
			 "1", "--max-context", "16", "--threads", threads,
			 "--sequences", seqs,
			 /* every connection is from 127.0.0.1 */
			 "--per-client-connections", "0", NULL };
	int out[2];
	if (pipe(out) != 0)
		die("pipe");
	s->started = now_ns();
	s->pid = fork();
	if (s->pid < 0)
		die("fork");
	if (s->pid == 0) {
		dup2(out[1], STDOUT_FILENO);
		close(out[0]);
		close(out[1]);
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		char preload[4096];
		snprintf(preload, sizeof(preload), "%s %s", m == BASELINE
			 ? o->baseline : AG_GUARD_LIB, AG_ARENASIM);
		setenv("LD_PRELOAD", preload, 1);
		setenv("ARENAGUARD", m == BASELINE ? "enforce" : mode_name[m],
		       1);
		unsetenv("ARENAGUARD_LOG");
		unsetenv("ARENAGUARD_STATS");
		unsetenv("ARENASIM_REQUIRE_SEAL");
		unsetenv("ARENASIM_POISON");
		execv(AG_ARENA_SERVE, argv);
		_exit(127);
	}
	close(out[1]);
	char line[256];
	s->port = http_server_port(out[0], line, sizeof(line));
	close(out[0]);
	if (s->port < 0) {
		fprintf(stderr, "serve-load: the server did not start: '%s'\n",
			line);
		exit(2);
	}
}

static void stop_server(struct server *s)
{
	kill(s->pid, SIGTERM);
	int st;
	waitpid(s->pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fprintf(stderr, "serve-load: the %d server did not exit 0\n",
			(int)s->pid);
}

/* VmRSS of pid, bytes (0 if unreadable). */
static size_t rss_of(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	size_t kb = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %zu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

/* CPU time of every live thread of pid so far, ns (the first field of
 * /proc/PID/task/TID/schedstat): the server's own cost, which the other
 * processes of a shared machine do not inflate as they do wall time. */
static uint64_t cpu_ns_of(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	uint64_t sum = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char stat[64 + sizeof(e->d_name) + 16];
		snprintf(stat, sizeof(stat), "%s/%s/schedstat", path,
			 e->d_name);
		FILE *f = fopen(stat, "r");
		unsigned long long ns;
		if (f && fscanf(f, "%llu", &ns) == 1)
			sum += ns;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return sum;
}

/* ---- requests ---- */

/* One completion of a random shape 2..8; 0 if served (200). */
static int complete(struct http_client *c, uint64_t *rng, int max_tokens)
{
	char body[512];
	int t = 2 + (int)(model_random(rng) % 7);
	int len = snprintf(body, sizeof(body), "{\"prompt\": [");
	for (int i = 0; i < t; i++)
		len += snprintf(body + len, sizeof(body) - (size_t)len, "%s%d",
				i ? "," : "", (int)(model_random(rng) % 64));
	snprintf(body + len, sizeof(body) - (size_t)len,
		 "], \"max_tokens\": %d}", max_tokens);
	if (http_call(c, "POST", "/v1/completions", body) != 0)
		return -1;
	return c->status == 200 ? 0 : -1;
}

struct worker {
	pthread_t th;
	int port, max_tokens;
	uint64_t seed, deadline;   /* deadline 0: `count` requests */
	long count;
	long done, errors;
	uint64_t *lat;
	size_t n_lat, cap;
};

static void *worker_main(void *p)
{
	struct worker *w = p;
	struct http_client c;
	http_client_init(&c, w->port);
	uint64_t rng = w->seed;
	for (;;) {
		if (w->deadline ? now_ns() >= w->deadline : w->done >= w->count)
			break;
		uint64_t t0 = now_ns();
		int rc = complete(&c, &rng, w->max_tokens);
		uint64_t dt = now_ns() - t0;
		if (rc != 0) {
			w->errors++;
			continue;
		}
		w->done++;
		if (w->n_lat == w->cap) {
			w->cap = w->cap ? 2 * w->cap : 4096;
			w->lat = realloc(w->lat, w->cap * sizeof(*w->lat));
			if (!w->lat)
				die("realloc");
		}
		w->lat[w->n_lat++] = dt;
	}
	http_client_close(&c);
	return NULL;
}

/* Runs n connections for `seconds` (or `count` requests in all). */
static struct worker *run_load(int port, int n, double seconds, long count,
			       int max_tokens, uint64_t seed)
{
	struct worker *w = calloc((size_t)n, sizeof(*w));
	if (!w)
		die("calloc");
	uint64_t deadline = seconds > 0 ? now_ns() +
		(uint64_t)(seconds * 1e9) : 0;
	for (int i = 0; i < n; i++) {
		w[i] = (struct worker){ .port = port, .max_tokens = max_tokens,
			.seed = seed + (uint64_t)i, .deadline = deadline,
			.count = count / n + (i < count % n) };
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i]) != 0)
			die("pthread_create");
	}
	for (int i = 0; i < n; i++)
		pthread_join(w[i].th, NULL);
	return w;
}

static void free_load(struct worker *w, int n)
{
	for (int i = 0; i < n; i++)
		free(w[i].lat);
	free(w);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- the load rounds ---- */

struct sample {
	double rps, tps, p50_ms, p99_ms, first_ms, cpu_us;
	long errors;
};

static struct sample measure(enum mode m, const struct options *o,
			     uint64_t seed)
{
	struct sample r = { 0 };
	struct server s;
	start_server(&s, m, o);
	/* The first served completion. */
	struct http_client c;
	http_client_init(&c, s.port);
	uint64_t rng = seed;
	while (complete(&c, &rng, 1) != 0)
		usleep(100);
	r.first_ms = (double)(now_ns() - s.started) * 1e-6;
	/* Every shape's program, and warm caches. */
	for (int i = 0; i < 100; i++)
		complete(&c, &rng, o->max_tokens);
	http_client_close(&c);

	uint64_t t0 = now_ns(), cpu0 = cpu_ns_of(s.pid);
	struct worker *w = run_load(s.port, o->connections, o->seconds, 0,
				    o->max_tokens, seed);
	double elapsed = (double)(now_ns() - t0) * 1e-9;
	uint64_t cpu = cpu_ns_of(s.pid) - cpu0;
	size_t n = 0;
	for (int i = 0; i < o->connections; i++) {
		n += w[i].n_lat;
		r.errors += w[i].errors;
	}
	uint64_t *all = malloc((n ? n : 1) * sizeof(*all));
	if (!all)
		die("malloc");
	size_t k = 0;
	for (int i = 0; i < o->connections; i++) {
		memcpy(all + k, w[i].lat, w[i].n_lat * sizeof(*all));
		k += w[i].n_lat;
	}
	qsort(all, n, sizeof(*all), cmp_u64);
	r.rps = (double)n / elapsed;
	r.tps = r.rps * o->max_tokens;
	r.p50_ms = n ? (double)all[n / 2] * 1e-6 : 0;
	r.p99_ms = n ? (double)all[(n * 99) / 100] * 1e-6 : 0;
	r.cpu_us = n ? (double)cpu * 1e-3 / (double)n : 0;
	free(all);
	free_load(w, o->connections);
	stop_server(&s);
	return r;
}

static void load_rounds(const struct options *o)
{
	int R = o->rounds, n = o->baseline ? MODES : BASELINE;
	struct sample *s = calloc((size_t)R * MODES, sizeof(*s));
	if (!s)
		die("calloc");
	printf("load: %d rounds of %d s, %d connections, %d server threads, "
	       "prompts of 2..8 tokens, %d new tokens, 1 layer\n", R,
	       o->seconds, o->connections, o->threads, o->max_tokens);
	if (o->baseline)
		printf("baseline: ARENAGUARD=enforce with %s\n", o->baseline);
	for (int r = 0; r < R; r++) {
		for (int i = 0; i < n; i++) {
			enum mode m = (enum mode)((r + i) % n);
			struct sample *x = &s[r * MODES + m];
			*x = measure(m, o, 0x10adull + (uint64_t)r);
			printf("  round %d %-8s %8.1f req/s %8.1f tok/s  p50 "
			       "%7.3f ms  p99 %7.3f ms  first %7.1f ms  cpu %6.1f us/req%s\n",
			       r + 1, mode_name[m], x->rps, x->tps, x->p50_ms,
			       x->p99_ms, x->first_ms, x->cpu_us,
			       x->errors ? "  (errors!)" : "");
			fflush(stdout);
		}
	}
	double *v = calloc((size_t)R, sizeof(*v));
	if (!v)
		die("calloc");
#define MED(expr) ({ for (int r_ = 0; r_ < R; r_++) { \
		const struct sample *x = &s[r_ * MODES]; (void)x; \
		v[r_] = (expr); } median(v, R); })
	printf("\n| measure | off | warn | enforce |%s warn / off | "
	       "enforce / off |%s target |\n|---|---|---|---|%s---|---|%s---|"
	       "\n", o->baseline ? " baseline |" : "",
	       o->baseline ? " baseline / off | enforce / baseline |" : "",
	       o->baseline ? "---|" : "", o->baseline ? "---|---|" : "");
	static const struct {
		const char *name, *target;
		size_t field;
	} rows[] = {
		{ "requests/s", ">= 0.97", offsetof(struct sample, rps) },
		{ "tokens/s", ">= 0.97", offsetof(struct sample, tps) },
		{ "p50 latency (ms)", "", offsetof(struct sample, p50_ms) },
		{ "p99 latency (ms)", "<= 1.05", offsetof(struct sample, p99_ms) },
		{ "start to first served request (ms)", "",
		  offsetof(struct sample, first_ms) },
		{ "server CPU per request (us)", "",
		  offsetof(struct sample, cpu_us) },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t f = rows[i].field;
#define AT(m) (*(const double *)((const char *)&x[m] + f))
		double off = MED(AT(OFF)), warn = MED(AT(WARN)),
		       enf = MED(AT(ENFORCE));
		double rw = MED(AT(WARN) / AT(OFF)), re = MED(AT(ENFORCE) /
							      AT(OFF));
		printf("| %s | %.3f | %.3f | %.3f |", rows[i].name, off, warn,
		       enf);
		if (o->baseline)
			printf(" %.3f |", MED(AT(BASELINE)));
		printf(" %.3f | %.3f |", rw, re);
		if (o->baseline)
			printf(" %.3f | %.3f |", MED(AT(BASELINE) / AT(OFF)),
			       MED(AT(ENFORCE) / AT(BASELINE)));
#undef AT
		printf(" %s |\n", rows[i].target);
	}
#undef MED
	free(v);
	free(s);
}

/* ---- resident memory ---- */

static void rss_run(const struct options *o)
{
	printf("\nresident memory: %d connections, VmRSS of the server after "
	       "10^3 and after %ld requests\n", o->connections,
	       o->rss_requests);
	printf("\n| mode | after 1000 | after %ld | ratio | target |\n"
	       "|---|---|---|---|---|\n", o->rss_requests);
	for (enum mode m = OFF; m <= ENFORCE; m += ENFORCE - OFF) {
		struct server s;
		start_server(&s, m, o);
		struct worker *w = run_load(s.port, o->connections, 0, 1000,
					    o->max_tokens, 0x7755);
		free_load(w, o->connections);
		size_t a = rss_of(s.pid);
		uint64_t t0 = now_ns();
		w = run_load(s.port, o->connections, 0, o->rss_requests - 1000,
			     o->max_tokens, 0x7756);
		long errors = 0;
		for (int i = 0; i < o->connections; i++)
			errors += w[i].errors;
		free_load(w, o->connections);
		size_t b = rss_of(s.pid);
		double secs = (double)(now_ns() - t0) * 1e-9;
		stop_server(&s);
		printf("| %s | %.1f MiB | %.1f MiB | %.3f | %s |%s "
		       "(%.0f s)\n", mode_name[m], (double)a / 1048576.0,
		       (double)b / 1048576.0, (double)b / (double)a,
		       m == ENFORCE ? "<= 1.1" : "", errors ? " errors!" : "",
		       secs);
		fflush(stdout);
	}
}

int main(int argc, char **argv)
{
	struct options o = { .rounds = 5, .seconds = 5, .connections = 8,
			     .threads = 4, .max_tokens = 4,
			     .rss_requests = 100000, .only = NULL };
	enum { O_ROUNDS = 256, O_SECONDS, O_CONN, O_THREADS, O_TOKENS, O_RSS,
	       O_ONLY, O_QUICK, O_BASELINE };
	static const struct option longopts[] = {
		{ "rounds", required_argument, NULL, O_ROUNDS },
		{ "seconds", required_argument, NULL, O_SECONDS },
		{ "connections", required_argument, NULL, O_CONN },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "max-tokens", required_argument, NULL, O_TOKENS },
		{ "rss-requests", required_argument, NULL, O_RSS },
		{ "only", required_argument, NULL, O_ONLY },
		{ "quick", no_argument, NULL, O_QUICK },
		{ "baseline", required_argument, NULL, O_BASELINE },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case O_ROUNDS: o.rounds = atoi(optarg); break;
		case O_SECONDS: o.seconds = atoi(optarg); break;
		case O_CONN: o.connections = atoi(optarg); break;
		case O_THREADS: o.threads = atoi(optarg); break;
		case O_TOKENS: o.max_tokens = atoi(optarg); break;
		case O_RSS: o.rss_requests = atol(optarg); break;
		case O_ONLY: o.only = optarg; break;
		case O_BASELINE: o.baseline = optarg; break;
		case O_QUICK:
			o.rounds = 1;
			o.seconds = 1;
			o.rss_requests = 10000;
			break;
		default:
			fprintf(stderr, "usage: serve-load [--quick] [--rounds R] "
				"[--seconds S] [--connections C] [--threads N] "
				"[--max-tokens K] [--rss-requests N] "
				"[--only load|rss] [--baseline LIB]\n");
			return 2;
		}
	}
	if (o.rounds < 1 || o.seconds < 1 || o.connections < 1 ||
	    o.connections > 256 || o.threads < 1 || o.max_tokens < 1 ||
	    o.max_tokens > 64 || o.rss_requests < 2000 ||
	    (o.baseline && (strlen(o.baseline) > 2048 ||
			    access(o.baseline, R_OK) != 0))) {
		fprintf(stderr, "serve-load: an option is out of range\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if (!o.only || strcmp(o.only, "load") == 0)
		load_rounds(&o);
	if (!o.only || strcmp(o.only, "rss") == 0)
		rss_run(&o);
	return 0;
}
