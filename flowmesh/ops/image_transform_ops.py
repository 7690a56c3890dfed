"""``ImageProjectiveTransformV3``: TensorFlow's projective warp of a batch of images (what
Keras's ``RandomRotation``/``RandomTranslation``/``RandomZoom`` apply).

Each output pixel ``(x, y)`` reads the input at ``((a0 x + a1 y + a2) / k, (b0 x + b1 y +
b2) / k)`` with ``k = c0 x + c1 y + 1`` (one 8-vector per image, or one for the batch);
coordinates outside the image are mapped by ``fill_mode`` (``REFLECT``, ``WRAP``,
``CONSTANT``: ``fill_value``, ``NEAREST``) and read by ``BILINEAR`` or ``NEAREST``
interpolation. Declared not differentiable (augmentation sits on the inputs).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops._builders import make_tensor, shape_from_tensor


def _shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    images, _, output_shape, _ = inputs
    size = shape_from_tensor(output_shape)
    dims = images.shape.as_list() if images.shape.rank is not None else [None] * 4
    height, width = (size.as_list() + [None, None])[:2] if size.rank is not None else (None, None)
    return [(images.dtype, TensorShape([dims[0], height, width, dims[3]]))]


register_op("ImageProjectiveTransformV3", _shape, not_differentiable=True)


def image_projective_transform_v3(images: Any, transforms: Any, output_shape: Any, fill_value: Any = 0.0,
                                  interpolation: str = "BILINEAR", fill_mode: str = "CONSTANT",
                                  name: str | None = None) -> Tensor:
    """Warps ``[batch, h, w, c]`` images by ``[1 or batch, 8]`` projective transforms.

    Raises:
        ValueError: an unknown ``interpolation`` or ``fill_mode``.
    """
    interpolation, fill_mode = interpolation.upper(), fill_mode.upper()
    if interpolation not in ("BILINEAR", "NEAREST"):
        raise ValueError(f"interpolation must be BILINEAR or NEAREST, got {interpolation}")
    if fill_mode not in ("REFLECT", "WRAP", "CONSTANT", "NEAREST"):
        raise ValueError(f"fill_mode must be REFLECT, WRAP, CONSTANT or NEAREST, got {fill_mode}")
    images = convert_to_tensor(images, name="images")
    inputs = [images, convert_to_tensor(transforms, dtypes.float32, name="transforms"),
              convert_to_tensor(output_shape, dtypes.int32, name="output_shape"),
              convert_to_tensor(fill_value, dtypes.float32, name="fill_value")]
    return make_tensor("ImageProjectiveTransformV3", inputs,
                       {"dtype": images.dtype, "interpolation": interpolation, "fill_mode": fill_mode},
                       name=name or "ImageProjectiveTransformV3")
