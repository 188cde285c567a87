"""Two Hugging Face models' bf16 training steps under torch.compile: DeepSeek-V3 (MLA attention, a dense
first layer, then group-limited top-k routing to 8 experts and a shared one) and Phi-3 (fused qkv and
gate-up projections, half the head rotated, a padded batch through SDPA). Small configs (transformers
4.57.6 here, the GPU machine's own 5.17.0 in its runs); DeepSeek's step outgrew the default 60 s
limit before its first launch until 41aa62e (benchmarks/gpu_drivers.py compares them with the GPU's)."""
import torch
import transformers as T


def _step(model, **batch):
    model = model.to("cuda", torch.bfloat16).train()
    torch.compile(model)(**batch).loss.backward()


def example():
    torch.manual_seed(0)
    ids = torch.randint(1, 1024, (2, 64), device="cuda")
    deepseek = T.DeepseekV3Config(vocab_size=1024, hidden_size=256, intermediate_size=512, moe_intermediate_size=128,
                                  num_hidden_layers=3, first_k_dense_replace=1, num_attention_heads=4,
                                  num_key_value_heads=4, n_routed_experts=8, num_experts_per_tok=2, n_group=2,
                                  topk_group=1, n_shared_experts=1, q_lora_rank=64, kv_lora_rank=32,
                                  qk_rope_head_dim=16, qk_nope_head_dim=32, v_head_dim=32, max_position_embeddings=256)
    deepseek._attn_implementation = "sdpa"
    _step(T.DeepseekV3ForCausalLM(deepseek), input_ids=ids, labels=ids)
    phi3 = T.Phi3Config(vocab_size=1024, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                        partial_rotary_factor=0.5, pad_token_id=0)
    phi3._attn_implementation = "sdpa"
    mask = torch.ones_like(ids)
    mask[1, 48:] = 0
    _step(T.Phi3ForCausalLM(phi3), input_ids=ids, attention_mask=mask, labels=ids)
