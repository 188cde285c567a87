"""Timing a torch.compile'd function against eager, the way the Benchmark page times kernels,
with two independent checks and the reasons a compiled call can look slow.

    t = measure(fn, torch.compile(fn), inputs, rounds=5)       # on a GPU, in the runner process
    t.compiled.median_ms, t.compiled.p20_ms, t.compiled.p80_ms  # do_bench, L2 flushed, all rounds
    t.compiled_kernel_ms                                        # torch.profiler: the kernels' own time
    t.compiled_host_us                                          # CPU time to launch one call
    t.notes                                                     # why compiled is slow, if it is

* **do_bench** (`triton.testing.do_bench`: CUDA events around each call, the L2 cache flushed
  before each) in `rounds` rounds, eager and compiled alternating forward and reverse order
  (the order rule of `inspectors.bench.model.round_orders`: a GPU's clocks drift under load, so
  neither is always first); the figure is the median of the rounds' medians, its spread the
  lowest 20th to the highest 80th percentile of all rounds.
* **profiler kernel time**: `torch.profiler` records every GPU kernel of `calls` calls, each
  after an L2 flush; the flush's own kernels (recorded alone first) are left out. It is the
  device time of the function's kernels alone: no launch gaps, no host time.
* **CUDA graph replay** (optional): `calls` calls captured in one graph, each after an L2
  flush, replayed; minus a graph of the flushes alone. No Python, no guards, no launch cost.
* **host launch time**: the CPU time of one call without waiting for the GPU (Dynamo's guards,
  Inductor's wrapper, the launches). Above the kernels' time the call is CPU-bound: the GPU
  waits for the launches, and do_bench's events, which bracket the launch, measure the CPU.
* **recompiles**: Dynamo frames compiled while timing (a guard that failed); each takes
  seconds, and a timing that includes one is meaningless.

`notes(t)` turns those into sentences; `agreement(t)` compares do_bench with the profiler.
Needs torch with CUDA for `measure`; the rest is pure and runs anywhere.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass, field, replace

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
    eager: Spread
    compiled: Spread
    rounds: int
    eager_kernel_ms: float | None = None         # torch.profiler, L2 flushed
    compiled_kernel_ms: float | None = None
    eager_graph_ms: float | None = None          # CUDA graph replay, L2 flushed
    compiled_graph_ms: float | None = None
    eager_host_us: float | None = None           # CPU time per call, not waiting for the GPU
    compiled_host_us: float | None = None
    recompiles: int = 0                          # Dynamo frames compiled during the timing
    errors: tuple[str, ...] = ()                 # a check that could not run, and why
    notes: tuple[str, ...] = field(default=())

    @property
    def speedup(self) -> float:
        return self.eager.median_ms / self.compiled.median_ms

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "CompileTiming":
        d = dict(d)
        for k in ("eager", "compiled"):
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
    """do_bench median / profiler kernel time - 1, per provider (None without a kernel time)."""
    out: dict[str, float | None] = {}
    for name, spread, kernel in (("eager", t.eager, t.eager_kernel_ms), ("compiled", t.compiled, t.compiled_kernel_ms)):
        out[name] = spread.median_ms / kernel - 1 if kernel else None
    return out


def notes(t: CompileTiming) -> tuple[str, ...]:
    """What the figures say, in sentences: slower or faster, stable or not, and why."""
    out = []
    ratio = t.speedup
    out.append(f"compiled {t.compiled.median_ms:.4f} ms vs eager {t.eager.median_ms:.4f} ms "
               f"({f'{ratio:.2f}x faster' if ratio >= 1 else f'{1 / ratio:.2f}x slower'}), median of {t.rounds} rounds")
    for name, s in (("eager", t.eager), ("compiled", t.compiled)):
        if s.p20_ms > 0 and s.p80_ms / s.p20_ms > 1 + SPREAD:
            out.append(f"{name} is unstable: p20-p80 {s.p20_ms:.4f}-{s.p80_ms:.4f} ms over the rounds")
    if t.recompiles:
        out.append(f"Dynamo compiled {t.recompiles} frame(s) while timing: a guard failed and the function "
                   "recompiled, which takes seconds; the timing is not of the compiled code")
    for name, kernel, host in (("eager", t.eager_kernel_ms, t.eager_host_us),
                               ("compiled", t.compiled_kernel_ms, t.compiled_host_us)):
        if kernel and host and host / 1000 > kernel:
            out.append(f"{name} is CPU-bound: launching one call takes {host:.1f} µs on the host, its kernels "
                       f"{kernel * 1000:.1f} µs on the GPU; back to back the GPU waits for the CPU")
    for name, off in agreement(t).items():
        if off is not None and abs(off) > AGREE:
            kernel = t.eager_kernel_ms if name == "eager" else t.compiled_kernel_ms
            host = t.eager_host_us if name == "eager" else t.compiled_host_us
            why = (f"; the host's {host:.1f} µs per call is inside do_bench's events" if host and off > 0 else "")
            out.append(f"{name}: do_bench {(t.eager if name == 'eager' else t.compiled).median_ms:.4f} ms is "
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


def graph_time_ms(f, calls: int = 20, replays: int = 10) -> float:
    """Per call, from CUDA graph replay: `calls` (flush, f) pairs in one graph, minus a graph of
    the flushes alone. No host work at all is timed."""
    import torch
    buf = _flush_buffer()

    def capture(body):
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                body()
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(calls):
                body()
        return g

    def replay_ms(g):
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
        return statistics.median(times)

    both = capture(lambda: (buf.zero_(), f()))
    flush = capture(lambda: buf.zero_())
    return (replay_ms(both) - replay_ms(flush)) / calls


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
            graphs: bool = False, calls: int = 20) -> CompileTiming:
    """Eager `fn` and `compiled` on `inputs` (already compiled and run once), on the GPU."""
    import torch
    providers = {"eager": lambda: fn(*inputs), "compiled": lambda: compiled(*inputs)}
    frames0 = dynamo_frames()
    samples: dict[str, list] = {k: [] for k in providers}
    for order in orders(list(providers), rounds):
        for name in order:
            samples[name].append(_do_bench(providers[name], warmup_ms, rep_ms))
    figures: dict = {}
    errors = []
    for name, f in providers.items():
        try:
            figures[f"{name}_kernel_ms"] = kernel_time_ms(f, calls)
        except Exception as e:  # noqa: BLE001 - a check that cannot run is reported, not fatal
            errors.append(f"{name} profiler: {type(e).__name__}: {e}")
        figures[f"{name}_host_us"] = host_time_us(f, sync=torch.cuda.synchronize)
        if graphs:
            try:
                figures[f"{name}_graph_ms"] = graph_time_ms(f, calls)
            except Exception as e:  # noqa: BLE001
                errors.append(f"{name} CUDA graph: {type(e).__name__}: {e}")
    t = CompileTiming(eager=combine(samples["eager"]), compiled=combine(samples["compiled"]), rounds=rounds,
                      recompiles=dynamo_frames() - frames0, errors=tuple(errors), **figures)
    return replace(t, notes=notes(t))
