# SPDX-License-Identifier: MIT
"""Plans from Python without JSON text (the builder, include/arenaguard/
builder.h): a dict is walked into the library's model and certified with
no JSON written; its result is the JSON text's, field for field, on the
spec's examples and the workloads, and so is the columnar form's; words
come as lists, tuples, array.array or any buffer of integers; and a
malformed dict gets exactly arena-certify's error on the same plan as
JSON, whether the builder or the JSON reader finds it."""
from __future__ import annotations

import array
import copy
import json
import pathlib
import subprocess
from typing import Any, Callable, Dict, List, Tuple

import pytest

import arenacert
from conftest import cli_objects, example_dict, required_path, spec_examples

EXAMPLES = [p.stem for p in spec_examples()]


@pytest.fixture
def no_json_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """json.dumps and every JSON reader of the library refused: a dict
    certified under this was never JSON text."""
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a dict was written as JSON text")
    monkeypatch.setattr(json, "dumps", refused)
    monkeypatch.setattr(arenacert._native, "certify_json", refused)
    monkeypatch.setattr(arenacert._native, "convert", refused)


def columns(program: Dict[str, Any]) -> Tuple[Dict[str, Any], List[int],
                                               List[int], List[int]]:
    """A plan whose launches each name a phase (JSON's "phase"), as the
    plan without launches and its three columns."""
    index = {p["identity"]: i for i, p in enumerate(program["phases"])}
    launches = program.get("launches", [])
    plan = {k: v for k, v in program.items() if k != "launches"}
    words = [int(w, 0) if isinstance(w, str) else w
             for launch in launches for w in launch.get("words", [])]
    return (plan, [index[launch["phase"]] for launch in launches],
            [len(launch.get("words", [])) for launch in launches], words)


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_without_json_text(name: str, no_json_text: None) -> None:
    program = example_dict(name)
    result = arenacert.certify(program)
    plan, phase, counts, words = columns(program)
    by_columns = arenacert.certify_columns(
        plan, array.array("I", phase), counts, array.array("Q", words))
    [cli] = cli_objects(str(spec_examples()[EXAMPLES.index(name)]))
    assert result.fields == cli
    assert by_columns.fields == cli


@pytest.mark.parametrize("name", EXAMPLES)
def test_converted_without_json_text(name: str) -> None:
    """to_image of a dict is the library's image of its JSON text."""
    program = example_dict(name)
    image = arenacert.to_image(program)
    assert image == arenacert.to_image(json.dumps(program))
    assert arenacert.to_json(program) == arenacert.to_json(image)


def test_words_in_every_form(no_json_text: None) -> None:
    program = example_dict("ex1")
    want = arenacert.certify(program).fields
    forms: List[Callable[[List[int]], Any]] = [
        tuple, lambda w: array.array("Q", w), lambda w: array.array("l", w),
        lambda w: memoryview(array.array("I", w))]
    for form in forms:
        changed = copy.deepcopy(program)
        for launch in changed["launches"]:
            launch["words"] = form([int(w, 0) if isinstance(w, str) else w
                                    for w in launch["words"]])
        assert arenacert.certify(changed).fields == want


@pytest.mark.parametrize("kind,fault", [("vit", None), ("vit", "reuse"),
                                        ("decode", "stride"),
                                        ("adjoint", None)])
def test_workload_dict_and_columns_as_the_cli(
        kind: str, fault: str, tmp_path: pathlib.Path) -> None:
    """bench/arena-workload's JSON loaded as a dict (its words "0x..."
    strings, its launches by identity_hex) and as ints; columns by
    phase index: the verdicts the CLI's."""
    generator = required_path("ARENACERT_WORKLOAD")
    args = [str(generator), kind, "--words", "4000", "--json",
            "-o", str(tmp_path / "w.json")]
    subprocess.run(args + (["--fault", fault] if fault else []), check=True,
                   capture_output=True)
    [cli] = cli_objects(str(tmp_path / "w.json"))
    program = json.loads((tmp_path / "w.json").read_text())
    assert arenacert.certify(program).fields == cli
    for launch in program["launches"]:
        launch["words"] = [int(w, 16) for w in launch["words"]]
    as_ints = arenacert.certify(program)
    assert as_ints.fields == cli
    assert (as_ints.verdict == 0) == (fault is None)


def test_columns_take_buffers_and_lists() -> None:
    program = example_dict("ex3")
    plan, phase, counts, words = columns(program)
    want = arenacert.certify(program).fields
    for cols in ((phase, counts, words),
                 (memoryview(array.array("I", phase)), array.array("H", counts),
                  memoryview(array.array("Q", words)))):
        assert arenacert.certify_columns(plan, *cols).fields == want


def test_columns_errors() -> None:
    program = example_dict("ex3")
    plan, phase, counts, words = columns(program)
    with pytest.raises(arenacert.MalformedProgram) as caught:
        arenacert.certify_columns(plan, phase, counts, words[:-1])
    assert caught.value.where == "launches"
    assert "sum to" in caught.value.message
    with pytest.raises(arenacert.MalformedProgram) as caught:
        arenacert.certify_columns(plan, [len(program["phases"])] + phase[1:],
                                  counts, words)
    assert caught.value.where == "launches[0]"
    with pytest.raises(ValueError, match=r"words\[1\]: -1 is not"):
        arenacert.certify_columns(plan, phase, counts, [0, -1] + words[2:])
    with pytest.raises(ValueError, match="one each a launch"):
        arenacert.certify_columns(plan, phase, counts[:-1], words)
    with pytest.raises(TypeError, match="not hold"):
        arenacert.certify_columns(program, phase, counts, words)


def test_columns_malformed_plan_as_the_cli() -> None:
    """A plan value the builder does not take (a float alignment): the
    JSON reader's error on the plan with its launches, as the CLI's."""
    program = example_dict("ex3")
    program["globals"][0]["size"] = 1.5
    plan, phase, counts, words = columns(program)
    with pytest.raises(arenacert.MalformedProgram) as caught:
        arenacert.certify_columns(plan, phase, counts, words)
    [cli] = cli_objects("-", stdin=json.dumps(program).encode())
    assert str(caught.value) == cli["error"]


def repeat_with(table: Any) -> Dict[str, Any]:
    program = example_dict("ex1")
    program["repeats"] = [{"first": 0, "count": 1, "iterations": 2,
                           "table": table}]
    return program


def word(value: Any) -> Dict[str, Any]:
    program = example_dict("ex1")
    program["launches"][0]["words"][0] = value
    return program


# Malformed dicts, each with what the builder or the walk finds: the
# error arena-certify prints for the same plan as JSON text.
MALFORMED = [
    ("frame-length", repeat_with({"slots": [{"launch": 0, "word": 0}],
                                  "frames": [[1], [1, 2]]})),
    ("no-frame", repeat_with({"slots": [], "frames": []})),
    ("word-negative", word(-1)),
    ("word-beyond-2^53", word(2 ** 53 + 1)),
    ("word-true", word(True)),
    ("word-fraction", word(1.5)),
    ("word-null", word(None)),
    ("word-bad-string", word("0x")),
    ("word-string-beyond-2^64", word("0x10000000000000000")),
    ("launch-two-identities", {**example_dict("ex1"), "launches": [
        {"phase": "P", "identity_hex": "00", "words": []}]}),
    ("launch-no-identity", {**example_dict("ex1"), "launches": [
        {"words": [1]}]}),
    ("launch-unknown-key", {**example_dict("ex1"), "launches": [
        {"phase": "P", "word": [1]}]}),
    ("phase-bad-hex", {**example_dict("ex1"), "phases": [
        {"identity_hex": "0g", "planes": []}]}),
    ("plane-carried-int", {**example_dict("ex1"), "phases": [
        {"identity": "P", "planes": [{"name": "a", "offset": 0, "size": 1,
                                      "carried": 0}]}]}),
    ("delta-string-beyond", {**example_dict("ex1"), "repeats": [
        {"first": 0, "count": 1, "iterations": 2, "deltas": [
            {"launch": 0, "word": 0, "delta": "-0x8000000000000001"}]}]}),
    ("schedule-past-launches", {**example_dict("ex1"), "schedule": [
        {"first": 5, "count": 1}]}),
]


@pytest.mark.parametrize("program", [m[1] for m in MALFORMED],
                         ids=[m[0] for m in MALFORMED])
def test_malformed_as_the_cli(program: Dict[str, Any]) -> None:
    with pytest.raises(arenacert.MalformedProgram) as caught:
        arenacert.certify(program)
    [cli] = cli_objects("-", stdin=json.dumps(program).encode())
    assert cli["verdict"] is None
    assert str(caught.value) == cli["error"]


def test_builder_errors_need_no_json_text(no_json_text: None) -> None:
    """The builder's own errors (here a frame of the wrong length) are
    found without JSON text, with the reader's path and message."""
    with pytest.raises(arenacert.MalformedProgram) as caught:
        arenacert.certify(repeat_with({"slots": [{"launch": 0, "word": 0}],
                                       "frames": [[1], [1, 2]]}))
    assert str(caught.value) == ("repeats[0].table.frames[1]: 2 values; "
                                 "expected one per slot (1)")


def test_launches_of_mixed_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Launches by "phase", "phase_hex" and "identity_hex", with and
    without "words": walked one by one, the same fields as the CLI's, and
    no JSON text read."""
    program = example_dict("ex3")
    launches = program["launches"]
    name = launches[0]["phase"].encode()
    launches[0] = {"phase_hex": name.hex(), "words": launches[0]["words"]}
    name = launches[1]["phase"].encode()
    launches[1] = {"identity_hex": (b"\x9a\x03" + bytes([len(name)]) +
                                    name).hex(),
                   "words": launches[1]["words"]}
    launches.append({"phase": launches[2]["phase"]})
    [cli] = cli_objects("-", stdin=json.dumps(program).encode())

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a dict was read as JSON text")
    monkeypatch.setattr(arenacert._native, "certify_json", refused)
    assert arenacert.certify(program).fields == cli
