/* SPDX-License-Identifier: MIT */
/*
 * The sanitizer runtime a command's binary links against, read from its
 * dynamic section (needed.h).  Only the binary the launcher executes is
 * read: a shell script or a program that runs others (env, make) is not
 * followed (docs/arenaguard.1, "Sanitized programs").
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_kind.h"
#include "needed.h"

int is_sanitizer(const char *entry, size_t len)
{
	static const char *const names[] = { "libasan", "libtsan", "libubsan",
					      "liblsan", "libhwasan" };
	const char *base = entry;
	for (size_t i = 0; i < len; i++)
		if (entry[i] == '/')
			base = entry + i + 1;
	size_t left = len - (size_t)(base - entry);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);
		if (left >= n && !strncmp(base, names[i], n))
			return 1;
	}
	return 0;
}

/* The file execvp would run for command, opened read-only: an fd or -1.
 * O_NONBLOCK|O_NOCTTY: a FIFO or a terminal named as the command is
 * never waited on or taken (execvp then refuses it); only a regular
 * file is read. */
static int open_command(const char *command)
{
	if (strchr(command, '/')) {
		int fd = open(command, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
			      O_NOCTTY);
		struct stat st;
		if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
			close(fd);
			return -1;
		}
		return fd;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	for (const char *p = path;; ) {
		size_t n = strcspn(p, ":");
		char file[PATH_MAX];
		int w = snprintf(file, sizeof(file), "%.*s%s%s", (int)n,
				 n ? p : ".", "/", command);
		struct stat st;
		if (w > 0 && (size_t)w < sizeof(file) &&
		    access(file, X_OK) == 0 && stat(file, &st) == 0 &&
		    S_ISREG(st.st_mode))
			return open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
				    O_NOCTTY);
		if (!p[n])
			return -1;
		p += n + 1;
	}
}

/* The file offset of virtual address v, by the PT_LOAD that maps it
 * from the file: 0, or -1. */
static int file_offset(const ElfW(Phdr) *ph, size_t n, uint64_t v,
		       uint64_t *off)
{
	for (size_t i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && v >= ph[i].p_vaddr &&
		    v - ph[i].p_vaddr < ph[i].p_filesz) {
			*off = ph[i].p_offset + (v - ph[i].p_vaddr);
			return 0;
		}
	return -1;
}

#define MAX_DYNAMIC (1u << 20)

static int scan(int fd, char *out, size_t len)
{
	ElfW(Ehdr) eh;
	if (elf_read_ehdr(fd, &eh) != 0)
		return -1;
	ElfW(Phdr) *ph = calloc(eh.e_phnum, sizeof(*ph));
	ElfW(Dyn) *dyn = NULL;
	int rc = -1;
	if (!ph || elf_read_at(fd, ph, eh.e_phnum * sizeof(*ph), eh.e_phoff))
		goto out;
	const ElfW(Phdr) *d = NULL;
	for (size_t i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			d = &ph[i];
	if (!d || d->p_filesz > MAX_DYNAMIC)
		goto out;
	size_t n_dyn = d->p_filesz / sizeof(*dyn);
	dyn = malloc(n_dyn * sizeof(*dyn) + 1);
	if (!dyn || elf_read_at(fd, dyn, n_dyn * sizeof(*dyn), d->p_offset))
		goto out;
	uint64_t strtab = 0, strsz = 0;
	int have_strtab = 0;
	for (size_t i = 0; i < n_dyn && dyn[i].d_tag != DT_NULL; i++) {
		if (dyn[i].d_tag == DT_STRTAB)
			strtab = dyn[i].d_un.d_ptr, have_strtab = 1;
		else if (dyn[i].d_tag == DT_STRSZ)
			strsz = dyn[i].d_un.d_val;
	}
	uint64_t base;
	if (!have_strtab || file_offset(ph, eh.e_phnum, strtab, &base))
		goto out;
	for (size_t i = 0; i < n_dyn && dyn[i].d_tag != DT_NULL; i++) {
		if (dyn[i].d_tag != DT_NEEDED || dyn[i].d_un.d_val >= strsz)
			continue;
		char name[256];
		uint64_t at = dyn[i].d_un.d_val;
		size_t want = strsz - at < sizeof(name) ? (size_t)(strsz - at)
							: sizeof(name);
		if (base > UINT64_MAX - at)
			continue;
		ssize_t got = pread(fd, name, want, (off_t)(base + at));
		if (got <= 0)
			continue;
		size_t n = strnlen(name, (size_t)got);
		if (n == (size_t)got || !n || strchr(name, '/') ||
		    !is_sanitizer(name, n) || n >= len ||
		    strcspn(name, " :") != n)
			continue;
		memcpy(out, name, n + 1);
		rc = 0;
		break;
	}
out:
	free(dyn);
	free(ph);
	return rc;
}

int needed_sanitizer(const char *command, char *out, size_t len)
{
	int fd = open_command(command);
	if (fd < 0)
		return -1;
	int rc = scan(fd, out, len);
	close(fd);
	return rc;
}
