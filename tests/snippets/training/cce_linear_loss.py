"""Apple's cut-cross-entropy (25.1.1): the classifier's matmul and the cross-entropy in one
library op, forward and backward in bf16, as a language model's loss calls it. Its kernels read
the logits' chunks without writing them: a log-sum-exp forward with locks, an indexed dot, and a
backward that recomputes the logits (issue 55: 2 of its 3 launches had a PTX the GPU did not
compile)."""
import torch
from cut_cross_entropy import linear_cross_entropy

N, D, V = 2048, 512, 8192


def example():
    e = torch.randn(N, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    c = torch.randn(V, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    targets = torch.randint(0, V, (N,), device="cuda")
    loss = linear_cross_entropy(e, c, targets)
    loss.backward()
    assert e.grad is not None and c.grad is not None
