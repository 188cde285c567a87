"""The ATen graph the GPU's own torch makes of scaled_dot_product_attention with a boolean mask
(cuDNN's conversion for half precision, the memory-efficient one for float32) and of a
causal_lower_right CausalBias, fwd+bwd: what inspectors/target/attention.py must trace the same.
Needs a GPU (run it on the GPU machine: python3 benchmarks/sdpa_mask_graphs.py)."""
import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx
from torch.nn.attention.bias import causal_lower_right


def _graph(fn, *args) -> str:
    lines = [ln.strip() for ln in make_fx(fn)(*args).code.splitlines()]
    return "\n".join("  " + ln for ln in lines if "torch.ops" in ln)


def main() -> None:
    print(f"# {torch.cuda.get_device_name()} · torch {torch.__version__} · cuDNN {torch.backends.cudnn.version()}")
    for dtype in (torch.bfloat16, torch.float32):
        q, k, v = (torch.randn(2, 8, 128, 64, device="cuda", dtype=dtype) for _ in range(3))
        keep = (torch.arange(128, device="cuda") < torch.tensor([[100], [128]], device="cuda"))[:, None, None, :]
        print(f"## bool padding mask, {dtype}")
        print(_graph(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), q, k, v, keep))
    q = torch.randn(2, 8, 64, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k, v = (torch.randn(2, 8, 128, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(2))

    # (a CausalBias cannot be made inside make_fx's trace: torch.compile's own graphs, as AOTAutograd gives them)
    from torch._dynamo.backends.common import aot_autograd
    graphs = []

    def keep(gm, example_inputs):
        graphs.append("\n".join("  " + ln.strip() for ln in gm.code.splitlines() if "torch.ops" in ln))
        return gm.forward
    lower_right = torch.compile(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(
        64, 128)), backend=aot_autograd(fw_compiler=keep, bw_compiler=keep))
    lower_right(q, k, v).sum().backward()
    print("## causal_lower_right(64, 128), bfloat16, fwd+bwd (torch.compile's forward and backward)")
    print("\n".join(graphs))


if __name__ == "__main__":
    main()
