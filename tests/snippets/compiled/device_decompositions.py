"""torch's decompositions that branch on their input's device, each as a model calls it: a DPO-style
loss through logsigmoid (the CPU's forward keeps exp(-|x|) for the backward, a GPU's recomputes
it), a 3-channel image upsampled in channels-last memory (a GPU's nearest and bilinear kernels
write fewer than 4 or 16 channels contiguous), a spatial transformer's bilinear grid_sample (the
CPU's leaves its grid unexpanded) and a half-precision BatchNorm step (the CPU's saved statistics
are converted to half)."""
import torch
import torch.nn.functional as F


def dpo_loss(chosen, rejected, beta=0.1):
    return -F.logsigmoid(beta * (chosen - rejected)).mean()


def resize(img):
    return F.interpolate(img, scale_factor=2, mode="nearest") + F.interpolate(img, size=(48, 48), mode="bilinear")


def warp(img, theta):
    grid = F.affine_grid(theta, img.shape, align_corners=False)
    return F.grid_sample(img, grid, mode="bilinear", align_corners=False)


def example():
    chosen, rejected = (torch.randn(64, device="cuda", requires_grad=True) for _ in range(2))
    torch.compile(dpo_loss)(chosen, rejected).backward()
    img = torch.randn(2, 3, 24, 24, device="cuda").contiguous(memory_format=torch.channels_last)
    torch.compile(resize)(img)
    theta = torch.randn(2, 2, 3, device="cuda", requires_grad=True)
    torch.compile(warp)(torch.randn(2, 8, 16, 16, device="cuda"), theta).sum().backward()
    bn = torch.nn.Sequential(torch.nn.Conv2d(8, 8, 3, padding=1), torch.nn.BatchNorm2d(8)).cuda().half()
    torch.compile(bn)(torch.randn(4, 8, 8, 8, device="cuda", dtype=torch.half)).float().sum().backward()
