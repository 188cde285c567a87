"""Profile one launch of a kernel file under Nsight Compute and put the figures on its lines
(issue 22). Needs an NVIDIA GPU, torch with CUDA and `ncu`; everything it computes from the
export is pure (inspectors.read.ncu_source, inspectors.explain.profile), so a saved profile
opens anywhere.

    prof, raw, paths = profile_launch(Path("kernels/vector_add.py"), launch=1, out=Path("profiles"))

What it runs, in order:
  1. the engine compiles the file for this GPU's target (the stages and SASS the app shows);
  2. example() once for real, every launch logged (`record_launches`): launch N of the
     compile is the N-th distinct compiled kernel that ran, the K+1-th launch of its name;
  3. `ncu --set full --import-source yes --clock-control none --kernel-name regex:^NAME$
     --launch-skip K --launch-count 1 -o REPORT python -m inspectors.bench.profile_run FILE`;
  4. `ncu --import REPORT --page source --csv --print-source sass`: the raw CSV;
  5. pairs ncu's instructions with the compiled SASS (same opcodes at the same offsets, or
     ProfileMismatch) and sums them per Python line through the source map.
`--clock-control none` leaves the GPU's clocks as they are (ncu locks them to base by default).
"""
from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from inspectors.base.result import CompileRequest
from inspectors.compile.engine import Engine
from inspectors.explain import profile as prof
from inspectors.read import ncu_source, sourcemap
from inspectors.read.sass import SassError, disassemble_b64
from inspectors.store import profiles

ROOT = Path(__file__).resolve().parents[2]
NCU_SET = "full"


class ProfileError(RuntimeError):
    """Why no profile came out (no GPU, no ncu, the launch is not there, ncu failed); the
    message says which, and `command` reproduces a tool's failure."""

    def __init__(self, message: str, command: str = ""):
        super().__init__(message)
        self.command = command


def find_ncu() -> str | None:
    for cand in (shutil.which("ncu"), "/usr/local/cuda/bin/ncu", *sorted(Path("/opt/nvidia").glob("nsight-compute/*/ncu"))):
        if cand and Path(cand).exists():
            return str(cand)
    return None


def environment(ncu: str) -> dict:
    """Where the figures are measured: GPU, driver, CUDA, torch, Triton, Python, ncu, date."""
    import torch
    import triton

    def smi(field: str) -> str:
        try:
            out = subprocess.run(["nvidia-smi", f"--query-gpu={field}", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=30).stdout
            return out.splitlines()[0].strip() if out.strip() else ""
        except (OSError, subprocess.TimeoutExpired):
            return ""

    try:
        version = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60).stdout
        ncu_version = next((l.strip() for l in version.splitlines() if "Version" in l), version.strip()[-80:])
    except (OSError, subprocess.TimeoutExpired) as e:
        ncu_version = f"unknown ({e})"
    major, minor = torch.cuda.get_device_capability()
    return {"gpu": torch.cuda.get_device_name(), "capability": f"{major}.{minor}", "driver": smi("driver_version"),
            "cuda": torch.version.cuda, "torch": torch.__version__, "triton": triton.__version__,
            "python": platform.python_version(), "ncu": ncu_version, "tool": "ncu",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def _target() -> str:
    import torch
    if not torch.cuda.is_available():
        raise ProfileError("profiling needs an NVIDIA GPU (torch sees none); open a saved profile instead")
    major, minor = torch.cuda.get_device_capability()
    return f"cuda:{major * 10 + minor}"


def record_launches(file: Path, env: dict, log: Path, timeout: float) -> list[dict]:
    """Run example() once without ncu, logging every launch (inspectors.bench.profile_run),
    from the file's folder (the file imports its neighbours)."""
    file = Path(file).resolve()
    cmd = [sys.executable, "-m", "inspectors.bench.profile_run", str(file)]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=str(file.parent),
                             env={**env, "TLENS_LAUNCH_LOG": str(log)})
    except subprocess.TimeoutExpired:
        raise ProfileError(f"example() of {file.name} took longer than {timeout:g} s", " ".join(cmd)) from None
    if not log.exists():
        raise ProfileError(f"example() of {file.name} did not run (exit {run.returncode}): "
                           f"{(run.stdout + run.stderr).strip()[-1500:]}", " ".join(cmd))
    return json.loads(log.read_text())


def pick_launch(log: list[dict], launch: int, name: str) -> tuple[int, dict]:
    """Launch `launch` of the compile is the launch-th distinct compiled kernel example()
    ran (the compile keeps one launch per specialization, in the order they first ran).
    Returns ncu's --launch-skip for it (earlier launches of the same kernel name) and its
    integer arguments."""
    seen: list[tuple[str, str]] = []
    first: dict[tuple[str, str], int] = {}
    for i, rec in enumerate(log):
        key = (rec["kernel"], rec["hash"])
        if key not in first:
            first[key] = i
            seen.append(key)
    if launch > len(seen):
        raise ProfileError(f"example() ran {len(seen)} distinct kernel(s); there is no launch {launch}")
    key = seen[launch - 1]
    if key[0] != name:
        raise ProfileError(f"launch {launch} compiled {name} but example() ran {key[0]} there: "
                           "the compile and the run launch differently")
    at = first[key]
    skip = sum(1 for rec in log[:at] if rec["kernel"] == name)
    return skip, dict(log[at]["ints"])


def profile_launch(file: Path, launch: int, out: Path | None = None, ncu_set: str = NCU_SET,
                   timeout: float = 300.0, engine: Engine | None = None, launch_log: list[dict] | None = None):
    """Profile launch `launch` (1-based, as the app numbers them) of `file`. Returns
    (Profile, raw CSV text, saved JSON path or None). Raises ProfileError, or
    profile.ProfileMismatch when the code that ran is not the compiled code. `launch_log`:
    a `record_launches` of the file already made (one run of example() for all its launches)."""
    file = Path(file).resolve()
    ncu = find_ncu()
    if ncu is None:
        raise ProfileError("Nsight Compute (ncu) is not on PATH, nor in /usr/local/cuda/bin or /opt/nvidia")
    target = _target()
    source = file.read_text(encoding="utf-8")
    own = engine is None
    engine = engine or Engine()
    try:
        result = engine.compile(CompileRequest(source=source, filename=file.name, target=target), timeout=timeout)
    finally:
        if own:
            engine.close()
    if result.error is not None and not result.kernels:
        raise ProfileError(f"{file.name} does not compile: {result.error.message}")
    if not 1 <= launch <= len(result.kernels):
        raise ProfileError(f"{file.name} has {len(result.kernels)} launch(es); there is no launch {launch}")
    kernel = result.kernels[launch - 1]
    if kernel.error is not None or not kernel.cubin:
        why = kernel.error.message if kernel.error else "no cubin"
        raise ProfileError(f"launch {launch} of {file.name} did not compile to SASS: {why}")
    try:
        sass = kernel.stages.get("sass") or disassemble_b64(kernel.cubin)
    except SassError as e:
        raise ProfileError(f"nvdisasm failed on launch {launch}: {e.message}", e.command) from None
    stages = {**kernel.stages, "sass": sass}
    smap = sourcemap.build(stages, file.name)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}

    with tempfile.TemporaryDirectory(prefix="tlens-ncu-") as tmp:
        if launch_log is None:
            launch_log = record_launches(file, env, Path(tmp) / "launches.json", timeout)
        skip, ints = pick_launch(launch_log, launch, kernel.name)
        report = Path(tmp) / "report"
        cmd = [ncu, "--set", ncu_set, "--import-source", "yes", "--clock-control", "none",
               "--kernel-name", f"regex:^{kernel.name}$", "--launch-skip", str(skip), "--launch-count", "1",
               "-o", str(report), "-f", sys.executable, "-m", "inspectors.bench.profile_run", str(file)]
        shown = " ".join(cmd)
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=str(file.parent), env=env)
        except subprocess.TimeoutExpired:
            raise ProfileError(f"ncu took longer than {timeout:g} s", shown) from None
        rep = report.with_suffix(".ncu-rep")
        if not rep.exists():
            tail = (run.stdout + run.stderr).strip()[-1500:]
            raise ProfileError(f"ncu wrote no report (exit {run.returncode}): {tail}", shown)
        # the program may fail after the profiled launch (flash_attention's second launch
        # crashes the CUDA 12 ptxas of Triton 3.6): the launch was measured, say so
        exit_note = (f"the program exited with status {run.returncode} after the profiled launch: "
                     f"{(run.stderr or run.stdout).strip().splitlines()[-1][:200] if (run.stderr or run.stdout).strip() else ''}"
                     if run.returncode else "")
        export = [ncu, "--import", str(rep), "--page", "source", "--csv", "--print-source", "sass"]
        exp = subprocess.run(export, capture_output=True, text=True, timeout=timeout)
        if exp.returncode != 0:
            raise ProfileError(f"ncu --import failed (exit {exp.returncode}): {exp.stderr.strip()[-1500:]}",
                               " ".join(export))
        raw = exp.stdout
    stem = f"{file.stem}-launch{launch}"

    def keep_for_diagnosis(why: str) -> str:
        """A profile that did not come out leaves its raw export and the compiled SASS in
        `out`, so the parser can be fixed against the real text."""
        if out is None:
            return ""
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / f"{stem}.{why}.ncu.csv").write_text(raw, encoding="utf-8")
        (Path(out) / f"{stem}.{why}.sass").write_text(sass, encoding="utf-8")
        return f" (kept: {stem}.{why}.ncu.csv and .sass in {out})"

    try:
        page = ncu_source.parse(raw)[0]
    except ncu_source.NcuCsvError as e:
        raise ProfileError(f"the Source-page export did not read: {e}{keep_for_diagnosis('unread')}",
                           " ".join(export)) from None
    meta = {**environment(ncu), "file": file.name, "kernel": kernel.name, "launch": launch, "launch_ints": ints,
            "launch_skip": skip,
            "label": kernel.label, "target": target, "ncu_set": ncu_set,
            "source_sha256": hashlib.sha256(source.encode()).hexdigest(),
            "command": shown.replace(str(file), file.name), "export": "ncu --import REPORT --page source --csv "
            "--print-source sass"}
    try:
        profile = prof.build(page, sass, smap.stages["sass"], meta=meta)
    except prof.ProfileMismatch as e:
        raise prof.ProfileMismatch(f"{e}{keep_for_diagnosis('mismatch')}") from None
    if exit_note:
        profile = dataclasses.replace(profile, notes=profile.notes + (exit_note,))
    path = profiles.save(out, stem, profile, raw) if out is not None else None
    return profile, raw, path
