"""Kernels of ``flowmesh/ops/cast_ops.py``."""

from __future__ import annotations

import numpy as np
import torch

from flowmesh.core import dtypes
from flowmesh.kernels.contract.convert import to_numpy, to_torch, torch_dtype
from flowmesh.kernels.contract.registry import KernelContext, kernel


@kernel("Cast")
def _cast(ctx: KernelContext):
    source, target_dtype = ctx.op.inputs[0].dtype, ctx.attr("DstT")
    if source in dtypes.NARROW_DTYPES or target_dtype in dtypes.NARROW_DTYPES:
        # Through ml_dtypes' NumPy conversions, which are TensorFlow's (rounding, saturation, NaN).
        def narrow_cast(x: torch.Tensor) -> torch.Tensor:
            array = np.asarray(to_numpy(x, source))
            if source.is_floating and source in dtypes.NARROW_DTYPES and target_dtype not in dtypes.NARROW_DTYPES:
                array = array.astype(np.float32)  # exact; then NaN -> int as TensorFlow (via float)
            with np.errstate(invalid="ignore", over="ignore"):  # NaN and overflow cast as in C, like TensorFlow
                array = array.astype(target_dtype.as_numpy_dtype)
            return to_torch(array, target_dtype, x.device)

        return narrow_cast
    target = torch_dtype(target_dtype)
    if source.is_complex and not target_dtype.is_complex:
        return lambda x: torch.real(x).to(target)  # TensorFlow keeps the real part
    return lambda x: x.to(target)
