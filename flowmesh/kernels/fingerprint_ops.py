"""Kernel of ``flowmesh/ops/fingerprint_ops.py`` (host code, FarmHash in ``farmhash.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from flowmesh.kernels.contract.convert import to_numpy
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.farmhash import fingerprint64


def _bytes(v: int) -> bytes:
    return int(v).to_bytes(8, "little")


def _row_fingerprint(row: np.ndarray) -> bytes:
    if row.dtype == object:
        items = [bytes(s) for s in row.reshape(-1)]
        if len(items) == 1:
            return _bytes(fingerprint64(items[0]))
        return _bytes(fingerprint64(b"".join(_bytes(fingerprint64(s)) for s in items)))
    return _bytes(fingerprint64(np.ascontiguousarray(row).tobytes()))


@kernel("Fingerprint", device_types=("CPU",))
def _fingerprint(ctx: KernelContext):
    def run(data: Any, method: Any) -> Any:
        array = np.asarray(to_numpy(data))
        rows = b"".join(_row_fingerprint(np.asarray(array[i], dtype=array.dtype)) for i in range(array.shape[0]))
        return torch.frombuffer(bytearray(rows), dtype=torch.uint8).reshape(array.shape[0], 8).clone()

    return run
