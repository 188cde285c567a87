"""Triton's own LinearLayout, for the tests of the pure-Python layout view
(inspectors.explain.layout_view): run through inspectors.compile.layout_probe, since these
calls go into C++, where Triton 3.6 aborts on a shared layout, so they never run in the test
process or the server. With triton_shim, the only modules that touch Triton's internals."""
from __future__ import annotations

def _gluon_layout(spec: dict):
    from triton.experimental.gluon.language import _layouts as gl
    kind = spec["kind"]
    if kind == "blocked":
        return gl.BlockedLayout(spec["size_per_thread"], spec["threads_per_warp"], spec["warps_per_cta"], spec["order"])
    if kind == "nvidia_mma":
        return gl.NVMMADistributedLayout(spec["version"], spec["warps_per_cta"], spec["instr_shape"])
    if kind == "amd_mfma":
        from triton.experimental.gluon.language.amd import _layouts as amd
        return amd.AMDMFMALayout(spec["version"], spec["instr_shape"], spec["transposed"], spec["warps_per_cta"])
    if kind == "slice":
        return gl.SliceLayout(spec["dim"], _gluon_layout(spec["parent"]))
    if kind == "swizzled_shared":
        return gl.SwizzledSharedLayout(spec["vec"], spec["per_phase"], spec["max_phase"], spec["order"])
    raise ValueError(f"unknown layout kind {kind!r}")


class _Builder:
    _b = None

    @classmethod
    def get(cls):
        if cls._b is None:
            from triton._C import libtriton
            ctx = libtriton.ir.context()
            libtriton.ir.load_dialects(ctx)
            cls._b = libtriton.gluon_ir.GluonOpBuilder(ctx)
            cls._b._ctx = ctx       # keep the context alive as long as the builder
        return cls._b


def linear_layout(spec: dict, shape) -> dict:
    """Triton's `to_linear_layout` of a layout (`spec`: {"kind": "blocked", ...}) on a
    tensor `shape`: {"register": bases, "lane": ..., "warp": ..., "block": ...} for a
    distributed layout, {"offset": bases, "block": ...} for a shared one."""
    b = _Builder.get()
    d = b.to_linear_layout(_gluon_layout(spec)._to_ir(b), list(shape))
    if hasattr(d, "offset_bases"):
        return {"offset": d.offset_bases, "block": d.block_bases}
    return {"register": d.reg_bases, "lane": d.lane_bases, "warp": d.warp_bases, "block": d.block_bases}


def linear_layout_map(bases: dict, shape) -> list:
    """Every (warp, lane, register) through Triton's `LinearLayout.apply`:
    [[warp, lane, register, [index per dimension]], ...]."""
    from triton._C import libtriton
    names = [f"dim{i}" for i in range(len(shape))]
    ll = libtriton.linear_layout.LinearLayout.from_bases(
        [(k, [list(x) for x in bases[k]]) for k in ("register", "lane", "warp", "block")], names, list(shape),
        require_surjective=False)
    out = []
    for w in range(1 << len(bases["warp"])):
        for l in range(1 << len(bases["lane"])):
            for r in range(1 << len(bases["register"])):
                got = ll.apply({"register": r, "lane": l, "warp": w, "block": 0})
                out.append([w, l, r, [got[n] for n in names]])
    return out
