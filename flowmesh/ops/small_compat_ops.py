"""Raw-op spellings of the TensorFlow 1.x top level built on flowmesh's ops:
``tf.conv2d_backprop_filter_v2`` / ``tf.conv2d_backprop_input_v2`` (the filter or input
itself instead of its sizes), ``tf.approx_top_k`` (exact top-k: TensorFlow's CPU build has
no kernel for it, and an exact answer meets every ``recall_target``)."""

from __future__ import annotations

from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.errors import InvalidArgumentError, UnimplementedError
from flowmesh.ops import array_ops
from flowmesh.ops.math_ops import negative
from flowmesh.ops.nn_conv3d_ops import conv3d
from flowmesh.ops.nn_conv_ops import conv2d, conv2d_backprop_filter, conv2d_backprop_input
from flowmesh.ops.nn_impl import top_k


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
