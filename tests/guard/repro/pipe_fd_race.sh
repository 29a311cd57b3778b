#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Reproducer, outside the default test run (issue 27 item 8, attacked):
# the pipe that common/usercopy.c makes for a copy where process_vm_* are
# denied lives in the application's descriptor table, under numbers the
# application may use at the same time.
#
#   tests/guard/repro/pipe_fd_race.sh BUILD_DIR
#
# guard-hostile-client fdrace denies process_vm_readv/writev (EPERM, as
# test_seccomp), then one thread reads 8 KiB of the device's memory into
# the heap 200,000 times (each read a copy through a fresh pipe; more
# than a hardware transaction copies) while another
# thread dup2()s its own scratch file onto the numbers where the pipe's
# ends land (half the descriptor limit, or 1000, and the next), checks
# that the descriptor is still its file, and closes it.  Seen:
#
#  - without SIGPIPE ignored (as most programs run): the process died of
#    SIGPIPE (exit 141) in 3 runs of 4: the application's dup2 closed the
#    pipe's read end, and the guard's write() to the write end raised
#    SIGPIPE (the application never wrote to a pipe).  Fixed: the copy
#    blocks SIGPIPE on its thread and takes back one it raised (exit 1
#    now, for what follows);
#  - with SIGPIPE ignored (fdrace nosigpipe), and now in both: the guard closes the
#    application's file under it (close_pipe_end on a number dup2 has
#    reused: 6 to 9 times a run), writes the application's memory (the
#    device output being copied, 256 bytes) into the application's file,
#    and some reads of good output fail (4 to 7 EFAULTs).
#
# The same holds in the short window where pipe2's ends still have the
# lowest free numbers (before F_DUPFD_CLOEXEC moves them): a daemon that
# closed 0-2 and dup2()s /dev/null onto them from another thread.
#
# Fixed (common/usercopy.c): the pipe is made by a task of the guard's
# own, which shares the memory but not the descriptor table, so it is
# never at the application's numbers; test_hostile.c test_fdhook is the
# deterministic form (the application's file dup2()ed onto every
# descriptor the guard makes), and fails at 2fc1b58.  Where no such task
# can be made (clone refused), the pipe is in the application's table
# again and so is this race.
#
# Exit status 1 (and "FAIL") while either happens; 0 when both variants
# end with every check ok.
set -u
build=${1:?usage: pipe_fd_race.sh BUILD_DIR}
build=$(cd "$build" && pwd)
client=$build/tests/guard/guard-hostile-client
export LD_PRELOAD="$build/shim/libarenaguard.so $build/sim/libarenasim.so"
fail=0
for v in "" nosigpipe; do
	out=$(timeout 120 "$client" fdrace $v 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] || printf '%s\n' "$out" | grep -q FAIL; then
		echo "FAIL: fdrace $v: exit $rc"
		printf '%s\n' "$out" | grep -v '^ok' | sed 's/^/  /'
		fail=1
	else
		echo "ok: fdrace $v"
	fi
done
exit $fail
