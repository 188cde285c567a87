"""Two Hugging Face models as they are run besides a training step: a Llama's greedy decoding with a
static KV cache (`generate(cache_implementation="static")`, its forward compiled whole: a prompt of
16 tokens and 3 new ones, so its attention mask has 19 positions, which the GPU's SDPA pads), and
a Qwen2 training step under `dynamic=True` on two sequence lengths. Small configs; compared with the
GPU's own compile (benchmarks/gpu_drivers.py: one file of benchmarks/drivers/hf_zoo/, two models)."""
import torch
import transformers as T


def _small(cls, **extra):
    return cls(vocab_size=1000, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
               num_attention_heads=4, num_key_value_heads=2, **extra)


def example():
    torch.manual_seed(0)
    llama = T.LlamaForCausalLM(_small(T.LlamaConfig, max_position_embeddings=128)).cuda().eval()
    llama.forward = torch.compile(llama.forward, fullgraph=True)
    with torch.no_grad():
        llama.generate(torch.randint(0, 1000, (1, 16), device="cuda"), max_new_tokens=3, do_sample=False,
                       cache_implementation="static")
    qwen = T.Qwen2ForCausalLM(_small(T.Qwen2Config)).cuda().train()
    step = torch.compile(qwen, dynamic=True)
    for n in (48, 64):
        ids = torch.randint(0, 1000, (2, n), device="cuda")
        step(input_ids=ids, labels=ids).loss.backward()
