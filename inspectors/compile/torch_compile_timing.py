"""Timing a torch.compile'd function against eager, the way the Benchmark page times kernels,
with an independent check and the reasons a compiled call can look slow.

    t = measure(fn, torch.compile(fn), inputs, rounds=5)       # on a GPU, in the runner process
    t.compiled_gpu.median_ms, .p20_ms, .p80_ms                  # the GPU's time per call (graph replay)
    t.compiled.median_ms                                        # per call from Python (do_bench)
    t.compiled_kernel_ms                                        # torch.profiler: the kernels' own time
    t.compiled_host_us                                          # CPU time to launch one call
    t.notes                                                     # why compiled is slow, if it is

Two figures per provider, taken in the same rounds (eager and compiled alternating forward and
reverse order, the order rule of `inspectors.bench.model.round_orders`: a GPU's clocks drift
under load, so neither is always first), each the median of the rounds' medians with its
spread, the lowest 20th to the highest 80th percentile of all rounds:

* **GPU time** (the headline, and the speedup): `calls` calls captured in one CUDA graph, each
  after an L2 flush, replayed, minus a graph of the flushes alone. No Python, no guards, no
  launch cost: what the function's kernels cost the GPU.
* **per call from Python** (`triton.testing.do_bench`: CUDA events around each call, the L2
  flushed before each): what a caller waits. Where launching a call takes the CPU longer than
  its kernels take the GPU, the events bracket the launch and this measures the host, and it
  wanders with the host's load from round to round while the graph replay holds steady
  (benchmarks/results/gpu_torch_compile.txt: do_bench's spread beside the compiled GPU time).

The check: **profiler kernel time**, `torch.profiler`'s device time of the function's kernels
over `calls` calls, each after an L2 flush (the flush's own kernels, recorded alone first, left
out); the GPU time must agree with it within 5 % (`agreement`). Beside them, the **host launch
time** (the CPU time of one call without waiting for the GPU: Dynamo's guards, Inductor's
wrapper, the launches) and **recompiles** (Dynamo frames compiled while timing: a guard that
failed; each takes seconds, and a timing that includes one is meaningless).

A function that cannot be captured in a CUDA graph (it synchronizes, or copies to the host) is
timed by do_bench alone, and the notes say so. `notes(t)` turns the figures into sentences.
Needs torch with CUDA for `measure`; the rest is pure and runs anywhere.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass, field, fields, replace

AGREE = 0.05          # do_bench and the profiler's kernel time agree within 5 %
SPREAD = 0.10         # p80/p20 above 1.10: an unstable figure


@dataclass(frozen=True)
class Spread:
    """One provider over all rounds: median of the rounds' medians, lowest p20, highest p80,
    and each round's median in the order they ran."""
    median_ms: float
    p20_ms: float
    p80_ms: float
    rounds_ms: tuple[float, ...] = ()


@dataclass(frozen=True)
class CompileTiming:
    eager: Spread                                # do_bench: per call from Python, L2 flushed
    compiled: Spread
    rounds: int
    eager_gpu: Spread | None = None              # CUDA graph replay, L2 flushed: the GPU's time
    compiled_gpu: Spread | None = None
    eager_kernel_ms: float | None = None         # torch.profiler, L2 flushed
    compiled_kernel_ms: float | None = None
    eager_host_us: float | None = None           # CPU time per call, not waiting for the GPU
    compiled_host_us: float | None = None
    recompiles: int = 0                          # Dynamo frames compiled during the timing
    errors: tuple[str, ...] = ()                 # a check that could not run, and why
    notes: tuple[str, ...] = field(default=())

    @property
    def by_graph(self) -> bool:
        """Both sides have a GPU time (graph replay): it is the headline."""
        return self.eager_gpu is not None and self.compiled_gpu is not None

    def headline(self, name: str) -> Spread:
        """The figure compiled and eager are compared by: the GPU time where both have one."""
        return getattr(self, f"{name}_gpu" if self.by_graph else name)

    @property
    def speedup(self) -> float:
        return self.headline("eager").median_ms / self.headline("compiled").median_ms

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "CompileTiming":
        known = {f.name for f in fields(cls)}
        d = {k: v for k, v in d.items() if k in known}       # a record from an older version
        for k in ("eager", "compiled", "eager_gpu", "compiled_gpu"):
            if d.get(k) is not None:
                d[k] = Spread(**{**d[k], "rounds_ms": tuple(d[k].get("rounds_ms", ()))})
        d["errors"], d["notes"] = tuple(d.get("errors", ())), tuple(d.get("notes", ()))
        return cls(**d)


# -------------------------------------------------------------------------------- pure parts

def orders(items: list, rounds: int) -> list[list]:
    """Each round's order: forward, reverse, forward..."""
    return [list(items) if r % 2 == 0 else list(reversed(items)) for r in range(rounds)]


def combine(samples: list[tuple[float, float, float]]) -> Spread:
    """(median, p20, p80) of each round -> one Spread."""
    if not samples:
        raise ValueError("no rounds to combine")
    return Spread(statistics.median(s[0] for s in samples), min(s[1] for s in samples),
                  max(s[2] for s in samples), tuple(s[0] for s in samples))


def agreement(t: CompileTiming) -> dict[str, float | None]:
    """The headline figure (GPU time, else do_bench) / profiler kernel time - 1, per provider
    (None without a kernel time)."""
    out: dict[str, float | None] = {}
    for name, kernel in (("eager", t.eager_kernel_ms), ("compiled", t.compiled_kernel_ms)):
        out[name] = t.headline(name).median_ms / kernel - 1 if kernel else None
    return out


def notes(t: CompileTiming) -> tuple[str, ...]:
    """What the figures say, in sentences: slower or faster, stable or not, and why."""
    out = []
    ratio = t.speedup
    how = "on the GPU (CUDA graph replay, L2 flushed)" if t.by_graph else "per call (do_bench, L2 flushed)"
    out.append(f"compiled {t.headline('compiled').median_ms:.4f} ms vs eager {t.headline('eager').median_ms:.4f} ms "
               f"{how} ({f'{ratio:.2f}x faster' if ratio >= 1 else f'{1 / ratio:.2f}x slower'}), "
               f"median of {t.rounds} rounds")
    if t.by_graph:
        py = t.eager.median_ms / t.compiled.median_ms
        if any(abs(getattr(t, n).median_ms / t.headline(n).median_ms - 1) > AGREE for n in ("eager", "compiled")):
            out.append(f"per call from Python (do_bench, host included): compiled {t.compiled.median_ms:.4f} ms vs "
                       f"eager {t.eager.median_ms:.4f} ms "
                       f"({f'{py:.2f}x faster' if py >= 1 else f'{1 / py:.2f}x slower'})")
    else:
        out.append("no CUDA graph of a call (see the errors): the figures are do_bench's, host time included")
    for name in ("eager", "compiled"):
        s = t.headline(name)
        if s.p20_ms > 0 and s.p80_ms / s.p20_ms > 1 + SPREAD:
            out.append(f"{name} is unstable: p20-p80 {s.p20_ms:.4f}-{s.p80_ms:.4f} ms over the rounds")
    if t.recompiles:
        out.append(f"Dynamo compiled {t.recompiles} frame(s) while timing: a guard failed and the function "
                   "recompiled, which takes seconds; the timing is not of the compiled code")
    for name, kernel, host in (("eager", t.eager_kernel_ms, t.eager_host_us),
                               ("compiled", t.compiled_kernel_ms, t.compiled_host_us)):
        if kernel and host and host / 1000 > kernel:
            py = getattr(t, name)
            out.append(f"{name} is CPU-bound: launching one call takes {host:.1f} µs on the host, its kernels "
                       f"{kernel * 1000:.1f} µs on the GPU; back to back the GPU waits for the CPU, and a call "
                       f"from Python takes {py.median_ms:.4f} ms (p20-p80 {py.p20_ms:.4f}-{py.p80_ms:.4f})")
    for name, off in agreement(t).items():
        if off is not None and abs(off) > AGREE:
            kernel = t.eager_kernel_ms if name == "eager" else t.compiled_kernel_ms
            host = t.eager_host_us if name == "eager" else t.compiled_host_us
            why = (f"; the host's {host:.1f} µs per call is inside do_bench's events"
                   if host and off > 0 and not t.by_graph else
                   "; graph replay counts the gaps between the kernels, the profiler only the kernels"
                   if t.by_graph and off > 0 else "")
            what = "GPU time" if t.by_graph else "do_bench"
            out.append(f"{name}: {what} {t.headline(name).median_ms:.4f} ms is "
                       f"{off * 100:+.1f} % off the profiler's kernel time {kernel:.4f} ms{why}")
    return tuple(out)


# -------------------------------------------------------------------------------- on a GPU

def _do_bench(f, warmup_ms: int, rep_ms: int) -> tuple[float, float, float]:
    from triton.testing import do_bench
    median, p20, p80 = do_bench(f, warmup=warmup_ms, rep=rep_ms, quantiles=[0.5, 0.2, 0.8])
    return float(median), float(p20), float(p80)


def _flush_buffer():
    import torch
    return torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")     # as do_bench's, > any L2


def kernel_time_ms(f, calls: int = 20) -> float:
    """The device time of `f`'s GPU kernels per call, from torch.profiler, each call after an
    L2 flush; the flush's own kernels (profiled alone first) are left out."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    buf = _flush_buffer()

    def device_events(prof):
        return [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]

    f()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as flush_only:
        for _ in range(3):
            buf.zero_()
        torch.cuda.synchronize()
    flush_names = {e.name for e in device_events(flush_only)}
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            buf.zero_()
            f()
        torch.cuda.synchronize()
    mine = [e for e in device_events(prof) if e.name not in flush_names]
    if not mine:
        raise RuntimeError("the profiler recorded no kernel of the function")
    return sum(e.time_range.elapsed_us() for e in mine) / calls / 1000


class GraphTimer:
    """The GPU's time per call of `f`: `calls` (L2 flush, f) pairs captured in one CUDA graph,
    and a graph of the flushes alone; `sample()` replays both and returns the time per call of
    each replay of the pairs, less the flushes' median. No host work at all is timed."""

    def __init__(self, f, calls: int = 20):
        self.calls = calls
        buf = _flush_buffer()
        self.both = self._capture(lambda: (buf.zero_(), f()))
        self.flush = self._capture(lambda: buf.zero_())
        self._buf = buf

    def _capture(self, body):
        import torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                body()
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(self.calls):
                body()
        return g

    @staticmethod
    def _replays_ms(g, replays: int) -> list[float]:
        import torch
        g.replay()
        torch.cuda.synchronize()
        times = []
        for _ in range(replays):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            g.replay()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        return times

    def sample(self, replays: int = 10) -> tuple[float, float, float]:
        """(median, p20, p80) ms per call over `replays` replays."""
        flush = statistics.median(self._replays_ms(self.flush, replays))
        per_call = sorted((t - flush) / self.calls for t in self._replays_ms(self.both, replays))
        return statistics.median(per_call), _quantile(per_call, 0.2), _quantile(per_call, 0.8)


def _quantile(ordered: list[float], q: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default)."""
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def host_time_us(f, calls: int = 200, sync=None) -> float:
    """CPU time of one call without waiting for the GPU: guards, wrapper, launches (the median
    of 5 batches of `calls / 5`). `sync`: the device's synchronize (None on the CPU)."""
    batch = max(1, calls // 5)
    out = []
    for _ in range(5):
        if sync:
            sync()
        t0 = time.perf_counter_ns()
        for _ in range(batch):
            f()
        out.append((time.perf_counter_ns() - t0) / batch / 1000)
        if sync:
            sync()
    return statistics.median(out)


def dynamo_frames() -> int:
    """Frames Dynamo has compiled so far in this process."""
    try:
        from torch._dynamo.utils import counters
        return int(sum(counters["frames"].get(k, 0) for k in ("ok",)))
    except Exception:  # noqa: BLE001 - a torch without those counters: no recompile count
        return 0


def measure(fn, compiled, inputs: tuple, rounds: int = 5, warmup_ms: int = 25, rep_ms: int = 100,
            graphs: bool = True, calls: int = 20) -> CompileTiming:
    """Eager `fn` and `compiled` on `inputs` (already compiled and run once), on the GPU. Each
    round takes, per provider in that round's order, do_bench's figure and (`graphs`) a CUDA
    graph replay's."""
    import torch
    providers = {"eager": lambda: fn(*inputs), "compiled": lambda: compiled(*inputs)}
    frames0 = dynamo_frames()
    errors = []
    timers: dict = {}
    if graphs:
        for name, f in providers.items():
            try:
                timers[name] = GraphTimer(f, calls)
            except Exception as e:  # noqa: BLE001 - a function a graph cannot hold: do_bench alone
                errors.append(f"{name} CUDA graph: {type(e).__name__}: {e}")
                torch.cuda.synchronize()
    samples: dict[str, list] = {k: [] for k in providers}
    gpu: dict[str, list] = {k: [] for k in timers}
    for order in orders(list(providers), rounds):
        for name in order:
            samples[name].append(_do_bench(providers[name], warmup_ms, rep_ms))
            if name in timers:
                gpu[name].append(timers[name].sample())
    timers.clear()
    figures: dict = {f"{name}_gpu": combine(s) for name, s in gpu.items()}
    for name, f in providers.items():
        try:
            figures[f"{name}_kernel_ms"] = kernel_time_ms(f, calls)
        except Exception as e:  # noqa: BLE001 - a check that cannot run is reported, not fatal
            errors.append(f"{name} profiler: {type(e).__name__}: {e}")
        figures[f"{name}_host_us"] = host_time_us(f, sync=torch.cuda.synchronize)
    t = CompileTiming(eager=combine(samples["eager"]), compiled=combine(samples["compiled"]), rounds=rounds,
                      recompiles=dynamo_frames() - frames0, errors=tuple(errors), **figures)
    return replace(t, notes=notes(t))
