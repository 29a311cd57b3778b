/* SPDX-License-Identifier: MIT */
/* ELF headers, read with pread only (elf_kind.h). */
#define _GNU_SOURCE
#include <elf.h>
#include <string.h>
#include <unistd.h>

#include "elf_kind.h"

#define MAX_PHNUM 4096

/* The header of the module this is linked into (the linker defines
 * it): its machine is the one this process runs. */
extern const ElfW(Ehdr) __ehdr_start;

int elf_read_at(int fd, void *buf, size_t len, uint64_t off)
{
	if (off > (uint64_t)INT64_MAX - len)
		return -1;
	ssize_t got = pread(fd, buf, len, (off_t)off);
	return got == (ssize_t)len ? 0 : -1;
}

/* 0 when eh names an ELF file at all, -1 otherwise. */
static int is_elf(const ElfW(Ehdr) *eh)
{
	return memcmp(eh->e_ident, ELFMAG, SELFMAG) ? -1 : 0;
}

/* 0 when eh is of this process's class and machine. */
static int is_native(const ElfW(Ehdr) *eh)
{
	return eh->e_ident[EI_CLASS] == __ehdr_start.e_ident[EI_CLASS] &&
	       eh->e_machine == __ehdr_start.e_machine ? 0 : -1;
}

int elf_read_ehdr(int fd, ElfW(Ehdr) *eh)
{
	if (elf_read_at(fd, eh, sizeof(*eh), 0) != 0 || is_elf(eh) ||
	    is_native(eh) || eh->e_phentsize != sizeof(ElfW(Phdr)) ||
	    !eh->e_phnum || eh->e_phnum > MAX_PHNUM)
		return -1;
	return 0;
}

enum elf_kind elf_kind(int fd)
{
	ElfW(Ehdr) eh;
	/* The identity bytes first: a file shorter than a 64-bit header
	 * may still be a 32-bit ELF file. */
	if (elf_read_at(fd, &eh, EI_NIDENT, 0) != 0 || is_elf(&eh))
		return ELF_NOT;
	if (elf_read_at(fd, &eh, sizeof(eh), 0) != 0 || is_native(&eh))
		return ELF_FOREIGN;
	if (elf_read_ehdr(fd, &eh) != 0)
		return ELF_NOT;      /* malformed: the kernel refuses it */
	for (size_t i = 0; i < eh.e_phnum; i++) {
		ElfW(Phdr) ph;
		if (elf_read_at(fd, &ph, sizeof(ph),
				eh.e_phoff + i * sizeof(ph)) != 0)
			return ELF_NOT;
		if (ph.p_type == PT_INTERP)
			return ELF_DYNAMIC;
	}
	return ELF_STATIC;
}
