"""The layer graph of a functional model: which layer calls, in which order, connect the
model's inputs to its outputs, and how to replay them on new inputs."""

from __future__ import annotations

from typing import Any

from flowmesh.keras.engine import node as node_lib
from flowmesh.ops import _structure as nest


def nodes_between(inputs: list[Any], outputs: list[Any]) -> list[node_lib.Node]:
    """The nodes from ``inputs`` to ``outputs`` in an order where each node follows the nodes
    that produce its inputs (Input nodes excluded).

    Raises:
        ValueError: an output was not produced by Keras layers, or the outputs need a tensor
            that is not among ``inputs`` (names the tensor and the layer that needs it).
    """
    input_ids = {id(t) for t in inputs}
    ordered: list[node_lib.Node] = []
    seen: set[int] = set()

    def enter(tensor: Any, consumer: str) -> tuple[node_lib.Node, str, Any] | None:
        """The node producing ``tensor`` with an iterator over its inputs, if not seen yet."""
        if id(tensor) in input_ids:
            return None
        found = node_lib.history(tensor)
        if found is None:
            raise ValueError(
                f"Graph disconnected: cannot obtain value for tensor {tensor.name} needed by {consumer}: "
                "it was not produced by a Keras layer from the model's inputs. Pass every input "
                "(tf.keras.Input) the outputs depend on to Model(inputs=...)."
            )
        layer, index, _ = found
        node = layer._inbound_nodes[index]
        if id(node) in seen:
            return None
        if not node.input_tensors:
            raise ValueError(
                f"Graph disconnected: cannot obtain value for tensor {tensor.name} (input layer "
                f"\"{layer.name}\") needed by {consumer}; it is not one of the model's inputs "
                f"{[t.name for t in inputs]}."
            )
        seen.add(id(node))
        return node, f'layer "{layer.name}"', iter(node.input_tensors)

    # depth first, a node after the nodes of its inputs; a stack, not recursion, so a model
    # thousands of layers deep stays within Python's recursion limit
    done = object()
    for out in outputs:
        first = enter(out, "the model's outputs")
        stack = [first] if first is not None else []
        while stack:
            node, consumer, parents = stack[-1]
            parent = next(parents, done)
            if parent is done:
                stack.pop()
                ordered.append(node)
            else:
                child = enter(parent, consumer)
                if child is not None:
                    stack.append(child)
    return ordered


def layers_of(nodes: list[node_lib.Node], inputs: list[Any], outputs: list[Any]) -> list[Any]:
    """The model's layers in tf-keras's order (``Functional._map_graph_network``): by
    decreasing depth (a layer's depth is its longest distance to an output, the largest over
    its calls), layers of one depth in the order a depth-first walk from the outputs first
    reaches them. HDF5 weight files are matched to layers in this order, so it decides
    whether files interchange with tf-keras.

    Args:
        nodes: :func:`nodes_between`'s nodes (post-order from the outputs).
        inputs: the model's input tensors.
        outputs: the model's output tensors.
    """
    node_ids = {id(node) for node in nodes}
    layers: dict[int, Any] = {}
    index: dict[int, int] = {}  # layer id -> when the walk first reached it
    seen: set[int] = set()
    stack = list(reversed(outputs))
    while stack:  # pre-order, iteratively (deep models pass Python's recursion limit)
        found = node_lib.history(stack.pop())
        if found is None:
            continue
        node = found[0]._inbound_nodes[found[1]]
        if id(node) in seen:
            continue
        seen.add(id(node))
        layers[id(node.layer)] = node.layer
        index.setdefault(id(node.layer), len(index))
        if id(node) in node_ids:
            stack.extend(reversed(node.input_tensors))
    node_depth: dict[int, int] = {}
    layer_depth: dict[int, int] = {}
    for node in reversed(nodes):
        depth = max(node_depth.get(id(node), 0), layer_depth.get(id(node.layer), 0))
        layer_depth[id(node.layer)] = node_depth[id(node)] = depth
        for parent in node.parent_nodes():
            node_depth[id(parent)] = max(depth + 1, node_depth.get(id(parent), 0))
            if id(parent) not in node_ids:  # an input's node: the walk ends there
                layer_depth[id(parent.layer)] = max(layer_depth.get(id(parent.layer), 0), depth + 1)
    for tensor in inputs:
        found = node_lib.history(tensor)
        if found is not None and id(found[0]) not in layer_depth:  # an input no output needs
            layers[id(found[0])], layer_depth[id(found[0])], index[id(found[0])] = found[0], 0, -1
    return sorted(layers.values(), key=lambda layer: (-layer_depth[id(layer)], index[id(layer)]))


def replay(nodes: list[node_lib.Node], inputs: list[Any], new_inputs: list[Any], outputs: list[Any],
           training: Any = None) -> list[Any]:
    """Calls the layers of ``nodes`` again on ``new_inputs`` (weights are shared) and returns
    the tensors corresponding to ``outputs``."""
    mapping = {id(old): new for old, new in zip(inputs, new_inputs)}
    def remap(value: Any) -> Any:
        return nest.map_structure(lambda t: mapping.get(id(t), t), value)

    for node in nodes:
        first = remap(node.structure)
        args = [remap(a) for a in node.call_args]
        kwargs = {key: remap(value) for key, value in node.call_kwargs.items()}
        if training is not None and getattr(node.layer, "_expects_training", False) and "training" not in kwargs:
            kwargs["training"] = training
        result = node.layer(first, *args, **kwargs)
        for old, new in zip(node.output_tensors, nest.flatten(result)):
            mapping[id(old)] = new
    return [mapping.get(id(t), t) for t in outputs]
