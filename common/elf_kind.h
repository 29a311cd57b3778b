/* SPDX-License-Identifier: MIT */
/*
 * What an executable file is to ld.so, read from its ELF header and
 * program headers: the one reader of ELF headers (the launcher's
 * sanitizer check, tools/needed.c, and the guard's exec check,
 * shim/exec.c).  pread only, no allocation, no lock: callable in a
 * vfork child.
 */
#ifndef ARENAGUARD_ELF_KIND_H
#define ARENAGUARD_ELF_KIND_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>

enum elf_kind {
	ELF_NOT,        /* not an ELF file (a script, data, too short) */
	ELF_DYNAMIC,    /* of this machine and class, with PT_INTERP */
	ELF_STATIC,     /* of this machine and class, no PT_INTERP
			 * (static, static-pie): ld.so never runs */
	ELF_FOREIGN,    /* another class or machine: another ld.so,
			 * which cannot load this one's libraries */
};

/* Reads exactly len bytes at off of fd: 0, or -1. */
int elf_read_at(int fd, void *buf, size_t len, uint64_t off);

/* Reads fd's ELF header into *eh: 0 when it is an ELF file of this
 * process's class and machine with a sane program header table
 * (entries of this class's size, 1 to 4096 of them), else -1. */
int elf_read_ehdr(int fd, ElfW(Ehdr) *eh);

/* What fd's file is (enum elf_kind).  Reads at most the ELF header and
 * the program headers, 32 at a time (2 KiB of stack). */
enum elf_kind elf_kind(int fd);

#endif
