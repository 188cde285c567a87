"""Configuration, read once from documented environment variables.

| variable                   | default                         | meaning                                   |
|----------------------------|---------------------------------|-------------------------------------------|
| TLENS_COMPILE_TIMEOUT      | 60                              | seconds a compile job may take            |
| TLENS_DEFAULT_TARGET       | cuda:90                         | target chosen when none is given          |
| TLENS_TRITON_CACHE_DIR     | ~/.cache/triton-lens/triton     | Triton cache used by the compile worker   |
| TLENS_WORKER_MEMORY_MB     | 8192                            | address-space limit of the worker         |
| TLENS_MAX_OUTPUT_BYTES     | 65536                           | user stdout/stderr kept per compile       |
| TLENS_WORKSPACE_DIR        | ~/.local/share/triton-lens/workspace | the user's kernel files and history  |
| TLENS_REPRO_DIR            | ~/.cache/triton-lens/repro      | inputs of failed tools (the PTX ptxas crashed on), named by their repro commands |
| TLENS_LESSONS_DIR          | (none)                          | a teacher's folder of lesson files        |

The worker gets its own Triton cache so that kernels compiled for viewing
(e.g. for an sm_100 target on an sm_90 machine) never land in the user's
real `~/.triton/cache`. The workspace holds the user's kernels as plain `.py` files
(edits of library kernels are saved there as copies) and, in `.history/`, the last
compiles for comparing. A lessons folder adds a teacher's lesson files (`*.md`, the format of
assets/lessons/_TEMPLATE.md) to the bundled ones; a file there with a bundled lesson's name
replaces it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    compile_timeout_s: float
    default_target: str
    triton_cache_dir: Path
    worker_memory_mb: int
    max_output_bytes: int
    workspace_dir: Path = Path.home() / ".local" / "share" / "triton-lens" / "workspace"
    repro_dir: Path = Path.home() / ".cache" / "triton-lens" / "repro"
    lessons_dir: Path | None = None


def load() -> Settings:
    env = os.environ.get
    cache = env("TLENS_TRITON_CACHE_DIR") or str(Path.home() / ".cache" / "triton-lens" / "triton")
    return Settings(
        compile_timeout_s=float(env("TLENS_COMPILE_TIMEOUT", "60")),
        default_target=env("TLENS_DEFAULT_TARGET", "cuda:90"),
        triton_cache_dir=Path(cache).expanduser(),
        worker_memory_mb=int(env("TLENS_WORKER_MEMORY_MB", "8192")),
        max_output_bytes=int(env("TLENS_MAX_OUTPUT_BYTES", "65536")),
        workspace_dir=Path(env("TLENS_WORKSPACE_DIR") or
                           str(Path.home() / ".local" / "share" / "triton-lens" / "workspace")).expanduser(),
        repro_dir=Path(env("TLENS_REPRO_DIR") or str(Path.home() / ".cache" / "triton-lens" / "repro")).expanduser(),
        lessons_dir=Path(env("TLENS_LESSONS_DIR")).expanduser() if env("TLENS_LESSONS_DIR") else None,
    )
