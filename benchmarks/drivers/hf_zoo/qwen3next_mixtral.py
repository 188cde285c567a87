"""Two more Hugging Face models' training steps: Qwen3-Next (gated DeltaNet layers through fla's Triton
kernels, eager, bf16; a gated attention layer; MoE) and Mixtral (top-2 MoE routing, under
torch.compile). Small configs (transformers 4.57.6 here). Qwen3-Next's gated norm is made with
`device=torch.cuda.current_device()`, a bare ordinal: the CPU wheel refused it ("Cannot access
accelerator device") until the view took an ordinal as the GPU's (inspectors/target/cuda_probes.py)."""
import torch
import transformers as T


def example():
    torch.manual_seed(0)
    ids = torch.randint(0, 1000, (1, 64), device="cuda")
    small = dict(vocab_size=1000, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2)
    nxt = T.Qwen3NextConfig(**small, head_dim=64, linear_num_value_heads=4, linear_num_key_heads=2,
                            linear_key_head_dim=64, linear_value_head_dim=64, num_experts=4, num_experts_per_tok=2,
                            moe_intermediate_size=128, shared_expert_intermediate_size=128,
                            layer_types=["linear_attention", "full_attention"], dtype=torch.bfloat16)
    T.Qwen3NextForCausalLM(nxt).cuda().to(torch.bfloat16).train()(input_ids=ids, labels=ids).loss.backward()
    mixtral = T.MixtralForCausalLM(T.MixtralConfig(**small, num_local_experts=4, num_experts_per_tok=2,
                                                   output_router_logits=True)).cuda().train()
    opt = torch.optim.AdamW(mixtral.parameters(), lr=1e-4)
    torch.compile(mixtral)(input_ids=ids, labels=ids).loss.backward()
    opt.step()
