"""Kernels of ``flowmesh/ops/string_split_ops.py`` (host NumPy)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _scalar(value: Any) -> bytes:
    item = np.asarray(value, dtype=object).reshape(-1)[0]
    return item if isinstance(item, bytes) else str(item).encode()


def _sparse(rows: list[list[bytes]]) -> tuple[torch.Tensor, np.ndarray, torch.Tensor]:
    indices = [(i, j) for i, tokens in enumerate(rows) for j in range(len(tokens))]
    values = np.empty(len(indices), dtype=object)
    values[:] = [t for tokens in rows for t in tokens]
    width = max((len(t) for t in rows), default=0)
    index = torch.tensor(indices, dtype=torch.int64).reshape(-1, 2)
    return index, values, torch.tensor([len(rows), width], dtype=torch.int64)


def _strings(text: Any, op: str) -> list[bytes]:
    arr = np.asarray(text, dtype=object)
    if arr.ndim != 1:
        raise InvalidArgumentError(f"{op}: input must be a vector, got shape {list(arr.shape)}")
    return [s if isinstance(s, bytes) else str(s).encode() for s in arr]


@kernel("StringSplitV2", device_types=("CPU",))
def _split_v2(ctx: KernelContext):
    maxsplit = ctx.attr("maxsplit", -1)

    def run(text: Any, sep: Any) -> Any:
        separator = _scalar(sep)
        rows = []
        for s in _strings(text, "StringSplitV2"):
            if separator:
                rows.append(s.split(separator, maxsplit))
            else:
                rows.append(s.split(None, maxsplit) if maxsplit >= 0 else s.split())
        return _sparse(rows)

    return run


@kernel("StringSplit", device_types=("CPU",))
def _split(ctx: KernelContext):
    skip_empty = bool(ctx.attr("skip_empty", True))

    def run(text: Any, sep: Any) -> Any:
        chars = _scalar(sep)
        rows = []
        for s in _strings(text, "StringSplit"):
            if not s:  # TensorFlow yields no token for an empty string, even with skip_empty=False
                rows.append([])
                continue
            tokens = re.split(b"[" + re.escape(chars) + b"]", s) if chars else [bytes([c]) for c in s]
            rows.append([t for t in tokens if t or not skip_empty])
        return _sparse(rows)

    return run


@kernel("UnsortedSegmentJoin", device_types=("CPU",))
def _segment_join(ctx: KernelContext):
    separator = ctx.attr("separator", "").encode()

    def run(inputs: Any, ids: Any, num: Any) -> np.ndarray:
        values = np.asarray(inputs, dtype=object)
        seg = np.asarray(ids.numpy() if hasattr(ids, "numpy") else ids)
        n = int(num)
        if values.shape[:seg.ndim] != seg.shape:
            raise InvalidArgumentError(f"segment_ids shape {list(seg.shape)} must prefix inputs shape "
                                       f"{list(values.shape)}")
        flat_ids = seg.reshape(-1)
        rows = values.reshape((flat_ids.size,) + values.shape[seg.ndim:])
        out = np.empty((n,) + rows.shape[1:], dtype=object)
        for idx in np.ndindex(out.shape):
            out[idx] = b""
        parts: dict[int, list[Any]] = {}
        for k, segment in enumerate(flat_ids.tolist()):
            if not 0 <= segment < n:
                continue
            parts.setdefault(segment, []).append(rows[k])
        for segment, items in parts.items():
            stacked = np.stack(items) if rows.ndim > 1 else np.array(items, dtype=object)
            for idx in np.ndindex(out.shape[1:]):
                out[(segment,) + idx] = separator.join(stacked[(slice(None),) + idx])
        return out

    return run
