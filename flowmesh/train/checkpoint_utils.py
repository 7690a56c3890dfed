"""``tf.train.init_from_checkpoint``: initialize variables from a checkpoint (flowmesh's or
TensorFlow's) instead of their initializers.

Each mapped variable's initializer becomes an assignment from a ``RestoreV2`` of the
checkpoint tensor (one per part of a partitioned variable, reading its slice), so
``global_variables_initializer()`` loads the checkpoint values. ``assignment_map`` is
TensorFlow's: ``{"ckpt_scope/": "scope/"}`` maps every variable under ``scope/`` to the
checkpoint name with ``ckpt_scope/`` in its place (``"/"`` is the checkpoint's root);
``{"ckpt/name": "var/name" | Variable | [parts]}`` maps one variable.
"""

from __future__ import annotations

from typing import Any

from flowmesh.checkpoint.reader import load_checkpoint, resolve_checkpoint
from flowmesh.core.graph import GraphKeys, get_default_graph
from flowmesh.ops import io_ops
from flowmesh.ops import resource_variable_ops as rv
from flowmesh.ops.partitioned_variables import PartitionedVariable


def _graph_variables() -> dict[str, Any]:
    """Variables by name; a partitioned variable's parts under its full name."""
    found: dict[str, Any] = {}
    graph = get_default_graph()
    for var in graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
        info = getattr(var, "_save_slice_info", None)
        if info is not None:
            found.setdefault(info.full_name, []).append(var)
        else:
            found[var.op.name] = var
    return found


def _parts(value: Any) -> list[Any]:
    if isinstance(value, PartitionedVariable):
        return list(value)
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _init_from(prefix: str, ckpt_name: str, value: Any, shapes: dict[str, list[int]]) -> None:
    """Makes each part's initializer restore its slice of ``ckpt_name``.

    Raises:
        ValueError: the checkpoint lacks ``ckpt_name`` or its shape differs.
    """
    if ckpt_name not in shapes:
        raise ValueError(f"Tensor {ckpt_name} is not found in {prefix} checkpoint "
                         f"(it holds {', '.join(sorted(shapes)[:8])}{' ...' if len(shapes) > 8 else ''}).")
    for var in _parts(value):
        info = getattr(var, "_save_slice_info", None)
        full = info.full_shape if info is not None else var.shape.as_list()
        if list(shapes[ckpt_name]) != list(full):
            raise ValueError(f"Shape of variable {var.op.name} ({full}) doesn't match with shape of "
                             f"tensor {ckpt_name} ({shapes[ckpt_name]}) from checkpoint reader.")
        graph = var.graph
        with graph.colocate_with(var.op), graph.name_scope(var.op.name + "/"):
            restored = io_ops.restore_v2(prefix, [ckpt_name], [info.spec if info else ""], [var.dtype],
                                         name="checkpoint_initializer")[0]
            var._initializer_value = rv.assign_variable_op(var.handle, restored, name="Assign_ckpt")
        var._initial_value = restored


def init_from_checkpoint(ckpt_dir_or_file: str, assignment_map: Any) -> None:
    """Replaces the initializers of the mapped variables by loads from the checkpoint
    (``tf.train.init_from_checkpoint``; see the module docstring for ``assignment_map``).

    Raises:
        ValueError: a mapped variable or checkpoint tensor does not exist, or shapes differ.
    """
    prefix = resolve_checkpoint(ckpt_dir_or_file)
    with load_checkpoint(prefix) as reader:
        shapes = reader.get_variable_to_shape_map()
    variables = _graph_variables()
    items = assignment_map.items() if isinstance(assignment_map, dict) else assignment_map
    for ckpt_key, current in items:
        if not isinstance(current, str):
            _init_from(prefix, ckpt_key, current, shapes)
        elif not current.endswith("/") and current in variables:
            _init_from(prefix, ckpt_key, variables[current], shapes)
        elif current.endswith("/") or ckpt_key.endswith("/"):
            _init_scope(prefix, ckpt_key, current, variables, shapes)
        else:
            raise ValueError(f"Variable {current} not found in the graph (assignment_map {ckpt_key!r} -> "
                             f"{current!r}).")


def _init_scope(prefix: str, ckpt_scope: str, scope: str, variables: dict[str, Any],
                shapes: dict[str, list[int]]) -> None:
    ckpt_scope = "" if ckpt_scope == "/" else ckpt_scope
    scope = "" if scope == "/" else scope
    matched = [name for name in variables if name.startswith(scope)]
    if not matched:
        raise ValueError(f"No variables under scope {scope!r} to initialize from {prefix}.")
    for name in matched:
        _init_from(prefix, ckpt_scope + name[len(scope):], variables[name], shapes)
