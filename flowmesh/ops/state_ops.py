"""``tf.assign``-style functions over variables (``tf.assign(ref, value)`` ...)."""

from __future__ import annotations

from typing import Any

from flowmesh.core.graph import Tensor
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.ops import array_ops, range_ops
from flowmesh.ops import resource_variable_ops as rv
from flowmesh.ops.counter_ops import count_up_to  # noqa: F401 - tf.count_up_to lives with its op


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


def batch_scatter_update(ref: Any, indices: Any, updates: Any, use_locking: bool = True,
                         name: str | None = None) -> Tensor:
    """``ref[i..., indices[i...]] = updates[i...]``: a scatter update along the first axis
    after the batch dimensions of ``indices`` (``tf.batch_scatter_update``).

    Raises:
        ValueError: ``indices`` of unknown rank.
    """
    from flowmesh.core.convert import convert_to_tensor
    from flowmesh.core.graph import name_scope

    with name_scope(name, "BatchScatterUpdate", [ref, indices, updates]):
        indices = convert_to_tensor(indices, name="indices")
        rank = indices.shape.rank
        if rank is None:
            raise ValueError("tf.batch_scatter_update needs indices of known rank")
        shape = array_ops.shape(indices, out_type=indices.dtype)
        nd_indices = array_ops.expand_dims(indices, -1)
        parts = []
        for dim in range(rank - 1):
            broadcast = [1] * (rank + 1)
            broadcast[dim] = -1
            positions = array_ops.reshape(range_ops.range(0, shape[dim], 1, dtype=indices.dtype), broadcast)
            parts.append(positions * array_ops.ones_like(nd_indices))
        final = array_ops.concat(parts + [nd_indices], axis=-1)
        return scatter_nd_update(ref, final, updates, use_locking=use_locking)
