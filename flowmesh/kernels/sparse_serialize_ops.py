"""Kernels of ``ops/sparse_serialize_ops.py``: sparse components to and from serialized
``TensorProto``s (host)."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.convert import to_numpy, to_torch
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _proto_bytes(array: np.ndarray, dtype: Any) -> bytes:
    from flowmesh.core.graph_def import make_tensor_proto

    return make_tensor_proto(array, dtype=dtype).SerializeToString()


def _triple(indices: np.ndarray, values: np.ndarray, shape: np.ndarray, dtype: Any) -> list[bytes]:
    return [_proto_bytes(indices.astype(np.int64), dtypes.int64), _proto_bytes(values, dtype),
            _proto_bytes(shape.astype(np.int64), dtypes.int64)]


def _inputs(ctx: KernelContext, indices: Any, values: Any, shape: Any) -> tuple:
    dtype = ctx.op.inputs[1].dtype
    vals = np.asarray(to_numpy(values, dtype), dtype=object if dtype == dtypes.string else None)
    return np.asarray(to_numpy(indices, dtypes.int64)), vals, np.asarray(to_numpy(shape, dtypes.int64)), dtype


@kernel("SerializeSparse", device_types=("CPU",))
def _serialize_sparse(ctx: KernelContext):
    def run(indices: Any, values: Any, shape: Any) -> np.ndarray:
        ind, vals, dims, dtype = _inputs(ctx, indices, values, shape)
        out = np.empty(3, dtype=object)
        out[:] = _triple(ind, vals, dims, dtype)
        return out
    return run


@kernel("SerializeManySparse", device_types=("CPU",))
def _serialize_many_sparse(ctx: KernelContext):
    def run(indices: Any, values: Any, shape: Any) -> np.ndarray:
        ind, vals, dims, dtype = _inputs(ctx, indices, values, shape)
        if dims.size < 2:
            raise InvalidArgumentError(f"SerializeManySparse ({ctx.op.name}): the SparseTensor "
                                       f"must have rank >= 2, got dense shape {dims.tolist()}")
        rows = ind[:, 0] if len(ind) else np.zeros(0, np.int64)
        if len(rows) and (rows.min() < 0 or rows.max() >= dims[0]):
            raise InvalidArgumentError(f"SerializeManySparse ({ctx.op.name}): a row index is "
                                       f"outside [0, {dims[0]})")
        out = np.empty((int(dims[0]), 3), dtype=object)
        order = np.argsort(rows, kind="stable")
        starts = np.searchsorted(rows[order], np.arange(int(dims[0]) + 1))
        for i in range(int(dims[0])):
            take = order[starts[i]:starts[i + 1]]
            out[i] = _triple(ind[take, 1:].reshape(len(take), dims.size - 1), vals[take],
                             dims[1:], dtype)
        return out
    return run


def _parse(ctx: KernelContext, data: Any, want: Any, what: str) -> np.ndarray:
    from google.protobuf.message import DecodeError

    from flowmesh.core.graph_def import make_ndarray
    from flowmesh.protos.tensor import TensorProto

    try:
        proto = TensorProto.FromString(bytes(data))
    except DecodeError:
        raise InvalidArgumentError(f"DeserializeManySparse ({ctx.op.name}): the {what} string "
                                   f"is not a serialized TensorProto") from None
    if proto.dtype != want.as_datatype_enum:
        raise InvalidArgumentError(f"DeserializeManySparse ({ctx.op.name}): the {what} have dtype "
                                   f"{dtypes.as_dtype(proto.dtype).name}, expected {want.name}")
    return make_ndarray(proto)


@kernel("DeserializeManySparse", device_types=("CPU",))
def _deserialize_many_sparse(ctx: KernelContext):
    dtype = ctx.attr("dtype")

    def run(serialized: Any) -> tuple:
        rows = np.asarray(serialized, dtype=object)
        if rows.ndim != 2 or rows.shape[1] != 3 or rows.shape[0] == 0:
            raise InvalidArgumentError(f"DeserializeManySparse ({ctx.op.name}): serialized_sparse "
                                       f"must be a non-empty [N, 3] matrix, got shape {list(rows.shape)}")
        parts = [[_parse(ctx, r[0], dtypes.int64, "indices"), _parse(ctx, r[1], dtype, "values"),
                  _parse(ctx, r[2], dtypes.int64, "shape")] for r in rows]
        rank = {p[2].size for p in parts}
        if len(rank) != 1:
            raise InvalidArgumentError(f"DeserializeManySparse ({ctx.op.name}): the rows have "
                                       f"different ranks {sorted(rank)}")
        inner = rank.pop()
        ind = np.concatenate([np.concatenate([np.full((len(p[0]), 1), i, np.int64),
                                              p[0].reshape(-1, inner)], axis=1)
                              for i, p in enumerate(parts)])
        vals = np.concatenate([p[1].reshape(-1) for p in parts])
        dims = np.array([len(parts)] + np.max([p[2] for p in parts], axis=0).tolist(), np.int64)
        device = ctx.torch_device
        return (to_torch(ind, dtypes.int64, device), to_torch(vals, dtype, device),
                to_torch(dims, dtypes.int64, device))
    return run
