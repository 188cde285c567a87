"""Line info of TTIR and TTGIR (MLIR locations) -> python lines; see inspectors.read.sourcemap
for the formats and the table they fill."""
from __future__ import annotations

import re

from inspectors.read.brackets import matching
from inspectors.read.userfile import frame, innermost


# An alias definition, e.g.  #loc23 = loc("x"(#loc7))   or   #loc = loc("vector_add.py":17:1)
_MLIR_DEF_RE = re.compile(r"^(?P<alias>#[\w.$-]+)\s*=\s*loc\((?P<body>.*)\)\s*$")
# Where a trailing location may start, e.g. the ` loc(` in  tt.return loc(#loc)
_MLIR_LOC_START_RE = re.compile(r"\bloc\(")
# Tokens of a location, e.g.  callsite(#loc13 at #loc45)   "x"(#loc7)   "f.py":27:9   unknown
_LOC_TOKEN_RE = re.compile(
    r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<ref>#[\w.$-]+)|(?P<int>\d+)'
    r'|(?P<word>[A-Za-z_]\w*)|(?P<punct>[()\[\],:<>]))')


_BLANKS_RE = re.compile(r"\s*")
# Location trees deeper than this (nested `"x"("y"(...))`, alias chains) are not followed: the
# parser and the resolver recurse.
MAX_DEPTH = 200


def _tokens(text: str) -> list[tuple[str, str]]:
    """Linear: where no token starts, each blank before the stray character and the character
    are "other" tokens at once (retrying the regex from each blank, and copying the rest of
    the text to see if it was blank, were quadratic)."""
    out, pos = [], 0
    end = len(text.rstrip())
    while pos < end:
        m = _LOC_TOKEN_RE.match(text, pos)
        if not m or m.end() == pos:
            stray = _BLANKS_RE.match(text, pos).end()
            out.extend(("other", c) for c in text[pos:stray + 1])
            pos = stray + 1
            continue
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _LocParser:
    """Recursive descent over one location body, to nested tuples:
    ("file", path, line) | ("name", child | None) | ("ref", alias) | ("callsite", callee, caller)
    | ("fused", children) | ("unknown",)."""

    def __init__(self, text: str):
        self.toks = _tokens(text)
        self.i = 0

    def peek(self, k: int = 0) -> tuple[str, str]:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else ("eof", "")

    def take(self) -> tuple[str, str]:
        t = self.peek()
        self.i += 1
        return t

    def accept(self, value: str) -> bool:
        if self.peek()[1] == value and self.peek()[0] != "str":
            self.i += 1
            return True
        return False

    def parse(self, depth: int = 0):
        kind, val = self.take()
        if depth > MAX_DEPTH:
            return ("unknown",)
        if kind == "ref":
            return ("ref", val)
        if kind == "word" and val == "unknown":
            return ("unknown",)
        if kind == "word" and val == "callsite" and self.accept("("):
            callee = self.parse(depth + 1)
            if not (self.peek() == ("word", "at") and self.take()):
                return ("unknown",)
            caller = self.parse(depth + 1)
            self.accept(")")
            return ("callsite", callee, caller)
        if kind == "word" and val == "fused":
            if self.accept("<"):            # fused<#metadata>[...]
                depth = 1
                while depth and self.peek()[0] != "eof":
                    t = self.take()[1]
                    depth += (t == "<") - (t == ">")
            children = []
            if self.accept("["):
                while self.peek()[0] != "eof" and not self.accept("]"):
                    children.append(self.parse(depth + 1))
                    self.accept(",")
            return ("fused", tuple(children))
        if kind == "str":
            s = val[1:-1].replace('\\"', '"').replace("\\\\", "\\")
            if self.peek()[1] == ":" and self.peek(1)[0] == "int":      # "f.py":27:9
                self.take()
                line = int(self.take()[1])
                if self.accept(":") and self.peek()[0] == "int":
                    self.take()
                if self.peek() == ("word", "to"):                       # ... to 27:15
                    self.take()
                    while self.peek()[0] == "int" or self.peek()[1] == ":":
                        self.take()
                return ("file", s, line)
            if self.accept("("):                                        # "x"(#loc7)
                child = self.parse(depth + 1)
                self.accept(")")
                return ("name", child)
            return ("name", None)
        return ("unknown",)


def _balanced_end(line: str, start: int) -> int:
    """Index just past the ')' matching the '(' at `start` (quotes respected), or -1."""
    end = matching(line, start, "(", ")")
    return end + 1 if end >= 0 else -1


_LOC_TRIES = 4


def _trailing_loc(line: str) -> str | None:
    """Body of the `loc(...)` that ends the line, if any."""
    stripped = line.rstrip()
    if not stripped.endswith(")"):
        return None
    # The op's own location is the last `loc(` of a real line; a few more are tried (each try
    # scans to the end of the line: trying every `loc(` of a long line was quadratic).
    for m in reversed(list(_MLIR_LOC_START_RE.finditer(stripped))[-_LOC_TRIES:]):
        end = _balanced_end(stripped, m.end() - 1)
        if end == len(stripped):
            return stripped[m.end():end - 1]
        if end != -1 and end < len(stripped):
            return None     # a later loc(...) argument, not the op's own location
    return None


def _mlir_resolver(defs: dict[str, str], filename: str):
    """resolve(parsed location) -> its chain of user frames, innermost first (see
    userfile.frame): `callsite(callee at caller)` is the callee's frames, then the caller's;
    Triton's library frames drop out."""
    parsed: dict[str, tuple] = {}
    memo: dict[str, tuple] = {}

    def resolve(node, seen=(), depth=0) -> tuple:
        kind = node[0]
        if depth > MAX_DEPTH:
            return ()
        if kind == "file":
            f = frame(node[1], node[2], filename)
            return (f,) if f else ()
        if kind == "name":
            return resolve(node[1], seen, depth + 1) if node[1] is not None else ()
        if kind == "ref":
            alias = node[1]
            if alias in memo:
                return memo[alias]
            if alias in seen or alias not in defs:
                return ()
            if alias not in parsed:
                parsed[alias] = _LocParser(defs[alias]).parse()
            memo[alias] = resolve(parsed[alias], seen + (alias,), depth + 1)
            return memo[alias]
        if kind == "callsite":
            return resolve(node[1], seen, depth + 1) + resolve(node[2], seen, depth + 1)
        if kind == "fused":        # the first child in the kernel file, else the first with a frame
            chains = [c for c in (resolve(child, seen, depth + 1) for child in node[1]) if c]
            return next((c for c in chains if any(not f[0] for f in c)), chains[0] if chains else ())
        return ()

    return resolve


def mlir_chains(text: str, filename: str) -> dict[int, tuple]:
    """TTIR/TTGIR: each op line ending in `loc(...)` -> its chain of user frames, innermost
    first (only lines whose chain reaches the kernel file). A region op prints its location
    after the region (`} loc(#loc7)`), so the line that opened the region (`scf.for ... {`,
    `"tt.reduce"(...) ({`, `tt.func ... {`) gets it too; the module's braces are left out."""
    lines = text.splitlines()
    defs = {}
    for raw in lines:
        m = _MLIR_DEF_RE.match(raw.strip())
        if m:
            defs[m["alias"]] = m["body"]
    resolve = _mlir_resolver(defs, filename)
    out: dict[int, tuple] = {}
    module: list[int] = []                  # marks the module's own braces
    stack: list[list[int]] = []             # per open region: the lines that opened it
    for n, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s or s.startswith(("#", "//")):
            continue
        openers: list[int] = []
        if s.startswith("}") and stack:
            openers = stack.pop()
            if openers is module:
                continue
        body = _trailing_loc(s)
        chain = resolve(_LocParser(body).parse()) if body is not None else ()
        if any(not f[0] for f in chain):
            out[n] = chain
            for o in openers:
                out[o] = chain
        if s.endswith("{"):
            if s.startswith("module"):
                stack.append(module)
            elif s.startswith("}"):         # `} else {`, `} do {`: same op, next region
                stack.append(openers + [n])
            else:
                stack.append([n])
    return dict(sorted(out.items()))


def mlir_lines(text: str, filename: str) -> dict[int, int]:
    """TTIR/TTGIR: each op line -> the innermost line of the kernel file it came from
    (the line inside a `@triton.jit` helper, not the call)."""
    return {n: innermost(c) for n, c in mlir_chains(text, filename).items()}


# The MLIR stages read the same way.
ttir_lines = ttgir_lines = mlir_lines


