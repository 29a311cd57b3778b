#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Reproducer, outside the default test run (issue 27 item 8, attacked):
# a child forked while another thread's copy goes through the guard's
# pipe (process_vm_* denied) is born holding both ends of that pipe,
# which nothing in the child ever closes (close-on-exec only: a child
# that does not exec keeps them for its life).
#
#   tests/guard/repro/pipe_fork_leak.sh BUILD_DIR
#
# guard-hostile-client forkleak denies process_vm_readv/writev (EPERM),
# then one thread submits a certified schedule and waits for it with
# both arguments on the heap (copied in and out by the guard through a
# pipe each time) and reads the output, while the main thread forks 500
# children; each child counts the pipes it holds that the parent had
# not made, and exits with that count.  Seen: 146 to 177 of 500 children born
# holding them.  The copies of the argument run outside the locks the
# guard's fork handlers take.  Expected: none (the child handler closes
# the pipes of copies in flight, or fork waits for them).
#
# Exit status 1 (and "FAIL") while that happens.
set -u
build=${1:?usage: pipe_fork_leak.sh BUILD_DIR}
build=$(cd "$build" && pwd)
export LD_PRELOAD="$build/shim/libarenaguard.so $build/sim/libarenasim.so"
out=$(timeout 120 "$build/tests/guard/guard-hostile-client" forkleak 2>&1)
rc=$?
printf '%s\n' "$out" | grep -v '^ok'
[ "$rc" -eq 0 ] && ! printf '%s\n' "$out" | grep -q FAIL
