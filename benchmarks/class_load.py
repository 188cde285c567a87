"""A class of students on one server (not a test: it prints figures).

Starts `streamlit run app/main.py` as a class server (TLENS_CLASS=1: one workspace and one own
sandbox per browser) and drives N real sessions over Streamlit's own websocket protocol, as the
browser speaks it (nothing is drawn: the figures are the server's). What each student compiles
and how a click is timed and split: benchmarks/class_clients.py. In one run:
  alone  one warm student at a time on an idle server (their page open, their sandbox started),
         for a sample of the class's requests (--alone): click -> panels; its median is "one
         warm page"
  class  every student opens their page, the server settles (its CPU idle: the own sandboxes
         started), then all press Compile at once
Printed: completed/failed, click -> panels p50/p95 per kind, the split of a click (page, queue,
worker start, compile, analysis, render), the **floor** (the class's summed compile CPU seconds,
each request's own worker CPU as the server measured it, / cores) and the goal line
`goal: p95 <= 1.3 x floor + one warm page = N s: met`, the queue positions shown, and the
memory (RSS and PSS by kind; per live student).

    .venv/bin/python benchmarks/class_load.py [--sessions 30] [--workers N] [--timeout 60]
                                              [--replicas 4,1] [--alone 10] [--profile F]
                                              [--alone-only] [--libops 3]
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from class_clients import USER_HEADER, WELL_BEHAVED, class_plan, session_ws, split
from inspectors.process import proctree
from inspectors.base.settings import default_workers
from tests_helpers import load  # (benchmarks/tests_helpers.py)

ROOT = Path(__file__).resolve().parents[1]
free_port = load("browser").free_port

def memory_by_kind(pid: int) -> dict[str, list[tuple[float, float]]]:
    """(RSS, PSS) in MiB of each process under `pid` (itself included), by kind: the Streamlit
    servers, the compile workers (the pool's and the students' own), nginx, the rest (bwrap)."""
    out: dict[str, list[tuple[float, float]]] = {}
    for q in _tree(pid):
        try:
            cmd = open(f"/proc/{q}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
            roll = proctree.memory_kib(q)
        except OSError:
            continue
        kind = ("other" if cmd.split(" ", 1)[0].endswith("bwrap")          # the sandbox around a worker
                else "worker" if "inspectors.compile.worker_main" in cmd else "server" if "streamlit" in cmd
                else "nginx" if "nginx" in cmd else "other")
        out.setdefault(kind, []).append((roll.get("Rss", 0) / 1024, roll.get("Pss", 0) / 1024))
    return out


def describe_memory(by_kind: dict[str, list[tuple[float, float]]]) -> str:
    parts = []
    for kind in ("server", "worker", "nginx", "other"):
        xs = by_kind.get(kind)
        if xs:
            parts.append(f"{len(xs)} {kind}{'s' if len(xs) > 1 else ''} RSS {sum(r for r, _ in xs):.0f} MiB, "
                         f"PSS {sum(p for _, p in xs):.0f} MiB")
    return ", ".join(parts)


def total_pss(by_kind) -> float:
    return sum(p for xs in by_kind.values() for _, p in xs)


def start_server(env: dict, replicas: int = 1) -> tuple[subprocess.Popen, str, Path]:
    """One Streamlit process, or `replicas` of them behind nginx (deploy/serve_class.py: the
    machine's TLENS_WORKERS split over them, one result cache and workspace folder)."""
    port = free_port()
    log = ROOT / "artifacts" / f"class-load-{port}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    if replicas == 1:
        cmd = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"),
               "--server.port", str(port), "--server.headless", "true"]
    else:
        cmd = [sys.executable, str(ROOT / "deploy" / "serve_class.py"), "--replicas", str(replicas),
               "--port", str(port), "--first-port", "0", "--state-dir", str(ROOT / "artifacts" / f"serve-class-{port}")]
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, **env}, stdout=open(log, "wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    import urllib.request
    for _ in range(360):
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode} (log: {log})")
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).status == 200:
                return proc, url, log
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"server did not start (log: {log})")


def run(plan: list[tuple[str, int]], url: str, root: Path, timeout_s: float, pid: int | None,
        at_click: dict | None = None) -> list[dict]:
    """The sessions of `plan` at once: every page opened, the server settled (`pid`'s processes
    idle: the students' own sandboxes started), then every Compile pressed. `at_click` gets the
    CPU by kind (cpu_by_kind) at the moment the clicks go out."""
    async def go():
        gate, opened = asyncio.Event(), []
        tasks = [asyncio.create_task(session_ws(url, root, k, i, timeout_s, gate, opened)) for k, i in plan]
        while len(opened) < len(plan) and not all(t.done() for t in tasks):
            await asyncio.sleep(0.2)
        if pid is not None:
            await asyncio.to_thread(wait_idle, pid)
            if at_click is not None:
                at_click.update(cpu_by_kind(pid))
        gate.set()
        if pid is not None and at_click is not None:     # the CPU when the last well-behaved answer is in
            await asyncio.gather(*(t for t, (kind, _) in zip(tasks, plan) if kind in WELL_BEHAVED))
            at_click["done"] = cpu_by_kind(pid)
        return await asyncio.gather(*tasks)
    return asyncio.run(go())


def wait_idle(pid: int, below: float = 0.3, hold_s: float = 2.0, limit_s: float = 300.0) -> float:
    """Until the processes under `pid` use less than `below` of a core for `hold_s`; the seconds waited."""
    t0 = last_t = time.perf_counter()
    last, calm = _cpu_seconds(pid), 0.0
    while time.perf_counter() - t0 < limit_s:
        time.sleep(0.5)
        now, cpu = time.perf_counter(), _cpu_seconds(pid)
        calm = calm + (now - last_t) if (cpu - last) / (now - last_t) < below else 0.0
        last, last_t = cpu, now
        if calm >= hold_s:
            break
    return time.perf_counter() - t0


def cpu_by_kind(pid: int) -> dict[str, float]:
    """CPU seconds used so far by the processes under `pid`, by kind (server, worker, other)."""
    out = {}
    for q in _tree(pid):
        try:
            cmd = open(f"/proc/{q}/cmdline", "rb").read()
        except OSError:
            continue
        kind = "worker" if b"inspectors.compile.worker_main" in cmd else "server" if b"streamlit" in cmd else "other"
        out[kind] = out.get(kind, 0.0) + proctree.cpu_seconds(q, children=True)
    return out


def _cpu_seconds(pid: int) -> float:
    return sum(proctree.cpu_seconds(q) for q in _tree(pid))


def _tree(pid: int) -> list[int]:
    return proctree.tree(pid)


@contextlib.contextmanager
def warm_server(env: dict, replicas: int = 1):
    """A fresh server (its own workspace and caches), its first page opened (a compile of a
    kernel the class does not ask for) so that the pool starts and the server has imported what
    it draws, and its workers idle."""
    root = Path(tempfile.mkdtemp(prefix="tlens-class-load-"))
    cache = Path(tempfile.mkdtemp(prefix="tlens-class-cache-"))
    proc, url, log = start_server({**env, "TLENS_WORKSPACE_DIR": str(root),
                                   "TLENS_TRITON_CACHE_DIR": str(cache / "triton")}, replicas)
    try:
        run([("warm", 0)], url, root, 60, None)
        wait_idle(proc.pid)
        yield proc, url, log, root
    finally:
        os.killpg(proc.pid, 9)
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)


def profiler(pid: int, out: Path) -> subprocess.Popen:
    """py-spy sampling the server process until interrupted: the thread holding the GIL (the
    server is one Python process: what holds the GIL is what every session waits on)."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    out.parent.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([spy, "record", "--pid", str(pid), "--rate", "50", "--gil", "--format", "raw",
                             "--output", str(out), "--nonblocking"],
                            stdout=subprocess.DEVNULL, stderr=open(str(out) + ".log", "wb"))


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else float("nan")


def alone_sample(plan: list[tuple[str, int]], k: int) -> list[tuple[str, int]]:
    """`k` of the plan's well-behaved requests, spread over it (own files and library kernels)."""
    good = [job for job in plan if job[0] in WELL_BEHAVED]
    step = max(1, len(good) // max(1, k))
    return good[::step][:k]


def report(results: list[dict], alone: list[dict], wall: float, cores: int, pool: int, args, log: Path,
           label: str) -> bool:
    """Prints one class's figures beside the alone baseline; True if none failed and the goal is met."""
    good = [r for r in results if r["kind"] in WELL_BEHAVED]
    done = [r["seconds"] for r in good if r["status"] == "ok"]
    bad = [r for r in results if r["status"] == "failed"]
    print(f"class_load: {args.sessions} sessions, {cores} cores, {pool} compile workers, compile timeout "
          f"{args.timeout:g} s, {label}, server log {log.name}")
    solo = [r["seconds"] for r in alone if r["status"] == "ok"]
    page = statistics.median(solo) if solo else float("nan")
    print(f"alone (one warm student at a time, {len(alone)} of the class's requests): {len(solo)}/{len(alone)} "
          f"completed; click->panels p50 {page:.2f} s, p95 {pct(solo, 0.95):.2f} s, max {max(solo or [0]):.2f} s")
    print(f"class: {len(done)}/{len(good)} well-behaved completed in {wall:.0f} s; click->panels p50 "
          f"{statistics.median(done or [0]):.2f} s, p95 {pct(done, 0.95):.2f} s, max {max(done or [0]):.2f} s")
    for what in ("block", "strided", "new", "library", "libop"):
        xs = [r["seconds"] for r in good if r["what"] == what and r["status"] == "ok"]
        if xs:
            print(f"  {what:<8} {len(xs):>4} clicks: p50 {statistics.median(xs):.2f} s, p95 {pct(xs, 0.95):.2f} s")
    parts = [p for p in (split(r) for r in good if r["status"] == "ok") if p]
    if parts:
        print(f"  one click, split ({len(parts)} clicks; p50 / p95 s): " + ", ".join(
            f"{k} {statistics.median(p[k] for p in parts):.2f} / {pct([p[k] for p in parts], 0.95):.2f}"
            for k in parts[0]))
    # the work: each completed compile's worker CPU (a hang's is the server's time limit, not
    # work): in a student's own sandbox the job's whole CPU there (its fork, the job, its answer
    # and exit, the sweep after it: "CPU with its sandbox"), on a pool worker the job's own
    timed = [r["timings"] for r in good if r["status"] == "ok" and r["timings"]]
    inside = sum(t.get("CPU", 0.0) for t in timed)
    cpu = [t.get("CPU with its sandbox", t.get("CPU", 0.0)) for t in timed]
    floor = sum(cpu) / cores
    goal = 1.3 * floor + page
    met = bool(done) and pct(done, 0.95) <= goal and len(done) == len(good)
    print(f"floor: the class's compile CPU {sum(cpu):.1f} s ({len(cpu)} completed compiles, each its worker's "
          f"CPU for it, its tools' and its sandbox's fork and sweep included; inside the jobs alone "
          f"{inside:.1f} s) / {cores} cores = {floor:.2f} s")
    print(f"goal: p95 <= 1.3 x floor + one warm page = 1.3 x {floor:.2f} + {page:.2f} = {goal:.2f} s: "
          f"{'met' if met else 'NOT met'} (p95 {pct(done, 0.95):.2f} s)")
    shown = [r for r in results if r["queue"]]
    print(f"queue shown to {len(shown)}/{len(results)} sessions"
          + (f"; positions shown: first {statistics.median([r['queue'][0] for r in shown]):.0f} (median), "
             f"highest {max(max(r['queue']) for r in shown)}" if shown else ""))
    for kind in ("hang", "huge"):
        rs = [r for r in results if r["kind"] == kind]
        print(f"{kind}: " + ", ".join(f"{r['status']} after {r['seconds']:.1f} s" for r in rs))
    print(f"failed: {len(bad)}" + "".join(f"\n  {r['kind']} {r['query']}: {r['detail']}" for r in bad), flush=True)
    return not bad and met


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--workers", type=int, default=0, help="TLENS_WORKERS (0: the server's default): the "
                                                           "machine's, split over the processes")
    ap.add_argument("--timeout", type=float, default=60.0, help="TLENS_COMPILE_TIMEOUT")
    ap.add_argument("--libops", type=int, default=0, help="own files that are a multi-launch op instead "
                    "(tests/snippets/streaming/many_launches.py: 11 launches)")
    ap.add_argument("--alone", type=int, default=10, help="how many of the class's requests the alone baseline times")
    ap.add_argument("--replicas", default="1",
                    help="Streamlit processes behind nginx (deploy/serve_class.py; 1: one process, no proxy); "
                         "a list, e.g. 4,1: the same class against each, one after another, beside one baseline")
    ap.add_argument("--profile", type=Path, default=None,
                    help="record the class server's Python stacks with py-spy during the class (raw "
                         "collapsed stacks to this file) and print the top of the profile (one process only)")
    ap.add_argument("--alone-only", action="store_true", help="the alone baseline only (a quick look at one click's cost)")
    args = ap.parse_args()
    env = {"TLENS_CLASS": "1", "TLENS_COMPILE_TIMEOUT": str(args.timeout), "TLENS_USER_HEADER": USER_HEADER}
    if args.workers:
        env["TLENS_WORKERS"] = str(args.workers)
    plan = class_plan(args.sessions, args.libops)
    pool = args.workers or default_workers()              # what the server chose on this machine
    cores = len(os.sched_getaffinity(0))
    # Alone: a sample of the class's well-behaved requests, each by itself: its page opened, the
    # server settled, Compile pressed (a server of its own: none of the class's results cached).
    with warm_server(env) as (proc, url, _, root):
        alone, per_click = [], []
        for job in alone_sample(plan, args.alone):
            at_click: dict = {}
            alone += run([job], url, root, args.timeout, proc.pid, at_click)
            wait_idle(proc.pid, hold_s=1.0)      # the click's whole run, its last panels included
            r, done = alone[-1], cpu_by_kind(proc.pid)
            per_click.append({k: done.get(k, 0.0) - at_click.get(k, 0.0) for k in ("server", "worker")})
            print(f"alone {len(alone)}: {r['what']} {r['status']} {r['seconds']:.2f} s (CPU: server "
                  f"{per_click[-1]['server']:.2f} s, worker {per_click[-1]['worker']:.2f} s) {r['detail']}", flush=True)
        print("alone, one click's CPU (median): " + ", ".join(
            f"{k} {statistics.median(c[k] for c in per_click):.2f} s" for k in ("server", "worker")), flush=True)
    all_ok = True
    for n, replicas in enumerate(int(r) for r in ("" if args.alone_only else args.replicas).split(",") if r):
        label = "one process" if replicas == 1 else f"{replicas} processes behind nginx (deploy/serve_class.py)"
        with warm_server(env, replicas) as (proc, url, log, root):
            before = memory_by_kind(proc.pid)
            spy = profiler(proc.pid, args.profile) if args.profile and replicas == 1 else None
            t_class, cpu0, at_click = time.perf_counter(), cpu_by_kind(proc.pid), {}
            results = run(plan, url, root, args.timeout, proc.pid, at_click)
            wall = time.perf_counter() - t_class
            cpu1, after = cpu_by_kind(proc.pid), memory_by_kind(proc.pid)
            if spy is not None:
                spy.send_signal(2)           # py-spy writes its file on SIGINT
                spy.wait(60)
        if n:
            print()
        all_ok &= report(results, alone, wall, cores, pool, args, log, label)
        workers = after.get("worker", [])
        live = max(1, len(workers) - pool)                 # the pool's workers, then one per student
        print("CPU used from the first page to the last answer (the pages' opening, the own sandboxes' "
              "start, the hangs at the lowest priority included): " + ", ".join(
                  f"{k} {cpu1.get(k, 0) - cpu0.get(k, 0):.1f} s" for k in ("server", "worker", "other")))
        done = at_click.get("done", cpu1)
        clicks = {k: done.get(k, 0) - at_click.get(k, 0) for k in ("server", "worker", "other")}
        print("CPU used from the clicks to the last well-behaved answer (the hangs' part included): "
              + ", ".join(f"{k} {v:.1f} s" for k, v in clicks.items())
              + f"; server's and workers' / {cores} cores = {(clicks['server'] + clicks['worker']) / cores:.2f} s")
        print(f"memory before the class: {describe_memory(before)}")
        print(f"memory after the class: {describe_memory(after)}; total PSS {total_pss(after):.0f} MiB; "
              f"per live student (own sandboxes' PSS, bwrap included / {live}): "
              f"{(sum(p for _, p in workers) + sum(p for _, p in after.get('other', []))) / live:.0f} MiB", flush=True)
        if spy is not None:
            from profile_top import read, tables
            print(f"\nprofile of the class server during the class (py-spy, 50 Hz, {args.profile}):")
            print(tables(read(args.profile), 25), flush=True)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
