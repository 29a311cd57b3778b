# SPDX-License-Identifier: MIT
"""The result of certifying a program: what ``arena-certify --json`` says."""
from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Tuple, Union

from . import _native


@dataclass(frozen=True)
class Advisory:
    """An advisory (section 6 of the specification): a fact about a
    well-formed program that leaves its certificate weaker than it reads.
    It never changes the verdict; strict mode counts it as a failure."""

    #: The advisory's name in the specification, e.g. "tensor-outside-windows".
    kind: str
    #: The tensor it names, as in ``arena-certify --json``: {"global": i} or
    #: {"phase": p, "plane": i, "phase_identity": ...}, with "name",
    #: "offset", "size" ("0x..." strings) and, for planes, "carried".
    tensor: Mapping[str, Any]
    #: Its first byte in no window.
    outside: int
    #: The library's text for it, as arena-certify prints it.
    explanation: str

    def __str__(self) -> str:
        return self.explanation


class Result:
    """The verdict of one program, with everything the library says about it.

    ``verdict`` is the exact verdict (spec section 3: 0 certified, 1 (A) or
    (B), 2 + i (C) at launch i, 2 + n + k (D) at instance k); ``condition``
    is "certified", "A", "B", "C" or "D"; ``reason`` the library's short
    name of what failed ("ok", "word-unnamed", "carried-overwritten", ...);
    ``explanation`` the rendered diagnostic (for verdict 0, "certified:
    conditions (A), (B), (C) and (D) hold over N executed launches");
    ``fields`` the whole object ``arena-certify --json`` prints for the
    program, without "file" (keys as documented in arena-certify(1));
    ``advisories`` the advisories.  ``result["launch"]`` reads a field.
    """

    def __init__(self, fields: Dict[str, Any],
                 source: Union[bytes, Callable[[], bytes]]) -> None:
        self.fields: Dict[str, Any] = fields
        self.verdict: int = fields["verdict"]
        self.condition: str = fields["condition"]
        self.reason: str = fields["reason"]
        self.explanation: str = fields.get("explanation", "")
        self.advisories: Tuple[Advisory, ...] = tuple(
            Advisory(kind=a["kind"], tensor=a["tensor"],
                     outside=int(a["outside"], 16),
                     explanation=a.get("explanation", a["kind"]))
            for a in fields.get("advisories", ()))
        self._source = source

    @property
    def diagnostic(self) -> str:
        """The rendered diagnostic (the same text as ``explanation``)."""
        return self.explanation

    @property
    def certified(self) -> bool:
        """True when the verdict is 0 (advisories or not)."""
        return self.verdict == 0

    @property
    def strictly_certified(self) -> bool:
        """True when the verdict is 0 and there is no advisory (strict mode)."""
        return self.verdict == 0 and not self.advisories

    def __getitem__(self, key: str) -> Any:
        return self.fields[key]

    def __contains__(self, key: object) -> bool:
        return key in self.fields

    def __str__(self) -> str:
        """As ``arena-certify`` prints it, without the file name."""
        lines = [f"verdict {self.verdict}"]
        lines += ["  " + line for line in self.explanation.splitlines()]
        lines += [f"  advisory {a.explanation}" for a in self.advisories]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"<arenacert.Result verdict={self.verdict} "
                f"condition={self.condition!r} reason={self.reason!r} "
                f"advisories={len(self.advisories)}>")

    def html(self, path: Union[str, "os.PathLike[str]"],
             name: str = "program") -> str:
        """Writes the HTML report of this program to ``path``: one
        self-contained page drawing its memory over time, the failing
        objects marked (docs/html-report.md).  The report is made by the
        installed ``arena-certify --html`` (``$ARENACERT_CLI`` names
        another), which is run on the certified bytes, saved as ``name``
        (the file name the report shows, ".json" or ".img" added; a
        dict certified without text is saved as the library's JSON of it,
        written from the dict when this is called).
        Returns the path.  RuntimeError if arena-certify fails or gives
        another verdict (a binary of another version)."""
        out = os.fspath(path)
        # a dict's JSON is written when asked
        source = self._source() if callable(self._source) else self._source
        is_image = source.startswith(b"ARENAPRG")
        with tempfile.TemporaryDirectory(prefix="arenacert-") as tmp:
            base = os.path.basename(name) + (".img" if is_image else ".json")
            with open(os.path.join(tmp, base), "wb") as f:
                f.write(source)
            run = subprocess.run(
                [_native.cli_path(), "--json", "--quiet", "--html",
                 os.path.abspath(out), "--", base],
                cwd=tmp, capture_output=True, text=True, check=False)
        first = run.stdout.splitlines()[0] if run.stdout else ""
        want = f'"verdict": {self.verdict},'
        if run.returncode not in (0, 1) or want not in first:
            raise RuntimeError(
                f"arenacert: arena-certify --html failed (status "
                f"{run.returncode}): {run.stderr.strip() or first}")
        return out


def result_of(data: bytes) -> Result:
    """Certifies a program's bytes (JSON text or image) in the library."""
    return Result(_native.certify_json(data), data)

