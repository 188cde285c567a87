"""Line info of LLVM IR (`!dbg` DILocations) -> python lines; see inspectors.read.sourcemap."""
from __future__ import annotations

import re

from inspectors.read.userfile import frame, innermost


# Metadata, e.g.  !21 = !DILocation(line: 196, column: 12, scope: !22, inlinedAt: !24)
#                 !1 = !DIFile(filename: "vector_add.py", directory: "")
_LLIR_MD_RE = re.compile(r"^!(?P<id>\d+)\s*=\s*(?:distinct\s+)?!(?P<kind>DI\w+)\((?P<body>.*)\)\s*$")
# A field of it, e.g.  line: 196   scope: !22   filename: "standard.py"
# (a key starts a word: tried from inside a long word, `\w+` rescanned it, quadratic)
_LLIR_FIELD_RE = re.compile(r'(?<!\w)(\w+):\s*("(?:[^"\\]|\\.)*"|![\d]+|[^,]+)')
# The location of an instruction, e.g.  %8 = shl i32 %7, 10, !dbg !13
_LLIR_DBG_RE = re.compile(r"!dbg\s+!(\d+)")


def llir_chains(text: str, filename: str) -> dict[int, tuple]:
    """LLVM IR: each line with `!dbg !N` (instructions, and `define ... !dbg !SP {`) -> the
    user frames of N's inlinedAt chain, innermost first (lines whose chain reaches the
    kernel file)."""
    lines = text.splitlines()
    md: dict[int, tuple[str, dict[str, str]]] = {}
    for raw in lines:
        m = _LLIR_MD_RE.match(raw)
        if m:
            fields = {k: v.strip() for k, v in _LLIR_FIELD_RE.findall(m["body"])}
            md[int(m["id"])] = (m["kind"], fields)

    def ref(v: str | None) -> int | None:
        return int(v[1:]) if v and v.startswith("!") and v[1:].isdigit() else None

    def unquote(v: str | None) -> str:
        return v[1:-1] if v and v.startswith('"') else (v or "")

    def file_of(scope: int | None, depth: int = 0) -> str | None:
        node = md.get(scope) if scope is not None else None
        if node is None or depth > 50:
            return None
        kind, f = node
        if kind == "DIFile":
            d, name = unquote(f.get("directory")), unquote(f.get("filename"))
            return f"{d.rstrip('/')}/{name}" if d and not name.startswith("/") else name
        if "file" in f:
            return file_of(ref(f["file"]), depth + 1)
        return file_of(ref(f.get("scope")), depth + 1)

    memo: dict[int, tuple] = {}

    def chain(node_id: int) -> tuple:
        if node_id in memo:
            return memo[node_id]
        frames, seen = [], set()
        cur = node_id
        while cur is not None and cur in md and cur not in seen:
            seen.add(cur)
            kind, f = md[cur]
            line = int(f["line"]) if f.get("line", "").isdigit() else 0
            scope = ref(f.get("scope")) if kind == "DILocation" else cur
            fr = frame(file_of(scope) or "", line, filename)
            if fr:
                frames.append(fr)
            cur = ref(f.get("inlinedAt")) if kind == "DILocation" else None
        memo[node_id] = tuple(frames)
        return memo[node_id]

    out: dict[int, tuple] = {}
    for n, raw in enumerate(lines, 1):
        s = raw.lstrip()
        if not s or s.startswith(("!", ";")):
            continue
        m = _LLIR_DBG_RE.search(raw)
        if m:
            c = chain(int(m.group(1)))
            if innermost(c) is not None:
                out[n] = c
    return out


def llir_lines(text: str, filename: str) -> dict[int, int]:
    """LLVM IR: each line with `!dbg` -> the innermost kernel-file line of its chain."""
    return {n: innermost(c) for n, c in llir_chains(text, filename).items()}
