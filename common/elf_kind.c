/* SPDX-License-Identifier: MIT */
/* ELF headers, read with pread only (elf_kind.h). */
#define _GNU_SOURCE
#include <elf.h>
#include <string.h>
#include <unistd.h>

#include "elf_kind.h"

#define MAX_PHNUM 4096
#define PHDRS_AT_ONCE 32

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

/* 0 when the header read is sane for this process to walk. */
static int is_sane(const ElfW(Ehdr) *eh)
{
	return eh->e_phentsize == sizeof(ElfW(Phdr)) && eh->e_phnum &&
	       eh->e_phnum <= MAX_PHNUM ? 0 : -1;
}

int elf_read_ehdr(int fd, ElfW(Ehdr) *eh)
{
	if (elf_read_at(fd, eh, sizeof(*eh), 0) != 0 || is_elf(eh) ||
	    is_native(eh) || is_sane(eh))
		return -1;
	return 0;
}

enum elf_kind elf_kind(int fd)
{
	ElfW(Ehdr) eh;
	/* One read; a file shorter than this class's header may still be
	 * an ELF file of another class. */
	ssize_t got = pread(fd, &eh, sizeof(eh), 0);
	if (got < EI_NIDENT || is_elf(&eh))
		return ELF_NOT;
	if ((size_t)got < sizeof(eh) || is_native(&eh))
		return ELF_FOREIGN;
	if (is_sane(&eh))
		return ELF_NOT;      /* malformed: the kernel refuses it */
	/* PHDRS_AT_ONCE headers per read, on the stack: one read for
	 * every ordinary program. */
	ElfW(Phdr) ph[PHDRS_AT_ONCE];
	for (size_t i = 0; i < eh.e_phnum; i += PHDRS_AT_ONCE) {
		size_t n = eh.e_phnum - i < PHDRS_AT_ONCE ? eh.e_phnum - i
							  : PHDRS_AT_ONCE;
		if (elf_read_at(fd, ph, n * sizeof(ph[0]),
				eh.e_phoff + i * sizeof(ph[0])) != 0)
			return ELF_NOT;
		for (size_t k = 0; k < n; k++)
			if (ph[k].p_type == PT_INTERP)
				return ELF_DYNAMIC;
	}
	return ELF_STATIC;
}
