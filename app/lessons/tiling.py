"""Panels of the tiling and pipelining lesson (assets/lessons/tiling.md): kernels/matmul.py
compiled here for sm_80 and sm_90 at the lesson's configurations (inspectors/explain/tiling.py):
what tl.dot becomes, registers / shared memory / occupancy per tile size, the cp.async pipeline
per num_stages, and the grouped launch order's reuse of A and B tiles. TFLOP/s and the Nsight
Compute checks from assets/gpu/gpu_lessons.json when it is committed."""
from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from app.lessons.common import ROOT, Ctx, LIBRARY, StepFailed, compile_source, gpu_label, gpu_lessons, not_measured, table
from inspectors.base.result import KernelResult
from inspectors.explain import exercise, tiling
from inspectors.read import occupancy, ptxops
FIXTURE_WRAPPERS = ROOT / "tests" / "fixtures" / "inductor_cache"
TARGETS = ("cuda:80", "cuda:90")


@st.cache_data(show_spinner=False, max_entries=64)
def _compile(target: str, bm: int, bn: int, bk: int, warps: int, stages: int) -> KernelResult:
    entry = LIBRARY["matmul"]
    return compile_source(entry.filename, entry.source(), target, num_warps=warps, num_stages=stages,
                          constexprs={"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk})[0]


def _compiled(target: str, cfg: tuple) -> KernelResult:
    with st.spinner(f"Compiling matmul {cfg[0]}×{cfg[1]}×{cfg[2]}, {cfg[3]} warps, {cfg[4]} stages for {target}…"):
        return _compile(target, *cfg)


def _metrics(kernel: KernelResult) -> dict:
    return exercise.kernel_metrics(kernel)


def _limiter(kernel: KernelResult, m: dict) -> str:
    if "registers" not in m:
        return "—"
    occ = occupancy.occupancy(int(kernel.target.split(":")[1]), int(m["registers"]), int(m["shared_bytes"]),
                              int(kernel.options.get("num_warps", 4)))
    return occ.limiter


def _measured(data: dict | None, cfg: tuple, group: int = 8, size: int = tiling.SIZE) -> dict | None:
    if not data:
        return None
    run = (data.get("matmul") or {}).get("runs", {}).get(tiling.key(*cfg, group=group, size=size))
    return run if run and "error" not in run else None


def _tflops(data, cfg, group=8, size=tiling.SIZE) -> str:
    run = _measured(data, cfg, group, size)
    if data is None:
        return "not measured"
    return f"{run['tflops']:,.0f}" if run else "—"


def _constexprs(kernel: KernelResult) -> dict:
    return {a.name: int(a.value) for a in kernel.args if a.type == "constexpr" and a.value and a.value.isdigit()}


def tile(ctx: Ctx):
    """A program's tile: bytes and flops per K step, flops per byte, A and B re-read from L2."""
    kernel = ctx.kernel()
    c = _constexprs(kernel)
    bm, bn, bk = c.get("BLOCK_M", 0), c.get("BLOCK_N", 0), c.get("BLOCK_K", 0)
    n = tiling.SIZE
    t = tiling.tile_traffic(n, n, n, bm, bn, bk)
    table(pd.DataFrame([
        {"quantity": "tile of C per program", "value": f"{bm} × {bn}"},
        {"quantity": f"programs for {n}³", "value": f"{t.programs:,}"},
        {"quantity": "K steps per program", "value": f"{t.k_steps} (BLOCK_K = {bk})"},
        {"quantity": "A + B bytes loaded per K step", "value": f"{t.step_bytes:,}"},
        {"quantity": "flops per K step", "value": f"{t.step_flops:,}"},
        {"quantity": "flops per byte loaded", "value": f"{t.flops_per_byte:.1f}"},
        {"quantity": "A + B bytes all programs load (through L2)", "value": f"{t.l2_read_bytes / 1e9:.2f} GB"},
        {"quantity": "A + B + C if each were moved once", "value": f"{t.min_bytes / 1e9:.2f} GB"},
    ]))
    return {"bm": str(bm), "bn": str(bn), "bk": str(bk), "size": str(n), "programs": f"{t.programs:,}",
            "k_steps": str(t.k_steps), "step_kib": f"{t.step_bytes / 1024:.0f}", "flops_per_byte": f"{t.flops_per_byte:.1f}",
            "l2_gb": f"{t.l2_read_bytes / 1e9:.2f}", "min_gb": f"{t.min_bytes / 1e9:.2f}",
            "a_reads": str(tiling.cdiv(n, bn)), "b_reads": str(tiling.cdiv(n, bm))}


def _events(loop) -> str:
    return "\n".join(f"{e.line:>5}  {e.label()}" for e in loop.events) if loop else "(no loop)"


def isa(ctx: Ctx):
    """What tl.dot and the loads become on each target: instruction families, and the main loop."""
    kernels = [(name, ks[0]) for name, ks in ctx.compiled.items()]
    rows = []
    for fam, desc in ptxops.DESCRIBE.items():
        counts = {name: ptxops.families(k.stages.get("ptx", ""))[fam] for name, k in kernels}
        if any(counts.values()):
            rows.append({"PTX instruction": desc, **{f"{k.target.replace('cuda:', 'sm_')}": counts[name]
                                                     for name, k in kernels}})
    table(pd.DataFrame(rows))
    cols = st.columns(len(kernels))
    facts = {}
    for col, (name, k) in zip(cols, kernels):
        loop = ptxops.main_loop(k.stages.get("ptx", ""))
        if loop:
            facts |= {f"{name}.loop_{fam}": str(n) for fam, n in loop.counts.items()}
            facts[f"{name}.loop_waits"] = ", ".join(map(str, loop.waits)) or "none"
        with col:
            st.markdown(f"**The K loop on {k.target.replace('cuda:', 'sm_')}** (PTX lines {loop.start}–{loop.end})"
                        if loop else f"**{k.target}**: no loop")
            st.code(_events(loop), language=None, wrap_lines=True)
    return facts


def blocks(ctx: Ctx):
    """Tile sizes: registers, shared memory, occupancy (compiled here) and TFLOP/s (GPU file)."""
    data = gpu_lessons()
    target = ctx.options.get("target", "cuda:90")
    rows, facts = [], {}
    for cfg in tiling.BLOCK_CONFIGS:
        k = _compiled(target, cfg)
        m = _metrics(k)
        bm, bn, bk, w, s = cfg
        label = f"{bm}×{bn}×{bk}"
        rows.append({"BLOCK M×N×K": label, "warps": w, "flops / byte": f"{bm * bn / (bm + bn):.0f}",
                     "registers": int(m.get("registers", 0)), "shared KiB": f"{m.get('shared_kib', 0):.0f}",
                     "programs / SM": int(m.get("blocks_per_sm", 0)), "warps / SM": int(m.get("warps_per_sm", 0)),
                     "occupancy": f"{m.get('occupancy_pct', 0):.1f} %", "limited by": _limiter(k, m),
                     f"TFLOP/s @{tiling.SIZE}³": _tflops(data, cfg)})
        facts |= {f"b{bm}x{bn}x{bk}.{key}": exercise._num(v) for key, v in m.items()}
        facts[f"b{bm}x{bn}x{bk}.acc_per_thread"] = str(bm * bn // (32 * w))
        loop = ptxops.main_loop(k.stages.get("ptx", ""))
        facts |= {f"b{bm}x{bn}x{bk}.loop_{fam}": str(n) for fam, n in (loop.counts if loop else {}).items()}
        facts[f"b{bm}x{bn}x{bk}.threads"] = str(32 * w)
    table(pd.DataFrame(rows))
    st.caption(f"Compiled here for {target.replace('cuda:', 'sm_')} (kernels/matmul.py, BLOCK sizes and warps "
               f"overridden, 3 stages); TFLOP/s "
               + (gpu_label(data) if data else "not measured yet (benchmarks/gpu_lessons.py)") + ".")
    if data is None:
        not_measured("TFLOP/s per tile size")
    return facts


def stages(ctx: Ctx):
    """num_stages: shared memory, the cp.async groups in flight, and the loop's wait pattern."""
    data = gpu_lessons()
    bm, bn, bk, w, _ = tiling.DEFAULT
    rows, facts = [], {}
    for target in TARGETS:
        for s in tiling.STAGES:
            k = _compiled(target, (bm, bn, bk, w, s))
            m = _metrics(k)
            loop = ptxops.main_loop(k.stages.get("ptx", ""))
            lc = loop.counts if loop else {}
            sm = target.replace("cuda:", "sm_")
            rows.append({"target": sm, "num_stages": s, "shared KiB": f"{m.get('shared_kib', 0):.0f}",
                         "cp.async / loop": lc.get("cp_async", 0), "commit groups / loop": lc.get("cp_async_commit", 0),
                         "wait_group N": ", ".join(map(str, loop.waits)) if loop and loop.waits else "—",
                         "ld.global / loop": lc.get("ld_global", 0), "registers": int(m.get("registers", 0)),
                         "programs / SM": int(m.get("blocks_per_sm", 0)),
                         f"TFLOP/s @{tiling.SIZE}³": _tflops(data, (bm, bn, bk, w, s)) if target == "cuda:90" else ""})
            facts |= {f"{sm}.s{s}.{key}": exercise._num(v) for key, v in m.items()}
            facts[f"{sm}.s{s}.wait"] = str(loop.waits[0]) if loop and loop.waits else "none"
            facts[f"{sm}.s{s}.commits"] = str(lc.get("cp_async_commit", 0))
            facts |= {f"{sm}.s{s}.loop_{fam}": str(n) for fam, n in lc.items()}
            facts[f"{sm}.s{s}.wgmma_wait"] = ", ".join(map(str, loop.wgmma_waits)) if loop and loop.wgmma_waits else "none"
    for target in TARGETS:
        arch = int(target.split(":")[1])
        facts[f"{target.replace('cuda:', 'sm_')}.smem_limit_kib"] = str(occupancy.sm_limits(arch).smem_per_block // 1024)
    table(pd.DataFrame(rows))
    pick = st.select_slider("Show the K loop of num_stages =", list(tiling.STAGES), value=3, key="tiling_stages_pick")
    cols = st.columns(len(TARGETS))
    for col, target in zip(cols, TARGETS):
        loop = ptxops.main_loop(_compiled(target, (bm, bn, bk, w, pick)).stages.get("ptx", ""))
        with col:
            st.markdown(f"**{target.replace('cuda:', 'sm_')}, num_stages = {pick}: the K loop in order**")
            st.code(_events(loop), language=None, wrap_lines=True)
    if data is None:
        not_measured("TFLOP/s per num_stages")
    return facts


def _sms(data: dict | None) -> tuple[int, str]:
    """SMs of the GPU: the committed run's, else the H100's that made the Inductor cache (its
    wrappers record `multi_processor_count=`)."""
    if data and (data.get("env") or {}).get("sms"):
        return int(data["env"]["sms"]), f"{data['env']['gpu']} (the GPU run)"
    for p in sorted(FIXTURE_WRAPPERS.glob("*/*.py")):
        m = re.search(r"multi_processor_count=(\d+)", p.read_text(errors="replace"))
        if m:
            return int(m.group(1)), "the H100 that made tests/fixtures/inductor_cache"
    raise StepFailed("no SM count: neither assets/gpu/gpu_lessons.json nor tests/fixtures/inductor_cache records one")


def _order_html(order: list[tuple[int, int]], rows: int, cols: int, wave: int, max_rows: int = 32) -> str:
    """The C tiles, each coloured by the wave that computes it (the first wave dark)."""
    wave_of = {pos: i // wave for i, pos in enumerate(order)}
    shades = ("#1f5fa8", "#7fb0e0", "#c9def2", "#eef4fb")
    body = []
    for r in range(min(rows, max_rows)):
        cells = "".join(f'<td style="background:{shades[min(wave_of.get((r, c), 3), 3)]}" '
                        f'title="tile ({r}, {c}): wave {wave_of.get((r, c), 0) + 1}"></td>' for c in range(cols))
        body.append(f"<tr>{cells}</tr>")
    return f'<table class="tl-waves">{"".join(body)}</table>'


def grouping(ctx: Ctx):
    """GROUP_SIZE_M: the launch order, the tiles the first wave needs, DRAM model vs measured."""
    data = gpu_lessons()
    bm, bn, bk, w, s = tiling.DEFAULT
    n = tiling.GROUP_SIZE
    sms, where = _sms(data)
    k = _compiled("cuda:90", tiling.DEFAULT)
    per_sm = int(_metrics(k).get("blocks_per_sm", 1)) or 1
    wave = sms * per_sm
    st.html("<style>.tl-waves{border-collapse:collapse;margin:4px 0}.tl-waves td{width:13px;height:13px;"
            "border:1px solid #fff;padding:0}</style>")
    cols = st.columns(2)
    for col, g in zip(cols, (1, 8)):
        order = tiling.launch_order(n, n, bm, bn, g)
        wt = tiling.wave_traffic(n, n, n, bm, bn, g, wave)
        with col:
            st.markdown(f"**GROUP_SIZE_M = {g}**: the first wave of {wave} programs needs "
                        f"{wt.first_wave_rows} rows of A tiles and {wt.first_wave_cols} columns of B tiles")
            st.html(_order_html(order, tiling.cdiv(n, bm), tiling.cdiv(n, bn), wave))
    st.caption(f"C = A·B at {n}³ in {bm}×{bn} tiles ({tiling.cdiv(n, bm)} × {tiling.cdiv(n, bn)} tiles; the first 32 "
               f"tile rows drawn). Darkest: the first wave ({sms} SMs of {where} × {per_sm} program per SM, from the "
               f"sm_90 compile's occupancy); lighter: the second, third wave.")
    rows, facts = [], {"sms": str(sms), "wave": str(wave)}
    ncu = (data or {}).get("ncu", {}).get("cases", {}) if data else {}
    for g in tiling.GROUPS:
        wt = tiling.wave_traffic(n, n, n, bm, bn, g, wave)
        case = ncu.get(f"matmul/{tiling.key(bm, bn, bk, w, s, group=g, size=n)}") or []
        kk = next((l for l in case if "matmul_kernel" in l.get("kernel", "")), None)
        rows.append({"GROUP_SIZE_M": g, "first wave: A rows × B cols": f"{wt.first_wave_rows} × {wt.first_wave_cols}",
                     "DRAM reads, wave model (GB)": f"{wt.dram_bytes / 1e9:.2f}",
                     "DRAM reads, ncu (GB)": f"{kk['dram__bytes_read.sum'] / 1e9:.2f}" if kk and kk.get("dram__bytes_read.sum") else "—",
                     "L2 hit rate, ncu": f"{kk['lts__t_sector_hit_rate.pct']:.1f} %" if kk and kk.get("lts__t_sector_hit_rate.pct") else "—",
                     f"TFLOP/s @{n}³": _tflops(data, tiling.DEFAULT, g, n)})
        facts |= {f"g{g}.rows": str(wt.first_wave_rows), f"g{g}.cols": str(wt.first_wave_cols),
                  f"g{g}.dram_gb": f"{wt.dram_bytes / 1e9:.2f}"}
    wt1 = tiling.wave_traffic(n, n, n, bm, bn, 1, wave)
    facts |= {"no_reuse_gb": f"{wt1.no_reuse_bytes / 1e9:.1f}", "min_gb": f"{wt1.min_bytes / 1e9:.2f}", "n": str(n),
              "tile_rows": str(tiling.cdiv(n, bm)), "tile_cols": str(tiling.cdiv(n, bn))}
    table(pd.DataFrame(rows))
    if data is None:
        not_measured("TFLOP/s and DRAM bytes per GROUP_SIZE_M")
    return facts


def measured(ctx: Ctx):
    """TFLOP/s of every configuration, and the static figures checked against Nsight Compute."""
    data = gpu_lessons()
    if data is None or not (data.get("matmul") or {}).get("runs"):
        not_measured("TFLOP/s per step and the Nsight Compute checks")
        return None
    runs = data["matmul"]["runs"]
    st.markdown(f"kernels/matmul.py {gpu_label(data)}; `do_bench` median, 2·M·N·K flops.")
    ref = data["matmul"].get("torch_matmul", {})
    table(pd.DataFrame([{"step": r["step"], "configuration": key, "TFLOP/s": f"{r['tflops']:,.0f}" if "tflops" in r else r.get("error", "—"),
                         "vs torch.matmul": f"{100 * r['tflops'] / ref[str(r['size'])]['tflops']:.0f} %"
                         if "tflops" in r and str(r["size"]) in ref else "—"} for key, r in runs.items()]))
    checks = tiling.ncu_checks(data, occupancy.occupancy)
    if checks:
        st.markdown("**Static figures against Nsight Compute** (the compile that ran on the GPU; exact for hardware "
                    "counts, ±10 % for the models)")
        table(pd.DataFrame([{"case": c.case.split("/", 1)[1], "figure": c.figure, "static": f"{c.static:,.1f}",
                             "ncu": f"{c.measured:,.1f}", "difference": f"{100 * c.difference:+.1f} %",
                             "agrees": c.agrees} for c in checks]))
    else:
        st.info("The committed GPU run has no Nsight Compute section (run without --skip-ncu).")
    facts = {f"torch_{size}": f"{v['tflops']:,.0f}" for size, v in ref.items()}
    best = max((r for r in runs.values() if "tflops" in r), key=lambda r: r["tflops"], default=None)
    if best:
        facts["best_tflops"], facts["best_config"] = f"{best['tflops']:,.0f}", tiling.key(*best["config"], size=best["size"])
    facts["agree"] = f"{sum(c.agrees for c in checks)} of {len(checks)}"
    return facts


PANELS = {"tiling.tile": tile, "tiling.isa": isa, "tiling.blocks": blocks, "tiling.stages": stages,
          "tiling.grouping": grouping, "tiling.measured": measured}
