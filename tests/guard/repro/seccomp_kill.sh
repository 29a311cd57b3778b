#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Reproducer, outside the default test run (issue 27 item 8, attacked):
# a seccomp profile that kills, instead of refusing, the process that
# makes process_vm_readv/writev kills the guarded application.
#
#   tests/guard/repro/seccomp_kill.sh BUILD_DIR
#
# guard-hostile-client seccomp kill|trap installs a filter whose action
# for process_vm_readv and process_vm_writev is SECCOMP_RET_KILL_PROCESS
# (systemd's SystemCallFilter= without SystemCallErrorNumber=: its
# @system-service set leaves out @debug, where these two calls are) or
# SECCOMP_RET_TRAP (SIGSYS), then runs the same client code as
# test_seccomp: a program created from an image, a certified schedule,
# two failing ones.  The application never makes either call; the guard
# (and the simulator, which copies through the same common/usercopy.c)
# does, at its first copy off the caller's stack, and the process dies of
# SIGSYS (exit 159) before the first create returns.  The pipe fallback
# of the fix is reached only when the call returns an errno.  Here the
# simulator alone (or ARENAGUARD=off) dies the same way, since it plays
# the kernel's part with the same copies; on a kernel driver only the
# guard makes the call, so it is the guard that kills the application.
#
# Exit status 1 (and "FAIL") while that happens; 0 when both variants
# run to the end with every check ok.
set -u
build=${1:?usage: seccomp_kill.sh BUILD_DIR}
build=$(cd "$build" && pwd)
client=$build/tests/guard/guard-hostile-client
export LD_PRELOAD="$build/shim/libarenaguard.so $build/sim/libarenasim.so"
fail=0
for v in kill trap; do
	out=$(timeout 20 "$client" seccomp "$v" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] || printf '%s\n' "$out" | grep -q FAIL; then
		echo "FAIL: seccomp $v: exit $rc"
		printf '%s\n' "$out" | sed 's/^/  /'
		fail=1
	else
		echo "ok: seccomp $v"
	fi
done
exit $fail
