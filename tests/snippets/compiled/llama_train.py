"""torch.compile of a small Hugging Face Llama (transformers' own modules: RMSNorm, rotary
embeddings, grouped-query SDPA attention, SwiGLU MLP, the loss), a training step's forward and
backward."""
import torch
from transformers import LlamaConfig, LlamaForCausalLM


def example():
    config = LlamaConfig(vocab_size=512, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    model = torch.compile(LlamaForCausalLM(config).cuda())
    ids = torch.randint(0, 512, (2, 64), device="cuda")
    model(input_ids=ids, labels=ids).loss.backward()
