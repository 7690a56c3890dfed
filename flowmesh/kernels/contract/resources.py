"""Per-device resource stores: variables (and other stateful objects) that outlive a step.

A store belongs to a device of a session (local sessions) or of a server (distributed),
so every session connected to a server shares that server's variables.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import FailedPreconditionError


class VariableState:
    """The storage of one variable: a torch tensor, or ``None`` until initialized."""

    __slots__ = ("name", "dtype", "shape", "value", "lock", "__weakref__")

    def __init__(self, name: str, dtype: dtypes.DType, shape: TensorShape):
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.value: Any = None
        self.lock = threading.Lock()

    def read(self) -> Any:
        value = self.value
        if value is None:
            raise FailedPreconditionError(
                None, None,
                f"Attempting to use uninitialized value {self.name}. Run "
                "tf.global_variables_initializer() (or the variable's initializer) first.",
            )
        return value

    def __repr__(self) -> str:
        state = "uninitialized" if self.value is None else f"shape={list(self.value.shape)}"
        return f"<VariableState {self.name} {self.dtype.name} {state}>"


def under_variable_lock(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wraps a kernel body ``fn(state, *inputs)`` to run holding ``state.lock``.

    TensorFlow's assign, assign-add/sub and scatter kernels hold the variable's mutex:
    torch releases the interpreter lock inside in-place ops, so two steps adding to the
    same variable at once would otherwise lose one of the increments."""

    def run(state: VariableState, *args: Any) -> Any:
        with state.lock:
            return fn(state, *args)

    return run


class ResourceStore:
    """Named resources of one device, created on first lookup."""

    def __init__(self, device_name: str):
        self.device_name = device_name
        self._resources: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()

    def lookup_or_create(self, container: str, name: str, create: Callable[[], Any]) -> Any:
        key = (container, name)
        with self._lock:
            resource = self._resources.get(key)
            if resource is None:
                resource = self._resources[key] = create()
            return resource

    def lookup(self, container: str, name: str) -> Any:
        return self._resources.get((container, name))

    def items(self) -> list[tuple[tuple[str, str], Any]]:
        with self._lock:
            return list(self._resources.items())

    def clear(self, container: str | None = None) -> None:
        """Drops all resources (or those of one container), as ``Session.reset`` does.

        A resource with a ``release()`` method (an iterator running pipeline threads) is
        released as it is dropped. A variable loses its value but keeps its identity:
        sessions of other masters hold its handle in their kernel caches, and must see
        it uninitialized (as TensorFlow's per-step lookup would), not a detached copy."""
        dropped = []
        with self._lock:
            for key in [k for k in self._resources if container is None or k[0] == container]:
                resource = self._resources[key]
                if isinstance(resource, VariableState):
                    with resource.lock:
                        resource.value = None
                else:
                    dropped.append(self._resources.pop(key))
        for resource in dropped:
            release = getattr(resource, "release", None)
            if callable(release):
                release()
