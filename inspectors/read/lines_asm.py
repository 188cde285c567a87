"""Line info of PTX, SASS and AMDGCN (`.loc` directives, nvdisasm's `//## File` comments)
-> python lines, and the PTX's inlining hints that resolve SASS; see inspectors.read.sourcemap."""
from __future__ import annotations

import re

from inspectors.read.userfile import is_user_file


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


