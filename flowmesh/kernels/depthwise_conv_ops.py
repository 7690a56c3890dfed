"""Kernel of ``DepthwiseConv2dNative``: the grouped ``Conv2D`` kernel on the filter reshaped
to ``[h, w, 1, C * M]`` (``flowmesh/ops/depthwise_conv_ops.py``)."""

from __future__ import annotations

import torch

from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.nn_conv_ops import _conv2d


@kernel("DepthwiseConv2dNative")
def _depthwise(ctx: KernelContext):
    conv = _conv2d(ctx)

    def run(x: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
        h, w, c, m = f.shape
        return conv(x, f.reshape(h, w, 1, c * m))

    return run
