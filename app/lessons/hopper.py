"""Panels of the Hopper lesson (assets/lessons/hopper.md): the same matmul with pointers
(cp.async), with tensor descriptors (TMA), and as a warp-specialized persistent loop
(assets/lessons/hopper/*.py), compiled here for sm_90 and sm_100. The copy pattern per K step
(inspectors/explain/copies.py), the partitions of the warp-specialized loop (the insight the
worker sends), and the TFLOP/s measured on an H100 (assets/gpu/gpu_hopper.json, made by
benchmarks/gpu_hopper.py)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app.backend import services
from app.lessons.common import GPU_DIR, Ctx, read_json, table
from inspectors.explain import copies

HOPPER_GPU_FILE = GPU_DIR / "gpu_hopper.json"
VERSIONS = {"torch": "torch.matmul (cuBLAS)", "ptr": "pointers: cp.async", "tma": "TMA loads and store",
            "ws": "persistent TMA, warp_specialize=True"}


def _kib(n: int) -> str:
    return f"{n / 1024:,.1f}".removesuffix(".0") + " KiB" if n >= 1024 else f"{n} B"


def copies_panel(ctx: Ctx):
    """Per K step of each compile of the step: the copy instruction, how many a program issues,
    by how many threads, the bytes each moves, and what the mbarrier expects."""
    rows, facts = [], {}
    for name, kernels in ctx.compiled.items():
        k = kernels[0]
        plan = copies.copy_plan(k.stages.get("ptx", ""), k.stages.get("ttgir", ""), int(k.options.get("num_warps", 4)))
        if not plan.instruction:
            continue
        rows.append({"compile": f"{name} · {k.target}", "copy instruction": plan.instruction,
                     "per thread / step": plan.per_step, "threads issuing": plan.issuers,
                     "copies / step (program)": plan.instructions_per_step, "bytes each": _kib(plan.bytes_each),
                     "bytes / step": _kib(plan.bytes_per_step),
                     "mbarrier expects / step": _kib(plan.expect_tx) if plan.expect_tx else "—",
                     "PTX loop lines": f"{plan.loop_lines[0]}–{plan.loop_lines[1]}"})
        facts |= {f"{name}.copies_per_step": str(plan.instructions_per_step), f"{name}.per_thread": str(plan.per_step),
                  f"{name}.issuers": str(plan.issuers), f"{name}.bytes_each": str(plan.bytes_each),
                  f"{name}.bytes_step_kib": f"{plan.bytes_per_step / 1024:g}",
                  f"{name}.expect_tx": str(plan.expect_tx)}
    if rows:
        table(pd.DataFrame(rows))
    return facts


def partitions_panel(ctx: Ctx):
    """The partitions of each warp-specialized compile of the step: warps, register budget, role,
    the Python lines it runs."""
    facts = {}
    for name, kernels in ctx.compiled.items():
        k = kernels[0]
        found = services.insight(k, k.source_path or "")
        if found.cut:
            continue
        asked = int(k.options.get("num_warps", 4))
        facts |= {f"{name}.asked_warps": str(asked), f"{name}.warps": str(found.warps or asked)}
        if not found.partitions:
            st.markdown(f"**{name} · {k.target}**: {asked} warps asked, {found.warps or asked} compiled — "
                        "no warp-specialized loop in its TTGIR.")
            continue
        extra = sum(p.name != "default" for p in found.partitions)
        st.markdown(f"**{name} · {k.target}**: {asked} warps asked, **{found.warps} compiled** "
                    f"(the default warps and {extra} partition{'s' if extra != 1 else ''} of their own)")
        table(pd.DataFrame([{"partition": p.name, "warps": p.warps,
                             "registers / thread": str(p.registers) if p.registers is not None else "the rest",
                             "does": p.role, "Python lines of the file": ", ".join(map(str, p.python_lines)) or "—"}
                            for p in found.partitions]))
        for p in found.partitions:
            facts |= {f"{name}.{p.name}.warps": str(p.warps), f"{name}.{p.name}.role": p.role,
                      f"{name}.{p.name}.registers": str(p.registers) if p.registers is not None else "—"}
    return facts


def measured(ctx: Ctx):
    """TFLOP/s of the three versions and torch.matmul on the GPU of the committed run."""
    data = read_json(HOPPER_GPU_FILE)
    if not data or not data.get("runs"):
        st.info("**Not yet measured on a GPU.** The TFLOP/s of each version come from `benchmarks/gpu_hopper.py`, run "
                "on a GPU machine and committed as `assets/gpu/gpu_hopper.json`, which this checkout does not have. "
                "No figure is shown in its place.")
        return None
    env = data.get("env", {})
    st.markdown(f"Measured on **{env.get('gpu', '?')}** ({env.get('sms', '?')} SMs; torch {env.get('torch', '?')}, "
                f"Triton {env.get('triton', '?')}; `assets/gpu/gpu_hopper.json`): fp16 in, fp32 accumulate, "
                "`do_bench` median, 2·M·N·K flops; every version checked against torch.matmul first.")
    rows, facts = [], {}
    for size, runs in data["runs"].items():
        base = (runs.get("torch") or {}).get("tflops")
        for key, label in VERSIONS.items():
            r = runs.get(key) or {}
            if "tflops" not in r:
                rows.append({"size": f"{size}³", "version": label, "TFLOP/s": r.get("error", "—")[:60], "vs torch": "—"})
                continue
            rows.append({"size": f"{size}³", "version": label, "TFLOP/s": f"{r['tflops']:,.0f}",
                         "vs torch": f"{r['tflops'] / base:.2f}" if base else "—"})
            facts[f"{key}_{size}"] = f"{r['tflops']:,.0f}"
            if base:
                facts[f"{key}_{size}_vs"] = f"{r['tflops'] / base:.2f}"
    table(pd.DataFrame(rows))
    for size, runs in data["runs"].items():
        ptr, tma = (runs.get("ptr") or {}).get("tflops"), (runs.get("tma") or {}).get("tflops")
        if ptr and tma:
            facts[f"tma_vs_ptr_{size}"] = f"{tma / ptr:.2f}"
    ran = data.get("kernels", {})
    if ran:
        st.markdown("What ran (the JIT's own compile on that GPU):")
        table(pd.DataFrame([{"version": VERSIONS.get(k, k), "warps asked / compiled": f"{f['num_warps']} / {f['compiled_warps']}",
                             "warp-specialized": "yes" if f["warp_specialized"] else "no",
                             "registers": f["registers"], "shared": _kib(int(f["shared_bytes"] or 0)),
                             "copies / K step": f"{f['copies_per_step']} × {_kib(f['bytes_per_copy'])}"}
                            for k, f in ran.items()]))
        facts |= {f"{k}_ws": "yes" if f["warp_specialized"] else "no" for k, f in ran.items()}
        facts |= {f"{k}_warps": str(f["compiled_warps"]) for k, f in ran.items()}
    facts["gpu"] = env.get("gpu", "?")
    return facts


PANELS = {"hopper.copies": copies_panel, "hopper.partitions": partitions_panel, "hopper.measured": measured}
