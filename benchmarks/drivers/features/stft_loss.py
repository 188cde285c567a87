"""A multi-resolution STFT loss (speech models), compiled: FFTs outside Triton, the magnitudes in it."""
import torch


@torch.compile
def stft_loss(pred, target):
    loss = 0
    for n_fft in (256, 512):
        w = torch.hann_window(n_fft, device=pred.device)
        p = torch.stft(pred, n_fft, hop_length=n_fft // 4, window=w, return_complex=True).abs()
        t = torch.stft(target, n_fft, hop_length=n_fft // 4, window=w, return_complex=True).abs()
        loss = loss + (p - t).abs().mean() + ((p + 1e-5).log() - (t + 1e-5).log()).abs().mean()
    return loss


def example():
    pred = torch.randn(4, 16000, device="cuda", requires_grad=True)
    stft_loss(pred, torch.randn(4, 16000, device="cuda")).backward()
