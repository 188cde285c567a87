"""Frozen dataclasses to JSON and back, checked against their annotations on the way in.

What a worker sends is written by the user's code as much as by ours (a job's text is
untrusted), so decoding never trusts a shape: every value must be what the field's
annotation says, or `DecodeError` names the field that was not.

    plain = to_plain(insight)                  # dicts, lists, str, int, float, bool, None
    insight = from_plain(Insight, plain)       # the same objects again, or DecodeError

Annotations understood: str, int, float, bool, None, `X | None`, `tuple[X, ...]`,
`tuple[X, Y]`, `dict[K, V]` (K str or int: JSON keys are strings) and frozen dataclasses.
A bare `dict` or `tuple` is refused when decoding: a field that crosses the boundary says
what it holds. Strings are cut at MAX_STR characters; decoding is linear in the input and
follows the annotations, so it goes no deeper than the type does.
"""
from __future__ import annotations

import dataclasses
import sys
import types
import typing
from functools import lru_cache

MAX_STR = 64 << 10          # a decoded string past this is cut (real ones: a PTX line, a sentence)


class DecodeError(ValueError):
    """The data does not have the shape the annotations ask for; the message names the path."""


_LEAVES = (str, int, float, bool, type(None))


def to_plain(obj):
    """`obj` as JSON-able values: dataclasses become dicts of their fields, tuples lists,
    dict keys strings."""
    if isinstance(obj, _LEAVES):
        return obj
    if isinstance(obj, (list, tuple)):
        if all(isinstance(v, _LEAVES) for v in obj):
            return list(obj)
        return [to_plain(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): (v if isinstance(v, _LEAVES) else to_plain(v)) for k, v in obj.items()}
    names = _field_names(type(obj))
    if names is not None:
        return {n: to_plain(getattr(obj, n)) for n in names}
    return obj


@lru_cache(maxsize=None)
def _field_names(cls) -> tuple[str, ...] | None:
    return tuple(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else None


@lru_cache(maxsize=None)
def _hints(cls) -> dict:
    module = sys.modules[cls.__module__]
    return typing.get_type_hints(cls, vars(module))


def from_plain(cls, data, path: str = ""):
    """`data` (from to_plain, or anything at all) as an instance of `cls`; DecodeError when it
    is not one. Decoding follows the annotations (built once per type: _decoder), so data
    nested deeper than the type is refused at the first level that does not fit."""
    return _decoder(cls)(data, path or getattr(cls, "__name__", "value"))


def _fail(path: str, want, got) -> DecodeError:
    return DecodeError(f"{path}: expected {getattr(want, '__name__', want)}, got {type(got).__name__}")


def _cut(text: str) -> str:
    return text if len(text) <= MAX_STR else text[:MAX_STR] + " … [cut]"


@lru_cache(maxsize=None)
def _decoder(tp):
    """A function (data, path) -> value for the annotation `tp`, or DecodeError."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is type(None) or tp is None:
        def none(data, path):
            if data is not None:
                raise _fail(path, "None", data)
        return none
    if origin in (typing.Union, types.UnionType):
        alternatives = [_decoder(a) for a in args if a is not type(None)]
        optional = type(None) in args

        def union(data, path):
            if data is None and optional:
                return None
            errors = []
            for alt in alternatives:
                try:
                    return alt(data, path)
                except DecodeError as e:
                    errors.append(str(e))
            raise DecodeError("; ".join(errors) or f"{path}: no alternative")
        return union
    if tp in (bool, int, float, str):
        return _SCALARS[tp]
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _decoder(args[0])
            if args[0] is int:           # line numbers: the common case, without a call per item
                def ints(data, path):
                    if not isinstance(data, list) or not all(type(v) is int for v in data):
                        raise _fail(path, "tuple of int", data)
                    return tuple(data)
                return ints

            def many(data, path):
                if not isinstance(data, list):
                    raise _fail(path, tuple, data)
                return tuple(item(v, f"{path}[{i}]") for i, v in enumerate(data))
            return many
        items = [_decoder(a) for a in args]

        def fixed(data, path):
            if not isinstance(data, list):
                raise _fail(path, tuple, data)
            if len(data) != len(items):
                raise DecodeError(f"{path}: expected {len(items)} items, got {len(data)}")
            return tuple(f(v, f"{path}[{i}]") for i, (f, v) in enumerate(zip(items, data)))
        return fixed
    if origin is dict:
        if len(args) != 2 or args[0] not in (int, str):
            raise DecodeError(f"cannot decode a {tp!r}: keys must be int or str")
        int_keys, value = args[0] is int, _decoder(args[1])
        plain_ints = args[1] is int

        def mapping(data, path):
            if not isinstance(data, dict):
                raise _fail(path, dict, data)
            out = {}
            for k, v in data.items():
                if int_keys:
                    try:
                        key = int(k)
                    except (TypeError, ValueError):
                        raise DecodeError(f"{path}: key {str(k)[:40]!r} is not an integer") from None
                elif isinstance(k, str):
                    key = k
                else:
                    raise DecodeError(f"{path}: bad key {str(k)[:40]!r}")
                if plain_ints and type(v) is int:
                    out[key] = v
                else:
                    out[key] = value(v, f"{path}[{str(k)[:40]}]")
            return out
        return mapping
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass_decoder(tp)
    raise DecodeError(f"cannot decode a {tp!r} (annotate what the field holds)")


def _dataclass_decoder(tp):
    hints = _hints(tp)
    fields = [f for f in dataclasses.fields(tp) if f.init]
    names = {f.name for f in dataclasses.fields(tp)}
    required = {f.name for f in fields
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    decoders: dict = {}          # filled on first use: a dataclass may name itself through a field

    def record(data, path):
        if not isinstance(data, dict):
            raise _fail(path, tp, data)
        if not decoders:
            decoders.update({f.name: _decoder(hints[f.name]) for f in fields})
        unknown = set(data) - names
        if unknown:
            raise DecodeError(f"{path}: unknown field {sorted(map(str, unknown))[0][:40]!r}")
        missing = required - set(data)
        if missing:
            raise DecodeError(f"{path}.{sorted(missing)[0]}: missing")
        return tp(**{name: decoders[name](v, f"{path}.{name}") for name, v in data.items() if name in decoders})
    return record


def _scalar(tp):
    def check(data, path):
        if tp is float:
            if not isinstance(data, (int, float)) or isinstance(data, bool):
                raise _fail(path, float, data)
            return float(data)
        if tp is int and (not isinstance(data, int) or isinstance(data, bool)):
            raise _fail(path, int, data)
        if tp is bool and not isinstance(data, bool):
            raise _fail(path, bool, data)
        if tp is str:
            if not isinstance(data, str):
                raise _fail(path, str, data)
            return _cut(data)
        return data
    return check


_SCALARS = {tp: _scalar(tp) for tp in (bool, int, float, str)}
