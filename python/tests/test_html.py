# SPDX-License-Identifier: MIT
"""result.html: the report is arena-certify --html's, on the certified
bytes, under the given name."""
from __future__ import annotations

import pathlib

import pytest

import arenacert
from conftest import example_dict, spec_examples


@pytest.mark.parametrize("name", ["ex1", "ex3", "ex7b"])
def test_report_written(name: str, tmp_path: pathlib.Path) -> None:
    result = arenacert.certify(example_dict(name))
    out = tmp_path / "report.html"
    assert result.html(out, name="my-plan") == str(out)
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>my-plan.json: arena-certify report" in page
    assert f"verdict {result.verdict}" in page


def test_report_of_an_image_is_the_same(tmp_path: pathlib.Path) -> None:
    ex3 = next(p for p in spec_examples() if p.stem == "ex3")
    from_json = arenacert.certify(ex3).html(tmp_path / "a.html", name="ex3")
    image = arenacert.to_image(ex3)
    from_image = arenacert.certify(image).html(tmp_path / "b.html", name="ex3")
    a = pathlib.Path(from_json).read_text()
    b = pathlib.Path(from_image).read_text().replace("ex3.img", "ex3.json")
    assert a == b


def test_a_failing_cli_is_an_error(tmp_path: pathlib.Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    result = arenacert.certify(example_dict("ex1"))
    monkeypatch.setenv("ARENACERT_CLI", "/bin/false")
    with pytest.raises(RuntimeError, match="arena-certify --html failed"):
        result.html(tmp_path / "r.html")
    assert not (tmp_path / "r.html").exists()
