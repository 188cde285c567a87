"""Words for where a stage line came from: "line 20 in `_attn_inner`, called from line 56".

The source map (inspectors.read.sourcemap) keeps, for code inlined from a `@triton.jit`
helper, the chain of frames from the helper's line out to the kernel's call:
(("", 20), ("", 56)), ("" = the kernel file, else the other file's path as the stages
spell it). This module names the helpers from the kernel file's own text (the stages do
not: no DISubprogram for inlined helpers, no function name in MLIR locations).
"""
from __future__ import annotations

import ast
from functools import lru_cache


@lru_cache(maxsize=32)
def _functions(source: str) -> tuple[tuple[int, int, str], ...]:
    """(first line, last line, name) of every function of the file, outer ones first;
    () when the text does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):    # deep nesting: `a.a.a...`, `((((...`
        return ()
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out.append((first, node.end_lineno or node.lineno, node.name))
    return tuple(sorted(out))


def function_at(source: str, line: int) -> str | None:
    """The name of the innermost function of `source` that holds `line`, or None."""
    best = None
    for first, last, name in _functions(source):
        if first <= line <= last and (best is None or first >= best[0]):
            best = (first, name)
    return best[1] if best else None


def _short(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def describe(chain: tuple, source: str = "") -> str:
    """A chain of frames, innermost first, in words: "line 50" outside helpers,
    "line 20 in `_attn_inner`, called from line 56", "line 5 of helpers.py, called from
    line 30", nested helpers one "called from" each. The kernel's own function is not
    named; helpers are, when `source` (the kernel file's text) holds them."""
    if not chain:
        return ""
    parts = []
    for k, (path, line) in enumerate(chain):
        if path:
            parts.append(f"line {line} of {_short(path)}")
            continue
        name = function_at(source, line) if source and k < len(chain) - 1 else None
        parts.append(f"line {line} in `{name}`" if name else f"line {line}")
    return ", called from ".join(parts)


def call_sites(chain: tuple) -> tuple[str, ...]:
    """The call sites of a chain in short form, innermost call first: ("56",) or, for a
    frame in another file, ("helpers.py:12",)."""
    return tuple(f"{_short(p)}:{ln}" if p else str(ln) for p, ln in chain[1:])
