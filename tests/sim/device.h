/* SPDX-License-Identifier: MIT */
/* Helpers shared by the sim-tests suites: the device through its ABI. */
#ifndef SIM_TESTS_DEVICE_H
#define SIM_TESTS_DEVICE_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include <arenaguard/uapi.h>

#include "builder.h"
#include "seal.h"

/* A pointer no process has mapped: every copy through it faults. */
#define BAD ((void *)16)
#define BADU ((uint64_t)16)

Suite *suite_node(void);      /* test_node.c */
Suite *suite_bo(void);        /* test_bo.c */
Suite *suite_program(void);   /* test_program.c */
Suite *suite_execute(void);   /* test_execute.c */
Suite *suite_uring(void);     /* test_uring.c */
Suite *suite_seal(void);      /* test_seal.c */
Suite *suite_shared(void);    /* test_shared.c */

/* `sim-tests --poison-demo NAME`: test_execute.c's child mode. */
int poison_demo(const char *name);
/* `sim-tests --require-seal-demo`: test_seal.c's child mode. */
int require_seal_demo(void);
/* `sim-tests --scm-demo SOCK`: test_shared.c's receiving process. */
int scm_demo(int sock);

/* Opens the node (fails the test if it cannot). */
int dev_open(void);

/* Whether the node is the simulator's: libarenasim.so is mapped in this
 * process.  Otherwise the suites run on a kernel driver (arena.ko, the
 * kernel stage), where a case whose premise is the simulator's says so
 * (not_applicable) and passes without checking anything. */
int dev_simulated(void);
/* Prints "SUITE: CASE: not applicable on a kernel driver: WHY". */
void not_applicable(const char *suite, const char *name, const char *why);

/* ioctl(2): 0, or the errno it failed with. */
int xioctl(int fd, unsigned long request, void *arg);

uint32_t bo_new(int fd, uint64_t address, uint64_t size);
void bo_put(int fd, uint32_t bo, uint64_t offset, const void *data, size_t len);
void bo_get(int fd, uint32_t bo, uint64_t offset, void *data, size_t len);
/* mmap(2) of len bytes of the buffer, MAP_SHARED, read and write. */
void *bo_map(int fd, uint32_t bo, size_t len);

uint32_t prog_new(int fd, struct pb *b);   /* frees b */
uint32_t prog_from_image(int fd, const void *image, size_t len);
uint32_t sched_new(int fd, uint32_t program);
int sched_append(int fd, uint32_t schedule, const struct drm_arena_ref *refs,
		 uint32_t count);          /* errno */
/* Submits; returns the sequence number. */
uint64_t sched_submit(int fd, uint32_t schedule);
/* DRM_IOCTL_ARENA_SEAL's errno; *context gets its out field. */
int dev_seal(int fd, uint64_t *context);
/* DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED's errno; *seqno its out field. */
int sched_submit_sealed(int fd, uint32_t schedule, struct arena_seal_value seal,
			uint64_t *seqno);
/* The seal of what s was fed so far (common/seal.c's), by value. */
struct arena_seal_value seal_now(const struct arena_seal *s);
/* seal with its first byte changed: a wrong seal. */
struct arena_seal_value seal_wrong(struct arena_seal_value seal);
/* The image of two FILL launches: 1.0 at 0x10000, 2.0 at 0x10010. */
uint8_t *two_fills_image(size_t *len);
/* DRM_IOCTL_ARENA_WAIT's errno. */
int dev_wait(int fd, uint64_t seqno);
/* Appends one reference [first, first + count), submits, waits: errno
 * of the wait (0 or EFAULT). */
int run_ref(int fd, uint32_t program, uint64_t first, uint64_t count);

uint64_t f32_bits(float v);

#endif
