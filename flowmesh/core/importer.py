"""``tf.import_graph_def``: ops of a ``GraphDef`` (TensorFlow's or flowmesh's) into the
default graph.

Nodes may come in any order (they are created inputs first); each is created through the
op registry, so shapes are inferred as if the graph had been built by hand. Names get the
prefix ``name`` (default ``"import"``, made unique; ``""`` for none). ``input_map`` replaces
inputs (``"x:0"`` or ``"x"`` -> a Tensor, ``"^x"`` -> an Operation). Attrs whose names start
with ``_`` are dropped, except ``_class`` (colocation).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from flowmesh.core import registry
from flowmesh.core.graph import get_default_graph
from flowmesh.core.graph_def import as_graph_def_message, attr_from_proto
from flowmesh.core.import_ref_variables import REF_VARIABLE_OPS, translate_consumer, variable_handle
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError, NotFoundError

# TensorFlow op types with a flowmesh op of the same semantics under another name.
# (flowmesh's RegexFullMatch takes its pattern as an attr, as TensorFlow's StaticRegexFullMatch;
# TensorFlow's Select is SelectV2 once a vector condition is reshaped to select rows.)
_ALIASES = {"Add": "AddV2", "BatchMatMul": "BatchMatMulV2", "Div": "RealDiv",
            "StaticRegexFullMatch": "RegexFullMatch", "Select": "SelectV2"}


def _split_input(ref: str) -> tuple[str, int, bool]:
    """(op name, output index, is_control) of a NodeDef input string."""
    if ref.startswith("^"):
        return ref[1:], -1, True
    name, _, index = ref.partition(":")
    return name, int(index) if index else 0, False


def _order(nodes: Sequence[Any]) -> list[Any]:
    """Nodes with every producer before its consumers (iterative DFS; cycles are an error)."""
    by_name = {n.name: n for n in nodes}
    state: dict[str, int] = {}
    ordered: list[Any] = []
    for root in nodes:
        stack = [(root, False)]
        while stack:
            node, done = stack.pop()
            if done:
                state[node.name] = 2
                ordered.append(node)
                continue
            if state.get(node.name) == 2:
                continue
            if state.get(node.name) == 1:
                raise InvalidArgumentError(None, None, f"GraphDef has a cycle through node '{node.name}' "
                                           "(TensorFlow 1.x control-flow loops are not importable)")
            state[node.name] = 1
            stack.append((node, True))
            for ref in node.input:
                producer = by_name.get(_split_input(ref)[0])
                if producer is not None and state.get(producer.name) != 2:
                    stack.append((producer, False))
    return ordered


def import_graph_def(graph_def: Any, input_map: dict[str, Any] | None = None,
                     return_elements: Sequence[str] | None = None, name: str | None = None,
                     op_dict: Any = None, producer_op_list: Any = None) -> list[Any] | None:
    """Imports ``graph_def`` into the default graph (``tf.import_graph_def``).

    Returns:
        The ops/tensors named in ``return_elements`` (``"op"`` -> Operation, ``"op:k"`` ->
        Tensor), or None.

    Raises:
        NotFoundError: a node's op type is not defined in flowmesh (naming node and type).
        ValueError: an ``input_map`` key or a ``return_elements`` name the graph lacks.
    """
    graph_def = as_graph_def_message(graph_def)
    graph = get_default_graph()
    input_map = {(k if ":" in k or k.startswith("^") else f"{k}:0"): v for k, v in (input_map or {}).items()}
    used: set[str] = set()
    with graph.name_scope(name if name is not None else "import") as scope:
        prefix = scope if name != "" else ""
        created: dict[str, Any] = {}
        refs: set[str] = set()   # TensorFlow ref variables, imported as resource variables
        for node in _order(graph_def.node):
            created[node.name] = _create(graph, node, prefix, created, input_map, used, refs)
    unused = sorted(set(input_map) - used)
    if unused:
        raise ValueError(f"Attempted to map inputs that were not found in graph_def: [{', '.join(unused)}]")
    if return_elements is None:
        return None
    return [_element(created, ref) for ref in return_elements]


def _element(created: dict[str, Any], ref: str) -> Any:
    op_name, index, _ = _split_input(ref)
    op = created.get(op_name)
    if op is None:
        raise ValueError(f"Requested return_element {ref!r} not found in graph_def.")
    return op if ":" not in ref else op.outputs[index]


def _checkpoint_form(node: Any, op_type: str, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """TensorFlow's ``SaveV2``/``RestoreV2`` take the tensor names and slice specs as string
    inputs; flowmesh's take them as attrs (read here from the ``Const`` inputs)."""
    lists = []
    for t in inputs[1:3]:
        if t.op.type != "Const":
            raise InvalidArgumentError(None, None, f"Node '{node.name}' ({op_type}): flowmesh needs its "
                                       f"tensor names and slices as constants, got a {t.op.type}.")
        lists.append([v.decode() if isinstance(v, bytes) else str(v) for v in t.op.attrs["value"].reshape(-1)])
    attrs["tensor_names"], attrs["shape_and_slices"] = lists
    if op_type == "RestoreV2":
        attrs["targets"] = list(lists[0])
        attrs["reshape"] = False
        attrs["shapes"] = [TensorShape(None)] * len(lists[0])
    return [inputs[0], *inputs[3:]]


def _select_form(graph: Any, node: Any, prefix: str, inputs: list[Any]) -> list[Any]:
    """TensorFlow 1.x ``Select`` with a vector condition selects rows of higher-rank ``x``:
    the condition is reshaped to ``[n, 1, ..., 1]`` so that ``SelectV2`` broadcasts it."""
    cond, x, y = inputs
    if cond.shape.rank != 1 or x.shape.rank in (0, 1):
        return inputs
    if x.shape.rank is None:
        raise InvalidArgumentError(None, None, f"Node '{node.name}' (Select): a vector condition needs "
                                   "x of known rank to select its rows")
    from flowmesh.core import dtypes

    target = np.array([-1] + [1] * (x.shape.rank - 1), np.int32)
    shape = graph.create_op("Const", [], {"value": target, "dtype": dtypes.int32},
                            name=f"{prefix}{node.name}/row_condition_shape/")
    rows = graph.create_op("Reshape", [cond, shape.outputs[0]], {}, name=f"{prefix}{node.name}/row_condition/")
    return [rows.outputs[0], x, y]


def _create(graph: Any, node: Any, prefix: str, created: dict[str, Any], input_map: dict[str, Any],
            used: set[str], refs: set[str]) -> Any:
    inputs, controls, ref_positions = [], [], []
    for ref in node.input:
        op_name, index, control = _split_input(ref)
        key = f"^{op_name}" if control else f"{op_name}:{index}"
        if key in input_map:
            used.add(key)
            (controls if control else inputs).append(input_map[key])
            continue
        producer = created.get(op_name)
        if producer is None:
            raise ValueError(f"Node '{node.name}': input '{ref}' is not in the graph_def")
        if not control and op_name in refs:
            ref_positions.append(len(inputs))
        (controls if control else inputs).append(producer if control else producer.outputs[index])
    op_type = node.op
    if op_type in REF_VARIABLE_OPS:
        refs.add(node.name)
        attrs = {k: attr_from_proto(v, node.name, k) for k, v in node.attr.items() if not k.startswith("_")}
        with graph.control_dependencies(controls):
            return _placed(variable_handle(graph, node, prefix, attrs), node, prefix)
    if ref_positions:
        raw = {k: attr_from_proto(v, node.name, k) for k, v in node.attr.items() if not k.startswith("_")}
        with graph.control_dependencies(controls):
            op_type, inputs, kept = translate_consumer(graph, node, prefix, op_type, inputs, raw, ref_positions)
        if op_type != node.op:
            with graph.control_dependencies(controls):
                return _placed(graph.create_op(op_type, inputs, kept, name=f"{prefix}{node.name}/"), node,
                               prefix)
    try:
        registry.get_op_def(op_type)
    except NotFoundError:
        if op_type not in _ALIASES:
            raise NotFoundError(None, None, f"Op type not registered '{op_type}' (node '{node.name}' of the "
                                "imported GraphDef): flowmesh has no such op.") from None
        op_type = _ALIASES[op_type]
    attrs = {k: attr_from_proto(v, node.name, k) for k, v in node.attr.items() if not k.startswith("_")}
    if op_type in ("SaveV2", "RestoreV2") and "tensor_names" not in attrs:
        inputs = _checkpoint_form(node, op_type, inputs, attrs)
    if node.op == "Select":
        inputs = _select_form(graph, node, prefix, inputs)
        attrs.pop("T", None)
    if node.attr["_tensor_bundle"].b if "_tensor_bundle" in node.attr else False:
        attrs["_tensor_bundle"] = True
    with graph.control_dependencies(controls):
        op = graph.create_op(op_type, inputs, attrs, name=f"{prefix}{node.name}/")
    return _placed(op, node, prefix)


def _placed(op: Any, node: Any, prefix: str) -> Any:
    """``op`` with ``node``'s device and colocation groups."""
    if node.device:
        op._set_device(node.device)
    groups = [g.decode()[len("loc:@"):] for g in node.attr["_class"].list.s] if "_class" in node.attr else []
    if groups:
        op._colocation = tuple(sorted(f"{prefix}{g}" for g in groups))
    return op
