"""Which ops' CUDA kernels take dtypes their CPU kernels refuse? (issue 55; not a test: it prints)

The target view runs a model's ops on CPU tensors, so where the two builds' kernels differ in the
dtypes they take, code that runs on a GPU fails on a laptop (histc on int32 in a MoE router was
the first found). torch's own OpInfo database declares, per op, the dtypes its CPU and its CUDA
kernels take; this lists each op whose CUDA dtypes are more (complex32 aside: CUDA's alone,
experimental), then tries each such op on the CPU in the dtype the list names, so the declared
refusal is seen, then runs the same sample on the target view's `cuda` tensors: whether the view
answers it (inspectors/target/cuda_dtypes.py) and the dtype of its first result.

    PYTHONPATH=<a folder with expecttest> .venv/bin/python benchmarks/cuda_dtype_survey.py
(torch.testing's OpInfo database imports expecttest, which the project does not need.)
"""
from __future__ import annotations

import sys


def main() -> int:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    from torch.utils._pytree import tree_leaves, tree_map

    from inspectors.base.targets import parse
    from inspectors.target import tensor_view
    print(f"torch {torch.__version__}: {len(op_db)} OpInfos")
    rows = []
    for op in op_db:
        try:
            extra = set(op.supported_dtypes("cuda")) - set(op.supported_dtypes("cpu")) - {torch.complex32}
        except Exception:  # noqa: BLE001 - an OpInfo that cannot answer for a device type: left out
            continue
        if not extra:
            continue
        dtype = sorted(extra, key=str)[0]
        refused, answered, sample = "-", "-", None
        try:
            sample = next(iter(op.sample_inputs("cpu", dtype)), None)
            if sample is not None:
                op(sample.input, *sample.args, **sample.kwargs)
                refused = "no (the CPU ran it)"
        except Exception as e:  # noqa: BLE001 - the CPU's refusal is what is looked for
            refused = "yes: " + str(e).splitlines()[0][:70]
        if sample is not None and refused.startswith("yes"):
            try:
                with tensor_view.TargetView(parse("cuda:90")):
                    on = tree_map(lambda t: t.cuda() if isinstance(t, torch.Tensor) else t,
                                  (sample.input, sample.args, sample.kwargs))
                    out = [t for t in tree_leaves(op(on[0], *on[1], **on[2])) if isinstance(t, torch.Tensor)]
                answered = f"yes ({str(out[0].dtype).removeprefix('torch.')})" if out else "yes"
            except Exception as e:  # noqa: BLE001 - what the view still refuses
                answered = "no: " + str(e).splitlines()[0][:60]
        rows.append((f"{op.name}{'.' + op.variant_test_name if op.variant_test_name else ''}",
                     ", ".join(sorted(str(d).replace("torch.", "") for d in extra)), refused, answered))
    print(f"{len(rows)} ops whose CUDA kernels take more dtypes than the CPU's (complex32 aside)\n")
    print(f"{'op':44} {'CUDA only':38} {'the CPU refuses':76} view answers as CUDA")
    for r in rows:
        print(f"{r[0]:44} {r[1]:38} {r[2]:76} {r[3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
