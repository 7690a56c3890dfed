"""Moving spatial blocks to depth or batch and back: ``space_to_depth``, ``depth_to_space``,
``space_to_batch_nd``, ``batch_to_space_nd``, ``space_to_batch``, ``batch_to_space``.

Each is TensorFlow's documented reshape / transpose / pad (or crop) sequence, built from
graph ops, so its gradient is the inverse sequence. ``block_size``, ``block_shape``,
``paddings`` and ``crops`` must be Python values or constants; other dimensions may be
unknown until run time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, manip_ops, math_ops
from flowmesh.ops._builders import constant_value


def _static(value: Any, what: str) -> np.ndarray:
    if isinstance(value, Tensor):
        found = constant_value(value)
        if found is None:
            raise InvalidArgumentError(f"{what} must be a constant (flowmesh builds these ops from reshapes)")
        value = found
    return np.asarray(value, dtype=np.int64)


def _nhwc(x: Tensor, data_format: str) -> Tensor:
    return x if data_format == "NHWC" else array_ops.transpose(x, [0, 2, 3, 1])


def _back(x: Tensor, data_format: str) -> Tensor:
    return x if data_format == "NHWC" else array_ops.transpose(x, [0, 3, 1, 2])


def space_to_depth(input: Any, block_size: int, name: str | None = None,  # noqa: A002
                   data_format: str = "NHWC") -> Tensor:
    """Moves ``block_size x block_size`` spatial blocks into depth (depth index
    ``(row * block_size + col) * C + c``).

    Raises:
        InvalidArgumentError: height or width not divisible by ``block_size``.
    """
    b = int(block_size)
    with name_scope(name, "SpaceToDepth", [input]):
        x = _nhwc(convert_to_tensor(input), data_format)
        _check_divisible(x, b)
        s = array_ops.shape(x)
        y = array_ops.reshape(x, array_ops.stack([s[0], s[1] // b, b, s[2] // b, b, s[3]]))
        y = array_ops.transpose(y, [0, 1, 3, 2, 4, 5])
        return _back(array_ops.reshape(y, array_ops.stack([s[0], s[1] // b, s[2] // b, s[3] * b * b])), data_format)


def _check_divisible(x: Tensor, b: int) -> None:
    if b < 2:
        raise InvalidArgumentError(f"block_size should be > 1, got {b}")
    dims = x.shape.as_list() if x.shape.rank == 4 else [None] * 4
    for d, what in ((dims[1], "height"), (dims[2], "width")):
        if d is not None and d % b:
            raise InvalidArgumentError(f"Image {what} {d} must be divisible by block_size {b}")


def depth_to_space(input: Any, block_size: int, name: str | None = None,  # noqa: A002
                   data_format: str = "NHWC") -> Tensor:
    """The inverse of :func:`space_to_depth`.

    Raises:
        InvalidArgumentError: depth not divisible by ``block_size ** 2``.
    """
    b = int(block_size)
    with name_scope(name, "DepthToSpace", [input]):
        x = _nhwc(convert_to_tensor(input), data_format)
        depth = x.shape.as_list()[3] if x.shape.rank == 4 else None
        if b < 2 or (depth is not None and depth % (b * b)):
            raise InvalidArgumentError(f"Input depth {depth} must be divisible by block_size**2 = {b * b}")
        s = array_ops.shape(x)
        y = array_ops.reshape(x, array_ops.stack([s[0], s[1], s[2], b, b, s[3] // (b * b)]))
        y = array_ops.transpose(y, [0, 1, 3, 2, 4, 5])
        return _back(array_ops.reshape(y, array_ops.stack([s[0], s[1] * b, s[2] * b, s[3] // (b * b)])), data_format)


def space_to_batch_nd(input: Any, block_shape: Any, paddings: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Zero-pads the ``M`` spatial dimensions, then moves blocks of ``block_shape`` into the
    batch dimension (batch index ``block_offset * batch + b``)."""
    blocks = _static(block_shape, "block_shape").reshape(-1)
    pads = _static(paddings, "paddings").reshape(-1, 2)
    m = len(blocks)
    with name_scope(name, "SpaceToBatchND", [input]):
        x = convert_to_tensor(input)
        rank = x.shape.rank
        if rank is None:
            raise InvalidArgumentError("space_to_batch_nd needs the input's rank")
        full = [[0, 0], *pads.tolist()] + [[0, 0]] * (rank - 1 - m)
        x = manip_ops.pad(x, full)
        s = array_ops.shape(x)
        split = [s[0]]
        for i, b in enumerate(blocks.tolist()):
            split += [s[1 + i] // b, b]
        y = array_ops.reshape(x, array_ops.concat([array_ops.stack(split), s[1 + m:]], 0))
        perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(range(1 + 2 * m, rank + m))
        y = array_ops.transpose(y, perm)
        outer = [s[0] * int(np.prod(blocks))] + [s[1 + i] // b for i, b in enumerate(blocks.tolist())]
        return array_ops.reshape(y, array_ops.concat([array_ops.stack(outer), s[1 + m:]], 0))


def batch_to_space_nd(input: Any, block_shape: Any, crops: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of :func:`space_to_batch_nd`, then crops ``crops`` off the spatial dims."""
    blocks = _static(block_shape, "block_shape").reshape(-1)
    crop = _static(crops, "crops").reshape(-1, 2)
    m, prod = len(blocks), int(np.prod(blocks))
    with name_scope(name, "BatchToSpaceND", [input]):
        x = convert_to_tensor(input)
        rank = x.shape.rank
        if rank is None:
            raise InvalidArgumentError("batch_to_space_nd needs the input's rank")
        s = array_ops.shape(x)
        y = array_ops.reshape(x, array_ops.concat([blocks.astype(np.int32), array_ops.stack([s[0] // prod]), s[1:]], 0))
        perm = [m] + [p for i in range(m) for p in (m + 1 + i, i)] + list(range(2 * m + 1, rank + m))
        y = array_ops.transpose(y, perm)
        outer = [s[0] // prod] + [s[1 + i] * b for i, b in enumerate(blocks.tolist())]
        y = array_ops.reshape(y, array_ops.concat([array_ops.stack(outer), s[1 + m:]], 0))
        begin = [0] + [int(c[0]) for c in crop] + [0] * (rank - 1 - m)
        ys = array_ops.shape(y)
        size = [-1] + [ys[1 + i] - int(c[0]) - int(c[1]) for i, c in enumerate(crop)] + [-1] * (rank - 1 - m)
        return manip_ops.slice(y, begin, array_ops.stack(size))


def space_to_batch(input: Any, paddings: Any, block_size: int, name: str | None = None,  # noqa: A002
                   block_shape: Any = None) -> Tensor:
    """``space_to_batch_nd`` over height and width with a square block."""
    b = int(block_size if block_shape is None else block_shape)
    return space_to_batch_nd(input, [b, b], paddings, name=name or "SpaceToBatch")


def batch_to_space(input: Any, crops: Any, block_size: int, name: str | None = None,  # noqa: A002
                   block_shape: Any = None) -> Tensor:
    """``batch_to_space_nd`` over height and width with a square block."""
    b = int(block_size if block_shape is None else block_shape)
    return batch_to_space_nd(input, [b, b], crops, name=name or "BatchToSpace")


def required_space_to_batch_paddings(input_shape: Any, block_shape: Any, base_paddings: Any = None,
                                     name: str | None = None) -> tuple[Tensor, Tensor]:
    """The ``paddings`` and ``crops`` that make ``space_to_batch_nd`` divide ``input_shape``
    (plus ``base_paddings``) by ``block_shape`` and ``batch_to_space_nd`` undo it
    (``tf.required_space_to_batch_paddings``).

    Returns:
        ``(paddings, crops)``, both ``[num_block_dims, 2]`` int32 tensors.
    """
    with name_scope(name, "required_space_to_batch_paddings", [input_shape, block_shape]):
        input_shape = convert_to_tensor(input_shape, name="input_shape")
        block_shape = convert_to_tensor(block_shape, dtype=input_shape.dtype, name="block_shape")
        if base_paddings is None:
            base_paddings = array_ops.zeros(array_ops.stack([array_ops.shape(block_shape)[0], 2]),
                                            input_shape.dtype)
        base_paddings = convert_to_tensor(base_paddings, dtype=input_shape.dtype, name="base_paddings")
        pad_start, orig_pad_end = base_paddings[:, 0], base_paddings[:, 1]
        full = input_shape + pad_start + orig_pad_end
        extra = math_ops.floormod(block_shape - math_ops.floormod(full, block_shape), block_shape)
        pad_end = orig_pad_end + extra
        paddings = array_ops.stack([pad_start, pad_end], axis=1, name="paddings")
        crops = array_ops.stack([array_ops.zeros_like(extra), extra], axis=1, name="crops")
        return paddings, crops
