"""Dense-layer fusion: MatMul -> BiasAdd (-> Relu) becomes one oneDNN call.

A Keras/``tf.layers`` dense layer compiles to three adjacent nodes. When the MatMul runs on
oneDNN (``kernels/onednn_matmul.py``), oneDNN adds the bias and applies the ReLU as post-ops
of the same inner product at no measurable cost, so :func:`fuse_linear` replaces the run by
one node calling :func:`~flowmesh.kernels.onednn_matmul.fused_fn`. Only adjacent nodes are
fused, and only when each intermediate value is read by the next node alone and is neither
fed nor fetched: the program computes exactly the values it did, minus two kernel calls.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any

from flowmesh.kernels.onednn_matmul import fused_fn


def fuse_linear(nodes: Sequence[Any], feed_keys: Sequence[Hashable],
                fetch_keys: Sequence[Hashable]) -> list[Any]:
    """Returns ``nodes`` with MatMul+BiasAdd(+Relu) runs replaced by one node each.

    Args:
        nodes: a program's ExecNodes in execution order (not modified); run after the
            in-place forwarding pass (the fused node must not be made in-place).
        feed_keys: values fed into the program.
        fetch_keys: values the program returns.
    """
    uses = Counter(key for node in nodes for key in node.inputs)
    keep = set(feed_keys) | set(fetch_keys)
    out: list[Any] = []
    i = 0
    while i < len(nodes):
        node = nodes[i]
        if getattr(node.fn, "onednn_transposes", None) is None or \
                not _feeds_next(node, nodes[i + 1:i + 2], "BiasAdd", uses, keep) or \
                nodes[i + 1].op.attrs.get("data_format", "NHWC") == "NCHW":
            out.append(node)
            i += 1
            continue
        bias_node = nodes[i + 1]
        relu_node = nodes[i + 2] if _feeds_next(bias_node, nodes[i + 2:i + 3], "Relu", uses, keep) else None
        last = relu_node or bias_node
        fn = fused_fn(node.fn, bias_node.fn, relu_node.fn if relu_node is not None else None)
        names = [n.name for n in (node, bias_node, relu_node) if n is not None]
        out.append(dataclasses.replace(last, name=f"{last.name} (fused: {', '.join(names[:-1])})", fn=fn,
                                       inputs=[*node.inputs, bias_node.inputs[1]]))
        i += 2 if relu_node is None else 3
    return out


def _feeds_next(node: Any, following: Sequence[Any], op_type: str, uses: Counter, keep: set) -> bool:
    """``node``'s single output is read only by ``following[0]``, an ``op_type`` node."""
    if len(node.outputs) != 1 or not following:
        return False
    nxt = following[0]
    key = node.outputs[0]
    return (nxt.op is not None and nxt.op.type == op_type and not nxt.needs_step and len(nxt.outputs) == 1
            and nxt.inputs[:1] == [key] and key not in nxt.inputs[1:] and uses[key] == 1 and key not in keep)
