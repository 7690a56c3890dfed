"""``tf.keras.backend`` neural-network functions (activations, losses, convolutions,
pooling, padding, random tensors, the learning phase helpers) as tf-keras defines them in
graph mode, built from flowmesh ops; re-exported by :mod:`flowmesh.keras.backend`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.ops import (
    array_ops,
    cast_ops,
    clip_ops,
    manip_ops,
    math_ops,
    nn_conv_ops,
    nn_impl,
    nn_ops,
    reduction_ops,
)


def _backend() -> Any:
    from flowmesh.keras import backend_state

    return backend_state


def _data_format(data_format: str | None) -> str:
    fmt = data_format or _backend().image_data_format()
    if fmt not in ("channels_last", "channels_first"):
        raise ValueError(f"Unknown data_format: {data_format}. Expected one of 'channels_first', 'channels_last'.")
    return fmt


def backend() -> str:
    """The backend's name: ``"tensorflow"`` (flowmesh speaks TensorFlow's API)."""
    return "tensorflow"


# --- activations --------------------------------------------------------------------------
def relu(x: Any, alpha: float = 0.0, max_value: float | None = None, threshold: float = 0.0) -> Any:
    """``max(x, 0)``, with a leaky slope ``alpha`` below ``threshold`` and a cap ``max_value``."""
    x = convert_to_tensor(x)
    negative = None
    if alpha != 0.0:
        if max_value is None and threshold == 0:
            return nn_impl.leaky_relu(x, alpha=alpha)
        negative = nn_ops.relu(-x + threshold) if threshold != 0 else nn_ops.relu(-x)
    clip_max = max_value is not None
    if threshold != 0:
        x = x * cast_ops.cast(math_ops.greater(x, threshold), x.dtype)
    elif max_value == 6:
        x, clip_max = nn_impl.relu6(x), False
    else:
        x = nn_ops.relu(x)
    if clip_max:
        x = clip_ops.clip_by_value(x, 0.0, float(max_value))
    if negative is not None:
        x = x - alpha * negative
    return x


def elu(x: Any, alpha: float = 1.0) -> Any:
    res = nn_impl.elu(x)
    if alpha == 1:
        return res
    from flowmesh.ops.select_ops import where

    return where(math_ops.greater(x, 0), res, alpha * res)


def softmax(x: Any, axis: int = -1) -> Any:
    return nn_ops.softmax(x, axis=axis)


def softplus(x: Any) -> Any:
    return nn_impl.softplus(x)


def softsign(x: Any) -> Any:
    return nn_impl.softsign(x)


def sigmoid(x: Any) -> Any:
    return math_ops.sigmoid(x)


def hard_sigmoid(x: Any) -> Any:
    """``clip(0.2 * x + 0.5, 0, 1)``."""
    return clip_ops.clip_by_value(0.2 * convert_to_tensor(x) + 0.5, 0.0, 1.0)


def tanh(x: Any) -> Any:
    return math_ops.tanh(x)


def dropout(x: Any, level: float, noise_shape: Any = None, seed: int | None = None) -> Any:
    if seed is None:
        seed = np.random.randint(10_000_000)
    return nn_impl.dropout(x, rate=level, noise_shape=noise_shape, seed=seed)


def l2_normalize(x: Any, axis: Any = None) -> Any:
    from flowmesh.ops.nn_norm_ops import l2_normalize as normalize

    return normalize(x, axis=axis)


def in_top_k(predictions: Any, targets: Any, k: int) -> Any:
    return nn_impl.in_top_k(predictions, targets, k)


# --- losses (element-wise or per-sample, as tf-keras's backend) ----------------------------
def _logits_of(output: Any, op_type: str) -> Any:
    """The logits a ``Softmax``/``Sigmoid`` output was computed from, else None."""
    op = getattr(output, "op", None)
    return op.inputs[0] if op is not None and op.type == op_type and len(op.inputs) == 1 else None


def categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1) -> Any:
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    logits = output if from_logits else _logits_of(output, "Softmax")
    if logits is not None:
        return nn_ops.softmax_cross_entropy_with_logits_v2(labels=target, logits=logits, axis=axis)
    output = output / reduction_ops.reduce_sum(output, axis, keepdims=True)
    eps = _backend().epsilon()
    output = clip_ops.clip_by_value(output, eps, 1.0 - eps)
    return -reduction_ops.reduce_sum(target * math_ops.log(output), axis)


def sparse_categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1,
                                    ignore_class: int | None = None) -> Any:
    """Per-sample cross entropy of integer labels (``target`` of ``output``'s rank minus 1,
    or with a trailing 1) against ``output`` over its last axis."""
    if axis != -1 or ignore_class is not None:
        raise ValueError("flowmesh's K.sparse_categorical_crossentropy supports axis=-1 and ignore_class=None")
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    logits = output if from_logits else _logits_of(output, "Softmax")
    if logits is None:
        eps = _backend().epsilon()
        logits = math_ops.log(clip_ops.clip_by_value(output, eps, 1.0 - eps))
    if target.shape.rank is not None and target.shape.rank == logits.shape.rank:
        target = array_ops.squeeze(target, [-1])
    labels = cast_ops.cast(target, dtypes.int64)
    if logits.shape.rank == 2:
        return nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    flat = nn_ops.sparse_softmax_cross_entropy_with_logits(
        labels=array_ops.reshape(labels, [-1]), logits=array_ops.reshape(logits, [-1, array_ops.shape(logits)[-1]]))
    return array_ops.reshape(flat, array_ops.shape(labels))


def binary_crossentropy(target: Any, output: Any, from_logits: bool = False) -> Any:
    """Element-wise binary cross entropy."""
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    logits = output if from_logits else _logits_of(output, "Sigmoid")
    if logits is not None:
        return nn_ops.sigmoid_cross_entropy_with_logits(labels=target, logits=logits)
    eps = _backend().epsilon()
    output = clip_ops.clip_by_value(output, eps, 1.0 - eps)
    return -(target * math_ops.log(output + eps) + (1.0 - target) * math_ops.log(1.0 - output + eps))


def binary_focal_crossentropy(target: Any, output: Any, apply_class_balancing: bool = False, alpha: float = 0.25,
                              gamma: float = 2.0, from_logits: bool = False) -> Any:
    """Element-wise focal loss: ``(1 - p_t) ** gamma`` times the binary cross entropy
    (times ``alpha``/``1 - alpha`` per class with ``apply_class_balancing``)."""
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    if from_logits:
        output = math_ops.sigmoid(output)
    bce = binary_crossentropy(target, output)
    p_t = target * output + (1.0 - target) * (1.0 - output)
    focal = math_ops.pow(1.0 - p_t, gamma) * bce
    if apply_class_balancing:
        focal = (target * alpha + (1.0 - target) * (1.0 - alpha)) * focal
    return focal


def categorical_focal_crossentropy(target: Any, output: Any, alpha: float = 0.25, gamma: float = 2.0,
                                   from_logits: bool = False, axis: int = -1) -> Any:
    """Per-sample focal loss over ``axis``: ``sum(alpha * (1 - p) ** gamma * -target * log p)``."""
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    if from_logits:
        output = nn_ops.softmax(output, axis=axis)
    output = output / reduction_ops.reduce_sum(output, axis, keepdims=True)
    eps = _backend().epsilon()
    output = clip_ops.clip_by_value(output, eps, 1.0 - eps)
    cce = -target * math_ops.log(output)
    return reduction_ops.reduce_sum(alpha * math_ops.pow(1.0 - output, gamma) * cce, axis)


# --- normalization ------------------------------------------------------------------------
def batch_normalization(x: Any, mean: Any, var: Any, beta: Any, gamma: Any, axis: int = -1,
                        epsilon: float = 1e-3) -> Any:
    from flowmesh.ops.nn_norm_ops import batch_normalization as normalize

    return normalize(x, mean, var, beta, gamma, epsilon)


def normalize_batch_in_training(x: Any, gamma: Any, beta: Any, reduction_axes: Any,
                                epsilon: float = 1e-3) -> tuple[Any, Any, Any]:
    """``(normalized x, mean, variance)`` over ``reduction_axes`` (``gamma``/``beta`` per
    the remaining axes, None for 1 / 0)."""
    from flowmesh.ops.nn_norm_ops import moments

    x = convert_to_tensor(x)
    axes = sorted(a % x.shape.rank for a in reduction_axes)
    mean, variance = moments(x, axes, keep_dims=True)
    kept = [d for i, d in enumerate(x.shape.as_list()) if i not in axes]
    broadcast = [1 if i in axes else -1 for i in range(x.shape.rank)]
    normed = (x - mean) * math_ops.rsqrt(variance + epsilon)
    if gamma is not None:
        normed = normed * array_ops.reshape(gamma, broadcast) if kept else normed * gamma
    if beta is not None:
        normed = normed + array_ops.reshape(beta, broadcast) if kept else normed + beta
    return normed, array_ops.squeeze(mean, axes), array_ops.squeeze(variance, axes)


def bias_add(x: Any, bias: Any, data_format: str | None = None) -> Any:
    """``x + bias`` over the channel axis (``bias`` of rank 1 or ``rank(x) - 1``)."""
    fmt = _data_format(data_format)
    x, bias = convert_to_tensor(x), convert_to_tensor(bias)
    if bias.shape.rank == 1:
        if fmt == "channels_last":
            return nn_ops.bias_add(x, bias)
        return x + array_ops.reshape(bias, [1, -1] + [1] * (x.shape.rank - 2))
    dims = bias.shape.as_list()
    if fmt == "channels_first":  # tf-keras reshapes (not transposes) the bias channels first
        return x + array_ops.reshape(bias, [1, dims[-1]] + dims[:-1])
    return x + array_ops.expand_dims(bias, 0)


# --- convolution and pooling --------------------------------------------------------------
def _tuple(value: Any, n: int) -> list[int]:
    return [int(value)] * n if isinstance(value, int) else [int(v) for v in value]


def _causal(x: Any, kernel: Any, dilation: int) -> Any:
    left = dilation * (int(kernel.shape[0]) - 1)
    return manip_ops.pad(x, [[0, 0], [left, 0], [0, 0]])


def conv1d(x: Any, kernel: Any, strides: int = 1, padding: str = "valid", data_format: str | None = None,
           dilation_rate: int = 1) -> Any:
    fmt = _data_format(data_format)
    if padding == "causal":
        if fmt != "channels_last":
            raise ValueError("K.conv1d with padding='causal' needs channels_last")
        x, padding = _causal(x, kernel, dilation_rate), "valid"
    return nn_conv_ops.conv1d(x, kernel, strides, padding.upper(), data_format="NWC" if fmt == "channels_last"
                              else "NCW", dilations=dilation_rate)


def conv2d(x: Any, kernel: Any, strides: Any = (1, 1), padding: str = "valid", data_format: str | None = None,
           dilation_rate: Any = (1, 1)) -> Any:
    fmt = "NHWC" if _data_format(data_format) == "channels_last" else "NCHW"
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
    fmt = "NHWC" if _data_format(data_format) == "channels_last" else "NCHW"
    full = _full_output_shape(x, output_shape)
    out = nn_conv_ops.conv2d_transpose(x, kernel, full, _tuple(strides, 2), padding.upper(), data_format=fmt,
                                       dilations=_tuple(dilation_rate, 2))
    if isinstance(output_shape, (list, tuple)):
        out.set_shape(full if isinstance(full, list) else list(output_shape))
    return out


def conv3d(x: Any, kernel: Any, strides: Any = (1, 1, 1), padding: str = "valid", data_format: str | None = None,
           dilation_rate: Any = (1, 1, 1)) -> Any:
    from flowmesh.ops.nn_conv3d_ops import conv3d as conv3d_op

    last = _data_format(data_format) == "channels_last"
    strides, dilations = _tuple(strides, 3), _tuple(dilation_rate, 3)
    return conv3d_op(x, kernel, [1] + strides + [1] if last else [1, 1] + strides, padding.upper(),
                     data_format="NDHWC" if last else "NCDHW",
                     dilations=[1] + dilations + [1] if last else [1, 1] + dilations)


def depthwise_conv2d(x: Any, depthwise_kernel: Any, strides: Any = (1, 1), padding: str = "valid",
                     data_format: str | None = None, dilation_rate: Any = (1, 1)) -> Any:
    from flowmesh.ops.depthwise_conv_ops import depthwise_conv2d as depthwise

    last = _data_format(data_format) == "channels_last"
    strides = _tuple(strides, 2)
    return depthwise(x, depthwise_kernel, [1] + strides + [1] if last else [1, 1] + strides, padding.upper(),
                     rate=_tuple(dilation_rate, 2), data_format="NHWC" if last else "NCHW")


def separable_conv2d(x: Any, depthwise_kernel: Any, pointwise_kernel: Any, strides: Any = (1, 1),
                     padding: str = "valid", data_format: str | None = None, dilation_rate: Any = (1, 1)) -> Any:
    from flowmesh.ops.depthwise_conv_ops import separable_conv2d as separable

    last = _data_format(data_format) == "channels_last"
    strides = _tuple(strides, 2)
    return separable(x, depthwise_kernel, pointwise_kernel, [1] + strides + [1] if last else [1, 1] + strides,
                     padding.upper(), rate=_tuple(dilation_rate, 2), data_format="NHWC" if last else "NCHW")


def pool2d(x: Any, pool_size: Any, strides: Any = (1, 1), padding: str = "valid", data_format: str | None = None,
           pool_mode: str = "max") -> Any:
    if pool_mode not in ("max", "avg"):
        raise ValueError(f"Invalid pool_mode: {pool_mode}. Expected one of 'max', 'avg'.")
    pool = nn_conv_ops.max_pool if pool_mode == "max" else nn_conv_ops.avg_pool
    fmt = "NHWC" if _data_format(data_format) == "channels_last" else "NCHW"
    return pool(x, _tuple(pool_size, 2), _tuple(strides, 2), padding.upper(), data_format=fmt)


def pool3d(x: Any, pool_size: Any, strides: Any = (1, 1, 1), padding: str = "valid",
           data_format: str | None = None, pool_mode: str = "max") -> Any:
    from flowmesh.ops import nn_pool3d_ops

    if pool_mode not in ("max", "avg"):
        raise ValueError(f"Invalid pool_mode: {pool_mode}. Expected one of 'max', 'avg'.")
    pool = nn_pool3d_ops.max_pool3d if pool_mode == "max" else nn_pool3d_ops.avg_pool3d
    fmt = "NDHWC" if _data_format(data_format) == "channels_last" else "NCDHW"
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

    last = _data_format(data_format) == "channels_last"
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
    if _data_format(data_format) == "channels_first":
        return manip_ops.pad(x, [[0, 0], [0, 0]] + pads)
    return manip_ops.pad(x, [[0, 0]] + pads + [[0, 0]])


def spatial_3d_padding(x: Any, padding: Any = ((1, 1), (1, 1), (1, 1)), data_format: str | None = None) -> Any:
    return spatial_2d_padding(x, padding, data_format)


def resize_images(x: Any, height_factor: int, width_factor: int, data_format: str,
                  interpolation: str = "nearest") -> Any:
    """Rows and columns scaled by integer factors (``nearest``: repeated; ``bilinear``:
    TensorFlow 2's half-pixel bilinear resize)."""
    from flowmesh.keras.backend_math import repeat_elements

    first = _data_format(data_format) == "channels_first"
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

    axes = (2, 3, 4) if _data_format(data_format) == "channels_first" else (1, 2, 3)
    for axis, factor in zip(axes, (depth_factor, height_factor, width_factor)):
        x = repeat_elements(x, factor, axis)
    return x


# --- random tensors -----------------------------------------------------------------------
def _seed(seed: int | None) -> int:
    return np.random.randint(10_000_000) if seed is None else seed


def random_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                  seed: int | None = None) -> Any:
    from flowmesh.ops.random_ops import random_normal as normal

    return normal(shape, mean, stddev, dtype=dtype or _backend().floatx(), seed=_seed(seed))


def random_uniform(shape: Any, minval: float = 0.0, maxval: float = 1.0, dtype: Any = None,
                   seed: int | None = None) -> Any:
    from flowmesh.ops.random_ops import random_uniform as uniform

    return uniform(shape, minval, maxval, dtype=dtype or _backend().floatx(), seed=_seed(seed))


def truncated_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                     seed: int | None = None) -> Any:
    from flowmesh.ops.random_ops import truncated_normal as truncated

    return truncated(shape, mean, stddev, dtype=dtype or _backend().floatx(), seed=_seed(seed))


def random_bernoulli(shape: Any, p: float = 0.0, dtype: Any = None, seed: int | None = None) -> Any:
    """Ones with probability ``p``, zeros otherwise."""
    dtype = dtype or _backend().floatx()
    draws = random_uniform(shape, dtype=dtype, seed=seed)
    return cast_ops.cast(math_ops.less_equal(draws, p), dtype)


random_binomial = random_bernoulli


def random_normal_variable(shape: Any, mean: float, scale: float, dtype: Any = None, name: str | None = None,
                           seed: int | None = None) -> Any:
    rng = np.random.default_rng(_seed(seed))
    return _backend().variable(rng.normal(mean, scale, shape), dtype=dtype, name=name)


def random_uniform_variable(shape: Any, low: float, high: float, dtype: Any = None, name: str | None = None,
                            seed: int | None = None) -> Any:
    rng = np.random.default_rng(_seed(seed))
    return _backend().variable(rng.uniform(low, high, shape), dtype=dtype, name=name)


# --- control: learning phase, switch, loops -----------------------------------------------
def switch(condition: Any, then_expression: Any, else_expression: Any) -> Any:
    """``then_expression`` where ``condition`` holds (a scalar picks a branch with
    ``tf.cond``; a tensor condition selects element-wise, broadcast to the expressions)."""
    from flowmesh.ops.select_ops import where

    condition = convert_to_tensor(condition)
    if condition.dtype != dtypes.bool:
        condition = cast_ops.cast(condition, dtypes.bool)
    if condition.shape.rank == 0:
        then_fn = then_expression if callable(then_expression) else (lambda: then_expression)
        else_fn = else_expression if callable(else_expression) else (lambda: else_expression)
        return _backend().smart_cond(condition, then_fn, else_fn)
    then_value = then_expression() if callable(then_expression) else convert_to_tensor(then_expression)
    else_value = else_expression() if callable(else_expression) else convert_to_tensor(else_expression)
    cond_rank, expr_rank = condition.shape.rank, then_value.shape.rank
    if cond_rank is not None and expr_rank is not None and cond_rank < expr_rank:
        condition = array_ops.reshape(condition, array_ops.concat(
            [array_ops.shape(condition), [1] * (expr_rank - cond_rank)], 0))
        condition = math_ops.logical_and(condition, array_ops.ones_like(then_value, dtype=dtypes.bool))
    return where(condition, then_value, else_value)


def in_train_phase(x: Any, alt: Any, training: Any = None) -> Any:
    """``x`` in the training phase, else ``alt`` (callables are called only when chosen)."""
    if training is None:
        training = _backend().learning_phase()
    if training is True or (isinstance(training, int) and training == 1):
        return x() if callable(x) else x
    if training is False or (isinstance(training, int) and training == 0):
        return alt() if callable(alt) else alt
    return switch(training, x, alt)


def in_test_phase(x: Any, alt: Any, training: Any = None) -> Any:
    return in_train_phase(alt, x, training=training)


@contextlib.contextmanager
def learning_phase_scope(value: int) -> Iterator[None]:
    """Fixes the learning phase (0 or 1) of the default graph inside the block."""
    if value not in (0, 1):
        raise ValueError("Expected learning phase to be 0 or 1.")
    from flowmesh.core.graph import get_default_graph

    phases = _backend()._LEARNING_PHASES
    graph = get_default_graph()
    previous = phases.get(graph)
    _backend().set_learning_phase(value)
    try:
        yield
    finally:
        if previous is None:
            phases.pop(graph, None)
        else:
            phases[graph] = previous


def map_fn(fn: Any, elems: Any, name: str | None = None, dtype: Any = None) -> Any:
    from flowmesh.ops.functional_ops import map_fn as map_op

    return map_op(fn, elems, name=name, dtype=dtype)


def foldl(fn: Any, elems: Any, initializer: Any = None, name: str | None = None) -> Any:
    from flowmesh.ops.functional_ops import foldl as fold

    return fold(fn, elems, initializer=initializer, name=name)


def foldr(fn: Any, elems: Any, initializer: Any = None, name: str | None = None) -> Any:
    from flowmesh.ops.functional_ops import foldr as fold

    return fold(fn, elems, initializer=initializer, name=name)


def rnn(step_function: Any, inputs: Any, initial_states: Any, go_backwards: bool = False, mask: Any = None,
        constants: Any = None, unroll: bool = False, input_length: Any = None, time_major: bool = False,
        zero_output_for_mask: bool = False, return_all_outputs: bool = True) -> tuple[Any, Any, list[Any]]:
    """Iterates ``step_function(inputs_t, states + constants) -> (output_t, new_states)``
    over the time axis of ``inputs`` (a ``While`` loop); returns ``(last_output, outputs,
    new_states)``. Where ``mask`` ``[batch, time]`` is false the states are kept and the
    output repeats the previous one (zeros with ``zero_output_for_mask``)."""
    from flowmesh.ops import select_ops
    from flowmesh.rnn.dynamic_rnn import rnn_loop

    x = convert_to_tensor(inputs)
    rank = x.shape.rank
    if not time_major:
        x = array_ops.transpose(x, [1, 0] + list(range(2, rank)))
    keep = None
    if mask is not None:
        keep = cast_ops.cast(mask, dtypes.bool)
        keep = array_ops.transpose(keep, [1, 0]) if not time_major else keep
    if go_backwards:
        x = manip_ops.reverse(x, [0])
        keep = manip_ops.reverse(keep, [0]) if keep is not None else None
    extra = list(constants or [])
    states = tuple(convert_to_tensor(s) for s in initial_states)

    def plain(x_t: Any, state: Any) -> tuple[Any, Any]:
        output, new_states = step_function(x_t, list(state) + extra)
        return output, tuple(new_states)

    def masked(step_inputs: Any, state: Any) -> tuple[Any, Any]:
        x_t, keep_t = step_inputs
        previous, *old = state
        output, new_states = step_function(x_t, list(old) + extra)
        output = select_ops.where(keep_t, output, array_ops.zeros_like(output) if zero_output_for_mask
                                  else previous)
        kept = [select_ops.where(keep_t, new, prev) for new, prev in zip(new_states, old)]
        return output, (output, *kept)

    if keep is None:
        outputs, final = rnn_loop(plain, x, [x], states, None, 32, False)
        final = list(final)
    else:
        probe, _ = step_function(x[0], list(states) + extra)  # the output's shape and dtype
        first = array_ops.zeros_like(probe)
        outputs, final = rnn_loop(masked, (x, keep), [x, keep], (first, *states), None, 32, False)
        final = list(final[1:])
    last = outputs[-1]
    if not return_all_outputs:
        outputs = array_ops.expand_dims(last, 0)
    if not time_major:
        outputs = array_ops.transpose(outputs, [1, 0] + list(range(2, outputs.shape.rank)))
    return last, outputs, final


# --- CTC ----------------------------------------------------------------------------------
def ctc_label_dense_to_sparse(labels: Any, label_lengths: Any) -> Any:
    """The first ``label_lengths[i]`` labels of each row of ``labels`` as a SparseTensor
    of dense shape ``labels.shape``."""
    from flowmesh.core.sparse_tensor import SparseTensor
    from flowmesh.ops.nd_index_ops import gather_nd
    from flowmesh.ops.select_ops import where

    labels = convert_to_tensor(labels)
    dims = array_ops.shape(labels)
    keep = manip_ops.sequence_mask(label_lengths, maxlen=dims[1])
    indices = where(keep)
    values = gather_nd(labels, indices)
    return SparseTensor(indices, values, cast_ops.cast(dims, dtypes.int64))


def ctc_batch_cost(y_true: Any, y_pred: Any, input_length: Any, label_length: Any) -> Any:
    """CTC loss per sample ``[batch, 1]`` of softmax outputs ``y_pred`` ``[batch, time, classes]``."""
    from flowmesh.ops.ctc_ops import ctc_loss

    label_length = cast_ops.cast(array_ops.squeeze(label_length, [-1]), dtypes.int32)
    input_length = cast_ops.cast(array_ops.squeeze(input_length, [-1]), dtypes.int32)
    sparse = ctc_label_dense_to_sparse(cast_ops.cast(y_true, dtypes.int32), label_length)
    eps = _backend().epsilon()
    logits = math_ops.log(array_ops.transpose(y_pred, [1, 0, 2]) + eps)
    return array_ops.expand_dims(ctc_loss(labels=sparse, inputs=logits, sequence_length=input_length), 1)


def ctc_decode(y_pred: Any, input_length: Any, greedy: bool = True, beam_width: int = 100,
               top_paths: int = 1) -> tuple[list[Any], Any]:
    """Decoded label sequences (dense, padded with -1) and their log probabilities."""
    from flowmesh.core.sparse_tensor import SparseTensor
    from flowmesh.ops import ctc_decode_ops
    from flowmesh.ops.sparse_ops import sparse_tensor_to_dense

    dims = array_ops.shape(y_pred)
    logits = math_ops.log(array_ops.transpose(y_pred, [1, 0, 2]) + _backend().epsilon())
    input_length = cast_ops.cast(input_length, dtypes.int32)
    if greedy:
        decoded, log_prob = ctc_decode_ops.ctc_greedy_decoder(logits, input_length)
    else:
        decoded, log_prob = ctc_decode_ops.ctc_beam_search_decoder(logits, input_length, beam_width=beam_width,
                                                                   top_paths=top_paths)
    shape = cast_ops.cast(array_ops.stack([dims[0], dims[1]]), dtypes.int64)
    dense = [sparse_tensor_to_dense(SparseTensor(st.indices, st.values, shape), default_value=-1)
             for st in decoded]
    return dense, log_prob


__all__ = [
    "backend", "batch_normalization", "bias_add", "binary_crossentropy",
    "binary_focal_crossentropy", "categorical_crossentropy", "categorical_focal_crossentropy",
    "conv1d", "conv2d", "conv2d_transpose", "conv3d", "ctc_batch_cost", "ctc_decode",
    "ctc_label_dense_to_sparse", "depthwise_conv2d", "dropout", "elu", "foldl", "foldr",
    "hard_sigmoid", "in_test_phase", "in_top_k", "in_train_phase", "l2_normalize",
    "learning_phase_scope", "local_conv1d", "local_conv2d", "map_fn", "normalize_batch_in_training",
    "pool2d", "pool3d", "random_bernoulli", "random_binomial", "random_normal",
    "random_normal_variable", "random_uniform", "random_uniform_variable", "relu", "resize_images", "rnn",
    "resize_volumes", "separable_conv2d", "sigmoid", "softmax", "softplus", "softsign",
    "sparse_categorical_crossentropy", "spatial_2d_padding", "spatial_3d_padding", "switch", "tanh",
    "temporal_padding", "truncated_normal",
]
