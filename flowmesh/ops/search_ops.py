"""Searching and counting: ``searchsorted`` (TensorFlow's ``LowerBound``/``UpperBound``),
``setdiff1d`` (``ListDiff``), ``bincount`` (``Bincount``), ``unravel_index`` and
``confusion_matrix``. None is differentiable (as in TensorFlow)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, math_ops, reduction_ops
from flowmesh.ops._builders import make_op, make_tensor
from flowmesh.ops.nd_index_ops import scatter_nd


def _bound_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(attrs["out_type"], inputs[1].shape)]


register_op("LowerBound", _bound_shape, not_differentiable=True)
register_op("UpperBound", _bound_shape, not_differentiable=True)


def searchsorted(sorted_sequence: Any, values: Any, side: str = "left", out_type: Any = dtypes.int32,
                 name: str | None = None) -> Tensor:
    """Insertion points of ``values`` ``[..., M]`` in ``sorted_sequence`` ``[..., N]``, per row.

    Raises:
        ValueError: ``side`` is not ``"left"`` or ``"right"``.
    """
    if side not in ("left", "right"):
        raise ValueError(f"Argument 'side' must be 'left' or 'right', got {side!r}")
    seq = convert_to_tensor(sorted_sequence)
    vals = convert_to_tensor(values, dtype=seq.dtype)
    op_type = "LowerBound" if side == "left" else "UpperBound"
    return make_tensor(op_type, [seq, vals], {"out_type": dtypes.as_dtype(out_type)}, name=name or "searchsorted")


register_op("ListDiff", lambda inputs, attrs: [(inputs[0].dtype, TensorShape([None])),
                                               (attrs["out_idx"], TensorShape([None]))], not_differentiable=True)


def setdiff1d(x: Any, y: Any, index_dtype: Any = dtypes.int32, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The values of 1-D ``x`` not in ``y`` (in ``x``'s order) and their indices in ``x``."""
    a = convert_to_tensor(x)
    b = convert_to_tensor(y, dtype=a.dtype)
    return tuple(make_op("ListDiff", [a, b], {"out_idx": dtypes.as_dtype(index_dtype)}, name=name or "ListDiff").outputs)


register_op("Bincount", lambda inputs, attrs: [(inputs[2].dtype, TensorShape([None]))], not_differentiable=True)


def bincount(arr: Any, weights: Any = None, minlength: Any = None, maxlength: Any = None,
             dtype: Any = dtypes.int32, name: str | None = None) -> Tensor:
    """Counts (or sums ``weights`` of) each value ``0 .. size - 1`` of the int32 ``arr``, where
    ``size = max(max(arr) + 1, minlength)`` capped by ``maxlength``; larger values are dropped."""
    with name_scope(name, "bincount", [arr, weights]):
        values = convert_to_tensor(arr, dtype=dtypes.int32)
        size = reduction_ops.reduce_max(math_ops.maximum(array_ops.reshape(values, [-1]) + 1, 0))
        size = math_ops.maximum(size, 0) if minlength is None else math_ops.maximum(size, minlength)
        if maxlength is not None:
            size = math_ops.minimum(size, maxlength)
        if weights is None:
            w = array_ops.ones_like(values, dtype=dtypes.as_dtype(dtype))
        else:
            w = convert_to_tensor(weights)
        return make_tensor("Bincount", [values, size, w], name="Bincount")


def unravel_index(indices: Any, dims: Any, name: str | None = None) -> Tensor:
    """Coordinates ``[len(dims)] + indices.shape`` of flat ``indices`` in an array of shape ``dims``."""
    with name_scope(name, "UnravelIndex", [indices, dims]):
        idx = convert_to_tensor(indices)
        shape = convert_to_tensor(dims, dtype=idx.dtype)
        rank = shape.shape.as_list()[0] if shape.shape.rank == 1 else None
        if rank is None:
            raise InvalidArgumentError("unravel_index needs dims of known length")
        coords = []
        rest = idx
        for i in reversed(range(rank)):
            coords.append(math_ops.floormod(rest, shape[i]))
            rest = math_ops.floordiv(rest, shape[i])
        return array_ops.stack(coords[::-1])


def confusion_matrix(labels: Any, predictions: Any, num_classes: Any = None, dtype: Any = dtypes.int32,
                     name: str | None = None, weights: Any = None) -> Tensor:
    """``[num_classes, num_classes]`` counts (or summed ``weights``) of (label, prediction) pairs."""
    with name_scope(name, "confusion_matrix", [labels, predictions, weights]):
        lab = cast_ops.cast(convert_to_tensor(labels), dtypes.int64)
        pred = cast_ops.cast(convert_to_tensor(predictions), dtypes.int64)
        if num_classes is None:
            num_classes = math_ops.maximum(reduction_ops.reduce_max(lab), reduction_ops.reduce_max(pred)) + 1
        n = cast_ops.cast(num_classes, dtypes.int64)
        indices = array_ops.stack([lab, pred], axis=1)
        values = array_ops.ones_like(pred, dtype=dtypes.as_dtype(dtype)) if weights is None else \
            cast_ops.cast(weights, dtypes.as_dtype(dtype))
        return scatter_nd(indices, values, array_ops.stack([n, n]))
