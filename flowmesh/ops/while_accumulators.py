"""Accumulators: the per-iteration values a forward ``While`` keeps for its gradient (a
``variant`` list per loop tensor), and the ops that read them back (``AccumulatorGetItem``,
``AccumulatorStack``, ``AccumulatorConcat``). See ``while_loop.py`` and ``while_grad.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Operation, Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, as_shape
from flowmesh.ops._builders import make_tensor


def _get_item_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(attrs["element_dtype"], as_shape(attrs["element_shape"]))]


def _get_item_grad(op: Operation, grad: Any) -> list[Any]:
    raise LookupError(
        f"No gradient for '{op.name}' ({op.type}): second-order gradients through "
        "tf.while_loop are not supported. Compute the first-order gradient outside the loop "
        "or unroll the loop in Python."
    )


register_op("AccumulatorGetItem", _get_item_shape, grad=_get_item_grad)


def accumulator_get_item(accumulator: Tensor, index: Tensor, element_dtype: dtypes.DType,
                         element_shape: TensorShape, name: str | None = None) -> Tensor:
    """Item ``index`` of an accumulator (the per-iteration values of a loop tensor)."""
    attrs = {"element_dtype": element_dtype, "element_shape": element_shape}
    return make_tensor("AccumulatorGetItem", [accumulator, index], attrs,
                       name=name or "AccumulatorGetItem")


def _stack_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(attrs["element_dtype"], TensorShape([None]).concatenate(as_shape(attrs["element_shape"])))]


register_op("AccumulatorStack", _stack_shape, grad=lambda op, grad: [grad])


def accumulator_stack(accumulator: Tensor, element_dtype: dtypes.DType, element_shape: TensorShape,
                      name: str | None = None) -> Tensor:
    """Stacks an accumulator into one ``[iterations, *element_shape]`` tensor.

    Its gradient (a dense ``[iterations, ...]`` tensor) flows back into the ``While``
    that produced the accumulator (see ``while_grad``). With zero iterations the element
    shape must be fully defined.
    """
    attrs = {"element_dtype": element_dtype, "element_shape": element_shape}
    return make_tensor("AccumulatorStack", [accumulator], attrs, name=name or "AccumulatorStack")


def _concat_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(attrs["element_dtype"], as_shape(attrs["element_shape"]))]


register_op("AccumulatorConcat", _concat_shape, grad=_get_item_grad)


def accumulator_concat(accumulator: Tensor, row_shape: Tensor, element_dtype: dtypes.DType,
                       shape: TensorShape, name: str | None = None) -> Tensor:
    """Concatenates an accumulator's items along axis 0; ``row_shape`` (the trailing
    dimensions) shapes the empty result of a loop that ran zero times."""
    attrs = {"element_dtype": element_dtype, "element_shape": shape}
    return make_tensor("AccumulatorConcat", [accumulator, row_shape], attrs,
                       name=name or "AccumulatorConcat")
