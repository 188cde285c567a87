"""Everything the insight panels show about one compiled kernel, composed from the
pure parsers: memory operations with their Python line and why they are (not)
vectorized, registers and occupancy, the source map, and per-stage counts.

    insight = analyze(kernel, stages)          # stages: kernel.stages plus SASS if known
    insight.to_json()                          # the CLI's resources / memory_ops / source_map keys
"""
from __future__ import annotations

import base64
import math
import re
from collections import Counter
from dataclasses import dataclass, field

from inspectors.read import callsites
from inspectors.read import memops
from inspectors.read import resources
from inspectors.read import sourcemap
from inspectors.read import tma
from inspectors.read import warpspec
from inspectors.explain import remarks as remarks_mod
from inspectors.explain import threadmap
from inspectors.explain import vectorization
from inspectors.base import codec
from inspectors.base import stages as stage_table
from inspectors.base.result import KernelResult
from inspectors.base.targets import parse as parse_target


@dataclass(frozen=True)
class MemoryOpRow:
    kind: str                  # load | store | atomic
    space: str                 # global | shared
    vector: int
    bits: int
    ptx_line: int              # 1-based line of the PTX (or AMDGCN for AMD targets)
    python_line: int | None
    text: str
    why: str = ""              # what limited the width, when the layout allowed more
    role: str = ""             # "tma": a bulk tensor copy of a whole `tile` by one thread; "tensormap": a descriptor write
    tile: tuple[int, ...] = ()  # a TMA copy's tile (the descriptor's block shape), elements of `bits` each
    chain: tuple[tuple[str, int], ...] = ()   # in a @triton.jit helper: its frames, innermost first (sourcemap.StageLines.calls)

    @property
    def called_from(self) -> tuple[int, ...]:
        """The kernel-file lines whose helper call made this op, innermost call first."""
        return tuple(ln for path, ln in self.chain[1:] if not path)

    def where(self, source: str = "") -> str:
        """"line 20 in `_attn_inner`, called from line 56" (callsites.describe)."""
        if self.python_line is None:
            return ""
        return callsites.describe(self.chain or (("", self.python_line),), source)

    @property
    def bytes_per_thread(self) -> int:
        """Bytes one instruction moves for its thread; a TMA copy: the whole tile (one thread issues it)."""
        if self.tile:
            return math.prod(self.tile) * self.bits // 8
        return self.vector * self.bits // 8

    @property
    def width(self) -> str:
        """How wide: `v4 × 32-bit`, `16-bit`, `TMA tile 128×64 × 16-bit = 16 KiB`, `128 B descriptor`."""
        if self.role == "tensormap":
            return f"{self.bits // 8} B TMA descriptor"
        if self.role == "tma":
            if not self.tile:
                return "TMA tile (shape not found in the TTGIR)"
            size = self.bytes_per_thread
            nice = f"{size // 1024} KiB" if size % 1024 == 0 else f"{size:,} B"
            return f"TMA tile {'×'.join(map(str, self.tile))} × {self.bits}-bit = {nice}"
        return f"v{self.vector} × {self.bits}-bit" if self.vector > 1 else f"{self.bits}-bit"

    @property
    def op(self) -> str:
        return self.text.split()[1] if self.text.startswith("@") else self.text.split()[0]


@dataclass(frozen=True)
class StageSummary:
    lines: int
    instructions: int
    mix: dict[str, int]         # opcode family -> count, most common first


@dataclass(frozen=True)
class PartitionRow:
    """One partition of a warp-specialized loop (inspectors.read.warpspec), with its Python lines."""
    name: str                      # default, partition0, ...
    warps: int                     # warps it runs in
    registers: int | None          # registers per thread it asked for (requestedRegisters); None: the default's
    role: str                      # producer / MMA / epilogue, from the ops it holds
    python_lines: tuple[int, ...]  # the kernel-file lines its ops come from


@dataclass(frozen=True)
class Insight:
    memory_ops: tuple[MemoryOpRow, ...]
    accesses: tuple[vectorization.Access, ...]
    source_map: sourcemap.SourceMap
    resources: resources.Resources | None
    occupancy: resources.Occupancy | None
    declared_registers: resources.PtxRegisters | None
    summaries: dict[str, StageSummary] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    addresses: dict[int, threadmap.AddressExpr] = field(default_factory=dict)   # by PTX line
    mappings: tuple[threadmap.TensorMapping, ...] = ()   # one per global access
    cut: str = ""                                     # why the analysis is missing (over its time budget, failed)
    warps: int = 0                                    # warps a block is compiled for (.reqntid): asked + partitions'
    partitions: tuple[PartitionRow, ...] = ()         # a warp-specialized loop's partitions, default first
    remarks: tuple[remarks_mod.Remark, ...] = ()      # why: the compiler's remarks and the findings, by line

    def to_json(self) -> dict:
        r = self.resources
        return {
            "resources": None if r is None else {
                "registers": r.registers, "spills": r.spills, "spill_loads": r.spill_loads,
                "shared_bytes": r.shared_bytes, "local_bytes": r.local_bytes, "stack_bytes": r.stack_bytes,
                "source": r.source},
            "occupancy": None if self.occupancy is None else {
                "warps_per_sm": self.occupancy.warps_per_sm, "max_warps_per_sm": self.occupancy.max_warps_per_sm,
                "blocks_per_sm": self.occupancy.blocks_per_sm, "limiter": self.occupancy.limiter,
                "explanation": self.occupancy.explanation},
            "memory_ops": [{"kind": m.kind, "space": m.space, "vector": m.vector, "bits": m.bits,
                            "ptx_line": m.ptx_line, "python_line": m.python_line, "why": m.why,
                            "address": self.addresses[m.ptx_line].expr if m.ptx_line in self.addresses else None,
                            # in a @triton.jit helper: the call sites, and every frame ("" = the kernel file)
                            **({"called_from": list(m.called_from), "chain": [[p, ln] for p, ln in m.chain]}
                               if m.chain else {}),
                            **({"role": m.role, "tile": list(m.tile), "bytes": m.bytes_per_thread} if m.role else {})}
                           for m in self.memory_ops],
            "source_map": {str(py): {s: list(ls) for s, ls in per.items()}
                           for py, per in self.source_map.python_to_stage().items()},
            "remarks": [{"line": r.line, "file": r.file, "kind": r.kind, "severity": r.severity, "message": r.message,
                         "stage_lines": {s: list(ls) for s, ls in r.stage_lines.items()}} for r in self.remarks],
        }


# `.reqntid 384` (or `.reqntid 384, 1, 1`): the threads a block is compiled for
_REQNTID_RE = re.compile(r"^\s*\.reqntid\s+(\d+)", re.M)


def compiled_warps(ptx: str, asked: int) -> int:
    """The warps a block really runs: a warp-specialized kernel adds its partitions' warps to the
    `num_warps` asked for (8 asked, 12 compiled: `.reqntid 384`)."""
    m = _REQNTID_RE.search(ptx)
    return max(asked, int(m.group(1)) // 32) if m else asked


def unavailable(filename: str, note: str) -> Insight:
    """An insight with nothing in it but why (`cut`): the page shows the stages without it."""
    return Insight((), (), sourcemap.SourceMap(filename, {}), None, None, None, {}, (note,), cut=note)


def to_plain(insight: Insight) -> dict:
    """What a worker sends (KernelResult.analysis): the whole insight, JSON-able."""
    return codec.to_plain(insight)


def of(kernel: KernelResult, filename: str) -> Insight | None:
    """The insight the worker sent with `kernel` (None if it sent none). What a worker sends
    is untrusted: decoded against the annotations (codec.from_plain), and an answer of the
    wrong shape becomes an `unavailable` insight that says so."""
    if not kernel.analysis:
        return None
    try:
        return codec.from_plain(Insight, kernel.analysis)
    except (codec.DecodeError, TypeError) as e:
        return unavailable(filename, f"the worker's analysis of this kernel could not be read ({str(e)[:300]})")


def analyze(kernel: KernelResult, stages: dict[str, str], filename: str) -> Insight:
    """`stages` may hold more than `kernel.stages` (SASS disassembled later)."""
    target = parse_target(kernel.target)
    smap = sourcemap.build(stages, filename, kernel.line_twin)
    isa = stage_table.machine_stage(stages) or ""           # PTX, or AMDGCN for AMD
    isa_lines = smap.stages.get(isa, sourcemap.StageLines(isa, {}))
    isa_map = isa_lines.to_python
    ttgir_lines = smap.stages.get("ttgir", sourcemap.StageLines("ttgir", {}))
    accesses = vectorization.analyze(stages.get("ttgir", ""))
    # an access by its Python line, and by its chain of call sites (a helper called twice)
    by_line = {(ttgir_lines.to_python.get(a.line), a.kind): a for a in accesses}
    by_chain = {(ttgir_lines.chain(a.line), a.kind): a for a in accesses}
    # a TMA copy's tile, from the TTGIR op it lowered from (same Python line or call chain, same direction)
    tiles = {}
    for c in tma.tma_copies(stages.get("ttgir", "")):
        tiles.setdefault((ttgir_lines.chain(c.line), c.kind), c)
        tiles.setdefault((ttgir_lines.to_python.get(c.line), c.kind), c)
    rows = []
    for op in memops.memops_for(isa, stages.get(isa, "")):
        py = isa_map.get(op.line)
        tile, bits = (), op.bits
        if op.role == "tma":
            found = tiles.get((isa_lines.chain(op.line), op.kind)) or tiles.get((py, op.kind))
            if found is not None:
                tile, bits = found.shape, found.elem_bits
        access = (by_chain.get((isa_lines.chain(op.line), op.kind)) or by_line.get((py, op.kind))
                  if op.space == "global" else None)
        why = ""
        if access and op.vector * op.bits < access.max_vector * access.elem_bits and access.reasons:
            why = "; ".join(access.reasons)
        rows.append(MemoryOpRow(op.kind, op.space, op.vector, bits, op.line, py, op.text, why, op.role, tile,
                                isa_lines.calls.get(op.line, ())))

    res = occ = declared = None
    notes = []
    if target.backend == "cuda" and kernel.cubin:
        try:
            res = resources.resource_usage(base64.b64decode(kernel.cubin),
                                           dynamic_shared=int(kernel.metadata.get("shared", 0) or 0),
                                           ptx=stages.get("ptx"), arch=int(target.arch), kernel=kernel.name,
                                           fmad=bool(kernel.options.get("enable_fp_fusion", True)),
                                           ptxas_log=str(kernel.metadata.get("ptxas_log") or "")[:65536])
            occ = resources.occupancy(int(target.arch), res.registers, res.shared_bytes,
                                      compiled_warps(stages.get("ptx", ""), int(kernel.options.get("num_warps", 4))))
        except (ValueError, OSError, RuntimeError) as e:
            notes.append(f"register/resource report unavailable: {e}")
        declared = resources.ptx_registers(stages.get("ptx", ""))
    summaries = {name: summarize_stage(name, text) for name, text in stages.items()}
    params = [a.name for a in kernel.args if a.type != "constexpr"]
    addresses = threadmap.ptx_addresses(stages["ptx"], params) if "ptx" in stages else {}
    mappings = tuple(threadmap.tensor_mappings(stages.get("ttgir", "")))
    asked = int(kernel.options.get("num_warps", 4))
    warps = compiled_warps(stages.get("ptx", ""), asked) if "ptx" in stages else asked
    partitions = []
    for ws in warpspec.warp_specializations(stages.get("ttgir", "")):
        for p in ws.partitions:
            py = sorted({ttgir_lines.to_python[n] for n in range(p.first_line, p.last_line + 1)
                         if n in ttgir_lines.to_python})
            partitions.append(PartitionRow(p.name, p.warps if p.warps is not None else asked, p.registers,
                                           p.role, tuple(py)))
    why = remarks_mod.remarks(stages, smap, rows, kernel.diagnostics, int(kernel.options.get("num_stages", 3) or 1),
                              filename.rsplit("/", 1)[-1], kernel.source_path)
    return Insight(tuple(rows), accesses, smap, res, occ, declared, summaries, tuple(notes), addresses, mappings,
                   warps=warps, partitions=tuple(partitions), remarks=why)


# A PTX instruction line, e.g. `	@%p1 ld.global.v4.b32 { %r1, ... }, [ %rd1 + 0 ];` (not `.loc`, labels, braces)
# Linear on any line: the opcode and its `.modifier`s are matched atomically (a lookahead, then a
# backreference to what it took: Python 3.10 has no possessive `*+`), then the operands up to `;`
# may hold no `:`. The old `(?:\.[\w:]+)*\b[^:]*;` let `[^:]*` retry from every dot of a long
# dotted token: quadratic (docs/09-benchmark-results.md#figures-behind-design-choices).
_PTX_INSN_RE = re.compile(r"^\s*(?:@!?%\w+\s+)?(?=(?P<op>[a-z]\w*))(?P=op)(?=(?P<mods>(?:\.[\w:]+)*))(?P=mods)"
                          r"(?<=\w)[^:;]*;")
# A SASS instruction line, e.g. `        /*0180*/              @!P0 LDG.E.128 R16, desc[UR4][R2.64] ;`
_SASS_INSN_RE = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?(?P<op>[A-Z][A-Z0-9_]*)")
# MLIR op, e.g. `    %x = tt.load %ptr, %mask : ...`
_MLIR_INSN_RE = re.compile(r"^\s*(?:%[\w.$#:, %]+ = )?(?P<op>[a-z_]+\.[\w]+)")
# LLVM IR instruction, e.g. `  %12 = fadd float %10, %11, !dbg !20`, `  store i32 ...`, `  br label %5`
_LLIR_INSN_RE = re.compile(r"^\s+(?:%[\w.]+ = )?(?P<op>[a-z]+)\b")
# AMDGCN, e.g. `	global_load_dwordx4 v[2:5], v[0:1], off`
_AMDGCN_INSN_RE = re.compile(r"^\s+(?P<op>[sv]_\w+|global_\w+|buffer_\w+|ds_\w+|flat_\w+)")

# by family (inspectors.base.stages)
_INSN_RES = {"ptx": _PTX_INSN_RE, "sass": _SASS_INSN_RE, "mlir": _MLIR_INSN_RE, "llir": _LLIR_INSN_RE,
             "amdgcn": _AMDGCN_INSN_RE}


def summarize_stage(stage: str, text: str) -> StageSummary:
    """Line count, instruction count and the mix of opcodes of one stage."""
    regex = _INSN_RES.get(stage_table.family_of(stage))
    ops: Counter = Counter()
    if regex:
        for line in text.splitlines():
            m = regex.match(line)
            if m:
                ops[m["op"]] += 1
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    return StageSummary(lines, sum(ops.values()), dict(ops.most_common()))
