"""``tf.CriticalSection``: run a function's ops with a mutex held, so concurrent steps (and
concurrent executions in one step) never interleave them (TensorFlow's
``critical_section_ops.py``).

``execute(fn)`` builds ``MutexLock(handle)``, then ``fn``'s ops under a control dependency on
the lock, then ``ConsumeMutexLock`` after ``fn``'s results, and returns identities of the
results that run after the release. The lock waits for every input ``fn`` takes from
outside (so a lock is never held while waiting for unrelated work), and the runtime's
creation-order scheduling puts one execution's release before the next execution's lock
in a step. Executions touching the same resource from two critical sections are refused
(``exclusive_resource_access``), as TensorFlow does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from flowmesh.core import dtypes
from flowmesh.core.graph import Operation, Tensor, get_default_graph, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import _structure as nest
from flowmesh.ops._builders import make_op, make_tensor
from flowmesh.ops.array_ops import identity
from flowmesh.ops.control_flow_ops import tuple as tf_tuple

CRITICAL_SECTIONS = "critical_sections"
CRITICAL_SECTION_EXECUTIONS = "critical_section_executions"

register_op("MutexV2", lambda inputs, attrs: [(dtypes.resource, TensorShape([]))],
            not_differentiable=True, stateful=True)
register_op("MutexLock", lambda inputs, attrs: [(dtypes.variant, TensorShape([]))],
            not_differentiable=True, stateful=True)
register_op("ConsumeMutexLock", lambda inputs, attrs: [], not_differentiable=True, stateful=True)


class _ExecutionSignature(NamedTuple):
    op: Operation
    handle: Tensor
    resources: list[Tensor]
    exclusive_resource_access: bool


class CriticalSection:
    """A mutex that ``execute(fn)`` holds while ``fn``'s ops run.

    Args:
        name: name scope of the mutex op (default ``"CriticalSection"``).
        shared_name: the mutex's name in the device's resource store (default: the op
            name); critical sections with one shared name share one mutex.
        critical_section_def, import_scope: not supported (no protocol buffer form).

    Raises:
        ValueError: ``critical_section_def`` is given.

    Example:
        >>> cs = tf.CriticalSection()
        >>> counter = tf.Variable(0)
        >>> increment = cs.execute(lambda: counter.assign_add(1))
    """

    def __init__(self, name: str | None = None, shared_name: str | None = None,
                 critical_section_def: Any = None, import_scope: str | None = None):
        if critical_section_def is not None:
            raise ValueError("CriticalSection(critical_section_def=...) is not supported: "
                             "flowmesh has no CriticalSectionDef; create the section in the graph")
        graph = get_default_graph()
        with graph.control_dependencies(None), name_scope(name, "CriticalSection") as scope:
            container = getattr(graph, "_container", "") or ""
            op_name = scope.rstrip("/") or "CriticalSection"
            self._handle = make_tensor("MutexV2", [], {"shared_name": shared_name or op_name,
                                                       "container": container}, name=op_name)
        self._signature = (container, shared_name or op_name)
        graph.add_to_collection(CRITICAL_SECTIONS, self)

    @property
    def name(self) -> str:
        return self._handle.op.name

    def execute(self, fn: Callable[[], Any], exclusive_resource_access: bool = True,
                name: str | None = None) -> Any:
        """Runs ``fn``'s ops (built now) with the mutex held; returns ``fn``'s results.

        Args:
            fn: builds the ops to protect; returns tensors (or a structure of them).
            exclusive_resource_access: refuse resources (variables) another critical
                section's executions also touch with exclusive access.
            name: name scope.

        Raises:
            ValueError: ``fn`` uses this critical section itself (a deadlock), or a resource
                is shared with another critical section's exclusive execution.
        """

        graph = get_default_graph()
        with name_scope(name, "critical_section_execute"):
            lock = make_tensor("MutexLock", [self._handle], name="MutexLock")
            with graph._lock:
                existing = set(graph.get_operations())
                with graph.control_dependencies([lock]):
                    result = fn()
                created = [op for op in graph.get_operations() if op not in existing]
            _wait_for_arguments(created, lock.op)
            resources = _resources(created)
            if any(_same_handle(r, self._handle) for r in resources):
                raise ValueError(
                    "Attempting to lock a CriticalSection in which we are already running "
                    f"(signature={self._signature}). This is illegal and may cause deadlocks.")
            self._check_multiple_access(resources, exclusive_resource_access)
            flat = [identity(x) if isinstance(x, Tensor) else x for x in nest.flatten(result)]
            with graph.control_dependencies([x for x in flat if x is not None]):
                release = make_op("ConsumeMutexLock", [lock], name="ConsumeMutexLock")
            tensors = [x for x in flat if isinstance(x, Tensor)]
            gated = iter(tf_tuple(tensors) if tensors else [])
            flat = [next(gated) if isinstance(x, Tensor) else x for x in flat]
            with graph.control_dependencies([release]):
                outputs = [identity(x) if isinstance(x, Tensor) else _after(x, release)
                           for x in flat]
            graph.add_to_collection(CRITICAL_SECTION_EXECUTIONS, _ExecutionSignature(
                lock.op, self._handle, resources, exclusive_resource_access))
        return nest.pack_sequence_as(result, outputs)

    def _check_multiple_access(self, resources: list[Tensor], exclusive: bool) -> None:
        for other in get_default_graph().get_collection(CRITICAL_SECTION_EXECUTIONS):
            if _same_handle(other.handle, self._handle):
                continue
            if not (exclusive or other.exclusive_resource_access):
                continue
            shared = [r for r in resources if any(r is o for o in other.resources)]
            if shared:
                raise ValueError(
                    f"This execution would access resources: {[r.name for r in shared]}. "
                    f"Either this lock (CriticalSection: {self._handle.name}) or lock "
                    f"'{other.op.name}' (CriticalSection: {other.handle.name}) requested "
                    "exclusive resource access of this resource. Did you mean to call execute "
                    "with keyword argument exclusive_resource_access=False?")


def _after(value: Any, release: Operation) -> Any:
    """An op (or None) returned by ``fn``: a no-op that runs after the release."""
    if isinstance(value, Operation):
        from flowmesh.ops.control_flow_ops import group

        return group(value, release)
    return value


def _wait_for_arguments(created: list[Operation], lock_op: Operation) -> None:
    """The lock waits for everything ``fn``'s ops take from outside (no lock is held while
    unrelated work runs, and one step's executions cannot deadlock)."""
    inside = set(created) | {lock_op}
    outside: dict[int, Operation] = {}
    for op in created:
        for producer in [t.op for t in op.inputs] + list(op.control_inputs):
            if producer not in inside and producer not in lock_op.control_inputs and \
                    producer is not lock_op.inputs[0].op:
                outside[producer._id] = producer
    for producer in sorted(outside.values(), key=lambda o: o._id):
        lock_op._add_control_input(producer)


def _resources(created: list[Operation]) -> list[Tensor]:
    found: list[Tensor] = []
    for op in created:
        for t in op.inputs:
            if t.dtype == dtypes.resource and not any(t is f for f in found):
                found.append(t)
    return found


def _same_handle(a: Tensor, b: Tensor) -> bool:
    from flowmesh.core.function import resolve_captured

    return resolve_captured(a) is resolve_captured(b)


__all__ = ["CriticalSection"]
