# SPDX-License-Identifier: MIT
"""The workload generator's realistic programs (bench/arena-workload: ViT,
LLM decode, checkpointed adjoint; sound and with each fault; with and
without repeats): the binding's result equals arena-certify's, field for
field, from the image and from the JSON."""
from __future__ import annotations

import pathlib
import subprocess

import pytest

import arenacert
from conftest import cli_objects, required_path

WORDS = 4000   # small: the whole matrix runs in about a second

CASES = [(kind, fault, repeat)
         for kind in ("vit", "decode", "adjoint")
         for fault in (None, "reuse", "stride")
         for repeat in (False, True)
         if not (repeat and kind != "vit")]


@pytest.mark.parametrize("kind,fault,repeat", CASES,
                         ids=[f"{k}-{f or 'sound'}{'-repeat' if r else ''}"
                              for k, f, r in CASES])
def test_workload_as_the_cli(kind: str, fault: str, repeat: bool,
                             tmp_path: pathlib.Path) -> None:
    generator = required_path("ARENACERT_WORKLOAD")
    args = [str(generator), kind, "--words", str(WORDS)]
    args += ["--fault", fault] if fault else []
    args += ["--repeat"] if repeat else []
    image, text = tmp_path / "w.img", tmp_path / "w.json"
    subprocess.run(args + ["-o", str(image)], check=True, capture_output=True)
    subprocess.run(args + ["--json", "-o", str(text)], check=True,
                   capture_output=True)
    [cli] = cli_objects(str(image))
    from_image = arenacert.certify(image.read_bytes())
    from_json = arenacert.certify(text.read_text())
    assert from_image.fields == cli
    assert from_json.fields == cli
    assert (from_image.verdict == 0) == (fault is None)
