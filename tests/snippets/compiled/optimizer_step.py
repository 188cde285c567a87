"""A compiled AdamW step over a small MLP's parameters: Inductor's foreach kernels
(`triton_for_*`), every parameter's update in one launch."""
import torch


def example():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(16, 64, device="cuda")
    y = torch.randint(0, 10, (16,), device="cuda")
    torch.nn.functional.cross_entropy(model(x), y, label_smoothing=0.1).backward()

    @torch.compile
    def step():
        opt.step()
    step()
