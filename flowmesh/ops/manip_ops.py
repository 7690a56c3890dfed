"""Array manipulation: ``slice``, ``pad`` (constant / reflect / symmetric), ``tile``,
``reverse``, ``reverse_sequence``, ``roll``, ``one_hot``, ``sequence_mask``, ``meshgrid``,
``unique`` and shape helpers. N-d gathers and scatters are in ``nd_index_ops`` (re-exported
here). Each op is one block: registration (shape rule + gradient) then its wrapper;
kernels live under the same names in ``flowmesh/kernels/manip_ops.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor, infer_dtype
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, as_shape, broadcast_shapes, unknown_shape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, gather_ops, math_ops, range_ops
from flowmesh.ops._builders import (
    INDEX_TYPES,
    check_dtype,
    constant_value,
    make_op,
    make_tensor,
    shape_from_tensor,
)
from flowmesh.ops.nd_index_ops import scatter_nd
from flowmesh.ops.reduction_ops import cumsum, reduce_max, reduce_sum


def _index_input(value: Any, name: str, dtype: Any = dtypes.int32) -> Tensor:
    t = value if isinstance(value, Tensor) else convert_to_tensor(value, dtype=dtype, name=name)
    check_dtype(name, t, INDEX_TYPES, name)
    return t


# --- Slice ---------------------------------------------------------------------------------
def _slice_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, begin_t, size_t = inputs
    begin, size = constant_value(begin_t), constant_value(size_t)
    rank = x.shape.rank
    if rank is None:
        n = begin_t.shape.as_list()[0] if begin_t.shape.rank == 1 else None
        return [(x.dtype, unknown_shape(n))]
    for name, v in (("begin", begin), ("size", size)):
        if v is not None and v.size != rank:
            raise InvalidArgumentError(f"Expected {name} to be a vector of length {rank} (the "
                                       f"input rank), got {list(v.reshape(-1))}")
    if size is None:
        return [(x.dtype, unknown_shape(rank))]
    out = []
    for i, (s, d) in enumerate(zip(size.reshape(-1), x.shape.as_list())):
        b = None if begin is None else int(begin.reshape(-1)[i])
        if b is not None and d is not None and not (0 <= b <= d and (s == -1 or b + s <= d)):
            raise InvalidArgumentError(f"Expected begin[{i}]={b} and size[{i}]={int(s)} to satisfy "
                                       f"0 <= begin <= begin + size <= {d} (dimension {i})")
        out.append(int(s) if s != -1 else (None if b is None or d is None else d - b))
    return [(x.dtype, TensorShape(out))]


def _slice_grad(op: Any, grad: Tensor) -> list:
    x, begin, _ = op.inputs
    rank = array_ops.rank(x)
    column = array_ops.stack([rank, 1])
    before = array_ops.reshape(begin, column)
    sizes = array_ops.shape(op.outputs[0], out_type=begin.dtype)
    after = array_ops.reshape(array_ops.shape(x, out_type=begin.dtype) - sizes - begin, column)
    return [pad(grad, array_ops.concat([before, after], 1)), None, None]


register_op("Slice", _slice_shape, grad=_slice_grad)


def slice(input_: Any, begin: Any, size: Any, name: str | None = None) -> Tensor:  # noqa: A001
    """``input_[begin[i] : begin[i] + size[i]]`` in every dimension (``tf.slice``).

    Args:
        input_: the tensor.
        begin: start offsets, one per dimension.
        size: lengths, one per dimension; -1 takes everything from ``begin``.
        name: op name.

    Raises:
        InvalidArgumentError: the slice leaves the input (at graph construction when the
            shapes are known, else at run time).
    """
    x = convert_to_tensor(input_)
    b = _index_input(begin, "begin")
    s = _index_input(size, "size", b.dtype)
    return make_tensor("Slice", [x, b, s], name=name or "Slice")


# --- Pad / MirrorPad -----------------------------------------------------------------------
def _pad_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, paddings_t = inputs[0], inputs[1]
    if len(inputs) == 3 and inputs[2].dtype != x.dtype:
        raise TypeError(f"pad constant_values dtype {inputs[2].dtype.name} != input dtype {x.dtype.name}")
    paddings = constant_value(paddings_t)
    rank = x.shape.rank
    if paddings_t.shape.rank not in (None, 2) or (paddings_t.shape.rank == 2 and paddings_t.shape.as_list()[1]
                                                  not in (None, 2)):
        raise InvalidArgumentError(f"paddings must be a matrix with 2 columns, got shape {paddings_t.shape}")
    if paddings is None:
        n = paddings_t.shape.as_list()[0] if paddings_t.shape.rank == 2 else rank
        return [(x.dtype, unknown_shape(rank if rank is not None else n))]
    if rank is not None and paddings.shape[0] != rank:
        raise InvalidArgumentError(f"The first dimension of paddings must be the rank of inputs "
                                   f"({rank}), got paddings of shape {list(paddings.shape)}")
    if (paddings < 0).any():
        raise InvalidArgumentError(f"Paddings must be non-negative, got {paddings.tolist()}")
    if rank is None:
        return [(x.dtype, unknown_shape(paddings.shape[0]))]
    mode = attrs.get("mode")
    out = []
    for i, (d, (lo, hi)) in enumerate(zip(x.shape.as_list(), paddings.tolist())):
        limit = None if d is None else (d - 1 if mode == "REFLECT" else d)
        if mode and limit is not None and (lo > limit or hi > limit):
            raise InvalidArgumentError(f"paddings must be no greater than the dimension size "
                                       f"{'minus 1 ' if mode == 'REFLECT' else ''}for {mode} mode: "
                                       f"{lo}, {hi} greater than {limit} (dimension {i})")
        out.append(None if d is None else d + lo + hi)
    return [(x.dtype, TensorShape(out))]


def _pad_grad(op: Any, grad: Tensor) -> list:
    x, paddings = op.inputs[0], op.inputs[1]
    begin = array_ops.reshape(slice(paddings, [0, 0], array_ops.stack([array_ops.rank(x), 1])), [-1])
    dx = slice(grad, begin, array_ops.shape(x, out_type=paddings.dtype))
    return [dx, None] + ([None] if len(op.inputs) == 3 else [])


register_op("Pad", _pad_shape, grad=_pad_grad)
register_op("PadV2", _pad_shape, grad=_pad_grad)
register_op("MirrorPad", _pad_shape, grad=lambda op, g: [
    make_tensor("MirrorPadGrad", [g, op.inputs[1]], {"mode": op.attrs["mode"]}), None])


def _mirror_pad_grad_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    g, paddings_t = inputs
    paddings = constant_value(paddings_t)
    if paddings is None or g.shape.rank is None:
        return [(g.dtype, unknown_shape(g.shape.rank))]
    dims = [None if d is None else d - lo - hi for d, (lo, hi) in zip(g.shape.as_list(), paddings.tolist())]
    return [(g.dtype, TensorShape(dims))]


register_op("MirrorPadGrad", _mirror_pad_grad_shape, grad=lambda op, g: [
    make_tensor("MirrorPad", [g, op.inputs[1]], {"mode": op.attrs["mode"]}), None])


def pad(tensor: Any, paddings: Any, mode: str = "CONSTANT", name: str | None = None,
        constant_values: Any = 0) -> Tensor:
    """Pads ``tensor`` by ``paddings[i] = [before, after]`` in dimension ``i`` (``tf.pad``).

    Args:
        tensor: the tensor to pad.
        paddings: int ``[rank, 2]`` matrix.
        mode: ``"CONSTANT"``, ``"REFLECT"`` (edges not repeated) or ``"SYMMETRIC"`` (edges
            repeated), case-insensitive.
        name: op name.
        constant_values: the fill value for ``CONSTANT`` mode.

    Raises:
        ValueError: unknown mode.
        InvalidArgumentError: negative paddings, a wrong paddings shape, or reflect /
            symmetric paddings larger than the dimension allows.
    """
    x = convert_to_tensor(tensor)
    p = _index_input(paddings, "paddings")
    upper = str(mode).upper()
    if upper == "CONSTANT":
        value = convert_to_tensor(constant_values, dtype=x.dtype, name="constant_values")
        if constant_value(value) is not None and not np.any(constant_value(value)):
            return make_tensor("Pad", [x, p], name=name or "Pad")
        return make_tensor("PadV2", [x, p, value], name=name or "PadV2")
    if upper not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(f"Unknown padding mode: {mode!r}; use CONSTANT, REFLECT or SYMMETRIC")
    return make_tensor("MirrorPad", [x, p], {"mode": upper}, name=name or "MirrorPad")


# --- Tile ----------------------------------------------------------------------------------
def _tile_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, multiples_t = inputs
    multiples = constant_value(multiples_t)
    rank = x.shape.rank
    if rank is not None and multiples_t.shape.rank == 1 and multiples_t.shape.as_list()[0] not in (None, rank):
        raise InvalidArgumentError(f"Expected multiples argument to be a vector of length {rank} "
                                   f"but got length {multiples_t.shape.as_list()[0]}")
    if multiples is None or rank is None:
        return [(x.dtype, unknown_shape(rank))]
    if (multiples < 0).any():
        raise InvalidArgumentError(f"Expected multiples to be non-negative, got {multiples.tolist()}")
    dims = [None if d is None else d * int(m) for d, m in zip(x.shape.as_list(), multiples.reshape(-1))]
    return [(x.dtype, TensorShape(dims))]


def _tile_grad(op: Any, grad: Tensor) -> list:
    x, multiples = op.inputs
    input_shape = array_ops.shape(x, out_type=multiples.dtype)
    split_shape = array_ops.reshape(array_ops.transpose(array_ops.stack([multiples, input_shape])), [-1])
    axes = range_ops.range(0, array_ops.size(split_shape), 2)
    summed = reduce_sum(array_ops.reshape(grad, split_shape), axes)
    if x.shape.is_fully_defined():
        summed = array_ops.reshape(summed, x.shape.as_list())
    return [summed, None]


register_op("Tile", _tile_shape, grad=_tile_grad)


def tile(input: Any, multiples: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Repeats ``input`` ``multiples[i]`` times along dimension ``i`` (``tf.tile``)."""
    x = convert_to_tensor(input)
    m = _index_input(multiples, "multiples")
    return make_tensor("Tile", [x, m], name=name or "Tile")


# --- ReverseV2 / ReverseSequence / Roll ------------------------------------------------------
def _reverse_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, axis_t = inputs
    axes = constant_value(axis_t)
    rank = x.shape.rank
    if axes is not None and rank is not None:
        normalized = []
        for a in axes.reshape(-1).tolist():
            if not -rank <= a < rank:
                raise InvalidArgumentError(f"'axis'[{a}] = {a} is out of valid range [{-rank}, {rank})")
            normalized.append(a % rank)
        if len(set(normalized)) != len(normalized):
            raise InvalidArgumentError(f"axis {axes.tolist()} has duplicates")
    return [(x.dtype, x.shape)]


register_op("ReverseV2", _reverse_shape, grad=lambda op, g: [reverse(g, op.inputs[1]), None])


def reverse(tensor: Any, axis: Any, name: str | None = None) -> Tensor:
    """Reverses ``tensor`` along the dimensions listed in ``axis`` (``tf.reverse``)."""
    x = convert_to_tensor(tensor)
    a = _index_input([axis] if np.ndim(axis) == 0 and not isinstance(axis, Tensor) else axis, "axis")
    return make_tensor("ReverseV2", [x, a], name=name or "ReverseV2")


reverse_v2 = reverse


def _reverse_sequence_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, lengths = inputs
    rank = x.shape.rank
    if lengths.shape.rank not in (None, 1):
        raise InvalidArgumentError(f"seq_lengths must be a vector, got shape {lengths.shape}")
    if rank is not None:
        seq, batch = attrs["seq_dim"], attrs["batch_dim"]
        if not (0 <= seq < rank and 0 <= batch < rank) or seq == batch:
            raise InvalidArgumentError(f"seq_axis {seq} and batch_axis {batch} must be different "
                                       f"dimensions in [0, {rank})")
        b, n = x.shape.as_list()[batch], lengths.shape.as_list()[0] if lengths.shape.rank else None
        if b is not None and n is not None and b != n:
            raise InvalidArgumentError(f"len(seq_lengths) ({n}) != input.dims({batch}) ({b})")
    return [(x.dtype, x.shape)]


register_op("ReverseSequence", _reverse_sequence_shape, grad=lambda op, g: [
    reverse_sequence(g, op.inputs[1], op.attrs["seq_dim"], op.attrs["batch_dim"]), None])


def reverse_sequence(input: Any, seq_lengths: Any, seq_axis: int | None = None,  # noqa: A002
                     batch_axis: int | None = None, name: str | None = None,
                     seq_dim: int | None = None, batch_dim: int | None = None) -> Tensor:
    """Reverses the first ``seq_lengths[b]`` entries along ``seq_axis`` of each batch row ``b``."""
    x = convert_to_tensor(input)
    lengths = _index_input(seq_lengths, "seq_lengths", dtypes.int64)
    seq = seq_axis if seq_axis is not None else seq_dim
    batch = batch_axis if batch_axis is not None else (batch_dim if batch_dim is not None else 0)
    if seq is None:
        raise ValueError("reverse_sequence needs seq_axis")
    rank = x.shape.rank
    seq, batch = (int(seq) % rank, int(batch) % rank) if rank else (int(seq), int(batch))
    return make_tensor("ReverseSequence", [x, lengths], {"seq_dim": seq, "batch_dim": batch},
                       name=name or "ReverseSequence")


register_op("Roll", lambda inputs, attrs: [(inputs[0].dtype, inputs[0].shape)],
            grad=lambda op, g: [roll(g, math_ops.negative(op.inputs[1]), op.inputs[2]), None, None])


def roll(input: Any, shift: Any, axis: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Rotates elements by ``shift`` positions along ``axis`` (both scalars or vectors)."""
    x = convert_to_tensor(input)
    s = _index_input(shift, "shift")
    a = _index_input(axis, "axis")
    if s.shape.rank is not None and a.shape.rank is not None and s.shape != a.shape:
        raise InvalidArgumentError(f"shift and axis must have the same size, got {s.shape} and {a.shape}")
    return make_tensor("Roll", [x, s, a], name=name or "Roll")


# --- OneHot --------------------------------------------------------------------------------
def _one_hot_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    indices, depth_t, on, off = inputs
    if on.dtype != off.dtype:
        raise TypeError(f"one_hot on_value dtype {on.dtype.name} != off_value dtype {off.dtype.name}")
    depth = constant_value(depth_t)
    if depth is not None and int(depth) < 0:
        raise InvalidArgumentError(f"depth must be non-negative, got {int(depth)}")
    if indices.shape.rank is None:
        return [(on.dtype, unknown_shape())]
    dims = indices.shape.as_list()
    axis = attrs["axis"]
    if not -1 <= axis <= len(dims):
        raise InvalidArgumentError(f"Expected axis to be -1 or between [0, {len(dims)}], got {axis}")
    axis = len(dims) if axis == -1 else axis
    return [(on.dtype, TensorShape(dims[:axis] + [None if depth is None else int(depth)] + dims[axis:]))]


register_op("OneHot", _one_hot_shape, not_differentiable=True)


def _one_hot_dtype(on_value: Any, off_value: Any, dtype: Any) -> dtypes.DType:
    inferred = [v.dtype if isinstance(v, Tensor) else infer_dtype(v)
                for v in (on_value, off_value) if v is not None]
    if len(inferred) == 2 and inferred[0] != inferred[1]:
        raise TypeError(f"dtype of on_value ({inferred[0].name}) is different from dtype of "
                        f"off_value ({inferred[1].name})")
    if dtype is not None:
        target = dtypes.as_dtype(dtype)
        if inferred and any(isinstance(v, Tensor) and v.dtype != target for v in (on_value, off_value)):
            raise TypeError(f"dtype {target.name} of one_hot does not match on/off values "
                            f"({inferred[0].name})")
        return target
    return inferred[0] if inferred else dtypes.float32


def one_hot(indices: Any, depth: Any, on_value: Any = None, off_value: Any = None, axis: Any = None,
            dtype: Any = None, name: str | None = None) -> Tensor:
    """One-hot vectors: ``on_value`` at each index, ``off_value`` elsewhere (``tf.one_hot``).

    Indices outside ``[0, depth)`` give an all-``off_value`` vector, as in TensorFlow.

    Args:
        indices: uint8/int32/int64 indices.
        depth: the number of classes.
        on_value, off_value: scalars (default 1 and 0).
        axis: where the new dimension goes (default -1: last).
        dtype: output dtype (default: that of on/off_value, else float32).
        name: op name.

    Raises:
        TypeError: on/off values of different dtypes or not matching ``dtype``.
    """
    with name_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        idx = convert_to_tensor(indices, name="indices")
        check_dtype("OneHot", idx, (dtypes.uint8, dtypes.int32, dtypes.int64), "indices")
        target = _one_hot_dtype(on_value, off_value, dtype)
        on = convert_to_tensor(1 if on_value is None else on_value, dtype=target, name="on_value")
        off = convert_to_tensor(0 if off_value is None else off_value, dtype=target, name="off_value")
        depth_t = _index_input(depth, "depth")
        return make_tensor("OneHot", [idx, cast_ops.cast(depth_t, dtypes.int32), on, off],
                           {"axis": -1 if axis is None else int(axis)}, name=scope)


# --- sequence_mask / meshgrid --------------------------------------------------------------
def sequence_mask(lengths: Any, maxlen: Any = None, dtype: Any = dtypes.bool, name: str | None = None) -> Tensor:
    """``mask[..., j] = j < lengths[...]`` with ``maxlen`` columns (default ``max(lengths)``)."""

    with name_scope(name, "SequenceMask", [lengths, maxlen]) as scope:
        lengths_t = convert_to_tensor(lengths, name="lengths")
        check_dtype("SequenceMask", lengths_t, INDEX_TYPES, "lengths")
        if maxlen is None:
            limit = reduce_max(lengths_t)
            limit = math_ops.maximum(convert_to_tensor(0, dtype=lengths_t.dtype), limit)
        else:
            limit = convert_to_tensor(maxlen, name="maxlen")
            if limit.shape.rank not in (None, 0):
                raise ValueError(f"maxlen must be scalar for sequence_mask, got shape {limit.shape}")
            limit = cast_ops.cast(limit, lengths_t.dtype)
        row = range_ops.range(convert_to_tensor(0, dtype=lengths_t.dtype), limit, 1)
        mask = math_ops.less(row, array_ops.expand_dims(lengths_t, -1))
        target = dtypes.as_dtype(dtype)
        if target == dtypes.bool:
            return array_ops.identity(mask, name=scope)
        return cast_ops.cast(mask, target, name=scope)


def meshgrid(*args: Any, **kwargs: Any) -> list[Tensor]:
    """N-D coordinate arrays from 1-D vectors (``tf.meshgrid``, ``indexing='xy'|'ij'``)."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError(f"meshgrid got unexpected keyword arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"indexing parameter must be either 'xy' or 'ij', got {indexing!r}")
    with name_scope(name, "meshgrid", list(args)):
        vectors = [array_ops.reshape(convert_to_tensor(a), [-1]) for a in args]
        n = len(vectors)
        shapes = [array_ops.size(v) for v in vectors]
        out = []
        for i, v in enumerate(vectors):
            dims = [1] * n
            dims[i] = -1
            out.append(array_ops.reshape(v, dims))
        if indexing == "xy" and n > 1:
            out[0] = array_ops.reshape(vectors[0], [1, -1] + [1] * (n - 2))
            out[1] = array_ops.reshape(vectors[1], [-1, 1] + [1] * (n - 2))
            shapes[0], shapes[1] = shapes[1], shapes[0]
        full = array_ops.stack(shapes)
        from flowmesh.ops.reduction_ops import broadcast_to

        return [broadcast_to(o, full) for o in out]


# --- repeat --------------------------------------------------------------------------------
def repeat(input: Any, repeats: Any, axis: Any = None, name: str | None = None) -> Tensor:  # noqa: A002
    """Repeats each element (``axis=None``: of the flattened input) or slice along ``axis``
    ``repeats`` times (a scalar or one count per entry), like ``np.repeat``.

    Built from ``cumsum``/``scatter_nd``/``gather``, so it is differentiable in ``input``.

    Raises:
        InvalidArgumentError: ``repeats`` of the wrong length (at run time) or negative.
    """

    with name_scope(name, "Repeat", [input, repeats]) as scope:
        x = convert_to_tensor(input, name="input")
        # Through a reshape the gradient is dense, as TensorFlow's (gather's would be sparse).
        x, axis = (array_ops.reshape(x, [-1]), 0) if axis is None else (
            array_ops.reshape(x, array_ops.shape(x)), int(axis))
        counts = _index_input(repeats, "repeats")
        size = array_ops.shape(x, out_type=counts.dtype)[axis]
        counts = array_ops.reshape(counts, [-1])
        if counts.shape.as_list() == [1]:  # one count for every entry
            counts = array_ops.fill(array_ops.expand_dims(size, 0), counts[0])
        total = reduce_sum(counts)
        starts = cumsum(counts)[:-1]
        marks = scatter_nd(array_ops.expand_dims(starts, 1), array_ops.ones_like(starts),
                           array_ops.expand_dims(total + 1, 0))
        positions = cumsum(marks[:-1])
        return gather_ops.gather(x, positions, axis=axis, name=scope)


# --- Unique ----------------------------------------------------------------------------------
def _unique_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x = inputs[0]
    if x.shape.rank not in (None, 1):
        raise InvalidArgumentError(f"unique expects a 1D vector, got shape {x.shape}")
    specs = [(x.dtype, TensorShape([None])), (attrs["out_idx"], x.shape if x.shape.rank else unknown_shape(1))]
    if attrs.get("with_counts"):
        specs.append((attrs["out_idx"], TensorShape([None])))
    return specs


register_op("Unique", _unique_shape, not_differentiable=True)
register_op("UniqueWithCounts", _unique_shape, not_differentiable=True)


def unique(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> tuple[Tensor, Tensor]:
    """``(y, idx)``: the distinct values of the vector ``x`` in order of first occurrence,
    and for each element of ``x`` the position of its value in ``y`` (``x == gather(y, idx)``).

    Raises:
        InvalidArgumentError: ``x`` is not a vector.
    """
    t = convert_to_tensor(x, name="x")
    op = make_op("Unique", [t], {"out_idx": dtypes.as_dtype(out_idx)}, name=name or "Unique")
    return op.outputs[0], op.outputs[1]


def unique_with_counts(x: Any, out_idx: Any = dtypes.int32,
                       name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Like :func:`unique`, plus ``count[j]``, how often ``y[j]`` occurs in ``x``."""
    t = convert_to_tensor(x, name="x")
    op = make_op("UniqueWithCounts", [t], {"out_idx": dtypes.as_dtype(out_idx), "with_counts": True},
                 name=name or "UniqueWithCounts")
    return op.outputs[0], op.outputs[1], op.outputs[2]


# --- shape helpers ---------------------------------------------------------------------------
def shape_n(input: Sequence[Any], out_type: Any = dtypes.int32, name: str | None = None) -> list[Tensor]:  # noqa: A002
    """The shapes of several tensors."""
    with name_scope(name, "ShapeN", list(input)):
        return [array_ops.shape(t, out_type=out_type) for t in input]


def broadcast_static_shape(shape_x: Any, shape_y: Any) -> TensorShape:
    """The broadcast of two static shapes.

    Raises:
        ValueError: the shapes are incompatible.
    """
    return broadcast_shapes(as_shape(shape_x), as_shape(shape_y))


def _broadcast_args_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    a, b = inputs
    if a.dtype != b.dtype:
        raise TypeError(f"BroadcastArgs inputs must share a dtype: {a.dtype.name} vs {b.dtype.name}")
    sa, sb = shape_from_tensor(a), shape_from_tensor(b)
    if sa.is_fully_defined() and sb.is_fully_defined():
        return [(a.dtype, TensorShape([len(broadcast_shapes(sa, sb))]))]
    return [(a.dtype, TensorShape([None]))]


register_op("BroadcastArgs", _broadcast_args_shape, not_differentiable=True)


def broadcast_dynamic_shape(shape_x: Any, shape_y: Any) -> Tensor:
    """The broadcast of two shape vectors, computed at run time."""
    x = _index_input(shape_x, "shape_x")
    y = _index_input(shape_y, "shape_y", x.dtype)
    return make_tensor("BroadcastArgs", [x, y], name="BroadcastArgs")


def _ensure_shape_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x = inputs[0]
    expected = as_shape(attrs["shape"])
    if not x.shape.is_compatible_with(expected):
        raise InvalidArgumentError(f"Shape of tensor {x.name} {x.shape} is not compatible with "
                                   f"expected shape {expected}.")
    return [(x.dtype, x.shape.merge_with(expected))]


register_op("EnsureShape", _ensure_shape_shape, grad=lambda op, g: [g])


def ensure_shape(x: Any, shape: Any, name: str | None = None) -> Tensor:
    """``x`` unchanged, checking at run time that its shape is compatible with ``shape``."""
    t = convert_to_tensor(x)
    dims = as_shape(shape)
    return make_tensor("EnsureShape", [t], {"shape": None if dims.rank is None else dims.as_list()},
                       name=name or "EnsureShape")
