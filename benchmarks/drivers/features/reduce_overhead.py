"""mode="reduce-overhead": CUDA graphs around the compiled forward and backward."""
import torch
import torch.nn as nn


def example():
    model = nn.Sequential(nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10)).cuda()
    cmodel = torch.compile(model, mode="reduce-overhead")
    x = torch.randn(32, 128, device="cuda")
    for _ in range(3):
        # each step's gradients are new (a training loop's zero_grad): accumulating into the last step's,
        # which are the backward graph's CUDA-graph outputs, reads memory its next replay overwrote
        # ("accessing tensor output of CUDAGraphs that has been overwritten", on the GPU)
        model.zero_grad(set_to_none=True)
        out = cmodel(x)
        out.sum().backward()
