"""GIoU loss: per-box math on an array of structs, read with stride 4

Each box is 4 consecutive floats (x1, y1, x2, y2), so coordinate c of box i sits at
4*i + c and every tl.load here is strided. With BLOCK_SIZE=256 and 4 warps a thread
owns 2 boxes and issues 16 ld.global.b32 (4 coordinates x 2 tensors x 2 boxes), never a
v4: no single load is contiguous. Loading a [BLOCK, 4] tile (offs[:, None] * 4 +
tl.arange(0, 4)[None, :]) would fetch each box with one ld.global.v4.b32 instead. The
contiguous loss store is st.global.v2.b32. The math is min/max, products and two
div.full.f32 per box, all in registers: loss = 1 - (IoU - (C - U) / C).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def giou_loss_kernel(pred_ptr,  # pointer to predicted boxes, (n_boxes, 4) fp32, x1 y1 x2 y2
                     target_ptr,  # pointer to target boxes, (n_boxes, 4) fp32
                     loss_ptr,  # pointer to the per-box loss, (n_boxes,) fp32
                     n_boxes,  # number of boxes
                     EPS: tl.constexpr,  # guards the divisions, as torchvision's 1e-7
                     BLOCK_SIZE: tl.constexpr,  # boxes handled by one program
                     ):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_boxes
    # array of structs: coordinate c of box i is at 4 * i + c
    px1 = tl.load(pred_ptr + offs * 4 + 0, mask=mask, other=0.0)
    py1 = tl.load(pred_ptr + offs * 4 + 1, mask=mask, other=0.0)
    px2 = tl.load(pred_ptr + offs * 4 + 2, mask=mask, other=1.0)
    py2 = tl.load(pred_ptr + offs * 4 + 3, mask=mask, other=1.0)
    tx1 = tl.load(target_ptr + offs * 4 + 0, mask=mask, other=0.0)
    ty1 = tl.load(target_ptr + offs * 4 + 1, mask=mask, other=0.0)
    tx2 = tl.load(target_ptr + offs * 4 + 2, mask=mask, other=1.0)
    ty2 = tl.load(target_ptr + offs * 4 + 3, mask=mask, other=1.0)

    area_p = (px2 - px1) * (py2 - py1)
    area_t = (tx2 - tx1) * (ty2 - ty1)
    # intersection (empty when the boxes do not overlap)
    iw = tl.maximum(tl.minimum(px2, tx2) - tl.maximum(px1, tx1), 0.0)
    ih = tl.maximum(tl.minimum(py2, ty2) - tl.maximum(py1, ty1), 0.0)
    inter = iw * ih
    union = area_p + area_t - inter
    iou = inter / (union + EPS)
    # smallest box enclosing both
    cw = tl.maximum(px2, tx2) - tl.minimum(px1, tx1)
    ch = tl.maximum(py2, ty2) - tl.minimum(py1, ty1)
    area_c = cw * ch
    giou = iou - (area_c - union) / (area_c + EPS)
    tl.store(loss_ptr + offs, 1.0 - giou, mask=mask)


def giou_loss(pred: torch.Tensor, target: torch.Tensor, BLOCK_SIZE: int = 256) -> torch.Tensor:
    """Per-box 1 - GIoU of two (N, 4) fp32 box tensors in (x1, y1, x2, y2) format."""
    assert pred.shape == target.shape and pred.dim() == 2 and pred.shape[1] == 4
    assert pred.is_contiguous() and target.is_contiguous()
    n_boxes = pred.shape[0]
    loss = torch.empty(n_boxes, dtype=pred.dtype, device=pred.device)
    grid = (triton.cdiv(n_boxes, BLOCK_SIZE),)
    giou_loss_kernel[grid](pred, target, loss, n_boxes, EPS=1e-7, BLOCK_SIZE=BLOCK_SIZE)
    return loss


def reference(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """torchvision.ops.generalized_box_iou_loss(pred, target, reduction="none"), by hand."""
    eps = 1e-7
    px1, py1, px2, py2 = pred.unbind(dim=-1)
    tx1, ty1, tx2, ty2 = target.unbind(dim=-1)
    xk1, yk1 = torch.max(px1, tx1), torch.max(py1, ty1)
    xk2, yk2 = torch.min(px2, tx2), torch.min(py2, ty2)
    inter = torch.zeros_like(px1)
    overlap = (yk2 > yk1) & (xk2 > xk1)
    inter[overlap] = (xk2[overlap] - xk1[overlap]) * (yk2[overlap] - yk1[overlap])
    union = (px2 - px1) * (py2 - py1) + (tx2 - tx1) * (ty2 - ty1) - inter
    iou = inter / (union + eps)
    xc1, yc1 = torch.min(px1, tx1), torch.min(py1, ty1)
    xc2, yc2 = torch.max(px2, tx2), torch.max(py2, ty2)
    area_c = (xc2 - xc1) * (yc2 - yc1)
    return 1 - (iou - (area_c - union) / (area_c + eps))


def _random_boxes(n: int) -> torch.Tensor:
    xy = torch.rand(n, 2) * 100
    wh = torch.rand(n, 2) * 50 + 1
    return torch.cat([xy, xy + wh], dim=1)


def make_inputs(small: bool = False):
    return make_inputs_of(1000 if small else 2**20)


def make_inputs_of(n: int):
    pred = _random_boxes(n)
    # targets near the predictions, so most pairs overlap and some do not
    target = pred + torch.randn(n, 4) * 10
    target = torch.cat([torch.min(target[:, :2], target[:, 2:] - 1), target[:, 2:]], dim=1)
    return pred, target


def example():
    pred, target = make_inputs()
    giou_loss(pred, target)


def check():
    torch.manual_seed(0)
    pred, target = make_inputs(small=True)
    torch.testing.assert_close(giou_loss(pred, target), reference(pred, target),
                               atol=1e-5, rtol=1e-5)


# ---- benchmark: read by inspectors/bench/model.py (the Benchmark page, benchmarks/gpu_bench.py) ----
BENCH_SIZES = (2**12, 2**14, 2**16, 2**18, 2**20, 2**22, 2**24, 2**26)
BENCH_SIZE = 2**22
BENCH_SIZE_NAME = "boxes (fp32 x1 y1 x2 y2)"
BENCH_BOUND = "memory"
BENCH_TOL = (1e-5, 1e-5)


def bench_inputs(size: int):
    return make_inputs_of(size)


bench_kernel = giou_loss


def bench_bytes(pred, target) -> int:
    return (pred.numel() + target.numel() + pred.shape[0]) * pred.element_size()  # 2 x 16 B in, 4 B out


def bench_flops(pred, target) -> int:
    return 31 * pred.shape[0]  # areas 6, intersection 9, union 2, IoU 2, enclosing box 7, GIoU 5
