"""Image quality measures and derivative filters of ``tf.image``: ``psnr``, ``ssim``,
``ssim_multiscale``, ``total_variation``, ``image_gradients``, ``sobel_edges``, written with
graph ops as TensorFlow's ``image_ops_impl.py`` writes them (same filters, same order of
arithmetic), so values and gradients match."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, control_dependencies, name_scope
from flowmesh.errors import InvalidArgumentError
from flowmesh.image.convert import convert_image_dtype
from flowmesh.ops import (
    array_ops,
    cast_ops,
    cond,
    depthwise_conv_ops,
    logging_ops,
    manip_ops,
    math_ops,
    nn_conv_ops,
    nn_ops,
    range_ops,
    reduction_ops,
)

MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def _compatible(img1: Tensor, img2: Tensor, fn: str) -> tuple[Tensor, Tensor, list]:
    """Both at least 3-D with equal ``[h, w, c]`` and broadcastable batch dimensions; the
    dynamic shapes and run-time checks (TensorFlow's ``_verify_compatible_image_shapes``)."""
    s1, s2 = img1.shape, img2.shape
    for s in (s1, s2):
        if s.rank is not None and s.rank < 3:
            raise ValueError(f"{fn}: images must be at least 3-D [..., height, width, channels], got {s}")
    if s1.rank is not None and s2.rank is not None:
        for a, b in zip(s1.as_list()[-3:], s2.as_list()[-3:]):
            if a is not None and b is not None and a != b:
                raise ValueError(f"{fn}: Two images are not compatible: {s1} and {s2}")
        for a, b in zip(reversed(s1.as_list()[:-3]), reversed(s2.as_list()[:-3])):
            if not (a == 1 or b == 1 or a is None or b is None or a == b):
                raise ValueError(f"{fn}: Two images are not compatible: {s1} and {s2}")
    shape1, shape2 = array_ops.shape(img1), array_ops.shape(img2)
    checks = [logging_ops.Assert(math_ops.greater_equal(array_ops.size(shape1), 3), [shape1, shape2], summarize=10),
              logging_ops.Assert(reduction_ops.reduce_all(math_ops.equal(shape1[-3:], shape2[-3:])),
                                 [shape1, shape2], summarize=10)]
    return shape1, shape2, checks


def _as_float(a: Tensor, b: Tensor, max_val: Any) -> tuple[Tensor, Tensor, Tensor]:
    max_val = convert_image_dtype(cast_ops.cast(max_val, a.dtype), dtypes.float32)
    return convert_image_dtype(a, dtypes.float32), convert_image_dtype(b, dtypes.float32), max_val


def psnr(a: Any, b: Any, max_val: Any, name: str | None = None) -> Tensor:
    """Peak signal-to-noise ratio between two batches of images (``[..., h, w, c]``), one value
    per image: ``20 log10(max_val) - 10 log10(mse)``."""
    with name_scope(name, "PSNR"):
        a, b = convert_to_tensor(a, name="a"), convert_to_tensor(b, name="b")
        a, b, max_val = _as_float(a, b, max_val)
        mse = reduction_ops.reduce_mean(math_ops.squared_difference(a, b), [-3, -2, -1])
        value = math_ops.subtract(20 * math_ops.log(max_val) / math_ops.log(10.0),
                                  np.float32(10 / np.log(10)) * math_ops.log(mse), name="psnr")
        _, _, checks = _compatible(a, b, "psnr")
        with control_dependencies(checks):
            return array_ops.identity(value)


def _ssim_helper(x: Tensor, y: Tensor, reducer: Callable[[Tensor], Tensor], max_val: Tensor,
                 compensation: float, k1: float, k2: float) -> tuple[Tensor, Tensor]:
    c1 = (k1 * max_val) ** 2
    c2 = (k2 * max_val) ** 2
    mean0, mean1 = reducer(x), reducer(y)
    num0 = mean0 * mean1 * 2.0
    den0 = math_ops.square(mean0) + math_ops.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(x * y) * 2.0
    den1 = reducer(math_ops.square(x) + math_ops.square(y))
    c2 *= compensation
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    return luminance, cs


def _gauss(size: Tensor, sigma: Tensor) -> Tensor:
    coords = cast_ops.cast(range_ops.range(size), sigma.dtype)
    coords -= cast_ops.cast(size - 1, sigma.dtype) / 2.0
    g = math_ops.square(coords)
    g *= -0.5 / math_ops.square(sigma)
    g = array_ops.reshape(g, [1, -1]) + array_ops.reshape(g, [-1, 1])
    g = nn_ops.softmax(array_ops.reshape(g, [1, -1]))
    return array_ops.reshape(g, array_ops.stack([size, size, 1, 1]))


def _ssim_per_channel(img1: Tensor, img2: Tensor, max_val: Tensor, filter_size: int, filter_sigma: float,
                      k1: float, k2: float, return_index_map: bool = False) -> tuple[Tensor, Tensor]:
    size = convert_to_tensor(filter_size, dtype=dtypes.int32)
    sigma = convert_to_tensor(filter_sigma, dtype=img1.dtype)
    shape1, shape2 = array_ops.shape(img1), array_ops.shape(img2)
    checks = [logging_ops.Assert(reduction_ops.reduce_all(math_ops.greater_equal(s[-3:-1], size)), [s, size],
                                 summarize=8) for s in (shape1, shape2)]
    with control_dependencies(checks):
        img1 = array_ops.identity(img1)
    kernel = manip_ops.tile(_gauss(size, sigma), array_ops.stack([1, 1, shape1[-1], 1]))

    def reducer(x: Tensor) -> Tensor:
        shape = array_ops.shape(x)
        x = array_ops.reshape(x, array_ops.concat([[-1], shape[-3:]], 0))
        y = depthwise_conv_ops.depthwise_conv2d(x, kernel, strides=[1, 1, 1, 1], padding="VALID")
        return array_ops.reshape(y, array_ops.concat([shape[:-3], array_ops.shape(y)[1:]], 0))

    luminance, cs = _ssim_helper(img1, img2, reducer, max_val, 1.0, k1, k2)
    if return_index_map:
        return luminance * cs, cs
    axes = convert_to_tensor([-3, -2], dtype=dtypes.int32)
    return reduction_ops.reduce_mean(luminance * cs, axes), reduction_ops.reduce_mean(cs, axes)


def ssim(img1: Any, img2: Any, max_val: Any, filter_size: int = 11, filter_sigma: float = 1.5,
         k1: float = 0.01, k2: float = 0.03, return_index_map: bool = False) -> Tensor:
    """Structural similarity (Wang et al. 2004) with an ``filter_size`` Gaussian window, averaged
    over each image and its channels (or the per-pixel map with ``return_index_map``)."""
    with name_scope(None, "SSIM"):
        img1, img2 = convert_to_tensor(img1, name="img1"), convert_to_tensor(img2, name="img2")
        _, _, checks = _compatible(img1, img2, "ssim")
        with control_dependencies(checks):
            img1 = array_ops.identity(img1)
        img1, img2, max_val = _as_float(img1, img2, max_val)
        per_channel, _ = _ssim_per_channel(img1, img2, max_val, filter_size, filter_sigma, k1, k2,
                                           return_index_map)
        return reduction_ops.reduce_mean(per_channel, [-1])


def ssim_multiscale(img1: Any, img2: Any, max_val: Any, power_factors: Sequence[float] = MSSSIM_WEIGHTS,
                    filter_size: int = 11, filter_sigma: float = 1.5, k1: float = 0.01,
                    k2: float = 0.03) -> Tensor:
    """Multi-scale SSIM: ``len(power_factors)`` scales, each a 2x2 average pool (symmetric
    padding to even sizes) of the previous one."""
    with name_scope(None, "MS-SSIM"):
        img1, img2 = convert_to_tensor(img1, name="img1"), convert_to_tensor(img2, name="img2")
        shape1, shape2, checks = _compatible(img1, img2, "ssim_multiscale")
        with control_dependencies(checks):
            img1 = array_ops.identity(img1)
        img1, img2, max_val = _as_float(img1, img2, max_val)
        imgs, heads, tails = [img1, img2], [shape1[:-3], shape2[:-3]], [shape1[-3:], shape2[-3:]]
        divisor = [1, 2, 2, 1]
        divisor_t = convert_to_tensor(divisor[1:], dtype=dtypes.int32)
        mcs = []
        per_channel = None
        for k in range(len(power_factors)):
            with name_scope(None, f"Scale{k}"):
                if k > 0:
                    imgs, tails = _downscale(imgs, heads, tails, divisor, divisor_t)
                per_channel, cs = _ssim_per_channel(*imgs, max_val=max_val, filter_size=filter_size,
                                                    filter_sigma=filter_sigma, k1=k1, k2=k2)
                mcs.append(nn_ops.relu(cs))
        mcs.pop()
        stacked = array_ops.stack(mcs + [nn_ops.relu(per_channel)], axis=-1)
        ms_ssim = reduction_ops.reduce_prod(math_ops.pow(stacked, list(power_factors)), [-1])
        return reduction_ops.reduce_mean(ms_ssim, [-1])


def _downscale(imgs: list, heads: list, tails: list, divisor: list, divisor_t: Tensor) -> tuple[list, list]:
    flat = [array_ops.reshape(x, array_ops.concat([[-1], t], 0)) for x, t in zip(imgs, tails)]
    remainder = tails[0] % divisor_t
    need_padding = reduction_ops.reduce_any(math_ops.not_equal(remainder, 0))

    def do_pad() -> list:
        padding = manip_ops.pad(array_ops.expand_dims(remainder, -1), [[1, 0], [1, 0]])
        return [manip_ops.pad(x, padding, mode="SYMMETRIC") for x in flat]

    padded = cond.cond(need_padding, do_pad, lambda: flat)
    down = [nn_conv_ops.avg_pool(x, ksize=divisor, strides=divisor, padding="VALID") for x in padded]
    tails = [array_ops.shape(x)[1:] for x in down]
    return [array_ops.reshape(x, array_ops.concat([h, t], 0)) for x, h, t in zip(down, heads, tails)], tails


def total_variation(images: Any, name: str | None = None) -> Tensor:
    """The sum of absolute differences of neighbouring pixels (per image for a batch)."""
    with name_scope(name, "total_variation"):
        images = convert_to_tensor(images, name="images")
        rank = images.shape.rank
        if rank == 3:
            dif1 = images[1:, :, :] - images[:-1, :, :]
            dif2 = images[:, 1:, :] - images[:, :-1, :]
            axis = None
        elif rank == 4:
            dif1 = images[:, 1:, :, :] - images[:, :-1, :, :]
            dif2 = images[:, :, 1:, :] - images[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError("'images' must be either 3 or 4-dimensional.")
        return (reduction_ops.reduce_sum(math_ops.abs(dif1), axis=axis)
                + reduction_ops.reduce_sum(math_ops.abs(dif2), axis=axis))


def image_gradients(image: Any) -> tuple[Tensor, Tensor]:
    """``(dy, dx)``: forward differences of ``[batch, h, w, d]`` images, zero in the last
    row/column."""
    image = convert_to_tensor(image, name="image")
    if image.shape.rank != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not {image.shape}.")
    shape = array_ops.shape(image)
    batch, height, width, depth = array_ops.unstack(shape)
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = array_ops.concat([dy, array_ops.zeros(array_ops.stack([batch, 1, width, depth]), image.dtype)], 1)
    dx = array_ops.concat([dx, array_ops.zeros(array_ops.stack([batch, height, 1, depth]), image.dtype)], 2)
    return array_ops.reshape(dy, shape), array_ops.reshape(dx, shape)


def sobel_edges(image: Any) -> Tensor:
    """The vertical and horizontal Sobel responses of ``[batch, h, w, d]`` images (reflect
    padding), stacked last: ``[batch, h, w, d, 2]``."""
    image = convert_to_tensor(image, name="image")
    if image.shape.rank not in (None, 4):
        raise InvalidArgumentError(f"sobel_edges: image must be 4-D [batch, h, w, d], got {image.shape}")
    shape = array_ops.shape(image)
    kernels = np.asarray([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]], [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]])
    kernels = np.expand_dims(np.transpose(kernels, (1, 2, 0)), -2)
    filters = manip_ops.tile(convert_to_tensor(kernels.astype(image.dtype.as_numpy_dtype)),
                             array_ops.stack([1, 1, shape[-1], 1]), name="sobel_filters")
    padded = manip_ops.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    output = depthwise_conv_ops.depthwise_conv2d(padded, filters, [1, 1, 1, 1], "VALID")
    output = array_ops.reshape(output, array_ops.concat([shape, [2]], 0))
    output.set_shape(image.shape.concatenate([2]))
    return output
