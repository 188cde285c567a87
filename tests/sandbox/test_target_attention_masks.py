"""An attention mask as the GPU's SDPA hands it to the memory-efficient kernel
(inspectors/target/attention.py): expanded to the attention's shape, and padded first where its
rows' strides are not multiples of 8."""
from inspectors.base.result import CompileRequest


def test_a_mask_of_19_positions_is_padded_as_the_gpu_pads_it(engine, snippet):
    """19 positions: the GPU pads the mask to 24 and slices it back before the memory-efficient
    kernel. Left as traced, the CPU's flash attention was decomposed into the step's kernels (its
    name in theirs: `..._scaled_dot_product_flash_attention_for_cpu_...`)."""
    r = engine.compile(CompileRequest(source=snippet("compiled/unaligned_mask_attention.py"),
                                      filename="unaligned_mask_attention.py", target="cuda:90", sass=False), timeout=300)
    assert r.ok, r.error
    names = [k.name for k in r.kernels]
    assert not [n for n in names if "for_cpu" in n], names
    padded = [k for k in r.kernels if "constant_pad_nd" in k.name]
    assert {k.origin["graph"] for k in padded} == {"forward", "backward"}, names     # the backward pads its saved mask
    assert all("tl.full([1], 24, tl.int64)" in k.stages["source"] for k in padded)       # rows of 19 padded to 24
    ops = {c["op"] for c in r.outside}
    assert {"aten._scaled_dot_product_efficient_attention", "aten._scaled_dot_product_efficient_attention_backward"} <= ops, ops
