"""The reference results: tables (JSON) and charts (PNG) in assets/bench/, from the output of
benchmarks/gpu_bench.py on the GPU machine. Runs here, on any machine (needs matplotlib).

    .venv/bin/python benchmarks/reference_tables.py assets/bench/gpu_bench.json [--markdown]

Each assets/bench/<id>.json holds {"id", "order", "title", "note", "env", "table": {"columns",
"rows"}}; the Benchmark page shows them in `order`, each with <id>.png when there is one.
--markdown prints the tables for the README.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from inspectors.bench.model import EAGER, COMPILED, TRITON, BenchResult  # noqa: E402

ASSETS = ROOT / "assets" / "bench"

# The seeds' own figures (their GPU, unnamed), for comparison beside ours.
SEED_GELU_MS = {"manual torch": 8.1, EAGER: 1.1, COMPILED: 1.47, TRITON: 1.848}
SEED_SOFTMAX_MS = {"manual torch": 3.7, EAGER: 1.5, COMPILED: 1.3, TRITON: 1.9}
SEED_ADD_MUL_GBPS = {  # batch: (triton, torch, torch_scripted)
    4: (0.059406, 0.020833, 0.046875), 16: (0.457143, 0.171429, 0.475248), 64: (3.0, 1.333333, 3.0),
    256: (24.0, 10.484642, 24.0), 1024: (132.485175, 69.228170, 153.600004),
    4096: (558.545450, 291.271104, 558.545450), 16384: (819.626913, 500.115745, 833.084721),
    65536: (916.320403, 306.960193, 899.807760), 262144: (927.003376, 306.093989, 927.943371)}
LABELS = {EAGER: "torch eager", COMPILED: "torch.compile", TRITON: "Triton"}


def _r(x, nd=3):
    return None if x is None else round(float(x), nd)


def _sig(x, digits=3):
    """3 significant digits, whole numbers from 100 up: 0.0594, 21.7, 2930."""
    if x is None:
        return None
    x = float(x)
    if abs(x) >= 100:
        return int(round(x))
    return float(f"{x:.{digits}g}")


def _providers_table(res: BenchResult, size: int, seed_ms: dict, names: dict) -> dict:
    triton = res.row(size, TRITON)
    rows = []
    for provider in ("manual torch", EAGER, COMPILED, TRITON):
        r = res.row(size, provider)
        if r is None:
            continue
        rows.append([names.get(provider, provider), _r(r.ms, 4), _sig(r.gbps), _r(r.pct_of_ceiling, 1),
                     _r(r.ms / triton.ms, 2), seed_ms.get(provider)])
    floor_ms = triton.bytes / (res.ceilings.copy_gbps * 1e9) * 1e3
    rows.append(["bandwidth floor (bytes / measured copy GB/s)", _r(floor_ms, 4), _sig(res.ceilings.copy_gbps),
                 100.0, _r(floor_ms / triton.ms, 2), None])
    return {"columns": ["provider", "ms (median)", "GB/s", "% of copy", "time / Triton's", "seed ms (their GPU)"],
            "rows": rows}


def _chart(path: Path, title: str, xlabel: str, series: dict, ceiling: float | None = None, ylabel: str = "GB/s",
           xlog: bool = True):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=100)
    for name, points in series.items():
        xs, ys = zip(*points)
        ax.plot(xs, ys, marker="o", markersize=3, linewidth=1.5, label=name)
    if ceiling:
        ax.axhline(ceiling, color="gray", linestyle="--", linewidth=1, label=f"measured copy ({ceiling:,.0f} GB/s)")
    if xlog:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _series(res: BenchResult, names: dict | None = None, y: str = "gbps") -> dict:
    names = names or {}
    return {names.get(p, p): [(r.size, getattr(r, y)) for r in res.rows if r.provider == p] for p in res.providers()}


def build(raw: dict, charts: Path | None = None) -> list[dict]:
    """The tables from gpu_bench.py's output; the PNG charts too when `charts` names a folder."""
    env = raw["sections"]["env"]
    panel = {k: BenchResult.from_json(v) for k, v in raw["sections"]["panel"].items()}
    agree = raw["sections"]["agree"]
    summary = raw["sections"]["summary"]
    ceil = panel["vector_add"].ceilings
    common = {"env": env, "ceilings": ceil.to_json()}
    tables = []

    def chart(name, *args, **kwargs):
        if charts is not None:
            _chart(charts / f"{name}.png", *args, **kwargs)

    gelu = panel["gelu"]
    n = max(r.size for r in gelu.rows)
    gelu_names = {EAGER: 'F.gelu(approximate="tanh") (torch eager)'}
    tables.append({"id": "gelu", "order": 1, "title": "GELU (tanh), 2^28 fp32 elements (16384 × 16384)",
                   "note": "The seed's table (CS336-style: manual torch ops vs F.gelu vs torch.compile vs Triton). "
                           "The seed names neither its GPU nor its size; 16384² fits its 1.1 ms F.gelu at ~2 TB/s.",
                   "table": _providers_table(gelu, n, SEED_GELU_MS, gelu_names), **common})
    chart("gelu", f"GELU on {env['gpu']['name']}", "n (fp32 elements)", _series(gelu, gelu_names),
           ceil.copy_gbps)

    sm = panel["softmax"]
    cols = max(r.size for r in sm.rows)
    sm_names = {EAGER: "torch.softmax (torch eager)"}
    tables.append({"id": "softmax", "order": 2, "title": "Softmax, 16384 × 16384 fp32 (rows of 16384)",
                   "note": "The seed's table: manual torch (max, subtract, exp, sum, divide) vs torch.softmax vs "
                           "torch.compile vs Triton. The chart sweeps the row length with 16384 rows.",
                   "table": _providers_table(sm, cols, SEED_SOFTMAX_MS, sm_names), **common})
    chart("softmax", f"Softmax, 16384 rows, on {env['gpu']['name']}", "n_cols", _series(sm, sm_names),
           ceil.copy_gbps)

    am = panel["add_mul_act"]
    from kernels.add_mul_act import bench_width
    rows = []
    for b in sorted({r.size for r in am.rows}):
        g = {p: (am.row(b, p).gbps if am.row(b, p) else None) for p in (TRITON, EAGER, "TorchScript", COMPILED)}
        seed = SEED_ADD_MUL_GBPS.get(b, (None, None, None))
        rows.append([b, bench_width(b), _sig(g[TRITON]), _sig(g[EAGER]), _sig(g["TorchScript"]),
                     _sig(g[COMPILED]), _sig(seed[0]), _sig(seed[1]), _sig(seed[2])])
    tables.append({"id": "add_mul_act", "order": 3,
                   "title": "Fused add-multiply-activation relu(x + y * w): GB/s over the seed's batch/weight sizes",
                   "note": "GB/s = (3 · batch · width + width) · 4 bytes / median time, for every provider. "
                           "The seed's kernel is the flat in-place variant (x = relu(0.5·in + x + bias)); same bytes.",
                   "table": {"columns": ["batch", "weight width", "Triton", "torch eager", "TorchScript",
                                         "torch.compile", "seed Triton", "seed torch", "seed TorchScript"],
                             "rows": rows}, **common})
    chart("add_mul_act", f"add-mul-relu on {env['gpu']['name']}", "batch (width = 2·√batch)",
           _series(am), ceil.copy_gbps)

    vc = agree["vector_add_vs_copy"]
    tables.append({"id": "vector_add_copy", "order": 4, "title": "Vector add vs device-to-device copy (fp32)",
                   "note": "GB/s counts bytes read + written: add moves 3 vectors, copy 2. Triton and torch add from "
                           "the panel's sweep; copy timed beside them with do_bench.",
                   "table": {"columns": ["n", "Triton add GB/s", "torch add GB/s", "torch copy GB/s",
                                         "Triton add ms", "copy ms"],
                             "rows": [[r["size"], _sig(r["triton_add_gbps"]), _sig(r["torch_add_gbps"]),
                                       _sig(r["copy_gbps"]), _r(r["triton_add_ms"], 4), _r(r["copy_ms"], 4)]
                                      for r in vc]}, **common})
    chart("vector_add_copy", f"Vector add vs copy on {env['gpu']['name']}", "n (fp32 elements)",
           {"Triton add": [(r["size"], r["triton_add_gbps"]) for r in vc],
            "torch add": [(r["size"], r["torch_add_gbps"]) for r in vc],
            "torch copy": [(r["size"], r["copy_gbps"]) for r in vc]}, ceil.copy_gbps)

    lib_rows = []
    for t in summary["targets"]:
        res = panel[t["slug"]]
        eager = res.row(t["size"], EAGER)
        lib_rows.append([t["slug"], f"{res.size_name} = {t['size']:,}", _r(res.row(t["size"], TRITON).ms, 4),
                         _sig(t["gbps"]), _r(t["pct_of_copy"], 1), _sig(eager.gbps) if eager else None,
                         "≥ 95 % of copy", "met" if t["meets_95"] else "MISSED"])
    mm = summary.get("matmul")
    if mm:
        lib_rows.append(["matmul (fp16)", "M = N = K = 4096", _r(panel["matmul"].row(4096, TRITON).ms, 4),
                         f"{mm['triton_tflops']:.0f} TFLOP/s", f"{mm['ratio_pct']:.1f} % of torch.matmul",
                         f"torch.matmul {mm['torch_tflops']:.0f} TFLOP/s", "≥ 90 % of torch.matmul",
                         "met" if mm["meets_90"] else "MISSED"])
    tables.append({"id": "library", "order": 5, "title": "Library kernels at their largest size vs the measured ceilings",
                   "note": f"Ceilings measured on this GPU: copy {ceil.copy_gbps:,.0f} GB/s (1 GiB device-to-device, "
                           f"bytes read + written), fp16 torch.matmul 8192³ {ceil.matmul_tflops:,.0f} TFLOP/s. "
                           "Above 100 % of copy means the kernel streams better than torch's copy_ does.",
                   "table": {"columns": ["kernel", "size", "Triton ms", "Triton GB/s", "% of copy",
                                         "torch eager GB/s", "target", ""], "rows": lib_rows}, **common})

    mmr = panel["matmul"]
    tables.append({"id": "matmul", "order": 6, "title": "fp16 matmul vs torch.matmul (cuBLAS), square sizes",
                   "note": "TFLOP/s = 2·M·N·K / median time. 'torch eager' is the fp32 reference (a.float() @ b.float()).",
                   "table": {"columns": ["M = N = K", "Triton TFLOP/s", "torch.matmul fp16 TFLOP/s",
                                         "Triton / torch.matmul", "fp32 reference TFLOP/s"],
                             "rows": [[s, _r(mmr.row(s, TRITON).tflops, 1), _r(mmr.row(s, "torch.matmul (fp16)").tflops, 1),
                                       f"{100 * mmr.row(s, TRITON).tflops / mmr.row(s, 'torch.matmul (fp16)').tflops:.1f} %",
                                       _r(mmr.row(s, EAGER).tflops, 1) if mmr.row(s, EAGER) else None]
                                      for s in sorted({r.size for r in mmr.rows})]}, **common})
    chart("matmul", f"fp16 matmul on {env['gpu']['name']}", "M = N = K",
           _series(mmr, y="tflops"), None, ylabel="TFLOP/s")

    tables.append({"id": "agreement", "order": 7, "title": "The panel's figure vs an independent do_bench script",
                   "note": "Panel: the page's worker process (check, 200 ms memset, two do_bench runs). Independent: "
                           "the kernel's launcher timed with do_bench in benchmarks/gpu_bench.py (median of three "
                           "runs). Same call, same GPU.",
                   "table": {"columns": ["kernel", "size", "unit", "panel", "independent", "difference %",
                                         "within 5 %"],
                             "rows": [[r["slug"], r["size"], r["unit"], _sig(r["panel"], 4), _sig(r["independent"], 4),
                                       _r(r["diff_pct"], 2), "yes" if r["within_5pct"] else "NO"]
                                      for r in agree["rows"]]}, **common})
    return tables


def markdown(tables: list[dict]) -> str:
    out = []
    for t in tables:
        out.append(f"**{t['title']}**\n")
        cols = t["table"]["columns"]
        out.append("| " + " | ".join(cols) + " |")
        out.append("|" + "---|" * len(cols))
        for row in t["table"]["rows"]:
            out.append("| " + " | ".join("" if v is None else (f"{v:,}" if isinstance(v, int) and abs(v) >= 10000
                                                                else str(v)) for v in row) + " |")
        out.append("")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("raw", type=Path)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    raw = json.loads(args.raw.read_text())
    ASSETS.mkdir(parents=True, exist_ok=True)
    tables = build(raw, charts=ASSETS)
    for t in tables:
        (ASSETS / f"{t['id']}.json").write_text(json.dumps(t, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {len(tables)} tables to {ASSETS}", file=sys.stderr)
    if args.markdown:
        print(markdown(tables))


if __name__ == "__main__":
    main()
