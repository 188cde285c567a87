"""A driver that imports transformers (lazy modules in sys.modules) and calls a Liger op on a
transformers config's sizes."""
import torch
import transformers
from transformers import LlamaConfig
from liger_kernel.ops.rms_norm import LigerRMSNormFunction


def example():
    cfg = LlamaConfig(hidden_size=512, intermediate_size=1024, num_hidden_layers=1, num_attention_heads=8)
    x = torch.randn(64, cfg.hidden_size, device="cuda", requires_grad=True)
    w = torch.ones(cfg.hidden_size, device="cuda", requires_grad=True)
    LigerRMSNormFunction.apply(x, w, cfg.rms_norm_eps).sum().backward()
    print("transformers", transformers.__version__)
