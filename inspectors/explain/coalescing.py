"""How well each global access of a kernel coalesces, estimated from its PTX alone.

The PTX computes every address from `%ctaid`, `%tid` and the kernel's parameters, e.g. the
strided read `x[(4·t + j)·stride]`:

    mov.u32 %r13, %tid.x;  shl.b32 %r14, %r13, 2;  and.b32 %r15, %r14, 508;
    or.b32 %r16, %r15, %r10;  mul.lo.s32 %r24, %r12, %r16;  mad.wide.s32 %rd1, %r24, 4, %rd11;
    @%p1 ld.global.b32 { %r1 }, [ %rd1 + 0 ];

This module runs that arithmetic for the 32 lanes of each warp of one program, with values
for the parameters (pointers get far-apart, 512-byte-aligned bases like the CUDA allocator's;
integers the values of a real launch), evaluates the guard predicate (`@%p1`: the mask) per
lane, and counts, per warp and instruction:

* bytes requested: active lanes × vector width × element size;
* sectors: distinct 32-byte segments those bytes fall in (what L1TEX moves);
* efficiency: bytes requested / (sectors × 32).

Nsight Compute measures the same thing as l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum
divided by l1tex__t_requests_..._{ld,st}.sum (one request per warp-level instruction with at
least one active lane). Pure: text in, frozen dataclasses out.
"""
from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass, field

from inspectors.read.brackets import split_top
from inspectors.read.memops import ptx_memops

SECTOR = 32
WARP = 32

# `	@%p1 ld.global.v4.b32 { %r1, ... }, [ %rd1 + 0 ];`   `	mad.wide.s32 	%rd1, %r24, 4, %rd11;`
_INSN_RE = re.compile(r"^\s*(?:@(?P<neg>!?)(?P<guard>%p\w*)\s+)?(?P<op>[a-z][\w.:]*)(?=(?P<ws>\s+))(?P=ws)(?P<args>[^;]*);")
# (the blanks after the opcode are taken at once: `\s+(?P<args>[^;]*);` split a long run of blanks
# every way before failing, quadratic)
# `	ld.param.b64 	%rd11, [strided_read_kernel_param_0];`
_PARAM_RE = re.compile(r"\[\s*(?P<kernel>\w+)_param_(?P<index>\d+)\s*(?:\+\s*(?P<off>\d+))?\s*\]")
# `[ %rd1 + 0 ]`, `[%rd4+16]`
_ADDR_RE = re.compile(r"\[\s*(?P<reg>%\w+)\s*(?:\+\s*(?P<off>-?\d+))?\s*\]")
# `.reqntid 128` or `.maxntid 128, 1, 1`: threads per program
_NTID_RE = re.compile(r"^\s*\.(?:reqntid|maxntid)\s+(\d+)", re.M)
_TYPE_BITS_RE = re.compile(r"\.[subf](8|16|32|64)\b|\.pred\b")

POINTER_BASE = 1 << 36          # parameter i points at (i + 1) · 2^36: 512-byte aligned, never overlapping


class Unknown(Exception):
    """An instruction this evaluator does not model (the estimate is then not given)."""


@dataclass(frozen=True)
class WarpAccess:
    """One global load/store instruction as one warp executes it."""
    warp: int
    active_lanes: int
    bytes_requested: int
    sectors: int
    offsets: tuple[int | None, ...]    # per lane: byte offset from the base pointer, None if inactive

    @property
    def efficiency(self) -> float:
        return self.bytes_requested / (self.sectors * SECTOR) if self.sectors else 0.0


@dataclass(frozen=True)
class AccessEstimate:
    """A global access instruction of the PTX and what each warp of a program makes of it."""
    ptx_line: int
    kind: str                     # load | store | atomic
    text: str
    vector: int
    bits: int
    pointer: str | None           # the parameter the address is based on
    warps: tuple[WarpAccess, ...]
    error: str = ""               # why there is no estimate

    @property
    def requests(self) -> int:
        return sum(1 for w in self.warps if w.active_lanes)

    @property
    def sectors_per_request(self) -> float:
        return sum(w.sectors for w in self.warps) / self.requests if self.requests else 0.0

    @property
    def bytes_per_request(self) -> float:
        return sum(w.bytes_requested for w in self.warps) / self.requests if self.requests else 0.0

    @property
    def efficiency(self) -> float:
        sectors = sum(w.sectors for w in self.warps)
        return sum(w.bytes_requested for w in self.warps) / (sectors * SECTOR) if sectors else 0.0

    @property
    def lane_stride(self) -> int | None:
        """Bytes between lane 0 and lane 1 of warp 0, when both are active."""
        o = self.warps[0].offsets if self.warps else ()
        return o[1] - o[0] if len(o) > 1 and o[0] is not None and o[1] is not None else None


@dataclass(frozen=True)
class KernelEstimate:
    accesses: tuple[AccessEstimate, ...]
    threads: int
    notes: tuple[str, ...] = ()
    params: dict = field(default_factory=dict)

    def summary(self, kind: str) -> dict:
        """Sectors per request and efficiency over every `kind` instruction of one program,
        each counted once per warp that issues it (ncu's ratio when every instruction runs
        equally often, e.g. all in the same loop body). Also `unique_sectors_efficiency`:
        useful bytes over the distinct sectors each warp touches across all those
        instructions, what DRAM would see at best if L1 kept every sector."""
        rows = [a for a in self.accesses if a.kind == kind and not a.error]
        requests = sum(a.requests for a in rows)
        sectors = sum(w.sectors for a in rows for w in a.warps)
        requested = sum(w.bytes_requested for a in rows for w in a.warps)
        unique = 0
        for warp in range(self.threads // WARP):
            seen = set()
            for a in rows:
                width = a.vector * a.bits // 8
                for off in a.warps[warp].offsets if warp < len(a.warps) else ():
                    if off is not None:
                        seen.update(((a.pointer, s) for s in _sectors(off, width)))
            unique += len(seen)
        return {"instructions": len(rows), "requests": requests,
                "sectors_per_request": sectors / requests if requests else 0.0,
                "bytes_per_request": requested / requests if requests else 0.0,
                "efficiency": requested / (sectors * SECTOR) if sectors else 0.0,
                "unique_sectors_efficiency": requested / (unique * SECTOR) if unique else 0.0}


def _sectors(offset: int, width: int) -> range:
    return range(offset // SECTOR, (offset + width - 1) // SECTOR + 1)


# ------------------------------------------------------------------------------------ the evaluator

def _bits(op: str) -> int:
    """Width of the result from the type suffix: `mul.wide.s32` -> 64, `add.s32` -> 32."""
    if ".wide" in op:
        return 64
    m = [int(b) for b in re.findall(r"\.[subf](8|16|32|64)\b", op)]
    return m[0] if m else 64


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


class _Program:
    """The straight-line view of one kernel's PTX: a register's value at a line is the one
    its textually last definition above that line gives (loops: their first iteration)."""

    def __init__(self, ptx: str, params: dict):
        self.insns: dict[int, tuple[str, list[str], str | None, bool]] = {}
        self.defs: dict[str, list[int]] = {}
        self.params = params           # param index -> value
        for n, line in enumerate(ptx.splitlines(), 1):
            m = _INSN_RE.match(line)
            if not m:
                continue
            args = [a.strip() for a in _split_args(m["args"])]
            self.insns[n] = (m["op"], args, m["guard"], bool(m["neg"]))
            op = m["op"]
            if args and args[0].startswith("%") and not op.startswith(("st.", "bra", "ret", "bar")):
                self.defs.setdefault(args[0], []).append(n)

    def value(self, token: str, line: int, env: dict, cache: dict, depth: int = 0) -> int:
        token = token.strip()
        if re.fullmatch(r"-?\d+", token):
            return int(token)
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", token):
            return int(token, 16)
        special = token.lstrip("%")
        if special in env:
            return env[special]
        if not token.startswith("%") or depth > 200:
            raise Unknown(f"cannot evaluate {token}")
        defs = self.defs.get(token, ())
        k = bisect.bisect_left(defs, line)       # (a filtered copy per use was quadratic in the PTX)
        if not k:
            raise Unknown(f"{token} has no definition above line {line}")
        at = defs[k - 1]
        key = (token, at)
        if key not in cache:
            cache[key] = self._eval(at, env, cache, depth + 1)
        return cache[key]

    def _eval(self, line: int, env: dict, cache: dict, depth: int) -> int:
        # Long on purpose: one flat dispatch over the PTX integer ops an address is built from
        # (mov, add, mul, shl, mad, cvt, ...), each case a line or two; split, it reads worse.
        op, args, _, _ = self.insns[line]
        base = op.split(".")[0]
        bits = _bits(op)
        v = lambda i: self.value(args[i], line, env, cache, depth)  # noqa: E731
        mask = (1 << bits) - 1
        if base == "ld" and ".param" in op:
            m = _PARAM_RE.search(args[1])
            if not m:
                raise Unknown(f"line {line}: {op} {args[1]}")
            return self.params.get(int(m["index"]), 0) & mask
        if base in ("mov", "cvta"):
            return v(1) & mask
        if base == "cvt":
            types = re.findall(r"\.([subf])(\d+)", op)
            src_kind, src_bits = types[-1][0], int(types[-1][1])
            x = v(1)
            x = _signed(x, src_bits) if src_kind == "s" else x & ((1 << src_bits) - 1)
            return x & mask
        signed = ".s" in op
        if base in ("add", "sub", "mul", "mad"):
            src_bits = 32 if ".wide" in op else bits
            a = _signed(v(1), src_bits) if signed else v(1) & ((1 << src_bits) - 1)
            b = _signed(v(2), src_bits) if signed else v(2) & ((1 << src_bits) - 1)
            if base == "add":
                return (a + b) & mask
            if base == "sub":
                return (a - b) & mask
            product = a * b
            if ".hi" in op:
                product >>= bits
            if base == "mad":
                return (product + v(3)) & mask
            return product & mask
        if base == "shl":
            return (v(1) << v(2)) & mask
        if base == "shr":
            x = _signed(v(1), bits) if signed else v(1) & mask
            return (x >> v(2)) & mask
        if base == "and":
            return v(1) & v(2) & mask
        if base == "or":
            return (v(1) | v(2)) & mask
        if base == "xor":
            return (v(1) ^ v(2)) & mask
        if base == "not":
            return ~v(1) & mask
        if base == "neg":
            return -v(1) & mask
        if base in ("min", "max"):
            a, b = (_signed(v(1), bits), _signed(v(2), bits)) if signed else (v(1), v(2))
            return (min(a, b) if base == "min" else max(a, b)) & mask
        if base == "bfe":              # bfe.u32 d, a, start, len: bits start..start+len-1 of a
            start, length = v(2) & 0xFF, v(3) & 0xFF
            x = (v(1) & mask) >> start
            x &= (1 << length) - 1 if length else 0
            if signed and length and x >> (length - 1):
                x -= 1 << length
            return x & mask
        if base == "bfi":              # bfi.b32 d, a, b, start, len: a's low bits into b
            start, length = v(3) & 0xFF, v(4) & 0xFF
            field_mask = ((1 << length) - 1) << start
            return ((v(2) & ~field_mask) | ((v(1) << start) & field_mask)) & mask
        if base == "lop3":             # lop3.b32 d, a, b, c, lut: any 3-input bitwise function
            a, b, c, lut = v(1), v(2), v(3), v(4)
            out = 0
            for bit in range(bits):
                i = (((a >> bit) & 1) << 2) | (((b >> bit) & 1) << 1) | ((c >> bit) & 1)
                out |= ((lut >> i) & 1) << bit
            return out
        if base in ("div", "rem"):
            a, b = (_signed(v(1), bits), _signed(v(2), bits)) if signed else (v(1), v(2))
            if b == 0:
                raise Unknown(f"line {line}: division by zero")
            q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
            return (q if base == "div" else a - q * b) & mask
        if base == "selp":
            return v(1) if self.value(args[3], line, env, cache, depth) else v(2)
        if base == "setp":
            return int(self._compare(op, v(1), v(2)))
        raise Unknown(f"line {line}: {op} is not modelled")

    @staticmethod
    def _compare(op: str, a: int, b: int) -> bool:
        parts = op.split(".")
        cmp = parts[1]
        bits = _bits(op)
        if ".s" in op:
            a, b = _signed(a, bits), _signed(b, bits)
        else:
            a, b = a & ((1 << bits) - 1), b & ((1 << bits) - 1)
        return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b,
                "lo": a < b, "ls": a <= b, "hi": a > b, "hs": a >= b}[cmp]

    def predicate(self, token: str, line: int, env: dict, cache: dict) -> bool:
        """A `%p` register: from setp, or and/or/not of predicates."""
        defs = self.defs.get(token, ())
        k = bisect.bisect_left(defs, line)       # (a filtered copy per use was quadratic in the PTX)
        if not k:
            raise Unknown(f"{token} has no definition above line {line}")
        at = defs[k - 1]
        op, args, _, _ = self.insns[at]
        if op.startswith("setp"):
            return bool(self.value(token, line, env, cache))
        p = lambda i: self.predicate(args[i], at, env, cache)  # noqa: E731
        if op.startswith("and.pred"):
            return p(1) and p(2)
        if op.startswith("or.pred"):
            return p(1) or p(2)
        if op.startswith("not.pred"):
            return not p(1)
        if op.startswith("mov.pred"):
            return p(1)
        raise Unknown(f"line {at}: predicate from {op}")


def _split_args(text: str) -> list[str]:
    """`{ %r1, %r2 }, [ %rd1 + 0 ]` -> ['{ %r1, %r2 }', '[ %rd1 + 0 ]'] (commas in braces kept)."""
    parts = split_top(text, ",", "{[", "}]", quotes="")
    if not parts[-1].strip():
        parts.pop()
    return parts


def estimate(ptx: str, params: list[str], values: dict | None = None, ctaid: tuple[int, int, int] = (1, 1, 0),
             threads: int | None = None) -> KernelEstimate:
    """Sectors and efficiency of every global load/store in `ptx` for one program.

    `params`: names of the kernel's non-constexpr arguments in order (pointer or not;
    parameters the PTX has beyond them, Triton's scratch pointers, read as 0).
    `values`: name -> int for the integer arguments of the launch (sizes, strides);
    pointers get `(i + 1) · 2^36`. `threads`: threads per program (`.reqntid` if None)."""
    values = dict(values or {})
    if threads is None:
        m = _NTID_RE.search(ptx)
        threads = int(m.group(1)) if m else 128
    pointer_params = _pointer_params(ptx)
    param_values, bases = {}, {}
    for i, name in enumerate(params):
        if i in pointer_params:
            param_values[i] = bases[name] = (i + 1) * POINTER_BASE
        else:
            param_values[i] = int(values.get(name, 0))
    missing = [p for i, p in enumerate(params) if i not in pointer_params and p not in values]
    notes = [f"no value given for {', '.join(missing)}: taken as 0"] if missing else []
    program = _Program(ptx, param_values)
    out = []
    for op in ptx_memops(ptx):
        if op.space != "global" or op.text.lstrip("@%p0123456789! ").startswith(("cp.async.bulk",)):
            continue
        out.append(_access(program, op, bases, threads, ctaid))
    return KernelEstimate(tuple(out), threads, tuple(notes), dict(values))


def _pointer_params(ptx: str) -> set[int]:
    """`.param .u64 .ptr .global .align 1 k_param_0` -> 0 (Triton marks pointers `.ptr`;
    older PTX has plain `.param .u64 k_param_0`: every .u64 counts as a pointer)."""
    out = set()
    for m in re.finditer(r"\.param\s+\.(?P<t>[ubs]64)(?P<rest>[^,)\n]*)_param_(?P<i>\d+)", ptx):
        out.add(int(m["i"]))
    return out


def _access(program: _Program, op, bases: dict, threads: int, ctaid) -> AccessEstimate:
    insn = program.insns.get(op.line)
    brackets = list(_ADDR_RE.finditer(op.text))
    is_cp_async = op.text.lstrip("@%p0123456789! ").startswith("cp.async")
    width = op.vector * op.bits // 8
    if insn is None or not brackets:
        return AccessEstimate(op.line, op.kind, op.text, op.vector, op.bits, None, (), "address not found")
    m = brackets[1] if is_cp_async and len(brackets) > 1 else brackets[0]
    _, _, guard, negated = insn
    warps, pointer, error = [], None, ""
    try:
        for warp in range(max(threads // WARP, 1)):
            offsets = []
            for lane in range(WARP):
                tid = warp * WARP + lane
                env = {"tid.x": tid, "tid.y": 0, "tid.z": 0, "ctaid.x": ctaid[0], "ctaid.y": ctaid[1],
                       "ctaid.z": ctaid[2], "ntid.x": threads, "ntid.y": 1, "ntid.z": 1,
                       "nctaid.x": 1024, "nctaid.y": 1024, "nctaid.z": 1}
                cache: dict = {}
                if guard and program.predicate(guard, op.line, env, cache) == negated:
                    offsets.append(None)
                    continue
                address = program.value(m["reg"], op.line, env, cache) + int(m["off"] or 0)
                name, base = _base_of(address, bases)
                pointer = pointer or name
                offsets.append(address - base)
            active = [o for o in offsets if o is not None]
            sectors = {s for o in active for s in _sectors(o, width)}
            warps.append(WarpAccess(warp, len(active), len(active) * width, len(sectors), tuple(offsets)))
    except Unknown as e:
        warps, error = [], str(e)
    return AccessEstimate(op.line, op.kind, op.text, op.vector, op.bits, pointer, tuple(warps), error)


def _base_of(address: int, bases: dict) -> tuple[str | None, int]:
    best = (None, 0)
    for name, base in bases.items():
        if base <= address and base >= best[1]:
            best = (name, base)
    return best


def describe(a: AccessEstimate) -> str:
    """One sentence for the lesson, e.g. `each warp asks for 512 bytes (32 lanes × 16 B)
    in 16 sectors of 32 B: 100 % of what is fetched is used`."""
    if a.error:
        return f"no estimate: {a.error}"
    if not a.requests:
        return "no lane of any warp executes it (masked off for this launch)"
    w = next(w for w in a.warps if w.active_lanes)
    width = a.vector * a.bits // 8
    stride = a.lane_stride
    gap = "" if stride is None else (
        " — neighbouring lanes are contiguous" if stride == width else
        " — every lane reads the same address" if stride == 0 else
        f" — neighbouring lanes are {stride:,} bytes apart")
    return (f"each warp asks for {w.bytes_requested:,} bytes ({w.active_lanes} lane{'s' if w.active_lanes != 1 else ''}"
            f" × {width} B) in {a.sectors_per_request:g} sector{'s' if a.sectors_per_request != 1 else ''} of 32 B: "
            f"{100 * a.efficiency:.1f} % of what is fetched is used{gap}")


def ideal_sectors(bytes_requested: int) -> int:
    """The fewest 32-byte sectors that can hold `bytes_requested` contiguous bytes."""
    return max(1, math.ceil(bytes_requested / SECTOR))
