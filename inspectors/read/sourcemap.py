"""Source maps: which line of the user's Python file each line of each stage came from.

Pure parsers, text in, frozen dataclasses out. Every stage carries Triton's line info in
its own format (all of it from real Triton 3.9 compiles of `vector_add.py`, `softmax.py`):

TTIR / TTGIR (MLIR) put a location at the end of each op, usually an alias defined at the
bottom (or top) of the module; names wrap locations, `callsite(callee at caller)` marks
code inlined from a helper (here Triton's own `standard.py`)::

    %x_5 = tt.load %x_4, %mask_3 : tensor<1024x!tt.ptr<f32>> loc(#loc23)
    #loc7 = loc("vector_add.py":27:9)
    #loc23 = loc("x"(#loc7))
    } {tt.num_stages = 2 : i32} loc(#loc7)      <- softmax: closes the `scf.for ... {` line
    #loc45 = loc(callsite(#loc11 at #loc38))    <- softmax: #loc11 is in standard.py

LLVM IR hangs `!dbg !N` on instructions; `!N` is a DILocation whose scope names the file,
and whose `inlinedAt` chain leads out to the user's line::

    %118 = tail call float @llvm.maxnum.f32(float %116, float %117), !dbg !21
    !21 = !DILocation(line: 196, column: 12, scope: !22, inlinedAt: !24)
    !22 = distinct !DILexicalBlockFile(scope: !4, file: !23, discriminator: 0)
    !23 = !DIFile(filename: "standard.py", directory: "/.../triton/language")

PTX and AMDGCN use `.loc FILE LINE COL` directives; every instruction after one belongs to
it. PTX may say where inlined code was inlined (one level per directive), AMDGCN says it
in the assembler comment (the whole stack)::

    .loc	2 196 12, function_name $L__info_string0, inlined_at 2 216 16 // standard.py:196:12
    .loc	2 196 12                        ; standard.py:196:12 @[ standard.py:216:16 @[ softmax.py:35:31 ] ]
    .file	1 "vector_add.py"                                   (PTX, after the function)
    .file	2 "/.../triton/language" "standard.py"              (AMDGCN, directory and name)

SASS (`nvdisasm -c -g`) has one comment line per change of line; `-gi` would add
`inlined at "softmax.py", line 35` and print the enclosing frames on lines of their own::

    //## File "vector_add.py", line 27
            /*0180*/              @!P0 LDG.E.128 R16, desc[UR4][R2.64] ;

Inlined library code is attributed to the outermost location in the user's file (the
user's line that called tl.max, not standard.py). Declarations (`#loc = ...`, `!N = ...`,
`.loc`, `.file`, labels) are never mapped; ops and instructions are.

Two quirks of the line info need work-arounds (see `ptx_lines` and `sass_hints`):

- LLVM's NVPTX printer gives every line of an inline-asm block its own `.loc`, adding one
  to the line number per asm line (llvm-project PR 177718). Triton's loads are such blocks
  (four `mov` then `ld.global`), so the raw PTX claims a load on vector_add.py:30, a blank
  line, and ptxas copies that into the SASS line table. Inside a block only its first
  `.loc` is real.
- `nvdisasm -g` (what the engine runs) drops the inlined-at part: inlined code says
  `File ".../standard.py", line 196`. The PTX of the same kernel says which user line
  that came from, so `build` resolves SASS through the PTX when it has both.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

# Paths of Triton's own library; never the user's file even if the names collide.
_LIBRARY_MARKERS = ("/triton/language/", "/site-packages/triton/")


def is_user_file(path: str, filename: str) -> bool:
    """`path` (as a stage spells it) is the user's file: exactly `filename`, or an
    absolute path ending in `/filename` that is not inside Triton's package."""
    if not path or not filename:
        return False
    names = {filename, filename.rsplit("/", 1)[-1]}
    if path in names:
        return True
    return (any(path.endswith("/" + n) for n in names)
            and not any(m in path for m in _LIBRARY_MARKERS))


@dataclass(frozen=True)
class StageLines:
    """One stage's map: 1-based stage line -> 1-based line of the user's file (only the
    lines that map)."""
    stage: str
    to_python: dict[int, int]

    def python_lines(self) -> frozenset[int]:
        return frozenset(self.to_python.values())


@dataclass(frozen=True)
class SourceMap:
    filename: str
    stages: dict[str, StageLines] = field(default_factory=dict)

    @cached_property
    def _index(self) -> dict[int, dict[str, tuple[int, ...]]]:
        index: dict[int, dict[str, list[int]]] = {}
        for name, sl in self.stages.items():
            for n, py in sl.to_python.items():
                index.setdefault(py, {}).setdefault(name, []).append(n)
        return {py: {s: tuple(sorted(ns)) for s, ns in per.items()}
                for py, per in sorted(index.items())}

    def python_to_stage(self) -> dict[int, dict[str, tuple[int, ...]]]:
        """{python line: {stage: sorted stage lines}}, only stages that have lines for it."""
        return {py: dict(per) for py, per in self._index.items()}

    def lines_for(self, stage: str, line: int) -> dict[str, tuple[int, ...]]:
        """Clicking `line` of `stage` ("source" for the Python file): the matching lines in
        every stage, "source" included (the Python line), an empty tuple where a stage has
        none. Stage to stage goes through the Python line. An empty dict when a stage line
        maps to nothing (a declaration, compiler-made code)."""
        if stage == "source":
            py = line
        else:
            sl = self.stages.get(stage)
            py = sl.to_python.get(line) if sl else None
            if py is None:
                return {}
        per = self._index.get(py, {})
        out = {"source": (py,)}
        for name in self.stages:
            out[name] = per.get(name, ())
        return out


# --------------------------------------------------------------------------- MLIR

# An alias definition, e.g.  #loc23 = loc("x"(#loc7))   or   #loc = loc("vector_add.py":17:1)
_MLIR_DEF_RE = re.compile(r"^(?P<alias>#[\w.$-]+)\s*=\s*loc\((?P<body>.*)\)\s*$")
# Where a trailing location may start, e.g. the ` loc(` in  tt.return loc(#loc)
_MLIR_LOC_START_RE = re.compile(r"\bloc\(")
# Tokens of a location, e.g.  callsite(#loc13 at #loc45)   "x"(#loc7)   "f.py":27:9   unknown
_LOC_TOKEN_RE = re.compile(
    r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<ref>#[\w.$-]+)|(?P<int>\d+)'
    r'|(?P<word>[A-Za-z_]\w*)|(?P<punct>[()\[\],:<>]))')


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        m = _LOC_TOKEN_RE.match(text, pos)
        if not m or m.end() == pos:
            if text[pos:].strip():
                out.append(("other", text[pos]))
                pos += 1
                continue
            break
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

    def parse(self):
        kind, val = self.take()
        if kind == "ref":
            return ("ref", val)
        if kind == "word" and val == "unknown":
            return ("unknown",)
        if kind == "word" and val == "callsite" and self.accept("("):
            callee = self.parse()
            if not (self.peek() == ("word", "at") and self.take()):
                return ("unknown",)
            caller = self.parse()
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
                    children.append(self.parse())
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
                child = self.parse()
                self.accept(")")
                return ("name", child)
            return ("name", None)
        return ("unknown",)


def _balanced_end(line: str, start: int) -> int:
    """Index just past the ')' matching the '(' at `start` (quotes respected), or -1."""
    depth, i, n = 0, start, len(line)
    while i < n:
        c = line[i]
        if c == '"':
            i += 1
            while i < n and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def _trailing_loc(line: str) -> str | None:
    """Body of the `loc(...)` that ends the line, if any."""
    stripped = line.rstrip()
    if not stripped.endswith(")"):
        return None
    for m in reversed(list(_MLIR_LOC_START_RE.finditer(stripped))):
        end = _balanced_end(stripped, m.end() - 1)
        if end == len(stripped):
            return stripped[m.end():end - 1]
        if end != -1 and end < len(stripped):
            return None     # a later loc(...) argument, not the op's own location
    return None


def _mlir_resolver(defs: dict[str, str], filename: str):
    parsed: dict[str, tuple] = {}
    memo: dict[str, int | None] = {}

    def resolve(node, seen=()) -> int | None:
        kind = node[0]
        if kind == "file":
            return node[2] if node[2] > 0 and is_user_file(node[1], filename) else None
        if kind == "name":
            return resolve(node[1], seen) if node[1] is not None else None
        if kind == "ref":
            alias = node[1]
            if alias in memo:
                return memo[alias]
            if alias in seen or alias not in defs:
                return None
            if alias not in parsed:
                parsed[alias] = _LocParser(defs[alias]).parse()
            memo[alias] = resolve(parsed[alias], seen + (alias,))
            return memo[alias]
        if kind == "callsite":      # the outermost user-file frame: the caller first
            outer = resolve(node[2], seen)
            return outer if outer is not None else resolve(node[1], seen)
        if kind == "fused":
            for child in node[1]:
                r = resolve(child, seen)
                if r is not None:
                    return r
        return None

    return resolve


def mlir_lines(text: str, filename: str) -> dict[int, int]:
    """TTIR/TTGIR: each op line ending in `loc(...)` -> its Python line. A region op
    prints its location after the region (`} loc(#loc7)`), so the line that opened the
    region (`scf.for ... {`, `"tt.reduce"(...) ({`, `tt.func ... {`) gets it too; the
    module's braces are left out."""
    lines = text.splitlines()
    defs = {}
    for raw in lines:
        m = _MLIR_DEF_RE.match(raw.strip())
        if m:
            defs[m["alias"]] = m["body"]
    resolve = _mlir_resolver(defs, filename)
    out: dict[int, int] = {}
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
        py = resolve(_LocParser(body).parse()) if body is not None else None
        if py is not None:
            out[n] = py
            for o in openers:
                out[o] = py
        if s.endswith("{"):
            if s.startswith("module"):
                stack.append(module)
            elif s.startswith("}"):         # `} else {`, `} do {`: same op, next region
                stack.append(openers + [n])
            else:
                stack.append([n])
    return dict(sorted(out.items()))


# The MLIR stages read the same way.
ttir_lines = ttgir_lines = mlir_lines


# --------------------------------------------------------------------------- LLVM IR

# Metadata, e.g.  !21 = !DILocation(line: 196, column: 12, scope: !22, inlinedAt: !24)
#                 !1 = !DIFile(filename: "vector_add.py", directory: "")
_LLIR_MD_RE = re.compile(r"^!(?P<id>\d+)\s*=\s*(?:distinct\s+)?!(?P<kind>DI\w+)\((?P<body>.*)\)\s*$")
# A field of it, e.g.  line: 196   scope: !22   filename: "standard.py"
_LLIR_FIELD_RE = re.compile(r'(\w+):\s*("(?:[^"\\]|\\.)*"|![\d]+|[^,]+)')
# The location of an instruction, e.g.  %8 = shl i32 %7, 10, !dbg !13
_LLIR_DBG_RE = re.compile(r"!dbg\s+!(\d+)")


def llir_lines(text: str, filename: str) -> dict[int, int]:
    """LLVM IR: each line with `!dbg !N` (instructions, and `define ... !dbg !SP {`) -> the
    outermost user-file frame of N's inlinedAt chain."""
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

    def user_line(node_id: int) -> int | None:
        found, seen = None, set()
        cur = node_id
        while cur is not None and cur in md and cur not in seen:
            seen.add(cur)
            kind, f = md[cur]
            line = int(f["line"]) if f.get("line", "").isdigit() else 0
            scope = ref(f.get("scope")) if kind == "DILocation" else cur
            if line > 0 and is_user_file(file_of(scope) or "", filename):
                found = line            # keep going: the outermost frame wins
            cur = ref(f.get("inlinedAt")) if kind == "DILocation" else None
        return found

    out: dict[int, int] = {}
    for n, raw in enumerate(lines, 1):
        s = raw.lstrip()
        if not s or s.startswith(("!", ";")):
            continue
        m = _LLIR_DBG_RE.search(raw)
        if m:
            py = user_line(int(m.group(1)))
            if py is not None:
                out[n] = py
    return out


# --------------------------------------------------------------------------- PTX

# PTX file table (printed after the function), e.g.  .file	1 "vector_add.py"
# AMDGCN (before use, directory and name), e.g.  .file	2 "/.../triton/language" "standard.py"
_FILE_RE = re.compile(r'^\s*\.file\s+(?P<idx>\d+)\s+"(?P<a>[^"]*)"'
                      r'(?:\s*,\s*\d+\s*,\s*\d+)?(?:\s+"(?P<b>[^"]*)")?')
# e.g.  .loc	1 27 9                          // vector_add.py:27:9
#       .loc	2 196 12, function_name $L__info_string0, inlined_at 2 216 16 // standard.py:196:12
#       .loc	1 25 15 is_stmt 0               ; vector_add.py:25:15        (AMDGCN)
_LOC_RE = re.compile(r"^\s*\.loc\s+(?P<file>\d+)\s+(?P<line>\d+)\s+(?P<col>\d+)(?P<rest>.*)$")
_INLINED_AT_RE = re.compile(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)")
# An instruction, e.g.  @%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];   mov.u32 %r1, 0x0;
_PTX_INSN_RE = re.compile(r"^\s*(?:@!?%\w+\s+)?[a-z][\w.:]*(?:\s|;)")
_PTX_ASM_BEGIN = "// begin inline asm"
_PTX_ASM_END = "// end inline asm"


def _file_table(lines: list[str]) -> dict[int, str]:
    files = {}
    for raw in lines:
        m = _FILE_RE.match(raw)
        if m:
            a, b = m["a"], m["b"]
            files[int(m["idx"])] = (f"{a.rstrip('/')}/{b}" if a else b) if b is not None else a
    return files


def _ptx_scan(text: str, filename: str):
    """Walk the PTX once, yielding (line number, kind, info): "insn" with the Python line
    in effect; "loc" with (path, line, resolved Python line or None, synthetic) for every
    `.loc` (synthetic: a per-asm-line `.loc` after the first of its block); "asm_begin" and
    "asm_end" around inline asm."""
    lines = text.splitlines()
    files = _file_table(lines)
    known: dict[tuple[int, int, int], int | None] = {}

    def point(f: int, line: int, col: int) -> int | None:
        if (f, line, col) in known:
            return known[(f, line, col)]
        return line if line > 0 and is_user_file(files.get(f, ""), filename) else None

    current: int | None = None
    in_asm = asm_loc_seen = False
    for n, raw in enumerate(lines, 1):
        s = raw.strip()
        if s.startswith(_PTX_ASM_BEGIN):
            in_asm, asm_loc_seen = True, False
            yield n, "asm_begin", None
            continue
        if s.startswith(_PTX_ASM_END):
            in_asm = False
            yield n, "asm_end", None
            continue
        m = _LOC_RE.match(raw)
        if m:
            f, line, col = int(m["file"]), int(m["line"]), int(m["col"])
            own = line if line > 0 and is_user_file(files.get(f, ""), filename) else None
            inl = _INLINED_AT_RE.search(m["rest"])
            outer = point(*map(int, inl.groups())) if inl else None
            py = outer if outer is not None else own
            synthetic = in_asm and asm_loc_seen
            if not synthetic:
                known[(f, line, col)] = py
                current = py
            asm_loc_seen = asm_loc_seen or in_asm
            yield n, "loc", (files.get(f, ""), line, py, synthetic)
            continue
        if raw.startswith("}") or s.startswith(".section"):
            current = None          # end of the function: debug sections follow
            continue
        if current is not None and _PTX_INSN_RE.match(raw) and not s.startswith("."):
            yield n, "insn", current


def ptx_lines(text: str, filename: str) -> dict[int, int]:
    """PTX: each instruction line -> the Python line of the `.loc` before it. A `.loc`
    with `inlined_at` goes to where it was inlined (looked up through the earlier `.loc`
    of that point when it is itself inlined code). In an inline-asm block only the first
    `.loc` counts: LLVM numbers the block's other lines line+1, line+2, ..."""
    return {n: info for n, kind, info in _ptx_scan(text, filename) if kind == "insn"}


def sass_hints(ptx: str, filename: str) -> dict[tuple[str, int], tuple[int, ...]]:
    """What the PTX knows that `nvdisasm -g` output does not: (path, line) as SASS prints
    it -> the Python lines it can stand for. Library lines (standard.py:196) with the user
    lines the PTX inlined them at (several when a helper is called from several lines,
    like tl.cdiv in matmul), and user lines that exist only as per-asm-line `.loc` numbering
    (vector_add.py:30, a blank line), mapped to the real line of their block (preferring
    the block whose last instruction, the ld/st, carried that number)."""
    lines = ptx.splitlines()
    files = _file_table(lines)
    library: dict[tuple[str, int], set[int]] = {}
    real_user: set[int] = set()
    synthetic: dict[int, list[int]] = {}       # asm-numbered line -> real lines of its blocks
    last_in_block: dict[int, list[int]] = {}   # the same, for the number at a block's end
    base: int | None = None
    block_line: int | None = None
    for _n, kind, info in _ptx_scan(ptx, filename):
        if kind == "asm_begin":
            block_line = None
        elif kind == "asm_end":
            if block_line is not None and base is not None:
                last_in_block.setdefault(block_line, []).append(base)
        elif kind == "loc":
            path, line, py, is_synth = info
            if line <= 0:
                continue
            if not is_synth:
                base = py
                real_user.update({py} if py is not None else set())
                if is_user_file(path, filename):
                    real_user.add(line)
                elif py is not None:
                    library.setdefault((path, line), set()).add(py)
            elif is_user_file(path, filename) and base is not None:
                synthetic.setdefault(line, []).append(base)
                block_line = line
    hints = {key: tuple(sorted(pys)) for key, pys in library.items()}
    user_path = next((p for p in files.values() if is_user_file(p, filename)), filename)
    for line, bases in synthetic.items():
        if line not in real_user:
            hints[(user_path, line)] = ((last_in_block.get(line) or bases)[0],)
    return hints


# --------------------------------------------------------------------------- SASS

# nvdisasm -g, e.g.  //## File "vector_add.py", line 27
# nvdisasm -gi adds  //## File ".../standard.py", line 216 inlined at "softmax.py", line 35
_SASS_FILE_RE = re.compile(
    r'^\s*//##\s*File\s+"(?P<path>[^"]*)",\s*line\s+(?P<line>\d+)'
    r'(?:\s+inlined at\s+"(?P<ipath>[^"]*)",\s*line\s+(?P<iline>\d+))?')
# An instruction, e.g.          /*0180*/              @!P0 LDG.E.128 R16, desc[UR4][R2.64] ;
_SASS_INSN_RE = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?P<insn>.*?)\s*;?\s*$")
# Padding after the last EXIT, e.g.  /*0290*/   BRA `(.L_x_0);   /*02a0*/   NOP;
_SASS_PAD_RE = re.compile(r"^(?:NOP|BRA\s+`\(\.L_x_\d+\))\s*;?$")
# A function starts, e.g.  //--------------------- .text.add_kernel          --------------------------
_SASS_SECTION_RE = re.compile(r"^\s*//-+\s+\S")


def sass_lines(text: str, filename: str,
               hints: dict[tuple[str, int], tuple[int, ...]] | None = None) -> dict[int, int]:
    """SASS: each instruction line -> the user-file line announced before it.

    A library line (inlined code) goes to its `inlined at` user line when nvdisasm gives
    one (`-gi`), else to the user line `hints` gives it (from the PTX, see `sass_hints`);
    when the PTX inlined it at several lines (tl.cdiv in matmul) it maps nowhere: in
    scheduled code the last user line seen is as often wrong as right. Without hints
    (no PTX) it keeps the last user line seen.
    Line 0 (compiler-made code) and padding (NOP, the self-branch after EXIT) map nowhere.
    """
    hints = hints or {}
    out: dict[int, int] = {}
    current: int | None = None      # the Python line in effect
    last_user: int | None = None
    for n, raw in enumerate(text.splitlines(), 1):
        m = _SASS_FILE_RE.match(raw)
        if m:
            path, line = m["path"], int(m["line"])
            ikey = (m["ipath"], int(m["iline"])) if m["ipath"] else None
            if is_user_file(path, filename):    # (hints fix asm-numbered lines)
                cands = hints.get((path, line), (line,) if line > 0 else ())
            elif ikey and is_user_file(ikey[0], filename):
                cands = (ikey[1],)
            elif (path, line) in hints:
                cands = hints[(path, line)]
            elif ikey and ikey in hints:
                cands = hints[ikey]
            else:                               # inlined code nothing resolves
                current = last_user
                continue
            if len(cands) <= 1:
                current = cands[0] if cands else None
                last_user = current if current is not None else last_user
            else:                   # a helper inlined at several lines: can't tell which
                current = None
            continue
        if _SASS_SECTION_RE.match(raw):
            current = last_user = None
            continue
        i = _SASS_INSN_RE.match(raw)
        if i and current is not None and not _SASS_PAD_RE.match(i["insn"]):
            out[n] = current
    return out


# --------------------------------------------------------------------------- AMDGCN

# The inline stack in the assembler comment, e.g.  standard.py:216:16 @[ softmax.py:35:31 ]
_AMDGCN_FRAME_RE = re.compile(r"([^\s@\[\];]+):(\d+):(\d+)")
# An instruction, e.g.  buffer_load_dwordx4 v[0:3], v8, s[0:3], 0 offen    s_endpgm
_AMDGCN_INSN_RE = re.compile(r"^\s+[a-z_][a-z0-9_.]*(?:\s|$)")
# Where the function ends, e.g.  .Lfunc_end0:
_AMDGCN_END_RE = re.compile(r"^\s*(?:\.Lfunc_end\d+:|\.section\b|\.end_amdgpu_metadata|\.amdhsa_kernel\b)")


def amdgcn_lines(text: str, filename: str) -> dict[int, int]:
    """AMDGCN: each instruction line -> the Python line of the `.loc` before it; for a
    `.loc` in library code, the outermost user-file frame of its comment
    (`; standard.py:196:12 @[ standard.py:216:16 @[ softmax.py:35:31 ] ]`)."""
    lines = text.splitlines()
    files = _file_table(lines)
    base = filename.rsplit("/", 1)[-1]
    out: dict[int, int] = {}
    current: int | None = None
    for n, raw in enumerate(lines, 1):
        m = _LOC_RE.match(raw)
        if m:
            f, line = int(m["file"]), int(m["line"])
            current = line if line > 0 and is_user_file(files.get(f, ""), filename) else None
            comment = m["rest"].split(";", 1)[1] if ";" in m["rest"] else ""
            frames = _AMDGCN_FRAME_RE.findall(comment)
            for path, fl, _col in frames[1:]:           # inlined-at frames, inner to outer
                if int(fl) > 0 and (path == base or is_user_file(path, filename)):
                    current = int(fl)
            continue
        if _AMDGCN_END_RE.match(raw):
            current = None
            continue
        s = raw.strip()
        if (current is not None and _AMDGCN_INSN_RE.match(raw)
                and not s.split(None, 1)[0].endswith(":")):
            out[n] = current
    return out


# --------------------------------------------------------------------------- all stages

_PARSERS = {
    "ttir": mlir_lines,
    "ttgir": mlir_lines,
    "llir": llir_lines,
    "ptx": ptx_lines,
    "sass": sass_lines,
    "amdgcn": amdgcn_lines,
}


def stage_lines(stage: str, text: str, filename: str) -> StageLines:
    """One stage's map, by stage name (ttir, ttgir, llir, ptx, sass, amdgcn)."""
    try:
        parser = _PARSERS[stage]
    except KeyError:
        raise KeyError(f"no source map for stage {stage!r}; known: {', '.join(_PARSERS)}") from None
    return StageLines(stage, parser(text, filename))


def build(stages: dict[str, str], filename: str) -> SourceMap:
    """The source map of one kernel from its stage texts (`KernelResult.stages`); stages
    without line info (source, unknown names, empty text) are left out. SASS is resolved
    through the PTX when both are there."""
    out: dict[str, StageLines] = {}
    for name, text in stages.items():
        if name not in _PARSERS or not text:
            continue
        if name == "sass" and stages.get("ptx"):
            out[name] = StageLines(name, sass_lines(text, filename, sass_hints(stages["ptx"], filename)))
        else:
            out[name] = stage_lines(name, text, filename)
    return SourceMap(filename, out)
