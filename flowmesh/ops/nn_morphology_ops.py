"""Grayscale morphology and arg-max pooling: ``Dilation2D`` (+ its input and filter
backprops), ``erosion2d`` (composed as TensorFlow's Python does: ``-dilation2d(-x,
reversed kernel)``), ``MaxPoolWithArgmax`` (+ ``MaxPoolGradWithArgmax``); kernels in
``kernels/nn_morphology_ops.py``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import manip_ops, math_ops
from flowmesh.ops._builders import REAL_NUMERIC, check_dtype, make_op, make_tensor
from flowmesh.ops.nn_conv_ops import _pool_output_shape, conv_geometry, pool_attrs


def _four(value: Any, arg: str, op_type: str) -> list[int]:
    values = [int(v) for v in value]
    if len(values) != 4 or values[0] != 1 or values[3] != 1 or min(values) < 1:
        raise InvalidArgumentError(f"{op_type}: {arg} must be [1, {arg}_height, {arg}_width, 1], "
                                   f"got {list(value)}")
    return values


def _dilation_out(x: TensorShape, f: TensorShape, attrs: dict[str, Any]) -> TensorShape:
    if x.rank not in (None, 4) or f.rank not in (None, 3):
        raise InvalidArgumentError(f"Dilation2D: input must be 4-D and filter 3-D [height, width, "
                                   f"depth], got {x} and {f}")
    xd = x.as_list() if x.rank else [None] * 4
    fd = f.as_list() if f.rank else [None] * 3
    out = [xd[0], None, None, xd[3] if xd[3] is not None else fd[2]]
    for i in (1, 2):
        if xd[i] is not None and fd[i - 1] is not None:
            size = conv_geometry(xd[i], fd[i - 1], attrs["strides"][i], attrs["rates"][i],
                                 attrs["padding"])[0]
            if size <= 0:
                raise InvalidArgumentError(f"Dilation2D: the (dilated) filter {f} does not fit "
                                           f"the input {x}")
            out[i] = size
    return TensorShape(out)


def _dilation_attrs(op: Any) -> dict[str, Any]:
    return {k: op.attrs[k] for k in ("strides", "rates", "padding")}


def _dilation_grad(op: Any, grad: Tensor) -> list:
    x, f = op.inputs
    attrs = _dilation_attrs(op)
    return [make_tensor("Dilation2DBackpropInput", [x, f, grad], attrs),
            make_tensor("Dilation2DBackpropFilter", [x, f, grad], attrs)]


register_op("Dilation2D", lambda i, a: [(i[0].dtype, _dilation_out(i[0].shape, i[1].shape, a))],
            grad=_dilation_grad)
register_op("Dilation2DBackpropInput", lambda i, a: [(i[0].dtype, i[0].shape)],
            not_differentiable=True)
register_op("Dilation2DBackpropFilter", lambda i, a: [(i[1].dtype, i[1].shape)],
            not_differentiable=True)


def dilation2d(input: Any, filter: Any = None, strides: Any = None, rates: Any = None,  # noqa: A002
               padding: Any = None, name: str | None = None, filters: Any = None,
               dilations: Any = None) -> Tensor:
    """Grayscale dilation: ``out[b, y, x, c] = max_{dy, dx} input[b, y*s + dy*r, x*s + dx*r, c]
    + filter[dy, dx, c]`` (``tf.nn.dilation2d``, TF1 argument names; ``SAME`` ignores cells
    outside the input)."""
    filter = filters if filter is None else filter  # noqa: A001
    rates = dilations if rates is None else rates
    if padding not in ("SAME", "VALID"):
        raise InvalidArgumentError(f"Dilation2D: padding must be 'SAME' or 'VALID', got {padding!r}")
    attrs = {"strides": _four(strides, "strides", "Dilation2D"),
             "rates": _four(rates, "rates", "Dilation2D"), "padding": padding}
    with name_scope(name, "dilation2d", [input, filter]) as scope:
        x = convert_to_tensor(input, name="input")
        check_dtype("Dilation2D", x, REAL_NUMERIC, "input")
        f = convert_to_tensor(filter, dtype=x.dtype, name="filter")
        return make_tensor("Dilation2D", [x, f], attrs, name=scope)


def erosion2d(value: Any, kernel: Any, strides: Any, rates: Any, padding: Any,
              name: str | None = None) -> Tensor:
    """Grayscale erosion (``tf.nn.erosion2d``): ``-dilation2d(-value, kernel reversed in
    height and width)``."""
    with name_scope(name, "erosion2d", [value, kernel]) as scope:
        k = manip_ops.reverse(convert_to_tensor(kernel, name="kernel"), [0, 1])
        neg = math_ops.negative(convert_to_tensor(value, name="value"))
        return math_ops.negative(dilation2d(neg, k, strides, rates, padding), name=scope)


# --- MaxPoolWithArgmax ------------------------------------------------------------------------
def _argmax_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    out = _pool_output_shape(inputs[0].shape, attrs)
    return [(inputs[0].dtype, out), (attrs["Targmax"], out)]


def _argmax_pool_grad(op: Any, grad: Tensor, _argmax_grad: Any) -> list:
    attrs = {k: op.attrs[k] for k in ("ksize", "strides", "padding", "include_batch_in_index")}
    return [make_tensor("MaxPoolGradWithArgmax", [op.inputs[0], grad, op.outputs[1]], attrs)]


register_op("MaxPoolWithArgmax", _argmax_shape, grad=_argmax_pool_grad)
register_op("MaxPoolGradWithArgmax", lambda i, a: [(i[0].dtype, i[0].shape)],
            not_differentiable=True)


def max_pool_with_argmax(input: Any, ksize: Any, strides: Any, padding: Any,  # noqa: A002
                         data_format: str = "NHWC", Targmax: Any = None,  # noqa: N803
                         name: str | None = None, output_dtype: Any = None,
                         include_batch_in_index: bool = False) -> tuple[Tensor, Tensor]:
    """NHWC max pooling and the flat index of each maximum, ``(y * width + x) * channels + c``
    (plus ``b * height * width * channels`` with ``include_batch_in_index``)
    (``tf.nn.max_pool_with_argmax``). Returns ``(output, argmax)``."""
    if data_format != "NHWC":
        raise InvalidArgumentError(f"MaxPoolWithArgmax: only NHWC is supported (as in "
                                   f"TensorFlow), got {data_format!r}")
    targmax = dtypes.as_dtype(Targmax or output_dtype or dtypes.int64)
    if targmax not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"MaxPoolWithArgmax: Targmax must be int32 or int64, got {targmax.name}")
    attrs = pool_attrs(ksize, strides, padding, data_format, "MaxPoolWithArgmax")
    attrs.update(Targmax=targmax, include_batch_in_index=bool(include_batch_in_index))
    with name_scope(name, "MaxPoolWithArgmax", [input]) as scope:
        x = convert_to_tensor(input, name="input")
        check_dtype("MaxPoolWithArgmax", x, REAL_NUMERIC, "input")
        op = make_op("MaxPoolWithArgmax", [x], attrs, name=scope)
        return op.outputs[0], op.outputs[1]
