"""Frozen dataclasses to JSON and back, checked against their annotations on the way in.

What a worker sends is written by the user's code as much as by ours (a job's text is
untrusted), so decoding never trusts a shape: every value must be what the field's
annotation says, or `DecodeError` names the field that was not.

    plain = to_plain(insight)                  # dicts, lists, str, int, float, bool, None
    insight = from_plain(Insight, plain)       # the same objects again, or DecodeError

Annotations understood: str, int, float, bool, None, `X | None`, `tuple[X, ...]`,
`tuple[X, Y]`, `dict[K, V]` (K str or int: JSON keys are strings) and frozen dataclasses.
A bare `dict` or `tuple` is refused when decoding: a field that crosses the boundary says
what it holds. Strings are cut at MAX_STR characters; decoding is linear in the input.
"""
from __future__ import annotations

import dataclasses
import sys
import types
import typing
from functools import lru_cache

MAX_STR = 64 << 10          # a decoded string past this is cut (real ones: a PTX line, a sentence)
MAX_DEPTH = 32


class DecodeError(ValueError):
    """The data does not have the shape the annotations ask for; the message names the path."""


def to_plain(obj):
    """`obj` as JSON-able values: dataclasses become dicts of their fields, tuples lists,
    dict keys strings."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    return obj


@lru_cache(maxsize=None)
def _hints(cls) -> dict:
    module = sys.modules[cls.__module__]
    return typing.get_type_hints(cls, vars(module))


def from_plain(cls, data, path: str = ""):
    """`data` (from to_plain, or anything at all) as an instance of `cls`; DecodeError when it
    is not one."""
    return _decode(cls, data, path or getattr(cls, "__name__", "value"), 0)


def _fail(path: str, want, got) -> DecodeError:
    return DecodeError(f"{path}: expected {getattr(want, '__name__', want)}, got {type(got).__name__}")


def _decode(tp, data, path: str, depth: int):
    if depth > MAX_DEPTH:
        raise DecodeError(f"{path}: nested deeper than {MAX_DEPTH}")
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is type(None) or tp is None:
        if data is not None:
            raise _fail(path, "None", data)
        return None
    if origin in (typing.Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        errors = []
        for alt in args:
            if alt is type(None):
                continue
            try:
                return _decode(alt, data, path, depth + 1)
            except DecodeError as e:
                errors.append(str(e))
        raise DecodeError("; ".join(errors) or f"{path}: no alternative")
    if tp is bool:
        if not isinstance(data, bool):
            raise _fail(path, bool, data)
        return data
    if tp is int:
        if not isinstance(data, int) or isinstance(data, bool):
            raise _fail(path, int, data)
        return data
    if tp is float:
        if not isinstance(data, (int, float)) or isinstance(data, bool):
            raise _fail(path, float, data)
        return float(data)
    if tp is str:
        if not isinstance(data, str):
            raise _fail(path, str, data)
        return data if len(data) <= MAX_STR else data[:MAX_STR] + " … [cut]"
    if origin is tuple:
        if not isinstance(data, list):
            raise _fail(path, tuple, data)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v, f"{path}[{i}]", depth + 1) for i, v in enumerate(data))
        if not args or len(args) != len(data):
            raise DecodeError(f"{path}: expected {len(args)} items, got {len(data)}")
        return tuple(_decode(a, v, f"{path}[{i}]", depth + 1) for i, (a, v) in enumerate(zip(args, data)))
    if origin is dict:
        if not isinstance(data, dict) or len(args) != 2:
            raise _fail(path, dict, data)
        key_tp, value_tp = args
        out = {}
        for k, v in data.items():
            if key_tp is int:
                try:
                    key = int(k)
                except (TypeError, ValueError):
                    raise DecodeError(f"{path}: key {str(k)[:40]!r} is not an integer") from None
            elif key_tp is str and isinstance(k, str):
                key = k
            else:
                raise DecodeError(f"{path}: bad key {str(k)[:40]!r}")
            out[key] = _decode(value_tp, v, f"{path}[{str(k)[:40]}]", depth + 1)
        return out
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(data, dict):
            raise _fail(path, tp, data)
        hints = _hints(tp)
        values = {}
        for f in dataclasses.fields(tp):
            if not f.init:
                continue
            if f.name in data:
                values[f.name] = _decode(hints[f.name], data[f.name], f"{path}.{f.name}", depth + 1)
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise DecodeError(f"{path}.{f.name}: missing")
        unknown = set(data) - {f.name for f in dataclasses.fields(tp)}
        if unknown:
            raise DecodeError(f"{path}: unknown field {sorted(map(str, unknown))[0][:40]!r}")
        return tp(**values)
    raise DecodeError(f"{path}: cannot decode a {tp!r} (annotate what the field holds)")
