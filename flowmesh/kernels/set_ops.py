"""Kernels of ``ops/set_ops.py``: rows of sets gathered in NumPy (integers or byte strings),
combined with Python sets, written back as sorted SparseTensor components."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _np(x: Any) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def _dense_rows(values: Any) -> tuple[tuple[int, ...], dict[tuple[int, ...], set]]:
    array = _np(values)
    if array.ndim < 2:
        raise InvalidArgumentError(f"tf.sets: dense input must be at least 2-D, got shape {list(array.shape)}")
    group = tuple(array.shape[:-1])
    rows = {}
    for index in itertools.product(*(range(d) for d in group)):
        rows[index] = set(array[index].tolist())
    return group, rows


def _sparse_rows(ctx: KernelContext, indices: Any, values: Any, shape: Any,
                 validate: bool) -> tuple[tuple[int, ...], dict[tuple[int, ...], set]]:
    idx, vals, dims = _np(indices), _np(values), [int(d) for d in _np(shape)]
    if len(dims) < 2:
        raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): sparse input must be at least 2-D, got "
                                   f"dense shape {dims}")
    if validate and len(idx) > 1:
        flat = np.ravel_multi_index(idx.T, dims) if np.all((idx >= 0) & (idx < dims)) else None
        if flat is None or np.any(np.diff(flat) <= 0):
            raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): indices are out of bounds or not in "
                                       "row-major order; reorder them with tf.sparse.reorder")
    rows: dict[tuple[int, ...], set] = {}
    for position, value in zip(idx.tolist(), vals.tolist()):
        rows.setdefault(tuple(position[:-1]), set()).add(value)
    return tuple(dims[:-1]), rows


def _combine(ctx: KernelContext, operation: str, group_a: tuple, rows_a: dict, group_b: tuple, rows_b: dict,
             dtype: Any) -> tuple[Any, Any, Any]:
    if group_a != group_b:
        raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): shapes of the two operands differ before "
                                   f"their last dimension: {list(group_a)} vs {list(group_b)}")
    result = {}
    for index in sorted(set(rows_a) | set(rows_b)):
        a, b = rows_a.get(index, set()), rows_b.get(index, set())
        members = {"a-b": a - b, "b-a": b - a, "intersection": a & b, "union": a | b}[operation]
        if members:
            result[index] = sorted(members)
    width = max((len(m) for m in result.values()), default=0)
    indices = [list(index) + [j] for index, members in result.items() for j in range(len(members))]
    values = [v for members in result.values() for v in members]
    return _pack(indices, values, list(group_a) + [width], len(group_a) + 1, dtype)


def _pack(indices: list, values: list, shape: list, rank: int, dtype: Any) -> tuple[Any, Any, Any]:
    idx = torch.tensor(indices, dtype=torch.int64).reshape(-1, rank)
    if dtype.name == "string":
        vals: Any = np.array(values, dtype=object)
    else:
        vals = torch.from_numpy(np.asarray(values, dtype=dtype.as_numpy_dtype).reshape(-1))
    return idx, vals, torch.tensor(shape, dtype=torch.int64)


def _operation_kernel(kind: str):
    def factory(ctx: KernelContext):
        operation, validate, dtype = ctx.attr("set_operation"), ctx.attr("validate_indices", True), ctx.attr("T")
        if operation not in ("a-b", "b-a", "intersection", "union"):
            raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): invalid set_operation {operation!r}")

        def run(*inputs: Any) -> tuple:
            if kind == "dense_dense":
                group_a, rows_a = _dense_rows(inputs[0])
                group_b, rows_b = _dense_rows(inputs[1])
            elif kind == "dense_sparse":
                group_a, rows_a = _dense_rows(inputs[0])
                group_b, rows_b = _sparse_rows(ctx, *inputs[1:4], validate)
            else:
                group_a, rows_a = _sparse_rows(ctx, *inputs[0:3], validate)
                group_b, rows_b = _sparse_rows(ctx, *inputs[3:6], validate)
            return _combine(ctx, operation, group_a, rows_a, group_b, rows_b, dtype)
        return run
    return factory


for _kind, _type in (("dense_dense", "DenseToDenseSetOperation"), ("dense_sparse", "DenseToSparseSetOperation"),
                     ("sparse_sparse", "SparseToSparseSetOperation")):
    kernel(_type, device_types=("CPU",))(_operation_kernel(_kind))


def _counts(group: tuple, rows: dict) -> Iterable[int]:
    return (len(rows.get(index, ())) for index in itertools.product(*(range(d) for d in group)))


@kernel("SetSize", device_types=("CPU",))
def _set_size(ctx: KernelContext):
    validate = ctx.attr("validate_indices", True)

    def run(indices: Any, values: Any, shape: Any) -> torch.Tensor:
        group, rows = _sparse_rows(ctx, indices, values, shape, validate)
        return torch.tensor(list(_counts(group, rows)), dtype=torch.int32).reshape(group)
    return run
