"""Kernel of ``ParseSequenceExampleBatch``: each record through ``ParseSingleSequenceExample``'s
decoder, then sparse parts re-indexed with the batch row and dense feature lists padded."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from flowmesh.core import dtypes
from flowmesh.kernels.contract.convert import to_numpy
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.parsing_ops import _parse_sequence_example, _specs, _value


def _array(value: Any, dtype: Any) -> np.ndarray:
    return np.asarray(to_numpy(value, dtype), dtype=object if dtype == dtypes.string else None)


def _sparse(parts: list[tuple[Any, Any, Any]], dtype: Any, rank: int) -> list[Any]:
    """Per-record (indices, values, shape) as one batch SparseTensor's components."""
    indices, values, shapes = [], [], []
    for row, (idx, vals, shape) in enumerate(parts):
        idx = _array(idx, dtypes.int64).reshape(-1, rank)
        indices.append(np.concatenate([np.full((len(idx), 1), row, np.int64), idx], axis=1))
        values.append(_array(vals, dtype).reshape(-1))
        shapes.append(_array(shape, dtypes.int64).reshape(rank))
    dims = np.max(np.stack(shapes), axis=0) if shapes else np.zeros(rank, np.int64)
    return [torch.from_numpy(np.concatenate(indices).astype(np.int64).reshape(-1, rank + 1)),
            _value(np.concatenate(values), dtype),
            torch.from_numpy(np.concatenate([[len(parts)], dims]).astype(np.int64))]


def _padded(items: list[Any], spec: Any) -> tuple[Any, torch.Tensor]:
    arrays = [np.asarray(to_numpy(x, spec.dtype), dtype=object if spec.dtype == dtypes.string else None)
              for x in items]
    steps = max((len(a) for a in arrays), default=0)
    fill = spec.default if spec.default is not None else (b"" if spec.dtype == dtypes.string else 0)
    out = np.empty((len(arrays), steps, *spec.shape), dtype=object if spec.dtype == dtypes.string
                   else spec.dtype.as_numpy_dtype)
    out[...] = np.asarray(fill, dtype=out.dtype)
    for row, array in enumerate(arrays):
        out[row, :len(array)] = array.reshape(len(array), *spec.shape)
    return _value(out, spec.dtype), torch.tensor([len(a) for a in arrays], dtype=torch.int64)


@kernel("ParseSequenceExampleBatch", device_types=("CPU",))
def _parse_sequence_batch(ctx: KernelContext):
    parse_one = _parse_sequence_example(ctx)
    groups = [(*_specs(ctx, "context_")[::-1], False), (*_specs(ctx, "feature_list_")[::-1], True)]

    def run(serialized: Any) -> tuple:
        rows = []
        for record in np.asarray(serialized, dtype=object).reshape(-1):
            out = parse_one(np.array(record, dtype=object))
            rows.append(list(out) if isinstance(out, tuple) else [out])
        outputs: list[Any] = []
        lengths: list[Any] = []
        offset = 0
        for sparse, dense, is_list in groups:
            n = len(sparse)
            batched = [_sparse([(r[offset + i], r[offset + n + i], r[offset + 2 * n + i]) for r in rows],
                               spec.dtype, 2 if is_list else 1) for i, spec in enumerate(sparse)]
            outputs += [b[0] for b in batched] + [b[1] for b in batched] + [b[2] for b in batched]
            offset += 3 * n
            for j, spec in enumerate(dense):
                column = [r[offset + j] for r in rows]
                if is_list:
                    value, length = _padded(column, spec)
                    outputs.append(value)
                    lengths.append(length)
                else:
                    outputs.append(_value(np.stack([_array(c, spec.dtype) for c in column]), spec.dtype))
            offset += len(dense)
        return tuple(outputs + lengths)
    return run
