"""Kernels of ``flowmesh/ops/patches_ops.py``: windows by ``Tensor.unfold`` on each spatial
dimension (dilation by slicing the dilated window), SAME padding as TensorFlow's; the
gradient kernel is the vector-Jacobian product of that same function."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.kernels.contract.registry import KernelContext, kernel


def extract(x: Any, ksizes: list[int], strides: list[int], rates: list[int], padding: str) -> Any:
    n = len(ksizes) - 2
    ks, ss, rs = ksizes[1:-1], strides[1:-1], rates[1:-1]
    if padding == "SAME":
        pads = []
        for size, k, s, r in zip(x.shape[1:-1], ks, ss, rs):
            eff = (k - 1) * r + 1
            total = max((-(-size // s) - 1) * s + eff - size, 0)
            pads.append((total // 2, total - total // 2))
        flat = [p for pair in reversed(pads) for p in pair]
        x = torch.nn.functional.pad(x, [0, 0] + flat)
    out = x
    for d, (k, s, r) in enumerate(zip(ks, ss, rs)):
        eff = (k - 1) * r + 1
        out = out.unfold(1 + d, eff, s)
        if r > 1:
            out = out[..., ::r]
    # out: [b, o1..on, depth, k1..kn] -> [b, o1..on, k1..kn, depth]
    perm = [0] + list(range(1, n + 1)) + list(range(n + 2, 2 * n + 2)) + [n + 1]
    out = out.permute(perm)
    return out.reshape(tuple(out.shape[:n + 1]) + (-1,))


def _attrs(ctx: KernelContext) -> tuple[list[int], list[int], list[int], str]:
    return ctx.attr("ksizes"), ctx.attr("strides"), ctx.attr("rates"), ctx.attr("padding")


@kernel("ExtractImagePatches")
def _extract_image(ctx: KernelContext):
    args = _attrs(ctx)
    return lambda x: extract(x, *args).contiguous()


kernel("ExtractVolumePatches")(_extract_image)


@kernel("ExtractPatchesGrad")
def _extract_grad(ctx: KernelContext):
    args = _attrs(ctx)

    def run(grad: Any, shape: Any) -> Any:
        x = torch.zeros(tuple(int(d) for d in shape.tolist()), dtype=grad.dtype, device=grad.device,
                        requires_grad=True)
        with torch.enable_grad():
            (dx,) = torch.autograd.grad(extract(x, *args), x, grad)
        return dx

    return run
