"""Line info of PTX, SASS and AMDGCN (`.loc` directives, nvdisasm's `//## File` comments)
-> python lines, and the PTX's inlining hints that resolve SASS; see inspectors.read.sourcemap."""
from __future__ import annotations

import bisect
import re

from inspectors.read.userfile import common_prefix, frame, innermost, is_user_file


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


# The inline stack in an assembler comment, e.g.  standard.py:216:16 @[ softmax.py:35:31 ]
# A frame starts a word of the comment (after its leading slashes): tried from every character of
# a long word, the old pattern rescanned the word each time (quadratic).
_COMMENT_FRAME_RE = re.compile(r"(?<![^\s@\[\];])/*([^\s@\[\];/]+(?:/[^\s@\[\];/]+)*):(\d+):(\d+)")


def _comment_frames(rest: str, marker: str) -> list[tuple[str, int]]:
    """The (name, line) frames of a `.loc`'s comment, innermost first: the whole inline
    stack where the assembler printed one (Triton 3.6's PTX, AMDGCN), else one frame."""
    comment = rest.split(marker, 1)[1] if marker in rest else ""
    return [(name, int(line)) for name, line, _col in _COMMENT_FRAME_RE.findall(comment)]


def _by_name(files: dict[int, str]):
    """A comment names files by their last part (`standard.py`): back to the file table's paths."""
    full: dict[str, str] = {}
    for path in files.values():
        full.setdefault(path.rsplit("/", 1)[-1], path)
    return lambda name: full.get(name.rsplit("/", 1)[-1], name)


def _user_frames(raw, filename: str) -> tuple:
    """Raw (path, line) frames -> the source map's chain (userfile.frame: library dropped)."""
    return tuple(f for f in (frame(path, line, filename) for path, line in raw) if f)


def _ptx_scan(text: str, filename: str):
    """Walk the PTX once, yielding (line number, kind, info): "insn" with the chain in
    effect; "loc" with (raw, chain, synthetic) for every `.loc`, where raw is its
    (path, line) frames innermost first, library frames included, as SASS will print them,
    and chain the user frames (see userfile.frame); synthetic: a per-asm-line `.loc` after
    the first of its block. "asm_begin" and "asm_end" around inline asm.

    The call sites of a `.loc` come from `inlined_at F L C` (Triton 3.7+; the frames
    outside that point are those of the latest `.loc` of the point: LLVM prints a chain's
    outer `.loc`s just before its inner ones) or from the comment's `@[ ... ]` stack
    (Triton 3.6 prints no inlined_at)."""
    lines = text.splitlines()
    files = _file_table(lines)
    by_name = _by_name(files)
    known: dict[tuple[int, int, int], tuple] = {}      # (file, line, col) -> its raw frames

    current: tuple = ()
    mapped = False          # the chain in effect names a line of the user's (innermost(current), once per .loc)
    in_asm = asm_loc_seen = False
    for n, raw_line in enumerate(lines, 1):
        s = raw_line.strip()
        if s.startswith(_PTX_ASM_BEGIN):
            in_asm, asm_loc_seen = True, False
            yield n, "asm_begin", None
            continue
        if s.startswith(_PTX_ASM_END):
            in_asm = False
            yield n, "asm_end", None
            continue
        m = _LOC_RE.match(raw_line)
        if m:
            f, line, col = int(m["file"]), int(m["line"]), int(m["col"])
            own = (files.get(f, ""), line)
            inl = _INLINED_AT_RE.search(m["rest"])
            if inl:
                f2, l2, c2 = map(int, inl.groups())
                raw = (own,) + known.get((f2, l2, c2), ((files.get(f2, ""), l2),))
            else:
                stack = _comment_frames(m["rest"], "//")
                raw = (own,) + tuple((by_name(p), ln) for p, ln in stack[1:])
            chain = _user_frames(raw, filename) if line > 0 else ()
            synthetic = in_asm and asm_loc_seen
            if not synthetic:
                known[(f, line, col)] = raw
                current, mapped = chain, innermost(chain) is not None
            asm_loc_seen = asm_loc_seen or in_asm
            yield n, "loc", (raw, chain, synthetic)
            continue
        if raw_line.startswith("}") or s.startswith(".section"):
            current, mapped = (), False     # end of the function: debug sections follow
            continue
        if mapped and _PTX_INSN_RE.match(raw_line) and not s.startswith("."):
            yield n, "insn", current


def ptx_chains(text: str, filename: str) -> dict[int, tuple]:
    """PTX: each instruction line -> the chain of the `.loc` before it, innermost first.
    In an inline-asm block only the first `.loc` counts: LLVM numbers the block's other
    lines line+1, line+2, ..."""
    return {n: info for n, kind, info in _ptx_scan(text, filename) if kind == "insn"}


def ptx_lines(text: str, filename: str) -> dict[int, int]:
    """PTX: each instruction line -> the innermost kernel-file line of its `.loc`."""
    return {n: innermost(c) for n, c in ptx_chains(text, filename).items()}


def sass_hints(ptx: str, filename: str) -> dict[tuple, tuple]:
    """What the PTX knows that the SASS line info does not: the raw frames SASS prints for
    a piece of code ((path, line) pairs, innermost first) -> the chains they can stand for.

    `nvdisasm -gi` prints the whole raw stack when the PTX had `inlined_at` (Triton 3.7+),
    `-g`, or a PTX without it (3.6), only the innermost frame: the keys are both. A raw stack can
    stand for several chains: a helper called from two lines (3.6), library code from
    several (tl.cdiv in matmul). Per-asm-line `.loc` numbers (vector_add.py:30 of a load
    on line 27, a blank line) stand for the real line of their block, unless that number
    is a real line of the same stack elsewhere (then the real line wins); of several
    blocks, those whose last instruction, the ld/st, carried the number are preferred."""
    scan = list(_ptx_scan(ptx, filename))
    full = _INLINED_AT_RE.search(ptx) is not None
    real: dict[tuple, set] = {}
    synthetic: dict[tuple, list] = {}
    last_in_block: dict[tuple, list] = {}
    base: tuple = ()
    block_keys: set = set()
    for _n, kind, info in scan:
        if kind == "asm_begin":
            block_keys = set()
        elif kind == "asm_end":
            for key in block_keys if innermost(base) is not None else ():
                last_in_block.setdefault(key, []).append(base)
        elif kind == "loc":
            raw, chain, is_synth = info
            if raw[0][1] <= 0:
                continue
            keys = {tuple(raw), raw[:1]} if full else {raw[:1]}
            for key in keys:
                if not is_synth:
                    if innermost(chain) is not None:
                        real.setdefault(key, set()).add(chain)
                elif innermost(base) is not None:
                    synthetic.setdefault(key, []).append(base)
            if is_synth:
                block_keys = keys
            if not is_synth:
                base = chain
    hints = {key: tuple(sorted(chains)) for key, chains in real.items()
             if len(chains) > 1 or _user_frames(key, filename) != next(iter(chains))}
    for key, bases in synthetic.items():
        if key not in real:
            hints[key] = ((last_in_block.get(key) or bases)[0],)
    return hints


# --------------------------------------------------------------------------- SASS

# nvdisasm -g, e.g.  //## File "vector_add.py", line 27
# nvdisasm -gi adds  //## File ".../standard.py", line 216 inlined at "softmax.py", line 35
# and prints the enclosing frames on lines of their own, down to the outermost.
_SASS_FILE_RE = re.compile(
    r'^\s*//##\s*File\s+"(?P<path>[^"]*)",\s*line\s+(?P<line>\d+)'
    r'(?:\s+inlined at\s+"(?P<ipath>[^"]*)",\s*line\s+(?P<iline>\d+))?')
# An instruction, e.g.          /*0180*/              @!P0 LDG.E.128 R16, desc[UR4][R2.64] ;
# (`sass_insn` strips the `;` and blanks: the old `(?P<insn>.*?)\s*;?\s*$` was cubic in a run of blanks.)
_SASS_INSN_RE = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?P<rest>.*)")
# Padding after the last EXIT, e.g.  /*0290*/   BRA `(.L_x_0);   /*02a0*/   NOP;
_SASS_PAD_RE = re.compile(r"^(?:NOP|BRA\s+`\(\.L_x_\d+\))\s*;?$")
# A function starts, e.g.  //--------------------- .text.add_kernel          --------------------------
_SASS_SECTION_RE = re.compile(r"^\s*//-+\s+\S")


def sass_insn(rest: str) -> str:
    """The instruction of a SASS line's text after its address: without the trailing `;` and blanks."""
    insn = rest.rstrip()
    return insn[:-1].rstrip() if insn.endswith(";") else insn


def _sass_resolve(raw: tuple, filename: str, hints: dict) -> tuple | None:
    """One `//##` run's raw frames -> its chain; None when nothing resolves it."""
    if raw in hints:
        chains = hints[raw]
        chain = common_prefix(chains)
        if innermost(chain) is None and len(chains) > 1:
            return ()               # several lines it could stand for: can't tell which
        return chain
    chain = _user_frames(raw, filename)
    return chain if innermost(chain) is not None else None


def sass_chains(text: str, filename: str, hints: dict | None = None) -> dict[int, tuple]:
    """SASS: each instruction line -> the chain announced before it, innermost first.

    A run of `//##` lines is one stack (nvdisasm -gi: innermost first, each enclosing frame
    on a line of its own; -g or a PTX without inlined_at: the innermost frame only). The
    PTX's `hints` (see `sass_hints`) resolve library code to the user lines it was inlined
    at, give 3.6's helper lines their call site where there is only one, and fix
    asm-numbered lines; when a stack can stand for several lines (tl.cdiv in matmul) it
    maps nowhere: in scheduled code the last user line seen is as often wrong as right.
    Unresolved library code without hints keeps the last user chain seen. Line 0
    (compiler-made code) and padding (NOP, the self-branch after EXIT) map nowhere.
    """
    hints = hints or {}
    out: dict[int, tuple] = {}
    current: tuple = ()             # the chain in effect
    last_user: tuple = ()
    run: list = []
    ambiguous: list[tuple[tuple, list]] = []      # (the chains it could be, its instruction lines)
    group: list | None = None
    section = 0
    sections: dict[int, int] = {}
    for n, raw_line in enumerate(text.splitlines(), 1):
        m = _SASS_FILE_RE.match(raw_line)
        if m:
            run.append((m["path"], int(m["line"])))
            if m["ipath"]:
                run.append((m["ipath"], int(m["iline"])))
            continue
        if run:
            raw = tuple(f for k, f in enumerate(run) if k == 0 or f != run[k - 1])   # -gi says each twice
            run = []
            chain = _sass_resolve(raw, filename, hints)
            group = [] if chain == () and raw in hints else None     # several lines it could be
            if group is not None:
                ambiguous.append((hints[raw], group))
            if chain is None:       # line 0 of the kernel file maps nowhere; library code: see above
                current = () if is_user_file(raw[0][0], filename) else last_user
            else:
                current = chain
                last_user = chain if chain else last_user
        if _SASS_SECTION_RE.match(raw_line):
            current = last_user = ()
            group = None
            section += 1
            continue
        i = _SASS_INSN_RE.match(raw_line)
        if i and not _SASS_PAD_RE.match(sass_insn(i["rest"])):
            sections[n] = section
            if innermost(current) is not None:
                out[n] = current
            elif group is not None:
                group.append(n)
    called = sorted(n for n, c in out.items() if len(c) > 1)        # instructions that name a call site
    for chains, lines in ambiguous:
        if lines:
            chain = _by_call_site(chains, lines, out, called, sections)
            for n in lines if chain else ():
                out[n] = chain
    return out


def _by_call_site(chains: tuple, lines: list[int], out: dict[int, tuple], called: list[int],
                  sections: dict[int, int]) -> tuple:
    """Of the chains an ambiguous run could stand for, the one inlined at the call site of the
    nearest instruction (either way, in the same function) whose line info names one of their
    call sites (`called`: those that name any, in order), when exactly one candidate was
    inlined there; else () (unmapped). Each call of a helper is a copy of its own: on Triton
    3.6, whose SASS line info names only the innermost frame, flash attention's tl.max
    (standard.py) stands for line 28 called from line 57 or line 25 called from line 59, and
    the code around it says which call it is in."""
    sites = {c[1:] for c in chains if len(c) > 1}
    if len(sites) < 2 or len(sites) != len(chains):
        return ()
    first, last = lines[0], lines[-1]
    here = sections.get(first)

    def nearest(indices) -> int | None:
        for i in indices:
            n = called[i]
            if sections.get(n) != here:
                return None
            if out[n][1:] in sites:
                return n
        return None

    at = bisect.bisect_left(called, first)
    before = nearest(range(at - 1, -1, -1))
    after = nearest(range(bisect.bisect_right(called, last), len(called)))
    found = [n for n in (before, after) if n is not None]
    if not found:
        return ()
    n = min(found, key=lambda n: first - n if n < first else n - last)
    return next(c for c in chains if c[1:] == out[n][1:])


def sass_lines(text: str, filename: str, hints: dict | None = None) -> dict[int, int]:
    """SASS: each instruction line -> the innermost kernel-file line of its stack."""
    return {n: innermost(c) for n, c in sass_chains(text, filename, hints).items()}


# --------------------------------------------------------------------------- AMDGCN

# An instruction, e.g.  buffer_load_dwordx4 v[0:3], v8, s[0:3], 0 offen    s_endpgm
_AMDGCN_INSN_RE = re.compile(r"^\s+[a-z_][a-z0-9_.]*(?:\s|$)")
# Where the function ends, e.g.  .Lfunc_end0:
_AMDGCN_END_RE = re.compile(r"^\s*(?:\.Lfunc_end\d+:|\.section\b|\.end_amdgpu_metadata|\.amdhsa_kernel\b)")


def amdgcn_chains(text: str, filename: str) -> dict[int, tuple]:
    """AMDGCN: each instruction line -> the chain of the `.loc` before it, innermost first,
    from the inline stack of its comment
    (`; standard.py:196:12 @[ standard.py:216:16 @[ softmax.py:35:31 ] ]`)."""
    lines = text.splitlines()
    files = _file_table(lines)
    by_name = _by_name(files)
    out: dict[int, tuple] = {}
    current: tuple = ()
    for n, raw in enumerate(lines, 1):
        m = _LOC_RE.match(raw)
        if m:
            f, line = int(m["file"]), int(m["line"])
            stack = _comment_frames(m["rest"], ";")
            frames = ((files.get(f, ""), line),) + tuple((by_name(p), ln) for p, ln in stack[1:])
            current = _user_frames(frames, filename) if line > 0 else ()
            continue
        if _AMDGCN_END_RE.match(raw):
            current = ()
            continue
        s = raw.strip()
        if (innermost(current) is not None and _AMDGCN_INSN_RE.match(raw)
                and not s.split(None, 1)[0].endswith(":")):
            out[n] = current
    return out


def amdgcn_lines(text: str, filename: str) -> dict[int, int]:
    """AMDGCN: each instruction line -> the innermost kernel-file line of its `.loc`."""
    return {n: innermost(c) for n, c in amdgcn_chains(text, filename).items()}
