"""Panels of the coalescing lesson (assets/lessons/coalescing.md): the same data read row-wise
and column-wise, a strided read, a naive transpose and its layout conversion through shared
memory: for every global access, bytes per warp, 32-byte sectors and efficiency, estimated from
the PTX (inspectors.explain.coalescing); Nsight Compute's figures from assets/ncu/coalescing.json."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from app.backend import services
from app.render import classroom
from app.lessons.common import LIBRARY, ROOT, TARGET, Ctx, library_kernel, settings
from inspectors.base.result import KernelResult
from inspectors.explain import coalescing, coarsening, layout_view
from inspectors.read import callsites, sourcemap
import kernels

NCU_FILE = ROOT / "assets" / "ncu" / "coalescing.json"
# The integer arguments of the lesson's launches (as each file's example() makes them).
LAUNCH_VALUES = {"sum_rows_kernel": {"M": 2048, "N": 2048}, "sum_cols_kernel": {"M": 2048, "N": 2048},
                 "strided_read_kernel": {"n": 2**23, "stride": 2},
                 "transpose_kernel": {"M": 2048, "N": 2048},
                 "transpose_opaque_kernel": {"M": 2048, "N": 2048, "stride_on": 2048, "stride_om": 1}}
CASE_KERNELS = {"rows": ("coalescing", "sum_rows_kernel"), "cols": ("coalescing", "sum_cols_kernel"),
                "strided2": ("strided", "strided_read_kernel"), "strided8": ("strided", "strided_read_kernel"),
                "transpose": ("transpose", "transpose_kernel"), "transpose_opaque": ("transpose", "transpose_opaque_kernel")}


@st.cache_data(show_spinner=False, max_entries=64)
def _estimate(ptx: str, params: tuple[str, ...], values_json: str) -> coalescing.KernelEstimate:
    return coalescing.estimate(ptx, list(params), json.loads(values_json))


def _estimate_of(kernel: KernelResult, values: dict | None = None) -> coalescing.KernelEstimate:
    params = tuple(a.name for a in kernel.args if a.type != "constexpr")
    values = values if values is not None else LAUNCH_VALUES.get(kernel.name, {})
    return _estimate(kernel.stages["ptx"], params, json.dumps(values, sort_keys=True))


def _accesses_table(est: coalescing.KernelEstimate, kernel: KernelResult, slug: str) -> pd.DataFrame:
    """One row per global access; "Python line" names a helper's line and its call
    ("line 20 in `_load`, called from line 56") through the source map."""
    ptx = sourcemap.stage_lines("ptx", kernel.stages["ptx"], LIBRARY[slug].filename)
    source = kernel.stages.get("source", "")
    return pd.DataFrame([{
        "PTX line": a.ptx_line, "Python line": callsites.describe(ptx.chain(a.ptx_line), source), "kind": a.kind, "instruction": a.text.split()[1] if a.text.startswith("@") else a.text.split()[0],
        "based on": a.pointer, "bytes / warp": int(a.bytes_per_request), "sectors (32 B)": round(a.sectors_per_request, 2),
        "efficiency": f"{100 * a.efficiency:.1f} %", "lane → lane": f"{a.lane_stride} B" if a.lane_stride is not None else "—",
    } for a in est.accesses if not a.error])


def _show_access(est: coalescing.KernelEstimate, kind: str, title: str):
    access = next((a for a in est.accesses if a.kind == kind and a.requests), None)
    if access is None:
        return
    st.markdown(f"**{title}** — {coalescing.describe(access)}.")
    st.html(classroom.sectors_html(access))


def _ttgir_lines(kernel: KernelResult, needles: tuple[str, ...], limit: int = 8) -> str:
    out = [line.strip()[:150] for line in kernel.stages["ttgir"].splitlines()
           if any(n in line for n in needles) and not line.startswith("#loc")]
    return "\n".join(out[:limit])


def rows(ctx: Ctx):
    k = library_kernel("coalescing", "sum_rows_kernel")
    est = _estimate_of(k)
    st.code("acc += tl.load(x_ptr + m * N + n, mask=n < N, other=0.0)   # contiguous in n", language="python")
    _show_access(est, "load", "Each load of a warp")
    st.dataframe(_accesses_table(est, k, "coalescing"), hide_index=True, width="stretch")
    return {}


def cols(ctx: Ctx):
    k = library_kernel("coalescing", "sum_cols_kernel")
    est = _estimate_of(k)
    st.code("acc += tl.load(xt_ptr + n * M + m, mask=n < N, other=0.0)   # stride M in n", language="python")
    _show_access(est, "load", "Each load of a warp")
    st.dataframe(_accesses_table(est, k, "coalescing"), hide_index=True, width="stretch")
    return {}


def strided(ctx: Ctx):
    k = library_kernel("strided", "strided_read_kernel")
    stride = st.select_slider("stride", [1, 2, 4, 8, 16], value=2, key="coal_stride")
    est = _estimate_of(k, {"n": 2**23, "stride": stride})
    st.code("x = tl.load(x_ptr + offs * stride, mask=mask)   # stride * 4 bytes between neighbours", language="python")
    _show_access(est, "load", f"Each load of a warp, stride {stride}")
    s = est.summary("load")
    st.markdown(f"Per instruction: **{s['sectors_per_request']:g} sectors per request, "
                f"{100 * s['efficiency']:.1f} % used**. Over a warp's 8 loads the distinct sectors give "
                f"**{100 * s['unique_sectors_efficiency']:.1f} %**: what reaches DRAM at best, if L1 keeps "
                f"the sectors between the loads.")
    st.dataframe(_accesses_table(est, k, "strided"), hide_index=True, width="stretch")
    return {}


def _layout_picture(kernel: KernelResult, name: str, shape: tuple[int, ...], rows: int = 8, cols: int = 32):
    found = layout_view.module_layouts(kernel.stages["ttgir"])
    use = next((u for u in found.uses if u.name == name), None)
    if use is None or not use.drawable:
        return
    own = layout_view.ownership(use.layout, shape)
    grid, note = classroom.ownership_html(own, max_rows=rows, max_cols=cols, highlight=(0, 0))
    st.markdown(f"`{name}`: {use.layout.describe()}")
    st.html(grid)
    st.caption(note + " Outlined: lane 0 of warp 0.")


def transpose(ctx: Ctx):
    k = library_kernel("transpose", "transpose_kernel")
    est = _estimate_of(k)
    st.code("tile = tl.load(x_ptr + offs_m[:, None] * N + offs_n[None, :], mask=mask)   # contiguous in n\n"
            "tl.store(out_ptr + offs_n[None, :] * M + offs_m[:, None], tile, mask=mask)   # contiguous in m",
            language="python")
    st.code(_ttgir_lines(k, ("ttg.convert_layout", "tt.load", "tt.store")), language=None)
    st.html(classroom.legend_html(4))
    _layout_picture(k, "#blocked", (64, 64), rows=8, cols=32)
    _layout_picture(k, "#blocked1", (64, 64), rows=16, cols=32)
    shared = [line for line in k.stages["ptx"].splitlines() if ".shared" in line and ("st." in line or "ld." in line)]
    st.markdown(f"The load's layout (`#blocked`) runs lanes along a row; the store's (`#blocked1`) down a column. "
                f"`ttg.convert_layout` moves the tile between them **through shared memory**: the PTX has "
                f"{sum('st.shared' in l for l in shared)} `st.shared`, a `bar.sync`, and "
                f"{sum('ld.shared' in l for l in shared)} `ld.shared` per thread "
                f"({k.metadata.get('shared', 0):,} bytes of shared memory).")
    _show_access(est, "load", "Loads")
    _show_access(est, "store", "Stores, after the conversion")
    st.dataframe(_accesses_table(est, k, "transpose"), hide_index=True, width="stretch")
    return {}


def opaque(ctx: Ctx):
    k = library_kernel("transpose", "transpose_opaque_kernel")
    est = _estimate_of(k)
    st.code("@triton.jit(do_not_specialize=[\"stride_om\"])   # the 1 in out.stride(1) is hidden\n"
            "tl.store(out_ptr + offs_n[None, :] * stride_on + offs_m[:, None] * stride_om, tile, mask=mask)",
            language="python")
    st.code(_ttgir_lines(k, ("ttg.convert_layout", "tt.store")), language=None)
    _show_access(est, "store", "Each store of a warp")
    st.dataframe(_accesses_table(est, k, "transpose")[lambda d: d.kind == "store"].head(4), hide_index=True, width="stretch")
    store = next((a for a in est.accesses if a.kind == "store" and a.requests), None)
    version = services.lens().engine().triton_version
    if store is not None and store.lane_stride not in (None, 4):
        what = (f"Triton {version} (compiling here) runs the lanes along `n`: each lane writes into another "
                f"row, **{store.sectors_per_request:g} sectors per request for {store.bytes_per_request:g} bytes "
                f"({100 * store.efficiency:.1f} %)**")
    else:
        what = (f"Triton {version} (compiling here) happens to run the lanes along `m`: scalar stores, "
                f"coalesced, but 4 bytes per lane where the rescued kernel wrote 16")
    st.markdown(f"Now the compiler cannot see that `m` is contiguous in the output, so nothing tells it to pick "
                f"a store layout along `m`. {what}. Which layout a compiler guesses is up to it: Triton 3.6 on "
                f"the GPU machine put the lanes along `m`, Triton 3.9 along `n` (see the next step). Telling the "
                f"compiler what is contiguous is what makes it reliable.")
    return {}


def ncu(ctx: Ctx):
    try:
        data = json.loads(NCU_FILE.read_text())
    except (OSError, ValueError):
        st.info("No Nsight Compute results are committed (assets/ncu/coalescing.json). Run "
                "`python3 benchmarks/ncu_coalescing.py --out assets/ncu` on a GPU machine.")
        return None
    st.markdown(f"Measured on **{data['gpu']}** with Nsight Compute {data['ncu'].split('(')[0].replace('Version', '').strip()} "
                f"(driver {data['nvidia_smi'].split(',')[-1].strip()}, torch {data['torch']}, Triton {data['triton']}). "
                f"*Static* is this page's estimate from the PTX that ran there; ncu divides "
                f"`l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum` by `…_requests_…` (and `st`).")
    rows_ = _ncu_rows(NCU_FILE.read_text())
    here = _static_here(data)
    column = f"static here (Triton {services.lens().engine().triton_version} PTX)"
    for row in rows_:
        row[column] = here.get((row["kernel"], row["access"]))
    st.dataframe(pd.DataFrame(rows_), hide_index=True, width="stretch", height=36 * (len(rows_) + 1) + 4)
    st.caption("The last column evaluates the PTX compiled on this machine (its Triton, sm_90) for the same "
               "launch. It differs only where the compilers chose differently: the hidden-stride transpose's "
               "store layout.")
    return {}


@st.cache_data(show_spinner=False, max_entries=2)
def _ncu_rows(text: str) -> list[dict]:
    return ncu_rows(json.loads(text))


def ncu_rows(data: dict) -> list[dict]:
    out = []
    for case in data["cases"]:
        est = coalescing.estimate(case["ptx"], case["params"], case["values"])
        for op, kind in (("ld", "load"), ("st", "store")):
            measured = case["ncu"].get(f"sectors_per_request_{op}")
            static = est.summary(kind)["sectors_per_request"]
            if measured is None:
                continue
            out.append({"kernel": case["case"], "access": kind, "static sectors / request": round(static, 2),
                        "ncu sectors / request": round(measured, 2),
                        "difference": f"{100 * (static - measured) / measured:+.1f} %",
                        "within ±10 %": abs(static - measured) <= 0.1 * measured})
    return out


def _static_here(data: dict) -> dict:
    """(case, load|store) -> sectors per request of this machine's compile of the same launch."""
    out = {}
    for case in data["cases"]:
        if case["case"] in CASE_KERNELS:
            kernel = library_kernel(*CASE_KERNELS[case["case"]])
        elif case["case"].startswith("coarse_"):
            block, warps = (int(x) for x in case["case"].split("_")[1].split("x"))
            result = services.compile_kernel(coarsening.sweep_request(kernels.get("coarsening").source(), block, warps,
                                                                      TARGET), float(settings.compile_timeout_s))
            if not result.ok:
                continue
            kernel = result.kernels[0]
        else:
            continue
        est = _estimate_of(kernel, case["values"])
        for kind in ("load", "store"):
            out[(case["case"], kind)] = round(est.summary(kind)["sectors_per_request"], 2)
    return out


PANELS = {"coalescing.rows": rows, "coalescing.cols": cols, "coalescing.strided": strided,
          "coalescing.transpose": transpose, "coalescing.opaque": opaque, "coalescing.ncu": ncu}
