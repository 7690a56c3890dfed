"""The dataflow graph: :class:`Graph`, the default-graph stack and ``tf.*`` scope functions.

:class:`~flowmesh.core.tensor.Tensor`, :class:`~flowmesh.core.operation.Operation` and
:class:`~flowmesh.core.graph_keys.GraphKeys` live in their own modules and are re-exported
here.

A :class:`Graph` owns operations in creation order (always a topological order), its
collections, and the builder scopes of TensorFlow 1.x (name scopes, control dependencies,
devices, colocation; in :mod:`flowmesh.core.graph_scopes`). Ops are created through
:meth:`Graph.create_op`, which runs the op's shape rule from the registry.
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from flowmesh.core import dtypes as _dtypes
from flowmesh.core import registry
from flowmesh.core.graph_keys import GraphKeys
from flowmesh.core.graph_scopes import ControlDependencyScope, GraphScopes
from flowmesh.core.operation import Operation
from flowmesh.core.shapes import TensorShape
from flowmesh.core.tensor import Tensor

__all__ = [
    "Graph", "GraphKeys", "Operation", "Tensor", "add_to_collection", "add_to_collections",
    "colocate_with", "control_dependencies", "device", "get_collection", "get_collection_ref",
    "get_default_graph", "graph_of", "name_scope", "reset_default_graph",
]

_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")
_PACKAGE_DIR = __file__.rsplit("/core/", 1)[0]


CHECK_NUMERICS = [False]  # set by tf.debugging.enable_check_numerics / disable_check_numerics
# set by tf.debugging.experimental.enable_dump_debug_info: which op types to dump (None: none)
DEBUG_DUMP_OPS: list[Any] = [None]


class Graph(GraphScopes):
    """A TensorFlow 1.x style dataflow graph.

    Example:
        >>> g = Graph()
        >>> with g.as_default():
        ...     c = tf.constant(1.0)
    """

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.RLock()
        self._ops: list[Operation] = []
        self._nodes_by_name: dict[str, Operation] = {}
        self._collections: dict[str, list[Any]] = {}
        self._finalized = False
        self._version = 0
        self._seed: int | None = None
        self._last_id = 0
        self._unfetchable: set[Any] = set()
        self._unfeedable: set[Tensor] = set()
        self._variable_store: Any = None  # set lazily by flowmesh.ops.variable_scope
        self._random_seed_offset = 0

    # --- default graph -----------------------------------------------------------------
    @contextlib.contextmanager
    def as_default(self) -> Iterator[Graph]:
        """Makes this graph the default graph of the current thread."""
        stack = _default_graph_stack()
        stack.append(self)
        try:
            yield self
        finally:
            stack.pop()

    # --- properties --------------------------------------------------------------------
    @property
    def version(self) -> int:
        return self._version

    @property
    def finalized(self) -> bool:
        return self._finalized

    def finalize(self) -> None:
        """Makes the graph read-only: further op creation raises RuntimeError."""
        self._finalized = True

    def _unsafe_unfinalize(self) -> None:
        self._finalized = False

    @property
    def seed(self) -> int | None:
        return self._seed

    @seed.setter
    def seed(self, seed: int | None) -> None:
        self._seed = seed

    @property
    def building_function(self) -> bool:
        return False

    def as_graph_def(self, from_version: int | None = None, add_shapes: bool = False) -> Any:
        """The graph as TensorFlow's ``GraphDef`` protobuf (``flowmesh.core.graph_def``):
        TensorFlow imports it and TensorBoard draws it. ``add_shapes`` adds each node's
        ``_output_shapes``; ``from_version`` is ignored. (``flowmesh.core.serialize`` is the
        lossless format flowmesh ships graphs to servers in.)
        """
        from flowmesh.core.graph_def import graph_to_graph_def

        graph_def = graph_to_graph_def(self)
        if add_shapes:
            from flowmesh.core.graph_def import shape_to_proto

            for node, op in zip(graph_def.node, self.get_operations()):
                node.attr["_output_shapes"].list.shape.extend(shape_to_proto(t.shape) for t in op.outputs)
        return graph_def

    def get_operations(self) -> list[Operation]:
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings, got {type(name).__name__}")
        if ":" in name:
            raise ValueError(
                f"Name '{name}' appears to refer to a Tensor, not an Operation; drop the ':0'"
            )
        try:
            return self._nodes_by_name[name]
        except KeyError:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.") from None

    def get_tensor_by_name(self, name: str) -> Tensor:
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings, got {type(name).__name__}")
        op_name, sep, index = name.rpartition(":")
        if not sep or not index.isdigit():
            raise ValueError(
                f"The name '{name}' looks like an Operation name; Tensor names look like "
                f"'{name}:0'"
            )
        try:
            op = self._nodes_by_name[op_name]
        except KeyError:
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. "
                           f"The operation, '{op_name}', does not exist in the graph.") from None
        if int(index) >= len(op.outputs):
            raise KeyError(
                f"The name '{name}' refers to a Tensor which does not exist. The operation "
                f"'{op_name}' has {len(op.outputs)} outputs."
            )
        return op.outputs[int(index)]

    def as_graph_element(self, obj: Any, allow_tensor: bool = True, allow_operation: bool = True) -> Any:
        """Resolves a Tensor, Operation or name to an element of this graph."""
        if isinstance(obj, str):
            if ":" in obj and allow_tensor:
                return self.get_tensor_by_name(obj)
            if allow_operation:
                return self.get_operation_by_name(obj)
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj.name} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj.name} is not an element of this graph.")
            return obj
        converter = getattr(obj, "_as_graph_element", None)
        if converter is not None:
            return self.as_graph_element(converter(), allow_tensor, allow_operation)
        raise TypeError(f"Can not convert a {type(obj).__name__} into a Tensor or Operation.")

    # --- collections ---------------------------------------------------------------------
    def add_to_collection(self, name: str, value: Any) -> None:
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names: Any, value: Any) -> None:
        names = (names,) if isinstance(names, str) else set(names)
        for name in names:
            self.add_to_collection(name, value)

    def get_collection_ref(self, name: str) -> list[Any]:
        return self._collections.setdefault(name, [])

    def get_collection(self, name: str, scope: str | None = None) -> list[Any]:
        items = self._collections.get(name, [])
        if scope is None:
            return list(items)
        pattern = re.compile(scope)
        return [x for x in items if hasattr(x, "name") and pattern.match(x.name)]

    def get_all_collection_keys(self) -> list[str]:
        return [k for k, v in self._collections.items() if isinstance(v, list)]

    def clear_collection(self, name: str) -> None:
        self._collections.pop(name, None)

    # --- feed / fetch restrictions -----------------------------------------------------
    def prevent_feeding(self, tensor: Tensor) -> None:
        self._unfeedable.add(tensor)

    def prevent_fetching(self, op: Operation) -> None:
        self._unfetchable.add(op)

    def is_feedable(self, tensor: Tensor) -> bool:
        return tensor not in self._unfeedable

    def is_fetchable(self, tensor_or_op: Any) -> bool:
        op = tensor_or_op.op if isinstance(tensor_or_op, Tensor) else tensor_or_op
        return op not in self._unfetchable

    # --- op creation -------------------------------------------------------------------
    def _check_not_finalized(self) -> None:
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")

    def capture(self, tensor: Tensor) -> Tensor:
        """Maps a tensor of another graph into this one (function graphs override this)."""
        raise ValueError(
            f"Tensor {tensor.name} must be from the same graph as the op that uses it "
            "(it belongs to a different tf.Graph)."
        )

    def create_op(
        self,
        op_type: str,
        inputs: Sequence[Tensor],
        attrs: dict[str, Any] | None = None,
        name: str | None = None,
        output_specs: Sequence[tuple[_dtypes.DType, TensorShape]] | None = None,
    ) -> Operation:
        """Creates an op of a registered type, running its shape rule.

        ``name`` is made unique within the current name scope (default: the op type).
        ``output_specs`` skips the shape rule (used when deserializing graphs).

        Raises:
            NotFoundError: if ``op_type`` is not registered.
            InvalidArgumentError / TypeError: if the shape rule rejects the inputs.
        """
        self._check_not_finalized()
        op_def = registry.get_op_def(op_type)
        attrs = dict(attrs or {})
        if CHECK_NUMERICS[0]:  # tf.debugging.enable_check_numerics: the kernel checks its outputs
            attrs.setdefault("_check_numerics", True)
        if DEBUG_DUMP_OPS[0] is not None and DEBUG_DUMP_OPS[0](op_type):
            attrs.setdefault("_debug_dump", True)
        override = self._gradient_override_map.get(op_type)
        if override is not None:  # TensorFlow records the override when the op is created
            attrs.setdefault("_gradient_op_type", override)
        inputs = [t if t.graph is self else self.capture(t) for t in inputs]
        if output_specs is None:
            output_specs = registry.run_shape_fn(op_def, inputs, attrs, name or op_type)
        with self._lock:
            if name is None or name.endswith("/"):
                full_name = name[:-1] if name else self.unique_name(op_type)
            else:
                if not _VALID_OP_NAME.match(name):
                    raise ValueError(f"'{name}' is not a valid node name")
                full_name = self.unique_name(name)
            if full_name in self._nodes_by_name:
                raise ValueError(f"Duplicate node name in graph: '{full_name}'")
            self._last_id += 1
            control_inputs = self._control_inputs_for(inputs)
            op = Operation(self, full_name, op_type, inputs, output_specs, attrs,
                           control_inputs, self._last_id)
            self._place_new_op(op)
            op._traceback = _user_frame()
            for t in inputs:
                t._consumers.append(op)
            for c in control_inputs:
                c._control_outputs.append(op)
            self._ops.append(op)
            self._nodes_by_name[full_name] = op
            for controller in self._control_dependencies_stack:
                controller.created.add(op)
            self._version += 1
        if self._attr_scope_map:
            self._apply_attr_scope(op)
        return op

    def _add_existing_op(self, op: Operation) -> None:
        """Registers an op built outside ``create_op`` (deserialization)."""
        self._last_id = max(self._last_id, op._id)
        for t in op._inputs:
            t._consumers.append(op)
        for c in op._control_inputs:
            c._control_outputs.append(op)
        self._ops.append(op)
        self._nodes_by_name[op._name] = op
        self._names_in_use[op._name.lower()] = max(1, self._names_in_use.get(op._name.lower(), 0))
        self._version += 1

    def __repr__(self) -> str:
        return f"<flowmesh.Graph with {len(self._ops)} ops at {id(self):#x}>"


def _user_frame() -> tuple[str, int] | None:
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR) or "/examples/" in filename:
            return (filename, frame.f_lineno)
        frame = frame.f_back  # type: ignore[assignment]
    return None


# --- the default graph -------------------------------------------------------------------
_global_default_graph: Graph | None = None
_thread_state = threading.local()


def _default_graph_stack() -> list[Graph]:
    stack = getattr(_thread_state, "stack", None)
    if stack is None:
        stack = _thread_state.stack = []
    return stack


def get_default_graph() -> Graph:
    """The innermost graph of ``Graph.as_default()`` scopes, or the global default graph."""
    stack = _default_graph_stack()
    if stack:
        return stack[-1]
    global _global_default_graph
    if _global_default_graph is None:
        _global_default_graph = Graph()
    return _global_default_graph


def reset_default_graph() -> None:
    """Clears the global default graph (not allowed inside a ``Graph.as_default()`` scope)."""
    if _default_graph_stack():
        raise AssertionError(
            "Do not use tf.reset_default_graph() to clear nested graphs. If you need a "
            "cleared graph, exit the nesting and create a new graph."
        )
    global _global_default_graph
    _global_default_graph = Graph()


def graph_of(values: Sequence[Any]) -> Graph:
    """The graph that ``values`` (tensors/ops, others ignored) belong to, else the default.

    The innermost function graph wins over its outer graphs so captures work.
    """
    default = get_default_graph()
    found: Graph | None = None
    for value in values:
        g = getattr(value, "graph", None)
        if not isinstance(g, Graph):
            continue
        if found is None:
            found = g
        elif g is not found:
            if _is_outer_of(found, g):
                found = g
            elif not _is_outer_of(g, found):
                raise ValueError(
                    f"{value!r} must be from the same graph as the other inputs of this op."
                )
    if found is None or _is_outer_of(found, default):
        return default
    return found


def _is_outer_of(outer: Graph, inner: Graph) -> bool:
    g: Any = getattr(inner, "outer_graph", None)
    while g is not None:
        if g is outer:
            return True
        g = getattr(g, "outer_graph", None)
    return False


# Module-level conveniences mirroring tf.* -------------------------------------------------
def name_scope(name: str | None, default_name: str | None = None, values: Sequence[Any] | None = None):
    """``tf.name_scope(name, default_name=None, values=None)``."""
    graph = graph_of(values or [])
    scope = name if name is not None else default_name
    if scope is None and name is None and default_name is None:
        return graph.name_scope(None)
    return graph.name_scope(scope)


def control_dependencies(control_inputs: Sequence[Any] | None) -> ControlDependencyScope:
    """``tf.control_dependencies``: ops created inside run after ``control_inputs``."""
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function: Any):
    """``tf.device``: requests a device for ops created inside the scope."""
    return get_default_graph().device(device_name_or_function)


def colocate_with(op: Any, ignore_existing: bool = False):
    """``tf.colocate_with``: places new ops on ``op``'s device."""
    return get_default_graph().colocate_with(op, ignore_existing)


def add_to_collection(name: str, value: Any) -> None:
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names: Any, value: Any) -> None:
    get_default_graph().add_to_collections(names, value)


def get_collection(key: str, scope: str | None = None) -> list[Any]:
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key: str) -> list[Any]:
    return get_default_graph().get_collection_ref(key)
