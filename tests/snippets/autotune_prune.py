"""A real autotuner: configs pruned by `prune_configs_by` (which reads the arguments by name,
`nargs`), and the launcher reads `best_config` after the launch, as libraries do."""
import torch
import triton
import triton.language as tl


def keep_fitting(configs, nargs, **kwargs):
    n = nargs["n"]
    return [c for c in configs if c.kwargs["BLOCK"] <= n]


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w) for b, w in ((128, 1), (256, 2), (1024, 4), (4096, 8))],
                 key=["n"], prune_configs_by={"early_config_prune": keep_fitting})
@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def example():
    x = torch.randn(1024)
    y = torch.empty_like(x)
    copy_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, x.numel())
    chosen = copy_kernel.best_config            # what a library does next
    print("best", chosen.kwargs["BLOCK"])
