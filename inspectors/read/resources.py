"""Per-kernel resources (registers, spills, shared/local memory) and the occupancy they
allow, from a compiled kernel. Parsers are pure (text in, frozen dataclasses out);
`resource_usage` runs the tools of the triton wheel, found without importing triton.

What the tools print, for Triton's vector add on sm_90:

`cuobjdump -res-usage add_kernel.cubin` (only reads the cubin: cheap)::

    Resource usage:
     Common:
      GLOBAL:0
     Function add_kernel:
      REG:26 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:576 TEXTURE:0 SURFACE:0 SAMPLER:0

`ptxas -v` on the PTX, with the flags Triton's `make_cubin` uses (a full recompile, costliest
on the big kernels that spill, so it runs only when the cubin has local memory; the figures,
and nvdisasm's: docs/09-benchmark-results.md#figures-behind-design-choices)::

    ptxas-blackwell info    : 0 bytes gmem
    ptxas-blackwell info    : Compiling entry function 'add_kernel' for 'sm_90a'
    ptxas-blackwell info    : Function properties for add_kernel
        0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas-blackwell info    : Used 26 registers, used 0 barriers
    ptxas-blackwell info    : Compile time = 4.149 ms

Shared memory. Triton declares all its shared memory as one dynamic buffer
(`.extern .shared .align 16 .b8 global_smem[];`), sized at launch from
`metadata["shared"]`, so the cubin's SHARED does not contain it: the matmul's 96 KiB
are only in the metadata. Yet on sm_90 (ptxas 13.x) a kernel that uses shared memory
shows SHARED:1024: its `.nv.shared.<kernel>` section holds the 1 KB the driver
reserves per block, placed in the kernel's window (the cubin also has a
`.nv.shared.reserved.0` section, and the dynamic buffer starts at 0x400 in the SASS).
The driver does not count that 1 KB as the kernel's: on an H100 (driver 580),
cuFuncGetAttribute(SHARED_SIZE_BYTES) is 0 for the matmul and softmax cubins, and
cuOccupancyMaxActiveBlocksPerMultiprocessor matches `occupancy()` at every block size
and dynamic size tried only when the 1 KB is left out (the check's figures:
docs/09-benchmark-results.md#figures-behind-design-choices). So `Resources` reports SHARED as
`static_shared_bytes`, the reserve inside it as `reserved_shared_bytes`, Triton's dynamic bytes as
`dynamic_shared_bytes`, and `shared_bytes` = static - reserved + dynamic: what the
driver counts for the kernel; `occupancy()` then adds the 1 KB reserve per block, as
NVIDIA's calculator does, so it is counted once.

Spills happen in ptxas, after the PTX: the PTX of a spilling Triton kernel has no
`ld.local`/`st.local` at all, the SASS has `STL`/`LDL` to the stack frame (STACK in
cuobjdump; LOCAL stays 0). The byte sums of those SASS instructions equal the
"bytes spill stores / loads" of ptxas -v on the three spilling kernels tried (sm_90
and sm_80), so they are the fallback when there is no PTX to recompile.
"""
from __future__ import annotations

import os
import shutil
import re
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from inspectors.read.occupancy import (  # noqa: F401 - re-exported: resources.occupancy(...)
    KB, LIMITERS, Occupancy, SM_LIMITS, SmLimits, occupancy, sm_limits)
from inspectors.process import sandbox
from inspectors.base import triton_support
from inspectors.read.sass import disassemble, nvidia_tool

# --------------------------------------------------------------------------- PTX registers

# `.reg .b32 %r<39>;` declares %r0..%r38 (39 names). LLVM's NVPTX backend numbers
# from 1 and never uses %r0 (checked on every fixture: the highest %rN used is 38),
# so N-1 is the number of virtual registers the kernel uses. Matches, e.g.:
#   \t.reg .pred \t%p<3>;     \t.reg .b64 \t%rd<11>;     \t.reg .f32 \t%f<9>;
_PTX_REG_RE = re.compile(r"^\s*\.reg\s+\.(?P<type>\w+)\s+%(?P<name>\w+?)<(?P<n>\d+)>\s*;")


@dataclass(frozen=True)
class PtxRegisters:
    """Virtual registers the PTX declares, by type. These are *not* hardware registers:
    ptxas allocates those (see `Resources.registers`); a kernel with 489 %r names may
    use 185 registers."""
    by_type: dict[str, int]      # {"b32": 32, "pred": 2, "b64": 10}: N-1 for `%r<N>`
    lines: tuple[int, ...]       # 1-based lines of the `.reg` declarations

    @property
    def total(self) -> int:
        return sum(self.by_type.values())


def ptx_registers(ptx: str) -> PtxRegisters:
    """The `.reg` declarations of the PTX, e.g. for Triton's vector add::

        \t.reg .pred \t%p<3>;
        \t.reg .b32 \t%r<33>;
        \t.reg .b64 \t%rd<11>;

    -> by_type {"pred": 2, "b32": 32, "b64": 10}. Several kernels in one PTX are
    summed per type.
    """
    by_type: dict[str, int] = {}
    lines = []
    for n, line in enumerate(ptx.splitlines(), 1):
        m = _PTX_REG_RE.match(line)
        if m:
            by_type[m["type"]] = by_type.get(m["type"], 0) + max(int(m["n"]) - 1, 0)
            lines.append(n)
    return PtxRegisters(by_type, tuple(lines))


# --------------------------------------------------------------------------- cuobjdump

# ` Function add_kernel:` then, on the next line,
# `  REG:26 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:576 TEXTURE:0 SURFACE:0 SAMPLER:0`
_RES_FUNC_RE = re.compile(r"^\s*Function\s+(?P<name>[^\s:]+)\s*:\s*$")
_RES_FIELD_RE = re.compile(r"(?P<key>[A-Z]+)(?:\[(?P<bank>\d+)\])?:(?P<value>\d+)")
_RES_KEYS = {"REG": "registers", "STACK": "stack_bytes", "SHARED": "shared_bytes",
             "LOCAL": "local_bytes", "TEXTURE": "textures", "SURFACE": "surfaces",
             "SAMPLER": "samplers"}


def parse_res_usage(text: str, kernel: str | None = None) -> dict:
    """One function of `cuobjdump -res-usage` output (format in the module docstring):

    {"kernel": "add_kernel", "registers": 26, "stack_bytes": 0, "shared_bytes": 0,
     "local_bytes": 0, "constant_bytes": {0: 576}, "textures": 0, "surfaces": 0,
     "samplers": 0}

    `kernel` picks a function by name; None takes the first (a Triton cubin has one).
    Raises ValueError when there is no such function.
    """
    found: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        m = _RES_FUNC_RE.match(line)
        if m:
            current = m["name"]
            continue
        if current is not None and "REG:" in line:
            d = {"kernel": current, "constant_bytes": {}}
            for f in _RES_FIELD_RE.finditer(line):
                if f["key"] == "CONSTANT":
                    d["constant_bytes"][int(f["bank"] or 0)] = int(f["value"])
                elif f["key"] in _RES_KEYS:
                    d[_RES_KEYS[f["key"]]] = int(f["value"])
            found.setdefault(current, d)
            current = None
    if not found:
        raise ValueError("no `Function <name>:` with resource usage in the cuobjdump output")
    if kernel is None:
        return next(iter(found.values()))
    if kernel not in found:
        raise ValueError(f"no function {kernel!r} in the cuobjdump output (has: {', '.join(found)})")
    return found[kernel]


# --------------------------------------------------------------------------- ptxas -v

# `ptxas info    : Compiling entry function 'matmul_kernel' for 'sm_80'`
#  (the tool may be named `ptxas-blackwell info    : ...`)
_PTXAS_ENTRY_RE = re.compile(r"Compiling entry function '(?P<name>[^']+)' for '(?P<arch>\w+)'")
# `ptxas info    : Function properties for matmul_kernel`
_PTXAS_PROPS_RE = re.compile(r"Function properties for (?P<name>\S+)")
# `    528 bytes stack frame, 524 bytes spill stores, 652 bytes spill loads`
_PTXAS_FRAME_RE = re.compile(r"(?P<frame>\d+) bytes stack frame, (?P<stores>\d+) bytes spill stores, "
                             r"(?P<loads>\d+) bytes spill loads")
# `ptxas info    : Used 185 registers, used 1 barriers, 416 bytes cmem[0]`
# `ptxas info    : Used 255 registers, used 0 barriers, 528 bytes cumulative stack size`
# `ptxas info    : Used 40 registers, 4224 bytes smem, 400 bytes cmem[0]`   (static __shared__)
_PTXAS_USED_RE = re.compile(r"Used (?P<regs>\d+) registers(?P<rest>.*)$")
_PTXAS_BARRIERS_RE = re.compile(r"used (\d+) barriers")
_PTXAS_SMEM_RE = re.compile(r"(\d+) bytes smem")
_PTXAS_CMEM_RE = re.compile(r"(\d+) bytes cmem\[(\d+)\]")
_PTXAS_CSTACK_RE = re.compile(r"(\d+) bytes cumulative stack size")


def parse_ptxas_log(text: str) -> dict:
    """The first entry function of a `ptxas -v` log (format in the module docstring):

    {"kernel": "row_softmax_kernel", "arch": "sm_90a", "registers": 32, "barriers": 0,
     "stack_frame": 96, "spill_stores": 112, "spill_loads": 164, "cumulative_stack": 96,
     "smem": 0, "cmem": {}}

    Raises ValueError when the log has no `Used N registers` line.
    """
    entries: dict[str, dict] = {}
    props: dict[str, dict] = {}
    entry = None
    pending_props = None
    for line in text.splitlines():
        if m := _PTXAS_ENTRY_RE.search(line):
            entry = m["name"]
            entries.setdefault(entry, {"kernel": entry, "arch": m["arch"]})
        elif m := _PTXAS_PROPS_RE.search(line):
            pending_props = m["name"]
        elif (m := _PTXAS_FRAME_RE.search(line)) and pending_props:
            props[pending_props] = {"stack_frame": int(m["frame"]), "spill_stores": int(m["stores"]),
                                    "spill_loads": int(m["loads"])}
            pending_props = None
        elif (m := _PTXAS_USED_RE.search(line)) and entry:
            rest = m["rest"]
            bar, smem, cstack = (_PTXAS_BARRIERS_RE.search(rest), _PTXAS_SMEM_RE.search(rest),
                                 _PTXAS_CSTACK_RE.search(rest))
            entries[entry].update(
                registers=int(m["regs"]),
                barriers=int(bar.group(1)) if bar else 0,
                smem=int(smem.group(1)) if smem else 0,
                cumulative_stack=int(cstack.group(1)) if cstack else 0,
                cmem={int(bank): int(n) for n, bank in _PTXAS_CMEM_RE.findall(rest)})
    for name, d in entries.items():
        if "registers" in d:
            out = {"stack_frame": 0, "spill_stores": 0, "spill_loads": 0}
            out.update(d)
            out.update(props.get(name, {}))
            return out
    raise ValueError("no `Used N registers` line in the ptxas log")


# --------------------------------------------------------------------------- local traffic

# PTX local memory (LLVM allocas, not spills):  `ld.local.b32 %r5, [%rd3];`  `st.local.v2.f32 [...]`
_PTX_LOCAL_RE = re.compile(r"^\s*(?:@!?%p\d+\s+)?(?P<op>ld|st)\.local\b")
# SASS:  `/*0980*/   STL [R1+0x174], R56 ;`  `/*0bf0*/   STL.64 [R1], R84 ;`  `@P0 LDL.LU.128 R4, [R1+0x10] ;`
_SASS_LOCAL_RE = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?(?P<op>LDL|STL)(?P<mods>(?:\.\w+)*)\s")
_SASS_WIDTH = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "64": 8, "128": 16}


@dataclass(frozen=True)
class LocalTraffic:
    """Local-memory instructions: `loads`/`stores` count instructions, the `*_bytes`
    sum their widths (for SASS: equal to ptxas' spill bytes when the PTX has no local
    arrays, since every STL/LDL is then a spill or a refill)."""
    loads: int = 0
    stores: int = 0
    load_bytes: int = 0
    store_bytes: int = 0
    lines: tuple[int, ...] = ()


def ptx_local_traffic(ptx: str) -> LocalTraffic:
    """`ld.local` / `st.local` in PTX (local arrays the front end made; spills are not
    in the PTX). Byte sums are left 0 here; only the counts are used."""
    loads = stores = 0
    lines = []
    for n, line in enumerate(ptx.splitlines(), 1):
        m = _PTX_LOCAL_RE.match(line)
        if m:
            loads += m["op"] == "ld"
            stores += m["op"] == "st"
            lines.append(n)
    return LocalTraffic(loads, stores, 0, 0, tuple(lines))


def sass_local_traffic(sass: str) -> LocalTraffic:
    """`LDL` / `STL` in SASS text (nvdisasm), with their widths (default 32-bit)."""
    loads = stores = load_bytes = store_bytes = 0
    lines = []
    for n, line in enumerate(sass.splitlines(), 1):
        m = _SASS_LOCAL_RE.match(line)
        if not m:
            continue
        width = 4
        for mod in m["mods"].split(".")[1:]:
            width = _SASS_WIDTH.get(mod, width)
        if m["op"] == "LDL":
            loads, load_bytes = loads + 1, load_bytes + width
        else:
            stores, store_bytes = stores + 1, store_bytes + width
        lines.append(n)
    return LocalTraffic(loads, stores, load_bytes, store_bytes, tuple(lines))


# --------------------------------------------------------------------------- cubin sections

def cubin_sections(cubin: bytes) -> dict[str, int]:
    """Section name -> size of a cubin (64-bit little-endian ELF), {} for anything
    else. E.g. an sm_90 matmul: {".text.matmul_kernel": 10368, ".nv.shared.matmul_kernel":
    1024, ".nv.shared.reserved.0": 0, ...}."""
    try:
        if cubin[:4] != b"\x7fELF" or cubin[4] != 2 or cubin[5] != 1:
            return {}
        shoff, = struct.unpack_from("<Q", cubin, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
        # Elf64_Shdr: name, type (I I), flags, addr, offset, size (Q Q Q Q), ...
        headers = [struct.unpack_from("<IIQQQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
        strtab = headers[shstrndx][4]
        out = {}
        for name_off, _type, _flags, _addr, _offset, size in headers:
            start = strtab + name_off
            out[cubin[start:cubin.index(b"\0", start)].decode("ascii", "replace")] = size
        return out
    except (struct.error, IndexError, ValueError):
        return {}


# The driver's shared memory reserve per block (sm_80 and later; see SM_LIMITS).
RESERVED_SHARED = 1024


def reserved_in_static_shared(cubin: bytes, static_shared: int) -> int:
    """How much of the cubin's SHARED is the driver's per-block reserve that ptxas laid
    out in the kernel's window (see the module docstring): 1024 (or less, if SHARED is
    smaller) when the cubin has a `.nv.shared.reserved.*` section, else 0."""
    if any(name.startswith(".nv.shared.reserved") for name in cubin_sections(cubin)):
        return min(static_shared, RESERVED_SHARED)
    return 0


# --------------------------------------------------------------------------- running the tools

@dataclass(frozen=True)
class Resources:
    registers: int               # per thread, from the cubin (cuobjdump REG)
    spills: int                  # bytes of spill stores (0 if none)
    spill_loads: int             # bytes of spill loads
    shared_bytes: int            # per CTA, as the driver counts it: static - reserved + dynamic
    local_bytes: int             # LOCAL from cuobjdump (local arrays; spills go to the stack)
    stack_bytes: int             # STACK from cuobjdump: the per-thread stack frame, spill slots included
    source: str                  # where the spill numbers came from, see resource_usage
    static_shared_bytes: int = 0     # SHARED in the cubin
    reserved_shared_bytes: int = 0   # the driver's 1 KB reserve inside SHARED (sm_90, ptxas 13)
    dynamic_shared_bytes: int = 0    # metadata["shared"]: Triton's extern global_smem
    kernel: str = ""
    ptxas_registers: int | None = None   # from ptxas -v, when it ran (equal to `registers` so far)


# PTX `.target sm_90a` -> 90
_PTX_TARGET_RE = re.compile(r"^\s*\.target\s+sm_(\d+)", re.M)


def ptxas_for(arch: int, triton_version: str | None = None):
    """The ptxas Triton's `get_ptxas(arch)` runs (the installed Triton's, unless
    `triton_version` names another): `ptxas-blackwell` (the wheel's newer CUDA) from sm_90
    on in 3.9, from sm_100 on in 3.6-3.8, `ptxas` below (inspectors.base.triton_support);
    None when the wheel has neither."""
    name = triton_support.ptxas_tool(arch, triton_version)
    return nvidia_tool(name) or (nvidia_tool("ptxas") if name != "ptxas" else None)


def ptxas_command(ptxas, ptx_path: str, arch: int, out_path: str = os.devnull,
                  fmad: bool = True, triton_version: str | None = None) -> list[str]:
    """Triton's `make_cubin` command line (default knobs) for the installed Triton (or
    `triton_version`): `-lineinfo`, `--fmad=false` when `enable_fp_fusion` is off, `-v`,
    `--regAllocOptLevel=2` (3.7 and later), `--gpu-name=sm_90a` ("a" from sm_90 on). The
    same flags give a cubin byte-identical to Triton's (tests/unit/test_resources.py checks it
    on a fresh compile with each version)."""
    gpu = f"sm_{arch}{'a' if arch >= 90 else ''}"
    return [str(ptxas), "-lineinfo", *([] if fmad else ["--fmad=false"]), "-v",
            *triton_support.ptxas_extra_flags(triton_version), f"--gpu-name={gpu}", ptx_path, "-o", out_path]


def run_ptxas(ptx: str, arch: int | None = None, fmad: bool = True, timeout: float = 120) -> str:
    """ptxas -v on the PTX as Triton runs it; returns the log (stderr). Raises
    FileNotFoundError without ptxas, RuntimeError when ptxas fails."""
    if arch is None:
        m = _PTX_TARGET_RE.search(ptx)
        if not m:
            raise ValueError("no `.target sm_N` in the PTX and no arch given")
        arch = int(m.group(1))
    ptxas = ptxas_for(arch)
    if ptxas is None:
        raise FileNotFoundError("ptxas is not in this triton wheel")
    folder = Path(tempfile.mkdtemp(prefix="tlens-ptxas-"))
    try:
        path = folder / "kernel.ptx"
        path.write_text(ptx)
        argv = ptxas_command(ptxas, str(path), arch, fmad=fmad, out_path=str(folder / "kernel.cubin"))
        proc = subprocess.run(sandbox.tool_argv(argv, folder), capture_output=True, text=True, timeout=timeout,
                              env=sandbox.popen_env())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if proc.returncode != 0:
        raise RuntimeError(f"ptxas failed: {proc.stderr.strip()[-2000:]}")
    return proc.stderr + proc.stdout


def run_res_usage(cubin: bytes, timeout: float = 60) -> str:
    """`cuobjdump -res-usage` on the cubin; FileNotFoundError without cuobjdump."""
    tool = nvidia_tool("cuobjdump")
    if tool is None:
        raise FileNotFoundError("cuobjdump is not in this triton wheel")
    folder = Path(tempfile.mkdtemp(prefix="tlens-res-"))
    try:
        path = folder / "kernel.cubin"
        path.write_bytes(cubin)
        proc = subprocess.run(sandbox.tool_argv([str(tool), "-res-usage", str(path)], folder), capture_output=True,
                              text=True, timeout=timeout, env=sandbox.popen_env())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if proc.returncode != 0:
        raise RuntimeError(f"cuobjdump failed: {proc.stderr.strip()}")
    return proc.stdout


def resource_usage(cubin: bytes, dynamic_shared: int = 0, ptx: str | None = None, arch: int | None = None,
                   sass: str | None = None, kernel: str | None = None, fmad: bool = True,
                   ptxas_log: str = "") -> Resources:
    """Registers, stack, local and static shared memory from `cuobjdump -res-usage`
    (always), and spill bytes from, in order of preference:

    * `ptxas -v` on `ptx` with Triton's flags (source "cuobjdump -res-usage + ptxas -v"),
      only when the cubin has a stack frame or local memory (spills live there): the log
      Triton's own ptxas wrote when it made this cubin (`ptxas_log`, kept by the worker's
      compile), else ptxas run again;
      `arch` defaults to the PTX's `.target`; pass fmad=False for kernels compiled with
      enable_fp_fusion=False;
    * the STL/LDL widths in `sass`, or in the cubin disassembled here when the stack
      frame is not empty ("... + SASS STL/LDL"): counts local arrays too;
    * nothing, when STACK and LOCAL are 0: no local memory means no spills
      ("cuobjdump -res-usage").

    `dynamic_shared` is Triton's `metadata["shared"]`; `shared_bytes` leaves out the
    driver's reserve that sm_90 cubins show in SHARED (module docstring), so that
    `occupancy(arch, r.registers, r.shared_bytes, num_warps)` counts it once. Raises
    FileNotFoundError when the wheel has no cuobjdump.
    """
    res = parse_res_usage(run_res_usage(cubin), kernel)
    static = res.get("shared_bytes", 0)
    stack, local = res.get("stack_bytes", 0), res.get("local_bytes", 0)
    spills = spill_loads = 0
    ptxas_regs = None
    source = "cuobjdump -res-usage"
    log = None
    if ptx is not None and (stack or local):     # no local memory, no spills: skip ptxas (a full recompile)
        try:
            log = parse_ptxas_log(ptxas_log)
        except ValueError:
            try:
                log = parse_ptxas_log(run_ptxas(ptx, arch, fmad=fmad))
            except (FileNotFoundError, RuntimeError, ValueError, subprocess.TimeoutExpired):
                log = None     # no ptxas, or it failed: fall back to the SASS
    if log is not None:
        spills, spill_loads, ptxas_regs = log["spill_stores"], log["spill_loads"], log["registers"]
        source += " + ptxas -v"
    elif sass is not None or stack or local:
        traffic = sass_local_traffic(sass if sass is not None else disassemble(cubin))
        spills, spill_loads = traffic.store_bytes, traffic.load_bytes
        source += " + SASS STL/LDL"
    reserved = reserved_in_static_shared(cubin, static)
    return Resources(registers=res["registers"], spills=spills, spill_loads=spill_loads,
                     shared_bytes=static - reserved + dynamic_shared, local_bytes=local, stack_bytes=stack,
                     source=source, static_shared_bytes=static, reserved_shared_bytes=reserved,
                     dynamic_shared_bytes=dynamic_shared, kernel=res["kernel"], ptxas_registers=ptxas_regs)
