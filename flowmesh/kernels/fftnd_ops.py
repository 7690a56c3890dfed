"""Kernels of ``flowmesh/ops/fftnd_ops.py`` (``torch.fft.fftn`` and friends)."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.kernels.contract.registry import KernelContext, kernel

_FNS = {"FFTND": torch.fft.fftn, "IFFTND": torch.fft.ifftn, "RFFTND": torch.fft.rfftn, "IRFFTND": torch.fft.irfftn}


def _factory(op_type: str):
    fn = _FNS[op_type]

    def build(ctx: KernelContext):
        def run(x: Any, fft_length: Any, axes: Any) -> Any:
            return fn(x, s=[int(n) for n in fft_length], dim=[int(a) for a in axes])

        return run

    return build


for _op in _FNS:
    kernel(_op)(_factory(_op))
