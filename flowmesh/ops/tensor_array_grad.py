"""Gradients of the TensorArray ops (TensorFlow's ``tensor_array_grad.py``).

The gradient of a TensorArray is another TensorArray, its *gradient array*
(``TensorArrayGradV3``), one per forward array and per ``tf.gradients`` call (the
*source*, e.g. ``"gradients_1"``), sized as the forward array when it is first asked for.
A read's gradient is written into it at the same index (writes add up there); a write's
gradient is read back from it. The flows of gradient arrays carry the ordering, so inside
a ``While`` gradient the per-iteration reads and writes of the gradient array follow the
gradient loop's flow variable.

The source comes from :func:`flowmesh.ops.gradients_impl.gradient_source` (the outermost
``tf.gradients`` call being built), not from op names as in TensorFlow: the gradient body
of a ``While`` lives in a graph of its own, where the outer call's name scope is not seen.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core.graph import Operation, Tensor, get_default_graph
from flowmesh.core.registry import register_gradient
from flowmesh.ops.array_ops import identity
from flowmesh.ops.gradients_impl import gradient_source
from flowmesh.ops.tensor_array import TensorArray


def _source(grad: Any) -> str:
    """TensorFlow's ``_GetGradSource``: the name scope of the gradient computation."""
    found = gradient_source()
    if found is not None:
        return found
    parts = grad.op.name.split("/") if isinstance(grad, Tensor) else []
    positions = [i for i, part in enumerate(parts) if part.startswith("gradients")]
    return "/".join(parts[:positions[-1] + 1]) if positions else "gradients"


def _gradient_array(op: Operation, dtype_attr: str, flow: Tensor, source: str) -> TensorArray:
    forward = TensorArray(op.attrs[dtype_attr], handle=op.inputs[0], flow=flow,
                          colocate_with_first_write_call=False)
    return forward.grad(source=source, flow=flow)


def _write_barrier(op: Operation, flow: Tensor) -> Tensor:
    """Orders the gradient array's creation after the forward write (same graph only:
    a loop's gradient runs after the whole forward loop anyway)."""

    if op.graph is not get_default_graph():
        return flow
    flow_out = identity(op.outputs[0], name="flow_out")
    with get_default_graph().control_dependencies([flow_out]):
        return identity(flow, name="write_barrier")


@register_gradient("TensorArrayReadV3")
def _read_grad(op: Operation, grad: Tensor) -> list[Any]:
    handle_flow = op.inputs[2]
    g = _gradient_array(op, "dtype", handle_flow, _source(grad))
    w_g = g.write(op.inputs[1], grad)
    return [None, None, w_g.flow]


@register_gradient("TensorArrayWriteV3")
def _write_grad(op: Operation, flow: Tensor) -> list[Any]:
    source = _source(flow)
    flow = _write_barrier(op, flow)
    g = _gradient_array(op, "T", flow, source)
    grad = g.read(op.inputs[1])
    grad.set_shape(op.inputs[2].shape)
    return [None, None, grad, flow]


@register_gradient("TensorArrayGatherV3")
def _gather_grad(op: Operation, grad: Tensor) -> list[Any]:
    g = _gradient_array(op, "dtype", op.inputs[2], _source(grad))
    u_g = g.scatter(op.inputs[1], grad)
    return [None, None, u_g.flow]


@register_gradient("TensorArrayScatterV3")
def _scatter_grad(op: Operation, flow: Tensor) -> list[Any]:
    source = _source(flow)
    flow = _write_barrier(op, flow)
    g = _gradient_array(op, "T", flow, source)
    grad = g.gather(op.inputs[1])
    grad.set_shape(op.inputs[2].shape)
    return [None, None, grad, flow]


@register_gradient("TensorArrayConcatV3")
def _concat_grad(op: Operation, grad: Tensor, unused_lengths_grad: Any = None) -> list[Any]:
    g = _gradient_array(op, "dtype", op.inputs[1], _source(grad))
    u_g = g.split(grad, lengths=op.outputs[1])
    return [None, u_g.flow]


@register_gradient("TensorArraySplitV3")
def _split_grad(op: Operation, flow: Tensor) -> list[Any]:
    source = _source(flow)
    flow = _write_barrier(op, flow)
    g = _gradient_array(op, "T", flow, source)
    grad = g.concat()
    grad.set_shape(op.inputs[1].shape)
    return [None, grad, None, flow]


__all__: list[str] = []
