"""Kernels of ``flowmesh/ops/parsing_ops.py`` (decoding in ``kernels/example_decoding.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from flowmesh.core import dtypes
from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.example_decoding import (
    DenseSpec,
    SparseSpec,
    dense_batch,
    feature_map,
    parse_views,
    sparse_batch,
)
from flowmesh.kernels.example_fastpath import parse_dense
from flowmesh.protos import example as pb

_CPU = ("CPU",)


def _specs(ctx: KernelContext, prefix: str) -> tuple[list[DenseSpec], list[SparseSpec]]:
    dense = [DenseSpec(k, dtypes.as_dtype(t), tuple(int(d) for d in s), default, bool(seq))
             for k, t, s, default, seq in zip(ctx.attr(f"{prefix}dense_keys"),
                                               ctx.attr(f"{prefix}dense_types"),
                                               ctx.attr(f"{prefix}dense_shapes"),
                                               ctx.attr(f"{prefix}dense_defaults"),
                                               ctx.attr(f"{prefix}dense_sequence"))]
    sparse = [SparseSpec(k, dtypes.as_dtype(t))
              for k, t in zip(ctx.attr(f"{prefix}sparse_keys"), ctx.attr(f"{prefix}sparse_types"))]
    return dense, sparse


def _value(array: Any, dtype: dtypes.DType) -> Any:
    if dtype == dtypes.string:
        return np.asarray(array, dtype=object)
    wanted = dtype.as_numpy_dtype
    if not (isinstance(array, np.ndarray) and array.dtype == wanted and array.flags.c_contiguous
            and array.flags.writeable):
        array = np.require(array, wanted, ["C", "W"])
    return torch.from_numpy(array)


def _outputs(maps: list[dict[bytes, Any]], dense: list[DenseSpec], sparse: list[SparseSpec],
             single: bool) -> list[Any]:
    indices, values, shapes = [], [], []
    for spec in sparse:
        idx, vals, shape = sparse_batch(maps, spec)
        if single:
            idx, shape = idx[:, 1:], shape[1:]
        indices.append(torch.from_numpy(np.ascontiguousarray(idx)))
        values.append(_value(vals, spec.dtype))
        shapes.append(torch.from_numpy(shape))
    dense_values = []
    for spec in dense:
        array = dense_batch(maps, spec)
        dense_values.append(_value(array[0] if single else array, spec.dtype))
    return indices + values + shapes + dense_values


def _result(outputs: list[Any]) -> Any:
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


@kernel("ParseExample", device_types=_CPU)
def _parse_example(ctx: KernelContext):
    dense, sparse = _specs(ctx, "")
    single = bool(ctx.attr("single"))

    def parse(serialized: Any) -> Any:
        records = [serialized[()]] if single else list(np.asarray(serialized, dtype=object).reshape(-1))
        if not sparse and not single:
            fast = parse_dense(records, dense)
            if fast is not None:
                return _result([_value(a, s.dtype) for a, s in zip(fast, dense)])
        maps = [feature_map(view.features) for view in parse_views(records)]
        return _result(_outputs(maps, dense, sparse, single))

    return parse


@kernel("ParseSingleSequenceExample", device_types=_CPU)
def _parse_sequence_example(ctx: KernelContext):
    context_dense, context_sparse = _specs(ctx, "context_")
    list_dense, list_sparse = _specs(ctx, "feature_list_")
    allow_missing = list(ctx.attr("feature_list_dense_allow_missing") or [])

    def parse(serialized: Any) -> Any:
        record = serialized[()] if isinstance(serialized, np.ndarray) else serialized
        try:
            view = pb.views_pb2.SequenceExampleView.FromString(bytes(record))
        except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError
            raise InvalidArgumentError(f"Could not parse a serialized SequenceExample: {exc}") \
                from None
        context = [feature_map(view.context)]
        lists = {entry.key: list(entry.value.feature) for entry in view.feature_lists.feature_list}
        outputs = _outputs(context, context_dense, context_sparse, single=True)
        steps_sparse = [_steps(lists, spec.key, True) for spec in list_sparse]
        out_sparse = [sparse_batch(s, spec) for s, spec in zip(steps_sparse, list_sparse)]
        outputs += [torch.from_numpy(np.ascontiguousarray(i)) for i, _, _ in out_sparse]
        outputs += [_value(v, spec.dtype) for (_, v, _), spec in zip(out_sparse, list_sparse)]
        outputs += [torch.from_numpy(s) for _, _, s in out_sparse]
        for spec, missing_ok in zip(list_dense, allow_missing):
            steps = _steps(lists, spec.key, missing_ok)
            array = dense_batch(steps, spec) if steps else \
                np.zeros((0, *spec.shape), dtype=object if spec.dtype == dtypes.string
                         else spec.dtype.as_numpy_dtype)
            outputs.append(_value(array, spec.dtype))
        return _result(outputs)

    return parse


def _steps(lists: dict[bytes, list[Any]], key: str, missing_ok: bool) -> list[dict[bytes, Any]]:
    found = lists.get(key.encode())
    if found is None:
        if not missing_ok:
            raise InvalidArgumentError(
                f"Name: <unknown>, Feature list '{key}' is required but could not be found. Did "
                "you mean to include it in feature_list_dense_missing_assumed_empty or "
                "feature_list_dense_defaults? (or pass allow_missing=True)")
        return []
    key_bytes = key.encode()
    return [{key_bytes: feature} for feature in found]
