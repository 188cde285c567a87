"""A recommender's EmbeddingBag (mean) + MLP, trained under torch.compile."""
import torch
import torch.nn as nn


def example():
    bag = nn.EmbeddingBag(10000, 64, mode="mean").cuda()
    mlp = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 1)).cuda()

    @torch.compile
    def step(idx, offsets, y):
        loss = nn.functional.binary_cross_entropy_with_logits(mlp(bag(idx, offsets)).squeeze(-1), y)
        loss.backward()
        return loss

    idx = torch.randint(0, 10000, (512,), device="cuda")
    offsets = torch.arange(0, 512, 8, device="cuda")
    step(idx, offsets, torch.rand(64, device="cuda"))
