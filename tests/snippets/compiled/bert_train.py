"""torch.compile of a small Hugging Face BERT (transformers' own modules: embeddings with LayerNorm,
SDPA self-attention with a padding mask, GELU feed-forward), a masked-LM training step."""
import torch
from transformers import BertConfig, BertForMaskedLM


def example():
    config = BertConfig(vocab_size=512, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=256, max_position_embeddings=128)
    model = torch.compile(BertForMaskedLM(config).cuda())
    ids = torch.randint(0, 512, (2, 64), device="cuda")
    mask = torch.ones(2, 64, dtype=torch.long, device="cuda")
    mask[1, 48:] = 0
    model(input_ids=ids, attention_mask=mask, labels=ids).loss.backward()
