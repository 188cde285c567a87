"""The insight of each compiled kernel, computed in the worker beside the stages it reads
(once per compile; the server only decodes it: insight.of)."""
from __future__ import annotations

import dataclasses
import signal
import time

from inspectors.base.result import KernelResult
from inspectors.explain import estimate, insight


class _OverBudget(Exception):
    pass


def analysed(kernel: KernelResult, filename: str, deadline: float, budget: float) -> KernelResult:
    """`kernel` with its insight (memory ops, source map, resources, thread map) in
    `analysis`. The job's kernels share `budget` seconds, up to `deadline` (time.monotonic;
    SIGALRM, so the worker's main thread only): the readers are linear, but a job's text is
    anything. Past it, or if the analysis fails, the insight says why and the page shows the
    stages without it."""
    note = (f"The analysis of this compile took longer than {budget:g} s and was cut: the stages are shown "
            "without it (TLENS_ANALYSIS_BUDGET_S)")
    left = deadline - time.monotonic()
    if left <= 0:
        return dataclasses.replace(kernel, analysis=insight.to_plain(insight.unavailable(filename, note)))

    def expire(signum, frame):
        raise _OverBudget
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, left)
    try:
        found = insight.analyze(kernel, dict(kernel.stages), filename)
    except _OverBudget:
        found = insight.unavailable(filename, note)
    except Exception as e:  # noqa: BLE001 - a kernel's text may be anything: the page shows the stages
        found = insight.unavailable(filename, f"the analysis of this kernel failed ({type(e).__name__}: {e})")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return with_workload(dataclasses.replace(kernel, analysis=insight.to_plain(found)))


def with_workload(kernel: KernelResult) -> KernelResult:
    """`kernel` with its workload completed (estimate.workload_of: the TTIR's dots, loads and
    stores, the analysis's registers when there is one), also when no analysis was asked for."""
    try:
        return dataclasses.replace(kernel, workload=estimate.workload_of(kernel))
    except Exception:  # noqa: BLE001 - as the analysis: a text that reads as nothing keeps the call's figures
        return kernel
