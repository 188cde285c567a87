"""What one script run costs the server, before and after a change (not a test: it prints
figures side by side).

For each tree (`--before REV`, checked out into a temporary git worktree, and this working
tree) a fresh one-process class server; one session opens a link that compiles a kernel, then
reruns its page `--reruns` times (what a click on a widget, a followed line or a keystroke
does). Per rerun: the server process's CPU time (its own, the compile workers excluded; from
/proc) and the wall time from the rerun message to the script's end. A new session joining:
the server CPU of one more session opening a link whose result is already cached (what each
further student of a class costs). Then the queue: the CPU time for `--waiting` waiting
sessions to each work out their queue position once after a dispatch (what every waiting
session does after every dispatch). Medians over the kernels of per-kernel means (/proc counts
CPU in 10 ms ticks); medians of the wall times.

    .venv/bin/python benchmarks/run_cost.py --before 17a9fed [--reruns 15] [--waiting 300]
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from tests_helpers import load  # (benchmarks/tests_helpers.py)

ROOT = Path(__file__).resolve().parents[1]
free_port = load("browser").free_port

LINKS = ("kernel=matmul&target=cuda%3A90", "kernel=softmax&target=cuda%3A80", "kernel=vector_add&target=cuda%3A100")
TICKS = os.sysconf("SC_CLK_TCK")

QUEUE = """
import random, sys, time
from collections import deque
from inspectors.compile.engine import Engine
from inspectors.compile.fairqueue import Ticket
n = int(sys.argv[1])
eng = Engine.__new__(Engine)
eng._queues, eng._served, eng._dispatches = {}, {}, 0
for name in ("_changes",):
    setattr(eng, name, 0)
eng._order = (-1, {})
for i in range(n):
    eng._queues[f"s{i}"] = deque([Ticket(f"s{i}")])
times = []
for _ in range(5):
    first = next(iter(eng._queues))                 # a dispatch: the head leaves the queue
    eng._queues.pop(first)
    eng._changes += 1
    t0 = time.process_time()
    for q in list(eng._queues.values()):
        eng._position(q[0])
    times.append(time.process_time() - t0)
print(sorted(times)[len(times) // 2])
"""


def cpu_s(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


@contextlib.contextmanager
def server(tree: Path):
    work = Path(tempfile.mkdtemp(prefix="tlens-run-cost-"))
    port = free_port()
    env = {**os.environ, "TLENS_CLASS": "1", "TLENS_WORKSPACE_DIR": str(work / "ws"),
           "TLENS_TRITON_CACHE_DIR": str(work / "cache" / "triton")}
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(tree / "app" / "main.py"),
                             "--server.port", str(port), "--server.headless", "true"], cwd=tree, env=env,
                            stdout=open(work / "server.log", "wb"), stderr=subprocess.STDOUT, start_new_session=True)
    import urllib.request
    try:
        for _ in range(240):
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).status == 200:
                    break
            except OSError:
                time.sleep(0.5)
        yield proc, f"ws://127.0.0.1:{port}/_stcore/stream"
    finally:
        os.killpg(proc.pid, 9)
        shutil.rmtree(work, ignore_errors=True)


async def until_finished(ws, timeout: float = 120) -> bool:
    """Reads ForwardMsgs until the script run ends; True if a TTGIR panel's element came."""
    panel = False
    while True:
        fwd = ForwardMsg.FromString(await asyncio.wait_for(ws.recv(), timeout))
        if fwd.WhichOneof("type") == "delta" and b"tlens_stage_panel" in fwd.SerializeToString():
            panel = True
        if fwd.WhichOneof("type") == "script_finished":
            return panel


async def joins(url: str, pid: int, link: str, n: int) -> list[float]:
    """Server CPU of n new sessions opening `link` (compile and show) one after another, its
    result already in the result cache: what each further student of a class costs."""
    cpu = []
    # One session stays connected, as in a class: Streamlit drops its compiled page scripts when
    # the last session leaves, and parsing them again would be counted for every join.
    holder = await websockets.connect(url, subprotocols=["streamlit"], max_size=None, open_timeout=120)
    first = BackMsg()
    first.rerun_script.query_string = ""
    await holder.send(first.SerializeToString())
    await until_finished(holder)
    c0 = cpu_s(pid)
    for _ in range(n):
        async with websockets.connect(url, subprotocols=["streamlit"], max_size=None, open_timeout=120,
                                      additional_headers={"Cookie": f"tlens_token={secrets.token_urlsafe(32)}"}) as ws:
            msg = BackMsg()
            msg.rerun_script.query_string = f"{link}&run=1"
            await ws.send(msg.SerializeToString())
            while not await until_finished(ws):
                pass
            await asyncio.sleep(0.3)
    cpu.append((cpu_s(pid) - c0) / n)                # the mean over n (10 ms ticks)
    await holder.close()
    return cpu


async def reruns(url: str, pid: int, link: str, n: int) -> tuple[list[float], list[float]]:
    token = secrets.token_urlsafe(32)
    async with websockets.connect(url, subprotocols=["streamlit"], max_size=None, open_timeout=120,
                                  additional_headers={"Cookie": f"tlens_token={token}"}) as ws:
        msg = BackMsg()
        msg.rerun_script.query_string = f"{link}&run=1"
        await ws.send(msg.SerializeToString())
        while not await until_finished(ws):           # the compile, then its panels
            pass
        await asyncio.sleep(1.0)
        wall = []
        c0 = cpu_s(pid)
        for _ in range(n):
            rerun = BackMsg()
            rerun.rerun_script.query_string = link
            t0 = time.perf_counter()
            await ws.send(rerun.SerializeToString())
            await until_finished(ws)
            wall.append(time.perf_counter() - t0)
            await asyncio.sleep(0.3)                  # what the run left for the event loop (sends)
        # /proc counts CPU in 10 ms ticks: the mean over the n runs, not one run at a time
        return [(cpu_s(pid) - c0) / n], wall


def measure(tree: Path, n: int, waiting: int) -> dict:
    out = {"cpu": [], "wall": []}
    with server(tree) as (proc, url):
        warm = BackMsg()
        warm.rerun_script.query_string = ""

        async def first():
            async with websockets.connect(url, subprotocols=["streamlit"], open_timeout=120) as ws:
                await ws.send(warm.SerializeToString())
                await until_finished(ws)
        asyncio.run(first())
        time.sleep(15)                                 # the workers import torch and Triton
        for link in LINKS:
            cpu, wall = asyncio.run(reruns(url, proc.pid, link, n))
            out["cpu"] += cpu
            out["wall"] += wall
            out["join"] = out.get("join", []) + asyncio.run(joins(url, proc.pid, link, n))
    q = subprocess.run([sys.executable, "-c", QUEUE, str(waiting)], cwd=tree, capture_output=True, text=True)
    out["queue"] = float(q.stdout) if q.returncode == 0 else float("nan")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="the commit to compare with")
    ap.add_argument("--reruns", type=int, default=15)
    ap.add_argument("--waiting", type=int, default=300)
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="tlens-before-"))
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base), args.before], cwd=ROOT, check=True)
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True).stdout.strip()
        dirty = " + uncommitted changes" if subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=ROOT).returncode else ""
        rows = [(f"before ({args.before})", measure(base, args.reruns, args.waiting)),
                (f"after ({head}{dirty})", measure(ROOT, args.reruns, args.waiting))]
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT)
    print(f"run_cost: one session's page rerun with a compiled kernel shown ({len(LINKS)} kernels x "
          f"{args.reruns} reruns; medians), {os.cpu_count()} cores")
    print(f"{'':28} {'server CPU / rerun':>19} {'wall / rerun':>13} {'CPU / new session':>18} "
          f"{'queue positions, ' + str(args.waiting) + ' waiting':>30}")
    for name, r in rows:
        print(f"{name:28} {1000 * statistics.median(r['cpu']):16.1f} ms {1000 * statistics.median(r['wall']):10.0f} ms "
              f"{1000 * statistics.median(r['join']):15.1f} ms {1000 * r['queue']:27.1f} ms")
    b, a = rows[0][1], rows[1][1]
    print(f"{'after / before':28} {statistics.median(a['cpu']) / statistics.median(b['cpu']):19.2f} "
          f"{statistics.median(a['wall']) / statistics.median(b['wall']):13.2f} "
          f"{statistics.median(a['join']) / statistics.median(b['join']):18.2f} {a['queue'] / b['queue']:30.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
