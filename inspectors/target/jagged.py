"""A jagged NestedTensor (torch.nested, layout=torch.jagged) in the target view
(inspectors.target.tensor_view): made and reshaped on the target, its ragged size one symbol for one
offsets tensor, as on a GPU."""
from __future__ import annotations


def in_view(wrapped_view: str):
    """A jagged NestedTensor's ops make their values inside its __torch_dispatch__, where the view's
    mode is not: plain CPU tensors, beside offsets made in the view (a TargetTensor, `cuda:0`), or
    the other way round (a compiled graph's outputs). Its constructor's check that the two are on
    one device reads both as the offsets' device. Returns the way back."""
    import torch
    from torch.nested._internal import nested_tensor
    cls = nested_tensor.NestedTensor
    real = cls.__dict__["__new__"]

    def new(kind, values, offsets, **kwargs):
        offsets = same_offsets(offsets, nested_tensor._tensor_symint_registry)
        on_target = getattr(offsets, wrapped_view, None) is not None
        if (getattr(values, wrapped_view, None) is not None) != on_target:
            with torch._C.DisableTorchFunction():                # (the view's mode would wrap it again)
                values = values.as_subclass(type(offsets) if on_target else torch.Tensor)   # read for its metadata
        return real.__func__(kind, values, offsets, **kwargs)
    cls.__new__ = staticmethod(new)

    def back():
        cls.__new__ = real
    return back


def same_offsets(offsets, registry):
    """The offsets tensor whose nested int a jagged tensor's shape names (j1), for a new alias of
    it: a compiled backward run in the view hands its gradient's offsets back as a new plain alias
    of the saved ones (on a GPU, the saved tensor itself), and a new tensor is a new nested int:
    torch refused the gradient ("got [3, j2, 4, 64] but expected [3, j1, 4, 64]")."""
    import torch
    from torch._subclasses.fake_tensor import is_fake

    def where(t):               # a real tensor's memory (a tracer's fakes and functional tensors have none;
        if is_fake(t) or torch._is_functional_tensor(t) or t.device.type == "meta":    # the offsets made in
            return None                                                               # the view say cuda:0)
        return t.data_ptr(), t.shape, t.stride(), t.dtype
    if offsets is None or registry.get(offsets) is not None:
        return offsets
    with torch._C.DisableTorchFunction():
        key = where(offsets)
        return next((t for t in list(registry.keys()) if key is not None and where(t) == key), offsets)
