#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Plans from Python against arena-certify on the same plan's image
(docs/performance.md, "Python"): one workload's JSON and image (written by
bench/arena-workload), certified side by side, each form --runs times;
prints each form's best and median wall-clock seconds, its ratio to
arena-certify's best, and its best CPU seconds in this process.

  arena-certify IMAGE       the command on the image (a process: exec,
                            read, certify, print), and the library on the
                            image's bytes in this process (certify(bytes))
  dict                      the JSON-shaped dict, one object per launch,
                            words as ints: built without JSON text
  dict, "0x" words          the dict as json.load gives it (words as the
                            format's "0x..." strings)
  JSON text                 certify(str): the text parsed by the library
                            (what a dict cost before the builder)
  columns                   certify_columns: phase indexes, word counts
                            and words as array.array

Run with the binding of a build tree:

  ARENACERT_LIBRARY=build/certify/libarenacert.so PYTHONPATH=python \\
      python3 bench/bench-python.py --cli build/tools/arena-certify \\
      --json vit.json --image vit.img
"""
from __future__ import annotations

import argparse
import array
import json
import statistics
import subprocess
import time
from typing import Any, Callable, Dict, List, Tuple

import arenacert


def timed(fn: Callable[[], Any],
          runs: int) -> Tuple[float, float, float, Any]:
    """The best and the median wall-clock time of runs calls, the best
    CPU time of this process (a loaded machine's other work is not in
    it; a child's is: 0 for the command), and the last result."""
    times: List[float] = []
    cpu: List[float] = []
    result = None
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return min(times), statistics.median(times), min(cpu), result


def field51(identity: bytes) -> bytes:
    """The payload of field 51 (a phase's identity) in a launch identity:
    enough protobuf for the workload's identities (field 1, then 51)."""
    at = identity.index(b"\x9a\x03") + 2
    n = shift = 0
    while True:
        c = identity[at]
        at += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            break
    return identity[at:at + n]


def as_columns(program: Dict[str, Any]) -> Tuple[Dict[str, Any], Any, Any, Any]:
    """The plan without launches and its columns (phase by field 51)."""
    index = {}
    for i, p in enumerate(program["phases"]):
        ident = (p["identity"].encode() if "identity" in p
                 else bytes.fromhex(p["identity_hex"]))
        index[ident] = i
    seen: Dict[str, int] = {}
    phase = array.array("I")
    for launch in program["launches"]:
        key = launch["identity_hex"]
        if key not in seen:
            seen[key] = index[field51(bytes.fromhex(key))]
        phase.append(seen[key])
    counts = array.array("I", [len(launch["words"])
                               for launch in program["launches"]])
    words = array.array("Q", [w for launch in program["launches"]
                              for w in launch["words"]])
    plan = {k: v for k, v in program.items() if k != "launches"}
    return plan, phase, counts, words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--json", required=True)
    parser.add_argument("--image", required=True)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    text = open(args.json).read()
    image = open(args.image, "rb").read()
    strings = json.loads(text)
    ints = json.loads(text)
    for launch in ints["launches"]:
        launch["words"] = [int(w, 0) for w in launch["words"]]
    plan, phase, counts, words = as_columns(ints)
    n_words = len(words)

    def cli() -> int:
        run = subprocess.run([args.cli, args.image], capture_output=True,
                             check=False)
        return run.returncode

    forms = [
        ("arena-certify IMAGE", cli),
        ("certify(image bytes)", lambda: arenacert.certify(image).verdict),
        ("dict", lambda: arenacert.certify(ints).verdict),
        ('dict, "0x" words', lambda: arenacert.certify(strings).verdict),
        ("JSON text", lambda: arenacert.certify(text).verdict),
        ("columns", lambda: arenacert.certify_columns(
            plan, phase, counts, words).verdict),
    ]
    print(f"{n_words} words, {len(counts)} launches; {args.runs} runs each; "
          f"load average {open('/proc/loadavg').read().split()[0]}")
    base = None
    for name, fn in forms:
        best, median, cpu, verdict = timed(fn, args.runs)
        base = base or best
        print(f"{name:22s} best {best:8.4f} s  median {median:8.4f} s  "
              f"{best / base:6.2f}x  cpu {cpu:7.4f} s  (verdict {verdict})")


if __name__ == "__main__":
    main()
