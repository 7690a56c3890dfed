"""Fractional pooling (``tf.nn.fractional_max_pool`` / ``fractional_avg_pool``, Graham 2014):
``FractionalMaxPool`` / ``FractionalAvgPool`` return the pooled NHWC tensor and the row and
column pooling sequences (window boundaries) they drew, TensorFlow's way (random: a shuffle
of window sizes k and k+1; pseudo-random: ``ceil(alpha * (i + u))``); the gradient ops take
those sequences, so a gradient uses the forward pass's windows. Kernels in
``kernels/fractional_pool_ops.py``; the draws use flowmesh's generator, not TensorFlow's
Philox stream (integer ratios give the same windows in both)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops
from flowmesh.ops._builders import check_dtype, make_op, make_tensor
from flowmesh.ops.random_ops import get_seed

_DTYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)


def _pool_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x = inputs[0].shape
    if x.rank not in (None, 4):
        raise InvalidArgumentError(f"FractionalPool: value must be 4-D NHWC, got shape {x}")
    dims = x.as_list() if x.rank else [None] * 4
    out = [None if d is None else int(math.floor(d / r)) for d, r in zip(dims, attrs["pooling_ratio"])]
    if any(o is not None and o <= 0 for o in out):
        raise InvalidArgumentError(f"FractionalPool: pooling_ratio {attrs['pooling_ratio']} leaves "
                                   f"an empty output for input shape {x}")
    # the sequences hold out + 1 boundaries (TensorFlow's shape function claims out)
    return [(inputs[0].dtype, TensorShape(out)), (dtypes.int64, TensorShape([None])),
            (dtypes.int64, TensorShape([None]))]


def _max_grad(op: Any, grad: Tensor, _rows: Any, _cols: Any) -> list:
    x, (y, rows, cols) = op.inputs[0], op.outputs
    return [make_tensor("FractionalMaxPoolGrad", [x, y, grad, rows, cols],
                        {"overlapping": op.attrs["overlapping"]})]


def _avg_grad(op: Any, grad: Tensor, _rows: Any, _cols: Any) -> list:
    _, rows, cols = op.outputs
    shape = array_ops.shape(op.inputs[0], out_type=dtypes.int64)
    return [make_tensor("FractionalAvgPoolGrad", [shape, grad, rows, cols],
                        {"overlapping": op.attrs["overlapping"]})]


register_op("FractionalMaxPool", _pool_shape, grad=_max_grad, stateful=True)
register_op("FractionalAvgPool", _pool_shape, grad=_avg_grad, stateful=True)
register_op("FractionalMaxPoolGrad", lambda i, a: [(i[0].dtype, i[0].shape)], not_differentiable=True)
register_op("FractionalAvgPoolGrad", lambda i, a: [(i[1].dtype, TensorShape([None] * 4))],
            not_differentiable=True)


def _pool(op_type: str, value: Any, pooling_ratio: Any, pseudo_random: bool, overlapping: bool,
          deterministic: bool, seed: int, seed2: int, name: str | None) -> tuple[Tensor, Tensor, Tensor]:
    ratio = [float(r) for r in pooling_ratio]
    if len(ratio) != 4 or ratio[0] != 1.0 or ratio[3] != 1.0 or min(ratio) < 1.0:
        raise InvalidArgumentError(f"{op_type}: pooling_ratio must be [1.0, rows >= 1, cols >= 1, "
                                   f"1.0] (batch and channel pooling are not allowed), got {pooling_ratio}")
    if not (seed or seed2):
        seed, seed2 = (s or 0 for s in get_seed(None))
    with name_scope(name, op_type, [value]) as scope:
        x = convert_to_tensor(value, name="value")
        check_dtype(op_type, x, _DTYPES, "value")
        attrs = {"pooling_ratio": ratio, "pseudo_random": bool(pseudo_random),
                 "overlapping": bool(overlapping), "deterministic": bool(deterministic),
                 "seed": int(seed), "seed2": int(seed2)}
        return tuple(make_op(op_type, [x], attrs, name=scope).outputs)


def fractional_max_pool(value: Any, pooling_ratio: Any, pseudo_random: bool = False,
                        overlapping: bool = False, deterministic: bool = False, seed: int = 0,
                        seed2: int = 0, name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Max pooling over windows of 1 or 2 (or ``floor``/``ceil`` of a ratio) cells, so the output
    is ``floor(input / pooling_ratio)`` (``tf.nn.fractional_max_pool``, TF1 arguments).
    Returns ``(output, row_pooling_sequence, col_pooling_sequence)``."""
    return _pool("FractionalMaxPool", value, pooling_ratio, pseudo_random, overlapping,
                 deterministic, seed, seed2, name)


def fractional_avg_pool(value: Any, pooling_ratio: Any, pseudo_random: bool = False,
                        overlapping: bool = False, deterministic: bool = False, seed: int = 0,
                        seed2: int = 0, name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Average pooling over fractional windows (``tf.nn.fractional_avg_pool``); see
    :func:`fractional_max_pool`."""
    return _pool("FractionalAvgPool", value, pooling_ratio, pseudo_random, overlapping,
                 deterministic, seed, seed2, name)
