"""TensorFlow 1.x's TensorArray ops (``TensorArrayV3`` family): definitions and raw wrappers.

A TensorArray is a per-step resource (``TensorArrayV3`` makes a handle and a ``flow``
scalar); every write-like op takes the current flow and returns a new one, and every
read-like op takes a flow, so the flows order the accesses in the dataflow graph, also
through ``While`` loops, where the flow is a loop variable and the handle is captured.
The Python class is :class:`flowmesh.ops.tensor_array.TensorArray`; the gradients are in
``tensor_array_grad.py``; the kernels in ``kernels/tensor_array_ops.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, as_shape, unknown_shape
from flowmesh.ops._builders import make_op, make_tensor

_FLOW = (dtypes.float32, TensorShape([]))
_HANDLE = (dtypes.resource, TensorShape([]))


def _create_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    if inputs[0].shape.rank not in (None, 0):
        raise ValueError(f"TensorArray size must be scalar, but had shape: {inputs[0].shape}")
    return [_HANDLE, _FLOW]


def _flow_only(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [_FLOW]


def _read_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(attrs["dtype"], unknown_shape())]


def _gather_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    indices = inputs[1].shape
    if indices.rank not in (None, 1):
        raise ValueError(f"TensorArrayGatherV3: indices must be a vector, got shape {indices}")
    n = indices.as_list()[0] if indices.rank == 1 else None
    element = as_shape(attrs.get("element_shape"))
    shape = unknown_shape() if element.rank is None else TensorShape([n]).concatenate(element)
    return [(attrs["dtype"], shape)]


def _concat_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    rest = as_shape(attrs.get("element_shape_except0"))
    shape = unknown_shape() if rest.rank is None else TensorShape([None]).concatenate(rest)
    return [(attrs["dtype"], shape), (dtypes.int64, TensorShape([None]))]


register_op("TensorArrayV3", _create_shape, not_differentiable=True, stateful=True)
register_op("TensorArrayGradV3", lambda inputs, attrs: [_HANDLE, _FLOW], not_differentiable=True,
            stateful=True)
register_op("TensorArraySizeV3", lambda inputs, attrs: [(dtypes.int32, TensorShape([]))],
            not_differentiable=True, stateful=True)
register_op("TensorArrayCloseV3", lambda inputs, attrs: [], not_differentiable=True, stateful=True)
# Gradients registered in tensor_array_grad.py.
register_op("TensorArrayWriteV3", _flow_only, stateful=True)
register_op("TensorArrayReadV3", _read_shape, stateful=True)
register_op("TensorArrayGatherV3", _gather_shape, stateful=True)
register_op("TensorArrayScatterV3", _flow_only, stateful=True)
register_op("TensorArrayConcatV3", _concat_shape, stateful=True)
register_op("TensorArraySplitV3", _flow_only, stateful=True)


# --- raw wrappers (TensorFlow's gen_data_flow_ops names) -----------------------------------
def tensor_array_v3(size: Tensor, dtype: dtypes.DType, element_shape: TensorShape,
                    dynamic_size: bool, clear_after_read: bool, identical_element_shapes: bool,
                    tensor_array_name: str, name: str) -> tuple[Tensor, Tensor]:
    """``TensorArrayV3``: a new TensorArray's ``(handle, flow)``."""
    attrs = {"dtype": dtype, "element_shape": element_shape, "dynamic_size": bool(dynamic_size),
             "clear_after_read": bool(clear_after_read),
             "identical_element_shapes": bool(identical_element_shapes),
             "tensor_array_name": tensor_array_name or ""}
    op = make_op("TensorArrayV3", [size], attrs, name=name)
    return op.outputs[0], op.outputs[1]


def tensor_array_grad_v3(handle: Tensor, flow_in: Tensor, source: str,
                         name: str | None = None) -> tuple[Tensor, Tensor]:
    """``TensorArrayGradV3``: the gradient TensorArray of ``handle`` for ``source``."""
    op = make_op("TensorArrayGradV3", [handle, flow_in], {"source": source},
                 name=name or "TensorArrayGradV3")
    return op.outputs[0], op.outputs[1]


def tensor_array_write_v3(handle: Tensor, index: Tensor, value: Tensor, flow_in: Tensor,
                          name: str | None = None) -> Tensor:
    return make_tensor("TensorArrayWriteV3", [handle, index, value, flow_in], {"T": value.dtype},
                       name=name or "TensorArrayWriteV3")


def tensor_array_read_v3(handle: Tensor, index: Tensor, flow_in: Tensor, dtype: dtypes.DType,
                         name: str | None = None) -> Tensor:
    return make_tensor("TensorArrayReadV3", [handle, index, flow_in], {"dtype": dtype},
                       name=name or "TensorArrayReadV3")


def tensor_array_gather_v3(handle: Tensor, indices: Tensor, flow_in: Tensor, dtype: dtypes.DType,
                           element_shape: TensorShape, name: str | None = None) -> Tensor:
    attrs = {"dtype": dtype, "element_shape": element_shape}
    return make_tensor("TensorArrayGatherV3", [handle, indices, flow_in], attrs,
                       name=name or "TensorArrayGatherV3")


def tensor_array_scatter_v3(handle: Tensor, indices: Tensor, value: Tensor, flow_in: Tensor,
                            name: str | None = None) -> Tensor:
    return make_tensor("TensorArrayScatterV3", [handle, indices, value, flow_in],
                       {"T": value.dtype}, name=name or "TensorArrayScatterV3")


def tensor_array_concat_v3(handle: Tensor, flow_in: Tensor, dtype: dtypes.DType,
                           element_shape_except0: TensorShape,
                           name: str | None = None) -> tuple[Tensor, Tensor]:
    attrs = {"dtype": dtype, "element_shape_except0": element_shape_except0}
    op = make_op("TensorArrayConcatV3", [handle, flow_in], attrs, name=name or "TensorArrayConcatV3")
    return op.outputs[0], op.outputs[1]


def tensor_array_split_v3(handle: Tensor, value: Tensor, lengths: Tensor, flow_in: Tensor,
                          name: str | None = None) -> Tensor:
    return make_tensor("TensorArraySplitV3", [handle, value, lengths, flow_in], {"T": value.dtype},
                       name=name or "TensorArraySplitV3")


def tensor_array_size_v3(handle: Tensor, flow_in: Tensor, name: str | None = None) -> Tensor:
    return make_tensor("TensorArraySizeV3", [handle, flow_in], name=name or "TensorArraySizeV3")


def tensor_array_close_v3(handle: Tensor, name: str | None = None) -> Any:
    return make_op("TensorArrayCloseV3", [handle], name=name or "TensorArrayCloseV3")


__all__ = [
    "tensor_array_close_v3", "tensor_array_concat_v3", "tensor_array_gather_v3",
    "tensor_array_grad_v3", "tensor_array_read_v3", "tensor_array_scatter_v3",
    "tensor_array_size_v3", "tensor_array_split_v3", "tensor_array_v3",
    "tensor_array_write_v3",
]
