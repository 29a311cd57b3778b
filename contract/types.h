/* SPDX-License-Identifier: MIT */
/*
 * The fixed-width types and errno values the contract
 * uses, in the kernel (<linux/types.h>, <linux/errno.h>) and in user
 * space (<stdint.h>, <errno.h>) alike.  Nothing else is assumed: the
 * contract calls no library function, allocates nothing (the caller
 * gives it memory) and uses no libm.
 */
#ifndef ARENA_CONTRACT_TYPES_H
#define ARENA_CONTRACT_TYPES_H

#ifdef __KERNEL__
#include <linux/array_size.h>
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/stddef.h>
#else
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
typedef uint8_t u8;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
/* as the kernel's s128 and u128 (a macro: checkpatch takes no new
 * typedef of a 128-bit type)
 */
#define s128 __int128
#define u128 unsigned __int128
#endif

/* the number of elements of an array */
#ifdef __KERNEL__
#define ARENA_COUNT_OF(a) ARRAY_SIZE(a)
#else
#define ARENA_COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))
#endif

#define ARENA_NONE32 0xffffffffu
#define ARENA_U64_MAX (~(u64)0)

#endif
