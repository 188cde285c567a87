"""Nsight Compute's Source page as CSV (`ncu --import R.ncu-rep --page source --csv
--print-source sass`): one row per SASS instruction of the profiled kernel, with the
per-instruction metrics of the sections that were collected. Pure: text in, frozen
dataclasses out (inspectors.explain.profile maps the rows to Python lines).

The export, as Nsight Compute 2023-2025 writes it: a few lines before the table (the
profiler's `==PROF==` chatter, the kernel's name), then a header row that starts with
`"Address","Source"`, then one row per instruction. Numbers carry thousands separators
(`"1,980,000"`). The columns this reads, by their header (others are kept as they are):

    Address                                   the instruction's address (hex)
    Source                                    the SASS instruction
    Warp Stall Sampling (All Samples)         PC samples that found a warp on it
    Warp Stall Sampling (Not-issued Samples)  those where it did not issue
    Instructions Executed                     warp-level executions
    Thread Instructions Executed              thread-level executions
    L2 Theoretical Sectors Global             32-byte sectors its global accesses touch
    L2 Theoretical Sectors Global Ideal       the sectors a perfectly coalesced access would
    L2 Theoretical Sectors Global Excessive   the difference
    L1 Wavefronts Shared (Ideal, Excessive)   shared-memory wavefronts
    stall_*                                   samples by stall reason (stall_long_sb, ...)

Versions name some columns differently (exports seen in the wild): the samples column is
also `# Samples`, and the reasons also `smsp__pcsamp_warps_issue_stalled_<reason>` (their
`_not_issued` twins left out, as the `stall_<reason> (Not Issued)` twins of Nsight Compute
2025.3: a subset of the same samples, counted twice if read); both read the same. A header that has no `Address` or no
`Source` column is not this page: `parse` says so.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

SAMPLES = "Warp Stall Sampling (All Samples)"
NOT_ISSUED = "Warp Stall Sampling (Not-issued Samples)"
EXECUTED = "Instructions Executed"
THREAD_EXECUTED = "Thread Instructions Executed"
SECTORS = "L2 Theoretical Sectors Global"
SECTORS_IDEAL = "L2 Theoretical Sectors Global Ideal"
SECTORS_EXCESSIVE = "L2 Theoretical Sectors Global Excessive"
SHARED_WAVEFRONTS = "L1 Wavefronts Shared"
SHARED_IDEAL = "L1 Wavefronts Shared Ideal"
STALL_PREFIX = "stall_"
SAMPLES_ALIASES = (SAMPLES, "# Samples", "Warp Stall Sampling (All)")
STALL_PREFIXES = (STALL_PREFIX, "smsp__pcsamp_warps_issue_stalled_")

# Stall reasons in words (the Kernel Profiling Guide's "Warp Stall Reasons"), for tables.
STALL_WORDS = {
    "long_sb": "long scoreboard: waiting for a global/local memory load",
    "short_sb": "short scoreboard: waiting for shared memory or a special-function result",
    "barrier": "barrier: waiting for the other warps at a __syncthreads / bar.sync",
    "membar": "memory barrier",
    "wait": "wait: a fixed-latency dependency",
    "math": "math pipe throttle: the math unit is busy",
    "mio_throttle": "MIO throttle: the shared-memory/special-function queue is full",
    "lg_throttle": "LG throttle: the global memory queue is full",
    "tex": "texture/TMA throttle",
    "imc": "constant cache miss",
    "drain": "drain: stores draining at exit",
    "dispatch": "dispatch stall",
    "no_instruction": "no instruction: instruction cache miss or branch",
    "not_selected": "not selected: eligible, another warp issued",
    "selected": "selected: issuing",
    "branch_resolving": "branch resolving",
    "sleeping": "sleeping",
    "gmma": "waiting for a warpgroup MMA (wgmma)",
    "misc": "miscellaneous",
    # the same reasons as the smsp__pcsamp_* metrics spell them
    "long_scoreboard": "long scoreboard: waiting for a global/local memory load",
    "short_scoreboard": "short scoreboard: waiting for shared memory or a special-function result",
    "math_pipe_throttle": "math pipe throttle: the math unit is busy",
    "no_instructions": "no instruction: instruction cache miss or branch",
    "tex_throttle": "texture/TMA throttle",
    # the short names of Nsight Compute 2025.3's Source-page export (stall_lg, stall_mio, ...)
    "lg": "LG throttle: the global memory queue is full",
    "mio": "MIO throttle: the shared-memory/special-function queue is full",
    "no_inst": "no instruction: instruction cache miss or branch",
    "sleep": "sleeping",
}

_HEX_RE = re.compile(r"^(?:0x)?([0-9a-fA-F]+)$")


class NcuCsvError(ValueError):
    """The text is not a Source-page export (or not one this reads); the message says why
    and names the line."""


@dataclass(frozen=True)
class SassSample:
    """One instruction's row."""
    address: int
    text: str
    metrics: dict                 # header -> number (blank cells left out)
    raw: dict = field(default_factory=dict)     # header -> the cell as written (non-numeric ones)
    stalls: dict = field(default_factory=dict)  # reason -> samples (`long_sb`: 12.0), the non-zero ones

    def get(self, name: str) -> float:
        return self.metrics.get(name, 0.0)

    @property
    def samples(self) -> float:
        return next((self.metrics[a] for a in SAMPLES_ALIASES if a in self.metrics), 0.0)

    @property
    def executed(self) -> float:
        return self.get(EXECUTED)

    @property
    def opcode(self) -> str:
        parts = self.text.split()
        if parts and parts[0].startswith("@"):
            parts = parts[1:]
        return parts[0].split(".")[0] if parts else ""


@dataclass(frozen=True)
class SourcePage:
    """One kernel's table: its rows in address order, the headers as written, and what
    stood before the header (the kernel's name, when the export names it)."""
    columns: tuple[str, ...]
    rows: tuple[SassSample, ...]
    preamble: tuple[str, ...] = ()

    @property
    def has_samples(self) -> bool:
        return any(a in self.columns for a in SAMPLES_ALIASES)

    def total(self, name: str) -> float:
        if name == SAMPLES:
            return sum(r.samples for r in self.rows)
        return sum(r.get(name) for r in self.rows)

    def offsets(self) -> list[int]:
        """Each row's address from the first one: the `/*0180*/` numbers of nvdisasm."""
        base = min((r.address for r in self.rows), default=0)
        return [r.address - base for r in self.rows]


def _number(cell: str) -> float | None:
    s = cell.strip().replace(",", "")
    if not s:
        return None
    try:
        return float(s)
    except ValueError:
        return None


def _address(cell: str, lineno: int) -> int:
    m = _HEX_RE.match(cell.strip())
    if not m:
        raise NcuCsvError(f"line {lineno}: address {cell!r} is not a hexadecimal number")
    return int(m.group(1), 16)


def parse(text: str) -> list[SourcePage]:
    """Every table of the export (one per profiled kernel launch), in order."""
    pages: list[SourcePage] = []
    header: list[str] | None = None
    preamble: list[str] = []
    rows: list[SassSample] = []

    def close():
        if header is not None:
            pages.append(SourcePage(tuple(header), tuple(rows), tuple(preamble)))

    lines = text.splitlines()
    for lineno, cells in _csv_rows(lines):
        if cells and cells[0].strip() == "Address":
            close()
            header, rows, preamble = [c.strip() for c in cells], [], preamble if header is None else []
            if "Source" not in header:
                raise NcuCsvError(f"line {lineno}: the header has no 'Source' column (got {', '.join(header[:8])}"
                                  f"{', ...' if len(header) > 8 else ''}): export with --page source --print-source sass")
            continue
        if header is None:
            preamble.append(",".join(cells))
            continue
        if len(cells) < 2 or not cells[0].strip():
            continue
        if not _HEX_RE.match(cells[0].strip()) and len(cells) < len(header):   # a kernel's name between tables
            close()
            header, rows, preamble = None, [], [",".join(cells)]
            continue
        rec = dict(zip(header, cells))
        metrics, raw = {}, {}
        for name, cell in rec.items():
            if name in ("Address", "Source"):
                continue
            v = _number(cell)
            if v is not None:
                metrics[name] = v
            elif cell.strip():
                raw[name] = cell.strip()
        rows.append(SassSample(_address(cells[0], lineno), rec.get("Source", "").strip(), metrics, raw,
                               _stalls(header, metrics)))
    close()
    if not pages:
        first = next((l for l in lines if l.strip() and not l.startswith("==")), "")
        raise NcuCsvError("no Source-page table: no header row starting with \"Address\",\"Source\""
                          + (f" (first line: {first[:80]!r})" if first else " (empty text)"))
    return pages


def _stalls(header: list[str], metrics: dict) -> dict[str, float]:
    """Samples by reason, from the first family of reason columns the header has."""
    for prefix in STALL_PREFIXES:
        names = [h for h in header if h.startswith(prefix) and not h.endswith(("_not_issued", "(Not Issued)"))]
        if names:
            return {h[len(prefix):]: metrics[h] for h in names if metrics.get(h)}
    return {}


def _csv_rows(lines: list[str]):
    """(1-based line number, cells) of the CSV lines; ncu's `==PROF==` lines are skipped."""
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("==PROF==") or line.startswith("==WARNING=="):
            continue
        try:
            cells = next(csv.reader(io.StringIO(line)), [])
        except csv.Error as e:          # e.g. a cell over csv's field size limit (131,072 characters)
            raise NcuCsvError(f"line {n}: not CSV ({e})") from None
        yield n, cells
