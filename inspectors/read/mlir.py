"""A small reader for Triton's MLIR (TTIR/TTGIR) text: function arguments with their
specialization attributes, and ops as SSA definitions. Enough to follow a `tt.load`
back to the arguments its pointer, offsets and mask come from. Pure: text in, data out."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from inspectors.base.result import ArgSpec
from inspectors.read.brackets import matching, split_top

# tt.func public @add_kernel(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("x_ptr"(#loc)), %n: i32 loc(...))
_FUNC_RE = re.compile(r"^\s*tt\.func\s+(?:public\s+|private\s+)?@(?P<name>[\w.$]+)\((?P<args>.*)\)")
# %x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}      %arg3: i32
_ARG_RE = re.compile(r"%(?P<name>[\w.$]+): (?P<type>!tt\.ptr<[^>]+>|[\w]+)(?: \{(?P<attrs>[^}]*)\})?")
# %v_9 = tt.load %v_8, %mask_5 : tensor<1024x!tt.ptr<f32>> loc(#loc18)
# tt.store %1, %v_9, %mask_5 : tensor<1024x!tt.ptr<f32>> loc(#loc8)
_OP_RE = re.compile(r"^\s*(?:(?P<results>%[\w.$#:]+(?:, %[\w.$#:]+)*) = )?(?P<op>[a-z_]+\.[\w.]+)(?P<rest>.*)$")
_VALUE_RE = re.compile(r"%[\w.$]+")
# (starts only where a run of blanks starts: from inside a long run, `\s+` rescanned it: quadratic)
_LOC_TAIL_RE = re.compile(r"(?<!\s)\s+loc\((?:[^()]|\([^()]*\))*\)\s*$")
# #blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
_ALIAS_RE = re.compile(r"^(?P<alias>#[\w.$]+) = (?P<value>#ttg\.\w+<.*>)\s*$")


@dataclass(frozen=True)
class Arg:
    name: str
    type: str            # "!tt.ptr<f32>", "i32"
    divisibility: int    # from {tt.divisibility = 16 : i32}, else 1

    @property
    def is_pointer(self) -> bool:
        return self.type.startswith("!tt.ptr")


@dataclass(frozen=True)
class Op:
    line: int                       # 1-based
    name: str                       # "tt.load"
    results: tuple[str, ...]        # ("%v_9",)
    operands: tuple[str, ...]       # ("%v_8", "%mask_5")
    type: str                       # text after the last " : " (result/operand types)
    text: str


@dataclass(frozen=True)
class Module:
    args: dict[str, Arg]            # "%x_ptr" -> Arg
    ops: tuple[Op, ...]
    defs: dict[str, Op]             # SSA value -> defining op
    aliases: dict[str, str]         # "#blocked" -> "#ttg.blocked<{...}>"

    def ops_named(self, *names: str) -> tuple[Op, ...]:
        return tuple(o for o in self.ops if o.name in names)


@functools.lru_cache(maxsize=4)       # a kernel's analysis reads its TTGIR's module three times (read-only)
def parse(text: str) -> Module:
    args: dict[str, Arg] = {}
    ops: list[Op] = []
    aliases: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if a := _ALIAS_RE.match(line):
            aliases[a["alias"]] = a["value"]
            continue
        if f := _FUNC_RE.match(line):
            for m in _ARG_RE.finditer(f["args"]):
                div = re.search(r"tt\.divisibility = (\d+)", m["attrs"] or "")
                args["%" + m["name"]] = Arg(m["name"], m["type"], int(div.group(1)) if div else 1)
            continue
        m = _OP_RE.match(line)
        if not m:
            continue
        rest = m["rest"]
        if rest.rstrip().endswith(")"):        # `loc(` without a `)` at the end: not rescanned per `loc(`
            rest = _LOC_TAIL_RE.sub("", rest)
        body, _, ty = rest.rpartition(" : ") if " : " in rest else (rest, "", "")
        results = tuple(r.split(":")[0].split("#")[0] for r in (m["results"] or "").split(", ") if r)
        ops.append(Op(n, m["op"], results, tuple(_VALUE_RE.findall(body)), ty.strip(), line.strip()))
    defs = {r: op for op in ops for r in op.results}
    return Module(args, tuple(ops), defs, aliases)


def roots(module: Module, value: str, limit: int = 200) -> tuple[set[str], list[Op]]:
    """Every function argument `value` is computed from, and the ops on the way."""
    seen, found, path = set(), set(), []
    stack = [value]
    while stack and len(seen) < limit:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in module.args:
            found.add(v)
        elif v in module.defs:
            op = module.defs[v]
            path.append(op)
            stack.extend(op.operands)
    return found, path


# ------------------------------------------------------------------------------ the signature

# The kernel's signature in TTIR, e.g.
#   tt.func public @add_kernel(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc(...), %n: i32 loc(...))
_SIG_FUNC_RE = re.compile(r"tt\.func (?:public )?@(?P<name>[\w$.]+)\(")
_SIG_ARG_RE = re.compile(r"^\s*%(?P<name>[\w$.-]+)\s*:\s*(?P<type>!tt\.ptr<[^>]+>|[\w.]+)(?P<rest>.*)$", re.S)
_MLIR_TYPES = {"f32": "fp32", "f16": "fp16", "bf16": "bf16", "f64": "fp64", "f8E4M3FN": "fp8e4nv",
               "f8E5M2": "fp8e5", "f8E4M3FNUZ": "fp8e4b8", "f8E5M2FNUZ": "fp8e5b16"}


def parse_ttir_args(ttir: str, name: str = "") -> tuple[ArgSpec, ...]:
    """The kernel's arguments from its TTIR signature (constexprs are baked in, so absent):
    `%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}` -> ArgSpec("x_ptr", "*fp32", True)."""
    for m in _SIG_FUNC_RE.finditer(ttir):
        if name and m["name"] != name:
            continue
        body = _balanced(ttir, m.end() - 1)
        args = []
        for part in split_top(body):
            a = _SIG_ARG_RE.match(part)
            if not a:
                continue
            ty = a["type"]
            if ty.startswith("!tt.ptr<"):
                inner = ty[len("!tt.ptr<"):-1].split(",")[0].strip()
                ty = "*" + _MLIR_TYPES.get(inner, inner)
            else:
                ty = _MLIR_TYPES.get(ty, ty)
            args.append(ArgSpec(a["name"], ty, divisible_by_16="tt.divisibility = 16" in a["rest"]))
        return tuple(args)
    return ()


def _balanced(text: str, open_at: int) -> str:
    """The text inside the parenthesis at `open_at`, nested brackets and strings respected."""
    end = matching(text, open_at)
    return text[open_at + 1:end] if end >= 0 else text[open_at + 1:]
