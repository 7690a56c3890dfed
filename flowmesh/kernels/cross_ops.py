"""Kernel of ``FeatureCrossHashed`` (``flowmesh/ops/cross_ops.py``): a Python loop over rows,
hashing with ``kernels/farmhash.py`` as TensorFlow's ``SparseCrossHashed`` does."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import torch

from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.farmhash import fingerprint64, fingerprint_cat64


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


def _row_features(inputs: list[Any], n_sparse: int, batch: int) -> list[list[list[Any]]]:
    """Per batch row, per column (sparse inputs first, then dense), the column's values."""
    cols = []
    for i in range(n_sparse):
        ind, vals = inputs[i].numpy(), _as_numpy(inputs[n_sparse + i]).reshape(-1)
        per_row: list[list[Any]] = [[] for _ in range(batch)]
        for row, v in zip(ind[:, 0].tolist(), vals.tolist()):
            per_row[row].append(v)
        cols.append(per_row)
    for dense in inputs[3 * n_sparse:]:
        cols.append([list(r) for r in _as_numpy(dense).tolist()])
    return [[col[b] for col in cols] for b in range(batch)]


def _batch_size(inputs: list[Any], n_sparse: int) -> int:
    if n_sparse:
        return int(inputs[2 * n_sparse].reshape(-1)[0])
    return int(_as_numpy(inputs[3 * n_sparse]).shape[0])


@kernel("SparseCross")
def _sparse_cross(ctx: KernelContext):
    n_sparse, hashed = int(ctx.attr("N")), bool(ctx.attr("hashed_output"))
    buckets, key = int(ctx.attr("num_buckets")), int(ctx.attr("hash_key"))

    def crossed(combo: tuple[Any, ...]) -> Any:
        if not hashed:
            return b"_X_".join(v if isinstance(v, bytes) else str(int(v)).encode() for v in combo)
        h = key
        for v in combo:
            h = fingerprint_cat64(h, _feature_hash(v))
        return h % buckets if buckets > 0 else h % ((1 << 63) - 1)  # TensorFlow's int64 range

    def run(*inputs: Any) -> tuple[Any, Any, Any]:
        batch = _batch_size(list(inputs), n_sparse)
        indices, out, width = [], [], 0
        for b, row in enumerate(_row_features(list(inputs), n_sparse, batch)):
            for j, combo in enumerate(itertools.product(*row)):
                indices.append([b, j])
                out.append(crossed(combo))
                width = max(width, j + 1)
        ind = torch.tensor(indices, dtype=torch.int64).reshape(-1, 2)
        values = torch.tensor(out, dtype=torch.int64) if hashed else np.array(out, dtype=object)
        return ind, values, torch.tensor([batch, width], dtype=torch.int64)

    return run
