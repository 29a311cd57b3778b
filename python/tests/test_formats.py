# SPDX-License-Identifier: MIT
"""to_image and to_json: the library's canonical writers, both ways, and
every input form of certify giving one result."""
from __future__ import annotations

import json
import pathlib

import pytest

import arenacert
from conftest import cli_objects, required_path, spec_examples


@pytest.mark.parametrize("path", spec_examples(), ids=lambda p: p.stem)
def test_round_trips_are_canonical(path: pathlib.Path,
                                   tmp_path: pathlib.Path) -> None:
    image = arenacert.to_image(path)
    assert image.startswith(b"ARENAPRG")
    text = arenacert.to_json(image)
    assert arenacert.to_image(text) == image
    assert arenacert.to_image(image) == image
    assert arenacert.to_image(json.loads(text)) == image
    assert json.loads(arenacert.to_json(text)) == json.loads(text)
    # the same bytes arena-certify --convert writes
    out = tmp_path / "out.img"
    cli_objects("--convert", str(out), str(path))
    assert out.read_bytes() == image
    out = tmp_path / "out.json"
    cli_objects("--convert", str(out), str(path))
    assert out.read_text() == text


def test_every_form_one_result(tmp_path: pathlib.Path) -> None:
    ex4 = next(p for p in spec_examples() if p.stem == "ex4")
    image = arenacert.to_image(ex4)
    saved = tmp_path / "ex4.img"
    saved.write_bytes(image)
    fields = arenacert.certify(ex4).fields
    for form in (image, bytearray(image), memoryview(image), saved,
                 arenacert.to_json(image)):
        assert arenacert.certify(form).fields == fields


def test_loaded_library_is_the_build_trees() -> None:
    assert pathlib.Path(arenacert.LIBRARY_PATH).samefile(
        required_path("ARENACERT_LIBRARY"))
