"""Helpers that make defining an op a few lines: creation, dtype checks, shape rules.

Typical use in ``flowmesh/ops/<family>.py``::

    register_op("Sigmoid", same_shape, grad=_sigmoid_grad)

    def sigmoid(x, name=None):
        x = convert_to_tensor(x, name="x")
        return make_tensor("Sigmoid", [x], name=name or "Sigmoid")
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes, op_hooks
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor, graph_of
from flowmesh.core.shapes import TensorShape, broadcast_shapes, unknown_shape

Spec = tuple[dtypes.DType, TensorShape]


# --- op creation ---------------------------------------------------------------------------
def make_op(op_type: str, inputs: Sequence[Tensor], attrs: dict[str, Any] | None = None,
            name: str | None = None) -> Operation:
    """Creates an op in the graph of its inputs (or the default graph)."""
    return graph_of(inputs).create_op(op_type, list(inputs), attrs, name)


def make_tensor(op_type: str, inputs: Sequence[Tensor], attrs: dict[str, Any] | None = None,
                name: str | None = None) -> Tensor:
    """Creates a single-output op and returns its output."""
    return make_op(op_type, inputs, attrs, name).outputs[0]


def convert_same_dtype(op_type: str, values: Sequence[Any], names: Sequence[str],
                       dtype: Any = None) -> list[Tensor]:
    """Converts ``values`` to tensors of one dtype, as TensorFlow's binary ops require.

    Python values take the dtype of the first tensor among them.

    Raises:
        TypeError: naming the op and the argument whose dtype differs.
    """
    target = dtypes.as_dtype(dtype) if dtype is not None else None
    if target is None:
        for v in values:
            if _is_symbolic(v):
                target = v.dtype
                break
    tensors: list[Tensor] = []
    for v, arg in zip(values, names):
        if _is_symbolic(v) or target is None:
            t = convert_to_tensor(v, name=arg)
        else:
            try:
                t = convert_to_tensor(v, dtype=target, name=arg)
            except TypeError as exc:
                raise TypeError(
                    f"Input '{arg}' of '{op_type}' Op has type {type(v).__name__} that does not "
                    f"match type {target.name} of argument '{names[0]}'. ({exc})"
                ) from None
        if target is None:
            target = t.dtype
        tensors.append(t)
    first = tensors[0]
    for t, arg in zip(tensors[1:], names[1:]):
        if t.dtype != first.dtype:
            raise TypeError(
                f"Input '{arg}' of '{op_type}' Op has type {t.dtype.name} that does not match "
                f"type {first.dtype.name} of argument '{names[0]}'."
            )
    return tensors


def _is_symbolic(value: Any) -> bool:
    """Tensors and tensor-like graph objects (Variables) keep their own dtype."""
    return isinstance(value, Tensor) or (
        hasattr(value, "_as_graph_element") and isinstance(getattr(value, "dtype", None), dtypes.DType)
    )


def check_dtype(op_type: str, tensor: Tensor, allowed: Sequence[dtypes.DType], arg: str = "x") -> None:
    """Raises TypeError when ``tensor``'s dtype is not in ``allowed``."""
    if tensor.dtype not in allowed:
        raise TypeError(
            f"Value passed to parameter '{arg}' has DataType {tensor.dtype.name} not in list of "
            f"allowed values: {', '.join(d.name for d in allowed)} (op {op_type})"
        )


FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
FLOATS_COMPLEX = FLOATS + (dtypes.complex64, dtypes.complex128)
INTEGERS = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16,
            dtypes.uint32, dtypes.uint64)
NUMERIC = FLOATS_COMPLEX + INTEGERS
REAL_NUMERIC = FLOATS + INTEGERS
INDEX_TYPES = (dtypes.int32, dtypes.int64)


# --- shape rules ---------------------------------------------------------------------------
def same_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list[Spec]:
    """One output with the dtype and shape of the first input."""
    return [(inputs[0].dtype, inputs[0].shape)]


def broadcast_binary(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list[Spec]:
    """One output: dtype of the inputs, NumPy-broadcast shape."""
    return [(inputs[0].dtype, broadcast_shapes(inputs[0].shape, inputs[1].shape))]


def broadcast_compare(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list[Spec]:
    """Like :func:`broadcast_binary` but the output is ``bool``."""
    return [(dtypes.bool, broadcast_shapes(inputs[0].shape, inputs[1].shape))]


def fixed(*specs: tuple[Any, Any]):
    """A shape rule returning constant specs, e.g. ``fixed((dtypes.int32, []))``."""
    resolved = [(dtypes.as_dtype(d), TensorShape(s)) for d, s in specs]
    return lambda inputs, attrs: list(resolved)


def no_outputs(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list[Spec]:
    return []


def from_attrs(dtype_attr: str = "dtype", shape_attr: str | None = "shape"):
    """One output whose dtype (and shape) come from attrs."""

    def rule(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list[Spec]:
        shape = attrs.get(shape_attr) if shape_attr else None
        return [(dtypes.as_dtype(attrs[dtype_attr]),
                 TensorShape(shape) if shape is not None else unknown_shape())]

    return rule


def constant_value(tensor: Tensor) -> Any:
    """The NumPy value of ``tensor`` when it is known at graph-construction time, else None.

    Handles ``Const``, ``Identity`` of a constant and ``Shape`` of a fully defined tensor
    (as TensorFlow's ``tensor_util.constant_value``), which shape rules use to infer
    static shapes from shape arguments.
    """
    import numpy as np

    op = tensor.op
    if op.type == "Const":
        return op.attrs["value"]
    if op.type in ("Identity", "StopGradient"):
        return constant_value(op.inputs[0])
    if op.type == "Shape" and op.inputs[0].shape.is_fully_defined():
        return np.array(op.inputs[0].shape.as_list(), dtype=op.attrs["out_type"].as_numpy_dtype)
    if op.type == "Size" and op.inputs[0].shape.is_fully_defined():
        return np.array(op.inputs[0].shape.num_elements(), dtype=op.attrs["out_type"].as_numpy_dtype)
    if op.type == "Rank" and op.inputs[0].shape.rank is not None:
        return np.array(op.inputs[0].shape.rank, dtype=np.int32)
    if op.type == "Pack":
        values = [constant_value(t) for t in op.inputs]
        if any(v is None for v in values):
            return None
        return np.stack(values, axis=op.attrs.get("axis", 0))
    if op.type == "Cast":
        value = constant_value(op.inputs[0])
        return None if value is None else value.astype(op.attrs["DstT"].as_numpy_dtype)
    return None


def shape_from_tensor(tensor: Tensor) -> TensorShape:
    """The static shape described by a 1-D shape tensor (partially known when possible)."""
    value = constant_value(tensor)
    if value is not None:
        return TensorShape([None if d < 0 else int(d) for d in value.reshape(-1)])
    if tensor.op.type == "Pack":
        dims = []
        for t in tensor.op.inputs:
            v = constant_value(t)
            dims.append(None if v is None or int(v) < 0 else int(v))
        return TensorShape(dims)
    if tensor.shape.rank == 1 and tensor.shape.as_list()[0] is not None:
        return unknown_shape(tensor.shape.as_list()[0])
    return unknown_shape()


op_hooks.register("shape_from_tensor", shape_from_tensor)
