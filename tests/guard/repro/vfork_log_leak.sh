#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Reproducer, outside the default test run (issue 27 item 7 against
# item 1): a vfork child's close_range(3, ~0U) (CPython's subprocess
# makes such calls before exec) runs the guard's wrapper in the parent's
# memory; step_aside finds no number above the range and marks the log
# lost, while the parent's own log descriptor stays open in the parent.
# The parent's next record reacquires the log by its path, at a new
# number: the old one is never closed.  One descriptor leaks per
# subprocess that is followed by a record, so a long-running server
# that spawns helpers loses descriptors for as long as it runs.  Before
# the reacquiring (b27daba) the log was only given up (records lost).
#
#   tests/guard/repro/vfork_log_leak.sh BUILD_DIR
#
# guard-launched --vfork-leak: two rounds of vfork + close_range(3, ~0U)
# + _exit in the child, then a distinct failing submission in the
# parent (a record); it counts /proc/self/fd before and after.
# Today: "FAIL: descriptors before 8, after 10", exit 1.  Exit 0 when
# the count is unchanged: a wrapper running in a child that shares the
# parent's memory changes none of the guard's state (item 1), or the
# reacquiring takes back a number that is still the guard's own file in
# this process.
set -u
build=${1:?usage: vfork_log_leak.sh BUILD_DIR}
build=$(cd "$build" && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
LD_PRELOAD="$build/shim/libarenaguard.so $build/sim/libarenasim.so" \
ARENAGUARD_LOG="$log" "$build/tests/guard/guard-launched" --vfork-leak
