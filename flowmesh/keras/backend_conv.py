"""``tf.keras.backend`` convolution, pooling, padding and resizing (``K.conv2d``,
``K.pool2d``, ``K.local_conv``, ``K.spatial_2d_padding``, ``K.resize_images``...) in
either data format; re-exported by :mod:`flowmesh.keras.backend`."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core.convert import convert_to_tensor
from flowmesh.keras.backend_state import data_format_or_default
from flowmesh.ops import array_ops, manip_ops, nn_conv_ops


# --- convolution and pooling --------------------------------------------------------------
def _tuple(value: Any, n: int) -> list[int]:
    return [int(value)] * n if isinstance(value, int) else [int(v) for v in value]


def _causal(x: Any, kernel: Any, dilation: int) -> Any:
    left = dilation * (int(kernel.shape[0]) - 1)
    return manip_ops.pad(x, [[0, 0], [left, 0], [0, 0]])


def conv1d(x: Any, kernel: Any, strides: int = 1, padding: str = "valid", data_format: str | None = None,
           dilation_rate: int = 1) -> Any:
    fmt = data_format_or_default(data_format)
    if padding == "causal":
        if fmt != "channels_last":
            raise ValueError("K.conv1d with padding='causal' needs channels_last")
        x, padding = _causal(x, kernel, dilation_rate), "valid"
    return nn_conv_ops.conv1d(x, kernel, strides, padding.upper(), data_format="NWC" if fmt == "channels_last"
                              else "NCW", dilations=dilation_rate)


def conv2d(x: Any, kernel: Any, strides: Any = (1, 1), padding: str = "valid", data_format: str | None = None,
           dilation_rate: Any = (1, 1)) -> Any:
    fmt = "NHWC" if data_format_or_default(data_format) == "channels_last" else "NCHW"
    return nn_conv_ops.conv2d(x, kernel, _tuple(strides, 2), padding.upper(), data_format=fmt,
                              dilations=_tuple(dilation_rate, 2))


def _full_output_shape(x: Any, output_shape: Any) -> Any:
    """``output_shape`` with a None batch size replaced by ``x``'s (static when known)."""
    if isinstance(output_shape, (list, tuple)) and output_shape and output_shape[0] is None:
        batch = convert_to_tensor(x).shape.as_list()[0]
        if batch is not None:
            return [batch] + list(output_shape[1:])
        return array_ops.stack([array_ops.shape(x)[0]] + list(output_shape[1:]))
    return output_shape


def conv2d_transpose(x: Any, kernel: Any, output_shape: Any, strides: Any = (1, 1), padding: str = "valid",
                     data_format: str | None = None, dilation_rate: Any = (1, 1)) -> Any:
    fmt = "NHWC" if data_format_or_default(data_format) == "channels_last" else "NCHW"
    full = _full_output_shape(x, output_shape)
    out = nn_conv_ops.conv2d_transpose(x, kernel, full, _tuple(strides, 2), padding.upper(), data_format=fmt,
                                       dilations=_tuple(dilation_rate, 2))
    if isinstance(output_shape, (list, tuple)):
        out.set_shape(full if isinstance(full, list) else list(output_shape))
    return out


def conv3d(x: Any, kernel: Any, strides: Any = (1, 1, 1), padding: str = "valid", data_format: str | None = None,
           dilation_rate: Any = (1, 1, 1)) -> Any:
    from flowmesh.ops.nn_conv3d_ops import conv3d as conv3d_op

    last = data_format_or_default(data_format) == "channels_last"
    strides, dilations = _tuple(strides, 3), _tuple(dilation_rate, 3)
    return conv3d_op(x, kernel, [1] + strides + [1] if last else [1, 1] + strides, padding.upper(),
                     data_format="NDHWC" if last else "NCDHW",
                     dilations=[1] + dilations + [1] if last else [1, 1] + dilations)


def depthwise_conv2d(x: Any, depthwise_kernel: Any, strides: Any = (1, 1), padding: str = "valid",
                     data_format: str | None = None, dilation_rate: Any = (1, 1)) -> Any:
    from flowmesh.ops.depthwise_conv_ops import depthwise_conv2d as depthwise

    last = data_format_or_default(data_format) == "channels_last"
    strides = _tuple(strides, 2)
    return depthwise(x, depthwise_kernel, [1] + strides + [1] if last else [1, 1] + strides, padding.upper(),
                     rate=_tuple(dilation_rate, 2), data_format="NHWC" if last else "NCHW")


def separable_conv2d(x: Any, depthwise_kernel: Any, pointwise_kernel: Any, strides: Any = (1, 1),
                     padding: str = "valid", data_format: str | None = None, dilation_rate: Any = (1, 1)) -> Any:
    from flowmesh.ops.depthwise_conv_ops import separable_conv2d as separable

    last = data_format_or_default(data_format) == "channels_last"
    strides = _tuple(strides, 2)
    return separable(x, depthwise_kernel, pointwise_kernel, [1] + strides + [1] if last else [1, 1] + strides,
                     padding.upper(), rate=_tuple(dilation_rate, 2), data_format="NHWC" if last else "NCHW")


def pool2d(x: Any, pool_size: Any, strides: Any = (1, 1), padding: str = "valid", data_format: str | None = None,
           pool_mode: str = "max") -> Any:
    if pool_mode not in ("max", "avg"):
        raise ValueError(f"Invalid pool_mode: {pool_mode}. Expected one of 'max', 'avg'.")
    pool = nn_conv_ops.max_pool if pool_mode == "max" else nn_conv_ops.avg_pool
    fmt = "NHWC" if data_format_or_default(data_format) == "channels_last" else "NCHW"
    return pool(x, _tuple(pool_size, 2), _tuple(strides, 2), padding.upper(), data_format=fmt)


def pool3d(x: Any, pool_size: Any, strides: Any = (1, 1, 1), padding: str = "valid",
           data_format: str | None = None, pool_mode: str = "max") -> Any:
    from flowmesh.ops import nn_pool3d_ops

    if pool_mode not in ("max", "avg"):
        raise ValueError(f"Invalid pool_mode: {pool_mode}. Expected one of 'max', 'avg'.")
    pool = nn_pool3d_ops.max_pool3d if pool_mode == "max" else nn_pool3d_ops.avg_pool3d
    fmt = "NDHWC" if data_format_or_default(data_format) == "channels_last" else "NCDHW"
    return pool(x, _tuple(pool_size, 3), _tuple(strides, 3), padding.upper(), data_format=fmt)


def local_conv1d(inputs: Any, kernel: Any, kernel_size: Any, strides: Any, data_format: str | None = None) -> Any:
    """An unshared-weights 1-D convolution: ``kernel`` ``[out_steps, k * in, filters]``."""
    return local_conv(inputs, kernel, _tuple(kernel_size, 1), _tuple(strides, 1),
                      (int(kernel.shape[0]),), data_format)


def local_conv2d(inputs: Any, kernel: Any, kernel_size: Any, strides: Any, output_shape: Any,
                 data_format: str | None = None) -> Any:
    """An unshared-weights 2-D convolution: ``kernel`` ``[rows * cols, kh * kw * in, filters]``."""
    return local_conv(inputs, kernel, _tuple(kernel_size, 2), _tuple(strides, 2), tuple(output_shape), data_format)


def local_conv(inputs: Any, kernel: Any, kernel_size: list[int], strides: list[int], output_shape: tuple,
               data_format: str | None) -> Any:
    """tf-keras's ``local_conv``: each output position's window, flattened, times its own
    slice of ``kernel``."""
    import itertools

    from flowmesh.ops.linalg_ops import matmul

    last = data_format_or_default(data_format) == "channels_last"
    x = inputs if last else array_ops.transpose(inputs, [0] + list(range(2, len(kernel_size) + 2)) + [1])
    windows = []
    for position in itertools.product(*[range(n) for n in output_shape]):
        starts = [p * s for p, s in zip(position, strides)]
        begin = [0] + starts + [0]
        size = [-1] + list(kernel_size) + [-1]
        patch = manip_ops.slice(x, begin, size)
        windows.append(array_ops.reshape(patch, [1, -1, int(kernel.shape[1])]))
    out = matmul(array_ops.concat(windows, 0), kernel)  # [positions, batch, filters]
    out = array_ops.reshape(out, list(output_shape) + [-1, int(kernel.shape[-1])])
    rank = len(output_shape)
    if last:
        return array_ops.transpose(out, [rank] + list(range(rank)) + [rank + 1])
    return array_ops.transpose(out, [rank, rank + 1] + list(range(rank)))


# --- padding and resizing -----------------------------------------------------------------
def temporal_padding(x: Any, padding: Any = (1, 1)) -> Any:
    return manip_ops.pad(x, [[0, 0], list(padding), [0, 0]])


def spatial_2d_padding(x: Any, padding: Any = ((1, 1), (1, 1)), data_format: str | None = None) -> Any:
    pads = [list(p) for p in padding]
    if data_format_or_default(data_format) == "channels_first":
        return manip_ops.pad(x, [[0, 0], [0, 0]] + pads)
    return manip_ops.pad(x, [[0, 0]] + pads + [[0, 0]])


def spatial_3d_padding(x: Any, padding: Any = ((1, 1), (1, 1), (1, 1)), data_format: str | None = None) -> Any:
    return spatial_2d_padding(x, padding, data_format)


def resize_images(x: Any, height_factor: int, width_factor: int, data_format: str,
                  interpolation: str = "nearest") -> Any:
    """Rows and columns scaled by integer factors (``nearest``: repeated; ``bilinear``:
    TensorFlow 2's half-pixel bilinear resize)."""
    from flowmesh.keras.backend_math import repeat_elements

    first = data_format_or_default(data_format) == "channels_first"
    rows, cols = (2, 3) if first else (1, 2)
    if interpolation == "nearest":
        return repeat_elements(repeat_elements(x, height_factor, rows), width_factor, cols)
    if interpolation != "bilinear":
        raise ValueError(f"interpolation should be one of 'nearest', 'bilinear' in flowmesh, got {interpolation!r}")
    from flowmesh.ops.image_ops import resize_bilinear

    x = array_ops.transpose(x, [0, 2, 3, 1]) if first else x
    rows_cols = x.shape.as_list()[1:3]
    if None in rows_cols:
        dims = array_ops.shape(x)[1:3] * np.array([height_factor, width_factor], np.int32)
    else:
        dims = [rows_cols[0] * height_factor, rows_cols[1] * width_factor]
    out = resize_bilinear(x, dims, half_pixel_centers=True)
    return array_ops.transpose(out, [0, 3, 1, 2]) if first else out


def resize_volumes(x: Any, depth_factor: int, height_factor: int, width_factor: int, data_format: str) -> Any:
    from flowmesh.keras.backend_math import repeat_elements

    axes = (2, 3, 4) if data_format_or_default(data_format) == "channels_first" else (1, 2, 3)
    for axis, factor in zip(axes, (depth_factor, height_factor, width_factor)):
        x = repeat_elements(x, factor, axis)
    return x


__all__ = [
    "conv1d",
    "conv2d",
    "conv2d_transpose",
    "conv3d",
    "depthwise_conv2d",
    "local_conv1d",
    "local_conv2d",
    "pool2d",
    "pool3d",
    "resize_images",
    "resize_volumes",
    "separable_conv2d",
    "spatial_2d_padding",
    "spatial_3d_padding",
    "temporal_padding",
]
