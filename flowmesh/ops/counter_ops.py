"""``tf.count_up_to``: atomically increments an integer variable and returns its value
before the increment, until the value reaches ``limit``; from then on every run raises
``OutOfRangeError`` (the end-of-input signal of TensorFlow 1.x's epoch counters)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops._builders import INDEX_TYPES, make_tensor


def _count_up_to_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(attrs["T"], TensorShape([]))]


register_op("ResourceCountUpTo", _count_up_to_shape, not_differentiable=True, stateful=True)


def count_up_to(ref: Any, limit: int, name: str | None = None) -> Tensor:
    """Increments the scalar int32/int64 variable ``ref`` and returns its old value.

    Raises:
        TypeError: ``ref`` is not an int32/int64 variable.
        OutOfRangeError: at run time, once the variable has reached ``limit``.
    """
    if not hasattr(ref, "handle"):
        raise TypeError(f"tf.count_up_to needs a tf.Variable, got {type(ref).__name__}")
    dtype = dtypes.as_dtype(ref.dtype).base_dtype
    if dtype not in INDEX_TYPES:
        raise TypeError(f"tf.count_up_to needs an int32 or int64 variable, got {dtype.name} ({ref.name})")
    return ref._colocated(lambda: make_tensor(
        "ResourceCountUpTo", [ref.handle], {"limit": int(limit), "T": dtype}, name=name or "CountUpTo"))
