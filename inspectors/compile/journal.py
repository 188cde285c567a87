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
import os
import stat
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


def read_plain(path: Path, limit: int = 64 << 20) -> bytes:
    """The bytes of `path` if it is a regular file reached without following a link (a job's
    folder is written by the user's code: `output.txt` may be a link to /etc/shadow, or a FIFO
    that would block the reader). Raises OSError otherwise; reads at most `limit` bytes."""
    parent = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=parent)
    finally:
        os.close(parent)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path.name} is not a regular file")
        chunks, left = [], limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _text(path: Path) -> str:
    return read_plain(path).decode("utf-8", "replace")


def recover(job_dir: Path) -> tuple[tuple[KernelResult, ...], str | None]:
    """Every launch the job started, with the stages it made, and the stage (our name) that
    was running when the process died, or None if none was."""
    kernels, running = [], None
    folders = sorted(job_dir.glob("launch-*"), key=lambda p: int(p.name.split("-")[1]) if p.name.split("-")[1].isdigit() else 0)
    for folder in folders:
        if folder.is_symlink():
            continue
        try:
            meta = json.loads(_text(folder / "kernel.json"))
            backend = parse_target(meta["target"]).backend
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        texts = {"source": str(meta.get("source", ""))}
        for stage in stage_table.stages_for(backend):
            f = folder / f"stage.{stage.asm_key}"
            if stage.asm_key and f.exists():
                try:
                    texts[stage.name] = _text(f)
                except OSError:
                    pass
        try:
            cubin = base64.b64encode(read_plain(folder / "stage.cubin")).decode()
        except OSError:
            cubin = ""
        try:
            kernels.append(KernelResult(
                name=meta["name"], target=meta["target"], options=meta["options"],
                args=tuple(ArgSpec(**a) for a in meta["args"]), stages=texts, launch=meta["launch"],
                label=meta["label"], cubin=cubin))
        except (KeyError, TypeError, ValueError):
            continue
        try:
            running = stage_table.from_triton(_text(folder / "running").strip())
        except OSError:
            pass
    return tuple(kernels), running
