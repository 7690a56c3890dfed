"""TensorFlow-format ``save_weights``/``load_weights``: tf-keras's object-graph checkpoint.

A checkpoint holds each weight under the *path* from the model to it, not under the
variable's graph name, so a second model of the same structure (whose variables are
``dense_2/kernel``...) loads it, and files interchange with tf-keras both ways. The
paths are tf-keras's object dependencies:

* a functional or ``Sequential`` model: ``layer-<i>`` for its ``i``-th layer (the
  ``InputLayer`` of a functional model counts) and ``layer_with_weights-<k>`` for its
  ``k``-th layer that has weights (the name a weight's key is built from);
* a layer (or a subclassed model): its weights by the name given to ``add_weight``
  (``kernel``, ``moving_mean``), then the layers it holds by attribute name (``cell``,
  ``forward_layer``; a list of layers by index);

so ``Dense``'s kernel in the first layer with weights is stored as
``layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE``. The files are TensorFlow's
tensor bundle with the tree itself (a ``TrackableObjectGraph``) in the string tensor
``_CHECKPOINTABLE_OBJECT_GRAPH``, plus the directory's ``checkpoint`` state file.
``load_weights`` walks the saved tree and the model together by those names: entries the
model lacks (tf-keras's optimizer slots) are skipped; a checkpoint without the tree
(written by ``tf.train.Saver``) is restored by variable name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.keras import backend

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"


class _ListNode:
    """A list of layers held by a layer (tf-keras's ``ListWrapper``): children ``0``, ``1``..."""

    def __init__(self, items: list[Any]):
        self.items = items


def _escape(name: str) -> str:
    """TensorFlow's escaping of a local name inside a checkpoint key."""
    return name.replace(".", "..").replace("/", "./")


def _is_layer(obj: Any) -> bool:
    from flowmesh.keras.engine.base_layer import Layer

    return isinstance(obj, Layer)


def children(obj: Any) -> list[tuple[str, Any]]:
    """``(local name, object)`` dependencies of a model, layer or list of layers, in
    tf-keras's order (an object may appear under two names)."""
    if isinstance(obj, _ListNode):
        return [(str(i), item) for i, item in enumerate(obj.items)]
    if not _is_layer(obj):
        return []
    if hasattr(obj, "_seq_layers") or getattr(obj, "_is_graph_network", False):  # Sequential, functional
        deps: list[tuple[str, Any]] = []
        with_weights = 0
        for i, layer in enumerate(obj.layers):
            if layer.weights:
                deps.append((f"layer_with_weights-{with_weights}", layer))
                with_weights += 1
            deps.append((f"layer-{i}", layer))
        return deps
    names = getattr(obj, "_weight_local_names", {})
    deps = [(names.get(id(w), w.op.name.rsplit("/", 1)[-1]), w)
            for w in list(obj._trainable_weights) + list(obj._non_trainable_weights)]
    for attr, value in vars(obj).items():  # private attributes too, as tf-keras tracks them
        if attr in ("_inbound_nodes", "_layers", "_seq_layers"):
            continue
        if _is_layer(value) and value is not obj:
            deps.append((attr, value))
        elif isinstance(value, (list, tuple)) and value and all(_is_layer(v) for v in value):
            deps.append((attr, _ListNode(list(value))))
    return deps


def _tree(model: Any) -> tuple[list[Any], list[list[tuple[str, int]]], dict[int, str]]:
    """The objects breadth-first from ``model``, each one's ``(name, node id)`` children,
    and each variable's checkpoint key (built from its first, shortest path)."""
    nodes, refs, ids = [model], [], {id(model): 0}
    paths: dict[int, list[str]] = {0: []}
    keys: dict[int, str] = {}
    position = 0
    while position < len(nodes):
        obj = nodes[position]
        node_refs = []
        for name, child in children(obj):
            if id(child) not in ids:
                ids[id(child)] = len(nodes)
                paths[len(nodes)] = paths[position] + [name]
                nodes.append(child)
            node_refs.append((name, ids[id(child)]))
        refs.append(node_refs)
        if not _is_layer(obj) and not isinstance(obj, _ListNode):
            keys[position] = "/".join(_escape(p) for p in paths[position]) + VALUE_SUFFIX
        position += 1
    return nodes, refs, keys


def _object_graph(nodes: list[Any], refs: list[list[tuple[str, int]]], keys: dict[int, str]) -> bytes:
    from flowmesh.protos.trackable import TrackableObjectGraph

    graph = TrackableObjectGraph()
    has_values = [False] * len(nodes)
    for index in reversed(range(len(nodes))):
        has_values[index] = index in keys or any(has_values[c] for _, c in refs[index] if c > index)
    for index, obj in enumerate(nodes):
        node = graph.nodes.add()
        for name, child in refs[index]:
            node.children.add(node_id=child, local_name=name)
        if index in keys:
            node.attributes.add(name="VARIABLE_VALUE", full_name=obj.op.name, checkpoint_key=keys[index])
        node.has_checkpoint_values.value = has_values[index]
    return graph.SerializeToString()


def save(model: Any, prefix: str) -> None:
    """Writes ``model``'s weights to the checkpoint ``prefix`` (TensorFlow's format)."""
    from flowmesh.checkpoint.state import update_checkpoint_state
    from flowmesh.checkpoint.tensor_bundle import write_bundle
    from flowmesh.checkpoint.writer import SaveSpec
    from flowmesh.formats import filesystem as fs

    nodes, refs, keys = _tree(model)
    variables = [(keys[i], nodes[i]) for i in sorted(keys)]
    values = backend.batch_get_value([v for _, v in variables])
    specs = [SaveSpec(key, np.asarray(value), v.dtype.base_dtype.name)
             for (key, v), value in zip(variables, values)]
    graph = np.array(_object_graph(nodes, refs, keys), dtype=object)
    specs.append(SaveSpec(OBJECT_GRAPH_KEY, graph, "string"))
    write_bundle(prefix, specs)
    update_checkpoint_state(fs.dirname(prefix) or ".", prefix)


def has_object_graph(reader: Any) -> bool:
    return reader.has_tensor(OBJECT_GRAPH_KEY)


def restore(model: Any, reader: Any, skip_mismatch: bool = False) -> None:
    """Assigns the checkpoint's values to ``model``'s weights, matched by structure.

    Raises:
        ValueError: nothing in the checkpoint matches the model (an unbuilt model, or
            another architecture), or a weight's shape differs (naming both shapes).
    """
    from flowmesh.protos.trackable import TrackableObjectGraph

    graph = TrackableObjectGraph()
    graph.ParseFromString(reader.get_tensor(OBJECT_GRAPH_KEY))
    assignments: list[tuple[Any, Any]] = []
    seen: set[tuple[int, int]] = set()
    pending = [(0, model)]
    while pending:
        node_id, obj = pending.pop(0)
        if (node_id, id(obj)) in seen:
            continue
        seen.add((node_id, id(obj)))
        node = graph.nodes[node_id]
        if node.attributes and not _is_layer(obj) and not isinstance(obj, _ListNode):
            value = reader.get_tensor(node.attributes[0].checkpoint_key)
            have = tuple(obj.shape.as_list())
            if have != np.shape(value):
                if skip_mismatch:
                    continue
                raise ValueError(f"Shape mismatch loading weights: the model's {obj.op.name} has shape {have}, "
                                 f"the checkpoint's {node.attributes[0].checkpoint_key} has {np.shape(value)}.")
            assignments.append((obj, value))
            continue
        ours = dict(children(obj))
        pending += [(ref.node_id, ours[ref.local_name]) for ref in node.children if ref.local_name in ours]
    if not assignments:
        raise ValueError(f"No weight of model {model.name} matches the checkpoint {reader.prefix}: build the model "
                         "first (call it on data or model.build(input_shape)) and give it the saved architecture.")
    backend.batch_set_value(assignments)
