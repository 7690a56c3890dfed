"""``tf.assign``-style functions over variables (``tf.assign(ref, value)`` ...)."""

from __future__ import annotations

from typing import Any

from flowmesh.core.graph import Tensor
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.errors import InvalidArgumentError


def _variable(ref: Any, fn: str) -> Any:
    if not hasattr(ref, "assign") or not hasattr(ref, "handle"):
        raise TypeError(
            f"tf.{fn} needs a tf.Variable as its first argument, got {type(ref).__name__}. "
            "Tensors are immutable; only variables can be assigned."
        )
    return ref


def assign(ref: Any, value: Any, validate_shape: bool | None = None, use_locking: bool | None = None,
           name: str | None = None) -> Tensor:
    """Writes ``value`` to the variable ``ref`` and returns the new value."""
    return _variable(ref, "assign").assign(value, use_locking=use_locking, name=name)


def assign_add(ref: Any, value: Any, use_locking: bool | None = None, name: str | None = None) -> Tensor:
    """Adds ``value`` to the variable ``ref`` and returns the new value."""
    return _variable(ref, "assign_add").assign_add(value, use_locking=use_locking, name=name)


def assign_sub(ref: Any, value: Any, use_locking: bool | None = None, name: str | None = None) -> Tensor:
    """Subtracts ``value`` from the variable ``ref`` and returns the new value."""
    return _variable(ref, "assign_sub").assign_sub(value, use_locking=use_locking, name=name)


def scatter_update(ref: Any, indices: Any, updates: Any, use_locking: bool = True,
                   name: str | None = None) -> Tensor:
    """``ref[indices] = updates`` row-wise."""
    return _variable(ref, "scatter_update").scatter_update(IndexedSlices(updates, indices), name=name)


def scatter_add(ref: Any, indices: Any, updates: Any, use_locking: bool = False,
                name: str | None = None) -> Tensor:
    """``ref[indices] += updates`` row-wise (duplicates accumulate)."""
    return _variable(ref, "scatter_add").scatter_add(IndexedSlices(updates, indices), name=name)


def scatter_sub(ref: Any, indices: Any, updates: Any, use_locking: bool = False,
                name: str | None = None) -> Tensor:
    """``ref[indices] -= updates`` row-wise (duplicates accumulate)."""
    return _variable(ref, "scatter_sub").scatter_sub(IndexedSlices(updates, indices), name=name)


def _scatter_op(op_type: str, doc: str):
    def scatter(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
        var = _variable(ref, op_type)
        from flowmesh.ops import resource_variable_ops as rv

        return var._colocated(lambda: rv.resource_scatter(op_type, var.handle, indices, updates, name=name))

    scatter.__doc__ = doc
    return scatter


scatter_mul = _scatter_op("ResourceScatterMul", "``ref[indices] *= updates`` row-wise (duplicates multiply).")
scatter_div = _scatter_op("ResourceScatterDiv", "``ref[indices] /= updates`` row-wise (duplicates divide).")
scatter_min = _scatter_op("ResourceScatterMin", "``ref[indices] = min(ref[indices], updates)`` row-wise.")
scatter_max = _scatter_op("ResourceScatterMax", "``ref[indices] = max(ref[indices], updates)`` row-wise.")
scatter_nd_update = _scatter_op("ResourceScatterNdUpdate", "``ref[indices[i]] = updates[i]`` (N-d indices).")
scatter_nd_add = _scatter_op("ResourceScatterNdAdd", "``ref[indices[i]] += updates[i]`` (N-d indices).")
scatter_nd_sub = _scatter_op("ResourceScatterNdSub", "``ref[indices[i]] -= updates[i]`` (N-d indices).")


def count_up_to(ref: Any, limit: int, name: str | None = None) -> Tensor:
    """Increments an integer variable until it reaches ``limit`` (then raises OutOfRange)."""
    raise InvalidArgumentError(None, None, "count_up_to is not supported; use assign_add with tf.cond")
