"""Kernel of ``flowmesh/ops/time_ops.py`` (host clock, so host memory: CPU only)."""

from __future__ import annotations

import time

import torch

from flowmesh.kernels.contract.registry import KernelContext, kernel


@kernel("Timestamp", device_types=("CPU",))
def _timestamp(ctx: KernelContext):
    return lambda: torch.tensor(time.time(), dtype=torch.float64)
