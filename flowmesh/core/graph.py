"""The dataflow graph: :class:`Graph`, the default-graph stack and ``tf.*`` scope functions.

:class:`~flowmesh.core.tensor.Tensor`, :class:`~flowmesh.core.operation.Operation` and
:class:`~flowmesh.core.graph_keys.GraphKeys` live in their own modules and are re-exported
here.

A :class:`Graph` owns operations in creation order (always a topological order) plus
the builder state of TensorFlow 1.x: the name-scope stack, control-dependency scopes,
device scopes, colocation scopes and collections. Ops are created through
:meth:`Graph.create_op`, which runs the op's shape rule from the registry.
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from flowmesh.core import device_scopes, registry
from flowmesh.core import dtypes as _dtypes
from flowmesh.core.graph_keys import GraphKeys
from flowmesh.core.operation import Operation
from flowmesh.core.shapes import TensorShape
from flowmesh.core.tensor import Tensor

__all__ = [
    "Graph", "GraphKeys", "Operation", "Tensor", "add_to_collection", "add_to_collections",
    "colocate_with", "control_dependencies", "device", "get_collection", "get_collection_ref",
    "get_default_graph", "graph_of", "name_scope", "reset_default_graph",
]

_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\-/>]*$")
_PACKAGE_DIR = __file__.rsplit("/core/", 1)[0]


CHECK_NUMERICS = [False]  # set by tf.debugging.enable_check_numerics / disable_check_numerics
# set by tf.debugging.experimental.enable_dump_debug_info: which op types to dump (None: none)
DEBUG_DUMP_OPS: list[Any] = [None]

class Graph:
    """A TensorFlow 1.x style dataflow graph.

    Example:
        >>> g = Graph()
        >>> with g.as_default():
        ...     c = tf.constant(1.0)
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._ops: list[Operation] = []
        self._nodes_by_name: dict[str, Operation] = {}
        self._names_in_use: dict[str, int] = {}
        self._name_stack = ""
        self._control_dependencies_stack: list[_ControlDependencies] = []
        self._device_stack: list[Any] = []
        self._colocation_stack: list[Operation] = []
        self._collections: dict[str, list[Any]] = {}
        self._finalized = False
        self._version = 0
        self._seed: int | None = None
        self._last_id = 0
        self._gradient_override_map: dict[str, str] = {}
        self._attr_scope_map: dict[str, Any] = {}
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

    # --- naming ------------------------------------------------------------------------
    def get_name_scope(self) -> str:
        return self._name_stack

    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """Returns ``name`` prefixed by the scope and made unique (``x``, ``x_1``...)."""
        if self._name_stack:
            name = f"{self._name_stack}/{name}"
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base_key = key
            while key in self._names_in_use:
                key = f"{base_key}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{i - 1}"
        return name

    @contextlib.contextmanager
    def name_scope(self, name: str | None) -> Iterator[str]:
        """Pushes a name scope; yields the scope string ending in ``/`` (or "")."""
        old = self._name_stack
        if not name:
            new = ""
        elif name.endswith("/"):
            if not _VALID_SCOPE_NAME.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
            new = name[:-1]
        else:
            if not _VALID_SCOPE_NAME.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield f"{new}/" if new else ""
        finally:
            self._name_stack = old

    # --- control dependencies ------------------------------------------------------------
    def control_dependencies(self, control_inputs: Sequence[Any] | None) -> _ControlDependencies:
        """Ops created in this scope run after ``control_inputs``; ``None`` clears the scope."""
        if control_inputs is None:
            return _ControlDependencies(self, None)
        ops: list[Operation] = []
        for c in control_inputs:
            if hasattr(c, "_as_graph_element") and not isinstance(c, (Tensor, Operation)):
                c = c._as_graph_element()
            if isinstance(c, Tensor):
                c = c.op
            if not isinstance(c, Operation):
                raise TypeError(f"Control input must be an Operation or Tensor, got {c!r}")
            ops.append(self._resolve_control_input(c))
        return _ControlDependencies(self, ops)

    def _resolve_control_input(self, op: Operation) -> Operation:
        if op.graph is not self:
            raise ValueError(f"Control input {op.name} is not an element of this graph.")
        return op

    def _control_inputs_for(self, inputs: Sequence[Tensor]) -> list[Operation]:
        """TensorFlow's rule: a scope adds its control inputs unless one of the new op's
        inputs was itself created inside that scope (and so already depends on them)."""
        input_ops = [t.op for t in inputs]
        ops: list[Operation] = []
        for controller in self._control_dependencies_stack:
            if any(op in controller.created for op in input_ops):
                continue
            for op in controller.ops:
                if op not in ops:
                    ops.append(op)
        return ops

    # --- devices and colocation ----------------------------------------------------------
    @contextlib.contextmanager
    def device(self, device_name_or_function: Any) -> Iterator[None]:
        """Requests a device for ops created in this scope (see ``tf.device``).

        Args:
            device_name_or_function: a device string (``'/gpu:0'``), a ``DeviceSpec``, a
                function ``op -> device``, or ``None`` (ignore enclosing scopes).

        Raises:
            InvalidArgumentError: for a malformed device string (raised on entry).
            TypeError: for any other kind of argument.

        The rules for nested scopes are TensorFlow's; see :mod:`flowmesh.core.device_scopes`.
        """
        self._device_stack.append(device_scopes.normalize_scope_entry(device_name_or_function))
        try:
            yield
        finally:
            self._device_stack.pop()

    def _apply_device_scopes(self, op: Operation) -> None:
        """Sets ``op``'s requested device from the device scopes (innermost first)."""
        device_scopes.device_from_scopes(self._device_stack, op)

    @contextlib.contextmanager
    def colocate_with(self, op: Any, ignore_existing: bool = False) -> Iterator[None]:
        """Places ops created in this scope on the same device as ``op``.

        Enclosing device scopes are ignored inside (as in TensorFlow); ``op=None`` clears
        the colocation stack (TensorFlow additionally requires ``ignore_existing=True``).

        Raises:
            TypeError: ``op`` is not an Operation, Tensor or Variable.
        """
        target = None if op is None else device_scopes.colocation_target(op)
        saved_stack = self._colocation_stack
        saved_devices = self._device_stack
        if ignore_existing or target is None:
            self._colocation_stack = []
        if target is not None:
            self._colocation_stack = self._colocation_stack + [target]
        self._device_stack = []  # colocation overrides enclosing device scopes
        try:
            yield
        finally:
            self._colocation_stack = saved_stack
            self._device_stack = saved_devices

    @contextlib.contextmanager
    def _colocate_with_group(self, group_name: str) -> Iterator[None]:
        """Colocates new ops with the op *named* ``group_name``, which may not exist yet.

        TensorFlow uses this for a variable's callable initializer, created before the
        variable op itself: the initial value is then computed where the variable lives
        (e.g. on its parameter server), and enclosing device scopes are ignored.
        """
        marker = _ColocationGroup(group_name)
        saved_stack, saved_devices = self._colocation_stack, self._device_stack
        self._colocation_stack = [marker]  # type: ignore[list-item]
        self._device_stack = []
        try:
            yield
        finally:
            self._colocation_stack, self._device_stack = saved_stack, saved_devices

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

    # --- resource containers -----------------------------------------------------------
    @contextlib.contextmanager
    def container(self, container_name: str) -> Iterator[str]:
        """Variables created in this context live in the resource container
        ``container_name`` (which ``Session.reset(target, containers)`` can clear)."""
        saved = getattr(self, "_container", "")
        self._container = container_name
        try:
            yield container_name
        finally:
            self._container = saved

    # --- gradients -------------------------------------------------------------------
    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map: dict[str, str]) -> Iterator[None]:
        """Uses the gradient registered under another name for ops of the given types."""
        saved = dict(self._gradient_override_map)
        self._gradient_override_map.update(op_type_map)
        try:
            yield
        finally:
            self._gradient_override_map = saved

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

    @contextlib.contextmanager
    def _attr_scope(self, attr_map: dict[str, Any]) -> Iterator[None]:
        """Ops created inside get the attributes of ``attr_map`` they do not set themselves
        (TensorFlow's ``Graph._attr_scope``, used by ``tf.xla.experimental.jit_scope``). A
        value may be a callable of the op's ``NodeDef`` returning the value, or None for none."""
        if not isinstance(attr_map, dict):
            raise TypeError(f"_attr_scope takes a dict of attribute name -> value, got {type(attr_map).__name__}")
        saved = self._attr_scope_map
        self._attr_scope_map = {**saved, **attr_map}
        try:
            yield
        finally:
            self._attr_scope_map = saved

    def _apply_attr_scope(self, op: Operation) -> None:
        for key, value in self._attr_scope_map.items():
            if key in op._attrs:
                continue
            if callable(value):
                value = value(op.node_def)
            if value is not None:
                op._attrs[key] = value

    def _place_new_op(self, op: Operation) -> None:
        self._apply_device_scopes(op)
        device_scopes.apply_colocation(self._colocation_stack, op)

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


class _ColocationGroup:
    """A colocation target known only by name (see ``Graph._colocate_with_group``)."""

    __slots__ = ("_name", "_colocation", "_device")

    def __init__(self, name: str):
        self._name = name
        self._colocation = (name,)
        self._device = ""


def _user_frame() -> tuple[str, int] | None:
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR) or "/examples/" in filename:
            return (filename, frame.f_lineno)
        frame = frame.f_back  # type: ignore[assignment]
    return None


class _ControlDependencies:
    """Context manager returned by :meth:`Graph.control_dependencies`."""

    def __init__(self, graph: Graph, ops: list[Operation] | None):
        self.graph = graph
        self.ops = ops or []
        self.created: set[Operation] = set()
        self._clear = ops is None
        self._saved: list[_ControlDependencies] | None = None

    def __enter__(self) -> None:
        if self._clear:
            self._saved = self.graph._control_dependencies_stack
            self.graph._control_dependencies_stack = []
        else:
            self.graph._control_dependencies_stack.append(self)

    def __exit__(self, *exc: Any) -> None:
        if self._clear:
            self.graph._control_dependencies_stack = self._saved or []
        else:
            self.graph._control_dependencies_stack.remove(self)


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


def control_dependencies(control_inputs: Sequence[Any] | None) -> _ControlDependencies:
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
