"""Global and shared memory instructions in PTX and SASS: what the highlighting and
the load table read. Pure functions from text to frozen dataclasses."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from inspectors.base import stages as stage_table

# PTX, e.g.
#   @%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
#   st.global.b32 [ %rd4 + 0 ], { %r9 };
#   @%p1 atom.global.gpu.acq_rel.add.f32 %r5, [ %rd1 + 0 ], %r4;
#   cp.async.cg.shared.global [ %r12 + 0 ], [ %rd8 + 0 ], 0x10, %r13;
#   cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [...]
#   cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd45, {%r83, %r84}], [%r85];   (a TMA store)
#   tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [...], [...], 0x80;
_PTX_OP_RE = re.compile(
    r"^\s*(?:@!?%p\d+\s+)?"
    r"(?P<op>ld|st|atom|red|cp\.(?:reduce\.)?async(?:\.bulk(?:\.prefetch)?(?:\.tensor)?)?|ldmatrix|stmatrix"
    r"|tensormap\.cp_fenceproxy)"
    r"(?P<mods>(?:\.[\w:]+)*)\s")
_PTX_WIDTH_RE = re.compile(r"\.(?:b|u|s|f)(\d+)\b")
_PTX_VEC_RE = re.compile(r"\.v(\d)\b")


@dataclass(frozen=True)
class MemOp:
    line: int          # 1-based line in the stage text
    kind: str          # load | store | atomic
    space: str         # global | shared | local | param
    vector: int        # elements per instruction (1, 2, 4, 8)
    bits: int          # bits per element
    text: str          # the instruction, stripped
    role: str = ""     # "tma": a bulk tensor copy (one thread moves a whole tile: its shape is in the
                       # TTGIR, see inspectors.read.tma); "tensormap": a TMA descriptor written to global

    @property
    def bytes(self) -> int:
        return self.vector * self.bits // 8

    @property
    def vectorized(self) -> bool:
        """Wider than one element a thread; a TMA copy moves a whole tile (the widest there is)."""
        return self.vector > 1 or self.bits >= 64 or self.role == "tma"


def _ptx_kind_space(op: str, mods: str) -> tuple[str, str] | None:
    if op == "tensormap.cp_fenceproxy":
        return "store", "global"    # a 128-byte TMA descriptor, from shared to global
    if op.startswith("cp.reduce.async"):
        return "atomic", "global"   # a bulk reduction into global memory
    if op.startswith("cp.async.bulk") and ".prefetch" not in op:
        # the destination's state space comes first: .shared::cta.global loads, .global.shared::cta stores
        spaces = re.findall(r"\.(global|shared)", mods)
        return ("store" if spaces[:1] == ["global"] else "load"), "global"
    if op.startswith("cp.async"):
        return "load", "global"     # global -> shared copies: counted as global loads
    if op in ("ldmatrix", "stmatrix"):
        return ("load" if op == "ldmatrix" else "store"), "shared"
    space = next((s for s in ("global", "shared", "local", "param") if f".{s}" in mods), "generic")
    kind = {"ld": "load", "st": "store", "atom": "atomic", "red": "atomic"}[op]
    return kind, space


@functools.lru_cache(maxsize=4)       # a kernel's analysis reads its PTX's memory ops twice (insight, threadmap)
def ptx_memops(text: str) -> tuple[MemOp, ...]:
    ops = []
    for n, line in enumerate(text.splitlines(), 1):
        m = _PTX_OP_RE.match(line)
        if not m:
            continue
        if m["op"].startswith("cp.async") and re.search(r"\.(wait|commit)", m["mods"]):
            continue    # cp.async.wait_group 0 / cp.async.commit_group: fences, not copies
        kind, space = _ptx_kind_space(m["op"], m["mods"])
        if space == "param":
            continue
        vec = _PTX_VEC_RE.search(m["mods"])
        width = _PTX_WIDTH_RE.search(m["mods"])
        bits = int(width.group(1)) if width else 0
        vector = int(vec.group(1)) if vec else 1
        if m["op"].startswith("cp.async") and not m["op"].endswith(("bulk", "tensor")):
            # cp.async.cg.shared.global [dst], [src], 16: the size operand is in bytes
            size = re.search(r",\s*(0x[0-9a-f]+|\d+)\s*(?:,|;)", line)
            nbytes = int(size.group(1), 0) if size else 16
            vector, bits = max(nbytes // 4, 1), 32
        role = ""
        if m["op"] == "tensormap.cp_fenceproxy":
            size = re.search(r",\s*(0x[0-9a-f]+|\d+)\s*;", line)
            vector, bits, role = 1, 8 * (int(size.group(1), 0) if size else 128), "tensormap"
        elif ".bulk" in m["op"] and ".tensor" in m["op"]:
            vector, bits, role = 1, 0, "tma"
        if m["op"] in ("ldmatrix", "stmatrix"):
            # ldmatrix.sync.aligned.m8n8.x4.shared.b16: each thread gets one 32-bit register per matrix
            count = re.search(r"\.x(\d)", m["mods"])
            vector, bits = (int(count.group(1)) if count else 1), 32
        ops.append(MemOp(n, kind, space, vector, bits, line.strip(), role))
    return tuple(ops)


# SASS, e.g.  /*0180*/   @!P0 LDG.E.128 R16, desc[UR4][R2.64] ;
#             /*0200*/   STG.E.64 desc[UR4][R4.64], R8 ;   LDS.U.128, STS, ATOMG.E.ADD.F32
_SASS_OP_RE = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?(?P<op>LDG|STG|LDS|STS|LDSM|ATOMG|ATOMS|RED|REDG|LDGSTS|UTMALDG|UTMASTG)(?P<mods>(?:\.[\w]+)*)\s")


def sass_memops(text: str) -> tuple[MemOp, ...]:
    ops = []
    for n, line in enumerate(text.splitlines(), 1):
        m = _SASS_OP_RE.match(line)
        if not m:
            continue
        op, mods = m["op"], m["mods"]
        kind = ("load" if op.startswith(("LD", "UTMALD")) else
                "store" if op.startswith(("ST", "UTMAST")) else "atomic")
        space = "shared" if op in ("LDS", "STS", "LDSM", "ATOMS") else "global"
        width = re.search(r"\.(128|64|32|16|8|U8|S8|U16|S16)\b", mods)
        bits = int(re.sub(r"[US]", "", width.group(1))) if width else 32
        vector, elem = (bits // 32, 32) if bits > 32 else (1, bits)
        ops.append(MemOp(n, kind, space, vector, elem, line.strip()))
    return tuple(ops)


# AMDGCN, e.g.   global_load_dwordx4 v[2:5], v[0:1], off
#                buffer_store_dword v3, v4, s[8:11], 0 offen      ds_read_b128 v[4:7], v2
_AMDGCN_OP_RE = re.compile(r"^\s*(?P<space>global|buffer|flat|ds)_(?P<op>load|store|read|write|atomic)"
                           r"(?P<mods>\w*)\s")
_AMDGCN_WIDTH_RE = re.compile(r"_(?:dword(x\d)?|b(\d+)|(?:u|i)(\d+)|short|byte)")


def amdgcn_memops(text: str) -> tuple[MemOp, ...]:
    ops = []
    for n, line in enumerate(text.splitlines(), 1):
        m = _AMDGCN_OP_RE.match(line)
        if not m:
            continue
        kind = {"load": "load", "read": "load", "store": "store", "write": "store"}.get(m["op"], "atomic")
        space = "shared" if m["space"] == "ds" else "global"
        vector, bits = 1, 32
        w = _AMDGCN_WIDTH_RE.search(m["mods"])
        if w and w.group(1):
            vector = int(w.group(1)[1:])
        elif w and w.group(2):
            b = int(w.group(2))
            vector, bits = (b // 32, 32) if b > 32 else (1, b)
        elif w and w.group(3):
            bits = int(w.group(3))
        elif w and "short" in w.group(0):
            bits = 16
        elif w and "byte" in w.group(0):
            bits = 8
        ops.append(MemOp(n, kind, space, vector, bits, line.strip()))
    return tuple(ops)


def memops_for(stage: str, text: str) -> tuple[MemOp, ...]:
    """Memory ops of a stage's text; stages without an ISA-level parser give none."""
    parser = {"ptx": ptx_memops, "sass": sass_memops, "amdgcn": amdgcn_memops}.get(stage_table.family_of(stage))
    return parser(text) if parser else ()
