#!/usr/bin/env bash
# The guard's demonstration (for scripts/demo): the example model on the
# simulated device under libarenaguard.so, through the arenaguard
# launcher: a certified run, then the buggy planner's program blocked
# before it reaches the device, with its verdict and diagnostic, and the
# dump rendered offline by arena-certify.  Exits 0 when every step did
# what it should (the blocked run's non-zero status is the point).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${AG_BUILD:-build}
sim=$build/sim/libarenasim.so
guard=$build/tools/arenaguard
infer=$build/examples/arena-infer
certify=$build/tools/arena-certify
for f in "$sim" "$guard" "$infer" "$certify" "$build/shim/libarenaguard.so"; do
	[[ -e $f ]] || { echo "demo: $f is not built" >&2; exit 1; }
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
wrong=0

run() {   # expected-status command...
	local want=$1 status=0
	shift
	echo "\$ ${*/#$build/build}"
	"$@" 2>&1 || status=$?
	if ((status != want)); then
		echo "demo: expected exit status $want, got $status" >&2
		wrong=1
	fi
	echo
}

export LD_PRELOAD=$sim
echo "== The guard: arena-infer on the simulated device, under arenaguard"
echo "== 1. The correct plan: certified once, then every pass is a lookup"
run 0 "$guard" --stats -- "$infer" --decode 3
echo "== 2. The buggy plan: blocked before the device runs it (ioctl, then io_uring)"
run 2 "$guard" --dump "$scratch" -- "$infer" --buggy -q
run 2 "$guard" -- "$infer" --buggy --uring -q
echo "== 3. The dumped program and schedule, rendered offline"
dump=$(ls "$scratch"/*.img | head -n 1)
run 1 "$certify" "$dump"
echo "== 4. --mode warn: reported, run anyway (and its output is wrong)"
run 1 "$guard" --mode warn -- "$infer" --buggy -q

if ((wrong)); then
	echo "demo: the guard did not behave as specified" >&2
	exit 1
fi
echo "demo: the certified program ran; the failing one never reached the device"
