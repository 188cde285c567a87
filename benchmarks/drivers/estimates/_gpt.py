"""A GPT training step (embedding, LayerNorm, causal SDPA, GELU MLP, cross-entropy; forward,
backward, AdamW) under torch.compile and bf16 autocast, at a size the driver beside it picks.
Made once per process, so a second step runs the kernels the first compiled."""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=-1)
        q, k, v = (t.view(B, T, self.h, C // self.h).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, d, h, layers):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Block(d, h) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx, targets):
        x = self.emb(idx)
        for b in self.blocks:
            x = b(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)).float(), targets.view(-1))


@functools.cache
def _made(vocab, d, h, layers, batch, seq):
    torch.manual_seed(0)
    model = GPT(vocab, d, h, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=False, foreach=True)
    idx = torch.randint(0, vocab, (batch, seq), device="cuda")
    return model, torch.compile(model), torch.compile(opt.step), opt, idx


def step(vocab, d, h, layers, batch, seq):
    model, compiled, opt_step, opt, idx = _made(vocab, d, h, layers, batch, seq)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = compiled(idx, idx)
    loss.backward()
    opt_step()
    opt.zero_grad(set_to_none=True)
