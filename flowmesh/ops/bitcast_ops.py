"""``tf.bitcast``: reinterprets a tensor's bytes as another dtype, without copying.

TensorFlow's shape rule: same element size keeps the shape; a wider input gains a trailing
dimension of ``in_size / out_size``; a narrower input must end in a dimension of
``out_size / in_size``, which disappears. Not differentiable (as in TensorFlow)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import NUMERIC, check_dtype, make_tensor


def _bitcast_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, target = inputs[0], attrs["type"]
    src, dst = x.dtype.size, target.size
    if src == dst or x.shape.rank is None:
        return [(target, x.shape if src == dst else TensorShape(None))]
    dims = x.shape.as_list()
    if src > dst:
        return [(target, TensorShape(dims + [src // dst]))]
    if not dims or dims[-1] not in (None, dst // src):
        raise InvalidArgumentError(
            f"Bitcast from {x.dtype.name} to {target.name}: the last dimension of the input "
            f"{x.shape} must be {dst // src} (= {dst} bytes / {src} bytes)")
    return [(target, TensorShape(dims[:-1]))]


register_op("Bitcast", _bitcast_shape, not_differentiable=True)


def bitcast(input: Any, type: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The bytes of ``input`` viewed as ``type`` (``tf.bitcast``).

    Raises:
        TypeError: a non-numeric dtype.
        InvalidArgumentError: a narrower input whose last dimension does not hold one
            element of ``type``.
    """
    x = convert_to_tensor(input, name="input")
    target = dtypes.as_dtype(type)
    check_dtype("Bitcast", x, NUMERIC, "input")
    if target not in NUMERIC:
        raise TypeError(f"Bitcast: type must be numeric, got {target.name}")
    return make_tensor("Bitcast", [x], {"T": x.dtype, "type": target}, name=name or "Bitcast")
