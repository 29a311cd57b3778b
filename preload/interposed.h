/* SPDX-License-Identifier: MIT */
/*
 * The functions every preload module interposes, once (X-macro lists,
 * for a module's symbols.h to name inside its own lists:
 * scripts/version_script.py and tests/symbol_lists expand them there).
 *
 * PRELOAD_FD_SYMBOLS: the calls that close or duplicate fds, which keep
 * a module's fd table (fd_table.h) in step.
 *
 * PRELOAD_URING_SYMBOLS: liburing's (the newer releases' among them
 * declared in liburing_newer.h; a module finds no next definition of
 * those on an older liburing, and the wrapper answers -ENOSYS).
 * liburing makes its io_uring_enter system calls inline, so there is no
 * libc function to catch a submission by: the submit functions (and the
 * waits with a time-out, which submit on kernels without
 * IORING_FEAT_EXT_ARG) are where the SQEs not yet handed to the kernel
 * can be walked (sq.h), and
 * the registration functions where a ring's registered files (which
 * IOSQE_FIXED_FILE names by slot) can be known.  A ring mapped, or
 * unmapped, forgets what its mapping had (ring_id.h).
 */
#ifndef PRELOAD_INTERPOSED_H
#define PRELOAD_INTERPOSED_H

#define PRELOAD_FD_SYMBOLS(X) X(close) X(close_range) X(dup) X(dup2) X(dup3)

#define PRELOAD_URING_SYMBOLS(X) \
	X(io_uring_submit) X(io_uring_submit_and_wait) \
	X(io_uring_submit_and_wait_timeout) X(io_uring_submit_and_get_events) \
	X(io_uring_submit_and_wait_min_timeout) \
	X(io_uring_submit_and_wait_reg) \
	X(io_uring_wait_cqes) X(io_uring_wait_cqe_timeout) \
	X(io_uring_register_files) X(io_uring_register_files_tags) \
	X(io_uring_register_files_sparse) X(io_uring_register_files_update) \
	X(io_uring_register_files_update_tag) X(io_uring_unregister_files) \
	X(io_uring_queue_init) X(io_uring_queue_init_params) \
	X(io_uring_queue_mmap) X(io_uring_queue_exit)

#endif
