"""A constant the model makes on the CPU and moves to the GPU inside the compiled step, as Hugging
Face's sliding-window cache layer does with its window size (transformers 5, cache_utils.py):
on a GPU the move is a copy, a kernel of its own named after it (`_to_copy`). Which factories
make the CPU's tensor under the default device the tool sets (`cuda` on a GPU) depends on torch's
Dynamo: on torch 2.11 `torch.tensor` and `torch.arange` do, `torch.zeros` does not."""
import torch


class Window(torch.nn.Module):
    def forward(self, x):
        self.size = torch.tensor(32, dtype=torch.long).to(x.device)     # the CPU's, then the GPU's
        self.scale = torch.arange(4).to(x.device, torch.float32)        # with a dtype
        self.steps = torch.zeros((), dtype=torch.long).cuda()             # .cuda(): a CPU-only torch refuses it
        return x.cuda().relu() + 1                                        # already the GPU's: no copy


def example():
    torch.compile(Window())(torch.randn(256, device="cuda"))
