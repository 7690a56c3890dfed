"""Normalization: fused_batch_norm (training and inference), batch_normalization, moments,
l2_normalize and l2_loss.

``FusedBatchNormV3`` mirrors TensorFlow's op: inputs ``x, scale, offset, mean, variance``;
outputs ``y, batch_mean, batch_variance`` and three reserve spaces. In training the
returned variance is the unbiased (Bessel-corrected) batch variance, blended with the
given running statistics when ``exponential_avg_factor != 1``; ``y`` uses the biased
variance. The reserve spaces are those of TensorFlow's CPU kernel: the batch mean, the
biased batch variance and a scalar zero (in inference the given mean and variance, where
TensorFlow leaves them unwritten). Its gradient op ``FusedBatchNormGradV3`` is differentiated by rebuilding the
backward pass from elementwise ops, so second-order gradients work (TensorFlow does
the same).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, math_ops
from flowmesh.ops._builders import FLOATS, check_dtype, make_op, make_tensor
from flowmesh.ops.gradients_impl import gradients
from flowmesh.ops.reduction_ops import reduce_mean, reduce_sum

BN_FORMATS = ("NHWC", "NCHW", "NDHWC", "NCDHW")
_HALF = (dtypes.float16, dtypes.bfloat16)


def bn_channel_axis(data_format: str) -> int:
    """The channel axis of ``data_format`` (last for N...C, 1 for NC...)."""
    return -1 if data_format.endswith("C") else 1


def bn_reduce_axes(data_format: str, rank: int) -> list[int]:
    """The axes batch statistics are computed over: every axis but the channel axis."""
    channel = bn_channel_axis(data_format) % rank
    return [a for a in range(rank) if a != channel]


# --- FusedBatchNormV3 ----------------------------------------------------------------------
def _vector_shape(t: Tensor, what: str, channels: int | None, allow_empty: bool) -> None:
    if t.shape.rank not in (None, 1):
        raise InvalidArgumentError(f"{what} must be 1-dimensional, got shape {t.shape}")
    n = t.shape.as_list()[0] if t.shape.rank == 1 else None
    if n is not None and channels is not None and n != channels and not (allow_empty and n == 0):
        raise InvalidArgumentError(f"{what} must have {channels} elements (the channel count), got {n}")


def _fused_bn_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, scale, offset, mean, variance = inputs
    fmt = attrs["data_format"]
    rank = len(fmt)
    if x.shape.rank not in (None, rank):
        raise InvalidArgumentError(f"x must be {rank}-dimensional for data_format {fmt}, got shape {x.shape}")
    channels = x.shape.as_list()[bn_channel_axis(fmt)] if x.shape.rank == rank else None
    for t, what in ((scale, "scale"), (offset, "offset")):
        _vector_shape(t, what, channels, allow_empty=False)
    running = not attrs["is_training"] or attrs["exponential_avg_factor"] != 1.0
    for t, what in ((mean, "mean"), (variance, "variance")):
        _vector_shape(t, what, channels, allow_empty=not running)
    for t in (scale, offset, mean, variance):
        if t.dtype != scale.dtype:
            raise TypeError(f"FusedBatchNormV3: scale/offset/mean/variance must share a dtype, "
                            f"got {scale.dtype.name} and {t.dtype.name}")
    vec = (scale.dtype, TensorShape([channels]))
    return [(x.dtype, x.shape), vec, vec, vec, vec, (scale.dtype, TensorShape(None))]


def _fused_bn_grad(op: Any, dy: Tensor, *_: Any) -> list:
    x, scale = op.inputs[0], op.inputs[1]
    if op.attrs["is_training"]:
        saved = [op.outputs[3], op.outputs[4], op.outputs[5]]
    else:
        saved = [op.inputs[3], op.inputs[4], op.inputs[4]]
    attrs = {k: op.attrs[k] for k in ("epsilon", "data_format", "is_training")}
    grads = make_op("FusedBatchNormGradV3", [dy, x, scale] + saved, attrs).outputs
    return [grads[0], grads[1], grads[2], None, None]


def _fused_bn_grad_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    dy, x, scale = inputs[:3]
    vec = (scale.dtype, scale.shape)
    empty = (scale.dtype, TensorShape([0]))
    return [(x.dtype, x.shape), vec, vec, empty, empty]


def batch_norm_backward(dy: Tensor, x: Tensor, scale: Tensor, mean: Tensor, variance: Tensor,
                        epsilon: float, data_format: str, is_training: bool) -> list[Tensor]:
    """The gradients of fused batch norm w.r.t. ``x, scale, offset`` from elementwise ops.

    In training the statistics are recomputed from ``x`` (``mean``/``variance`` unused).
    """
    rank = x.shape.rank if x.shape.rank is not None else len(data_format)
    axes = bn_reduce_axes(data_format, rank)
    x_dtype = x.dtype
    if x_dtype in _HALF:
        x, dy = cast_ops.cast(x, dtypes.float32), cast_ops.cast(dy, dtypes.float32)
    channel_shape = [1] * rank
    channel_shape[bn_channel_axis(data_format)] = -1
    scale_b = array_ops.reshape(scale, channel_shape)
    if is_training:
        mean_x = reduce_mean(x, axes, keepdims=True)
        var_x = reduce_mean(math_ops.squared_difference(x, array_ops.stop_gradient(mean_x)), axes, keepdims=True)
        x_offset = x - mean_x
        inner = reduce_mean(dy * x_offset, axes, keepdims=True)
        rstd = math_ops.rsqrt(var_x + epsilon)
        dx = scale_b * rstd * (dy - reduce_mean(dy, axes, keepdims=True)
                               - math_ops.reciprocal(var_x + epsilon) * inner * x_offset)
        dscale = array_ops.reshape(rstd, [-1]) * reduce_sum(dy * x_offset, axes)
    else:
        rstd = math_ops.rsqrt(array_ops.reshape(variance, channel_shape) + epsilon)
        dscale = reduce_sum(dy * (x - array_ops.reshape(mean, channel_shape)) * rstd, axes)
        dx = dy * scale_b * rstd
    return [cast_ops.cast(dx, x_dtype), dscale, reduce_sum(dy, axes)]


def _fused_bn_grad_grad(op: Any, *grads: Tensor) -> list:
    dy, x, scale, mean, variance = op.inputs[:5]
    outs = batch_norm_backward(dy, x, scale, mean, variance, op.attrs["epsilon"],
                               op.attrs["data_format"], op.attrs["is_training"])
    pairs = [(o, g) for o, g in zip(outs, grads[:3]) if g is not None]
    if not pairs:
        return [None] * 6
    d_dy, d_x, d_scale = gradients([o for o, _ in pairs], [dy, x, scale], grad_ys=[g for _, g in pairs])
    return [d_dy, d_x, d_scale, None, None, None]


register_op("FusedBatchNormV3", _fused_bn_shape, grad=_fused_bn_grad)
register_op("FusedBatchNormGradV3", _fused_bn_grad_shape, grad=_fused_bn_grad_grad)


def _bn_inputs(x: Any, scale: Any, offset: Any, op_type: str) -> tuple[Tensor, Tensor, Tensor]:
    xt = convert_to_tensor(x, name="input")
    check_dtype(op_type, xt, FLOATS, "x")
    param_dtype = dtypes.float32 if xt.dtype in _HALF else xt.dtype
    s = convert_to_tensor(scale, dtype=param_dtype, name="scale")
    o = convert_to_tensor(offset, dtype=param_dtype, name="offset")
    return xt, s, o


def fused_batch_norm(x: Any, scale: Any, offset: Any, mean: Any = None, variance: Any = None,
                     epsilon: float = 0.001, data_format: str = "NHWC", is_training: bool = True,
                     name: str | None = None, exponential_avg_factor: float = 1.0
                     ) -> tuple[Tensor, Tensor, Tensor]:
    """Batch normalization of a 4-D (or 5-D) tensor in one op.

    Args:
        x: ``NHWC``/``NCHW`` (or ``NDHWC``/``NCDHW``) input; float16/bfloat16 inputs use
            float32 ``scale``/``offset``/statistics.
        scale, offset: 1-D, one entry per channel.
        mean, variance: population statistics (inference), running statistics (training
            with ``exponential_avg_factor != 1``), else None.
        epsilon: added to the variance.
        is_training: normalize with batch statistics (True) or ``mean``/``variance``.
        exponential_avg_factor: weight of the batch statistics in the returned ones.

    Returns:
        ``(y, batch_mean, batch_var)``; in training ``batch_var`` is the unbiased variance
        (blended with ``variance`` per ``exponential_avg_factor``); in inference the given
        ``mean``/``variance`` are returned.

    Raises:
        InvalidArgumentError: bad data_format, ranks or channel counts; inference without
            ``mean``/``variance``.
    """
    if data_format not in BN_FORMATS:
        raise InvalidArgumentError(
            f"FusedBatchNormV3: invalid data_format {data_format!r}; expected one of {', '.join(BN_FORMATS)}")
    if not is_training and (mean is None or variance is None):
        raise InvalidArgumentError("fused_batch_norm: inference (is_training=False) needs mean and variance")
    if is_training and exponential_avg_factor != 1.0 and (mean is None or variance is None):
        raise InvalidArgumentError("fused_batch_norm: exponential_avg_factor != 1 needs the running mean and variance")
    with name_scope(name, "FusedBatchNormV3", [x, scale, offset]) as scope:
        xt, s, o = _bn_inputs(x, scale, offset, "FusedBatchNormV3")
        m = convert_to_tensor([] if mean is None else mean, dtype=s.dtype, name="mean")
        v = convert_to_tensor([] if variance is None else variance, dtype=s.dtype, name="variance")
        attrs = {"epsilon": float(epsilon), "data_format": data_format, "is_training": bool(is_training),
                 "exponential_avg_factor": float(exponential_avg_factor)}
        op = make_op("FusedBatchNormV3", [xt, s, o, m, v], attrs, name=scope)
        return op.outputs[0], op.outputs[1], op.outputs[2]


def batch_normalization(x: Any, mean: Any, variance: Any, offset: Any, scale: Any,
                        variance_epsilon: float, name: str | None = None) -> Tensor:
    """``scale * (x - mean) / sqrt(variance + variance_epsilon) + offset`` (broadcasting).

    Args:
        x: the input.
        mean, variance: statistics broadcastable to ``x``.
        offset, scale: broadcastable to ``x``, or None (0 and 1).
        variance_epsilon: added to the variance.

    Returns:
        The normalized tensor, in ``x``'s dtype.
    """
    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]) as scope:
        xt = convert_to_tensor(x, name="x")
        m = convert_to_tensor(mean, name="mean")
        inv = math_ops.rsqrt(convert_to_tensor(variance, dtype=m.dtype) + variance_epsilon)
        if scale is not None:
            inv = inv * convert_to_tensor(scale, dtype=m.dtype)
        shift = (convert_to_tensor(offset, dtype=m.dtype) - m * inv) if offset is not None else -m * inv
        return math_ops.add(xt * cast_ops.cast(inv, xt.dtype), cast_ops.cast(shift, xt.dtype), name=scope)


# --- moments ---------------------------------------------------------------------------------
def _axes_list(axes: Any) -> list[int]:
    return [int(axes)] if isinstance(axes, int) else [int(a) for a in axes]


def moments(x: Any, axes: Any, shift: Any = None, name: str | None = None, keep_dims: bool | None = None,
            keepdims: bool | None = None) -> tuple[Tensor, Tensor]:
    """Mean and (biased) variance of ``x`` over ``axes``; float16 is accumulated in float32.

    Args:
        x: the input.
        axes: int or list of axes to reduce.
        shift: unused (as in TensorFlow 2).
        keepdims: keep the reduced axes with size 1 (``keep_dims`` is the TF1 spelling).

    Returns:
        ``(mean, variance)``. Like TensorFlow, the variance is computed against
        ``stop_gradient(mean)``, which is exact for first derivatives.
    """
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "moments", [x, axes]):
        xt = convert_to_tensor(x, name="x")
        y = cast_ops.cast(xt, dtypes.float32) if xt.dtype == dtypes.float16 else xt
        ax = _axes_list(axes)
        mean = reduce_mean(y, ax, keepdims=True, name="mean")
        variance = reduce_mean(math_ops.squared_difference(y, array_ops.stop_gradient(mean)), ax,
                               keepdims=True, name="variance")
        if not keep:
            mean, variance = array_ops.squeeze(mean, ax), array_ops.squeeze(variance, ax)
        if xt.dtype == dtypes.float16:
            return cast_ops.cast(mean, dtypes.float16), cast_ops.cast(variance, dtypes.float16)
        return mean, variance


def weighted_moments(x: Any, axes: Any, frequency_weights: Any, name: str | None = None,
                     keep_dims: bool | None = None, keepdims: bool | None = None) -> tuple[Tensor, Tensor]:
    """Frequency-weighted mean and variance of ``x`` over ``axes``."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "weighted_moments", [x, frequency_weights, axes]):
        xt = convert_to_tensor(x, name="x")
        w = convert_to_tensor(frequency_weights, dtype=xt.dtype, name="frequency_weights")
        ax = _axes_list(axes)
        weighted_sum = reduce_sum(w * xt, ax, keepdims=True)
        weight_sum = reduce_sum(w + array_ops.zeros_like(xt), ax, keepdims=True)
        divisor = math_ops.reciprocal(weight_sum)
        mean = weighted_sum * divisor
        variance = reduce_sum(w * math_ops.squared_difference(xt, mean), ax, keepdims=True) * divisor
        if not keep:
            mean, variance = array_ops.squeeze(mean, ax), array_ops.squeeze(variance, ax)
        return mean, variance


def normalize_moments(counts: Any, mean_ss: Any, variance_ss: Any, shift: Any,
                      name: str | None = None) -> tuple[Tensor, Tensor]:
    """Mean and variance from sufficient statistics (counts, sum, sum of squares, shift)."""
    with name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        divisor = math_ops.reciprocal(convert_to_tensor(counts), name="divisor")
        if shift is not None:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="shifted_mean")
            mean = math_ops.add(shifted_mean, shift, name="mean")
        else:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="mean")
            mean = shifted_mean
        variance = math_ops.subtract(math_ops.multiply(variance_ss, divisor),
                                     math_ops.square(shifted_mean), name="variance")
        return mean, variance


# --- l2 ------------------------------------------------------------------------------------------
register_op("L2Loss", lambda inputs, attrs: [(inputs[0].dtype, TensorShape([]))],
            grad=lambda op, g: [op.inputs[0] * g])


def l2_loss(t: Any, name: str | None = None) -> Tensor:
    """``sum(t ** 2) / 2``: a scalar of ``t``'s dtype.

    Raises:
        TypeError: ``t`` is not floating.
    """
    x = convert_to_tensor(t, name="t")
    check_dtype("L2Loss", x, FLOATS, "t")
    return make_tensor("L2Loss", [x], name=name or "L2Loss")


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: str | None = None,
                 dim: Any = None) -> Tensor:
    """``x / sqrt(max(sum(x ** 2, axis), epsilon))``.

    Args:
        x: the input.
        axis: axis or axes to normalize over (None: all; ``dim`` is the TF1 spelling).
        epsilon: lower bound of the squared norm.

    Returns:
        A tensor of the shape and dtype of ``x``.
    """
    axis = dim if axis is None else axis
    with name_scope(name, "l2_normalize", [x]) as scope:
        xt = convert_to_tensor(x, name="x")
        square_sum = reduce_sum(math_ops.square(xt), axis, keepdims=True)
        inv_norm = math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
        return math_ops.multiply(xt, inv_norm, name=scope)


# --- local response normalization -----------------------------------------------------------
LRN_DTYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32)


def _lrn_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x = inputs[0]
    if x.shape.rank not in (None, 4):
        raise InvalidArgumentError(f"LRN input must be 4-dimensional, got shape {x.shape}")
    return [(x.dtype, x.shape)]


def _lrn_grad_grad(op: Any, *grads: Any) -> list:
    raise LookupError(
        f"No gradient defined for operation '{op.name}' (op type: LRNGrad): second derivatives "
        "of local response normalization are not implemented (nor are they in TensorFlow).")


register_op("LRN", _lrn_shape, grad=lambda op, g: [
    make_tensor("LRNGrad", [g, op.inputs[0], op.outputs[0]], dict(op.attrs))])
register_op("LRNGrad", lambda inputs, attrs: [(inputs[1].dtype, inputs[1].shape)], grad=_lrn_grad_grad)


def local_response_normalization(input: Any, depth_radius: int = 5, bias: float = 1.0,  # noqa: A002
                                 alpha: float = 1.0, beta: float = 0.5, name: str | None = None) -> Tensor:
    """``input / (bias + alpha * sqr_sum) ** beta`` where ``sqr_sum`` sums the squares of the
    ``2 * depth_radius + 1`` neighbouring channels (last dimension) of each element.

    Args:
        input: 4-D float16/bfloat16/float32 tensor (channels last).
        depth_radius: half-width of the channel window (>= 0).
        bias, alpha, beta: the normalization constants.

    Returns:
        A tensor of the shape and dtype of ``input``.

    Raises:
        InvalidArgumentError: ``input`` is not 4-D or ``depth_radius`` < 0.
        TypeError: unsupported dtype (TensorFlow's LRN has no float64 kernel).
    """
    if int(depth_radius) < 0:
        raise InvalidArgumentError(f"LRN: depth_radius must be >= 0, got {depth_radius}")
    x = convert_to_tensor(input, name="input")
    check_dtype("LRN", x, LRN_DTYPES, "input")
    attrs = {"depth_radius": int(depth_radius), "bias": float(bias), "alpha": float(alpha), "beta": float(beta)}
    return make_tensor("LRN", [x], attrs, name=name or "LRN")


lrn = local_response_normalization


__all__ = [
    "batch_normalization", "fused_batch_norm", "l2_loss", "l2_normalize", "local_response_normalization",
    "lrn", "moments",
    "normalize_moments", "weighted_moments",
]
