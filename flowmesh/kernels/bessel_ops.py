"""Kernels of ``flowmesh/ops/bessel_ops.py`` and ``bessel_more_ops.py`` (``torch.special``; half precisions are
computed in float32 and rounded back)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from flowmesh.kernels.contract.registry import simple_kernel


def _widened(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def run(x: Any) -> Any:
        if x.dtype in (torch.float16, torch.bfloat16):
            return fn(x.float()).to(x.dtype)
        return fn(x)

    return run


simple_kernel("BesselI0", _widened(torch.special.i0))
simple_kernel("BesselI0e", _widened(torch.special.i0e))
simple_kernel("BesselI1", _widened(torch.special.i1))
simple_kernel("BesselI1e", _widened(torch.special.i1e))
simple_kernel("BesselJ0", _widened(torch.special.bessel_j0))
simple_kernel("BesselJ1", _widened(torch.special.bessel_j1))
simple_kernel("BesselY0", _widened(torch.special.bessel_y0))
simple_kernel("BesselY1", _widened(torch.special.bessel_y1))
simple_kernel("BesselK0", _widened(torch.special.modified_bessel_k0))
simple_kernel("BesselK0e", _widened(torch.special.scaled_modified_bessel_k0))
simple_kernel("BesselK1", _widened(torch.special.modified_bessel_k1))
simple_kernel("BesselK1e", _widened(torch.special.scaled_modified_bessel_k1))
