/* SPDX-License-Identifier: MIT */
/*
 * contract/types.h - the fixed-width types and errno values the contract
 * uses, in the kernel (<linux/types.h>, <linux/errno.h>) and in user
 * space (<stdint.h>, <errno.h>) alike.  Nothing else is assumed: the
 * contract calls no library function, allocates nothing (the caller
 * gives it memory) and uses no libm.
 */
#ifndef ARENA_CONTRACT_TYPES_H
#define ARENA_CONTRACT_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/stddef.h>
typedef u8 ac_u8;
typedef u32 ac_u32;
typedef u64 ac_u64;
typedef s64 ac_s64;
#else
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
typedef uint8_t ac_u8;
typedef uint32_t ac_u32;
typedef uint64_t ac_u64;
typedef int64_t ac_s64;
#endif

typedef __int128 ac_s128;
typedef unsigned __int128 ac_u128;

#define ARENA_NONE32 0xffffffffu
#define ARENA_U64_MAX (~(ac_u64)0)

#endif
