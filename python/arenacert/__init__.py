# SPDX-License-Identifier: MIT
"""arenacert: the device-arena certificate from Python.

A thin binding over libarenacert (ctypes; the semantics stay in C).  A
program is given as a dict in the JSON format
(``shared/spec/program-json.md``; built into the library's model without
JSON text, words as lists or any buffer of integers), as JSON text
(``str``), as the bytes of JSON text or of a binary program image
(``docs/program-image.md``), or as a path (``pathlib.Path``) to a file
holding either; ``certify_columns`` takes the launch table as arrays::

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
from typing import Any, Mapping, Optional, Union

from . import _build
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

__all__ = ["certify", "certify_columns", "to_image", "to_json",
           "assert_certified", "Result",
           "Advisory", "MalformedProgram", "Program", "LIBRARY_PATH",
           "__version__"]


def program_bytes(program: Program) -> bytes:
    """The bytes of a program as the library reads them: a mapping is
    written as JSON text (``json.dumps``, so Python ints stay exact; the
    format takes integers up to 2**53, larger values as "0x..." strings;
    buffers of words as their lists), str is JSON text (UTF-8), bytes-like
    objects are used as they are, a path is read.  TypeError for anything
    else; a mapping that json cannot write (a set, bytes, ...) raises
    json's TypeError or ValueError."""
    if isinstance(program, Mapping):
        return json.dumps(program, allow_nan=False,
                          default=_build.json_default).encode("utf-8")
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


def _built(program: Program) -> Optional[_build.Model]:
    """The model of a mapping built without text, or None when it is not
    a mapping or holds a value the builder does not take as it is (then
    the JSON reader reads it, and says what is wrong and where).  Raises
    MalformedProgram for the builder's own errors (the reader's text)."""
    if not isinstance(program, Mapping):
        return None
    try:
        return _build.build(program)
    except _build.NotPlain:
        return None


def certify(program: Program) -> Result:
    """Decides the certificate of a program (spec sections 1 to 3) and
    returns its Result: the exact ``verdict``, ``condition``, ``reason``,
    the rendered ``explanation``, every structured field of
    ``arena-certify --json`` in ``fields``, and the ``advisories``.

    A dict is walked into the library's model (``include/arenaguard/
    builder.h``), no JSON text written; one holding a value the format
    does not take as it is (a float, a bool for a number, an unknown
    key, ...) is read as JSON text instead, so its error is the reader's.

    Raises MalformedProgram (a ValueError) when the program is malformed:
    its message names what and where, a JSON path or a byte offset, as the
    library and arena-certify report it."""
    model = _built(program)
    if model is None:
        return result_of(program_bytes(program))
    with model:
        fields = _build.certify_model(model)
    # for Result.html: the program's JSON text, written when asked
    return Result(fields, lambda: to_json(program).encode("utf-8"))


def certify_columns(plan: Mapping[str, Any], phase: Any, word_count: Any,
                    words: Any) -> Result:
    """Certifies a plan whose launch table is given as columns: ``plan``
    is the program's dict without "launches"; launch i declares phase
    ``plan["phases"][phase[i]]`` (as JSON's ``"phase"`` with that phase's
    identity), has ``word_count[i]`` words, taken in order from ``words``.
    Each column is a list, an ``array.array`` or any buffer of integers
    (numpy arrays among them); ``words`` of unsigned 64-bit items (typecode
    "Q", numpy's uint64) is used without conversion.  The verdict and
    errors are the library's, as for the same plan given as a dict (a
    plan holding a value the builder does not take as it is is read as
    JSON text, one object a launch, for the reader's error)."""
    try:
        model = _build.build_columns(plan, phase, word_count, words)
    except _build.NotPlain:   # the reader says what is wrong, and where
        return result_of(program_bytes(_build.columns_as_dict(
            plan, phase, word_count, words)))
    with model:
        fields = _build.certify_model(model)

    def source() -> bytes:   # for Result.html: the program's JSON text
        with _build.build_columns(plan, phase, word_count, words) as again:
            return _build.write_model(again, to_image=False)
    return Result(fields, source)


def _converted(program: Program, to_image: bool) -> bytes:
    """The program written by the library's canonical writer; a malformed
    program raises MalformedProgram and is not converted."""
    model = _built(program)
    if model is not None:
        with model:
            _build.certify_model(model)  # malformed: raises
            return _build.write_model(model, to_image)
    data = program_bytes(program)
    result_of(data)  # malformed: raises, nothing converted
    return _convert(data, to_image=to_image)


def to_image(program: Program) -> bytes:
    """The program as a binary program image (docs/program-image.md), in
    the library's canonical form: the same bytes from its JSON and from any
    image of it.  A malformed program raises MalformedProgram and is not
    converted, as with ``arena-certify --convert``."""
    return _converted(program, to_image=True)


def to_json(program: Program) -> str:
    """The program as JSON text in the library's form (the format of
    program-json.md), from an image or any other form.  A malformed
    program raises MalformedProgram and is not converted.  ``json.loads``
    of the text gives the dict form."""
    return _converted(program, to_image=False).decode("utf-8")
