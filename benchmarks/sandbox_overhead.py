"""What the sandbox costs a compile: the same compiles with and without it, side by side in one run.

    .venv/bin/python benchmarks/sandbox_overhead.py [--reps 5] [--out benchmarks/results/sandbox_overhead.txt]

For the library's vector add and matmul (code of ours, whose kernels the sandboxed engine keeps
in its trusted cache), medians over --reps, the two engines alternating:
  cold        first compile of the kernel (an empty Triton cache for that file name)
  warm        the same compile again (Triton's cache holds it): what a student waits for when
              a worker is ready. In the sandbox this is a fresh sandbox, with the trusted
              cache's kernels linked in read-only.
  start       a worker's start until it is ready (import torch and triton, warm-up compile):
              the sandbox pays it once per job (no job's process serves another), off the
              student's path while the pool has a ready worker, on it when jobs come faster.
  bwrap       bubblewrap alone: `true` in the sandbox
  edited      a student's own edited file, click -> result, --reps edits of each kernel, each
              mode's back to back (no wait for a worker in between): a class server (sandboxed, the student's
              own warm sandbox, started when the page opened: `prewarm`) vs the single-user
              app (one warm unsandboxed worker) vs a class server without own sandboxes
              (TLENS_OWN_SANDBOXES=0: a fresh sandbox per job, the design before issue 32)
Goals: warm compile in the sandbox at most 10 % or 30 ms slower than without (issue 19); an
edited file on a class server within 1.2 x or + 0.15 s of the single-user app (issue 32).
The PSS of one idle own sandbox (settings.OWN_SANDBOX_MIB) is printed last.
"""
from __future__ import annotations

import argparse
import dataclasses
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from inspectors.process import proctree, sandbox  # noqa: E402
from inspectors.base import settings as settings_mod  # noqa: E402
from inspectors.base.result import CompileRequest  # noqa: E402
from inspectors.compile.engine import Engine  # noqa: E402

KERNELS = ("vector_add", "matmul")


def _engine(sandboxed: bool, cache: Path, own: int = 0) -> Engine:
    s = dataclasses.replace(settings_mod.load(), triton_cache_dir=cache, workers=1, sandbox=sandboxed,
                            own_sandboxes=own)
    return Engine(s, workers=1, sandboxed=sandboxed)


def edit(source: str, n: int) -> str:
    """A student's edit of a library file: a line of their own in the kernel's body (a new
    kernel for Triton's cache: its key hashes the function's text)."""
    head, sep, rest = source.partition("@triton.jit\n")
    body_at = rest.index(":\n", rest.index("def ")) + 2
    return head + sep + rest[:body_at] + f"    # my edit {n}\n" + rest[body_at:]


def edited_rows(root: Path, reps: int) -> tuple[dict[str, list[float]], float]:
    """Click -> result of `reps` edits of each kernel in a row, per mode (see the docstring), and
    the PSS (MiB) of the class server's idle own sandbox."""
    modes = {"single-user": _engine(False, root / "e-plain"), "class server": _engine(True, root / "e-own", own=4),
             "class, no own": _engine(True, root / "e-fresh")}
    for e in modes.values():
        assert e.wait_ready(300)
    modes["class server"].prewarm("student")          # the page opened
    assert modes["class server"].wait_ready(300)
    times: dict[str, list[float]] = {m: [] for m in modes}
    # each mode's edits back to back (the next click as soon as the result is there), the modes
    # in one order for the first half of the edits and in the other for the second
    halves = (range(0, (reps + 1) // 2), range((reps + 1) // 2, reps))
    for half, order in zip(halves, (list(modes), list(reversed(modes)))):
        for mode in order:
            for e in modes.values():       # what another mode's block left starting (a fresh
                assert e.wait_ready(300)   # sandbox) is not this block's: between blocks only
            for n in half:
                for kernel in KERNELS:
                    source = edit((ROOT / "kernels" / f"{kernel}.py").read_text(), n)
                    t = time.perf_counter()
                    r = modes[mode].compile(CompileRequest(source=source, filename="mine.py", target="cuda:90"),
                                            session="student")
                    times[mode].append(time.perf_counter() - t)
                    assert r.ok, r.error
    pss = _pss_mib(modes["class server"].own.workers()[0].proc.pid)
    for e in modes.values():
        e.close()
    return times, pss


def _pss_mib(pid: int) -> float:
    """PSS of a process and its descendants (bwrap, the worker), MiB."""
    return proctree.pss_mib(proctree.tree(pid))


def _timed_compile(engine: Engine, source: str, filename: str) -> float:
    assert engine.wait_ready(300)        # a ready worker, as a student finds one in a quiet pool
    t = time.perf_counter()
    r = engine.compile(CompileRequest(source=source, filename=filename, target="cuda:90"), session="bench")
    dt = time.perf_counter() - t
    assert r.ok, r.error
    return dt


def _start_time(sandboxed: bool, cache: Path) -> float:
    t = time.perf_counter()
    e = _engine(sandboxed, cache)
    assert e.wait_ready(300)
    dt = time.perf_counter() - t
    e.close()
    return dt


def _bwrap_true() -> float:
    with tempfile.TemporaryDirectory() as d:
        argv = sandbox.wrap(["/bin/true"], sandbox.Jail(writable=(Path(d),)))
        t = time.perf_counter()
        subprocess.run(argv, check=True, env=sandbox.BWRAP_ENV)
        return time.perf_counter() - t


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    problem = sandbox.check()
    if problem:
        print(f"no sandbox here: {problem}")
        return 1
    root = Path(tempfile.mkdtemp(prefix="tlens-sbx-bench-"))
    engines = {mode: _engine(mode == "sandbox", root / mode) for mode in ("plain", "sandbox")}
    times: dict[tuple[str, str, str], list[float]] = {}
    for rep in range(args.reps):
        for kernel in KERNELS:
            source = (ROOT / "kernels" / f"{kernel}.py").read_text()
            for mode in (("plain", "sandbox") if rep % 2 == 0 else ("sandbox", "plain")):
                name = f"{kernel}_{rep}.py"       # a new file name: an empty cache folder for it
                times.setdefault((kernel, mode, "cold"), []).append(_timed_compile(engines[mode], source, name))
                times.setdefault((kernel, mode, "warm"), []).append(_timed_compile(engines[mode], source, name))
    version = engines["plain"].triton_version
    for e in engines.values():
        e.close()
    starts = {mode: [] for mode in ("plain", "sandbox")}
    for _ in range(max(2, args.reps // 2)):
        for mode in starts:
            starts[mode].append(_start_time(mode == "sandbox", root / f"start-{mode}"))
    bw = statistics.median(_bwrap_true() for _ in range(max(5, args.reps)))
    edits, pss = edited_rows(root, args.reps)

    med = lambda xs: statistics.median(xs)  # noqa: E731
    lines = [f"# sandbox_overhead: {platform.node()} ({len(__import__('os').sched_getaffinity(0))} cores), "
             f"bubblewrap {_bwrap_version()}, Triton {version}, "
             f"{args.reps} reps, medians; `.venv/bin/python benchmarks/sandbox_overhead.py --reps {args.reps}`",
             f"# process limit: {sandbox.describe()['process_limit']}",
             f"{'kernel':<12}{'compile':<8}{'plain s':>10}{'sandbox s':>11}{'ratio':>8}{'extra ms':>10}"]
    verdicts = []
    for kernel in KERNELS:
        for phase in ("cold", "warm"):
            a, b = med(times[(kernel, "plain", phase)]), med(times[(kernel, "sandbox", phase)])
            lines.append(f"{kernel:<12}{phase:<8}{a:>10.3f}{b:>11.3f}{b / a:>8.2f}{(b - a) * 1000:>10.0f}")
            if phase == "warm":
                verdicts.append((kernel, b <= a * 1.10 or b - a <= 0.030))
    a, b = med(starts["plain"]), med(starts["sandbox"])
    lines.append(f"{'worker':<12}{'start':<8}{a:>10.3f}{b:>11.3f}{b / a:>8.2f}{(b - a) * 1000:>10.0f}")
    lines.append(f"bwrap running `true`: {bw * 1000:.1f} ms")
    lines.append("goal (warm: sandbox <= plain × 1.10 or + 30 ms): " +
                 ", ".join(f"{k} {'met' if ok else 'NOT met'}" for k, ok in verdicts))
    one, own, fresh = (med(edits[m]) for m in ("single-user", "class server", "class, no own"))
    lines.append(f"edited file, class server vs single-user (click -> result, {len(edits['class server'])} edits "
                 f"of {' and '.join(KERNELS)}, medians): single-user {one:.3f} s, class server {own:.3f} s "
                 f"(ratio {own / one:.2f}, {(own - one) * 1000:+.0f} ms); without own sandboxes {fresh:.3f} s "
                 f"(ratio {fresh / one:.2f})")
    lines.append(f"goal (edited: class server <= single-user x 1.2 or + 0.15 s): "
                 f"{'met' if own <= one * 1.2 or own - one <= 0.15 else 'NOT met'}")
    lines.append(f"one idle own sandbox (bwrap + worker): PSS {pss:.0f} MiB "
                 f"(settings.OWN_SANDBOX_MIB = {settings_mod.OWN_SANDBOX_MIB})")
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


def _bwrap_version() -> str:
    try:
        return subprocess.run([sandbox.bwrap_path(), "--version"], capture_output=True, text=True).stdout.split()[-1]
    except (OSError, IndexError, TypeError):
        return "?"


if __name__ == "__main__":
    sys.exit(main())
