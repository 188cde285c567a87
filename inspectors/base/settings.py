"""Configuration, read once from documented environment variables.

| variable                   | default                         | meaning                                   |
|----------------------------|---------------------------------|-------------------------------------------|
| TLENS_COMPILE_TIMEOUT      | 60                              | seconds a compile job may take            |
| TLENS_COMPILE_TIMEOUT_PER_LAUNCH | 15                        | seconds more for each launch after the first and each torch.compile graph (at most 20 in all) |
| TLENS_DEFAULT_TARGET       | cuda:90                         | target chosen when none is given          |
| TLENS_TRITON_CACHE_DIR     | ~/.cache/triton-lens/triton     | Triton cache used by the compile worker   |
| TLENS_WORKER_MEMORY_MB     | 8192                            | address-space limit of the worker         |
| TLENS_MAX_OUTPUT_BYTES     | 65536                           | user stdout/stderr kept per compile       |
| TLENS_WORKSPACE_DIR        | ~/.local/share/triton-lens/workspace | the user's kernel files and history  |
| TLENS_REPRO_DIR            | ~/.cache/triton-lens/repro      | inputs of failed tools (the PTX ptxas crashed on), named by their repro commands |
| TLENS_LESSONS_DIR          | (none)                          | a teacher's folder of lesson files        |
| TLENS_WORKERS              | from cores and memory           | warm compile workers in the pool          |
| TLENS_SESSION_JOBS         | 2                               | compiles one session may have queued/running |
| TLENS_USER_HEADER          | (unset)                         | header naming the user (set by an auth proxy): one workspace each |
| TLENS_CLASS                | 0                               | 1: one workspace per browser even without the header |
| TLENS_TEACHERS             | (none)                          | user names (the proxy's) who see every student's row on the Caches page; a student sees only their own |
| TLENS_SANDBOX              | 1 with TLENS_CLASS, else 0      | 1: every process that runs a user's file runs in bubblewrap |
| TLENS_UNSANDBOXED_CLASS    | 0                               | 1: a class server may run students' code unsandboxed (a trusted room only) |
| TLENS_SCRATCH_MB           | 1024                            | disk a sandboxed job may fill in its scratch folder |
| TLENS_INLINE_MB            | 16                              | a job's launches in one answer up to this; past it, each a file |
| TLENS_LAUNCH_STORE_MB      | 2048                            | disk for big results' launches, one file each (store/launches.py) |
| TLENS_TRITON_VERSIONS      | (none)                          | extra Triton versions: `VERSION=PATH` entries (inspectors.base.triton_installs) |
| TLENS_TRITON_VERSIONS_DIR  | .triton-versions (in the repo)  | a folder of extra versions, one `pip --target` folder each |
| TLENS_VERSION_WORKERS      | 1                               | warm workers of each extra Triton version |
| TLENS_OWN_SANDBOXES        | from memory (sandboxed servers) | students' own warm sandboxes live at once (0: none, a fresh sandbox per job) |
| TLENS_OWN_IDLE_S           | 600                             | an own sandbox idle this long is stopped  |
| TLENS_ANALYSIS_BUDGET_S    | 20                              | seconds the analysis of one compile may take (worker or server) |
| TLENS_OPEN                 | (none)                          | a file `tlens app FILE` opened from disk (single-user only; set by the CLI) |
| TLENS_STRAGGLER_S          | 3                               | a compile running longer may be a hang: a spare worker starts beside it |
| TLENS_BWRAP                | bwrap on the PATH               | the bubblewrap binary the sandbox runs |
| TLENS_NGINX                | nginx on the PATH               | the nginx `make serve-class REPLICAS=N` starts |
| TLENS_PROFILES_DIR         | assets/profiles                 | saved Nsight Compute profiles the explorer shows as heat |
| TLENS_BENCH_DIR            | ~/.cache/triton-lens/bench      | the benchmark's lock files and ceilings cache |
| TLENS_BENCH_TIMEOUT        | 900                             | seconds one benchmark run may take        |
| TLENS_BENCH_LOCK_WAIT      | 600                             | seconds a benchmark waits for a busy GPU  |
| TLENS_TRITON_CACHE_BASE    | (set by the engine)             | a worker's Triton cache root (one folder per file name under it) |
| TLENS_WORKER_FORK          | (set by the engine)             | 1: the worker is a student's own sandbox, a forked child per job |
| TLENS_WORKER_PREWARM       | 1                               | 0: a worker does not compile a small kernel before its first job |
| TLENS_LAUNCH_LOG           | (set by the profiler)           | where the profiled process writes its launches |
| TLENS_COMPILE_CHILDREN     | the cores                       | a job's launches compiled at once, each in a child of its worker (1: one after another) |

The worker gets its own Triton cache so that kernels compiled for viewing
(e.g. for an sm_100 target on an sm_90 machine) never land in the user's
real `~/.triton/cache`. The workspace holds the user's kernels as plain `.py` files
(edits of library kernels are saved there as copies) and, in `.history/`, the last
compiles for comparing. A lessons folder adds a teacher's lesson files (`*.md`, the format of
assets/lessons/_TEMPLATE.md) to the bundled ones; a file there with a bundled lesson's name
replaces it.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    compile_timeout_s: float
    compile_timeout_per_launch_s: float
    default_target: str
    triton_cache_dir: Path
    worker_memory_mb: int
    max_output_bytes: int
    workspace_dir: Path = Path.home() / ".local" / "share" / "triton-lens" / "workspace"
    repro_dir: Path = Path.home() / ".cache" / "triton-lens" / "repro"
    lessons_dir: Path | None = None
    workers: int = 1
    session_jobs: int = 2
    user_header: str = ""
    teachers: tuple[str, ...] = ()    # proxy user names who see every student's row (TLENS_TEACHERS)
    per_user_workspaces: bool = False
    straggler_s: float = 3.0         # a compile running longer may be a hang: a spare starts beside it
    sandbox: bool = False            # user code runs in bubblewrap (inspectors/process/sandbox.py)
    unsandboxed_class: bool = False  # the loud override: a class server without a sandbox
    scratch_mb: int = 1024
    inline_mb: int = 16              # a job's launches travel in its one answer up to this many MB in all
    launch_store_mb: int = 2048      # big results' launches on disk, all results together (inspectors/store/launches.py)
    open_file: str = ""              # `tlens app FILE`: a file of the user's, opened from disk (single-user only)
    own_sandboxes: int = 0           # a sandboxed server's students' own warm sandboxes (inspectors/compile/student_sandboxes.py)
    own_idle_s: float = 600.0
    analysis_budget_s: float = 20.0  # the analysis of one compile (in the worker, else in the server)
    triton_versions: str = ""        # extra Triton versions, VERSION=PATH entries (inspectors.base.triton_installs)
    triton_versions_dir: Path | None = None
    version_workers: int = 1
    bwrap: str = ""
    nginx: str = ""
    profiles_dir: Path | None = None
    bench_dir: Path = Path.home() / ".cache" / "triton-lens" / "bench"
    bench_timeout_s: float = 900.0
    bench_lock_wait_s: float = 600.0
    # set by the engine (or the profiler) for the process it starts
    triton_cache_base: str = ""
    worker_fork: bool = False
    worker_prewarm: bool = True
    launch_log: str = ""
    compile_children: int = 0        # a job's launches compiled at once (0: one per core)

    @property
    def class_mode(self) -> bool:
        return self.per_user_workspaces


def default_workers() -> int:
    """One worker per core, at most one per 2 GiB of memory (a busy worker holds torch, Triton
    and a compile), at least 1 and at most 8."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        mem_gib = 4.0
    return max(1, min(cores, int(mem_gib // 2), 8))


OWN_SANDBOX_MIB = 210     # one student's sandbox, a little over its measured PSS (benchmarks/results/sandbox_overhead.txt)


def default_own_sandboxes() -> int:
    """Students' own sandboxes at once: 3/4 of the memory at OWN_SANDBOX_MIB each, at least 2
    (and each starts only while the machine has memory to spare: student_sandboxes.memory_room)."""
    try:
        mem_mib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20
    except (ValueError, OSError, AttributeError):
        mem_mib = 4096.0
    return max(2, int(mem_mib * 0.75 // OWN_SANDBOX_MIB))


def load() -> Settings:
    """The settings from the environment as it is now. Memoized on the TLENS_* variables and
    HOME (a page run asked 18 times, and each asked the machine for its cores and memory);
    a test that changes them gets settings of its own."""
    return _load(tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("TLENS_") or k == "HOME")))


@functools.lru_cache(maxsize=64)
def _load(_env_key: tuple) -> Settings:
    env = os.environ.get
    cache = env("TLENS_TRITON_CACHE_DIR") or str(Path.home() / ".cache" / "triton-lens" / "triton")
    return Settings(
        compile_timeout_s=float(env("TLENS_COMPILE_TIMEOUT", "60")),
        compile_timeout_per_launch_s=float(env("TLENS_COMPILE_TIMEOUT_PER_LAUNCH", "15")),
        default_target=env("TLENS_DEFAULT_TARGET", "cuda:90"),
        triton_cache_dir=Path(cache).expanduser(),
        worker_memory_mb=int(env("TLENS_WORKER_MEMORY_MB", "8192")),
        max_output_bytes=int(env("TLENS_MAX_OUTPUT_BYTES", "65536")),
        workspace_dir=Path(env("TLENS_WORKSPACE_DIR") or
                           str(Path.home() / ".local" / "share" / "triton-lens" / "workspace")).expanduser(),
        repro_dir=Path(env("TLENS_REPRO_DIR") or str(Path.home() / ".cache" / "triton-lens" / "repro")).expanduser(),
        lessons_dir=Path(env("TLENS_LESSONS_DIR")).expanduser() if env("TLENS_LESSONS_DIR") else None,
        workers=int(env("TLENS_WORKERS") or default_workers()),
        session_jobs=int(env("TLENS_SESSION_JOBS", "2")),
        user_header=env("TLENS_USER_HEADER", ""),
        teachers=tuple(n for n in env("TLENS_TEACHERS", "").replace(",", " ").split() if n),
        per_user_workspaces=env("TLENS_CLASS", "0") == "1" or bool(env("TLENS_USER_HEADER")),
        straggler_s=float(env("TLENS_STRAGGLER_S", "3")),
        sandbox=env("TLENS_SANDBOX", "1" if (env("TLENS_CLASS", "0") == "1" or env("TLENS_USER_HEADER")) else "0") == "1",
        unsandboxed_class=env("TLENS_UNSANDBOXED_CLASS", "0") == "1",
        scratch_mb=int(env("TLENS_SCRATCH_MB", "1024")),
        inline_mb=int(env("TLENS_INLINE_MB", "16")),
        launch_store_mb=int(env("TLENS_LAUNCH_STORE_MB", "2048")),
        open_file=env("TLENS_OPEN", ""),
        own_sandboxes=int(env("TLENS_OWN_SANDBOXES") or default_own_sandboxes()),
        own_idle_s=float(env("TLENS_OWN_IDLE_S", "600")),
        analysis_budget_s=float(env("TLENS_ANALYSIS_BUDGET_S") or 20),
        triton_versions=env("TLENS_TRITON_VERSIONS", ""),
        triton_versions_dir=Path(env("TLENS_TRITON_VERSIONS_DIR")) if env("TLENS_TRITON_VERSIONS_DIR") else None,
        version_workers=max(1, int(env("TLENS_VERSION_WORKERS") or 1)),
        bwrap=env("TLENS_BWRAP", ""),
        nginx=env("TLENS_NGINX", ""),
        profiles_dir=Path(env("TLENS_PROFILES_DIR")).expanduser() if env("TLENS_PROFILES_DIR") else None,
        bench_dir=Path(env("TLENS_BENCH_DIR") or str(Path.home() / ".cache" / "triton-lens" / "bench")).expanduser(),
        bench_timeout_s=float(env("TLENS_BENCH_TIMEOUT", "900")),
        bench_lock_wait_s=float(env("TLENS_BENCH_LOCK_WAIT", "600")),
        triton_cache_base=env("TLENS_TRITON_CACHE_BASE", ""),
        worker_fork=env("TLENS_WORKER_FORK") == "1",
        worker_prewarm=env("TLENS_WORKER_PREWARM", "1") == "1",
        launch_log=env("TLENS_LAUNCH_LOG", ""),
        compile_children=max(0, int(env("TLENS_COMPILE_CHILDREN") or 0)),
    )
