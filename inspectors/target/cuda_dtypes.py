"""Ops whose CUDA kernel takes dtypes (or scales) the CPU's does not, answered as CUDA's for the view's tensors.

The view's tensors are CPU tensors, so an op runs the CPU's kernel, and Dynamo's and AOTAutograd's
fake tensors, made from them, run the CPU's checks. Where the two builds differ in the dtypes they
take, code that runs on the GPU fails here (and the kernels after it are never compiled):

- `histc` on integer tensors: CUDA's kernel takes every type (aten/src/ATen/native/cuda/
  SummaryOps.cu, AT_DISPATCH_ALL_TYPES), the CPU's floating ones only ("histogram_cpu" not
  implemented for 'Int'), and its meta function refuses them for a CPU tensor
  (torch/_meta_registrations.py, meta_histc). A MoE router counts its tokens per expert with it
  (Qwen3-MoE: `torch.histc(expert_ids.int(), ...)`). CUDA's result has the input's dtype; its
  bin of an integer is the float formula's (non-negative offsets: the same floor).

- half precision where the CPU's kernels take float32 only (torch's OpInfo database, CUDA's
  dtypes against the CPU's, complex32 aside: benchmarks/results/cuda_dtype_survey.txt): the FFTs
  in float16 (a long convolution's fft, Hyena's and FNO's), avg_pool3d, antialiased bilinear
  resizing, the multi-margin losses in float16 and bfloat16. These compute in float32 here and
  give CUDA's dtype back (an FFT of float16 gives complex32, as cuFFT's does). rrelu's float16
  (`rrelu`, `rrelu_with_noise`) too.

- `_scaled_mm` with a scale per row and per column (torchao's float8 "rowwise" recipe): CUDA's
  kernel takes them (cuBLASLt's rowwise scaling on sm_89 and newer); torch 2.11's CPU kernel
  asserts one scale per tensor (aten/src/ATen/native/Blas.cpp). Computed here as that scaling is
  defined: the float32 product, each row times its scale_a, each column times its scale_b, plus
  the bias, in out_dtype.

- the rest of the survey: `abs` and `trace` of bool (and softsign, which calls abs) compute on
  uint8 (abs gives bool back, trace int64, as CUDA's and the meta functions do); `nansum` of
  complex (and nanmean, which calls it) sums with each NaN element as zero, as CUDA's kernel.

Three places answer: the view's mode for eager code (`eager`), a Meta kernel without the CPU's
check while torch.compile traces (`install_tracing`), and the CPU graph that runs after Inductor
compiled the target's (`on_cpu_graph`: each such node computes as CUDA does).
"""
from __future__ import annotations

INT_ON_CUDA = ("histc",)          # ops whose CUDA kernel takes integer inputs and the CPU's does not
# ops (by the name the view's mode or a graph node gives them) whose CUDA kernel takes half
# precision the CPU's refuses: the name's start -> the dtypes ("h": float16, "hb": and bfloat16)
HALF_ON_CUDA = {"fft_": "h", "_fft_": "h", "avg_pool3d": "hb", "interpolate": "hb", "_upsample_bilinear2d_aa": "hb",
                "multi_margin_loss": "hb", "multilabel_margin_loss": "hb", "rrelu": "h"}
BOOL_ON_CUDA = ("abs", "trace")   # ops whose CUDA kernel takes bool and the CPU's does not
COMPLEX_ON_CUDA = ("nansum",)     # ... complex


def _name(func) -> str | None:
    """'histc' for torch.histc, Tensor.histc and aten.histc.default (and its overloads)."""
    schema = getattr(func, "_schema", None)
    if schema is not None:
        name = schema.name
        return name.split("::", 1)[1] if name.startswith("aten::") else None
    return getattr(func, "__name__", None)


def histc_as_cuda(input, bins=100, min=0, max=0, *, out=None):
    """torch.histc as CUDA computes it, for any dtype it takes: an integer input binned as float64
    (every int32 value exactly) between bounds made integers as CUDA makes them (its accumulator
    type for an integer input is int64: SummaryOps.cu), the counts in the input's dtype. A bool
    input is refused, as CUDA's AT_DISPATCH_ALL_TYPES refuses it."""
    import torch
    if input.is_floating_point():
        return torch.histc(input, bins, min, max, out=out) if out is not None else torch.histc(input, bins, min, max)
    if input.dtype == torch.bool or input.is_complex():
        raise RuntimeError(f'"histogram_cuda" not implemented for \'{input.dtype}\'')
    counts = torch.histc(input.to(torch.float64), bins, int(min), int(max)).to(input.dtype)
    return out.copy_(counts) if out is not None else counts


def _half_dtypes(name: str | None) -> tuple:
    import torch
    kinds = next((v for k, v in HALF_ON_CUDA.items() if name and name.startswith(k)), "")
    return (torch.float16,) * ("h" in kinds) + (torch.bfloat16,) * ("b" in kinds)


def in_float32(func, dtypes: tuple):
    """`func` as CUDA runs it on half-precision tensors of `dtypes` where the CPU's kernel refuses
    them: called as is, and on the CPU's refusal again with those tensors in float32 (complex32
    in complex64), its float32 results given back in the input's dtype (complex64 in complex32)."""
    import torch
    from torch.utils._pytree import tree_flatten, tree_map

    def call(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except (RuntimeError, NotImplementedError) as e:
            half = [t.dtype for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)
                    and t.dtype in (*dtypes, torch.complex32)]
            if not half or not ("Half" in str(e) or "BFloat16" in str(e) or "ComplexHalf" in str(e)):
                raise
        real = next((d for d in half if d != torch.complex32), torch.float16)
        up = {real: torch.float32, torch.complex32: torch.complex64}
        down = {torch.float32: real, torch.complex64: torch.complex32}

        def cast(table):
            return lambda t: t.to(table[t.dtype]) if isinstance(t, torch.Tensor) and t.dtype in table else t
        return tree_map(cast(down), func(*tree_map(cast(up), args), **tree_map(cast(up), kwargs)))
    return call


def _refused(call, args, kwargs, says: str):
    """`call(*args, **kwargs)`, or None where the CPU's kernel refused it with a message holding `says`."""
    try:
        return call(*args, **kwargs)
    except (RuntimeError, NotImplementedError) as e:
        if says not in str(e):
            raise
    return None


def bool_as_cuda(func):
    """`func` (abs, trace) as CUDA runs it on bool tensors: on the CPU's refusal, on uint8 (0 and 1),
    an abs given back as bool (trace's int64 is CUDA's for every integer type)."""
    import torch
    from torch.utils._pytree import tree_map

    def call(*args, **kwargs):
        out = _refused(func, args, kwargs, "'Bool'")
        if out is not None:
            return out
        up = tree_map(lambda t: t.to(torch.uint8) if isinstance(t, torch.Tensor) and t.dtype == torch.bool else t,
                      (args, kwargs))
        out = func(*up[0], **up[1])
        return out.to(torch.bool) if isinstance(out, torch.Tensor) and out.dtype == torch.uint8 else out
    return call


def nansum_as_cuda(func):
    """nansum of a complex tensor as CUDA computes it: each element with a NaN part counts as zero."""
    import torch

    def call(input, *args, **kwargs):
        out = _refused(func, (input, *args), kwargs, "complex")
        if out is not None:
            return out
        return torch.sum(torch.where(input.isnan(), torch.zeros((), dtype=input.dtype), input), *args, **kwargs)
    return call


def scaled_mm_as_cuda(func):
    """torch._scaled_mm as CUDA computes it with per-row and per-column scales, where the CPU's
    kernel takes one scale per tensor only."""
    import torch

    def call(a, b, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None, use_fast_accum=False):
        out = _refused(func, (a, b, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum), {},
                       "scale_a.numel() == 1")
        if out is not None:
            return out
        prod = (a.to(torch.float32) @ b.to(torch.float32)) * scale_a.to(torch.float32) * scale_b.to(torch.float32)
        if bias is not None:
            prod = prod + bias.to(torch.float32)
        return prod.to(out_dtype or a.dtype)
    return call


def _composites(func):
    """softsign and nanmean, Python functions that call abs and nansum where the view's mode does not
    see them: on the CPU's refusal, their formula with the CUDA-like abs and nansum."""
    import torch

    def softsign(input):
        return input / (bool_as_cuda(torch.abs)(input) + 1)

    def nanmean(input, dim=None, keepdim=False, *, dtype=None):
        kept = (~input.isnan()).sum(*(() if dim is None else (dim, keepdim)))
        return nansum_as_cuda(torch.nansum)(input, dim, keepdim, dtype=dtype) / kept
    formula = {"softsign": softsign, "nanmean": nanmean}[_name(func)]

    def call(*args, **kwargs):
        out = _refused(func, args, kwargs, "'Bool'" if formula is softsign else "complex")
        return out if out is not None else formula(*args, **kwargs)
    return call


def _other(name: str | None):
    """The CUDA-like wrapper of an op of BOOL_ON_CUDA or COMPLEX_ON_CUDA (or a Python function calling
    one), by its name; None for others."""
    return bool_as_cuda if name in BOOL_ON_CUDA else nansum_as_cuda if name in COMPLEX_ON_CUDA else \
        _composites if name in ("softsign", "nanmean") else scaled_mm_as_cuda if name == "_scaled_mm" else None


def eager(func, args, kwargs):
    """The result of `func(*args, **kwargs)` as CUDA gives it, where the CPU's kernel would refuse
    the dtype; NotImplemented for any other call."""
    name = _name(func)
    if _half_dtypes(name):
        return in_float32(func, _half_dtypes(name))(*args, **kwargs)
    if _other(name) is not None:
        return _other(name)(func)(*args, **kwargs)
    if name != "histc":
        return NotImplemented
    input = args[0] if args else kwargs.get("input")
    if input is None or input.is_floating_point():
        return NotImplemented
    rest = {k: v for k, v in kwargs.items() if k != "input"}
    return histc_as_cuda(input, *args[1:], **rest)


def install_tracing(undo: list) -> None:
    """While torch.compile traces (fake CPU tensors): histc's meta function without the CPU's dtype
    check, the output as CUDA's (`bins` counts of the input's dtype). Dynamo and AOTAutograd run
    fake tensors under the Python dispatcher, which asks the op's Python Meta kernel (and the meta
    table): both are replaced. `undo`: where the way back goes (a list of callables)."""
    import torch
    from torch._C import DispatchKey
    from torch._decomp import meta_table

    def histc_meta(input, bins=100, min=0, max=0):
        return input.new_empty((bins,))
    op = torch.ops.aten.histc.default
    had_kernel, had_meta = DispatchKey.Meta in op.py_kernels, op in meta_table
    saved_kernel, saved_meta = op.py_kernels.get(DispatchKey.Meta), meta_table.get(op)
    op.py_kernels[DispatchKey.Meta] = histc_meta
    meta_table[op] = histc_meta
    op._dispatch_cache.clear()
    from torch._subclasses.fake_tensor import FakeTensorMode
    FakeTensorMode.cache_clear()                 # a refusal cached before is not served

    def back():
        from torch._subclasses.fake_tensor import FakeTensorMode
        FakeTensorMode.cache_clear()             # fake results made meanwhile are not kept
        if had_kernel:
            op.py_kernels[DispatchKey.Meta] = saved_kernel
        else:
            op.py_kernels.pop(DispatchKey.Meta, None)
        if had_meta:
            meta_table[op] = saved_meta
        else:
            meta_table.pop(op, None)
        op._dispatch_cache.clear()
    undo.append(back)


def on_cpu_graph(gm) -> None:
    """The CPU graph that runs after Inductor compiled the target's: each op of INT_ON_CUDA and
    HALF_ON_CUDA computes as CUDA does (an integer histc binned as float, a float16 FFT in
    float32). In place."""
    import torch
    changed = False
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in (torch.ops.aten.histc.default, torch.histc):
            node.target = histc_as_cuda
            changed = True
        elif node.op == "call_function" and _half_dtypes(_name(node.target)):
            node.target = in_float32(node.target, _half_dtypes(_name(node.target)))
            changed = True
        elif node.op == "call_function" and _other(_name(node.target)) is not None:
            node.target = _other(_name(node.target))(node.target)
            changed = True
    if changed:
        gm.recompile()
