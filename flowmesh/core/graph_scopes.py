"""The builder scopes of a :class:`~flowmesh.core.graph.Graph`, TensorFlow 1.x's graph
state besides its ops: name scopes and unique names, control-dependency scopes, device and
colocation scopes, resource containers, gradient overrides and attribute scopes.
:class:`GraphScopes` holds them; ``Graph`` inherits it and consults it in ``create_op``
(``_control_inputs_for``, ``_place_new_op``, ``_apply_attr_scope``).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from typing import Any

from flowmesh.core import device_scopes
from flowmesh.core.operation import Operation
from flowmesh.core.tensor import Tensor

_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\-/>]*$")


class GraphScopes:
    """The scope stacks of a graph and the context managers that push them."""

    def __init__(self) -> None:
        self._names_in_use: dict[str, int] = {}
        self._name_stack = ""
        self._control_dependencies_stack: list[ControlDependencyScope] = []
        self._device_stack: list[Any] = []
        self._colocation_stack: list[Operation] = []
        self._gradient_override_map: dict[str, str] = {}
        self._attr_scope_map: dict[str, Any] = {}

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
    def control_dependencies(self, control_inputs: Sequence[Any] | None) -> ControlDependencyScope:
        """Ops created in this scope run after ``control_inputs``; ``None`` clears the scope."""
        if control_inputs is None:
            return ControlDependencyScope(self, None)
        ops: list[Operation] = []
        for c in control_inputs:
            if hasattr(c, "_as_graph_element") and not isinstance(c, (Tensor, Operation)):
                c = c._as_graph_element()
            if isinstance(c, Tensor):
                c = c.op
            if not isinstance(c, Operation):
                raise TypeError(f"Control input must be an Operation or Tensor, got {c!r}")
            ops.append(self._resolve_control_input(c))
        return ControlDependencyScope(self, ops)

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

    # --- attribute scopes and placement of new ops ------------------------------------
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


class _ColocationGroup:
    """A colocation target known only by name (see ``Graph._colocate_with_group``)."""

    __slots__ = ("_name", "_colocation", "_device")

    def __init__(self, name: str):
        self._name = name
        self._colocation = (name,)
        self._device = ""


class ControlDependencyScope:
    """Context manager returned by :meth:`Graph.control_dependencies`."""

    def __init__(self, graph: GraphScopes, ops: list[Operation] | None):
        self.graph = graph
        self.ops = ops or []
        self.created: set[Operation] = set()
        self._clear = ops is None
        self._saved: list[ControlDependencyScope] | None = None

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
