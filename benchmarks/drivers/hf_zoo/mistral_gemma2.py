"""Two Hugging Face models' training steps: Mistral (grouped KV heads, a sliding-window mask) and Gemma
2 (eager attention with soft-capping, sliding windows). Small configs, one step each with AdamW,
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
    small = dict(vocab_size=1000, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, sliding_window=32)
    _step(T.MistralForCausalLM(T.MistralConfig(**small, attn_implementation="sdpa")), input_ids=ids, labels=ids)
    _step(T.Gemma2ForCausalLM(T.Gemma2Config(**small, head_dim=64, attn_implementation="eager")),
          input_ids=ids, labels=ids)
