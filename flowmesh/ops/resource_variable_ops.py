"""Variable state ops: handles, reads, assignments, sparse reads and scatter updates.

A variable is a resource owned by the device that holds it. ``VarHandleOp`` yields a
handle (dtype ``resource``) to the storage in that device's resource store; every op
consuming the handle is placed on the same device. Assignments update the storage in
place and return the new value, like TensorFlow 1.x reference variables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.function import resolve_captured
from flowmesh.core.graph import Tensor, get_default_graph
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, as_shape, unknown_shape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, strided_slice_ops
from flowmesh.ops._builders import make_tensor


def _handle_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(dtypes.resource, TensorShape([]))]


register_op("VarHandleOp", _handle_shape, not_differentiable=True, stateful=True)


def var_handle_op(dtype: Any, shape: Any, shared_name: str, container: str = "",
                  name: str | None = None) -> Tensor:
    """A handle to the variable ``shared_name`` in its device's resource store (in the
    container of an enclosing ``tf.container`` scope unless ``container`` is given)."""
    container = container or getattr(get_default_graph(), "_container", "")
    attrs = {"dtype": dtypes.as_dtype(dtype), "shape": as_shape(shape),
             "shared_name": shared_name, "container": container}
    return make_tensor("VarHandleOp", [], attrs, name=name)


def _read_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    handle_op = resolve_captured(inputs[0]).op  # the VarHandleOp, also through tf.cond captures
    shape = handle_op.attrs.get("shape") if handle_op.type == "VarHandleOp" else None
    return [(attrs["dtype"], shape if shape is not None else unknown_shape())]


register_op("ReadVariableOp", _read_shape, grad=lambda op, grad: [grad], stateful=True)


def read_variable_op(handle: Tensor, dtype: Any, name: str | None = None) -> Tensor:
    """The current value of the variable behind ``handle``."""
    return make_tensor("ReadVariableOp", [handle], {"dtype": dtypes.as_dtype(dtype)},
                       name=name or "ReadVariableOp")


def _check_value(op_type: str, handle: Tensor, value: Tensor, validate_shape: bool = True) -> None:
    handle_op = resolve_captured(handle).op
    if handle_op.type != "VarHandleOp":
        return
    var_dtype = handle_op.attrs["dtype"]
    if value.dtype != var_dtype:
        raise TypeError(
            f"{op_type} of variable '{handle_op.name}' with dtype {var_dtype.name} got a value of "
            f"dtype {value.dtype.name}; cast it with tf.cast first."
        )
    if validate_shape and not handle_op.attrs["shape"].is_compatible_with(value.shape):
        raise InvalidArgumentError(
            f"{op_type}: shape of variable '{handle_op.name}' {handle_op.attrs['shape']} is not "
            f"compatible with the value's shape {value.shape}"
        )


def _assign_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    handle, value = inputs
    _check_value("Assign", handle, value, attrs.get("validate_shape", True))
    return [(value.dtype, value.shape)]


def _update_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    handle, value = inputs
    _check_value("AssignAdd/AssignSub", handle, value, validate_shape=False)
    read_shape = _read_shape(inputs[:1], {"dtype": value.dtype})[0][1]
    return [(value.dtype, read_shape)]


register_op("AssignVariableOp", _assign_shape, not_differentiable=True, stateful=True)
register_op("AssignAddVariableOp", _update_shape, not_differentiable=True, stateful=True)
register_op("AssignSubVariableOp", _update_shape, not_differentiable=True, stateful=True)


def assign_variable_op(handle: Tensor, value: Any, validate_shape: bool = True,
                       name: str | None = None) -> Tensor:
    """Writes ``value`` into the variable; returns the new value."""
    dtype = handle.op.attrs["dtype"] if handle.op.type == "VarHandleOp" else None
    v = convert_to_tensor(value, dtype=dtype)
    return make_tensor("AssignVariableOp", [handle, v], {"validate_shape": bool(validate_shape)},
                       name=name or "AssignVariableOp")


def assign_add_variable_op(handle: Tensor, value: Any, name: str | None = None) -> Tensor:
    dtype = handle.op.attrs["dtype"] if handle.op.type == "VarHandleOp" else None
    v = convert_to_tensor(value, dtype=dtype)
    return make_tensor("AssignAddVariableOp", [handle, v], name=name or "AssignAddVariableOp")


def assign_sub_variable_op(handle: Tensor, value: Any, name: str | None = None) -> Tensor:
    dtype = handle.op.attrs["dtype"] if handle.op.type == "VarHandleOp" else None
    v = convert_to_tensor(value, dtype=dtype)
    return make_tensor("AssignSubVariableOp", [handle, v], name=name or "AssignSubVariableOp")


register_op("VarIsInitializedOp", lambda inputs, attrs: [(dtypes.bool, TensorShape([]))],
            not_differentiable=True, stateful=True)


def var_is_initialized_op(handle: Tensor, name: str | None = None) -> Tensor:
    return make_tensor("VarIsInitializedOp", [handle], name=name or "VarIsInitializedOp")


register_op("VariableShape", lambda inputs, attrs: [(attrs["out_type"], TensorShape([None]))],
            not_differentiable=True, stateful=True)


def variable_shape(handle: Tensor, out_type: Any = dtypes.int32, name: str | None = None) -> Tensor:
    return make_tensor("VariableShape", [handle], {"out_type": dtypes.as_dtype(out_type)},
                       name=name or "VariableShape")


# --- sparse access ------------------------------------------------------------------------
def _gather_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    handle, indices = inputs
    var_shape = _read_shape(inputs[:1], attrs)[0][1]
    if var_shape.rank is None or indices.shape.rank is None:
        return [(attrs["dtype"], unknown_shape())]
    return [(attrs["dtype"], indices.shape.concatenate(var_shape[1:]))]


def _gather_grad(op: Any, grad: Tensor) -> list:
    handle, indices = op.inputs
    params_shape = variable_shape(handle, out_type=indices.dtype)
    flat_indices = array_ops.reshape(indices, [-1])
    rest = strided_slice_ops.strided_slice(params_shape, [1], [0], [1], end_mask=1)
    values = array_ops.reshape(grad, array_ops.concat([[-1], rest], 0))
    return [IndexedSlices(values, flat_indices, params_shape), None]


register_op("ResourceGather", _gather_shape, grad=_gather_grad, stateful=True)


def resource_gather(handle: Tensor, indices: Any, dtype: Any, name: str | None = None) -> Tensor:
    """Rows ``indices`` of the variable, read where the variable lives (only they travel)."""
    idx = convert_to_tensor(indices)
    if not idx.dtype.is_integer:
        raise TypeError(f"gather indices must be int32 or int64, got {idx.dtype.name}")
    return make_tensor("ResourceGather", [handle, idx], {"dtype": dtypes.as_dtype(dtype)},
                       name=name or "ResourceGather")


def _scatter_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    handle, indices, updates = inputs
    if handle.op.type == "VarHandleOp" and updates.dtype != handle.op.attrs["dtype"]:
        raise TypeError(
            f"scatter updates of dtype {updates.dtype.name} do not match variable "
            f"'{handle.op.name}' of dtype {handle.op.attrs['dtype'].name}"
        )
    return [(updates.dtype, _read_shape(inputs[:1], {"dtype": updates.dtype})[0][1])]


for _scatter in ("ResourceScatterUpdate", "ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterMul",
                 "ResourceScatterDiv", "ResourceScatterMin", "ResourceScatterMax", "ResourceScatterNdUpdate",
                 "ResourceScatterNdAdd", "ResourceScatterNdSub"):
    register_op(_scatter, _scatter_shape, not_differentiable=True, stateful=True)


def resource_scatter(op_type: str, handle: Tensor, indices: Any, updates: Any,
                     name: str | None = None) -> Tensor:
    """Row-wise ``=``/``+=``/``-=`` of ``updates`` at ``indices``; returns the new value."""
    dtype = handle.op.attrs["dtype"] if handle.op.type == "VarHandleOp" else None
    idx = convert_to_tensor(indices)
    upd = convert_to_tensor(updates, dtype=dtype)
    return make_tensor(op_type, [handle, idx, upd], name=name or op_type)
