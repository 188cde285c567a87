"""Bracket depth in compiler text: split at a separator only outside brackets, find the bracket
that closes an opening one, find where a top-level item ends. E.g.

    split_top('%x: tensor<128x!tt.ptr<f32>, #blocked>, %n: i32')
        -> ['%x: tensor<128x!tt.ptr<f32>, #blocked>', ' %n: i32']
    matching('loc("x"(#loc7))', 3) -> 14

Every bracket of `opens` counts +1 and every one of `closes` -1, whatever its kind (the texts
read here are balanced; a mismatch is not repaired, and an unclosed bracket leaves the rest of
the text inside it). Text between two equal characters of `quotes` is skipped, a backslash
escaping the character after it; quotes="" reads every character. The defaults are MLIR's:
(), [], {} and <> (the `>` of `->` counts too), "strings". Pure functions of the text.
"""
from __future__ import annotations

OPENS, CLOSES, QUOTES = "([{<", ")]}>", '"'


def _string_end(text: str, i: int) -> int:
    """Index of the quote closing the string that opens at `i`; len(text) if it never closes."""
    quote, j, n = text[i], i + 1, len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
        elif c == quote:
            return j
        else:
            j += 1
    return n


def split_top(text: str, sep: str = ",", opens: str = OPENS, closes: str = CLOSES,
              quotes: str = QUOTES) -> list[str]:
    """`text` split at each `sep` (one character) outside brackets and strings, as str.split
    does (empty parts kept). After a closing bracket with none open the depth is negative, and
    no `sep` splits until it is back at zero."""
    parts, depth, start, i, n = [], 0, 0, 0, len(text)
    while i < n:
        c = text[i]
        if c in quotes:
            i = _string_end(text, i)
        elif c in opens:
            depth += 1
        elif c in closes:
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return parts


def top_end(text: str, start: int = 0, sep: str = ",", opens: str = OPENS, closes: str = CLOSES,
            quotes: str = QUOTES) -> int:
    """Where the item that starts at `start` ends: the index of the first `sep` outside brackets
    and strings, or of the first closing bracket that closes one opened before `start`;
    len(text) if neither comes. sep="" ends the item only at such a bracket."""
    depth, i, n = 0, start, len(text)
    while i < n:
        c = text[i]
        if c in quotes:
            i = _string_end(text, i)
        elif c in opens:
            depth += 1
        elif c in closes:
            if depth == 0:
                return i
            depth -= 1
        elif c == sep and depth == 0:
            return i
        i += 1
    return n


def matching(text: str, start: int, opens: str = OPENS, closes: str = CLOSES, quotes: str = QUOTES) -> int:
    """Index of the bracket closing the opening bracket at `start`; -1 if none closes it."""
    end = top_end(text, start + 1, "", opens, closes, quotes)
    return end if end < len(text) else -1
