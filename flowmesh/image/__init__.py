"""``tf.image``: decoding/encoding, resizing, crops and pads, flips, colour adjustments and
random augmentations, built from graph ops (``flowmesh/ops/image_ops.py`` for the kernels
TensorFlow has as ops)."""

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.ops.patches_ops import extract_image_patches

_fill_namespace(globals(), "image")


def extract_patches(images, sizes, strides, rates, padding, name=None):  # noqa: ANN001, ANN201 - TF's signature
    """``tf.image.extract_patches``: :func:`extract_image_patches` with ``sizes``."""
    return extract_image_patches(images, sizes, strides, rates, padding, name)


__all__ = [
    "adjust_gamma", "adjust_jpeg_quality", "combined_non_max_suppression", "crop_and_resize",
    "decode_and_crop_jpeg", "decode_bmp", "decode_gif", "decode_jxl", "decode_webp", "draw_bounding_boxes",
    "extract_glimpse", "extract_image_patches", "extract_jpeg_shape", "extract_patches",
    "generate_bounding_box_proposals", "image_gradients", "is_jpeg", "non_max_suppression",
    "non_max_suppression_overlaps", "non_max_suppression_padded", "non_max_suppression_with_scores", "psnr",
    "random_jpeg_quality", "resize_image_with_pad", "rgb_to_yiq", "rgb_to_yuv", "rot90",
    "sample_distorted_bounding_box", "sobel_edges", "ssim", "ssim_multiscale", "total_variation", "transpose",
    "transpose_image", "yiq_to_rgb", "yuv_to_rgb",
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
