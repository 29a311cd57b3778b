#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Reproducer, outside the default test run (issue 27 item 9, attacked):
# a record larger than a pipe's buffer is cut, and the next record is
# glued to the cut one, so a JSON consumer loses both.
#
#   tests/guard/repro/json_record_cut.sh BUILD_DIR
#
# Two guarded processes share standard error, a pipe whose reader waits
# half a second before reading: the first writes a blocked record of
# about 600 KB (2,000 advisories; guard-json-big 2000 1), of which the
# pipe takes 64 KiB before poll says it is full: the rest of the record,
# and its newline, are dropped.  Once the reader has drained the pipe,
# the second process writes its (small, complete) blocked record, which
# lands on the cut record's line.  docs/guard.md says a full or slow
# pipe "loses the record" and that every JSON line parses; here a line
# does not parse, and the second process's complete record is on it.
#
# Exit status 1 (and "FAIL") while that happens; 0 when every record
# written either is a whole line that parses or is not written at all.
#
# So on main (85b9af4, jansson's json_dumps) as on the JSON writer of the
# fix: write_piece (shim/report.c) writes PIPE_BUF pieces while poll says
# there is room and stops at the first EAGAIN, mid-record.  A text record
# is held in a fixed buffer (struct pending, about 20 KB), so the same run
# with log_format=text gives whole lines; a JSON record has a member per
# advisory and no bound.
set -eu
build=${1:?usage: json_record_cut.sh BUILD_DIR}
build=$(cd "$build" && pwd)
client=$build/tests/guard/guard-json-big
export LD_PRELOAD="$build/shim/libarenaguard.so $build/sim/libarenasim.so"
export ARENAGUARD_OPTIONS=log_format=json
sh -c "$client 2000 1; sleep 1; $client 0 1" 2>&1 >/dev/null |
	(sleep 0.5; cat) | python3 -c '
import json, sys
bad = 0
blocked = 0
for line in sys.stdin.buffer.read().split(b"\n"):
    if not line:
        continue
    try:
        o = json.loads(line)
        blocked += o.get("event") == "blocked"
    except ValueError as e:
        bad += 1
        glued = line.count(b"{\"verdict\"")
        print("FAIL: a line of %d bytes does not parse (%s); records "
              "starting on it: %d" % (len(line), e, glued))
print("%d bad lines, %d blocked records parsed" % (bad, blocked))
sys.exit(1 if bad else 0)
'
