"""A class of students on one server (not a test: it prints figures).

Starts `streamlit run app/main.py` as a class server (TLENS_CLASS=1: one workspace per browser)
and drives N real sessions at once. Most open a link that compiles a different library kernel /
target / num_warps (`/?kernel=...&target=...&num_warps=...&run=1`: the page opens the kernel
and compiles it), 3 a kernel whose example() never returns and 1 a kernel that allocates 16 GiB
(their files are put in their own workspaces, found through the session's cookie). First one
session alone, for the baseline. Prints completed/failed counts, p50/p95 from opening the link
to the first stage panel, the same for the session alone, the queue positions the sessions were
shown, and the server's RSS (server + workers) before/after.

    .venv/bin/python benchmarks/class_load.py [--sessions 30] [--workers N] [--timeout 60]
                                              [--client ws|browser] [--replicas 4,1] [--profile F]

Two kinds of client, each a real Streamlit session with its own cookie:
  ws       (default) Streamlit's own websocket protocol, as the browser speaks it: a
           rerun_script BackMsg with the link's query string, then the ForwardMsgs the server
           sends are read. Nothing is drawn, so 30 of them cost this 2-core box almost nothing
           and the figures are the server's. "Panels shown" = the TTGIR stage panel's element
           arrived; its payload is decoded and checked: the kernel's file, the target and
           num_warps in the TTGIR must be what this session asked for (a wrong result fails).
  browser  a context of one headless Chromium each (all in one browser): "panels shown" = a
           TTGIR line (`module attributes`) visible. On 2 cores, 30 pages drawing at once take
           most of the CPU the server needs: the figures are then the browsers' as much as the
           server's.
A hang or the allocation is done when its error is shown.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, unquote

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

import kernels
from app.components.stage_panel import payload as panel_payload
from inspectors.base.settings import default_workers
from inspectors.store.workspace import user_folder
from tests_helpers import load  # (benchmarks/tests_helpers.py)

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM, free_port = load("browser").CHROMIUM, load("browser").free_port

FOREVER = """import triton
import triton.language as tl

@triton.jit
def k(x_ptr):
    tl.store(x_ptr, 1.0)

def example():
    while True:
        pass
"""
HUGE = """import torch, triton
import triton.language as tl

@triton.jit
def k(x_ptr):
    tl.store(x_ptr, 1.0)

def example():
    x = torch.empty(4 * 2**30)          # 16 GiB of fp32
    k[(1,)](x)
"""
KERNELS = ("vector_add", "softmax", "matmul", "gelu", "bias_relu", "add_mul_act", "giou", "coalescing", "coarsening")
TARGETS = ("cuda%3A90", "cuda%3A80", "cuda%3A100")
WARPS = ("", "8", "2")


def well_behaved(i: int) -> str:
    k, t, w = KERNELS[i % len(KERNELS)], TARGETS[(i // len(KERNELS)) % len(TARGETS)], WARPS[(i // 3) % len(WARPS)]
    return f"kernel={k}&target={t}" + (f"&num_warps={w}" if w else "")


def rss_mb(pid: int) -> float:
    """RSS of a process and all its descendants, MiB (from /proc)."""
    children: dict[int, list[int]] = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                ppid = int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(p))
            except (OSError, IndexError, ValueError):
                pass
    total, todo = 0, [pid]
    while todo:
        q = todo.pop()
        try:
            for line in open(f"/proc/{q}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
        todo.extend(children.get(q, []))
    return total / 1024


def rss_by_kind(pid: int) -> dict[str, list[float]]:
    """RSS (MiB) of each process under `pid` (itself included), by kind: the Streamlit
    servers, the compile workers, nginx, the rest; and "<kind> peak": each one's peak RSS
    (VmHWM) since it started."""
    out: dict[str, list[float]] = {}
    todo, children = [pid], {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                ppid = int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(p))
            except (OSError, IndexError, ValueError):
                pass
    while todo:
        q = todo.pop()
        todo.extend(children.get(q, []))
        try:
            cmd = open(f"/proc/{q}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
            status = {line.split(":")[0]: line.split()[1] for line in open(f"/proc/{q}/status")
                      if line.startswith(("VmRSS:", "VmHWM:"))}
            kb, peak = int(status["VmRSS"]), int(status["VmHWM"])
        except (OSError, KeyError, IndexError, ValueError):
            continue
        kind = ("other" if cmd.split(" ", 1)[0].endswith("bwrap")          # the sandbox around a worker
                else "worker" if "inspectors.compile.worker" in cmd else "server" if "streamlit" in cmd
                else "nginx" if "nginx" in cmd else "other")
        out.setdefault(kind, []).append(kb / 1024)
        out.setdefault(f"{kind} peak", []).append(peak / 1024)
    return out


def describe_rss(by_kind: dict[str, list[float]]) -> str:
    parts = []
    for kind in ("server", "worker", "nginx", "other"):
        xs, peaks = by_kind.get(kind), by_kind.get(f"{kind} peak", [])
        if xs:
            parts.append(f"{len(xs)} {kind}{'s' if len(xs) > 1 else ''} {sum(xs):.0f} MiB"
                         + (f" (each: median {statistics.median(xs):.0f}, max {max(xs):.0f}; peak since start: "
                            f"median {statistics.median(peaks):.0f}, max {max(peaks):.0f})"
                            if kind in ("server", "worker") else ""))
    return ", ".join(parts)


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


async def session_browser(browser, url: str, root: Path, kind: str, query: str, timeout_s: float) -> dict:
    token = secrets.token_urlsafe(32)                 # 43 characters, as the app makes them
    ctx = await browser.new_context(viewport={"width": 1280, "height": 720})
    await ctx.add_cookies([{"name": "tlens_token", "value": token, "url": url}])
    query = _setup(root, kind, query, token)
    page = await ctx.new_page()
    t0 = time.perf_counter()
    status, detail = "failed", ""
    try:
        await page.goto(f"{url}/?{query}&run=1" if kind != "warm" else url, timeout=180_000)
        want = {"ok": "module attributes", "hang": WANT["hang"].decode(), "huge": WANT["huge"].decode(),
                "warm": "Compile"}[kind]
        await page.get_by_text(want).first.wait_for(timeout=timeout_s * 1000 * 5)
        status = "ok" if kind == "ok" else "expected error"
    except Exception as e:  # noqa: BLE001 - counted and printed
        detail = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
    seconds = time.perf_counter() - t0
    await ctx.close()
    return {"kind": kind, "query": query, "status": status, "seconds": seconds, "detail": detail, "queue": []}



WANT = {"hang": b"took longer than", "huge": b"memory"}
# A fresh server's first page compiles and shows a kernel the class does not ask for, as
# deploy/serve_class.py does for each of its processes: imports done before the class.
WARM_QUERY = "kernel=vector_add&target=cuda%3A90&num_warps=1&run=1"
QUEUE_RE = re.compile(rb"In the queue: (\d+) compile")
COMPILED_RE = re.compile(rb"compiled in ([\d.]+) s")          # the summary line: the worker's time


def _setup(root: Path, kind: str, query: str, token: str) -> str:
    """A misbehaving session's kernel file, put in its own workspace; the link that opens it."""
    if kind in ("ok", "warm"):
        return query
    folder = user_folder(root, f"browser:{token}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{kind}.py").write_text(FOREVER if kind == "hang" else HUGE)
    return f"kernel=ws%3A{kind}.py&target=cuda%3A90"


def check_panel(blob: bytes, query: str) -> str:
    """"" if the TTGIR panel is what the link asked for (a kernel of that library file, the
    target, num_warps), else what is wrong."""
    q = {k: v[0] for k, v in parse_qs(query).items()}
    text = "\n".join(panel_payload.decode(blob)["lines"])
    jitted = re.findall(r"@triton\.jit[^\n]*\n\s*def (\w+)", kernels.get(q["kernel"]).source())
    func = re.search(r"tt\.func public @(\w+)", text)
    attrs = next((line for line in text.splitlines() if line.startswith("module attributes")), "")
    problems = []
    if not func or func.group(1) not in jitted:
        problems.append(f"kernel {func.group(1) if func else '?'} is not one of {kernels.get(q['kernel']).filename}")
    if f'ttg.target = "{unquote(q["target"])}"' not in attrs:
        problems.append(f"target ({attrs[:120]})")
    if "num_warps" in q and f'"ttg.num-warps" = {q["num_warps"]} :' not in attrs:
        problems.append(f"num_warps ({attrs[:120]})")
    return ", ".join(problems)


async def session_ws(url: str, root: Path, kind: str, query: str, timeout_s: float) -> dict:
    """One session over Streamlit's websocket: the page's first run with the link's query
    string, then every ForwardMsg read until the TTGIR panel (or the expected error) arrives."""
    token = secrets.token_urlsafe(32)                 # 43 characters, as the app makes them
    query = _setup(root, kind, query, token)
    status, detail, queue_seen, compiled = "failed", "", [], None
    t0 = t_end = time.perf_counter()
    try:
        async with websockets.connect(url.replace("http://", "ws://") + "/_stcore/stream",
                                      subprotocols=["streamlit"], max_size=None, open_timeout=180, close_timeout=2,
                                      additional_headers={"Cookie": f"tlens_token={token}"}) as ws:
            msg = BackMsg()
            msg.rerun_script.query_string = f"{query}&run=1" if kind != "warm" else WARM_QUERY
            await ws.send(msg.SerializeToString())
            deadline = t0 + timeout_s * 5
            finished_at = None
            while status == "failed" and not detail:
                t_end = time.perf_counter()
                wait = deadline - time.perf_counter()
                if finished_at is not None:            # a run ended without the panels: another may follow
                    wait = min(wait, finished_at + 5 - time.perf_counter())
                try:
                    raw = await asyncio.wait_for(ws.recv(), max(wait, 0.01))
                except asyncio.TimeoutError:
                    detail = "the run ended without panels" if finished_at else "timed out"
                    break
                t_end = time.perf_counter()           # the moment the answer arrived (not the close)
                fwd = ForwardMsg.FromString(raw)
                what = fwd.WhichOneof("type")
                if what == "script_finished":
                    if kind == "warm":                 # the page without a compile: drawn
                        status = "ok"
                    finished_at = time.perf_counter()
                    continue
                if what != "delta":
                    continue
                finished_at = None
                for n in QUEUE_RE.findall(raw):
                    queue_seen.append(int(n))
                for c in COMPILED_RE.findall(raw):
                    compiled = float(c)
                el = fwd.delta.new_element if fwd.delta.WhichOneof("type") == "new_element" else None
                if el is None:
                    continue
                if kind in WANT:
                    if WANT[kind] in raw:
                        status = "expected error"
                    continue
                if el.WhichOneof("type") == "exception":
                    detail = f"exception: {el.exception.message[:160]}"
                elif el.WhichOneof("type") == "alert" and el.alert.format == el.alert.ERROR:
                    detail = f"error: {el.alert.body[:160]}"
                elif el.WhichOneof("type") == "bidi_component" and \
                        el.bidi_component.component_name == "tlens_stage_panel":
                    blob = el.bidi_component.bytes
                    if panel_payload.decode(blob)["stage"] == "ttgir":
                        wrong = check_panel(blob, query)
                        status, detail = ("ok", "") if not wrong else ("failed", f"wrong result: {wrong}")
    except Exception as e:  # noqa: BLE001 - counted and printed
        detail = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
    return {"kind": kind, "query": query, "status": status, "seconds": t_end - t0,
            "detail": detail, "queue": queue_seen, "compiled": compiled}


def class_plan(n: int) -> list[tuple[str, str]]:
    """3 hangs, 1 huge allocation, and n - 4 well-behaved sessions, each a different request."""
    return [("hang", "")] * 3 + [("huge", "")] + [("ok", well_behaved(i)) for i in range(n - 4)]


def run(plan: list[tuple[str, str]], url: str, root: Path, timeout_s: float, client: str) -> list[dict]:
    """The sessions of `plan` (kind, query) at once."""
    if client == "ws":
        async def go_ws():
            return await asyncio.gather(*(session_ws(url, root, k, q, timeout_s) for k, q in plan))
        return asyncio.run(go_ws())
    from playwright.async_api import async_playwright

    async def go():
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            out = await asyncio.gather(*(session_browser(browser, url, root, k, q, timeout_s) for k, q in plan))
            await browser.close()
            return out
    return asyncio.run(go())


@contextlib.contextmanager
def warm_server(env: dict, client: str, replicas: int = 1):
    """A fresh server (its own workspace and caches), its first page opened (a compile of a
    kernel the class does not ask for) so that the pool starts and the server has imported what
    it draws, and time for its workers to import torch and triton."""
    root = Path(tempfile.mkdtemp(prefix="tlens-class-load-"))
    cache = Path(tempfile.mkdtemp(prefix="tlens-class-cache-"))
    proc, url, log = start_server({**env, "TLENS_WORKSPACE_DIR": str(root),
                                   "TLENS_TRITON_CACHE_DIR": str(cache / "triton")}, replicas)
    try:
        run([("warm", "")], url, root, 60, client)
        time.sleep(20)
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


def report(results: list[dict], alone: list[dict], wall: float, before: float, after: float, pool: int,
           args, log: Path, label: str) -> bool:
    """Prints one class's figures beside the alone baseline; True if none failed."""
    ok = [r for r in results if r["kind"] == "ok"]
    good = [r["seconds"] for r in ok if r["status"] == "ok"]
    bad = [r for r in results if r["status"] == "failed"]
    print(f"class_load: {args.sessions} sessions ({args.client} clients), {os.cpu_count()} cores, "
          f"{pool} compile workers, compile timeout {args.timeout:g} s, {label}, server log {log.name}")
    solo = [r["seconds"] for r in alone if r["status"] == "ok"]
    print(f"alone (each of the {len(alone)} requests by itself, one after another): {len(solo)}/{len(alone)} "
          f"completed; click->panels p50 {statistics.median(solo):.1f} s, p95 {pct(solo, 0.95):.1f} s, "
          f"max {max(solo):.1f} s, sum {sum(solo):.1f} s" if solo else "alone: none completed")
    slowest = sorted(alone, key=lambda r: -r["seconds"])[:3]
    print("  slowest alone: " + ", ".join(f"{r['query']} {r['seconds']:.1f} s (worker {r.get('compiled')} s)"
                                          for r in slowest))
    print(f"well-behaved: {len(good)}/{len(ok)} completed; click->panels p50 {statistics.median(good):.1f} s, "
          f"p95 {pct(good, 0.95):.1f} s, max {max(good):.1f} s; the class took {wall:.0f} s"
          if good else "well-behaved: none completed")
    if good and solo:
        # the queue wait the pool implies: the class's work (the sum of the alone times) spread
        # over `pool` workers
        queue_wait = sum(solo) / pool
        goal = 4 * pct(solo, 0.95) + queue_wait
        print(f"goal: p95 <= 4 x p95 alone + queue wait = 4 x {pct(solo, 0.95):.1f} s + {sum(solo):.1f} s / {pool} "
              f"workers = {goal:.1f} s: {'met' if pct(good, 0.95) <= goal else 'NOT met'} "
              f"(p95/goal {pct(good, 0.95) / goal:.2f})")
    shown = [r for r in results if r["queue"]]
    if args.client == "ws":
        print(f"queue shown to {len(shown)}/{len(results)} sessions"
              + (f"; positions shown: first {statistics.median([r['queue'][0] for r in shown]):.0f} (median), "
                 f"highest {max(max(r['queue']) for r in shown)}" if shown else ""))
    for kind in ("hang", "huge"):
        rs = [r for r in results if r["kind"] == kind]
        print(f"{kind}: " + ", ".join(f"{r['status']} after {r['seconds']:.1f} s" for r in rs))
    print(f"failed: {len(bad)}" + "".join(f"\n  {r['kind']} {r['query']}: {r['detail']}" for r in bad))
    print(f"server RSS (server + workers{' + nginx' if 'nginx' in label else ''}): before {before:.0f} MiB, "
          f"after {after:.0f} MiB", flush=True)
    return not bad


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--workers", type=int, default=0, help="TLENS_WORKERS (0: the server's default): the "
                                                           "machine's, split over the processes")
    ap.add_argument("--timeout", type=float, default=60.0, help="TLENS_COMPILE_TIMEOUT")
    ap.add_argument("--client", choices=("ws", "browser"), default="ws")
    ap.add_argument("--replicas", default="1",
                    help="Streamlit processes behind nginx (deploy/serve_class.py; 1: one process, no proxy); "
                         "a list, e.g. 4,1: the same class against each, one after another, beside one baseline")
    ap.add_argument("--profile", type=Path, default=None,
                    help="record the class server's Python stacks with py-spy during the class (raw "
                         "collapsed stacks to this file) and print the top of the profile (one process only)")
    args = ap.parse_args()
    env = {"TLENS_CLASS": "1", "TLENS_COMPILE_TIMEOUT": str(args.timeout)}
    if args.workers:
        env["TLENS_WORKERS"] = str(args.workers)
    plan = class_plan(args.sessions)
    pool = args.workers or default_workers()              # what the server chose on this machine
    # Alone: each of the class's well-behaved requests by itself, one after another, on a server
    # of its own (so that the class's server has none of them in its result cache).
    with warm_server(env, args.client) as (_, url, _, root):
        alone = [run([job], url, root, args.timeout, args.client)[0] for job in plan if job[0] == "ok"]
    all_ok = True
    for n, replicas in enumerate(int(r) for r in args.replicas.split(",")):
        label = "one process" if replicas == 1 else f"{replicas} processes behind nginx (deploy/serve_class.py)"
        with warm_server(env, args.client, replicas) as (proc, url, log, root):
            before = rss_mb(proc.pid)
            spy = profiler(proc.pid, args.profile) if args.profile and replicas == 1 else None
            t_class = time.perf_counter()
            results = run(plan, url, root, args.timeout, args.client)
            wall = time.perf_counter() - t_class
            after = rss_mb(proc.pid)
            by_kind = rss_by_kind(proc.pid)
            if spy is not None:
                spy.send_signal(2)           # py-spy writes its file on SIGINT
                spy.wait(60)
        if n:
            print()
        all_ok &= report(results, alone, wall, before, after, pool, args, log, label)
        print(f"  resident after the class: {describe_rss(by_kind)}", flush=True)
        if spy is not None:
            from profile_top import read, tables
            print(f"\nprofile of the class server during the class (py-spy, 50 Hz, {args.profile}):")
            print(tables(read(args.profile), 25), flush=True)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
