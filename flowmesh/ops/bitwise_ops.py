"""``tf.bitwise``: ``bitwise_and bitwise_or bitwise_xor invert left_shift right_shift`` on
integer tensors (NumPy broadcasting; not differentiable). Shifts follow TensorFlow: a shift
by a negative amount or by at least the bit width is implementation-defined there, and
flowmesh clamps it the way torch does."""

from __future__ import annotations

from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.ops._builders import (
    INTEGERS,
    broadcast_binary,
    check_dtype,
    convert_same_dtype,
    make_tensor,
    same_shape,
)


def _binary(op_type: str):
    register_op(op_type, broadcast_binary, not_differentiable=True)

    def op_fn(x: Any, y: Any, name: str | None = None) -> Tensor:
        a, b = convert_same_dtype(op_type, [x, y], ["x", "y"])
        check_dtype(op_type, a, INTEGERS)
        return make_tensor(op_type, [a, b], name=name or op_type)

    op_fn.__doc__ = f"Elementwise ``{op_type}`` of integer tensors (broadcasting)."
    return op_fn


bitwise_and = _binary("BitwiseAnd")
bitwise_or = _binary("BitwiseOr")
bitwise_xor = _binary("BitwiseXor")
left_shift = _binary("LeftShift")
right_shift = _binary("RightShift")
register_op("Invert", same_shape, not_differentiable=True)


def invert(x: Any, name: str | None = None) -> Tensor:
    """Flips every bit of an integer tensor (``~x``)."""
    t = convert_to_tensor(x)
    check_dtype("Invert", t, INTEGERS)
    return make_tensor("Invert", [t], name=name or "Invert")
