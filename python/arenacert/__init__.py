# SPDX-License-Identifier: MIT
"""arenacert: the device-arena certificate from Python.

A thin binding over libarenacert (ctypes; the semantics stay in C).  A
program is given as a dict in the JSON format
(``shared/spec/program-json.md``), as JSON text (``str``), as the bytes of
JSON text or of a binary program image (``docs/program-image.md``), or as
a path (``pathlib.Path``) to a file holding either::

    import arenacert
    result = arenacert.certify(plan)        # plan: a dict
    assert result.verdict == 0, result.explanation
    arenacert.assert_certified(plan)        # the same, for pytest

The API is described in ``docs/python.md``.
"""
from __future__ import annotations

import json
import os
import pathlib
from typing import Any, Mapping, Union

from ._native import LIBRARY_PATH, MalformedProgram
from ._native import convert as _convert
from ._result import Advisory, Result, result_of
from .testing import assert_certified

try:
    from ._config import VERSION as __version__
except ImportError:  # the source tree
    __version__ = "0+source"

#: What a program may be given as.
Program = Union[Mapping[str, Any], str, bytes, bytearray, memoryview,
                "os.PathLike[str]"]

__all__ = ["certify", "to_image", "to_json", "assert_certified", "Result",
           "Advisory", "MalformedProgram", "Program", "LIBRARY_PATH",
           "__version__"]


def program_bytes(program: Program) -> bytes:
    """The bytes of a program as the library reads them: a mapping is
    written as JSON text (``json.dumps``, so Python ints stay exact; the
    format takes integers up to 2**53, larger values as "0x..." strings),
    str is JSON text (UTF-8), bytes-like objects are used as they are, a
    path is read.  TypeError for anything else; a mapping that json cannot
    write (a set, bytes, ...) raises json's TypeError or ValueError."""
    if isinstance(program, Mapping):
        return json.dumps(program, allow_nan=False).encode("utf-8")
    if isinstance(program, str):
        return program.encode("utf-8", "surrogatepass")
    if isinstance(program, bytes):
        return program
    if isinstance(program, (bytearray, memoryview)):
        return bytes(program)
    if isinstance(program, os.PathLike):
        return pathlib.Path(program).read_bytes()
    raise TypeError("arenacert: a program is a dict, JSON text (str), the "
                    "bytes of JSON or of a program image, or a path; not "
                    f"{type(program).__name__}")


def certify(program: Program) -> Result:
    """Decides the certificate of a program (spec sections 1 to 3) and
    returns its Result: the exact ``verdict``, ``condition``, ``reason``,
    the rendered ``explanation``, every structured field of
    ``arena-certify --json`` in ``fields``, and the ``advisories``.

    Raises MalformedProgram (a ValueError) when the program is malformed:
    its message names what and where, a JSON path or a byte offset, as the
    library and arena-certify report it."""
    return result_of(program_bytes(program))


def to_image(program: Program) -> bytes:
    """The program as a binary program image (docs/program-image.md), in
    the library's canonical form: the same bytes from its JSON and from any
    image of it.  A malformed program raises MalformedProgram and is not
    converted, as with ``arena-certify --convert``."""
    data = program_bytes(program)
    result_of(data)  # malformed: raises, nothing converted
    return _convert(data, to_image=True)


def to_json(program: Program) -> str:
    """The program as JSON text in the library's form (the format of
    program-json.md), from an image or any other form.  A malformed
    program raises MalformedProgram and is not converted.  ``json.loads``
    of the text gives the dict form."""
    data = program_bytes(program)
    result_of(data)  # malformed: raises, nothing converted
    return _convert(data, to_image=False).decode("utf-8")
