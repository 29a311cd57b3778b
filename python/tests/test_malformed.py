# SPDX-License-Identifier: MIT
"""Malformed input raises MalformedProgram naming what and where (the JSON
path or the byte offset), with exactly arena-certify's error text; input
that is not a program form raises TypeError."""
from __future__ import annotations

import json
from typing import Any, Dict, Union

import pytest

import arenacert
from conftest import cli_objects, example_dict


def ex1_with(**changes: Any) -> Dict[str, Any]:
    program = example_dict("ex1")
    program.update(changes)
    return program


FRACTION = ('{"alignment": 64, "launches": [{"phase": "P", '
            '"words": ["0x1400", 1.5]}]}')

# (input, where, a phrase of the message)
CASES = [
    (FRACTION, "launches[0].words[1]", "not an integer"),
    ('{"alignment": 64, "alignment": 8}', "line 1, column 29",
     "duplicate object key"),
    ("", "line 1, column 0", "invalid JSON"),
    ("hello", "line 1, column 5", "invalid JSON"),
    ("{}", "alignment", 'missing required key "alignment"'),
    ({"alignment": 2 ** 53 + 1}, "alignment", "beyond 2^53"),
    (ex1_with(colour="red"), "colour", ""),
    (ex1_with(schedule=[{"first": 5, "count": 1}]), "schedule[0]",
     "not inside the launch table"),
    (ex1_with(windows=[{"base": "0x1000"}]), "windows[0].size", "missing"),
    (ex1_with(format="arena-program/2"), "format", ""),
]


@pytest.mark.parametrize("program,where,phrase", CASES,
                         ids=[c[1] for c in CASES])
def test_malformed_json(program: Union[str, Dict[str, Any]], where: str,
                        phrase: str) -> None:
    text = program if isinstance(program, str) else json.dumps(program)
    with pytest.raises(arenacert.MalformedProgram) as caught:
        arenacert.certify(program)
    error = caught.value
    assert error.where == where
    assert phrase in error.message
    assert isinstance(error, ValueError)
    [cli] = cli_objects("-", stdin=text.encode())
    assert cli["verdict"] is None
    assert str(error) == cli["error"]


def image() -> bytes:
    return arenacert.to_image(example_dict("ex3"))


@pytest.mark.parametrize("cut", [8, 16, 50, 743])
def test_truncated_image_names_a_byte(cut: int) -> None:
    data = image()[:cut]
    with pytest.raises(arenacert.MalformedProgram) as caught:
        arenacert.certify(data)
    assert caught.value.where.startswith("byte ")
    [cli] = cli_objects("-", stdin=data)
    assert str(caught.value) == cli["error"]


def test_corrupted_image_names_the_field() -> None:
    data = bytearray(image())
    data[8] = 99                       # the version (docs/program-image.md)
    with pytest.raises(arenacert.MalformedProgram) as caught:
        arenacert.certify(data)
    assert caught.value.where.startswith("byte 8")
    [cli] = cli_objects("-", stdin=bytes(data))
    assert str(caught.value) == cli["error"]


@pytest.mark.parametrize("convert", [arenacert.to_image, arenacert.to_json])
def test_malformed_is_not_converted(convert: Any) -> None:
    with pytest.raises(arenacert.MalformedProgram, match="launches.0..words.1."):
        convert(FRACTION)


@pytest.mark.parametrize("value", [42, None, 1.5, ["alignment"]])
def test_not_a_program_form(value: Any) -> None:
    with pytest.raises(TypeError, match="a program is a dict"):
        arenacert.certify(value)


def test_nan_is_refused_before_the_library() -> None:
    with pytest.raises(ValueError):
        arenacert.certify({"alignment": float("nan")})
