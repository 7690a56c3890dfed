"""Kernels of ``flowmesh/ops/special_math_ops.py`` (``torch.special``)."""

from __future__ import annotations

import torch

from flowmesh.kernels.contract.registry import simple_kernel

simple_kernel("Erfinv", torch.special.erfinv)
simple_kernel("Ndtri", torch.special.ndtri)
