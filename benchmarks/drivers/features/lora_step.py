"""A LoRA fine-tuning step as peft makes it: a small Llama from its config, its attention's q and v
projections wrapped in LoRA adapters (the base weights frozen), compiled, forward, backward and AdamW
over the adapters only."""
import torch
from peft import LoraConfig, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM


def example():
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=1024, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)
    model = get_peft_model(LlamaForCausalLM(config), LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"]))
    model = model.cuda()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    ids = torch.randint(0, 1024, (2, 128), device="cuda")
    step = torch.compile(lambda: model(input_ids=ids, labels=ids).loss)
    step().backward()
    opt.step()
