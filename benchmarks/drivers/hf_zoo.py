"""Six Hugging Face models' training steps under torch.compile (transformers 4.57.6), small
configs, one step each with AdamW: GPT-2 (causal SDPA), T5 (encoder-decoder, relative position
bias, eager attention), Mistral (grouped KV heads, a sliding-window mask), Gemma 2 (eager
attention with soft-capping, sliding windows), ViT (a patch convolution) and Mamba (the slow path's
selective scan, a Python loop unrolled into the graph). Models this project had not tried, compared
with the GPU's own compile (benchmarks/gpu_drivers.py)."""
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
    _step(T.GPT2LMHeadModel(T.GPT2Config(vocab_size=1000, n_embd=256, n_layer=2, n_head=4, n_positions=128)),
          input_ids=ids, labels=ids)
    _step(T.T5ForConditionalGeneration(T.T5Config(vocab_size=1000, d_model=256, d_kv=32, d_ff=512, num_layers=2,
                                                  num_heads=4, decoder_start_token_id=0, pad_token_id=0)),
          input_ids=ids, labels=ids[:, :32].contiguous())
    _step(T.MistralForCausalLM(T.MistralConfig(**small, attn_implementation="sdpa")), input_ids=ids, labels=ids)
    _step(T.Gemma2ForCausalLM(T.Gemma2Config(**small, head_dim=64, attn_implementation="eager")),
          input_ids=ids, labels=ids)
    _step(T.ViTForImageClassification(T.ViTConfig(hidden_size=192, num_hidden_layers=2, num_attention_heads=3,
                                                  intermediate_size=384, image_size=64, patch_size=8, num_labels=10)),
          pixel_values=torch.randn(2, 3, 64, 64, device="cuda"), labels=torch.tensor([1, 2], device="cuda"))
    _step(T.MambaForCausalLM(T.MambaConfig(vocab_size=1000, hidden_size=128, state_size=8, num_hidden_layers=1)),
          input_ids=ids[:, :16].contiguous(), labels=ids[:, :16].contiguous())
