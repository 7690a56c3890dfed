"""Kernel of ``flowmesh/ops/edit_distance_ops.py`` (host code: sequences of any dtype)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.convert import to_numpy
from flowmesh.kernels.contract.registry import KernelContext, kernel


def levenshtein(a: list[Any], b: list[Any]) -> int:
    """The edit distance (insertions, deletions, substitutions) between two sequences."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def _sequences(indices: Any, values: Any) -> dict[tuple[int, ...], list[Any]]:
    out: dict[tuple[int, ...], list[Any]] = {}
    for idx, v in zip(np.asarray(to_numpy(indices)).reshape(len(values), -1).tolist(), values):
        out.setdefault(tuple(idx[:-1]), []).append(v)
    return out


@kernel("EditDistance", device_types=("CPU",))
def _edit_distance(ctx: KernelContext):
    normalize = ctx.attr("normalize")

    def run(hi: Any, hv: Any, hs: Any, ti: Any, tv: Any, ts: Any) -> Any:
        h_shape, t_shape = [int(d) for d in to_numpy(hs).reshape(-1)], [int(d) for d in to_numpy(ts).reshape(-1)]
        if len(h_shape) != len(t_shape):
            raise InvalidArgumentError(f"EditDistance: hypothesis rank {len(h_shape)} != truth rank {len(t_shape)}")
        shape = [max(a, b) for a, b in zip(h_shape[:-1], t_shape[:-1])]
        hyp = _sequences(hi, list(np.asarray(to_numpy(hv)).reshape(-1)))
        truth = _sequences(ti, list(np.asarray(to_numpy(tv)).reshape(-1)))
        out = np.zeros(shape, np.float32)
        for loc in np.ndindex(*shape):
            a, b = hyp.get(loc, []), truth.get(loc, [])
            dist = float(levenshtein(a, b))
            if normalize:
                dist = dist / len(b) if b else (np.inf if a else 0.0)
            out[loc] = dist
        return torch.from_numpy(out)

    return run
