"""Two Hugging Face models' training steps: GPT-2 (causal SDPA) and T5 (encoder-decoder, relative
position bias, eager attention). Small configs, one step each with AdamW, under torch.compile
(transformers 4.57.6 here, the GPU machine's own 5.17.0 in its runs): models this project had not
tried, compared with the GPU's own compile (benchmarks/gpu_drivers.py: one file of
benchmarks/drivers/hf_zoo/, two of its six models, fits one call of the device tool)."""
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
    _step(T.GPT2LMHeadModel(T.GPT2Config(vocab_size=1000, n_embd=256, n_layer=2, n_head=4, n_positions=128)),
          input_ids=ids, labels=ids)
    _step(T.T5ForConditionalGeneration(T.T5Config(vocab_size=1000, d_model=256, d_kv=32, d_ff=512, num_layers=2,
                                                  num_heads=4, decoder_start_token_id=0, pad_token_id=0)),
          input_ids=ids, labels=ids[:, :32].contiguous())
