"""Quantization-aware training: weights fake-quantized per channel, activations per tensor (int8), compiled fwd+bwd."""
import torch


class QLinear(torch.nn.Linear):
    def forward(self, x):
        scale = self.weight.detach().abs().amax(dim=1).clamp(min=1e-8) / 127
        w = torch.fake_quantize_per_channel_affine(self.weight, scale, torch.zeros_like(scale, dtype=torch.int32),
                                                   0, -128, 127)
        xs = x.detach().abs().amax().clamp(min=1e-8) / 127
        x = torch.fake_quantize_per_tensor_affine(x, xs, 0, -128, 127)
        return torch.nn.functional.linear(x, w, self.bias)


def example():
    model = torch.nn.Sequential(QLinear(128, 256), torch.nn.ReLU(), QLinear(256, 64)).cuda()
    x = torch.randn(64, 128, device="cuda")
    torch.compile(model)(x).sum().backward()
