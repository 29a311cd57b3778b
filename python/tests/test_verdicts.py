# SPDX-License-Identifier: MIT
"""Every verdict class and every reason the library names, each from a
worked example edited as a dict, against arena-certify on the same text;
and the advisories (spec section 6)."""
from __future__ import annotations

import json
from typing import Any, Callable, Dict

import pytest

import arenacert
from conftest import cli_objects, example_dict

Edit = Callable[[Dict[str, Any]], None]


def launch_identity(hex_bytes: str) -> Edit:
    """Launch 1 gets the raw source identity hex_bytes."""
    def edit(p: Dict[str, Any]) -> None:
        del p["launches"][1]["phase"]
        p["launches"][1]["identity_hex"] = hex_bytes
    return edit


def set_at(path: str, value: Any) -> Edit:
    """Sets the value at a dotted path ("globals.0.offset")."""
    def edit(p: Dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = p
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[int(last) if isinstance(node, list) else last] = value
    return edit


def add_global(p: Dict[str, Any]) -> None:
    p["globals"].append({"name": "w2", "offset": "0x1080", "size": 64})


# (example, edit, verdict, condition, reason)
CASES = [
    ("ex1", None, 0, "certified", "ok"),
    ("ex1", set_at("globals.0.offset", "0x1010"), 1, "A", "global-misaligned"),
    ("ex1", set_at("globals.0.size", 0), 1, "A", "global-empty"),
    ("ex1", add_global, 1, "A", "globals-overlap"),
    ("ex1", set_at("phases.1.planes.1.offset", "0x1510"), 1, "B",
     "plane-misaligned"),
    ("ex1", set_at("phases.1.planes.1.size", 0), 1, "B", "plane-empty"),
    ("ex1", set_at("phases.1.planes.1.offset", "0x1480"), 1, "B",
     "planes-overlap"),
    ("ex6", None, 1, "B", "plane-overlaps-global"),
    ("ex4", None, 3, "C", "word-unnamed"),
    ("ex7b", None, 2, "C", "word-unnamed"),
    ("ex1", set_at("launches.1.phase", "X"), 3, "C", "launch-no-phase"),
    ("ex1", launch_identity(""), 3, "C", "launch-no-phase"),
    ("ex1", launch_identity("9a"), 3, "C", "launch-no-phase"),
    ("ex1", launch_identity("980300"), 3, "C", "launch-no-phase"),
    ("ex2", None, 4, "D", "carried-undeclared"),
    ("ex3", None, 7, "D", "carried-overwritten"),
]


@pytest.mark.parametrize("name,edit,verdict,condition,reason", CASES,
                         ids=[f"{c[4]}-{i}" for i, c in enumerate(CASES)])
def test_verdict_class(name: str, edit: Edit, verdict: int, condition: str,
                       reason: str) -> None:
    program = example_dict(name)
    if edit:
        edit(program)
    result = arenacert.certify(program)
    assert (result.verdict, result.condition, result.reason) == \
        (verdict, condition, reason)
    [cli] = cli_objects("-", stdin=json.dumps(program).encode())
    assert result.fields == cli


def test_identity_problems_are_named() -> None:
    problems = {}
    for hex_bytes in ("", "9a", "980300"):
        program = example_dict("ex1")
        launch_identity(hex_bytes)(program)
        problems[hex_bytes] = arenacert.certify(program)["identity_problem"]
    assert problems == {"": "no-field51", "9a": "unparsable",
                        "980300": "field51-wire-type"}
    program = example_dict("ex1")
    program["launches"][1]["phase"] = "X"
    assert arenacert.certify(program)["identity_problem"] == "unknown-phase"


def test_advisories() -> None:
    program = example_dict("ex1")
    program["globals"].append({"name": "far", "offset": "0x3000", "size": 64})
    result = arenacert.certify(program)
    assert result.verdict == 0 and result.certified
    assert not result.strictly_certified
    [advisory] = result.advisories
    assert advisory.kind == "tensor-outside-windows"
    assert advisory.outside == 0x3000
    assert advisory.tensor["name"] == "far" and advisory.tensor["global"] == 1
    assert str(advisory) == ("tensor-outside-windows: global 'far' "
                             "(globals[1]) [0x3000, 0x3040) has byte 0x3000 "
                             "in no window")
    [cli] = cli_objects("-", stdin=json.dumps(program).encode())
    assert result.fields == cli
    assert "advisory tensor-outside-windows" in str(result)
    assert arenacert.certify(example_dict("ex1")).strictly_certified
