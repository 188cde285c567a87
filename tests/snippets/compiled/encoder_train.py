"""nn.TransformerEncoderLayer compiled, a training step with dropout: MultiheadAttention's
fused projections, its attention with dropout, LayerNorms and the feed-forward block."""
import torch


def example():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, batch_first=True,
                                             dropout=0.1).cuda()
    x = torch.randn(2, 16, 64, device="cuda", requires_grad=True)
    torch.compile(layer)(x).sum().backward()
