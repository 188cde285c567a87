"""Drivers that call a library's ops (tests/snippets/liger/), a real autotuner, a TMA matmul
and a Gluon kernel: is what the CPU-side compile shows for cuda:90 what the JIT really
compiles when example() runs on a GPU? (not a test: it prints a comparison)

Two halves, the same Triton on both sides (the GPU machine's is 3.6.0: run the first half
with `make setup-oldest`'s .venv-oldest):

    # here, no GPU: every launch compiled by the worker, as the app does
    .venv-oldest/bin/python benchmarks/gpu_drivers.py --cpu benchmarks/results/drivers_cpu.json
    # on the GPU machine (liger-kernel's wheel carried in .whl/): example() run for real, the
    # JIT's own kernels read from its caches, compared kernel by kernel
    python3 benchmarks/gpu_drivers.py --gpu benchmarks/results/drivers_cpu.json
    # without GPU time: a CPU side's kernel names against the GPU runs recorded in
    # benchmarks/results/gpu_drivers.txt (benchmarks/results/drivers_names.txt)
    python3 benchmarks/gpu_drivers.py --names benchmarks/results/drivers_cpu.json

Per launch: the kernel's name, num_warps, num_stages and its PTX. The PTX is compared with the
`.file` lines reduced to the file's base name and without the DWARF sections after the code
(they spell the folders the files were installed in, which differ between the machines).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRIVERS = sorted((ROOT / "tests" / "snippets" / "liger").glob("*.py")) + [
    ROOT / "tests" / "snippets" / "autotune_prune.py",
    ROOT / "tests" / "snippets" / "line_info_off.py",      # TRITON_DISABLE_LINE_INFO at import (unsloth's)
    ROOT / "tests" / "snippets" / "modern" / "gluon_softmax.py",    # @gluon.jit, its layout from the host
    # the Hopper lesson's three steps: cp.async, TMA loads and store, and the warp_specialize loop as sm_90
    # compiles it
    *(ROOT / "assets" / "lessons" / "hopper" / f"{name}_matmul.py" for name in ("ptr", "tma", "ws")),
    # torch.compile: a block's inference, forward and backward graphs; FlexAttention's template
    *sorted((ROOT / "tests" / "snippets" / "compiled").glob("*.py")),
    # library ops of many launches (benchmarks/library_ops.py): fla probes the GPU at import and
    # sizes its autotune spaces by it; torchao's kernels are torch.library triton_ops
    ROOT / "tests" / "snippets" / "training" / "import_probe.py",
    ROOT / "tests" / "snippets" / "training" / "cce_linear_loss.py",    # cut-cross-entropy (issue 55)
    ROOT / "benchmarks" / "drivers" / "fla_chunk_gla.py",
    ROOT / "benchmarks" / "drivers" / "fla_gated_deltanet.py",     # a GatedDeltaNet layer's step (issue 55)
    ROOT / "benchmarks" / "drivers" / "torchao_fp8_gemm.py",
    # gemlite asks the GPU's count and name at import (its autotune cache by name)
    ROOT / "benchmarks" / "drivers" / "gemlite_a16w8.py",
    # torch.compile features and training-loop habits as users write them, tried on both torch builds (issue 55)
    *sorted((ROOT / "benchmarks" / "drivers" / "features").glob("*.py")),
    # eight Hugging Face models' compiled steps or decoding, two a file: each file's two sides fit one call (issue 55)
    *sorted((ROOT / "benchmarks" / "drivers" / "hf_zoo").glob("*.py")),
]
LISTED = 12        # a driver with more kernels prints its mismatches and a count

_ASSERT_FILE_RE = re.compile(r"(\.global \.align 1 \.b8 assertFile_\d+)\[\d+\] = \{([\d, ]+)\}")
_FILE_RE = re.compile(r'^(\s*\.file\s+\d+\s+)"(?:[^"]*/)?([^"/]*)"(.*)$', re.M)


def _key(path: Path) -> str:
    """A driver's name in the CPU side's JSON: its path in the repository (two are tma_matmul.py)."""
    return path.relative_to(ROOT).as_posix()


def _assert_file(m: re.Match) -> str:
    path = bytes(int(b) for b in m[2].split(",")).rstrip(b"\0").decode("utf-8", "replace")
    return f'{m[1]} = "{path.rsplit("/", 1)[-1]}"'


def normalized_ptx(ptx: str) -> str:
    cut = ptx.find("\t.section\t.debug")
    if cut < 0:
        cut = ptx.find(".section .debug")
    body = ptx[:cut] if cut >= 0 else ptx
    body = _FILE_RE.sub(lambda m: f'{m[1]}"{m[2]}"', body)
    # `.loc 1 18 0  // cqehb3v...py:18:0`: the comment names the kernel's file (Inductor names a
    # generated file by the hash of all its text, device properties included)
    body = re.sub(r"(\.loc\b[^\n]*?)\s*//[^\n]*", r"\1", body)
    body = re.sub(r'"c[a-z0-9]{51}\.py"', '"<inductor kernel file>.py"', body)
    # a device_assert's file, its path spelled as bytes (`assertFile_0[121] = {47, 116, ...}`): its base name
    body = _ASSERT_FILE_RE.sub(_assert_file, body)
    # `.file 2 "/usr/lib/python3/..." "rms_norm.py"` (directory, name) forms
    body = re.sub(r'^(\s*\.file\s+\d+\s+)"[^"]*"\s*,?\s*"([^"]*)"', lambda m: f'{m[1]}"{m[2].rsplit("/", 1)[-1]}"',
                  body, flags=re.M)
    return body


def cpu_side(out: Path) -> None:
    import triton
    from inspectors.base import settings as settings_mod
    from inspectors.base.result import CompileRequest
    from inspectors.session.lens import Lens
    from inspectors.session import files as session_files

    engine = Lens(settings_mod.load(), cache=False, workers=1)
    data = {"triton": triton.__version__, "drivers": {}}
    try:
        for path in _drivers():
            files, package = session_files.project_of(path)
            r = engine.compile(CompileRequest(source=path.read_text(), filename=path.name, target="cuda:90",
                                              sass=False, files=files, package=package), timeout=600).result
            if r.error:
                data["drivers"][_key(path)] = {"error": r.error.message}
                continue
            data["drivers"][_key(path)] = {"kernels": [
                {"name": k.name, "num_warps": k.options.get("num_warps"), "num_stages": k.options.get("num_stages"),
                 "args": [a.describe() for a in k.args], "ptx": normalized_ptx(k.stages["ptx"]),
                 **_inductor_texts(k.name, k.stages.get("source", ""), k.stages.get("ttir", ""))}
                for k in r.kernels]}
            print(f"{path.name}: {len(r.kernels)} kernels")
            # after each driver: a side cut by its time limit still leaves the drivers it finished
            out.write_text(json.dumps(data, indent=1))
    finally:
        engine.close()
    out.write_text(json.dumps(data, indent=1))


def _inductor_texts(name: str, source: str, ttir: str) -> dict:
    """An Inductor kernel's generated file and TTIR, kept to explain a PTX that differs (written
    beside the PTX texts: the first place two sides part)."""
    return {"src": source, "ttir": ttir} if name.startswith("triton_") else {}


def _run_on_gpu(path: Path) -> dict:
    """example() run for real: every kernel the JIT compiled for it, in order, and its error's last
    lines if it raised (AOTInductor's package builds its C++ after the kernels are compiled)."""
    import torch
    from triton import knobs

    seen: list = []
    saved_env = dict(os.environ)      # a driver that sets TRITON_DISABLE_LINE_INFO sets it for itself only

    def hook(*, key, repr, fn, compile, is_manual_warmup, already_compiled):
        seen.append((fn.jit_function, key))
        return False                       # compile and launch as usual

    spec = importlib.util.spec_from_file_location(f"driver_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module        # as an import does: Dynamo looks its classes up by module
    spec.loader.exec_module(module)
    saved = knobs.runtime.jit_cache_hook
    knobs.runtime.jit_cache_hook = hook
    inductor = _record_inductor()
    # a hook makes the JIT serialize the specialization, which a Gluon layout from the host
    # fails (without a hook it does not): the recorder's leniency, for the hook only
    from inspectors.compile import triton_shim
    serialize = triton_shim.jit_module.serialize_specialization_data
    triton_shim.jit_module.serialize_specialization_data = triton_shim._lenient(serialize)
    from inspectors.compile import default_device
    device = contextlib.ExitStack()      # the default device as the compile worker sets it on a GPU
    device.enter_context(default_device.gpu_if_any())
    error = None
    try:
        module.example()
        torch.cuda.synchronize()
    except Exception:  # noqa: BLE001 - the kernels compiled before it are compared still
        import traceback
        error = "\n".join(traceback.format_exc().strip().splitlines()[-3:])
    finally:
        knobs.runtime.jit_cache_hook = saved
        triton_shim.jit_module.serialize_specialization_data = serialize
        device.close()
        torch.set_default_device("cpu")
        inductor.undo()
        os.environ.clear()
        os.environ.update(saved_env)
    kernels = []
    for fn, key in seen:
        found = None
        for caches in fn.device_caches.values():
            found = caches[0].get(key) or found
        if found is None:
            kernels.append({"name": fn.__name__, "missing": True})
            continue
        kernels.append({"name": fn.__name__, "num_warps": found.metadata.num_warps,
                        "num_stages": found.metadata.num_stages, "ptx": normalized_ptx(found.asm["ptx"])})
    return {"kernels": kernels + inductor.kernels, "error": error}


class _record_inductor:
    """Every config of every kernel torch.compile's Inductor compiled (its CachingAutotuner's
    precompile), with the PTX Triton made for it."""

    def __init__(self):
        import torch
        import torch._inductor.config as icfg
        from torch._inductor.runtime import triton_heuristics as th
        torch._dynamo.reset()
        icfg.use_static_cuda_launcher = False        # Triton's own CompiledKernel per config: its PTX
        icfg.force_disable_caches = True             # every config compiled, none from an earlier run's choice
        self.kernels: list[dict] = []
        self.original = th.CachingAutotuner.precompile
        record = self

        def precompile(autotuner, *args, **kwargs):
            out = record.original(autotuner, *args, **kwargs)
            for r in getattr(autotuner, "compile_results", ()):
                k = r.kernel
                record.kernels.append({"name": autotuner.fn.__name__, "num_warps": k.metadata.num_warps,
                                       "num_stages": k.metadata.num_stages, "ptx": normalized_ptx(k.asm["ptx"]),
                                       **_inductor_texts(autotuner.fn.__name__, getattr(autotuner.fn, "src", ""),
                                                         k.asm.get("ttir", ""))})
            return out
        th.CachingAutotuner.precompile = precompile

    def undo(self):
        from torch._inductor.runtime import triton_heuristics as th
        th.CachingAutotuner.precompile = self.original


def _run_alone(path: Path) -> dict | str:
    """_run_on_gpu in a process of its own, as a user runs one file: a driver that changes
    what the JIT picks for the rest of its process (an import that points Triton at another
    ptxas, so another PTX version) changes nothing for the next one. Its error's text if it fails."""
    p = subprocess.run([sys.executable, __file__, "--run-one", str(path)], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:           # its exception's line first (the text's tail may be a warning)
        text = p.stderr or p.stdout
        raised = [line for line in text.splitlines() if re.match(r"^\w+(\.\w+)*(Error|Exception)\b", line)]
        died = [f"exit {p.returncode}" + (f" ({signal.Signals(-p.returncode).name})" if p.returncode < 0 else "")]
        return " | ".join(died + raised[-1:] + [text[-2000:]])
    return json.loads(p.stdout.strip().splitlines()[-1])


def gpu_side(cpu_json: Path) -> int:
    import torch
    import triton
    cpu = json.loads(cpu_json.read_text())
    print(f"# {torch.cuda.get_device_name(0)} · torch {torch.__version__} · triton {triton.__version__} "
          f"(CPU side: triton {cpu['triton']})")
    same_version = cpu["triton"] == triton.__version__
    print(f"{'driver':<22} {'kernel':<30} {'warps':>11} {'stages':>11}  PTX")
    mismatches = 0
    for path in _drivers():
        want = cpu["drivers"].get(_key(path), {})
        if not want:
            print(f"{path.name:<22} not reached by the CPU side (its time limit): not compared")
            continue
        if "error" in want:
            print(f"{path.name:<22} CPU side failed: {want['error'][:80]}")
            mismatches += 1
            continue
        ran = _run_alone(path)
        if isinstance(ran, str):
            print(f"{path.name:<22} GPU side failed: {ran[:300]}")
            mismatches += 1
            continue
        got = ran["kernels"]
        if ran["error"]:
            print(f"{path.name:<22} example() raised on the GPU after {len(got)} kernels (compared below): "
                  + ran["error"][-400:].replace("\n", " | "))
        names_cpu = [k["name"] for k in want["kernels"]]
        names_gpu = [k["name"] for k in got]
        if sorted(names_cpu) != sorted(names_gpu):
            print(f"{path.name:<22} kernels differ: CPU {names_cpu} / GPU {names_gpu}")
            mismatches += 1
        pool, before, same = list(got), mismatches, 0
        quiet = len(want["kernels"]) > LISTED
        for k in want["kernels"]:
            # the GPU kernel with this name whose PTX matches, else the first with this name
            match = next((g for g in pool if g["name"] == k["name"] and g.get("ptx") == k["ptx"]), None) or \
                next((g for g in pool if g["name"] == k["name"]), None)
            if match is None:
                print(f"{path.name:<22} {k['name']:<30} not compiled on the GPU")
                mismatches += 1
                continue
            pool.remove(match)
            ptx = ("same" if match.get("ptx") == k["ptx"] else "DIFFERENT") if same_version else "n/a (versions)"
            if ptx == "DIFFERENT" and mismatches - before < 3:   # both texts beside the CPU side's JSON, to diff
                                                                # (a driver's first three: the device tool returns a few hundred files)
                for side, texts in (("cpu", k), ("gpu", match)):
                    for ext in ("ptx", "ttir", "src"):
                        if texts.get(ext):
                            cpu_json.with_name(f"{path.stem}.{k['name']}.{mismatches}.{side}.{ext}").write_text(texts[ext])
            ok = match.get("num_warps") == k["num_warps"] and match.get("num_stages") == k["num_stages"] and ptx != "DIFFERENT"
            mismatches += not ok
            same += ok
            if not (quiet and ok):
                print(f"{path.name:<22} {k['name']:<30} {k['num_warps']:>4} / {match.get('num_warps'):<4} "
                      f"{k['num_stages']:>4} / {match.get('num_stages'):<4}  {ptx}"
                      + ("" if ok else f"   CPU args: {', '.join(k['args'])}"))
        if quiet:
            print(f"{path.name:<22} {len(want['kernels'])} CPU / {len(got)} GPU kernels: {same} same (warps, stages, "
                  f"PTX), {mismatches - before} not")
    print(f"# (CPU / GPU); {mismatches} mismatch(es)")
    return 0


_ONLY: list[str] = []
RECORD = ROOT / "benchmarks" / "results" / "gpu_drivers.txt"
_DIFFER_RE = re.compile(r"^(\S+\.py)\s+kernels differ: CPU \[.*?\] / GPU (\[.*?\])$", re.M)
_ROW_RE = re.compile(r"^(\S+\.py)\s+(\S+)\s+\d+ / \d+\s+\d+ / \d+\s+\S", re.M)
_SUMMARY_RE = re.compile(r"^(\S+\.py)\s+(\d+) CPU / (\d+) GPU kernels: (\d+) same", re.M)


def names_against_record(cpu_json: Path) -> int:
    """A CPU side's kernel names, driver by driver, against the newest GPU run recorded for that
    driver in benchmarks/results/gpu_drivers.txt (newest first): its list where the names
    differed, its rows, or, where all were the same, its count. A check of a change made
    without GPU time left; the PTX needs the GPU."""
    import ast
    gpu: dict[str, tuple[str, object]] = {}
    for run in RECORD.read_text().split("\ncommit: "):
        rows: dict[str, list[str]] = {}
        for m in _ROW_RE.finditer(run):
            rows.setdefault(m[1], []).append(m[2])
        found: dict[str, tuple[str, object]] = {name: ("names", listed) for name, listed in rows.items()}
        found.update({m[1]: ("names", ast.literal_eval(m[2])) for m in _DIFFER_RE.finditer(run)})
        for m in _SUMMARY_RE.finditer(run):
            if m[1] not in found and m[2] == m[3] == m[4]:
                found[m[1]] = ("count", int(m[2]))
        for name, seen in found.items():
            gpu.setdefault(name, seen)
    for path, side in sorted(json.loads(cpu_json.read_text())["drivers"].items()):
        name, cpu = Path(path).name, [k["name"] for k in side.get("kernels", [])]
        kind, want = gpu.get(name, ("none", None))
        same = cpu == want if kind == "names" else len(cpu) == want if kind == "count" else None
        said = {True: "the same names" if kind == "names" else "the same count", False: f"differ (GPU: {want})",
                None: "no GPU run recorded"}[same]
        print(f"{name:<26} {len(cpu):>4} kernels: {said}" + (f"  error: {side['error'][:120]}" if "error" in side else ""))
    return 0


def _drivers() -> list[Path]:
    return [p for p in DRIVERS if not _ONLY or any(o in _key(p) for o in _ONLY)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", default=[], help="the drivers whose path contains this")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--cpu", type=Path, help="write the CPU side's kernels here")
    g.add_argument("--gpu", type=Path, help="compare the GPU's JIT against this CPU side")
    g.add_argument("--names", type=Path, help="this CPU side's kernel names against the recorded GPU runs")
    g.add_argument("--run-one", type=Path, help="(gpu_side's child) one driver's kernels on the GPU, as JSON")
    args = ap.parse_args()
    if args.run_one:
        got = _run_on_gpu(args.run_one)
        print("\n" + json.dumps(got))
        return 0
    _ONLY[:] = args.only
    if args.names:
        return names_against_record(args.names)
    if args.cpu:
        cpu_side(args.cpu)
        return 0
    return gpu_side(args.gpu)


if __name__ == "__main__":
    sys.exit(main())
