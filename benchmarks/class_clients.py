"""The students of benchmarks/class_load.py: what each one compiles (the plan) and the two kinds
of client that act it out, each a real Streamlit session with its own browser cookie.

What a student does, as a class does: the page is open on their file (their own sandbox starts
then, inspectors/compile/student_sandboxes.py), and then they press Compile. The plan, for n sessions:
  own      most: a file of their own in their workspace, each different (a kernel text no other
           session compiles): the library's vector add with another BLOCK_SIZE, the same with a
           strided load, or a new file (a kernel of their own)
  library  every fifth: a library kernel at a target / num_warps of its own (a link)
  hang     3: example() never returns (ends at the server's time limit)
  huge     1: example() allocates 16 GiB (ends at the memory limit)
The click is timed from the Compile press to the TTGIR panel (or the expected error), and split
(`split`) with what the server measured (the launch card's "This compile:" line): page = the
page's run up to the compile, queue, worker start, compile, analysis (CompileResult.timings);
render = the rest (the click's wait for the server to start its run, the result's trip back to
the server, its decoding, the panels drawn and sent).
"""
from __future__ import annotations

import asyncio
import random
import re
import secrets
import time
from pathlib import Path
from urllib.parse import parse_qs, unquote

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

import kernels
from app.components.stage_panel import payload as panel_payload
from inspectors.store.workspace import user_folder

ROOT = Path(__file__).resolve().parents[1]
FOREVER = (ROOT / "tests" / "snippets" / "forever.py").read_text()      # example() never returns
HUGE = FOREVER.replace("    while True:\n        pass\n", "    import torch\n    x = torch.empty(4 * 2**30)          # 16 GiB of fp32\n"
                       "    k[(1,)](x)\n")
NEW_FILE = '''import torch
import triton
import triton.language as tl


@triton.jit
def scale_shift(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + {shift}.0, mask=mask)


def example():
    x = torch.randn({n})
    out = torch.empty_like(x)
    scale_shift[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), 2.0, BLOCK=256)
'''
KERNELS = ("vector_add", "softmax", "matmul", "gelu", "bias_relu", "add_mul_act", "giou", "coalescing", "coarsening")
TARGETS = ("cuda%3A90", "cuda%3A80", "cuda%3A100")
WARPS = ("", "8", "2")
WANT = {"hang": b"took longer than", "huge": b"memory"}
WARM_QUERY = "kernel=vector_add&target=cuda%3A90&num_warps=1&run=1"
QUEUE_RE = re.compile(rb"In the queue: (\d+) compile")
TIMING_RE = re.compile(rb"This compile: ((?:(?:page|queue|worker start|compile|analysis|CPU with its sandbox|CPU) [\d.]+ s(?: \xc2\xb7 )?)+)")
PART_RE = re.compile(r"(page|queue|worker start|compile|analysis|CPU with its sandbox|CPU) ([\d.]+) s")


def own_source(i: int) -> tuple[str, str]:
    """(what, file text) of student i's own file: each different from every other student's."""
    vadd = (ROOT / "kernels" / "vector_add.py").read_text()
    mine = f"    pid = tl.program_id(axis=0)  # student {i}\n"
    vadd = vadd.replace("    pid = tl.program_id(axis=0)  # which block of the 1D grid this program is\n", mine)
    what = ("block", "strided", "new")[i % 3]
    if what == "block":
        return what, vadd.replace("BLOCK_SIZE: int = 1024", f"BLOCK_SIZE: int = {(256, 512, 2048)[i % 3]}")
    if what == "strided":
        return what, vadd.replace("x = tl.load(x_ptr + offsets, mask=mask)",
                                  "x = tl.load(x_ptr + (offsets // 2) * 2, mask=mask)  # a strided load")
    return what, NEW_FILE.format(shift=i, n=4096 + 16 * i)


def library_query(i: int) -> str:
    k, t, w = KERNELS[i % len(KERNELS)], TARGETS[(i // len(KERNELS)) % len(TARGETS)], WARPS[(i // 3) % len(WARPS)]
    return f"kernel={k}&target={t}" + (f"&num_warps={w}" if w else "")


WELL_BEHAVED = ("own", "library", "libop")
LIBOP = (ROOT / "tests" / "snippets" / "streaming" / "many_launches.py").read_text()    # 11 launches


def class_plan(n: int, libops: int = 0) -> list[tuple[str, int]]:
    """(kind, index) of each session: 3 hangs, 1 huge, every fifth of the rest a library kernel,
    the others own files, `libops` of which a multi-launch op (LIBOP: a kernel and ten matmul
    tiles, ~6 CPU-s); in an order of their own (seeded: every run the same), as a class
    arrives, not the hangs first."""
    rest = [("library" if i % 5 == 4 else "own", i) for i in range(max(0, n - 4))]
    plan = [("hang", 0)] * min(3, n) + [("huge", 0)] * (1 if n > 3 else 0) + rest
    random.Random(32).shuffle(plan)
    owns = [j for j, (kind, _) in enumerate(plan) if kind == "own"][:libops]
    for j in owns:
        plan[j] = ("libop", plan[j][1])
    return plan


# A class server sits behind a proxy that names each student (docs/06-serving-a-class.md): a named
# student's own sandbox starts when their page opens (a cookie's identity starts none until it compiles,
# and at most a few a minute from one address: inspectors/compile/student_sandboxes.py's Gate).
USER_HEADER = "X-Class-User"


def identity(token: str) -> str:
    """The workspace identity the app gives the student whose proxy header is `student-<token>`."""
    return f"user:student-{token[:16]}"


def setup(root: Path, kind: str, i: int, token: str) -> tuple[str, str]:
    """The session's file put in its workspace (own, hang, huge); (the link that opens it, what it is)."""
    if kind == "library":
        return library_query(i), "library"
    if kind == "warm":
        return WARM_QUERY, "warm"
    what, text = own_source(i) if kind == "own" else ("libop", LIBOP) if kind == "libop" else \
        (kind, FOREVER if kind == "hang" else HUGE)
    folder = user_folder(root, identity(token))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mine.py").write_text(text)
    return "kernel=ws%3Amine.py&target=cuda%3A90", what


def expected_kernels(root: Path, token: str, query: str) -> tuple[set[str], str]:
    """The kernels the session's file holds and the target its link asks for."""
    q = {k: v[0] for k, v in parse_qs(query).items()}
    if q["kernel"].startswith("ws:"):
        text = (user_folder(root, identity(token)) / q["kernel"][3:]).read_text()
    else:
        text = kernels.get(q["kernel"]).source()
    return set(re.findall(r"@triton\.jit[^\n]*\n\s*def (\w+)", text)), unquote(q["target"])


def check_panel(blob: bytes, names: set[str], target: str, warps: str | None) -> str:
    """"" if the TTGIR panel is the session's own kernel at its target (and num_warps), else what is wrong."""
    text = "\n".join(panel_payload.decode(blob)["lines"])
    func = re.search(r"tt\.func public @(\w+)", text)
    attrs = next((line for line in text.splitlines() if line.startswith("module attributes")), "")
    problems = []
    if not func or func.group(1) not in names:
        problems.append(f"kernel {func.group(1) if func else '?'} is not one of {sorted(names)}")
    if f'ttg.target = "{target}"' not in attrs:
        problems.append(f"target ({attrs[:120]})")
    if warps and f'"ttg.num-warps" = {warps} :' not in attrs:
        problems.append(f"num_warps ({attrs[:120]})")
    return ", ".join(problems)


def timings(raw: bytes) -> dict[str, float]:
    """The launch card's "This compile: queue 0.00 s · worker start ... · CPU 1.29 s." as numbers."""
    m = TIMING_RE.search(raw)
    if not m:
        return {}
    text = m.group(1).decode("utf-8", "replace")
    return {name: float(v) for name, v in PART_RE.findall(text)}


def _rerun(query: str, button: tuple[str, str, str] | None = None) -> bytes:
    """A rerun as the browser asks for it; `button`: (widget id, fragment id, page script hash)
    of a button clicked (a button in a fragment reruns that fragment alone, on its page)."""
    msg = BackMsg()
    msg.rerun_script.query_string = query
    if button:
        w = msg.rerun_script.widget_states.widgets.add()
        w.id = button[0]
        w.trigger_value = True
        if button[1]:
            msg.rerun_script.fragment_id = button[1]
        msg.rerun_script.page_script_hash = button[2]
    return msg.SerializeToString()


async def session_ws(url: str, root: Path, kind: str, i: int, timeout_s: float, gate: asyncio.Event | None,
                     opened: list) -> dict:
    """One student over Streamlit's websocket: the page opened on their file (its first run, to
    its end), then, once `gate` is set, the Compile button pressed; every ForwardMsg read until
    the TTGIR panel (or the expected error) arrives. `opened` gets one entry when the page is open."""
    token = secrets.token_urlsafe(32)                 # 43 characters, as the app makes them
    query, what = setup(root, kind, i, token)
    out = {"kind": kind, "what": what, "query": query, "status": "failed", "detail": "", "queue": [],
           "seconds": 0.0, "page": None, "timings": {}}
    try:
        async with websockets.connect(url.replace("http://", "ws://") + "/_stcore/stream",
                                      subprotocols=["streamlit"], max_size=None, open_timeout=300, close_timeout=2,
                                      additional_headers={"Cookie": f"tlens_token={token}",
                                                          USER_HEADER: f"student-{token[:16]}"}) as ws:
            if kind == "warm":
                await ws.send(_rerun(query))
                await _until_finished(ws, 300)
                out["status"] = "ok"
                return out
            await ws.send(_rerun(query))
            button = await _until_finished(ws, 600)
            opened.append(time.perf_counter())
            if gate is not None:
                await gate.wait()
            if button is None:
                out["detail"] = "the page had no Compile button"
                return out
            t0 = time.perf_counter()
            await ws.send(_rerun(query, button))
            await _read_click(ws, out, t0, timeout_s * 5, root, token)
    except Exception as e:  # noqa: BLE001 - counted and printed
        out["detail"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
    return out


async def _until_finished(ws, limit: float) -> tuple[str, str, str] | None:
    """Reads the page's run to its end; the Compile button's (widget id, fragment id, page)."""
    button, deadline = None, time.perf_counter() + limit
    while True:
        fwd = ForwardMsg.FromString(await asyncio.wait_for(ws.recv(), max(0.01, deadline - time.perf_counter())))
        what = fwd.WhichOneof("type")
        if what == "script_finished":
            return button
        if what == "delta" and fwd.delta.WhichOneof("type") == "new_element":
            el = fwd.delta.new_element
            if el.WhichOneof("type") == "button" and el.button.label == "Compile":
                button = el.button.id, fwd.delta.fragment_id, fwd.metadata.active_script_hash


async def _read_click(ws, out: dict, t0: float, limit: float, root: Path, token: str) -> None:
    names, target = expected_kernels(root, token, out["query"]) if out["kind"] in WELL_BEHAVED else (set(), "")
    warps = parse_qs(out["query"]).get("num_warps", [None])[0]
    deadline, finished_at = t0 + limit, None
    while out["status"] == "failed" and not out["detail"]:
        wait = deadline - time.perf_counter()
        if finished_at is not None:            # a run ended without the panels: another may follow
            wait = min(wait, finished_at + 5 - time.perf_counter())
        try:
            raw = await asyncio.wait_for(ws.recv(), max(wait, 0.01))
        except asyncio.TimeoutError:
            out["detail"] = "the run ended without panels" if finished_at else "timed out"
            break
        now = time.perf_counter()
        out["seconds"] = now - t0
        fwd = ForwardMsg.FromString(raw)
        kind = fwd.WhichOneof("type")
        if kind == "script_finished":
            finished_at = now
            continue
        if kind != "delta":
            continue
        finished_at = None
        if out["page"] is None:
            out["page"] = now - t0
        out["queue"] += [int(n) for n in QUEUE_RE.findall(raw)]
        out["timings"] = timings(raw) or out["timings"]
        el = fwd.delta.new_element if fwd.delta.WhichOneof("type") == "new_element" else None
        if el is None:
            continue
        if out["kind"] in WANT:
            if WANT[out["kind"]] in raw:
                out["status"] = "expected error"
            continue
        if el.WhichOneof("type") == "exception":
            out["detail"] = f"exception: {el.exception.message[:160]}"
        elif el.WhichOneof("type") == "alert" and el.alert.format == el.alert.ERROR:
            out["detail"] = f"error: {el.alert.body[:160]}"
        elif el.WhichOneof("type") == "bidi_component" and el.bidi_component.component_name == "tlens_stage_panel":
            blob = el.bidi_component.bytes
            if panel_payload.decode(blob)["stage"] == "ttgir":
                wrong = check_panel(blob, names, target, warps)
                out["status"], out["detail"] = ("ok", "") if not wrong else ("failed", f"wrong result: {wrong}")


def split(r: dict) -> dict[str, float] | None:
    """One click's time in parts (see the module docstring); None without the server's timings."""
    t = r.get("timings") or {}
    if "compile" not in t or "page" not in t:
        return None
    parts = {"page": t["page"], "queue": t.get("queue", 0.0), "worker start": t.get("worker start", 0.0),
             "compile": t["compile"], "analysis": t.get("analysis", 0.0)}
    parts["render"] = max(0.0, r["seconds"] - sum(parts.values()))
    return parts
