# ruff: noqa: F822 - __all__ lists names the export table binds (flowmesh/api_exports.py)
"""``tf.graph_util``: ``GraphDef`` surgery (freezing variables, extracting sub-graphs).

They work on ``GraphDef`` protobufs, so their output runs in TensorFlow as well as in
flowmesh (``tf.import_graph_def``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.core.graph_def import as_graph_def_message, make_tensor_proto
from flowmesh.protos.graph import GraphDef, NodeDef

_fill_namespace(globals(), "graph_util")

_VARIABLE_OPS = ("VarHandleOp", "VariableV2", "Variable")


def _node_name(ref: str) -> str:
    return ref.lstrip("^").split(":")[0]


def extract_sub_graph(graph_def: Any, dest_nodes: Sequence[str]) -> GraphDef:
    """The nodes ``dest_nodes`` need (through data and control inputs), in their original order.

    Raises:
        TypeError: ``dest_nodes`` is a single string.
        AssertionError: a destination is not in the graph (TensorFlow's error type).
    """
    if isinstance(dest_nodes, str):
        raise TypeError("dest_nodes must be a list.")
    graph_def = as_graph_def_message(graph_def)
    by_name = {n.name: n for n in graph_def.node}
    for name in dest_nodes:
        assert name in by_name, f"{name} is not in graph"
    keep: set[str] = set()
    stack = list(dest_nodes)
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        stack.extend(_node_name(ref) for ref in by_name[name].input)
    out = GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    out.node.extend(n for n in graph_def.node if n.name in keep)
    return out


def _variable_reads(graph_def: GraphDef, names: set[str]) -> dict[str, str]:
    """A tensor name whose value is each variable's value (its read op's output)."""
    reads = {}
    for node in graph_def.node:
        if node.op == "ReadVariableOp" and node.input and _node_name(node.input[0]) in names:
            reads.setdefault(_node_name(node.input[0]), f"{node.name}:0")
    for name in names:
        reads.setdefault(name, f"{name}:0")  # ref variables (VariableV2) are readable directly
    return reads


def convert_variables_to_constants(sess: Any, input_graph_def: Any, output_node_names: Sequence[str],
                                   variable_names_whitelist: Sequence[str] | None = None,
                                   variable_names_blacklist: Sequence[str] | None = None) -> GraphDef:
    """Freezes a graph: the sub-graph ``output_node_names`` need, with every variable
    replaced by a ``Const`` of its current value in ``sess`` (and its reads by ``Identity``).

    Returns:
        The frozen ``GraphDef`` (TensorFlow imports and runs it).
    """
    sub = extract_sub_graph(input_graph_def, output_node_names)
    names = {n.name for n in sub.node if n.op in _VARIABLE_OPS
             and (variable_names_whitelist is None or n.name in variable_names_whitelist)
             and (variable_names_blacklist is None or n.name not in variable_names_blacklist)}
    full = as_graph_def_message(input_graph_def)
    reads = _variable_reads(full, names)
    values = dict(zip(reads, sess.run(list(reads.values())))) if reads else {}
    out = GraphDef()
    out.versions.CopyFrom(sub.versions)
    for node in sub.node:
        out.node.add().CopyFrom(_frozen(node, values))
    return out


def _frozen(node: NodeDef, values: dict[str, Any]) -> NodeDef:
    if node.name in values:
        dtype = node.attr["dtype"]
        const = NodeDef(name=node.name, op="Const", device=node.device)
        const.attr["dtype"].CopyFrom(dtype)
        const.attr["value"].tensor.CopyFrom(make_tensor_proto(values[node.name], dtype=dtype.type))
        return const
    if node.op == "ReadVariableOp" and node.input and _node_name(node.input[0]) in values:
        identity = NodeDef(name=node.name, op="Identity", device=node.device, input=list(node.input))
        identity.attr["T"].CopyFrom(node.attr["dtype"])
        return identity
    return node


def remove_training_nodes(input_graph: Any, protected_nodes: Sequence[str] | None = None) -> GraphDef:
    """Drops ``Identity`` and ``CheckNumerics`` nodes (not in ``protected_nodes``), rewiring
    their consumers to the node's input, as TensorFlow does before inference."""
    graph_def = as_graph_def_message(input_graph)
    protected = set(protected_nodes or ())
    skip = {n.name: n.input[0] for n in graph_def.node
            if n.op in ("Identity", "CheckNumerics") and n.name not in protected and n.input
            and not n.input[0].startswith("^") and not any(i.startswith("^") for i in n.input[1:])}

    def resolve(ref: str) -> str:
        control = ref.startswith("^")
        name = ref.lstrip("^")
        while _node_name(name) in skip and (":" not in name or name.endswith(":0")):
            name = skip[_node_name(name)]
        return f"^{_node_name(name)}" if control else name

    out = GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    for node in graph_def.node:
        if node.name in skip:
            continue
        copy = out.node.add()
        copy.CopyFrom(node)
        del copy.input[:]
        copy.input.extend(resolve(ref) for ref in node.input)
    return out


def must_run_on_cpu(node: Any, pin_variables_on_cpu: bool = False) -> bool:
    """True for nodes TensorFlow pins to the CPU (string or int32 consts/ops, variables
    when ``pin_variables_on_cpu``)."""
    node_def = node.node_def if hasattr(node, "node_def") else node
    if pin_variables_on_cpu and node_def.op in _VARIABLE_OPS:
        return True
    if node_def.op == "Const":
        return node_def.attr["dtype"].type in (3, 7)  # DT_INT32, DT_STRING
    return node_def.attr["T"].type == 7 if "T" in node_def.attr else False


def tensor_shape_from_node_def_name(graph: Any, input_name: str) -> Any:
    """The static shape of ``input_name`` (``"op"`` means ``"op:0"``) in ``graph``."""
    name = input_name if ":" in input_name else f"{input_name}:0"
    return graph.get_tensor_by_name(name).shape


__all__ = ["import_graph_def", "convert_variables_to_constants", "extract_sub_graph", "must_run_on_cpu",
           "remove_training_nodes", "tensor_shape_from_node_def_name"]
