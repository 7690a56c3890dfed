"""``tf.sort`` and ``tf.argsort``, built (as in TensorFlow) from ``top_k`` on the last
dimension: other axes are transposed there and back, ascending order sorts the
order-reversed values (``-x`` for floats, ``-1 - x`` for integers, which cannot overflow).
Equal values keep their original order. Gradients flow through ``top_k``.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, math_ops, nn_impl


def _reverse_order(x: Tensor) -> Tensor:
    if x.dtype.is_integer:
        return math_ops.subtract(convert_to_tensor(-1, dtype=x.dtype), x)
    return math_ops.negative(x)


def _sort(values: Any, axis: int, direction: str, want_indices: bool, name: str) -> Tensor:
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    with name_scope(name, name, [values]) as scope:
        x = convert_to_tensor(values, name="values")
        rank = x.shape.rank
        if rank is None:
            raise InvalidArgumentError(f"{name} needs an input of known rank")
        if not -rank <= int(axis) < max(rank, 1):
            raise InvalidArgumentError(f"axis {axis} out of range for an input of rank {rank}")
        axis = int(axis) % max(rank, 1)
        perm = list(range(rank))
        perm[axis], perm[-1] = perm[-1], perm[axis]
        moved = array_ops.transpose(x, perm) if axis != rank - 1 else x
        keyed = _reverse_order(moved) if direction == "ASCENDING" else moved
        k = array_ops.shape(moved)[-1]
        top, indices = nn_impl.top_k(keyed, k)
        out = indices if want_indices else (_reverse_order(top) if direction == "ASCENDING" else top)
        if axis != rank - 1:
            out = array_ops.transpose(out, perm)
        return array_ops.identity(out, name=scope)


def sort(values: Any, axis: int = -1, direction: str = "ASCENDING", name: str | None = None) -> Tensor:
    """``values`` sorted along ``axis`` (``'ASCENDING'`` or ``'DESCENDING'``).

    Raises:
        ValueError: an unknown direction.
        InvalidArgumentError: unknown rank or an axis out of range.
    """
    return _sort(values, axis, direction, False, name or "sort")


def argsort(values: Any, axis: int = -1, direction: str = "ASCENDING", stable: bool = False,
            name: str | None = None) -> Tensor:
    """The int32 indices that sort ``values`` along ``axis`` (ties keep their order, so the
    sort is always stable)."""
    return _sort(values, axis, direction, True, name or "argsort")


