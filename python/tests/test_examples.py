# SPDX-License-Identifier: MIT
"""The specification's worked examples: the .expect verdict, and exactly
the fields arena-certify --json prints, from every input form."""
from __future__ import annotations

import json
import pathlib

import pytest

import arenacert
from conftest import cli_objects, spec_examples


@pytest.mark.parametrize("path", spec_examples(), ids=lambda p: p.stem)
def test_example_verdict_and_fields(path: pathlib.Path) -> None:
    want = int(path.with_suffix(".expect").read_text().split()[0])
    text = path.read_text()
    forms = [text, text.encode(), json.loads(text), path,
             arenacert.to_image(text)]
    [cli] = cli_objects(str(path))
    for form in forms:
        result = arenacert.certify(form)
        assert result.verdict == want
        assert result.fields == cli
        assert result.certified == (want == 0)
        assert result.explanation == cli["explanation"]
        assert isinstance(result.verdict, int)


def test_result_reads_as_the_cli_prints() -> None:
    ex3 = next(p for p in spec_examples() if p.stem == "ex3")
    result = arenacert.certify(ex3)
    assert str(result).splitlines()[0] == "verdict 7"
    assert result.condition == "D" and result.reason == "carried-overwritten"
    assert result["instance"] == 2 and "instance" in result
    assert result["overwriter"]["name"] == "z"
    assert result.diagnostic.startswith("(D) fails at instance 2")
    assert "verdict=7" in repr(result)
