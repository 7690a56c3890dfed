"""Kernels of ``flowmesh/ops/segment_ops.py`` (``index_add_`` / ``scatter_reduce_``)."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.array_ops import check_indices
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _flatten(data: Any, ids: Any) -> tuple[Any, Any, tuple[int, ...]]:
    rest = tuple(data.shape[ids.dim():])
    return data.reshape((-1,) + rest), ids.reshape(-1).long(), rest


def _reduce_rows(out: Any, ids: Any, values: Any, reduce: str, include_self: bool = True) -> Any:
    """``out[ids[i]] = reduce(out[ids[i]], values[i])`` row-wise (``scatter_reduce_``)."""
    index = ids.view((-1,) + (1,) * (values.dim() - 1)).expand_as(values)
    return out.scatter_reduce_(0, index, values, reduce, include_self=include_self)


def _extreme(dtype: torch.dtype, lowest: bool) -> Any:
    if dtype.is_floating_point:  # TensorFlow uses the finite extremes, not infinities
        info = torch.finfo(dtype)
        return info.min if lowest else info.max
    info = torch.iinfo(dtype)
    return info.min if lowest else info.max


def _unsorted(reduce: str):
    """Unsorted segment reduction: negative ids are dropped, ids >= num are errors."""

    def factory(ctx: KernelContext):
        def run(data: Any, ids: Any, num: Any) -> Any:
            n = int(num)
            flat, flat_ids, rest = _flatten(data, ids)
            keep = flat_ids >= 0
            if not bool(keep.all()):
                flat_ids, flat = flat_ids[keep], flat[keep]
            if flat_ids.numel() and int(flat_ids.max()) >= n:
                check_indices(flat_ids, n, "segment_ids")
            shape = (n,) + rest
            if reduce == "sum":
                out = torch.zeros(shape, dtype=data.dtype, device=data.device)
                return out.index_add_(0, flat_ids, flat)
            if reduce == "prod":
                out = torch.ones(shape, dtype=data.dtype, device=data.device)
                return _reduce_rows(out, flat_ids, flat, "prod")
            out = torch.full(shape, _extreme(data.dtype, reduce == "amax"), dtype=data.dtype,
                             device=data.device)
            return _reduce_rows(out, flat_ids, flat, reduce)

        return run

    return factory


def _check_sorted(ids: Any) -> None:
    if ids.numel() == 0:
        return
    if int(ids.min()) < 0:
        raise InvalidArgumentError(f"segment ids must be >= 0, got {ids.tolist()}")
    if bool((ids[1:] < ids[:-1]).any()):
        raise InvalidArgumentError(f"segment ids are not increasing: {ids.tolist()}")


def _sorted(reduce: str):
    """Sorted segment reduction; empty segments hold 0 (1 for products)."""

    def factory(ctx: KernelContext):
        def run(data: Any, ids: Any) -> Any:
            flat_ids = ids.reshape(-1).long()
            _check_sorted(flat_ids)
            n = int(flat_ids[-1]) + 1 if flat_ids.numel() else 0
            shape = (n,) + tuple(data.shape[1:])
            if reduce == "sum":
                return torch.zeros(shape, dtype=data.dtype, device=data.device).index_add_(0, flat_ids, data)
            initial = 1 if reduce == "prod" else 0
            out = torch.full(shape, initial, dtype=data.dtype, device=data.device)
            return _reduce_rows(out, flat_ids, data, reduce, include_self=reduce == "prod")

        return run

    return factory


kernel("UnsortedSegmentSum")(_unsorted("sum"))
kernel("UnsortedSegmentMax")(_unsorted("amax"))
kernel("UnsortedSegmentMin")(_unsorted("amin"))
kernel("UnsortedSegmentProd")(_unsorted("prod"))
kernel("SegmentSum")(_sorted("sum"))
kernel("SegmentMean")(_sorted("mean"))
kernel("SegmentMax")(_sorted("amax"))
kernel("SegmentMin")(_sorted("amin"))
kernel("SegmentProd")(_sorted("prod"))
