"""``tf.strided_slice`` and ``Tensor.__getitem__``: TensorFlow's five-mask slicing.

A slice is described sparsely, as TensorFlow does: ``begin``/``end``/``strides`` vectors
plus bit masks (``begin_mask``, ``end_mask``, ``ellipsis_mask``, ``new_axis_mask``,
``shrink_axis_mask``). :func:`slice_spec` turns that description into Python index items
(ints, slices, ``Ellipsis``, ``None``), whose semantics (negative indices, clamping,
negative strides) are exactly TensorFlow's. Shapes are inferred analytically, without
touching data, so unknown dimensions stay unknown instead of failing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, unknown_shape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import constant_value, make_tensor, shape_from_tensor
from flowmesh.ops.array_ops import shape

MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def slice_spec(attrs: dict[str, Any], begin: Sequence[int], end: Sequence[int],
               strides: Sequence[int]) -> list[Any]:
    """TensorFlow's sparse strided-slice spec as Python index items.

    Raises:
        InvalidArgumentError: zero strides, several ellipses or vectors of unequal length.
    """
    if not len(begin) == len(end) == len(strides):
        raise InvalidArgumentError(
            f"Expected begin, end, and strides to be 1D equal size tensors, but got shapes "
            f"[{len(begin)}], [{len(end)}], and [{len(strides)}] instead."
        )
    items: list[Any] = []
    for i in range(len(begin)):
        bit = 1 << i
        if attrs["ellipsis_mask"] & bit:
            if any(it is Ellipsis for it in items):
                raise InvalidArgumentError("Multiple ellipses in slice spec not allowed")
            items.append(Ellipsis)
        elif attrs["new_axis_mask"] & bit:
            items.append(None)
        elif attrs["shrink_axis_mask"] & bit:
            items.append(int(begin[i]))
        else:
            if int(strides[i]) == 0:
                raise InvalidArgumentError(f"strides[{i}] must be non-zero")
            items.append(slice(
                None if attrs["begin_mask"] & bit else int(begin[i]),
                None if attrs["end_mask"] & bit else int(end[i]),
                int(strides[i]),
            ))
    return items


def expand_items(items: Sequence[Any], rank: int) -> list[tuple[Any, int | None]]:
    """Pairs each index item with the input dimension it consumes (None for new axes),
    expanding ``...`` and appending full slices for trailing dimensions.

    Raises:
        InvalidArgumentError: the spec indexes more dimensions than the input has.
    """
    consumed = sum(1 for it in items if it is not None and it is not Ellipsis)
    if consumed > rank:
        raise InvalidArgumentError(
            f"Index out of range using input dim {rank}; input has only {rank} dims"
        )
    out: list[tuple[Any, int | None]] = []
    dim = 0
    for it in items:
        if it is Ellipsis:
            for _ in range(rank - consumed):
                out.append((slice(None), dim))
                dim += 1
        elif it is None:
            out.append((None, None))
        else:
            out.append((it, dim))
            dim += 1
    while dim < rank:
        out.append((slice(None), dim))
        dim += 1
    return out


def _output_dims(items: Sequence[Any], dims: Sequence[int | None]) -> list[int | None]:
    out: list[int | None] = []
    for item, dim in expand_items(items, len(dims)):
        if item is None:
            out.append(1)
            continue
        size = dims[dim]
        if isinstance(item, int):
            if size is not None and not -size <= item < size:
                raise InvalidArgumentError(
                    f"slice index {item} of dimension {dim} out of bounds (size {size})."
                )
            continue
        out.append(None if size is None else len(range(*item.indices(size))))
    return out


def _strided_slice_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, begin_t, end_t, strides_t = inputs
    for name, t in (("begin", begin_t), ("end", end_t), ("strides", strides_t)):
        if t.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"StridedSlice {name} must be int32 or int64, got {t.dtype.name}")
    values = [constant_value(t) for t in (begin_t, end_t, strides_t)]
    if any(v is None for v in values) or x.shape.rank is None:
        return [(x.dtype, unknown_shape())]
    items = slice_spec(attrs, *[list(v.reshape(-1)) for v in values])
    return [(x.dtype, TensorShape(_output_dims(items, x.shape.as_list())))]


def _strided_slice_grad(op: Any, grad: Tensor) -> list:
    x, begin_t, end_t, strides_t = op.inputs
    attrs = {k: op.attrs[k] for k in MASKS}
    index_dtype = begin_t.dtype
    dx = make_tensor("StridedSliceGrad", [shape(x, out_type=index_dtype), begin_t, end_t, strides_t,
                                          grad], attrs)
    return [dx, None, None, None]


register_op("StridedSlice", _strided_slice_shape, grad=_strided_slice_grad)


def _strided_slice_grad_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(inputs[4].dtype, shape_from_tensor(inputs[0]))]


def _strided_slice_grad_grad(op: Any, grad: Tensor) -> list:
    _, begin_t, end_t, strides_t, _ = op.inputs
    attrs = {k: op.attrs[k] for k in MASKS}
    return [None, None, None, None,
            make_tensor("StridedSlice", [grad, begin_t, end_t, strides_t], attrs)]


register_op("StridedSliceGrad", _strided_slice_grad_shape, grad=_strided_slice_grad_grad)


def _index_tensor(values: Any, name: str, dtype: Any = dtypes.int32) -> Tensor:
    if isinstance(values, Tensor):
        return values
    return convert_to_tensor(values, dtype=dtype, name=name)


def strided_slice(input_: Any, begin: Any, end: Any, strides: Any = None, begin_mask: int = 0,
                  end_mask: int = 0, ellipsis_mask: int = 0, new_axis_mask: int = 0,
                  shrink_axis_mask: int = 0, var: Any = None, name: str | None = None) -> Tensor:
    """``tf.strided_slice``: ``input_[begin:end:strides]`` per dimension, with TF's masks.

    Args:
        input_: the tensor to slice.
        begin, end, strides: 1-D int32/int64 vectors of equal length (strides default 1).
        begin_mask, end_mask: bit i set ignores ``begin[i]`` / ``end[i]`` (full range).
        ellipsis_mask: bit i set makes entry i an ellipsis (``...``).
        new_axis_mask: bit i set inserts a new dimension of size 1 (``tf.newaxis``).
        shrink_axis_mask: bit i set takes the single index ``begin[i]`` and drops the dim.
        name: op name.

    Returns:
        The sliced tensor.

    Raises:
        InvalidArgumentError: zero strides, an out-of-range shrink index, more indices than
            dimensions (at graph construction when known, else at run time).
    """
    x = convert_to_tensor(input_)
    begin_t = _index_tensor(begin, "begin")
    end_t = _index_tensor(end, "end", dtype=begin_t.dtype)
    if strides is None:
        strides = [1] * (begin_t.shape.as_list()[0] if begin_t.shape.rank == 1 else 1)
    strides_t = _index_tensor(strides, "strides", dtype=begin_t.dtype)
    attrs = dict(zip(MASKS, (begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)))
    return make_tensor("StridedSlice", [x, begin_t, end_t, strides_t], attrs,
                       name=name or "strided_slice")


_BAD_INDEX = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
              "int32/int64 tensors are valid indices, got {!r}")


def _is_tensor_like(value: Any) -> bool:
    return isinstance(value, Tensor) or hasattr(value, "_as_graph_element")


def _scalar_index(item: Any) -> Any:
    if isinstance(item, (bool, np.bool_)):
        raise TypeError(_BAD_INDEX.format(item))
    if isinstance(item, (int, np.integer)):
        return int(item)
    if _is_tensor_like(item):
        t = convert_to_tensor(item)
        if t.dtype not in (dtypes.int32, dtypes.int64) or t.shape.rank not in (0, None):
            raise TypeError(_BAD_INDEX.format(item))
        return t
    raise TypeError(_BAD_INDEX.format(item))


def getitem(tensor: Any, key: Any) -> Tensor:
    """``tensor[key]`` with ints, slices (any step), ``...``, ``tf.newaxis`` and scalar
    integer tensors, as TensorFlow's ``Tensor.__getitem__``.

    Raises:
        TypeError: for other index types (lists, floats, bools, non-scalar tensors).
    """
    if not isinstance(key, tuple):
        key = (key,)
    begin, end, strides = [], [], []
    masks = dict.fromkeys(MASKS, 0)
    for i, item in enumerate(key):
        bit = 1 << i
        if item is Ellipsis or item is None:
            masks["ellipsis_mask" if item is Ellipsis else "new_axis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif isinstance(item, slice):
            start = 0 if item.start is None else _scalar_index(item.start)
            stop = 0 if item.stop is None else _scalar_index(item.stop)
            step = 1 if item.step is None else _scalar_index(item.step)
            masks["begin_mask"] |= bit if item.start is None else 0
            masks["end_mask"] |= bit if item.stop is None else 0
            begin.append(start), end.append(stop), strides.append(step)
        else:
            index = _scalar_index(item)
            masks["shrink_axis_mask"] |= bit
            begin.append(index), end.append(index + 1 if isinstance(index, int) else 0)
            strides.append(1)
    parts = [begin, end, strides]
    if any(isinstance(v, Tensor) for part in parts for v in part):
        index_dtype = dtypes.int64 if any(isinstance(v, Tensor) and v.dtype == dtypes.int64
                                          for part in parts for v in part) else dtypes.int32
        from flowmesh.ops.array_ops import stack
        from flowmesh.ops.cast_ops import cast

        def pack(values: list[Any], label: str) -> Tensor:
            items = [cast(v, index_dtype) if isinstance(v, Tensor) else
                     convert_to_tensor(v, dtype=index_dtype) for v in values]
            return stack(items, name=label)

        parts = [pack(p, label) for p, label in zip(parts, ("stack", "stack_1", "stack_2"))]
    return strided_slice(tensor, *parts, name="strided_slice", **masks)
