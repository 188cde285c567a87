"""CTC loss of an acoustic model's log-probs, compiled, forward and backward."""
import torch
import torch.nn as nn


def example():
    proj = nn.Linear(80, 32).cuda()

    @torch.compile
    def step(feats, targets, in_lens, tgt_lens):
        logp = proj(feats).log_softmax(-1).transpose(0, 1)
        loss = nn.functional.ctc_loss(logp, targets, in_lens, tgt_lens)
        loss.backward()
        return loss

    feats = torch.randn(4, 100, 80, device="cuda")
    targets = torch.randint(1, 32, (4, 20), device="cuda")
    step(feats, targets, torch.full((4,), 100, device="cuda"), torch.full((4,), 20, device="cuda"))
