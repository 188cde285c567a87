"""A cgroup of its own for each sandbox, where the server may make one (root with a writable
cgroup file system): processes (`pids.max`: a fork bomb stops at the sandbox's limit, whatever
its user: Linux exempts root from RLIMIT_NPROC), memory, and an equal CPU share (the scheduler
shares the CPU between sandboxes, not between their threads). v1 hierarchies or v2.

    cgroup = Cgroup.create("tlens-abc-w3", limits)     # None where none can be made
    Popen(argv, preexec_fn=limits.preexec(cgroup))     # the child joins it before bwrap starts
    cgroup.kill()                                      # every task in it, then the folders
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

class Cgroup:
    """A cgroup of its own for one sandbox (v1 `pids` + `memory` hierarchies, or v2), where the
    server may make one: `pids.max` stops a fork bomb at the sandbox's own limit, whatever its
    user (Linux exempts root from RLIMIT_NPROC), and `kill()` ends every task in it."""

    def __init__(self, dirs: list[Path]):
        self.dirs = dirs

    @classmethod
    def create(cls, name: str, limits) -> "Cgroup | None":
        """The sandbox's cgroup in every hierarchy that holds one; None if the processes and memory
        limits could not be set (a CPU share alone is not worth a cgroup)."""
        dirs, limited = [], False
        for base, files, optional in _cgroup_bases():
            d = base / name
            try:
                d.mkdir(parents=True, exist_ok=True)
                for f, value in files(limits).items():
                    (d / f).write_text(str(value))
            except OSError:
                _rmdir(d)
                if optional:
                    continue
                for made in dirs:
                    _rmdir(made)
                return None
            dirs.append(d)
            limited = limited or not optional
        if not limited:
            for made in dirs:
                _rmdir(made)
            return None
        return cls(dirs)

    def attach(self, pid: int) -> None:
        for d in self.dirs:
            with open(d / "cgroup.procs", "w") as f:
                f.write(str(pid))

    def memory_bytes(self) -> int | None:
        """The memory its tasks hold now (tmpfs pages they wrote included), where it is counted."""
        for d in self.dirs:
            for f in ("memory.current", "memory.usage_in_bytes"):
                text = read_text(d / f).strip()
                if text.isdigit():
                    return int(text)
        return None

    def cpu_share(self, low: bool) -> None:
        """The lowest CPU share (a job past straggler_s: a hang must not take a compiling
        sandbox's share) or the usual one again. Where the kernel has it (5.15+), the group is
        also made idle (`cpu.idle`, SCHED_IDLE for its tasks): a share of 2 still let a hang take
        the core its weight made the balancer leave to it, CPU a class's compiles waited for
        (benchmarks/class_load.py; docs/09-benchmark-results.md#figures-behind-design-choices); an
        idle group's CPU counts as free for the next task to start on, and any other task
        preempts it at once."""
        files = (("cpu.shares", CPU_SHARES, 2), ("cpu.weight", CPU_WEIGHT, 1), ("cpu.idle", 0, 1))
        for d in self.dirs:       # an idle group's weight cannot be written (EINVAL): idle last, or first
            for f, usual, lowest in (files if low else files[::-1]):
                if (d / f).exists():
                    try:
                        (d / f).write_text(str(lowest if low else usual))
                    except OSError:
                        pass

    def pids(self) -> set[int]:
        out = set()
        for d in self.dirs:
            try:
                out |= {int(x) for x in (d / "cgroup.procs").read_text().split()}
            except (OSError, ValueError):
                pass
        return out

    def kill(self) -> None:
        for _ in range(50):
            pids = self.pids()
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
            import time
            time.sleep(0.02)
        for d in self.dirs:
            _rmdir(d)


def remove_named(prefix: str) -> int:
    """Every cgroup of ours whose name starts with `prefix` (a dead server's sandboxes'), its
    processes killed, removed. Returns how many folders went."""
    gone = 0
    for base, _limits, _optional in _cgroup_bases():
        try:
            found = [d for d in base.iterdir() if d.is_dir() and d.name.startswith(prefix)]
        except OSError:
            continue
        for d in found:
            Cgroup([d]).kill()
            gone += not d.exists()
    return gone


def _rmdir(d: Path) -> None:
    try:
        d.rmdir()
    except OSError:
        pass


@functools.lru_cache(maxsize=1)
def cgroup_root() -> list[tuple[Path, str]]:
    """(mount point, kind) of the hierarchies that can hold a sandbox: v1 `pids`/`memory`/`cpu`,
    or v2."""
    found = []
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return []
    for line in mounts:
        parts = line.split()
        if len(parts) < 4:
            continue
        point, fstype, opts = parts[1], parts[2], parts[3].split(",")
        if fstype == "cgroup" and ("pids" in opts or "memory" in opts or "cpu" in opts):
            found.append((Path(point), "pids" if "pids" in opts else "memory" if "memory" in opts else "cpu"))
        elif fstype == "cgroup2" and not any(k == "v1" for _, k in found):
            own = _own_cgroup_v2()
            base = Path(point) / own.lstrip("/")
            if (base / "cgroup.controllers").exists() and "pids" in (base / "cgroup.controllers").read_text():
                found.append((base, "v2"))
    v1 = [f for f in found if f[1] != "v2"]
    return v1 or found[:1]


def _own_cgroup_v2() -> str:
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return line[3:]
    except OSError:
        pass
    return "/"


# Every sandbox's CPU share, the same for all: the kernel's scheduler then shares the CPU between
# sandboxes, not between threads, so a job's 16 spinning threads get one sandbox's share and
# another student's single-threaded compile the same (cgroup v1 cpu.shares, v2 cpu.weight).
CPU_SHARES, CPU_WEIGHT = 1024, 100


def _cgroup_bases():
    """(folder, files to write for the limits, optional) per hierarchy."""
    base_name = f"tlens-{os.getuid()}"
    for point, kind in cgroup_root():
        if kind == "pids":
            yield point / base_name, lambda lim: {"pids.max": lim.processes}, False
        elif kind == "memory":
            yield point / base_name, lambda lim: {"memory.limit_in_bytes": lim.memory_mb << 20}, False
        elif kind == "cpu":
            yield point / base_name, lambda lim: {"cpu.shares": CPU_SHARES}, True
        else:
            for controllers in ("+pids +memory +cpu", "+pids +memory"):
                try:
                    (point / "cgroup.subtree_control").write_text(controllers)
                    break
                except OSError:
                    pass
            cpu = "cpu" in read_text(point / "cgroup.subtree_control").split()
            yield point / base_name, lambda lim: {"pids.max": lim.processes, "memory.max": lim.memory_mb << 20,
                                                  **({"cpu.weight": CPU_WEIGHT} if cpu else {})}, False


def read_text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
