"""Limits a worker process puts on itself at its start (the compile and benchmark workers)."""
from __future__ import annotations

import os
import resource

from inspectors.base import settings as settings_mod


def limit_memory(above_mapped: bool = False) -> None:
    """Cap the address space at TLENS_WORKER_MEMORY_MB (8192; 0: no cap). Only on machines
    without a GPU: CUDA maps huge virtual ranges, so the cap would break it there.
    `above_mapped`: the cap is that much more than the process has mapped now (a CUDA build of
    torch with no GPU visible: its libraries map gigabytes of address space that hold nothing,
    and a job's 2 GB of tensors failed under a plain 8 GB cap: benchmarks/results/time_estimates_outside.txt)."""
    mb = settings_mod.load().worker_memory_mb
    if mb > 0:
        limit = mb * 2**20 + (mapped_bytes() if above_mapped else 0)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def mapped_bytes() -> int:
    """This process's address space now (VmSize), 0 where /proc does not say."""
    try:
        for line in open("/proc/self/status", encoding="ascii"):
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


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
