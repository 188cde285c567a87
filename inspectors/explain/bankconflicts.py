"""Shared-memory bank conflicts, predicted from the PTX: the address each lane of warp 0 gives
every shared access, and how many wavefronts the access needs.

    for a in predict(ptx): a.line, a.op, a.wavefronts, a.ideal, a.ways

The PTX's integer arithmetic is run for the 32 lanes of warp 0 of program 0 (`%tid.x` = lane,
`%ctaid.*` = 0; `mov`, `add`, `mul`, `mad`, `shl`, `shr`, `and`, `or`, `xor`, `bfe`, `selp`,
`setp`, `cvt`, ... in 32 and 64 bits), once, in program order (a loop body is read once: the
addresses of its first iteration). A value that comes from memory or a kernel argument is unknown,
and so is an access whose address depends on one: it gets no prediction.

The bank model (NVIDIA, sm_70 on): shared memory has 32 banks of 4 bytes; one wavefront serves
each bank once (a word read by several lanes is broadcast). A warp's access of 4 bytes a lane is
one request of 32 lanes; of 8 bytes, two of 16 lanes; of 16 bytes, four of 8 lanes. `ldmatrix` /
`stmatrix` .xN: N matrices, each 8 rows of 16 bytes addressed by 8 lanes; `cp.async` writes its
4, 8 or 16 bytes a lane into shared memory like a store. `wgmma` reads its operands from shared
memory through matrix descriptors, not addresses: it is not predicted. An access needs, per
request, as many wavefronts as its busiest bank has distinct words; `ideal` is its bytes / 128.
Nsight Compute counts the same per SASS instruction (L1 Wavefronts Shared, ... Ideal).
Pure: PTX text in, frozen dataclasses out; linear in the text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from inspectors.read.brackets import split_top

LANES = 32
_M32, _M64 = (1 << 32) - 1, (1 << 64) - 1
_INSN_RE = re.compile(r"^\s*(?:@(?P<neg>!?)(?P<pred>%p\d+)\s+)?(?P<op>[a-z][\w.:]*)\s+(?P<args>[^;]*);")
_MEM_RE = re.compile(r"\[\s*(?P<reg>%[\w]+|[A-Za-z_]\w*)?\s*(?:\+\s*(?P<off>-?(?:0x[0-9a-fA-F]+|\d+)))?\s*\]")
_IMM_RE = re.compile(r"^-?(?:0[xX][0-9a-fA-F]+|\d+)$")
_SPECIAL = {"%tid.x": lambda l: l, "%laneid": lambda l: l, "%tid.y": lambda l: 0, "%tid.z": lambda l: 0,
            "%ctaid.x": lambda l: 0, "%ctaid.y": lambda l: 0, "%ctaid.z": lambda l: 0,
            "%cluster_ctarank": lambda l: 0, "%warpid": lambda l: 0}
MAX_LINES = 400_000


@dataclass(frozen=True)
class SharedAccess:
    line: int              # 1-based PTX line
    op: str                # st.shared.v4.b32, ldmatrix.sync.aligned.m8n8.x4.shared.b16, ...
    kind: str              # load | store
    bytes_per_lane: int
    wavefronts: int        # predicted for warp 0
    ideal: int

    @property
    def ways(self) -> float:
        return self.wavefronts / self.ideal if self.ideal else 0.0


def _imm(text: str) -> int | None:
    text = text.strip()
    if _IMM_RE.match(text):
        return int(text, 0) & _M64
    if text.startswith(("0f", "0F", "0d", "0D")):
        return None
    return None


class _Lanes:
    """Register values of the 32 lanes (None: unknown)."""

    def __init__(self):
        self.regs: dict[str, list] = {}

    def get(self, operand: str) -> list:
        operand = operand.strip()
        if operand in _SPECIAL:
            return [_SPECIAL[operand](lane) for lane in range(LANES)]
        v = _imm(operand)
        if v is not None:
            return [v] * LANES
        if operand.startswith("%"):
            return self.regs.get(operand, [None] * LANES)
        if re.match(r"^[A-Za-z_]\w*$", operand):      # a shared symbol (global_smem): the base, 0
            return [0] * LANES
        return [None] * LANES

    def set(self, reg: str, values: list, pred: list | None) -> None:
        if pred is None:
            self.regs[reg] = values
            return
        old = self.regs.get(reg, [None] * LANES)
        self.regs[reg] = [v if p else o for v, o, p in zip(values, old, pred)]


def _lanewise(fn, *cols):
    return [None if any(c is None for c in vals) else fn(*vals) for vals in zip(*cols)]


def _signed(x: int, bits: int) -> int:
    return x - (1 << bits) if x >> (bits - 1) & 1 else x


_CMP = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
        "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b, "lo": lambda a, b: a < b, "ls": lambda a, b: a <= b,
        "hi": lambda a, b: a > b, "hs": lambda a, b: a >= b}


def _step(st: _Lanes, op: str, args: list[str], pred) -> None:
    parts = op.split(".")
    base = parts[0]
    bits = 64 if any(p in ("u64", "s64", "b64") for p in parts) else 32
    mask = _M64 if bits == 64 else _M32
    if base == "setp" and len(args) >= 3:
        cmp = _CMP.get(parts[1])
        signed = any(p.startswith("s") and p[1:].isdigit() for p in parts)
        a, b = st.get(args[1]), st.get(args[2])
        if cmp is None:
            res = [None] * LANES
        else:
            res = _lanewise(lambda x, y: int(cmp(_signed(x & mask, bits) if signed else x & mask,
                                                  _signed(y & mask, bits) if signed else y & mask)), a, b)
        for name in args[0].split("|"):
            st.set(name.strip(), res, pred)
        return
    if not args or not args[0].startswith("%") or args[0].startswith("%{"):
        return
    d = args[0]
    src = [st.get(a) for a in args[1:]]
    wide = base in ("mul", "mad") and "wide" in parts
    m = _M64 if wide else mask
    fn = None
    if base in ("mov", "cvt", "cvta") and len(src) == 1:     # (a packing cvt, two sources: unknown)
        fn = lambda a: a  # noqa: E731
    elif base == "add" and len(src) == 2:
        fn = lambda a, b: a + b  # noqa: E731
    elif base == "sub" and len(src) == 2:
        fn = lambda a, b: a - b  # noqa: E731
    elif base == "mul" and len(src) == 2:
        fn = lambda a, b: a * b  # noqa: E731
    elif base == "mad" and len(src) == 3:
        fn = lambda a, b, c: a * b + c  # noqa: E731
    elif base == "shl" and len(src) == 2:
        fn = lambda a, b: a << min(b, 64)  # noqa: E731
    elif base == "shr" and len(src) == 2:
        signed = any(p.startswith("s") for p in parts[1:])
        fn = (lambda a, b: _signed(a & mask, bits) >> min(b, 64)) if signed else (lambda a, b: (a & mask) >> min(b, 64))
    elif base == "and" and len(src) == 2:
        fn = lambda a, b: a & b  # noqa: E731
    elif base == "or" and len(src) == 2:
        fn = lambda a, b: a | b  # noqa: E731
    elif base == "xor" and len(src) == 2:
        fn = lambda a, b: a ^ b  # noqa: E731
    elif base == "not" and len(src) == 1:
        fn = lambda a: ~a  # noqa: E731
    elif base == "bfe" and len(src) == 3:
        fn = lambda a, pos, ln: (a >> pos) & ((1 << ln) - 1) if ln else 0  # noqa: E731
    elif base == "selp" and len(src) == 3:
        fn = lambda a, b, p: a if p else b  # noqa: E731
    elif base in ("min", "max") and len(src) == 2:
        fn = min if base == "min" else max
    if fn is None:
        st.set(d, [None] * LANES, pred)       # anything else (a load, a float op): unknown
        return
    values = _lanewise(lambda *xs: fn(*xs) & m, *src) if src else [None] * LANES
    st.set(d, values, pred)


def _wavefronts(addrs: list[int], width: int, group: int) -> int:
    """Wavefronts for lanes in groups of `group`, each accessing `width` bytes from its address:
    per group, the most distinct 4-byte words that fall in one of the 32 banks."""
    total, span = 0, range(max(width // 4, 1))
    for start in range(0, len(addrs), group):
        words = {(a >> 2) + w for a in addrs[start:start + group] for w in span}
        if words:
            per_bank = [0] * 32
            for word in words:
                per_bank[word & 31] += 1
            total += max(per_bank)
    return total


def _access(op: str) -> tuple[str, int, int, int] | None:
    """(kind, bytes a lane, lanes per request, matrices) of a shared access, or None."""
    parts = op.split(".")
    if parts[0] in ("ldmatrix", "stmatrix") and "shared" in op:
        n = next((int(p[1:]) for p in parts if re.fullmatch(r"x[124]", p)), 1)
        return ("load" if parts[0] == "ldmatrix" else "store"), 16, 8, n
    if parts[:2] == ["cp", "async"] and "shared" in op and "bulk" not in parts:
        return "store", 16, 8, 0              # the width is the instruction's cp-size operand (predict reads it)
    if parts[0] in ("ld", "st") and "shared" in parts:
        vec = next((int(p[1:]) for p in parts if re.fullmatch(r"v[248]", p)), 1)
        size = next((int(p[1:]) // 8 for p in reversed(parts) if re.fullmatch(r"[bsuf](8|16|32|64|128)", p)), 4)
        width = vec * size
        return ("load" if parts[0] == "ld" else "store"), width, {4: 32, 8: 16, 16: 8}.get(width, 32), 0
    return None


def predict(ptx: str) -> tuple[SharedAccess, ...]:
    """Every shared access of the PTX whose lane addresses are known, with its wavefronts."""
    st = _Lanes()
    out = []
    # each instruction's destination alone first (the text up to its first comma); its operands
    # split only where the slice or the evaluation needs them
    insns = [_Insn(n, m) for n, line in enumerate(ptx.splitlines()[:MAX_LINES], 1) if (m := _INSN_RE.match(line))]
    needed = _feeding_addresses(insns)
    for insn in insns:
        n, m, op = insn.n, insn.m, insn.op
        if insn.access is None and not needed.intersection(insn.dests):
            continue             # its value never reaches a shared address (a float op, a global pointer)
        args = insn.args
        pred = None
        if m["pred"]:
            p = st.get(m["pred"])
            if any(v is None for v in p):
                pred = None          # unknown predicate: assume the instruction runs
            else:
                pred = [bool(v) != bool(m["neg"]) for v in p]
        acc = insn.access
        if acc is not None:
            mem = next((a for a in args if a.startswith("[")), None)
            mm = _MEM_RE.match(mem) if mem else None
            if mm:
                base = st.get(mm["reg"]) if mm["reg"] else [0] * LANES
                off = int(mm["off"], 0) if mm["off"] else 0
                if all(b is not None for b in base):
                    addrs = [(b + off) & _M32 for b in base]
                    kind, width, group, mats = acc
                    if op.startswith("cp.async") and len(args) >= 3 and _imm(args[2]) in (4, 8, 16):
                        width = _imm(args[2])
                        group = {4: 32, 8: 16, 16: 8}[width]
                    if mats:                                   # ldmatrix/stmatrix .xN: lanes 0..8N-1 give the rows
                        waves = _wavefronts(addrs[:8 * mats], 16, 8)
                        ideal = mats
                    else:
                        waves = _wavefronts(addrs, width, group)
                        ideal = max(1, width * LANES // 128)
                    out.append(SharedAccess(n, op, kind, width, waves, ideal))
            if acc[0] == "load" and args and args[0].startswith("%"):
                st.set(args[0], [None] * LANES, None)
            continue
        _step(st, op, args, pred)
    return tuple(out)


class _Insn:
    """One instruction: its destination(s) read at once, its operands split when first asked."""
    __slots__ = ("n", "m", "op", "access", "dests", "_args")

    def __init__(self, n: int, m: re.Match):
        self.n, self.m, self.op = n, m, m["op"]
        self.access = _access(self.op)
        self.dests = [d.strip() for d in m["args"].split(",", 1)[0].split("|")]
        self._args = None

    @property
    def args(self) -> list[str]:
        if self._args is None:
            self._args = [a.strip() for a in _split_args(self.m["args"])]
        return self._args


def _feeding_addresses(insns) -> set[str]:
    """The registers a shared access's address is computed from (its backward slice, loops
    included: passes until nothing is added), predicates of the instructions on the way too."""
    needed: set[str] = set()
    for insn in insns:
        if insn.access is not None:
            mem = next((a for a in insn.args if a.startswith("[")), None)
            if mem and (mm := _MEM_RE.match(mem)) and mm["reg"]:
                needed.add(mm["reg"])
    grew = bool(needed)
    while grew:
        grew = False
        for insn in reversed(insns):
            if not needed.intersection(insn.dests):
                continue
            for a in [*insn.args[1:], insn.m["pred"] or ""]:
                if a.startswith("%") and a not in needed:
                    needed.add(a)
                    grew = True
    return {n.strip() for n in needed}


def _split_args(text: str) -> list[str]:
    """Operands split at top-level commas ({...} vectors and [...] addresses kept whole)."""
    if "{" not in text and "[" not in text:
        return text.split(",")
    parts = split_top(text, ",", "{[", "}]", quotes="")
    if not parts[-1]:
        parts.pop()
    return parts


def by_line(accesses, ptx_to_python: dict[int, int]) -> dict[int, tuple[int, int]]:
    """Python line -> (predicted wavefronts, ideal wavefronts), summed over its shared accesses."""
    out: dict[int, tuple[int, int]] = {}
    for a in accesses:
        py = ptx_to_python.get(a.line)
        if py is None:
            continue
        w, i = out.get(py, (0, 0))
        out[py] = (w + a.wavefronts, i + a.ideal)
    return out


def measured_by_line(page, line_of: dict[int, int | None]) -> tuple[dict[int, tuple[float, float]], dict[int, set]]:
    """From an Nsight Compute source page (inspectors.read.ncu_source): Python line -> (L1 Wavefronts
    Shared, ... Ideal) summed over its SASS instructions, and their opcodes. `line_of`: SASS offset
    -> Python line (a profile's instructions)."""
    from inspectors.read import ncu_source as ncu
    out: dict[int, tuple[float, float]] = {}
    ops: dict[int, set] = {}
    for row, off in zip(page.rows, page.offsets()):
        w, ideal = row.metrics.get(ncu.SHARED_WAVEFRONTS, 0.0), row.metrics.get(ncu.SHARED_IDEAL, 0.0)
        py = line_of.get(off)
        if w and py is not None:
            a, b = out.get(py, (0.0, 0.0))
            out[py] = (a + w, b + ideal)
            ops.setdefault(py, set()).add(row.text.split()[0].split(".")[0])
    return out, ops
