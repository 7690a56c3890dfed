"""Ops that compute what a plainer op computes and carry a hint for TensorFlow's runtime:
``tf.guarantee_const`` (an identity promising its input is constant) and
``tf.parallel_stack`` (a stack whose inputs may be written in parallel). Neither has a
gradient in TensorFlow, so both raise ``LookupError`` under ``tf.gradients`` as there."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops._builders import convert_same_dtype, make_tensor, same_shape


def _no_gradient_defined(op: Operation, *grads: Any) -> list:
    raise LookupError(
        f"No gradient defined for operation '{op.name}' (op type: {op.type}), as in TensorFlow. "
        "Use the plain op (tf.identity / tf.stack) where gradients are needed, or wrap the "
        "input in tf.stop_gradient.")


register_op("GuaranteeConst", same_shape, grad=_no_gradient_defined)


def guarantee_const(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """``input`` unchanged, promised constant during the session (``tf.guarantee_const``)."""
    x = convert_to_tensor(input, name="input")
    return make_tensor("GuaranteeConst", [x], name=name or "GuaranteeConst")


def _parallel_concat_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(inputs[0].dtype, TensorShape([len(inputs)] + attrs["shape"].as_list()))]


register_op("ParallelConcat", _parallel_concat_shape, grad=_no_gradient_defined)


def parallel_stack(values: Sequence[Any], name: str = "parallel_stack") -> Tensor:
    """Stacks same-shaped tensors along a new first axis (``tf.parallel_stack``).

    Raises:
        ValueError: no values, or values whose shape is not fully known (TensorFlow needs
            the output shape when the graph is built).
    """
    if not values:
        raise ValueError("tf.parallel_stack needs at least one value")
    tensors = convert_same_dtype("ParallelConcat", list(values), [f"values_{i}" for i in range(len(values))])
    shape = tensors[0].shape
    for t in tensors[1:]:
        shape = shape.merge_with(t.shape)
    if not shape.is_fully_defined():
        raise ValueError(f"tf.parallel_stack needs fully defined shapes, got {shape} "
                         f"(values {[str(t.shape) for t in tensors]})")
    return make_tensor("ParallelConcat", tensors, {"N": len(tensors), "shape": shape}, name=name)


register_op("CheckPinned", same_shape, not_differentiable=True)


def check_pinned(tensor: Any, name: str | None = None) -> Tensor:
    """``tensor`` unchanged, after checking at run time that it lies in page-locked host
    memory (``tf.check_pinned``): ``FailedPreconditionError`` without CUDA,
    ``InvalidArgumentError`` when not pinned."""
    x = convert_to_tensor(tensor, name="tensor")
    return make_tensor("CheckPinned", [x], name=name or "CheckPinned")
