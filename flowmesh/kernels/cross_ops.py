"""Kernel of ``FeatureCrossHashed`` (``flowmesh/ops/cross_ops.py``): a Python loop over rows,
hashing with ``kernels/farmhash.py`` as TensorFlow's ``SparseCrossHashed`` does."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import torch

from flowmesh.kernels.farmhash import fingerprint64, fingerprint_cat64
from flowmesh.kernels.registry import KernelContext, kernel


def _feature_hash(value: Any) -> int:
    if isinstance(value, bytes):
        return fingerprint64(value)
    return int(value) & ((1 << 64) - 1)


def _as_numpy(x: Any) -> np.ndarray:
    return x.numpy() if isinstance(x, torch.Tensor) else np.asarray(x, dtype=object)


@kernel("FeatureCrossHashed")
def _cross(ctx: KernelContext):
    buckets, key = ctx.attr("num_buckets"), ctx.attr("hash_key")

    def run(*inputs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        k = len(inputs) // 2
        values = [_as_numpy(v) for v in inputs[:k]]
        masks = [_as_numpy(m).astype(bool) for m in inputs[k:]]
        batch = values[0].shape[0]
        width = int(np.prod([v.shape[1] for v in values]))
        ids = np.zeros((batch, width), dtype=np.int64)
        present = np.zeros((batch, width), dtype=bool)
        for b in range(batch):
            rows = [[(m, _feature_hash(x)) for x, m in zip(v[b], mk[b])] for v, mk in zip(values, masks)]
            for j, combo in enumerate(itertools.product(*rows)):
                if not all(m for m, _ in combo):
                    continue
                h = key
                for _, fh in combo:
                    h = fingerprint_cat64(h, fh)
                ids[b, j] = h % buckets
                present[b, j] = True
        return torch.from_numpy(ids), torch.from_numpy(present)

    return run
