"""``tf.image``: decoding/encoding, resizing, crops and pads, flips, colour adjustments and
random augmentations, built from graph ops (``flowmesh/ops/image_ops.py`` for the kernels
TensorFlow has as ops)."""

from flowmesh.image.adjust import adjust_brightness, adjust_contrast, per_image_standardization
from flowmesh.image.colorspace import (
    adjust_hue,
    adjust_saturation,
    hsv_to_rgb,
    random_hue,
    random_saturation,
    rgb_to_hsv,
)
from flowmesh.image.convert import (
    convert_image_dtype,
    decode_image,
    grayscale_to_rgb,
    rgb_to_grayscale,
)
from flowmesh.image.geometry import (
    ResizeMethod,
    central_crop,
    crop_to_bounding_box,
    flip_left_right,
    flip_up_down,
    pad_to_bounding_box,
    resize_image_with_crop_or_pad,
    resize_images,
)
from flowmesh.image.random_ops import (
    random_brightness,
    random_contrast,
    random_crop,
    random_flip_left_right,
    random_flip_up_down,
)
from flowmesh.ops.image_ops import (
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
    resize_area,
    resize_bicubic,
    resize_bilinear,
    resize_nearest_neighbor,
)

resize = resize_images
resize_with_crop_or_pad = resize_image_with_crop_or_pad

__all__ = [
    "ResizeMethod", "adjust_brightness", "adjust_contrast", "adjust_hue", "adjust_saturation",
    "central_crop", "convert_image_dtype", "hsv_to_rgb", "random_hue", "random_saturation",
    "rgb_to_hsv",
    "crop_to_bounding_box", "decode_image", "decode_jpeg", "decode_png", "encode_jpeg",
    "encode_png", "flip_left_right", "flip_up_down", "grayscale_to_rgb", "pad_to_bounding_box",
    "per_image_standardization", "random_brightness", "random_contrast", "random_crop",
    "random_flip_left_right", "random_flip_up_down", "resize", "resize_area", "resize_bicubic",
    "resize_bilinear", "resize_image_with_crop_or_pad", "resize_images",
    "resize_nearest_neighbor", "resize_with_crop_or_pad", "rgb_to_grayscale",
]
