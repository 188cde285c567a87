"""A process and its descendants, and the memory they hold, read from /proc (Linux): what the
benchmarks and tests measure a server, a pool or one student's sandbox by.

    pss_mib(tree(pid))      # the proportional set size of pid and all it started, MiB
    cpu_seconds(pid)        # its CPU seconds so far
"""
from __future__ import annotations

import os


def parent_of(pid: int) -> int | None:
    try:
        return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def tree(pid: int) -> list[int]:
    """`pid` and every process under it, parents first."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            parent = parent_of(int(name))
            if parent is not None:
                children.setdefault(parent, []).append(int(name))
    out, todo = [], [pid]
    while todo:
        q = todo.pop()
        out.append(q)
        todo.extend(children.get(q, []))
    return out


def cpu_seconds(pid: int, children: bool = False) -> float:
    """CPU seconds (user + system) of one process, with its waited-for children's if `children`
    (0.0 if it is gone)."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if children else 0)
    except (OSError, IndexError, ValueError):
        return 0.0
    return ticks / _TICK


_TICK = os.sysconf("SC_CLK_TCK")


def memory_kib(pid: int) -> dict[str, int]:
    """{"Rss": KiB, "Pss": KiB} of one process ({} if it is gone)."""
    try:
        return {line.split(":")[0]: int(line.split()[1]) for line in open(f"/proc/{pid}/smaps_rollup")
                if line.startswith(("Rss:", "Pss:"))}
    except (OSError, IndexError, ValueError):
        return {}


def pss_mib(pids: list[int]) -> float:
    return sum(memory_kib(p).get("Pss", 0) for p in pids) / 1024
