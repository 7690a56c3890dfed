"""Atrous helpers of ``tf.nn``: ``atrous_conv2d_transpose`` (the adjoint of ``atrous_conv2d``:
an input gradient of a dilated convolution) and ``with_space_to_batch`` (run a sliding-window
op on the space-to-batch form of its input, which makes it atrous), composed from graph ops
as TensorFlow's Python does."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import constant_value
from flowmesh.ops.nn_conv_ops import conv2d_backprop_input
from flowmesh.ops.space_batch_ops import batch_to_space_nd, space_to_batch_nd


def atrous_conv2d_transpose(value: Any, filters: Any, output_shape: Any, rate: int, padding: str,
                            name: str | None = None) -> Tensor:
    """The transpose of ``atrous_conv2d(x, filters, rate, padding)`` producing
    ``output_shape`` (``tf.nn.atrous_conv2d_transpose``); ``filters`` is ``[h, w, out, in]``.

    Raises:
        InvalidArgumentError: ``rate`` < 1 or ``padding`` not ``SAME``/``VALID``.
    """
    if int(rate) < 1:
        raise InvalidArgumentError(f"atrous_conv2d_transpose: rate must be >= 1, got {rate}")
    if padding not in ("SAME", "VALID"):
        raise InvalidArgumentError(f"atrous_conv2d_transpose: padding must be 'SAME' or 'VALID', "
                                   f"got {padding!r}")
    with name_scope(name, "atrous_conv2d_transpose", [value, filters, output_shape]) as scope:
        return conv2d_backprop_input(output_shape, filters, value, [1, 1, 1, 1], padding,
                                     dilations=[1, int(rate), int(rate), 1], name=scope)


def _static(value: Any, what: str) -> np.ndarray:
    known = constant_value(convert_to_tensor(value)) if not isinstance(value, (list, tuple, int)) \
        else np.asarray(value)
    if known is None:
        raise InvalidArgumentError(f"with_space_to_batch: {what} must be known when the graph is "
                                   f"built (flowmesh computes the paddings statically)")
    return np.asarray(known, np.int64).reshape(-1)


def _spatial(x: Tensor, rates: np.ndarray, spatial_dims: Sequence[int] | None,
             data_format: str | None) -> list[int]:
    start = 2 if data_format is not None and data_format.startswith("NC") else 1
    dims = list(range(start, start + len(rates))) if spatial_dims is None else [int(d) for d in spatial_dims]
    if dims != sorted(set(dims)) or min(dims) < 1:
        raise ValueError(f"`spatial_dims` must be a monotonically increasing sequence of positive "
                         f"integers. Received: spatial_dims={list(dims)}")
    return dims


def with_space_to_batch(input: Any, dilation_rate: Any, padding: str,  # noqa: A002
                        op: Callable[[Tensor, int, str], Tensor], filter_shape: Any = None,
                        spatial_dims: Sequence[int] | None = None,
                        data_format: str | None = None) -> Tensor:
    """``op(input, num_spatial_dims, padding)`` when every rate is 1, else
    ``batch_to_space_nd(op(space_to_batch_nd(input, rate, paddings), n, "VALID"), rate, crops)``
    with TensorFlow's paddings and crops (``tf.nn.with_space_to_batch``).

    Raises:
        InvalidArgumentError: the rates, the filter shape (``SAME``) or the spatial input sizes
            are not known when the graph is built.
        ValueError: bad ``padding`` or ``spatial_dims``.
    """
    x = convert_to_tensor(input, name="input")
    rates = _static(dilation_rate, "dilation_rate")
    if (rates < 1).any():
        raise ValueError(f"`dilation_rate` must be positive. Received: dilation_rate={rates.tolist()}")
    if (rates == 1).all():
        return op(x, len(rates), padding)
    dims = _spatial(x, rates, spatial_dims, data_format)
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError("`filter_shape` must be specified for `padding='SAME'`")
        extra = (_static(filter_shape, "filter_shape")[:len(rates)] - 1) * rates
        base = np.stack([extra // 2, extra - extra // 2], axis=1)
    elif padding == "VALID":
        base = np.zeros((len(rates), 2), np.int64)
    else:
        raise ValueError(f"`padding` must be one of 'SAME' or 'VALID'. Received: padding={padding}")
    shape = x.shape.as_list() if x.shape.rank is not None else None
    sizes = None if shape is None or len(shape) <= dims[-1] else [shape[d] for d in dims]
    if sizes is None or None in sizes:
        raise InvalidArgumentError(f"with_space_to_batch: the spatial sizes of the input (shape "
                                   f"{x.shape}, dims {dims}) must be known when the graph is built")
    full = np.asarray(sizes) + base.sum(axis=1)
    extra_end = (rates - full % rates) % rates
    block, pads, crops = np.ones(dims[-1], np.int64), np.zeros((dims[-1], 2), np.int64), \
        np.zeros((dims[-1], 2), np.int64)
    for i, d in enumerate(dims):
        block[d - 1], pads[d - 1] = rates[i], [base[i, 0], base[i, 1] + extra_end[i]]
        crops[d - 1] = [0, extra_end[i]]
    converted = space_to_batch_nd(x, block, pads)
    return batch_to_space_nd(op(converted, len(rates), "VALID"), block, crops)
