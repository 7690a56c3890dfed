"""Kernels of ``flowmesh/ops/select_ops.py``."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from flowmesh.kernels.contract.registry import simple_kernel


def _select(condition: Any, x: Any, y: Any) -> Any:
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):  # strings
        return np.where(np.asarray(condition.cpu()), x, y)
    return torch.where(condition, x, y)


simple_kernel("SelectV2", _select)
simple_kernel("Where", torch.nonzero)
