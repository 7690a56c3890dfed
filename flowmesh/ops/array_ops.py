"""Array ops, part 1: identity, shapes, reshape, fill, stack/concat, split, transpose.

Each op is one block: registration (shape rule + gradient) followed by its public
wrapper. Kernels live under the same names in ``flowmesh/kernels/array_ops.py``. Gathers
(``gather``, ``batch_gather``, ``boolean_mask``) are in ``gather_ops.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import (
    contains_tensor,
    convert_to_tensor,
    is_tensor_like,
    register_autopack_fn,
)
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, as_shape, unknown_shape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import range_ops
from flowmesh.ops._builders import (
    constant_value,
    convert_same_dtype,
    fixed,
    make_op,
    make_tensor,
    same_shape,
    shape_from_tensor,
)
from flowmesh.ops.cast_ops import cast
from flowmesh.ops.constant_op import constant

newaxis = None


def _int_attr_tensor(values: Any, name: str, dtype: Any = dtypes.int32) -> Tensor:
    if isinstance(values, Tensor):
        return values
    try:
        return convert_to_tensor(values, dtype=dtype, name=name)
    except TypeError:  # a list holding int64 tensors packs to int64, as in TensorFlow
        packed = convert_to_tensor(values, name=name)
        if not packed.dtype.is_integer:
            raise
        return packed


# --- Identity / StopGradient ---------------------------------------------------------------
register_op("Identity", same_shape, grad=lambda op, grad: [grad])
register_op("StopGradient", same_shape, not_differentiable=True)


def identity(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Returns a tensor with the same value as ``input``."""
    x = convert_to_tensor(input)
    return make_tensor("Identity", [x], name=name or "Identity")


def stop_gradient(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The same value as ``input``, but gradients do not flow through it."""
    x = convert_to_tensor(input)
    return make_tensor("StopGradient", [x], name=name or "StopGradient")


# --- Shape / Size / Rank -------------------------------------------------------------------
def _shape_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    rank = inputs[0].shape.rank
    return [(attrs["out_type"], TensorShape([rank]))]


register_op("Shape", _shape_shape, not_differentiable=True)
register_op("Size", lambda inputs, attrs: [(attrs["out_type"], TensorShape([]))],
            not_differentiable=True)
register_op("Rank", fixed((dtypes.int32, [])), not_differentiable=True)


def shape(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:  # noqa: A002
    """The shape of ``input`` as a 1-D integer tensor."""
    x = convert_to_tensor(input)
    return make_tensor("Shape", [x], {"out_type": dtypes.as_dtype(out_type)}, name=name or "Shape")


def size(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:  # noqa: A002
    """The number of elements of ``input``."""
    x = convert_to_tensor(input)
    return make_tensor("Size", [x], {"out_type": dtypes.as_dtype(out_type)}, name=name or "Size")


def rank(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The number of dimensions of ``input``."""
    x = convert_to_tensor(input)
    return make_tensor("Rank", [x], name=name or "Rank")


# --- Reshape -----------------------------------------------------------------------------
def _reshape_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, target = inputs
    out = shape_from_tensor(target)
    value = constant_value(target)
    if value is not None:
        dims = [int(d) for d in value.reshape(-1)]
        if dims.count(-1) > 1:
            raise InvalidArgumentError(f"Only one input size may be -1, not both in {dims}")
        known = x.shape.num_elements()
        if known is not None:
            rest = int(np.prod([d for d in dims if d != -1])) if dims else 1
            if -1 in dims:
                if rest == 0 or known % rest:
                    raise InvalidArgumentError(
                        f"Cannot reshape a tensor with {known} elements to shape {dims}"
                    )
                dims = [known // rest if d == -1 else d for d in dims]
            elif rest != known:
                raise InvalidArgumentError(
                    f"Cannot reshape a tensor with {known} elements to shape {dims} "
                    f"({rest} elements)"
                )
            out = TensorShape(dims)
    return [(x.dtype, out)]


def _reshape_grad(op: Any, grad: Tensor) -> list:
    return [reshape(grad, shape(op.inputs[0])), None]


register_op("Reshape", _reshape_shape, grad=_reshape_grad)


def reshape(tensor: Any, shape: Any, name: str | None = None) -> Tensor:  # noqa: F811
    """Reshapes ``tensor``; one dimension of ``shape`` may be -1 (inferred)."""
    x = convert_to_tensor(tensor)
    target = _int_attr_tensor(shape, "shape")
    return make_tensor("Reshape", [x, target], name=name or "Reshape")


# --- ZerosLike / OnesLike / Fill -----------------------------------------------------------
register_op("ZerosLike", same_shape, not_differentiable=True)
register_op("OnesLike", same_shape, not_differentiable=True)


def zeros_like(tensor: Any, dtype: Any = None, name: str | None = None, optimize: bool = True) -> Tensor:
    """A tensor of zeros with the shape of ``tensor``."""
    x = convert_to_tensor(tensor)
    out = make_tensor("ZerosLike", [x], name=name or "zeros_like")
    if dtype is not None and dtypes.as_dtype(dtype) != x.dtype:
        out = cast(out, dtype)
    return out


def ones_like(tensor: Any, dtype: Any = None, name: str | None = None, optimize: bool = True) -> Tensor:
    """A tensor of ones with the shape of ``tensor``."""
    x = convert_to_tensor(tensor)
    out = make_tensor("OnesLike", [x], name=name or "ones_like")
    if dtype is not None and dtypes.as_dtype(dtype) != x.dtype:
        out = cast(out, dtype)
    return out


def _fill_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    dims, value = inputs
    if value.shape.rank not in (None, 0):
        raise InvalidArgumentError(f"value must be a scalar, got shape {value.shape}")
    return [(value.dtype, shape_from_tensor(dims))]


register_op("Fill", _fill_shape)  # gradient: array_grad


def fill(dims: Any, value: Any, name: str | None = None) -> Tensor:
    """A tensor of shape ``dims`` filled with the scalar ``value``."""
    d = _int_attr_tensor(dims, "dims")
    v = convert_to_tensor(value)
    return make_tensor("Fill", [d, v], name=name or "Fill")


def _filled(shape_arg: Any, dtype: Any, value: float, name: str) -> Tensor:
    dtype = dtypes.as_dtype(dtype)
    symbolic = isinstance(shape_arg, (list, tuple)) and any(
        isinstance(d, Tensor) for d in shape_arg)  # e.g. [tf.shape(x)[0], 2]: packed by fill
    if not isinstance(shape_arg, Tensor) and not symbolic:
        dims = as_shape(shape_arg)
        if dims.is_fully_defined():
            array = np.full(dims.as_list(), value, dtype=dtype.as_numpy_dtype) \
                if dtype != dtypes.string else np.full(dims.as_list(), b"", dtype=object)
            if array.size <= 1024:
                return constant(array, dtype=dtype, name=name)
        shape_arg = [int(d) for d in dims.as_list()]
    with name_scope(name) as scope:
        return fill(shape_arg, constant(value, dtype=dtype), name=scope)


def zeros(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:  # noqa: F811
    """A tensor of zeros."""
    return _filled(shape, dtype, 0, name or "zeros")


def ones(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:  # noqa: F811
    """A tensor of ones."""
    return _filled(shape, dtype, 1, name or "ones")


# --- Pack (stack) / ConcatV2 -----------------------------------------------------------------
def _pack_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    merged = inputs[0].shape
    for t in inputs[1:]:
        if t.dtype != inputs[0].dtype:
            raise TypeError(f"tf.stack inputs must share a dtype: {inputs[0].dtype.name} vs {t.dtype.name}")
        merged = merged.merge_with(t.shape)
    if merged.rank is None:
        return [(inputs[0].dtype, unknown_shape())]
    axis = attrs["axis"]
    dims = merged.as_list()
    rank = len(dims) + 1
    if not -rank <= axis < rank:
        raise InvalidArgumentError(f"axis {axis} out of range [{-rank}, {rank})")
    axis = axis % rank
    return [(inputs[0].dtype, TensorShape(dims[:axis] + [len(inputs)] + dims[axis:]))]


def _pack_grad(op: Any, grad: Tensor) -> list:
    return unstack(grad, num=len(op.inputs), axis=op.attrs["axis"])


register_op("Pack", _pack_shape, grad=_pack_grad)


def stack(values: Sequence[Any], axis: int = 0, name: str = "stack") -> Tensor:
    """Stacks rank-R tensors into one rank-(R+1) tensor along ``axis``."""
    if not values:
        raise ValueError("tf.stack needs at least one value")
    tensors = convert_same_dtype("Pack", list(values), [f"values_{i}" for i in range(len(values))])
    return make_tensor("Pack", tensors, {"axis": int(axis), "N": len(tensors)}, name=name)


def _first_tensor_dtype(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        for item in value:
            found = _first_tensor_dtype(item)
            if found is not None:
                return found
        return None
    return convert_to_tensor(value).dtype if is_tensor_like(value) else None


def _pack_nested(value: Any, dtype: Any) -> Tensor:
    if isinstance(value, (list, tuple)) and contains_tensor(value):
        return stack([_pack_nested(v, dtype) for v in value], name="packed")
    return convert_to_tensor(value, dtype=dtype)


def _autopack(value: Any, dtype: Any, name: str | None) -> Tensor:
    """``convert_to_tensor([t, -1])``: packs nested lists holding tensors (TF's autopacking)."""
    dtype = dtypes.as_dtype(dtype) if dtype is not None else _first_tensor_dtype(value)
    with name_scope(name, "packed"):
        return _pack_nested(value, dtype)


register_autopack_fn(_autopack)


def _unpack_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x = inputs[0]
    num, axis = attrs["num"], attrs["axis"]
    if x.shape.rank is None:
        return [(x.dtype, unknown_shape())] * num
    dims = x.shape.as_list()
    axis = axis % len(dims)
    if dims[axis] is not None and dims[axis] != num:
        raise InvalidArgumentError(f"Cannot unstack {num} values from dimension {axis} of size {dims[axis]}")
    return [(x.dtype, TensorShape(dims[:axis] + dims[axis + 1:]))] * num


def _unpack_grad(op: Any, *grads: Tensor) -> list:
    filled = [g if g is not None else zeros_like(t) for g, t in zip(grads, op.outputs)]
    return [stack(filled, axis=op.attrs["axis"])]


register_op("Unpack", _unpack_shape, grad=_unpack_grad)


def unstack(value: Any, num: int | None = None, axis: int = 0, name: str = "unstack") -> list[Tensor]:
    """Splits ``value`` along ``axis`` into a list of rank-(R-1) tensors."""
    x = convert_to_tensor(value)
    if num is None:
        if x.shape.rank is None or x.shape.as_list()[axis] is None:
            raise ValueError(f"Cannot infer num from shape {x.shape}; pass num=")
        num = x.shape.as_list()[axis]
    if x.shape.rank is not None and not -x.shape.rank <= axis < x.shape.rank:
        raise ValueError(f"axis = {axis} not in [{-x.shape.rank}, {x.shape.rank})")
    return list(make_op("Unpack", [x], {"num": int(num), "axis": int(axis)}, name=name).outputs)


def _concat_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    values, axis_t = inputs[:-1], inputs[-1]
    dtype = values[0].dtype
    for t in values:
        if t.dtype != dtype:
            raise TypeError(f"tf.concat inputs must share a dtype: {dtype.name} vs {t.dtype.name}")
    axis_value = constant_value(axis_t)
    ranks = {t.shape.rank for t in values if t.shape.rank is not None}
    if len(ranks) > 1:
        raise InvalidArgumentError(f"ConcatOp: inputs have different ranks {sorted(ranks)}")
    if axis_value is None or not ranks:
        return [(dtype, unknown_shape(ranks.pop() if ranks else None))]
    rank = ranks.pop()
    axis = int(axis_value)
    if not -rank <= axis < rank:
        raise InvalidArgumentError(f"ConcatOp : Expected concatenating dimensions in the range [{-rank}, {rank}), but got {axis}")
    axis %= rank
    out: list[int | None] = [None] * rank
    total: int | None = 0
    for t in values:
        if t.shape.rank is None:
            total = None
            continue
        dims = t.shape.as_list()
        for i, d in enumerate(dims):
            if i == axis:
                continue
            if out[i] is None:
                out[i] = d
            elif d is not None and d != out[i]:
                raise InvalidArgumentError(
                    f"ConcatOp : Dimension {i} in both shapes must be equal: shape {out} vs {dims}"
                )
        total = None if total is None or dims[axis] is None else total + dims[axis]
    out[axis] = total
    return [(dtype, TensorShape(out))]


register_op("ConcatV2", _concat_shape)  # gradient: array_grad


def concat(values: Sequence[Any], axis: Any, name: str = "concat") -> Tensor:
    """Concatenates tensors along ``axis``."""
    if not values:
        raise ValueError("tf.concat needs at least one value")
    tensors = convert_same_dtype("ConcatV2", list(values), [f"values_{i}" for i in range(len(values))])
    if len(tensors) == 1:
        return identity(tensors[0], name=name)
    axis_t = _int_attr_tensor(axis, "axis")
    return make_tensor("ConcatV2", tensors + [axis_t], {"N": len(tensors)}, name=name)


# --- Split ------------------------------------------------------------------------------
def _split_v_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, sizes_t, axis_t = inputs
    num = attrs["num_split"]
    sizes = constant_value(sizes_t)
    axis = constant_value(axis_t)
    if x.shape.rank is None or axis is None:
        return [(x.dtype, unknown_shape(x.shape.rank))] * num
    dims = x.shape.as_list()
    if not -len(dims) <= int(axis) < len(dims):
        raise InvalidArgumentError(f"split axis {int(axis)} out of range [{-len(dims)}, {len(dims)})")
    axis = int(axis) % len(dims)
    parts: list[int | None] = [None] * num
    if sizes is not None:
        parts = [int(v) for v in sizes.reshape(-1)]
        if len(parts) != num or parts.count(-1) > 1 or any(v < -1 for v in parts):
            raise InvalidArgumentError(f"size_splits {parts} must have {num} entries >= 0, at most "
                                       "one of them -1")
        known = sum(v for v in parts if v != -1)
        if dims[axis] is not None and (known > dims[axis] or (-1 not in parts and known != dims[axis])):
            raise InvalidArgumentError(
                f"Determined shape must either match input shape along split_dim exactly if fully "
                f"specified, or be less than the size of the input along split_dim if not fully "
                f"specified. Got: {known} vs {dims[axis]} (size_splits {parts})")
        parts = [(None if dims[axis] is None else dims[axis] - known) if v == -1 else v for v in parts]
    return [(x.dtype, TensorShape(dims[:axis] + [p] + dims[axis + 1:])) for p in parts]


def _split_v_grad(op: Any, *grads: Tensor) -> list:
    filled = [g if g is not None else zeros_like(t) for g, t in zip(grads, op.outputs)]
    return [concat(filled, op.inputs[2]), None, None]


register_op("SplitV", _split_v_shape, grad=_split_v_grad)


def split(value: Any, num_or_size_splits: Any, axis: Any = 0, num: int | None = None,
          name: str = "split") -> list[Tensor]:
    """Splits ``value`` along ``axis`` into equal parts or parts of the given sizes."""
    x = convert_to_tensor(value)
    axis_t = _int_attr_tensor(axis, "axis")
    if isinstance(num_or_size_splits, (int, np.integer)):
        count = int(num_or_size_splits)
        axis_value = constant_value(axis_t)
        dim = None
        if axis_value is not None and x.shape.rank is not None:
            dim = x.shape.as_list()[int(axis_value)]
        if dim is not None:
            if dim % count:
                raise InvalidArgumentError(
                    f"Number of ways to split should evenly divide the split dimension, but got "
                    f"split_dim {int(axis_value)} (size = {dim}) and num_split {count}"
                )
            sizes_t = constant([dim // count] * count, dtype=dtypes.int32)
        else:
            # GatherV2 and FloorDiv by name: gather_ops and math_ops build on this module.
            dim_t = make_tensor("GatherV2", [shape(x), axis_t, constant(0, dtype=axis_t.dtype)],
                                {"batch_dims": 0})
            part = make_tensor("FloorDiv", [dim_t, constant(count, dtype=dim_t.dtype)])
            sizes_t = stack([part] * count)
        return list(make_op("SplitV", [x, sizes_t, axis_t], {"num_split": count}, name=name).outputs)
    sizes_t = _int_attr_tensor(num_or_size_splits, "size_splits")
    if num is None:
        if sizes_t.shape.rank != 1 or sizes_t.shape.as_list()[0] is None:
            raise ValueError("Cannot infer num from size_splits; pass num=")
        num = sizes_t.shape.as_list()[0]
    return list(make_op("SplitV", [x, sizes_t, axis_t], {"num_split": int(num)}, name=name).outputs)


# --- ExpandDims / Squeeze ----------------------------------------------------------------
def _expand_dims_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, axis_t = inputs
    axis = constant_value(axis_t)
    if x.shape.rank is None or axis is None:
        return [(x.dtype, unknown_shape(None if x.shape.rank is None else x.shape.rank + 1))]
    dims = x.shape.as_list()
    axis = int(axis)
    if not -len(dims) - 1 <= axis <= len(dims):
        raise InvalidArgumentError(f"Tried to expand dim index {axis} for tensor with {len(dims)} dimensions.")
    if axis < 0:
        axis += len(dims) + 1
    return [(x.dtype, TensorShape(dims[:axis] + [1] + dims[axis:]))]


register_op("ExpandDims", _expand_dims_shape,
            grad=lambda op, grad: [reshape(grad, shape(op.inputs[0])), None])


def expand_dims(input: Any, axis: Any = None, name: str | None = None, dim: Any = None) -> Tensor:  # noqa: A002
    """Inserts a dimension of size 1 at ``axis``."""
    if axis is None:
        axis = dim
    if axis is None:
        raise ValueError("tf.expand_dims requires an axis")
    x = convert_to_tensor(input)
    return make_tensor("ExpandDims", [x, _int_attr_tensor(axis, "dim")], name=name or "ExpandDims")


def _squeeze_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x = inputs[0]
    axes = attrs["squeeze_dims"]
    if x.shape.rank is None:
        return [(x.dtype, unknown_shape())]
    dims = x.shape.as_list()
    norm = {a % len(dims) for a in axes} if dims else set()
    out = []
    for i, d in enumerate(dims):
        if norm and i in norm:
            if d is not None and d != 1:
                raise InvalidArgumentError(f"Can not squeeze dim[{i}], expected a dimension of 1, got {d}")
            continue
        if not norm and d == 1:
            continue
        if not norm and d is None:
            return [(x.dtype, unknown_shape())]
        out.append(d)
    return [(x.dtype, TensorShape(out))]


register_op("Squeeze", _squeeze_shape, grad=lambda op, grad: [reshape(grad, shape(op.inputs[0]))])


def squeeze(input: Any, axis: Any = None, name: str | None = None, squeeze_dims: Any = None) -> Tensor:  # noqa: A002
    """Removes dimensions of size 1 (all of them, or those listed in ``axis``)."""
    if axis is None:
        axis = squeeze_dims
    axes = [] if axis is None else ([int(axis)] if np.ndim(axis) == 0 else [int(a) for a in axis])
    x = convert_to_tensor(input)
    return make_tensor("Squeeze", [x], {"squeeze_dims": axes}, name=name or "Squeeze")


# --- Transpose -----------------------------------------------------------------------------
def _transpose_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, perm_t = inputs
    perm = constant_value(perm_t)
    if x.shape.rank is None or perm is None:
        rank_ = x.shape.rank if x.shape.rank is not None else (
            perm_t.shape.as_list()[0] if perm_t.shape.rank == 1 else None)
        return [(x.dtype, unknown_shape(rank_))]
    dims = x.shape.as_list()
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(len(dims))):
        raise InvalidArgumentError(f"{perm} is not a valid permutation of {len(dims)} dimensions")
    return [(x.dtype, TensorShape([dims[p] for p in perm]))]


def _transpose_grad(op: Any, grad: Tensor) -> list:
    return [transpose(grad, range_ops.invert_permutation(op.inputs[1])), None]


register_op("Transpose", _transpose_shape, grad=_transpose_grad)


def transpose(a: Any, perm: Any = None, name: str = "transpose", conjugate: bool = False) -> Tensor:
    """Permutes dimensions (reverses them when ``perm`` is None)."""
    x = convert_to_tensor(a)
    if perm is None:
        if x.shape.rank is None:
            r = rank(x)
            last = make_tensor("Sub", [r, constant(1, dtype=r.dtype)])  # math_ops is above
            perm_t = make_tensor("Sub", [last, range_ops.range(r)])
        else:
            perm_t = constant(list(range(x.shape.rank))[::-1], dtype=dtypes.int32)
    else:
        perm_t = _int_attr_tensor(perm, "perm")
    return make_tensor("Transpose", [x, perm_t], name=name)
