"""Two Hugging Face models' training steps: ViT (a patch convolution) and Mamba (the slow path's
selective scan, a Python loop unrolled into the graph). Small configs, one step each with AdamW,
under torch.compile (transformers 4.57.6 here, the GPU machine's own 5.17.0 in its runs): models
this project had not tried, compared with the GPU's own compile (benchmarks/gpu_drivers.py: one file
of benchmarks/drivers/hf_zoo/, two of its six models, fits one call of the device tool)."""
import torch
import transformers as T


def _step(model, **batch):
    model = model.cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    torch.compile(model)(**batch).loss.backward()
    opt.step()


def example():
    torch.manual_seed(0)
    ids = torch.randint(0, 1000, (2, 64), device="cuda")
    _step(T.ViTForImageClassification(T.ViTConfig(hidden_size=192, num_hidden_layers=2, num_attention_heads=3,
                                                  intermediate_size=384, image_size=64, patch_size=8, num_labels=10)),
          pixel_values=torch.randn(2, 3, 64, 64, device="cuda"), labels=torch.tensor([1, 2], device="cuda"))
    _step(T.MambaForCausalLM(T.MambaConfig(vocab_size=1000, hidden_size=128, state_size=8, num_hidden_layers=1)),
          input_ids=ids[:, :16].contiguous(), labels=ids[:, :16].contiguous())
