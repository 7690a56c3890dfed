"""Distributed values: ``PerReplica`` (one value per replica) and ``MirroredVariable``.

A :class:`MirroredVariable` owns one ordinary variable per replica device (the
*components*, kept equal because every replica applies the same averaged gradients).
Inside ``strategy.run`` it stands for the current replica's component (reads, gradients,
assignments); elsewhere it stands for all of them: reads give the first component,
assignments and initialization go to every component.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core.graph import Operation, Tensor
from flowmesh.ops.variables import Variable


class PerReplica:
    """One value per local replica (``values[i]`` belongs to local replica ``i``)."""

    def __init__(self, values: Sequence[Any]):
        self._values = tuple(values)

    @property
    def values(self) -> tuple[Any, ...]:
        return self._values

    def __repr__(self) -> str:
        return f"PerReplica({', '.join(repr(v) for v in self._values)})"


class Mirrored(PerReplica):
    """The same value on several devices (what ``CrossDeviceOps.reduce``/``broadcast``
    return): ``values[i]`` lives on the i-th destination device."""

    def __repr__(self) -> str:
        return f"Mirrored({', '.join(repr(v) for v in self._values)})"


def select(structure: Any, index: int) -> Any:
    """``structure`` with every PerReplica replaced by its value for local replica ``index``."""
    if isinstance(structure, PerReplica):
        return structure.values[index]
    if isinstance(structure, MirroredVariable):
        return structure
    if isinstance(structure, dict):
        return {k: select(v, index) for k, v in structure.items()}
    if isinstance(structure, (list, tuple)) and not hasattr(structure, "_fields"):
        return type(structure)(select(v, index) for v in structure)
    if isinstance(structure, tuple):  # namedtuple
        return type(structure)(*(select(v, index) for v in structure))
    return structure


def regroup(results: list[Any]) -> Any:
    """Per-replica results of one function -> one structure with PerReplica leaves (a
    plain structure when there is a single replica or all replicas returned the same)."""
    if len(results) == 1:
        return results[0]
    first = results[0]
    if isinstance(first, dict):
        return {k: regroup([r[k] for r in results]) for k in first}
    if isinstance(first, (list, tuple)) and not hasattr(first, "_fields"):
        return type(first)(regroup(list(parts)) for parts in zip(*results))
    if all(r is first for r in results):
        return first
    return PerReplica(results)


class MirroredVariable(Variable):
    """A variable with one component per replica device.

    It is a ``tf.Variable`` (optimizers, savers and ``isinstance`` checks accept it); any
    attribute it does not define itself is taken from the current component. An optimizer
    differentiates it through ``handle`` (this replica's component); its slots, created
    once while the first replica is built, are mirrored too, so each replica updates its
    own copies. A ``Saver`` saves and restores the first component: after restoring, run
    ``strategy.extended.sync_op()`` to copy it into the others.

    Args:
        components: the per-replica variables, replica 0 first.
        current_index: returns the local replica index when inside ``strategy.run`` of the
            owning strategy, else None.
        trainable: whether the variable is trained (the components themselves are kept out
            of the collections; this wrapper is in them).
    """

    def __init__(self, components: Sequence[Any], current_index: Any, trainable: bool = True):
        # Variable.__init__ is not called: the components are the real variables.
        self._components = list(components)
        self._current_index = current_index
        self._trainable = trainable

    def __getattr__(self, name: str) -> Any:
        if name in ("_components", "_current_index", "_trainable"):
            raise AttributeError(name)
        return getattr(self._current(), name)

    # --- which component ----------------------------------------------------------------
    @property
    def components(self) -> list[Any]:
        return list(self._components)

    @property
    def primary(self) -> Any:
        return self._components[0]

    def _current(self) -> Any:
        index = self._current_index()
        return self._components[0] if index is None else self._components[index]

    # --- identity -------------------------------------------------------------------------
    name = property(lambda self: self.primary.name)
    dtype = property(lambda self: self.primary.dtype)
    shape = property(lambda self: self.primary.shape)
    graph = property(lambda self: self.primary.graph)
    trainable = property(lambda self: self._trainable)
    initial_value = property(lambda self: self.primary.initial_value)
    op = property(lambda self: self._current().op)
    handle = property(lambda self: self._current().handle)
    device = property(lambda self: self._current().device)

    def get_shape(self) -> Any:
        return self.primary.get_shape()

    @property
    def initializer(self) -> Operation:
        from flowmesh.ops.control_flow_ops import group

        if self.__dict__.get("_initializer") is None:  # built once: the graph may be finalized later
            self.__dict__["_initializer"] = group(*[c.initializer for c in self._components],
                                                  name=f"{self.primary.op.name}/init")
        return self.__dict__["_initializer"]

    def is_variable_initialized(self) -> Tensor:
        return self.primary.is_variable_initialized()

    # --- reading ---------------------------------------------------------------------------
    def value(self) -> Tensor:
        return self._current().value()

    def read_value(self) -> Tensor:
        return self._current().read_value()

    def _as_graph_element(self) -> Tensor:
        return self._current().value()

    def eval(self, session: Any = None) -> Any:
        return self.primary.eval(session=session)

    # --- writing ---------------------------------------------------------------------------
    def _write(self, method: str, value: Any, read_value: bool, **kwargs: Any) -> Any:
        index = self._current_index()
        if index is not None:
            return getattr(self._components[index], method)(value, read_value=read_value, **kwargs)
        from flowmesh.ops.control_flow_ops import group

        writes = [getattr(c, method)(value, read_value=False, **kwargs) for c in self._components]
        op = group(*writes)
        if not read_value:
            return op
        from flowmesh.core.graph import get_default_graph

        with get_default_graph().control_dependencies([op]):
            return self.primary.read_value()

    def assign(self, value: Any, use_locking: bool | None = None, name: str | None = None,
               read_value: bool = True) -> Any:
        return self._write("assign", value, read_value, name=name)

    def assign_add(self, delta: Any, use_locking: bool | None = None, name: str | None = None,
                   read_value: bool = True) -> Any:
        return self._write("assign_add", delta, read_value, name=name)

    def assign_sub(self, delta: Any, use_locking: bool | None = None, name: str | None = None,
                   read_value: bool = True) -> Any:
        return self._write("assign_sub", delta, read_value, name=name)

    def load(self, value: Any, session: Any = None) -> None:
        """Writes ``value`` into every component."""
        for component in self._components:
            component.load(value, session)

    def __repr__(self) -> str:
        return (f"<MirroredVariable '{self.name}' shape={self.shape} dtype={self.dtype.name} "
                f"replicas={len(self._components)}>")

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    def __bool__(self) -> bool:
        raise TypeError("Using a MirroredVariable as a Python `bool` is not allowed in graph mode.")


