# SPDX-License-Identifier: MIT
"""libarenacert through ctypes: finding it, and the few calls the binding makes.

Nothing here knows the certificate: every answer (verdict, diagnostic,
structured fields, advisories, error locations) comes from the C library.
The library is found, in order, at

1. ``$ARENACERT_LIBRARY`` (a path), for a build tree or a test;
2. the path meson wrote into ``_config.py``: absolute for ``meson install``
   (PREFIX/LIBDIR), relative to this package's directory for pip's install
   and the wheel, which carry the library beside these files;
3. ``ctypes.util.find_library("arenacert")`` (the loader's search path).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
from typing import Any, Dict, Optional, Tuple

try:  # written by meson at install time; absent in the source tree
    from . import _config
except ImportError:  # pragma: no cover - depends on how it is run
    _config = None  # type: ignore[assignment]


class MalformedProgram(ValueError):
    """The input is not a well-formed program: it has no verdict.

    ``str(error)`` is the library's text, ``"where: message"``, as
    ``arena-certify`` prints it.  ``where`` is the JSON path
    (``"launches[0].words[1]"``) for JSON input, the byte offset
    (``"byte 16 (header.image_size)"``) for a program image, or the model path
    for a program that reads but is malformed; it may be empty (for example
    "not JSON and not a program image" has no place).
    """

    def __init__(self, where: str, message: str) -> None:
        self.where: str = where
        self.message: str = message
        super().__init__(f"{where}: {message}" if where else message)


class _Error(ctypes.Structure):
    """struct ac_error (arenaguard/program.h)."""

    _fields_ = [("where", ctypes.c_char * 128), ("message", ctypes.c_char * 256)]

    def raise_malformed(self) -> None:
        """Raises MalformedProgram with this error's text."""
        raise MalformedProgram(self.where.decode("utf-8", "replace"),
                               self.message.decode("utf-8", "replace"))


def _library_path() -> Tuple[Optional[str], str]:
    """The path to load and how it was chosen (for the error message)."""
    env = os.environ.get("ARENACERT_LIBRARY")
    if env:
        return env, "$ARENACERT_LIBRARY"
    configured = getattr(_config, "LIBRARY", None)
    if configured:
        # relative: the package's own directory (join keeps an absolute one)
        configured = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                  configured)
        if os.path.exists(configured):
            return configured, "the installed path (arenacert/_config.py)"
    found = ctypes.util.find_library("arenacert")
    if found:
        return found, "the loader's search path"
    return None, ("no $ARENACERT_LIBRARY, no installed path"
                  + (f" ({configured} is missing)" if configured else "")
                  + " and none on the loader's search path")


def _load() -> Tuple[ctypes.CDLL, str]:
    """Loads libarenacert and declares the calls used; returns it and its
    path.  ImportError when it cannot."""
    path, how = _library_path()
    if path is None:
        raise ImportError(
            "arenacert: cannot find libarenacert: " + how + "; install "
            "the package with pip (it carries the library) or arenaguard "
            "with meson install, or set ARENACERT_LIBRARY to the path of "
            "libarenacert.so")
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(f"arenacert: cannot load libarenacert from {path} "
                          f"({how}): {e}") from e
    try:
        lib.ac_certify_json.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                        ctypes.POINTER(ctypes.c_size_t),
                                        ctypes.POINTER(_Error)]
        lib.ac_certify_json.restype = ctypes.c_void_p
        lib.ac_model_read.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                      ctypes.POINTER(ctypes.c_void_p),
                                      ctypes.POINTER(_Error)]
        lib.ac_model_read.restype = ctypes.c_int
        lib.ac_model_free.argtypes = [ctypes.c_void_p]
        lib.ac_model_free.restype = None
        for writer in (lib.ac_model_write_json, lib.ac_model_write_image):
            writer.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                               ctypes.POINTER(_Error)]
            writer.restype = ctypes.c_void_p
    except AttributeError as e:
        raise ImportError(f"arenacert: {path} ({how}) lacks {e}: it is older "
                          "than this package") from e
    return lib, path


#: The path of the libarenacert this package loaded.
LIBRARY_PATH: str
_lib, LIBRARY_PATH = _load()
# The library's buffers are malloc'ed: freed by the C library's free().
_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None


def _take(pointer: Optional[int], length: int) -> bytes:
    """The bytes of a malloc'ed buffer, which is then freed."""
    assert pointer
    try:
        return ctypes.string_at(pointer, length)
    finally:
        _libc.free(pointer)


def certify_json(data: bytes) -> Dict[str, Any]:
    """ac_certify_json: the result object of ``arena-certify --json``
    (without "file") for a program's bytes (JSON text or image), parsed.
    Raises MalformedProgram."""
    err = _Error()
    length = ctypes.c_size_t(0)
    out = _lib.ac_certify_json(data, len(data), ctypes.byref(length),
                               ctypes.byref(err))
    if not out:
        err.raise_malformed()
    # Python's json keeps integers exact: the verdict stays a 64-bit value.
    result: Dict[str, Any] = json.loads(_take(out, length.value))
    return result


def convert(data: bytes, to_image: bool) -> bytes:
    """The program in data (JSON or image) written by the library's
    canonical writer, as an image or as JSON text.  Raises MalformedProgram
    when it cannot be read or written."""
    err = _Error()
    model = ctypes.c_void_p()
    if _lib.ac_model_read(data, len(data), ctypes.byref(model),
                          ctypes.byref(err)) != 0:
        err.raise_malformed()
    try:
        return write_model(model.value, to_image)
    finally:
        _lib.ac_model_free(model)


def write_model(model: Optional[int], to_image: bool) -> bytes:
    """A model (struct ac_model *) written by the library's canonical
    writer, as an image or as JSON text.  Raises MalformedProgram when it
    cannot be written."""
    err = _Error()
    length = ctypes.c_size_t(0)
    writer = _lib.ac_model_write_image if to_image else _lib.ac_model_write_json
    out = writer(model, ctypes.byref(length), ctypes.byref(err))
    if not out:
        err.raise_malformed()
    return _take(out, length.value)


def cli_path() -> str:
    """arena-certify: ``$ARENACERT_CLI``, the installed one (``meson
    install``'s path in _config.py, else the one pip put among this
    interpreter's scripts, which need not be on $PATH), or on $PATH.
    FileNotFoundError when there is none."""
    import shutil
    import sysconfig
    env = os.environ.get("ARENACERT_CLI")
    if env:
        return env
    configured: Optional[str] = getattr(_config, "CLI", None)
    if configured and os.path.exists(configured):
        return configured
    scripts = os.path.join(sysconfig.get_path("scripts"), "arena-certify")
    if _config is not None and not configured and os.path.exists(scripts):
        return scripts
    found = shutil.which("arena-certify")
    if found:
        return found
    raise FileNotFoundError(
        "arenacert: the HTML report is written by arena-certify, which is "
        "not installed, not on $PATH and not named by $ARENACERT_CLI")
