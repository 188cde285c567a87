"""What a stage panel is sent, once: the stage text's lines, each line's kind (the colours),
the Python line it comes from, and its tokens. Pure (no Streamlit), tested directly.

The browser gets bytes: b"TLP1" + a 32-hex digest of the JSON + the JSON gzipped. The
digest lets the panel tell a re-sent copy of the same text from a new text without
parsing it; gzip, because a stage text is repetitive and a big SASS panel's JSON is megabytes
(docs/09-benchmark-results.md#figures-behind-design-choices).

Tokens are one string per line, a run per token: a class letter and a length, e.g. the PTX
line `\tld.global.v4.b32 {%r1}` -> "A1B16A1C5..." where "A" is plain text and "B" is the
`classes[1]` pygments class (`k`). Plain text at the end of a line is left out.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import re
from dataclasses import dataclass

from pygments.formatters.html import _get_ttype_class
from pygments.lexer import RegexLexer
from pygments.token import Punctuation, Text, Whitespace, _TokenType

from app.render import stage_html
from inspectors.base import stages
from inspectors.read import memops
from inspectors.read.lexers import lexer_for

MAGIC = b"TLP1"
CODES = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"   # "A" = plain, then classes[1:]
_PLAIN = {Text, Whitespace, Punctuation, Text.Whitespace, Punctuation.Marker}


@dataclass(frozen=True)
class Tokens:
    classes: tuple[str, ...]      # pygments short class names; classes[0] == "" (plain)
    lines: tuple[str, ...]        # one run string per line


def split_lines(text: str) -> list[str]:
    """Lines as the panels number them: the source map's and line_classes' numbering."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()
    return lines


def _css_class(ttype) -> str:
    """Pygments' own short class for a token type (`Keyword` -> "k"), "" for plain text."""
    if ttype in _PLAIN or ttype.parent in (Text, Whitespace) and ttype not in (Text.Error,):
        return ""
    while ttype is not None:
        cls = _get_ttype_class(ttype)
        if cls:
            return cls
        ttype = ttype.parent
    return ""


def _one_regex(lexer) -> tuple[re.Pattern, list] | None:
    """A single-state RegexLexer whose rules are all (regex, token type) as one alternation of
    named groups: Python's `re` takes the first alternative that matches, as pygments takes the
    first rule, and `finditer` walks the text in C, not pygments' Python loop over the rules
    (docs/09-benchmark-results.md#figures-behind-design-choices). None for any other lexer
    (pygments' own PTX, LLVM, Python lexers)."""
    if not isinstance(lexer, RegexLexer) or set(type(lexer).tokens) != {"root"}:
        return None
    rules = type(lexer).tokens["root"]
    if not all(isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], str) and isinstance(r[1], _TokenType)
               for r in rules):
        return None
    pattern = "|".join(f"(?P<r{i}>{rx})" for i, (rx, _) in enumerate(rules))
    return re.compile(pattern, lexer.flags), [t for _, t in rules]


def _tokens(lexer, text: str):
    """(token type, text) over the whole text, as `lexer.get_tokens` gives them."""
    fast = _one_regex(lexer)
    if fast is None:
        yield from lexer.get_tokens(text)
        return
    rx, types = fast
    pos = 0
    for m in rx.finditer(text):
        if m.start() != pos:                                # nothing matched here: pygments' Error
            yield Text, text[pos:m.start()]
        yield types[int(m.lastgroup[1:])], m.group()
        pos = m.end()
    if pos < len(text):
        yield Text, text[pos:]


def _tokenize_lines(rx: re.Pattern, types: list, lines: list[str]) -> Tokens:
    r"""The one-regex lexers line by line: none of their rules spans a line break (`\s+`
    aside, which only joins blank space), so each line lexes alone, with less Python per
    token than the general loop below."""
    codes: dict[str, str] = {"": "A"}
    names: list[str] = [""]
    by_group: dict[str, str] = {}
    for i, ttype in enumerate(types):
        cls = _css_class(ttype)
        if cls not in codes:
            codes[cls] = CODES[len(names)] if len(names) < len(CODES) else "A"
            if codes[cls] != "A":
                names.append(cls)
        by_group[f"r{i}"] = codes[cls]
    out = []
    for line in lines:
        runs, cur, n, pos = [], "A", 0, 0
        for m in rx.finditer(line):
            start, end = m.span()
            code = by_group[m.lastgroup]
            if start != pos:                        # nothing matched here: plain, as pygments' Error
                if cur == "A":
                    n += start - pos
                else:
                    runs.append(f"{cur}{n}")
                    cur, n = "A", start - pos
            if code == cur:
                n += end - start
            else:
                if n:
                    runs.append(f"{cur}{n}")
                cur, n = code, end - start
            pos = end
        if n and cur != "A":
            runs.append(f"{cur}{n}")
        out.append("".join(runs))
    return Tokens(tuple(names), tuple(out))


def tokenize(stage_name: str, text: str, n_lines: int) -> Tokens:
    """Run the stage's lexer once over the whole text (multi-line strings and comments lex
    right) and cut its tokens at newlines into per-line run strings; a one-regex lexer whose
    rules stay within a line, line by line."""
    lexer = lexer_for(stages.get(stage_name).lexer)
    fast = _one_regex(lexer)
    if fast is not None and not getattr(lexer, "multiline", False):
        lines = split_lines(text)
        return _tokenize_lines(*fast, (lines + [""] * n_lines)[:n_lines])
    return _tokenize_stream(lexer, text, n_lines)


def _tokenize_stream(lexer, text: str, n_lines: int) -> Tokens:
    """Any lexer: its tokens over the whole text, cut at newlines."""
    codes: dict[str, str] = {"": "A"}          # css class -> code letter
    names: list[str] = [""]                     # code letter index -> css class
    by_type: dict = {}                          # token type -> code letter
    out: list[str] = []
    runs: list[str] = []
    cur_code, cur_len = "A", 0
    for ttype, value in _tokens(lexer, text.replace("\r\n", "\n")):
        code = by_type.get(ttype)
        if code is None:
            cls = _css_class(ttype)
            if cls not in codes:                    # past 52 classes: drawn plain
                codes[cls] = CODES[len(names)] if len(names) < len(CODES) else "A"
                if codes[cls] != "A":
                    names.append(cls)
            code = by_type[ttype] = codes[cls]
        if "\n" not in value:                    # most tokens: no line break inside
            if code == cur_code:
                cur_len += len(value)
            else:
                if cur_len:
                    runs.append(f"{cur_code}{cur_len}")
                cur_code, cur_len = code, len(value)
            continue
        for i, part in enumerate(value.split("\n")):
            if i:                                   # a newline: close the line
                if cur_len and cur_code != "A":
                    runs.append(f"{cur_code}{cur_len}")
                out.append("".join(runs))
                runs, cur_code, cur_len = [], "A", 0
            if not part:
                continue
            if code == cur_code:
                cur_len += len(part)
            else:
                if cur_len:
                    runs.append(f"{cur_code}{cur_len}")
                cur_code, cur_len = code, len(part)
    if cur_len and cur_code != "A":
        runs.append(f"{cur_code}{cur_len}")
    if runs:
        out.append("".join(runs))
    out = (out + [""] * n_lines)[:n_lines]      # pygments adds a final newline
    return Tokens(tuple(names), tuple(out))


# A stage's definition of the launched function; "{name}" is the function's name. Lines matched:
#   ttir/ttgir  `  tt.func public @add_kernel(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} ...`
#   llir        `define ptx_kernel void @add_kernel(ptr addrspace(1) %0, ...`
#   ptx         `.visible .entry add_kernel(`
#   sass        `.text.add_kernel:` (nvdisasm) or `Function : add_kernel` (cuobjdump)
#   amdgcn      `add_kernel:                             ; @add_kernel`
_FUNCTION_RE = {     # by family (inspectors.base.stages)
    "mlir": r"\btt\.func\b.*@{name}\b", "llir": r"^define\b.*@{name}\(", "ptx": r"\.entry\s+{name}\b",
    "sass": r"(Function\s*:\s*{name}\b|^\s*\.text\.{name}:)", "amdgcn": r"^{name}:",
}
# A global-memory load in a stage without a memory-op parser (PTX, SASS and AMDGCN have one,
# `memops.memops_for`). Lines matched:
#   source  `    x = tl.load(x_ptr + offsets, mask=mask)`, `a_desc.load([off_m, off_k])`
#   ttir    `    %x_5 = tt.load %x_4, %mask_3 : tensor<1024x!tt.ptr<f32>> loc(#loc20)`
#   ttgir   the same, `%a_47 = ttg.async_copy_global_to_local %a_ptrs_29, ...` (sm_80 pipelining),
#           `%x = amdg.buffer_load %x_ptr[%offsets_2], %mask_3 ...` (AMD)
#   llir    the inline asm `ld.global.v4.b32 { $0, $1, $2, $3 }, [ $4 + 0 ];`, `cp.async.cg.shared.global`,
#           `load float, ptr addrspace(1) %5`, `@llvm.amdgcn.raw.ptr.buffer.load.v4f32(` (AMD)
_LOAD_RE = {         # by family
    "python": re.compile(r"\btl\.load\(|\.load\("),
    "mlir": re.compile(r"\btt\.(descriptor_)?load\b|\basync_copy_global_to_local\b|\basync_tma_copy_global|\bbuffer_load\b"),
    "llir": re.compile(r"ld\.global|cp\.async\.[a-z.]*global|\bload\b.*addrspace\(1\)|global_load|buffer\.load\b"),
}


@dataclass(frozen=True)
class Opening:
    """Where a panel opens: `start`, the launched function's first line (for Python its first
    decorator, `@triton.jit`), and `load`, its first global-memory load (None without one);
    1-based, None where the text does not name the function. The browser puts `start` at the
    top when `load` then fits on screen, else shows `load` a third of the way down."""
    start: int | None
    load: int | None


def _python_opening(lines: list[str], name: str) -> Opening:
    at = next((i for i, line in enumerate(lines) if re.match(rf"\s*def\s+{re.escape(name)}\s*\(", line)), None)
    if at is None:
        return Opening(None, None)
    start, indent = at, len(lines[at]) - len(lines[at].lstrip())
    while start > 0 and lines[start - 1].strip().startswith("@"):     # @triton.jit, @triton.autotune(...)
        start -= 1
    load = None
    for i in range(at + 1, len(lines)):
        line = lines[i]
        if line.strip() and len(line) - len(line.lstrip()) <= indent and not line.lstrip().startswith((")", "#")):
            break                                               # the body ended
        if _LOAD_RE["python"].search(line.split("#", 1)[0]):
            load = i + 1
            break
    return Opening(start + 1, load)


def opening(stage_name: str, text: str, kernel_name: str | None, ops=None) -> Opening:
    """Where the panel of `stage_name` opens on `text` for the launched `kernel_name` (pure;
    `ops`: the stage's memory operations when already parsed, `memops.memops_for`)."""
    lines = split_lines(text)
    if not kernel_name:
        return Opening(None, None)
    family = stages.family_of(stage_name)
    if family == "python":
        return _python_opening(lines, kernel_name)
    name = re.escape(kernel_name)
    rx = _FUNCTION_RE.get(family)
    start = None
    if rx is not None:
        found = re.compile(rx.format(name=name))
        start = next((i + 1 for i, line in enumerate(lines) if found.search(line)), None)
    ops = memops.memops_for(stage_name, text) if ops is None else ops
    if ops:
        load = next((m.line for m in ops if m.space == "global" and m.kind == "load" and m.line >= (start or 0)),
                    None)
    elif family in _LOAD_RE:
        load = next((i + 1 for i in range((start or 1) - 1, len(lines)) if _LOAD_RE[family].search(lines[i])),
                    None)
    else:
        load = None
    return Opening(start, load)


def build(stage_name: str, text: str, filename: str, py_lines: dict[int, int] | None = None,
          label: str | None = None, calls: dict[int, tuple[int, ...]] | None = None,
          heat: dict[int, float] | None = None, kernel_name: str | None = None,
          marks: dict[int, str] | None = None, regs: dict[int, int] | None = None) -> dict:
    """The panel's data. `py_lines`: stage line (1-based) -> Python line, for click-to-follow.
    `calls`: for lines of inlined `@triton.jit` helper code, the kernel lines that called it,
    innermost call first (following a call site lights them; a followed line says its call).
    `heat`: line -> share of a measured profile's samples (inspectors.explain.profile): drawn
    as a bar behind the line, as long as the share over the panel's largest one.
    `kernel_name`: the launched function, where the panel opens (`opening`). `marks`: line -> the
    remarks on it (inspectors.explain.remarks), a mark in the gutter with the text as its tooltip.
    `regs`: line -> the most live registers at its instructions (inspectors.read.liveregs), a bar
    under the line, as long as its count over the panel's largest."""
    stage = stages.get(stage_name)
    lines = split_lines(text)
    ops = memops.memops_for(stage_name, text)           # once, for the colours and the legend
    kinds = stage_html.line_classes(stage_name, text, ops=ops)
    summary = stage_html.summarize(stage_name, text, kinds, ops=ops)
    toks = tokenize(stage_name, text, len(lines))
    at = opening(stage_name, text, kernel_name, ops)
    py = None
    if py_lines:
        py = [0] * len(lines)
        for n, p in py_lines.items():
            if 1 <= n <= len(lines) and p:
                py[n - 1] = int(p)
    return {
        "stage": stage.name, "label": label or stage.label, "file": filename,
        "lines": lines, "final_newline": text.endswith("\n"),
        "classes": list(toks.classes), "tokens": list(toks.lines),
        "kinds": {str(n): c for n, c in sorted(kinds.items()) if 1 <= n <= len(lines)},
        "py": py,
        "calls": {str(n): list(c) for n, c in sorted((calls or {}).items()) if c and 1 <= n <= len(lines)},
        "heat": {str(n): round(h, 5) for n, h in sorted((heat or {}).items()) if h > 0 and 1 <= n <= len(lines)},
        "marks": {str(n): t[:2000] for n, t in sorted((marks or {}).items()) if t and 1 <= n <= len(lines)},
        "regs": {str(n): int(r) for n, r in sorted((regs or {}).items()) if r > 0 and 1 <= n <= len(lines)},
        "open": {"start": at.start, "load": at.load},
        "summary": {"lines": len(lines), "vector": summary.vector_ops, "scalar": summary.scalar_ops,
                    "shared": summary.shared_ops, "widest": summary.widest, "tensor core": summary.tensor_core},
        "legend": {k: stage_html.LEGEND[k] for k in ("mem-vec", "mem-scalar", "mem-shared", "sreg", "tc")},
    }


def encode(data: dict) -> bytes:
    raw = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    digest = hashlib.md5(raw, usedforsecurity=False).hexdigest().encode()
    return MAGIC + digest + gzip.compress(raw, compresslevel=3, mtime=0)


def decode(blob: bytes) -> dict:
    """The inverse of `encode` (tests and tools read what a panel was sent)."""
    if not blob.startswith(MAGIC):
        raise ValueError("not a stage-panel payload")
    return json.loads(gzip.decompress(blob[len(MAGIC) + 32:]))


_RUN_RE = re.compile(r"([A-Za-z])(\d+)")


def runs(data: dict, line: int) -> list[tuple[str, str]]:
    """(class, text) pieces of 1-based `line`, as the browser draws them (for tests)."""
    text, out, pos = data["lines"][line - 1], [], 0
    for code, length in _RUN_RE.findall(data["tokens"][line - 1]):
        n = int(length)
        out.append((data["classes"][CODES.index(code)], text[pos:pos + n]))
        pos += n
    if pos < len(text):
        out.append(("", text[pos:]))
    return out
