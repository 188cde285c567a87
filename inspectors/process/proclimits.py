"""Limits a worker process puts on itself at its start (the compile and benchmark workers)."""
from __future__ import annotations

import os
import resource

from inspectors.base import settings as settings_mod


def limit_memory() -> None:
    """Cap the address space at TLENS_WORKER_MEMORY_MB (8192; 0: no cap). Only on machines
    without a GPU: CUDA maps huge virtual ranges, so the cap would break it there."""
    mb = settings_mod.load().worker_memory_mb
    if mb > 0:
        resource.setrlimit(resource.RLIMIT_AS, (mb * 2**20, mb * 2**20))


def memory_limit_mb() -> int:
    """The address-space limit this process has (0: none, as on a GPU machine)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return 0 if soft == resource.RLIM_INFINITY else soft // 2**20


def limit_processes(more: int = 64) -> None:
    """At most `more` more processes for this user while the process lives. Linux does not
    apply RLIMIT_NPROC to root (CAP_SYS_RESOURCE): there, killing the worker's process
    group at the time limit is what stops a forking launcher."""
    try:
        running = sum(1 for p in os.listdir("/proc") if p.isdigit())
        resource.setrlimit(resource.RLIMIT_NPROC, (running + more, running + more))
    except (OSError, ValueError):
        pass
