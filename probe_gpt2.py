import logging, sys
import torch
import transformers as T


def example():
    import torch._inductor.graph as g
    real = g.get_donated_idxs
    def show():
        r = real()
        print("DONATED", r, flush=True)
        return r
    g.get_donated_idxs = show
    log = logging.getLogger("torch._inductor.memory")
    log.setLevel(logging.INFO)
    h = logging.StreamHandler(sys.stdout); h.setFormatter(logging.Formatter("MEM %(message)s"))
    log.addHandler(h)
    torch.manual_seed(0)
    ids = torch.randint(0, 1000, (2, 64), device="cuda")
    model = T.GPT2LMHeadModel(T.GPT2Config(vocab_size=1000, n_embd=256, n_layer=2, n_head=4, n_positions=128)).cuda().train()
    torch.compile(model)(input_ids=ids, labels=ids).loss.backward()
