"""``tf.nn`` functions and raw-op spellings built on the convolution, pooling and top-k ops
and plain math (no ops of their own; gradients come from the composition): 1-D pooling and
transposed convolution (as TensorFlow does it: a height-1 image), the TensorFlow 2 N-d
spellings ``max_pool_v2 avg_pool_v2 convolution conv_transpose pool`` (1-D and 2-D), the
depthwise backprops, ``approx_max_k``/``approx_min_k`` (exact), ``log_poisson_loss``,
``sufficient_statistics``, ``batch_norm_with_global_normalization``,
``compute_average_loss``; and the TensorFlow 1.x top-level ``tf.conv`` (the generic
convolution over 2 or 3 spatial dimensions), ``tf.conv2d_backprop_filter_v2`` /
``tf.conv2d_backprop_input_v2`` (the filter or input itself instead of its sizes) and
``tf.approx_top_k`` (exact top-k: TensorFlow's CPU build has no kernel for it, and an exact
answer meets every ``recall_target``)."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.errors import InvalidArgumentError, UnimplementedError
from flowmesh.ops import array_ops, cast_ops, math_ops, reduction_ops
from flowmesh.ops._builders import make_tensor
from flowmesh.ops.depthwise_conv_ops import _grouped_filter
from flowmesh.ops.gather_ops import gather
from flowmesh.ops.math_ops import negative
from flowmesh.ops.nn_conv3d_ops import conv3d
from flowmesh.ops.nn_conv_ops import (
    avg_pool,
    conv1d,
    conv2d,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    conv2d_transpose,
    conv_attrs,
    max_pool,
)
from flowmesh.ops.nn_impl import top_k
from flowmesh.ops.nn_norm_ops import batch_normalization
from flowmesh.ops.select_ops import where


def _one(value: Any, what: str) -> int:
    if isinstance(value, (list, tuple)):
        return int(value[1] if len(value) == 3 else value[0])
    return int(value)


def _pool1d(pool: Any, input: Any, ksize: Any, strides: Any, padding: Any, data_format: str,  # noqa: A002
            name: str | None) -> Tensor:
    nwc = data_format in ("NWC", "NHWC")
    axis = 1 if nwc else 2
    with name_scope(name, "pool1d", [input]):
        x = array_ops.expand_dims(convert_to_tensor(input), axis)
        k, s = _one(ksize, "ksize"), _one(strides, "strides")
        y = pool(x, [1, 1, k, 1] if nwc else [1, 1, 1, k], [1, 1, s, 1] if nwc else [1, 1, 1, s], padding,
                 "NHWC" if nwc else "NCHW")
        return array_ops.squeeze(y, [axis])


def max_pool1d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """Max pooling over the width of ``[batch, width, channels]``."""
    return _pool1d(max_pool, input, ksize, strides, padding, data_format, name or "MaxPool1d")


def avg_pool1d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """Average pooling over the width of ``[batch, width, channels]``."""
    return _pool1d(avg_pool, input, ksize, strides, padding, data_format, name or "AvgPool1D")


def _rank(x: Any, what: str) -> int:
    rank = convert_to_tensor(x).shape.rank
    if rank not in (3, 4):
        raise InvalidArgumentError(f"{what}: flowmesh supports 1-D and 2-D inputs (rank 3 or 4), got rank {rank}")
    return rank


def max_pool_v2(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str | None = None,  # noqa: A002
                name: str | None = None) -> Tensor:
    """``tf.nn.max_pool`` of TensorFlow 2 (1-D or 2-D by the input's rank)."""
    if _rank(input, "max_pool_v2") == 3:
        return max_pool1d(input, ksize, strides, padding, data_format or "NWC", name)
    return max_pool(input, ksize, strides, padding, data_format or "NHWC", name)


def avg_pool_v2(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str | None = None,  # noqa: A002
                name: str | None = None) -> Tensor:
    """``tf.nn.avg_pool`` of TensorFlow 2 (1-D or 2-D by the input's rank)."""
    if _rank(input, "avg_pool_v2") == 3:
        return avg_pool1d(input, ksize, strides, padding, data_format or "NWC", name)
    return avg_pool(input, ksize, strides, padding, data_format or "NHWC", name)


def pool(input: Any, window_shape: Any, pooling_type: str, padding: str, dilation_rate: Any = None,  # noqa: A002
         strides: Any = None, name: str | None = None, data_format: str | None = None,
         dilations: Any = None) -> Tensor:
    """N-d pooling (``"MAX"`` or ``"AVG"``) for 1-D and 2-D windows without dilation."""
    if any(int(d) != 1 for d in (dilation_rate or dilations or [1])):
        raise InvalidArgumentError("pool: dilation_rate other than 1 is not supported by flowmesh")
    fn = {"MAX": max_pool_v2, "AVG": avg_pool_v2}.get(pooling_type)
    if fn is None:
        raise ValueError(f"pooling_type must be 'MAX' or 'AVG', got {pooling_type!r}")
    window = list(window_shape)
    return fn(input, window, list(strides) if strides is not None else [1] * len(window), padding, data_format, name)


def convolution(input: Any, filter: Any, padding: Any, strides: Any = None, dilation_rate: Any = None,  # noqa: A002
                name: str | None = None, data_format: str | None = None, filters: Any = None,
                dilations: Any = None) -> Tensor:
    """N-d convolution for 1-D and 2-D inputs (``conv1d`` / ``conv2d``)."""
    f = filter if filter is not None else filters
    rate = dilation_rate if dilation_rate is not None else dilations
    if _rank(input, "convolution") == 3:
        return conv1d(input, f, (strides or [1])[0], padding, data_format=data_format,
                      dilations=(rate or [1])[0], name=name)
    s, d = list(strides or [1, 1]), list(rate or [1, 1])
    return conv2d(input, f, [1, *s, 1] if (data_format or "NHWC") == "NHWC" else [1, 1, *s], padding,
                  data_format=data_format or "NHWC",
                  dilations=[1, *d, 1] if (data_format or "NHWC") == "NHWC" else [1, 1, *d], name=name)


def conv1d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any, padding: str = "SAME",  # noqa: A002
                     data_format: str = "NWC", dilations: Any = None, name: str | None = None) -> Tensor:
    """The transpose of ``conv1d`` (``filters`` ``[width, out_channels, in_channels]``)."""
    nwc = data_format == "NWC"
    axis = 1 if nwc else 2
    with name_scope(name, "conv1d_transpose", [input, filters]):
        x = array_ops.expand_dims(convert_to_tensor(input), axis)
        f = array_ops.expand_dims(convert_to_tensor(filters, dtype=x.dtype), 0)
        shape = convert_to_tensor(output_shape, dtype=dtypes.int32)
        shape = array_ops.concat([shape[:axis], [1], shape[axis:]], 0)
        s, d = _one(strides, "strides"), _one(dilations or 1, "dilations")
        y = conv2d_transpose(x, f, shape, [1, 1, s, 1] if nwc else [1, 1, 1, s], padding,
                             "NHWC" if nwc else "NCHW", dilations=[1, 1, d, 1] if nwc else [1, 1, 1, d])
        return array_ops.squeeze(y, [axis])


def conv_transpose(input: Any, filters: Any, output_shape: Any, strides: Any, padding: str = "SAME",  # noqa: A002
                   data_format: str | None = None, dilations: Any = None, name: str | None = None) -> Tensor:
    """N-d transposed convolution for 1-D and 2-D inputs."""
    if _rank(input, "conv_transpose") == 3:
        return conv1d_transpose(input, filters, output_shape, strides, padding, data_format or "NWC", dilations, name)
    return conv2d_transpose(input, filters, output_shape, strides, padding, data_format or "NHWC", name,
                            dilations=dilations)


def depthwise_conv2d_native_backprop_input(input_sizes: Any, filter: Any, out_backprop: Any,  # noqa: A002
                                           strides: Any, padding: Any, data_format: str = "NHWC",
                                           dilations: Any = None, name: str | None = None) -> Tensor:
    """The gradient of ``depthwise_conv2d_native`` with respect to its input."""
    attrs = conv_attrs(strides, padding, data_format, dilations, "DepthwiseConv2dNativeBackpropInput")
    with name_scope(name, "DepthwiseConv2dNativeBackpropInput", [filter, out_backprop]):
        g = convert_to_tensor(out_backprop)
        sizes = convert_to_tensor(input_sizes, dtype=dtypes.int32)
        return make_tensor("Conv2DBackpropInput", [sizes, _grouped_filter(convert_to_tensor(filter, dtype=g.dtype)), g],
                           attrs)


def depthwise_conv2d_native_backprop_filter(input: Any, filter_sizes: Any, out_backprop: Any,  # noqa: A002
                                            strides: Any, padding: Any, data_format: str = "NHWC",
                                            dilations: Any = None, name: str | None = None) -> Tensor:
    """The gradient of ``depthwise_conv2d_native`` with respect to its filter."""
    attrs = conv_attrs(strides, padding, data_format, dilations, "DepthwiseConv2dNativeBackpropFilter")
    with name_scope(name, "DepthwiseConv2dNativeBackpropFilter", [input, out_backprop]):
        x = convert_to_tensor(input)
        sizes = convert_to_tensor(filter_sizes, dtype=dtypes.int32)
        grouped = array_ops.concat([sizes[:2], [1], sizes[2:3] * sizes[3:4]], 0)
        df = make_tensor("Conv2DBackpropFilter", [x, grouped, convert_to_tensor(out_backprop, dtype=x.dtype)], attrs)
        return array_ops.reshape(df, sizes)


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True,
                 name: str | None = None) -> tuple[Tensor, Tensor]:
    """The top ``k`` values and indices along the last dimension, computed exactly (recall 1)."""
    x = convert_to_tensor(operand)
    if reduction_dimension not in (-1, (x.shape.rank or 0) - 1):
        raise InvalidArgumentError("approx_max_k: flowmesh reduces only the last dimension")
    values, indices = top_k(x, k, name=name)
    return values, indices


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True,
                 name: str | None = None) -> tuple[Tensor, Tensor]:
    """The bottom ``k`` values and indices along the last dimension, computed exactly."""
    values, indices = approx_max_k(math_ops.negative(convert_to_tensor(operand)), k, reduction_dimension,
                                   name=name)
    return math_ops.negative(values), indices


def log_poisson_loss(targets: Any, log_input: Any, compute_full_loss: bool = False,
                     name: str | None = None) -> Tensor:
    """``exp(log_input) - targets * log_input`` (plus Stirling's term with ``compute_full_loss``)."""
    with name_scope(name, "log_poisson_loss", [log_input, targets]):
        c = convert_to_tensor(log_input)
        z = convert_to_tensor(targets, dtype=c.dtype)
        result = math_ops.exp(c) - c * z
        if not compute_full_loss:
            return result
        stirling = z * math_ops.log(z) - z + 0.5 * math_ops.log(2.0 * 3.141592653589793 * z)
        keep = math_ops.logical_and(math_ops.greater_equal(z, 0.0), math_ops.less_equal(z, 1.0))
        return result + where(keep, array_ops.zeros_like(z), stirling)


def sufficient_statistics(x: Any, axes: Any, shift: Any = None, keep_dims: Any = None, name: str | None = None,
                          keepdims: Any = None) -> tuple[Tensor, Tensor, Tensor, Any]:
    """``(count, sum(x - shift), sum((x - shift)^2), shift)`` over ``axes``."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "sufficient_statistics", [x, shift]):
        t = convert_to_tensor(x)
        shape = array_ops.shape(t)
        count = reduction_ops.reduce_prod(cast_ops.cast(gather(shape, axes), t.dtype), name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, dtype=t.dtype)
            m_ss = reduction_ops.reduce_sum(t - shift, axes, keepdims=keep, name="mean_ss")
            v_ss = reduction_ops.reduce_sum(math_ops.square(t - shift), axes, keepdims=keep, name="var_ss")
        else:
            m_ss = reduction_ops.reduce_sum(t, axes, keepdims=keep, name="mean_ss")
            v_ss = reduction_ops.reduce_sum(math_ops.square(t), axes, keepdims=keep, name="var_ss")
        return count, m_ss, v_ss, shift


def batch_norm_with_global_normalization(t: Any = None, m: Any = None, v: Any = None, beta: Any = None,
                                         gamma: Any = None, variance_epsilon: Any = None,
                                         scale_after_normalization: bool = None, name: str | None = None,
                                         input: Any = None, mean: Any = None, variance: Any = None) -> Tensor:  # noqa: A002
    """Batch normalization with given moments (``gamma`` applied only when
    ``scale_after_normalization``)."""
    t = t if t is not None else input
    m = m if m is not None else mean
    v = v if v is not None else variance
    return batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None, variance_epsilon,
                               name=name or "batchnorm")


def compute_average_loss(per_example_loss: Any, sample_weight: Any = None, global_batch_size: Any = None,
                         name: str | None = None) -> Tensor:
    """``sum(per_example_loss * sample_weight) / global_batch_size`` (default: the batch size,
    which is the global batch outside a distribution strategy)."""
    with name_scope(name, "compute_average_loss", [per_example_loss]):
        loss = convert_to_tensor(per_example_loss)
        if sample_weight is not None:
            loss = loss * convert_to_tensor(sample_weight, dtype=loss.dtype)
        if global_batch_size is None:
            global_batch_size = cast_ops.cast(array_ops.shape(loss)[0], loss.dtype)
        return reduction_ops.reduce_sum(loss) / cast_ops.cast(global_batch_size, loss.dtype)


def _no_explicit(explicit_paddings: Any, op: str) -> None:
    if explicit_paddings:
        raise UnimplementedError(None, None, f"{op}: padding='EXPLICIT' with explicit_paddings is not implemented; "
                                             "pad the input with tf.pad and use padding='VALID'")


def conv2d_backprop_filter_v2(input: Any, filter: Any, out_backprop: Any, strides: Any, padding: Any,  # noqa: A002
                              use_cudnn_on_gpu: bool = True, explicit_paddings: Any = (),
                              data_format: str = "NHWC", dilations: Any = (1, 1, 1, 1),
                              name: str | None = None) -> Tensor:
    """The gradient of conv2d with respect to ``filter`` (its shape taken from ``filter``)."""
    _no_explicit(explicit_paddings, "Conv2DBackpropFilterV2")
    f = convert_to_tensor(filter, name="filter")
    return conv2d_backprop_filter(input, array_ops.shape(f), out_backprop, strides, padding,
                                  data_format=data_format, dilations=list(dilations),
                                  name=name or "Conv2DBackpropFilterV2")


def conv2d_backprop_input_v2(input: Any, filter: Any, out_backprop: Any, strides: Any, padding: Any,  # noqa: A002
                             use_cudnn_on_gpu: bool = True, explicit_paddings: Any = (),
                             data_format: str = "NHWC", dilations: Any = (1, 1, 1, 1),
                             name: str | None = None) -> Tensor:
    """The gradient of conv2d with respect to ``input`` (its shape taken from ``input``)."""
    _no_explicit(explicit_paddings, "Conv2DBackpropInputV2")
    x = convert_to_tensor(input, name="input")
    return conv2d_backprop_input(array_ops.shape(x), filter, out_backprop, strides, padding,
                                 data_format=data_format, dilations=list(dilations),
                                 name=name or "Conv2DBackpropInputV2")


def approx_top_k(input: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,  # noqa: A002
                 is_max_k: bool = True, reduction_input_size_override: int = -1, aggregate_to_topk: bool = True,
                 name: str | None = None) -> tuple[Tensor, Tensor]:
    """The ``k`` largest (``is_max_k``) or smallest entries along ``reduction_dimension`` and
    their int32 indices, sorted; gradients flow to the selected entries.

    Raises:
        InvalidArgumentError: ``k`` larger than the reduced dimension.
    """
    with name_scope(name, "ApproxTopK", [input]):
        x = convert_to_tensor(input, name="input")
        rank = x.shape.rank
        if rank is None:
            raise InvalidArgumentError("approx_top_k needs an input of known rank")
        axis = reduction_dimension % rank
        size = x.shape.as_list()[axis]
        if size is not None and size < k:
            raise InvalidArgumentError(f"approx_top_k: input must have dimension {axis} >= k = {k} but was {size} "
                                       f"(input shape {x.shape})")
        perm = [d for d in range(rank) if d != axis] + [axis]
        inverse = [perm.index(d) for d in range(rank)]
        moved = array_ops.transpose(x, perm) if axis != rank - 1 else x
        values, indices = top_k(moved if is_max_k else negative(moved), k)
        values = values if is_max_k else negative(values)
        if axis != rank - 1:
            values, indices = array_ops.transpose(values, inverse), array_ops.transpose(indices, inverse)
        return values, indices


def conv(input: Any, filter: Any, strides: Any, padding: str, explicit_paddings: Any = (),  # noqa: A002
         data_format: str = "CHANNELS_LAST", dilations: Any = (), batch_dims: int = 1, groups: int = 1,
         name: str | None = None) -> Tensor:
    """``tf.conv``, TensorFlow's generic convolution op over 2 or 3 spatial dimensions:
    ``batch_dims`` leading batch dimensions, channels last or first, ``strides`` and
    ``dilations`` with ``spatial + 2`` entries (1 on the batch and channel entries).

    Raises:
        InvalidArgumentError: malformed strides/dilations or an unsupported rank.
        UnimplementedError: ``groups > 1`` or explicit paddings.
    """

    _no_explicit(explicit_paddings, "Conv")
    if groups != 1:
        raise UnimplementedError(None, None, "tf.conv: groups > 1 is not implemented; split the channels and "
                                             "convolve each group")
    with name_scope(name, "Conv", [input, filter]):
        x, f = convert_to_tensor(input, name="input"), convert_to_tensor(filter, name="filter")
        rank, n = x.shape.rank, (f.shape.rank or 0) - 2
        if rank is None or n not in (2, 3) or rank != batch_dims + n + 1:
            raise InvalidArgumentError(f"tf.conv: input tensor must be rank 4 or 5, excluding extra batch "
                                       f"dimensions, but got rank {rank} with batch_dims={batch_dims} (filter "
                                       f"{f.shape})")
        strides, dilations = list(strides), list(dilations) or [1] * (n + 2)
        if len(strides) != n + 2 or len(dilations) != n + 2:
            raise InvalidArgumentError(f"tf.conv: strides {strides} and dilations {dilations} need {n + 2} entries")
        last = data_format == "CHANNELS_LAST"
        fmt = ("NHWC" if n == 2 else "NDHWC") if last else ("NCHW" if n == 2 else "NCDHW")
        outer = array_ops.shape(x)[:batch_dims]
        flat = array_ops.reshape(x, array_ops.concat([[-1], array_ops.shape(x)[batch_dims:]], 0))
        op = conv3d if n == 3 else conv2d
        out = op(flat, f, strides=strides, padding=padding, data_format=fmt, dilations=dilations)
        return array_ops.reshape(out, array_ops.concat([outer, array_ops.shape(out)[1:]], 0))
