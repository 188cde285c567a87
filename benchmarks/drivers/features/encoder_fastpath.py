"""nn.TransformerEncoder's inference fast path (eval, no grad: _transformer_encoder_layer_fwd, nested
tensors from a padding mask) beside a compiled copy, and torch.inference_mode decoding."""
import torch


def example():
    layer = torch.nn.TransformerEncoderLayer(64, 4, 128, batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=True).cuda().eval()
    x = torch.randn(4, 32, 64, device="cuda")
    pad = torch.zeros(4, 32, dtype=torch.bool, device="cuda")
    pad[:, 24:] = True
    with torch.inference_mode():
        enc(x, src_key_padding_mask=pad)
        torch.compile(enc)(x, src_key_padding_mask=pad)
