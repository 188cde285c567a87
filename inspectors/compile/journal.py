"""What a compile job leaves on disk as it goes, read back when its worker died mid-compile.

Per launch, the worker writes `launch-N/kernel.json` (name, target, options, args, label, the
source) before compiling it (`begin`); then each of Triton's stages as it is made
(`launch-N/stage.ttir`, `stage.ttgir`, ...; `stage.cubin` in binary: `made`) and, while a
stage runs, `launch-N/running` holding its name (`running`; both from the shim's stage
recorder). An LLVM abort while making LLVM IR leaves `stage.ttir`, `stage.ttgir` and
`running` = `llir`:

    kernels, stage = recover(job_dir)     # (KernelResult per launch, "llir")
"""
from __future__ import annotations

import base64
import json
from pathlib import Path

from inspectors.base import stages as stage_table
from inspectors.base.result import ArgSpec, KernelResult
from inspectors.base.targets import parse as parse_target


def begin(job_dir: Path, index: int, kernel: KernelResult) -> Path:
    """The folder of launch `index`, with the launch described (its stages come later)."""
    folder = job_dir / f"launch-{index}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kernel.json").write_text(json.dumps({
        "name": kernel.name, "target": kernel.target, "options": kernel.options,
        "args": [a.__dict__ for a in kernel.args], "launch": kernel.launch, "label": kernel.label,
        "source": kernel.stages.get("source", "")}))
    return folder


def running(folder: Path, stage: str | None) -> None:
    """Triton's stage `stage` starts (None: no stage runs any more)."""
    if stage is None:
        (folder / "running").unlink(missing_ok=True)
    else:
        (folder / "running").write_text(stage)


def made(folder: Path, stage: str, output: str | bytes) -> None:
    (folder / f"stage.{stage}").write_bytes(output if isinstance(output, bytes) else output.encode())


def recover(job_dir: Path) -> tuple[tuple[KernelResult, ...], str | None]:
    """Every launch the job started, with the stages it made, and the stage (our name) that
    was running when the process died, or None if none was."""
    kernels, running = [], None
    folders = sorted(job_dir.glob("launch-*"), key=lambda p: int(p.name.split("-")[1]) if p.name.split("-")[1].isdigit() else 0)
    for folder in folders:
        try:
            meta = json.loads((folder / "kernel.json").read_text())
        except (OSError, ValueError):
            continue
        backend = parse_target(meta["target"]).backend
        texts = {"source": meta.get("source", "")}
        for stage in stage_table.stages_for(backend):
            f = folder / f"stage.{stage.asm_key}"
            if stage.asm_key and f.exists():
                texts[stage.name] = f.read_text(errors="replace")
        cubin = folder / "stage.cubin"
        kernels.append(KernelResult(
            name=meta["name"], target=meta["target"], options=meta["options"],
            args=tuple(ArgSpec(**a) for a in meta["args"]), stages=texts, launch=meta["launch"], label=meta["label"],
            cubin=base64.b64encode(cubin.read_bytes()).decode() if cubin.exists() else ""))
        if (folder / "running").exists():
            running = stage_table.from_triton((folder / "running").read_text().strip())
    return tuple(kernels), running
