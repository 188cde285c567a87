"""A class of students on one server (not a test: it prints figures).

Starts `streamlit run app/main.py` as a class server (TLENS_CLASS=1: one workspace per browser)
and drives N real sessions at once, each a Playwright browser context in one headless Chromium:
most compile a different library kernel / target / num_warps through a link
(`/?kernel=...&target=...&num_warps=...&run=1`, which opens the kernel and compiles it), 3 paste
a kernel whose example() never returns and 1 a kernel that allocates 16 GiB (their files are
put in their own workspaces, found through the browser's cookie). First one session alone, for
the baseline. Prints completed/failed counts, p50/p95 from opening the link to the first stage
panel, the same for the session alone, and the server's RSS (server + workers) before/after.

    .venv/bin/python benchmarks/class_load.py [--sessions 30] [--workers N] [--timeout 60]

"Panels shown" = a TTGIR line (`module attributes`) visible; a hang or the allocation is done
when its error is shown. Each session is a context of one Chromium (its own cookie), all started at once.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from browser import CHROMIUM, free_port  # noqa: E402
from inspectors.store.workspace import user_folder  # noqa: E402

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


def start_server(env: dict) -> tuple[subprocess.Popen, str, Path]:
    port = free_port()
    log = ROOT / "artifacts" / f"class-load-{port}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"),
                             "--server.port", str(port), "--server.headless", "true"],
                            cwd=ROOT, env={**os.environ, **env}, stdout=open(log, "wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    import urllib.request
    for _ in range(240):
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).status == 200:
                return proc, url, log
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"server did not start (log: {log})")


ALONE = "kernel=vector_add&target=cuda%3A120"        # not in the class's plan: no cached result


async def session(browser, url: str, root: Path, kind: str, query: str, timeout_s: float) -> dict:
    token = secrets.token_urlsafe(32)                 # 43 characters, as the app makes them
    ctx = await browser.new_context(viewport={"width": 1280, "height": 720})
    await ctx.add_cookies([{"name": "tlens_token", "value": token, "url": url}])
    if kind != "ok":
        folder = user_folder(root, f"browser:{token}")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{kind}.py").write_text(FOREVER if kind == "hang" else HUGE)
        query = f"kernel=ws%3A{kind}.py&target=cuda%3A90"
    page = await ctx.new_page()
    t0 = time.perf_counter()
    status, detail = "failed", ""
    try:
        await page.goto(f"{url}/?{query}&run=1" if kind != "warm" else url, timeout=180_000)
        want = {"ok": "module attributes", "hang": "took longer than", "huge": "memory", "warm": "Compile"}[kind]
        await page.get_by_text(want).first.wait_for(timeout=timeout_s * 1000 * 5)
        status = "ok" if kind == "ok" else "expected error"
    except Exception as e:  # noqa: BLE001 - counted and printed
        detail = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
    seconds = time.perf_counter() - t0
    await ctx.close()
    return {"kind": kind, "query": query, "status": status, "seconds": seconds, "detail": detail}


def run(n: int, url: str, root: Path, timeout_s: float, misbehaving: bool = True, warm: bool = False) -> list[dict]:
    """n sessions at once, each a context of one Chromium."""
    from playwright.async_api import async_playwright
    plan = ([("hang", "")] * 3 + [("huge", "")] + [("ok", well_behaved(i)) for i in range(n - 4)]
            if misbehaving else [("warm" if warm else "ok", ALONE)])

    async def go():
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            out = await asyncio.gather(*(session(browser, url, root, k, q, timeout_s) for k, q in plan))
            await browser.close()
            return out
    return asyncio.run(go())


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--workers", type=int, default=0, help="TLENS_WORKERS (0: the server's default)")
    ap.add_argument("--timeout", type=float, default=60.0, help="TLENS_COMPILE_TIMEOUT")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tlens-class-load-"))
    cache = Path(tempfile.mkdtemp(prefix="tlens-class-cache-"))
    env = {"TLENS_CLASS": "1", "TLENS_WORKSPACE_DIR": str(root), "TLENS_COMPILE_TIMEOUT": str(args.timeout),
           "TLENS_TRITON_CACHE_DIR": str(cache / "triton")}
    if args.workers:
        env["TLENS_WORKERS"] = str(args.workers)
    proc, url, log = start_server(env)
    try:
        run(1, url, root, args.timeout, misbehaving=False, warm=True)   # first page: the pool starts
        time.sleep(20)                                    # its workers import torch and triton
        before = rss_mb(proc.pid)
        alone = run(1, url, root, args.timeout, misbehaving=False)[0]
        # the class: nothing it compiles is in the result cache yet (alone compiled another kernel)
        results = run(args.sessions, url, root, args.timeout)
        after = rss_mb(proc.pid)
    finally:
        os.killpg(proc.pid, 9)
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    ok = [r for r in results if r["kind"] == "ok"]
    good = [r["seconds"] for r in ok if r["status"] == "ok"]
    bad = [r for r in results if r["status"] == "failed"]
    print(f"class_load: {args.sessions} sessions, {os.cpu_count()} cores, workers="
          f"{args.workers or 'default'}, compile timeout {args.timeout:g} s, server log {log.name}")
    print(f"alone (1 session, {alone['query']}): {alone['status']}, {alone['seconds']:.1f} s to first panels")
    print(f"well-behaved: {len(good)}/{len(ok)} completed; click->panels p50 {statistics.median(good):.1f} s, "
          f"p95 {pct(good, 0.95):.1f} s, max {max(good):.1f} s" if good else "well-behaved: none completed")
    for kind in ("hang", "huge"):
        rs = [r for r in results if r["kind"] == kind]
        print(f"{kind}: " + ", ".join(f"{r['status']} after {r['seconds']:.1f} s" for r in rs))
    print(f"failed: {len(bad)}" + "".join(f"\n  {r['kind']} {r['query']}: {r['detail']}" for r in bad))
    print(f"server RSS (server + workers): before {before:.0f} MiB, after {after:.0f} MiB")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
