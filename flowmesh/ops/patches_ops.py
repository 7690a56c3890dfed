"""``tf.extract_image_patches`` (``tf.image.extract_patches``'s TF1 name) and
``tf.extract_volume_patches``: every ``ksizes`` window (dilated by ``rates`` for images),
stepped by ``strides``, with ``SAME`` or ``VALID`` padding, flattened into the depth
dimension in (row, col, channel) order. The gradient is the adjoint (overlapping windows
add up), itself differentiable through the forward op."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops
from flowmesh.ops._builders import REAL_NUMERIC, check_dtype, make_tensor


def patches_out_dim(size: int | None, k: int, s: int, r: int, padding: str) -> int | None:
    if size is None:
        return None
    eff = (k - 1) * r + 1
    return -(-size // s) if padding == "SAME" else max(0, (size - eff) // s + 1)


def _patches_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x = inputs[0]
    n = len(attrs["ksizes"]) - 2
    if x.shape.rank is None:
        return [(x.dtype, TensorShape([None] * (n + 2)))]
    dims = x.shape.as_list()
    ks, ss, rs = attrs["ksizes"][1:-1], attrs["strides"][1:-1], attrs["rates"][1:-1]
    spatial = [patches_out_dim(d, k, s, r, attrs["padding"]) for d, k, s, r in zip(dims[1:-1], ks, ss, rs)]
    depth = None if dims[-1] is None else dims[-1] * _prod(ks)
    return [(x.dtype, TensorShape([dims[0]] + spatial + [depth]))]


def _prod(values: Sequence[int]) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def _patches_grad(op: Operation, grad: Tensor) -> list:
    shape = array_ops.shape(op.inputs[0])
    return [make_tensor("ExtractPatchesGrad", [grad, shape], dict(op.attrs), name="ExtractPatchesGrad")]


def _grad_of_grad(op: Operation, gg: Tensor) -> list:
    op_type = "ExtractImagePatches" if len(op.attrs["ksizes"]) == 4 else "ExtractVolumePatches"
    attrs = {k: v for k, v in op.attrs.items() if not k.startswith("_")}
    return [make_tensor(op_type, [gg], attrs), None]


register_op("ExtractImagePatches", _patches_shape, grad=_patches_grad)
register_op("ExtractVolumePatches", _patches_shape, grad=_patches_grad)
register_op("ExtractPatchesGrad", lambda inputs, attrs: [(inputs[0].dtype, TensorShape(None))], grad=_grad_of_grad)


def _attr_list(value: Any, n: int, what: str, op_type: str) -> list[int]:
    values = [int(v) for v in value]
    if len(values) != n + 2 or values[0] != 1 or values[-1] != 1:
        raise InvalidArgumentError(f"{op_type}: {what} must be a list of {n + 2} ints [1, ..., 1], got {list(value)}")
    return values


def _patches(op_type: str, images: Any, ksizes: Any, strides: Any, rates: Any, padding: str,
             name: str | None) -> Tensor:
    x = convert_to_tensor(images, name="images")
    check_dtype(op_type, x, REAL_NUMERIC, "images")
    n = 2 if op_type == "ExtractImagePatches" else 3
    if x.shape.rank not in (None, n + 2):
        raise InvalidArgumentError(f"{op_type}: input must be {n + 2}-D, got shape {x.shape}")
    if padding not in ("SAME", "VALID"):
        raise InvalidArgumentError(f"{op_type}: padding must be 'SAME' or 'VALID', got {padding!r}")
    attrs = {"ksizes": _attr_list(ksizes, n, "ksizes", op_type), "strides": _attr_list(strides, n, "strides", op_type),
             "rates": _attr_list(rates, n, "rates", op_type), "padding": padding}
    return make_tensor(op_type, [x], attrs, name=name or op_type)


def extract_image_patches(images: Any, ksizes: Any = None, strides: Any = None, rates: Any = None,
                          padding: str | None = None, name: str | None = None, sizes: Any = None) -> Tensor:
    """Patches of ``images`` ``[batch, rows, cols, depth]`` as ``[batch, out_rows, out_cols,
    ksize_rows * ksize_cols * depth]``.

    Raises:
        InvalidArgumentError: malformed ``ksizes``/``strides``/``rates`` or padding.
    """
    return _patches("ExtractImagePatches", images, ksizes if ksizes is not None else sizes, strides, rates,
                    padding, name)


def extract_volume_patches(input: Any, ksizes: Any, strides: Any, padding: str,  # noqa: A002
                           name: str | None = None) -> Tensor:
    """Patches of ``input`` ``[batch, planes, rows, cols, depth]`` as ``[batch, out_planes,
    out_rows, out_cols, kp * kr * kc * depth]``."""
    return _patches("ExtractVolumePatches", input, ksizes, strides, [1] * len(list(ksizes)), padding, name)
