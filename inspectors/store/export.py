"""One compile as a zip: every stage of every launch, the source, the request, and a short
report (summary figures, memory operations, source map) a reader can follow without
the app.

    data = bundle(request, result, "vector_add.py", stage_texts, insights)   # bytes of a .zip
    report(request, result, "vector_add.py", insights)                      # the report.md text alone

One list entry per launch: its stage texts (SASS included when it could be disassembled) and its
insight, as the session layer made them (inspectors/session/files.py's `export`: SASS in a job,
the one insight policy). This module only writes them.

Layout of the zip (`<stem>` is the kernel file's name without `.py`)::

    <stem>-<target>/report.md
    <stem>-<target>/request.json
    <stem>-<target>/<stem>.py
    <stem>-<target>/launch-1-add_kernel/add_kernel.{ttir,ttgir,ll,ptx,sass}
    <stem>-<target>/launch-1-add_kernel/insight.json    (the CLI's insight keys)

Entries carry a fixed date, so the same compile gives the same bytes.
"""
from __future__ import annotations

import io
import json
import re
import zipfile
from typing import Sequence

from inspectors.base import stages as stage_table
from inspectors.explain.insight import Insight
from inspectors.base.result import CompileRequest, CompileResult
from inspectors.explain.diff import figures
from inspectors.store.history import describe_options

_SAFE_RE = re.compile(r"[^A-Za-z0-9_.-]+")
_EPOCH = (1980, 1, 1, 0, 0, 0)


def _safe(part: str) -> str:
    """A zip path component: `sm_90 (cuda)` -> `sm_90_cuda_`; never `..` or empty."""
    part = _SAFE_RE.sub("_", part).strip(".") or "x"
    return part[:80]


def bundle(request: CompileRequest, result: CompileResult, filename: str,
           stage_texts: Sequence[dict[str, str]], insights: Sequence[Insight]) -> bytes:
    """The zip of `result`'s launches, each with its stage texts and insight."""
    texts, found = list(stage_texts), list(insights)
    stem = _safe(filename[:-3] if filename.endswith(".py") else filename)
    top = f"{stem}-{_safe(request.target.replace(':', '_'))}"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        def put(path: str, text: str) -> None:
            info = zipfile.ZipInfo(f"{top}/{path}", date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, text)

        put("report.md", report(request, result, filename, found, texts))
        put("request.json", json.dumps(request.to_json(), indent=2) + "\n")
        put(f"{stem}.py", request.source)
        for i, (kernel, stage_map, insight) in enumerate(zip(result.kernels, texts, found), 1):
            folder = f"launch-{i}-{_safe(kernel.name)}"
            for name, text in stage_map.items():
                if name == "source":
                    continue
                put(f"{folder}/{_safe(kernel.name)}.{stage_table.get(name).ext}", text)
            put(f"{folder}/insight.json", json.dumps(insight.to_json(), indent=1) + "\n")
            if kernel.error is not None:
                put(f"{folder}/error.txt", _error_text(kernel.error))
    return buf.getvalue()


def report(request: CompileRequest, result: CompileResult, filename: str,
           insights: Sequence[Insight], stage_texts: Sequence[dict[str, str]] | None = None) -> str:
    """Markdown: what was compiled, then per launch its figures, memory operations and
    source map (Python line -> lines of each stage)."""
    source_lines = request.source.splitlines()
    out = [f"# {filename} for {request.target}", "",
           f"Triton {result.triton_version} · options: {describe_options(request) or 'as the launcher says'} · "
           f"{len(result.kernels)} launch(es)", ""]
    for i, (kernel, insight) in enumerate(zip(result.kernels, insights), 1):
        f = figures(kernel, insight)
        out += [f"## Launch {i}: {kernel.label or kernel.name}", "",
                "Specialization: " + ", ".join(a.describe() for a in kernel.args), ""]
        if kernel.error is not None:
            out += [f"**Stage {kernel.error.stage or '?'} failed** (the stages before it are here): "
                    f"{_cell(kernel.error.message.splitlines()[0])}", ""]
            if kernel.error.command:
                out += ["Reproduce:", "", f"    {kernel.error.command}", ""]
        out += [
                "| figure | value |", "|---|---|",
                f"| num_warps / num_stages | {f.num_warps} / {f.num_stages} |",
                f"| global loads by width | {_counts(f.loads)} |",
                f"| global stores by width | {_counts(f.stores)} |",
                f"| shared loads / stores | {f.shared_loads} / {f.shared_stores} |",
                f"| atomics | {f.atomics} |",
                f"| registers / thread | {_na(f.registers)} |",
                f"| spill bytes | {_na(f.spills)} |",
                f"| shared memory / block | {f.shared_bytes:,} B |",
                f"| occupancy | {_na(f.occupancy)} |", "",
                "| stage | lines | instructions |", "|---|---|---|"]
        out += [f"| {name} | {n} | {dict(f.instructions).get(name, '')} |" for name, n in f.lines]
        if insight.remarks:
            out += ["", "Why (the compiler's remarks and the findings, by Python line):", "",
                    "| line | kind | remark | stage lines |", "|---|---|---|---|"]
            out += [f"| {f'{r.file}:{r.line}' if r.line else r.file} | {r.kind} | {_cell(r.message)} | "
                    f"{'; '.join(f'{s} {_ranges(ls)}' for s, ls in r.stage_lines.items())} |" for r in insight.remarks]
        if insight.memory_ops:
            out += ["", "Memory operations:", "", "| line | Python line | instruction | why not wider |",
                    "|---|---|---|---|"]
            src = request.source
            out += [f"| {m.ptx_line} | {_cell(m.where(src)) if m.chain else m.python_line or ''} | `{_cell(m.text)}` "
                    f"| {_cell(m.why)} |" for m in insight.memory_ops]
        table = insight.source_map.python_to_stage()
        if table:
            names = [s for s in (stage_texts[i - 1] if stage_texts else kernel.stages) if s != "source"]
            out += ["", "Source map (Python line → stage lines):", "",
                    "| Python | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
            for py in sorted(table):
                text = source_lines[py - 1].strip() if 0 < py <= len(source_lines) else ""
                cells = [_ranges(table[py].get(s, ())) for s in names]
                out.append(f"| {py}: `{_cell(text[:60])}` | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def _error_text(error) -> str:
    text = f"{error.headline()}\n\n{error.message}\n"
    if error.command:
        text += f"\nReproduce:\n{error.command}\n"
    return text + (f"\n{error.detail}\n" if error.detail else "")


def _counts(pairs) -> str:
    return ", ".join(f"{w} × {n}" for w, n in pairs) or "none"


def _na(value) -> str:
    return "n/a" if value is None else f"{value}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'").replace("\n", " ")


def _ranges(lines) -> str:
    """[3, 4, 5, 9] -> `3-5, 9`."""
    lines = sorted(set(lines))
    parts, start = [], None
    for i, n in enumerate(lines):
        if start is None:
            start = n
        if i + 1 == len(lines) or lines[i + 1] != n + 1:
            parts.append(str(start) if start == n else f"{start}-{n}")
            start = None
    return ", ".join(parts)
