"""TensorFlow 1.x *ref* variables in an imported ``GraphDef`` (what TensorFlow 1.x and
``tf.compat.v1.disable_v2_behavior()`` write: ``VariableV2`` nodes read through their ref
output and written by ``Assign``), as flowmesh's resource variables.

A ``VariableV2`` node becomes a ``VarHandleOp`` of the same name (its resource is the
node's ``shared_name``, or its full name); a consumer that writes the ref (``Assign``,
``AssignAdd``, ``AssignSub``, ``IsVariableInitialized``) becomes the resource op of the
same meaning, which returns the new value as TensorFlow's returns the ref; every other
consumer reads the value through its own ``ReadVariableOp``. Training ops that update a
ref in place (``Apply*``, ``Scatter*``) are refused with the node's name: import the
serving graph, or rebuild the training ops with flowmesh.
"""

from __future__ import annotations

from typing import Any

from flowmesh.errors import UnimplementedError

REF_VARIABLE_OPS = ("VariableV2", "Variable")
# TensorFlow ref op -> (flowmesh resource op, attrs kept)
_WRITERS = {"Assign": ("AssignVariableOp", ("validate_shape",)), "AssignAdd": ("AssignAddVariableOp", ()),
            "AssignSub": ("AssignSubVariableOp", ()), "IsVariableInitialized": ("VarIsInitializedOp", ())}


def variable_handle(graph: Any, node: Any, prefix: str, attrs: dict[str, Any]) -> Any:
    """The ``VarHandleOp`` standing for ref variable ``node``."""
    shared = attrs.get("shared_name") or f"{prefix}{node.name}"
    handle_attrs = {"dtype": attrs["dtype"], "shape": attrs["shape"], "shared_name": shared,
                    "container": attrs.get("container") or ""}
    return graph.create_op("VarHandleOp", [], handle_attrs, name=f"{prefix}{node.name}/")


def translate_consumer(graph: Any, node: Any, prefix: str, op_type: str, inputs: list[Any],
                       attrs: dict[str, Any], ref_positions: list[int]) -> tuple[str, list[Any], dict]:
    """``(op type, inputs, attrs)`` for a node reading or writing ref variables: the inputs
    at ``ref_positions`` are the variables' handles (see the module docstring)."""
    if op_type in _WRITERS and ref_positions == [0]:
        new_type, kept = _WRITERS[op_type]
        return new_type, inputs, {k: v for k, v in attrs.items() if k in kept}
    if op_type.startswith(("Apply", "SparseApply", "Scatter")) or op_type in _WRITERS or op_type == "CountUpTo":
        raise UnimplementedError(None, None, (
            f"Node '{node.name}' ({op_type}) updates a TensorFlow ref variable in place, which flowmesh "
            "cannot import; import the serving graph (a SavedModel's signatures, the restore ops) or "
            "rebuild the training ops with flowmesh"))
    inputs = list(inputs)
    for position in ref_positions:
        handle = inputs[position]
        read = graph.create_op("ReadVariableOp", [handle], {"dtype": handle.op.attrs["dtype"]},
                               name=f"{prefix}{node.name}/read_{position}/")
        inputs[position] = read.outputs[0]
    return op_type, inputs, attrs
