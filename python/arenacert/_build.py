# SPDX-License-Identifier: MIT
"""Plans given as values, built into a model through libarenacert's builder
(``include/arenaguard/builder.h``): no JSON text is written or parsed.

Two forms:

- a dict in the JSON format's shape (``shared/spec/program-json.md``),
  walked here; words as lists or tuples of ints, or any object with the
  buffer protocol (``array.array``, numpy arrays: never imported here);
- columns (:func:`build_columns`): the plan's dict without launches, and the
  launch table as three arrays: each launch's phase index, its word count,
  and all the words in launch order.

Which values the builder takes is decided here only by their Python type
and, for numbers, by the JSON format's own rules (an int in 0 .. 2**53, or a
decimal or "0x" string below 2**64).  A value that is not of those shapes
(a float, a bool where a number belongs, an unknown key, a missing one, a
number string this does not recognise, ...) raises :class:`NotPlain`, and
the caller gives the same dict to the JSON reader as text: what is wrong
and where is then said by the library's reader, exactly as arena-certify
says it (one source of truth for every error text).  Errors of the
builder itself (a frame of the wrong length) and of the model (an index
past its table) are the library's too, with the same paths.
"""
from __future__ import annotations

import array
import collections
import ctypes
import itertools
import json
import operator
import re
import sys
from typing import (Any, Dict, FrozenSet, List, Mapping, Optional, Sequence,
                    Tuple)

from . import _native
from ._native import MalformedProgram

#: The largest integer JSON holds exactly: the format's limit on ints.
EXACT_MAX = 1 << 53
_U64 = re.compile(r"0x[0-9a-fA-F]+|[0-9]+")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})*")
_MISSING = object()

ROOT_KEYS = frozenset(("format", "alignment", "windows", "globals", "phases",
                       "launches", "repeats", "schedule"))
WINDOW_KEYS = frozenset(("name", "name_hex", "base", "size"))
GLOBAL_KEYS = WINDOW_KEYS - {"base"} | {"offset"}
PLANE_KEYS = GLOBAL_KEYS | {"carried"}
PHASE_KEYS = frozenset(("identity", "identity_hex", "planes"))
LAUNCH_KEYS = frozenset(("phase", "phase_hex", "identity_hex", "words"))
REPEAT_KEYS = frozenset(("first", "count", "iterations", "deltas", "table"))
TABLE_KEYS = frozenset(("slots", "frames"))
DELTA_KEYS = frozenset(("launch", "word", "delta"))
SLOT_KEYS = frozenset(("launch", "word"))
REF_KEYS = frozenset(("first", "count"))

#: The builder's form of a launch identity, by its JSON key.
_FORMS = {"phase": 0, "phase_hex": 0, "identity_hex": 1}


class NotPlain(Exception):
    """A value the builder does not take as it is: the JSON reader, given
    the same plan as text, says what is wrong with it and where."""


# ---- the library's builder --------------------------------------------

_lib = _native._lib
_P = ctypes.c_void_p
_U = ctypes.c_uint64
_SIGNATURES = {
    "ac_builder_new": (_P, [_U]),
    "ac_builder_free": (None, [_P]),
    "ac_builder_window": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_size_t,
                                         _U, _U]),
    "ac_builder_global": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_size_t,
                                         _U, _U]),
    "ac_builder_phase": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_size_t]),
    "ac_builder_plane": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_size_t,
                                        _U, _U, ctypes.c_int]),
    "ac_builder_identity": (ctypes.c_int, [_P, ctypes.c_int, ctypes.c_char_p,
                                           ctypes.c_size_t,
                                           ctypes.POINTER(ctypes.c_uint32)]),
    "ac_builder_launches": (ctypes.c_int, [_P, _U, _P, _P, _P, _U]),
    "ac_builder_repeat": (ctypes.c_int, [_P, _U, _U, _U]),
    "ac_builder_delta": (ctypes.c_int, [_P, _U, _U, ctypes.c_int64]),
    "ac_builder_table": (ctypes.c_int, [_P, _P, _U]),
    "ac_builder_frame": (ctypes.c_int, [_P, _P, _U]),
    "ac_builder_ref": (ctypes.c_int, [_P, _U, _U]),
    "ac_builder_finish": (_P, [_P, ctypes.POINTER(_native._Error)]),
    "ac_certify_model_json": (_P, [_P, ctypes.POINTER(ctypes.c_size_t),
                                   ctypes.POINTER(_native._Error)]),
}
try:
    for _name, (_restype, _argtypes) in _SIGNATURES.items():
        _fn = getattr(_lib, _name)
        _fn.restype = _restype
        _fn.argtypes = _argtypes
except AttributeError as e:  # pragma: no cover - an old library
    raise ImportError(f"arenacert: {_native.LIBRARY_PATH} lacks {e}: it is "
                      "older than this package") from e


class Model:
    """A model the library built (``struct ac_model *``), freed on close."""

    def __init__(self, pointer: int) -> None:
        self.pointer = pointer

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc: object) -> None:
        _lib.ac_model_free(self.pointer)
        self.pointer = 0


# ---- values -------------------------------------------------------------

def u64(v: Any) -> int:
    """An unsigned 64-bit value as the JSON format has it, else NotPlain."""
    if type(v) is int:
        if 0 <= v <= EXACT_MAX:
            return v
    elif type(v) is str and _U64.fullmatch(v):
        n = int(v[2:], 16) if v.startswith("0x") else int(v)
        if n < 1 << 64:
            return n
    raise NotPlain


def i64(v: Any) -> int:
    """A signed 64-bit value as the JSON format has it, else NotPlain."""
    if type(v) is int:
        if -EXACT_MAX <= v <= EXACT_MAX:
            return v
    elif type(v) is str:
        minus = v.startswith("-")
        if _U64.fullmatch(v, 1 if minus else 0):
            digits = v[1:] if minus else v
            n = int(digits[2:], 16) if digits.startswith("0x") else int(digits)
            n = -n if minus else n
            if -(1 << 63) <= n < 1 << 63:
                return n
    raise NotPlain


def text(v: Any) -> bytes:
    """A JSON string's UTF-8 bytes (lone surrogates are not JSON)."""
    if type(v) is not str:
        raise NotPlain
    try:
        return v.encode("utf-8")
    except UnicodeEncodeError:
        raise NotPlain from None


def hex_bytes(v: Any) -> bytes:
    """The bytes of a string of hex digit pairs."""
    if type(v) is not str or not _HEX.fullmatch(v):
        raise NotPlain
    return bytes.fromhex(v)


def obj(v: Any, keys: FrozenSet[str]) -> Dict[str, Any]:
    """v as an object holding only the given keys."""
    if not isinstance(v, dict) or not v.keys() <= keys:
        raise NotPlain
    return v


def seq(v: Any) -> Sequence[Any]:
    """v as a JSON array (a list or a tuple, as json.dumps writes them)."""
    if not isinstance(v, (list, tuple)):
        raise NotPlain
    return v


def opt_seq(o: Mapping[str, Any], key: str) -> Sequence[Any]:
    v = o.get(key, _MISSING)
    return () if v is _MISSING else seq(v)


def need(o: Mapping[str, Any], key: str) -> Any:
    v = o.get(key, _MISSING)
    if v is _MISSING:
        raise NotPlain
    return v


def name(o: Mapping[str, Any], key: str, required: bool = True) -> bytes:
    """key (text) or key_hex (hex digits), exactly one; b"" when neither
    is given and the name is optional."""
    plain, hexed = o.get(key, _MISSING), o.get(key + "_hex", _MISSING)
    if plain is not _MISSING and hexed is not _MISSING:
        raise NotPlain
    if plain is not _MISSING:
        return text(plain)
    if hexed is not _MISSING:
        return hex_bytes(hexed)
    if required:
        raise NotPlain
    return b""


def json_default(v: Any) -> Any:
    """json.dumps's hook for the fallback: a buffer as its list of values
    (those beyond JSON's exact integers as "0x" strings, as the format
    writes them), so that the reader judges the rest of the plan."""
    try:
        values = memoryview(v).tolist()
    except TypeError:
        raise TypeError(f"Object of type {type(v).__name__} is not JSON "
                        "serializable") from None
    return [x if type(x) is not int or x <= EXACT_MAX else hex(x)
            for x in values]


# ---- words ---------------------------------------------------------------

#: The buffer formats of native unsigned 64-bit items (numpy's uint64 is
#: "L" on LP64 hosts, array's "Q").
_NATIVE_U64: FrozenSet[str] = frozenset(
    ["Q", "@Q", "=Q"] + (["L", "@L"] if ctypes.sizeof(ctypes.c_ulong) == 8
                         else []) + (["<Q"] if sys.byteorder == "little"
                                     else []))


def buffer_u64(v: Any) -> "array.array[int]":
    """A buffer of unsigned 64-bit values as array('Q') (no copy of the
    Python objects: a memory copy at most); NotPlain for other formats."""
    try:
        mv = memoryview(v)
    except TypeError:
        raise NotPlain from None
    if mv.ndim != 1 or mv.itemsize != 8 or mv.format not in _NATIVE_U64:
        raise NotPlain
    out = array.array("Q")
    out.frombytes(mv.cast("B") if mv.c_contiguous else mv.tobytes())
    return out


_INTEGER_FORMATS = frozenset("bBhHiIlLqQ")


def word_list(v: Any) -> List[Any]:
    """A launch's words: a list as it is, a tuple as a list, a
    one-dimensional buffer of integers as its values; else NotPlain."""
    if isinstance(v, list):
        return v
    if isinstance(v, tuple):
        return list(v)
    try:
        mv = memoryview(v)
    except TypeError:
        raise NotPlain from None
    if mv.ndim != 1 or mv.format.lstrip("@=<>!") not in _INTEGER_FORMATS:
        raise NotPlain
    values: List[Any] = mv.tolist()
    return values


def exact_words(flat: List[Any]) -> "array.array[int]":
    """Every word of the plan, as the format takes them, in one array."""
    try:
        words = array.array("Q", flat)
    except (TypeError, OverflowError):
        # number strings (the "0x..." form), or values the reader refuses
        return array.array("Q", [u64(w) for w in flat])
    if not below_exact_max(words) or bool in set(map(type, flat)):
        raise NotPlain   # beyond JSON's exact integers, or true/false
    return words


def below_exact_max(words: "array.array[int]") -> bool:
    """Whether every word is at most 2**53, by their bytes: the top byte
    zero, the next below 0x20 (else exactly 2**53), no Python int made."""
    raw = words.tobytes()
    top, second = (7, 6) if sys.byteorder == "little" else (0, 1)
    if raw[top::8].count(0) != len(words):
        return False
    if not raw[second::8].translate(None, bytes(range(0x20))):
        return True
    return max(words) <= EXACT_MAX   # some at 2**48 * 0x20 or above


def address(a: "array.array[int]") -> int:
    return a.buffer_info()[0]


# ---- the builder walk ----------------------------------------------------

class _Builder:
    """ac_builder_new .. ac_builder_finish around one walk."""

    def __init__(self, alignment: int) -> None:
        self.b = _lib.ac_builder_new(alignment)
        if not self.b:
            raise MemoryError("arenacert: out of memory")

    def __enter__(self) -> "_Builder":
        return self

    def __exit__(self, *exc: object) -> None:
        _lib.ac_builder_free(self.b)

    def finish(self) -> Model:
        err = _native._Error()
        model = _lib.ac_builder_finish(self.b, ctypes.byref(err))
        if not model:
            err.raise_malformed()
        return Model(model)


def _plan(b: Any, program: Mapping[str, Any]) -> None:
    """Windows, globals, phases and planes into builder b."""
    for w in opt_seq(program, "windows"):
        w = obj(w, WINDOW_KEYS)
        nm = name(w, "name", required=False)
        _lib.ac_builder_window(b, nm, len(nm), u64(need(w, "base")),
                               u64(need(w, "size")))
    for g in opt_seq(program, "globals"):
        g = obj(g, GLOBAL_KEYS)
        nm = name(g, "name")
        _lib.ac_builder_global(b, nm, len(nm), u64(need(g, "offset")),
                               u64(need(g, "size")))
    for p in opt_seq(program, "phases"):
        p = obj(p, PHASE_KEYS)
        ident = name(p, "identity")
        _lib.ac_builder_phase(b, ident, len(ident))
        for t in opt_seq(p, "planes"):
            t = obj(t, PLANE_KEYS)
            nm = name(t, "name")
            carried = need(t, "carried")
            if type(carried) is not bool:
                raise NotPlain
            _lib.ac_builder_plane(b, nm, len(nm), u64(need(t, "offset")),
                                  u64(need(t, "size")), int(carried))


def _identity(b: Any, key: str, value: Any) -> int:
    """A launch identity given as JSON's key ("phase", "phase_hex" or
    "identity_hex") and value, into the identity table; its index."""
    if type(value) is not str:
        raise NotPlain
    data = text(value) if key == "phase" else hex_bytes(value)
    index = ctypes.c_uint32()
    if _lib.ac_builder_identity(b, _FORMS[key], data, len(data),
                                ctypes.byref(index)) != 0:
        raise NotPlain   # (cannot be: a length below 2^32; the reader says)
    return index.value


def _uniform(launches: Sequence[Any]) -> Optional[Tuple[str, List[Any],
                                                        List[Any]]]:
    """The launches' identity values and word lists when every launch is
    a dict with the first one's keys (one identity key, and "words" or
    not): taken by C-level loops (map), no Python code a launch.  None
    when they are not all of one shape (the general walk then looks)."""
    first = launches[0]
    if set(map(type, launches)) != {dict} or not first.keys() <= LAUNCH_KEYS:
        return None
    keys = [k for k in first if k != "words"]
    n = len(first)
    if len(keys) != 1 or set(map(len, launches)) != {n}:
        return None
    try:
        values = list(map(operator.itemgetter(keys[0]), launches))
        words = (list(map(operator.itemgetter("words"), launches))
                 if n == 2 else [()] * len(launches))
    except KeyError:
        return None
    return keys[0], values, words


def _general(launches: Sequence[Any]) -> Tuple[List[str], List[Any],
                                                List[Any]]:
    """The same as _uniform for launches of mixed shapes, a launch at a
    time: each launch's identity key and value, and its words."""
    keys: List[str] = []
    values: List[Any] = []
    words: List[Any] = []
    for launch in launches:
        launch = obj(launch, LAUNCH_KEYS)
        if len(launch) - ("words" in launch) != 1:
            raise NotPlain   # not exactly one source identity
        key = next(k for k in launch if k != "words")
        keys.append(key)
        values.append(launch[key])
        words.append(launch.get("words", ()))
    return keys, values, words


def _launches(b: Any, launches: Sequence[Any]) -> None:
    """The launches of a dict, one object each: their identities into the
    identity table (each distinct one once), their words into one array.
    Every loop over launches or words here is a C-level one."""
    if not launches:
        return
    uniform = _uniform(launches)
    if uniform is not None:
        key, values, words = uniform
        if set(map(type, values)) != {str}:
            raise NotPlain
        index = {v: _identity(b, key, v) for v in set(values)}
        ids = array.array("I", map(index.__getitem__, values))
    else:
        keys, values, words = _general(launches)
        if set(map(type, values)) != {str}:
            raise NotPlain   # (and no unhashable value reaches the table)
        pairs = list(zip(keys, values))
        table = {kv: _identity(b, *kv) for kv in set(pairs)}
        ids = array.array("I", map(table.__getitem__, pairs))
    if set(map(type, words)) != {list}:
        words = [w if type(w) is list else word_list(w) for w in words]
    counts = array.array("I", map(len, words))
    flat: List[Any] = []
    collections.deque(map(flat.extend, words), maxlen=0)
    _columns(b, ids, counts, exact_words(flat))


def _columns(b: Any, ids: "array.array[int]", counts: "array.array[int]",
             words: "array.array[int]") -> None:
    _lib.ac_builder_launches(b, len(ids), address(ids), address(counts),
                             address(words), len(words))


def _rest(b: Any, program: Mapping[str, Any]) -> None:
    """Repeats and the schedule into builder b."""
    for r in opt_seq(program, "repeats"):
        r = obj(r, REPEAT_KEYS)
        _lib.ac_builder_repeat(b, u64(need(r, "first")), u64(need(r, "count")),
                               u64(need(r, "iterations")))
        for d in opt_seq(r, "deltas"):
            d = obj(d, DELTA_KEYS)
            _lib.ac_builder_delta(b, u64(need(d, "launch")),
                                  u64(need(d, "word")), i64(need(d, "delta")))
        table = r.get("table", _MISSING)
        if table is _MISSING:
            continue
        table = obj(table, TABLE_KEYS)
        slots = array.array("Q")
        for s in seq(need(table, "slots")):
            s = obj(s, SLOT_KEYS)
            slots.extend((u64(need(s, "launch")), u64(need(s, "word"))))
        _lib.ac_builder_table(b, address(slots), len(slots) // 2)
        for frame in seq(need(table, "frames")):
            values = array.array("Q", [u64(v) for v in seq(frame)])
            _lib.ac_builder_frame(b, address(values), len(values))
    for ref in opt_seq(program, "schedule"):
        ref = obj(ref, REF_KEYS)
        _lib.ac_builder_ref(b, u64(need(ref, "first")), u64(need(ref, "count")))


def _root(program: Any) -> int:
    """The root object's checks; its alignment."""
    if not isinstance(program, dict) or not program.keys() <= ROOT_KEYS:
        raise NotPlain
    fmt = program.get("format", _MISSING)
    if fmt is not _MISSING and (type(fmt) is not str or
                                fmt != "arena-program/1"):
        raise NotPlain
    return u64(need(program, "alignment"))


def build(program: Mapping[str, Any]) -> Model:
    """The model of a dict in the JSON format's shape.  NotPlain when a
    value is not of the shapes the builder takes (the JSON reader is then
    to say why); MalformedProgram for the builder's own errors."""
    with _Builder(_root(program)) as b:
        _plan(b.b, program)
        _launches(b.b, opt_seq(program, "launches"))
        _rest(b.b, program)
        return b.finish()


def u64_column(v: Any, what: str, typecode: str) -> "array.array[int]":
    """A column as an array of typecode ("Q" or "I"): a buffer of that
    width as it is, else its values (ValueError naming the column and the
    first value that does not fit)."""
    if isinstance(v, array.array) and v.typecode == typecode:
        return v
    if typecode == "Q":
        try:
            return buffer_u64(v)
        except NotPlain:
            pass
    values = word_list(v) if not isinstance(v, (list, tuple)) else v
    try:
        return array.array(typecode, values)
    except (TypeError, OverflowError):
        limit = (1 << (8 * array.array(typecode).itemsize)) - 1
        for i, x in enumerate(values):
            if type(x) is not int or not 0 <= x <= limit:
                raise ValueError(f"arenacert: {what}[{i}]: {x!r} is not an "
                                 f"integer in 0 .. {limit}") from None
        raise


def build_columns(plan: Mapping[str, Any], phase: Any, word_count: Any,
                  words: Any) -> Model:
    """The model of a plan (a dict without launches) whose launch table is
    given as columns: launch i declares phase ``plan["phases"][phase[i]]``
    (its identity is that phase's, as JSON's "phase"), has word_count[i]
    words, taken in order from words.  Each column is a list, an
    ``array.array`` or any buffer of integers (numpy arrays among them);
    words of unsigned 64-bit items are used without conversion."""
    if "launches" in plan:
        raise TypeError("arenacert: certify_columns takes the launches as "
                        "columns; the plan must not hold \"launches\"")
    ids = u64_column(phase, "phase", "I")
    counts = u64_column(word_count, "word_count", "I")
    flat = u64_column(words, "words", "Q")
    with _Builder(_root(plan)) as b:
        _plan(b.b, plan)
        for p in opt_seq(plan, "phases"):
            ident = name(p, "identity")
            _lib.ac_builder_identity(b.b, 0, ident, len(ident), None)
        if len(ids) != len(counts):
            raise ValueError(f"arenacert: {len(ids)} phases but "
                             f"{len(counts)} word counts: one each a launch")
        _columns(b.b, ids, counts, flat)
        _rest(b.b, plan)
        return b.finish()


def certify_model(model: Model) -> Dict[str, Any]:
    """ac_certify_model_json: the result object of a built model, parsed
    as _native.certify_json parses ac_certify_json's.  MalformedProgram
    when the model is malformed (ac_program_new's error)."""
    err = _native._Error()
    length = ctypes.c_size_t(0)
    out = _lib.ac_certify_model_json(model.pointer, ctypes.byref(length),
                                     ctypes.byref(err))
    if not out:
        err.raise_malformed()
    fields: Dict[str, Any] = json.loads(_native._take(out, length.value))
    return fields


def write_model(model: Model, to_image: bool) -> bytes:
    """The model written by the library's canonical writer."""
    return _native.write_model(model.pointer, to_image)


def columns_as_dict(plan: Mapping[str, Any], phase: Any, word_count: Any,
                    words: Any) -> Dict[str, Any]:
    """The dict form of a columnar plan, one object a launch (its phase's
    identity as "phase" or "phase_hex"; none for an index past the
    phases), for the JSON reader to say what is wrong with a plan whose
    values the builder does not take as they are."""
    phases = plan.get("phases", [])
    ids, counts = list(word_list(phase)), list(word_list(word_count))
    flat = list(word_list(words))
    launches: List[Dict[str, Any]] = []
    at = 0
    for p, n in zip(ids, counts):
        launch: Dict[str, Any] = {"words": flat[at:at + n]}
        at += n
        source = (phases[p] if isinstance(phases, (list, tuple))
                  and type(p) is int and 0 <= p < len(phases) else None)
        if isinstance(source, dict):
            for key in ("identity", "identity_hex"):
                if key in source:
                    launch["phase" if key == "identity" else "phase_hex"] = \
                        source[key]
                    break
        launches.append(launch)
    return {**plan, "launches": launches}
