"""Floating-point operation counts of graph ops, from their static shapes: TensorFlow's
``flops`` statistics (``tensorflow/python/profiler/internal/flops_registry.py`` and the
``RegisterStatistics("...", "flops")`` functions of ``nn_ops.py``), keyed by TensorFlow's op
type, with the same formulas.

:func:`float_ops` returns None when an op type has no formula and raises
:class:`IncompleteShapeError` when the shapes it needs are not fully known (TensorFlow
counts those ops as "no flops stats due to incomplete shapes").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

_UNARY = {"Reciprocal": 1, "Square": 1, "Rsqrt": 2, "Log": 1, "Neg": 1, "AssignSub": 1, "AssignAdd": 1,
          "Softmax": 5}
_BINARY = {"Add": 1, "AddV2": 1, "Sub": 1, "Mul": 1, "RealDiv": 1, "Maximum": 1, "Minimum": 1, "Pow": 1,
           "RsqrtGrad": 4, "GreaterEqual": 1, "Greater": 1, "LessEqual": 1, "Less": 1, "Equal": 1,
           "NotEqual": 1, "SquaredDifference": 2}
_REDUCTIONS = {"Mean": (1, 1), "Sum": (1, 0), "ArgMax": (1, 0), "ArgMin": (1, 0), "BiasAddGrad": (1, 0)}


class IncompleteShapeError(ValueError):
    """A shape the op's formula needs is not fully known when the graph is built."""


def _dims(tensor: Any) -> list[int]:
    shape = tensor.shape
    if not shape.is_fully_defined():
        raise IncompleteShapeError(f"{tensor.name} has shape {shape}, not fully defined")
    return [int(d) for d in shape.as_list()]


def _count(tensor: Any) -> int:
    return math.prod(_dims(tensor))


def _attr(node_def: Any, name: str) -> Any:
    return node_def.attr[name] if name in node_def.attr else None


def _nhwc(node_def: Any) -> None:
    attr = _attr(node_def, "data_format")
    if attr is not None and attr.s not in (b"", b"NHWC"):
        raise ValueError(f"{node_def.name}: only NHWC format is supported in flops computations")


def _matmul(op: Any, node_def: Any) -> int:
    a = _dims(op.inputs[0])
    transpose = _attr(node_def, "transpose_a")
    k = a[0] if transpose is not None and transpose.b else a[1]
    return k * _count(op.outputs[0]) * 2


def _batch_matmul(op: Any, node_def: Any) -> int:
    a = _dims(op.inputs[0])
    adjoint = _attr(node_def, "adj_x") or _attr(node_def, "transpose_a")
    k = a[-2] if adjoint is not None and adjoint.b else a[-1]
    return k * _count(op.outputs[0]) * 2


def _conv2d(op: Any, node_def: Any) -> int:
    _nhwc(node_def)
    _dims(op.inputs[0])
    height, width, in_depth = _dims(op.inputs[1])[:3]
    return _count(op.outputs[0]) * in_depth * height * width * 2


def _conv3d(op: Any, node_def: Any) -> int:
    _dims(op.inputs[0])
    time, height, width, in_depth = _dims(op.inputs[1])[:4]
    return _count(op.outputs[0]) * in_depth * time * height * width * 2


def _depthwise(op: Any, node_def: Any) -> int:
    _dims(op.inputs[0])
    height, width = _dims(op.inputs[1])[:2]
    return _count(op.outputs[0]) * height * width * 2


def _pool(op: Any, node_def: Any) -> int:
    _nhwc(node_def)
    return math.prod(node_def.attr["ksize"].list.i) * _count(op.outputs[0])


def _avg_pool_grad(op: Any, node_def: Any) -> int:
    _nhwc(node_def)
    return math.prod(node_def.attr["ksize"].list.i) * _count(op.inputs[1]) * 2


def _max_pool_grad(op: Any, node_def: Any) -> int:
    _nhwc(node_def)
    original = _count(op.inputs[1])
    return math.prod(node_def.attr["ksize"].list.i) * original + original


def _conv_backprop_input(op: Any, node_def: Any) -> int:
    _nhwc(node_def)
    out = _dims(op.outputs[0])
    strides = list(node_def.attr["strides"].list.i)
    return int(2 * math.prod(out) * _count(op.inputs[1]) / (out[-1] * strides[1] * strides[2]))


def _conv_backprop_filter(op: Any, node_def: Any) -> int:
    _nhwc(node_def)
    image = _dims(op.inputs[0])
    strides = list(node_def.attr["strides"].list.i)
    return int(2 * math.prod(image) * _count(op.outputs[0]) / (image[-1] * strides[1] * strides[2]))


def _add_n(op: Any, node_def: Any) -> int:
    return _count(op.inputs[0]) * (len(op.inputs) - 1) if op.inputs else 0


_FORMULAS: dict[str, Callable[[Any, Any], int]] = {
    "MatMul": _matmul, "BatchMatMul": _batch_matmul, "BatchMatMulV2": _batch_matmul,
    "BatchMatMulV3": _batch_matmul, "Conv2D": _conv2d, "Conv3D": _conv3d,
    "DepthwiseConv2dNative": _depthwise, "AvgPool": _pool, "MaxPool": _pool,
    "AvgPoolGrad": _avg_pool_grad, "MaxPoolGrad": _max_pool_grad,
    "Conv2DBackpropInput": _conv_backprop_input, "Conv2DBackpropFilter": _conv_backprop_filter,
    "AddN": _add_n, "BiasAdd": lambda op, node_def: _count(op.inputs[0]),
    "L2Loss": lambda op, node_def: _count(op.inputs[0]) * 3 - 1,
}


def float_ops(op: Any, node_def: Any) -> int | None:
    """The float operations ``op`` performs per run, by TensorFlow's formula for its type
    (``node_def.op``); None when the type has no formula.

    Raises:
        IncompleteShapeError: a shape the formula needs is not fully known.
        ValueError: a convolution or pooling op is not in NHWC format.
    """
    op_type = node_def.op
    if op_type in _UNARY:
        return _count(op.inputs[0]) * _UNARY[op_type]
    if op_type in _BINARY:
        return _count(op.outputs[0]) * _BINARY[op_type]
    if op_type in _REDUCTIONS:
        reduce_flops, finalize_flops = _REDUCTIONS[op_type]
        return _count(op.inputs[0]) * reduce_flops + _count(op.outputs[0]) * (finalize_flops - reduce_flops)
    formula = _FORMULAS.get(op_type)
    return None if formula is None else int(formula(op, node_def))
