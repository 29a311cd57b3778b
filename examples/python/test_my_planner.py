# SPDX-License-Identifier: MIT
"""A toy memory planner written in Python, checked by arenacert in its own
pytest suite: the way a compiler driver would assert that every plan it
emits is certified.

The planner places each op's output in one workspace arena, first fit,
and reuses an output's bytes once nothing will read it again.  Each op is
a phase: its output a fresh plane, the values it reads carried planes; the
weights and the block's output buffer are globals; each op launches once,
its words the addresses it touches.

``plan_buggy`` frees a value after its *first* reader instead of its last:
the residual input ``x`` is overwritten by ``y`` before the residual add
reads it, a silent wrong-number bug on the device, which the certificate
catches as (D) with the diagnostic as the test's failure message.

Run: ``python3 -m pytest examples/python/test_my_planner.py`` (with the
package installed: ``meson install``; or see docs/python.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Tuple

import pytest

import arenacert

ALIGN = 64
PARAMS_BASE = 0x1_0000_0000      # the weights' and the output's window
ARENA_BASE = 0x2_0000_0000       # the workspace arena


@dataclass(frozen=True)
class Op:
    """One kernel: reads `inputs` (values) and `weights`, writes `output`
    (a value, or a global when it is one of the weights' names)."""

    name: str
    inputs: Tuple[str, ...]
    output: str
    size: int                    # bytes of the output
    weights: Tuple[str, ...] = ()


def mlp_block(width: int) -> Tuple[List[Op], Dict[str, int]]:
    """A pre-norm MLP block with a layer scale and a residual:
    out = x + gamma * W2 gelu(W1 norm(x)), out the caller's buffer.
    Returns the ops and the globals' sizes."""
    ops = [
        Op("embed", (), "x", width),
        Op("norm", ("x",), "xn", width),
        Op("up", ("xn",), "h", 4 * width, ("w1",)),
        Op("gelu", ("h",), "g", 4 * width),
        Op("down", ("g",), "y", width, ("w2",)),
        Op("scale", ("y",), "s", width, ("gamma",)),
        Op("residual", ("x", "s"), "out", width),
    ]
    return ops, {"w1": 4 * width * width // 16, "w2": 4 * width * width // 16,
                 "gamma": width, "out": width}


def round_up(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


class Arena:
    """First-fit allocation of aligned blocks in [0, size)."""

    def __init__(self) -> None:
        self.free: List[Tuple[int, int]] = []   # (offset, size), sorted
        self.top = 0

    def alloc(self, size: int) -> int:
        size = round_up(size)
        for i, (off, n) in enumerate(self.free):
            if n >= size:
                self.free[i:i + 1] = [(off + size, n - size)] if n > size else []
                return off
        off, self.top = self.top, self.top + size
        return off

    def release(self, off: int, size: int) -> None:
        self.free.append((off, round_up(size)))
        self.free.sort()
        merged: List[Tuple[int, int]] = []
        for o, n in self.free:
            if merged and merged[-1][0] + merged[-1][1] == o:
                merged[-1] = (merged[-1][0], merged[-1][1] + n)
            else:
                merged.append((o, n))
        self.free = merged


def plan(ops: List[Op], weights: Dict[str, int],
         free_after_first_use: bool = False) -> Dict[str, Any]:
    """The program (arenacert's JSON form, as a dict) for running ops once
    in order.  A value's bytes are reused after its last reader, or, with
    free_after_first_use (the bug), after its first."""
    readers: Dict[str, List[int]] = {}
    for i, op in enumerate(ops):
        for name in op.inputs:
            readers.setdefault(name, []).append(i)

    globals_, gaddr, at = [], {}, PARAMS_BASE
    for name, size in weights.items():
        globals_.append({"name": name, "offset": at, "size": size})
        gaddr[name] = at
        at += round_up(size)

    arena = Arena()
    where: Dict[str, Tuple[int, int]] = {}      # value -> (address, size)
    phases, launches = [], []
    for i, op in enumerate(ops):
        planes = [{"name": v, "offset": where[v][0], "size": where[v][1],
                   "carried": True} for v in op.inputs]
        if op.output in gaddr:
            out = gaddr[op.output]
        else:
            out = ARENA_BASE + arena.alloc(op.size)
            where[op.output] = (out, op.size)
            planes.append({"name": op.output, "offset": out,
                           "size": op.size, "carried": False})
        phases.append({"identity": op.name, "planes": planes})
        words = [where[v][0] for v in op.inputs]
        words += [out] + [gaddr[w] for w in op.weights]
        launches.append({"phase": op.name, "words": words})
        for v in op.inputs:
            last = readers[v][0] if free_after_first_use else readers[v][-1]
            if last == i:
                arena.release(where[v][0] - ARENA_BASE, where[v][1])

    return {
        "format": "arena-program/1",
        "alignment": ALIGN,
        "windows": [
            {"name": "params", "base": PARAMS_BASE, "size": at - PARAMS_BASE},
            {"name": "arena", "base": ARENA_BASE, "size": round_up(arena.top)},
        ],
        "globals": globals_,
        "phases": phases,
        "launches": launches,
        "schedule": [{"first": 0, "count": len(launches)}],
    }


def plan_buggy(ops: List[Op], weights: Dict[str, int]) -> Dict[str, Any]:
    """The planner with the bug: values freed after their first reader."""
    return plan(ops, weights, free_after_first_use=True)


WIDTHS = [64, 256, 1024]


@pytest.mark.parametrize("width", WIDTHS)
def test_every_plan_is_certified(width: int) -> None:
    ops, weights = mlp_block(width)
    arenacert.assert_certified(plan(ops, weights), strict=True)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_buggy_planner_is_caught(width: int) -> None:
    ops, weights = mlp_block(width)
    program = plan_buggy(ops, weights)
    with pytest.raises(AssertionError) as caught:
        arenacert.assert_certified(program)
    message = str(caught.value)
    # what a planner engineer reads in the failing test's report
    assert "(D) fails at instance 6 (phase 'residual'" in message
    assert "carried plane 'x'" in message
    assert "fresh plane 'y'" in message

    result = arenacert.certify(program)
    assert (result.condition, result.reason) == ("D", "carried-overwritten")
    assert result["plane"]["name"] == "x"
    assert result["overwriter"]["name"] == "y"
    assert result["overwriter"]["phase_identity"] == "down"


def test_the_plan_converts_losslessly() -> None:
    ops, weights = mlp_block(256)
    program = plan(ops, weights)
    image = arenacert.to_image(program)
    assert arenacert.certify(image).fields == arenacert.certify(program).fields
