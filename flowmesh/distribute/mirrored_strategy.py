"""``tf.distribute.MirroredStrategy``: synchronous replicas on several devices of one process.

Each variable created in ``strategy.scope()`` gets one component per device (a
:class:`~flowmesh.distribute.values.MirroredVariable`, initialized from one shared
initial value). ``strategy.run(step_fn, args)`` builds ``step_fn`` once per device; an
optimizer's ``apply_gradients`` inside it averages each replica's gradients with the
others' through collective all-reduce ops of an in-process group (fused and overlapped
like ``hvd.DistributedOptimizer``) and updates the replica's own components, so they
stay equal. The devices' partitions run concurrently in one ``Session.run``.

Example:
    >>> strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    >>> with strategy.scope():
    ...     w = tf.get_variable("w", [4, 1])
    ...     def step(x, y):
    ...         loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
    ...         with tf.control_dependencies([tf.train.GradientDescentOptimizer(0.1).minimize(loss)]):
    ...             return tf.identity(loss)
    ...     losses = strategy.run(step, args=(PerReplica([x0, x1]), PerReplica([y0, y1])))
    ...     mean_loss = strategy.reduce(tf.distribute.ReduceOp.MEAN, losses)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from flowmesh.collective import context as collective_context
from flowmesh.collective.backends.base import ReduceOp as CollectiveOp
from flowmesh.collective.gradients import ReduceConfig, allreduce_gradients
from flowmesh.core.graph import GraphKeys, get_default_graph
from flowmesh.distribute import distribute_lib
from flowmesh.distribute.reduce_op import ReduceOp
from flowmesh.distribute.values import MirroredVariable
from flowmesh.ops import collective_ops

_group_keys = itertools.count(1 << 20)


def _default_devices() -> list[str]:
    from flowmesh.runtime.device import local_devices

    gpus = [d for d in local_devices() if d.device_type == "GPU" and not d.simulated]
    return [f"/device:GPU:{d.spec.device_index}" for d in gpus] or ["/device:CPU:0"]


def _canonical(device: str) -> str:
    from flowmesh.core.device_spec import DeviceSpec

    spec = DeviceSpec.from_string(device)
    if spec.device_type is None:
        raise ValueError(f"MirroredStrategy device {device!r} names no device type; use e.g. "
                         "'/cpu:0' or '/gpu:1'")
    return spec.to_string()


class MirroredExtended(distribute_lib.StrategyExtended):
    """Replicas on local devices, all-reduced through an in-process collective group."""

    def __init__(self, strategy: distribute_lib.Strategy, devices: Sequence[str]):
        super().__init__(strategy, devices)
        self.group_key = next(_group_keys)
        if len(devices) > 1:
            collective_context.register_local_group(self.group_key, len(devices))
        self._created: list[MirroredVariable] = []
        self._replayed = 0
        self._run_id = 0
        self._collectives = 0
        self._owners: dict[Any, MirroredVariable] = {}  # component op -> its mirrored variable
        self._slots: dict[MirroredVariable, list[MirroredVariable]] = {}  # made in replica 0
        self._slots_taken: dict[MirroredVariable, int] = {}

    # --- variables ------------------------------------------------------------------------
    def _current_index(self) -> int | None:
        replica = distribute_lib.get_replica_context()
        if replica is None or replica.strategy is not self._strategy:
            return None
        return replica.replica_id

    def create_variable(self, next_creator: Callable[..., Any], **kwargs: Any) -> Any:
        graph = get_default_graph()
        index = self._current_index()
        if graph._colocation_stack:  # optimizer slots and other state kept next to a variable
            owner = self._owners.get(graph._colocation_stack[-1])
            if owner is None:
                return next_creator(**kwargs)
            return self._colocated(next_creator, kwargs, owner, index)
        if index:  # replicas > 0 reuse what replica 0 created, in the same order
            return self._replay(kwargs.get("name"))
        variable = self._mirror(next_creator, kwargs)
        if index == 0:
            self._created.append(variable)
        return variable

    def _colocated(self, next_creator: Callable[..., Any], kwargs: dict[str, Any],
                   owner: MirroredVariable, index: int | None) -> Any:
        """A slot (or other state) next to ``owner``: mirrored when the first replica (or
        no replica) creates it; a later replica whose own optimizer creates the same slots
        (an optimizer built per replica, as in an Estimator's ``model_fn``) gets the first
        replica's mirrored slots back, in creation order."""
        if not index:
            slot = self._mirror(next_creator, kwargs, colocate_with=owner)
            if index == 0:
                self._slots.setdefault(owner, []).append(slot)
            return slot
        made = self._slots.get(owner, [])
        taken = self._slots_taken.get(owner, 0)
        if taken >= len(made):
            return next_creator(**kwargs)
        self._slots_taken[owner] = taken + 1
        return made[taken]

    def start_run(self) -> None:
        self._created, self._replayed = [], 0
        self._slots, self._slots_taken = {}, {}
        self._run_id += 1

    def next_replica(self) -> None:
        self._replayed = 0
        self._slots_taken = {}
        self._collectives = 0

    def _instance_key(self) -> int:
        """The k-th collective a replica builds in a run gets the same key on every replica
        (their op names differ, being in one graph)."""
        self._collectives += 1
        return self._run_id * 1_000_000 + self._collectives

    def _replay(self, name: str | None) -> MirroredVariable:
        if self._replayed >= len(self._created):
            raise ValueError(
                f"Replica function created variable {name!r} on a later replica but not on the "
                "first one; every replica must create the same variables in the same order")
        variable = self._created[self._replayed]
        self._replayed += 1
        return variable

    def _mirror(self, next_creator: Callable[..., Any], kwargs: dict[str, Any],
                colocate_with: MirroredVariable | None = None) -> MirroredVariable:
        """One component per device (next to ``colocate_with``'s components, if given),
        all initialized from the first component's initial value."""
        graph = get_default_graph()
        trainable = kwargs.get("trainable")
        trainable = True if trainable is None else bool(trainable)
        collections = list(kwargs.get("collections") or [GraphKeys.GLOBAL_VARIABLES])
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        hidden = dict(kwargs, collections=[], trainable=False)  # the wrapper is in collections
        components: list[Any] = []
        for i, device in enumerate(self.variable_devices):
            place = graph.device(device) if colocate_with is None else \
                graph.colocate_with(colocate_with.components[i].op, ignore_existing=True)
            with place:
                if not components:
                    components.append(next_creator(**hidden))
                    continue
                primary = components[0]
                with graph.name_scope(None):
                    components.append(next_creator(**dict(
                        hidden, name=f"{primary.op.name}/replica_{i}",
                        initial_value=primary.initial_value)))
        mirrored = MirroredVariable(components, self._current_index, trainable)
        for component in components:
            self._owners[component.op] = mirrored
        graph.add_to_collections(collections, mirrored)
        return mirrored

    @property
    def variable_devices(self) -> tuple[str, ...]:
        """Where each replica's component of a mirrored variable lives (its own device)."""
        return self._devices

    def sync_op(self) -> Any:
        """An op copying every mirrored variable's first component into the others (run it
        after restoring a checkpoint, which writes the first component only)."""
        from flowmesh.ops.control_flow_ops import group

        graph = get_default_graph()
        copies = []
        for mirrored in {id(m): m for m in self._owners.values()}.values():
            source = mirrored.primary.read_value()
            for component in mirrored.components[1:]:
                with graph.colocate_with(component.op):
                    copies.append(component.assign(source, read_value=False))
        return group(*copies, name="sync_mirrored_variables")

    # --- communication ----------------------------------------------------------------------
    def all_reduce_in_replica(self, replica: distribute_lib.ReplicaContext, op: ReduceOp,
                              value: Any) -> Any:
        if len(self._devices) == 1:
            return value
        from flowmesh.ops import _structure as nest

        flat = nest.flatten(value)
        reduced = collective_ops.grouped_all_reduce(
            flat, group_key=self.group_key, member=replica.replica_id,
            instance_key=self._instance_key(), merge_op=op.collective_name,
            name="ReplicaAllReduce")
        return nest.pack_sequence_as(value, reduced)

    def reduce_gradients(self, replica: distribute_lib.ReplicaContext,
                         grads_and_vars: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        config = ReduceConfig(op=CollectiveOp.MEAN, group_size=len(self._devices),
                              group_key=self.group_key, member=replica.replica_id,
                              instance_keys=self._instance_key)
        return allreduce_gradients(grads_and_vars, config, name="ReplicaGradients")


class MirroredStrategy(distribute_lib.Strategy):
    """Synchronous training on several devices of this process.

    Args:
        devices: device strings (default: every local GPU, else the CPU). Use
            ``ConfigProto(device_count={"CPU": n})`` for ``n`` logical CPU devices.
        cross_device_ops: accepted for compatibility; replicas always use collective
            all-reduce.

    Raises:
        ValueError: no devices, a device given twice, or a device without a type.
    """

    def __init__(self, devices: Sequence[str] | None = None, cross_device_ops: Any = None):
        devices = [_canonical(d) for d in (devices or _default_devices())]
        if not devices:
            raise ValueError("MirroredStrategy needs at least one device")
        if len(set(devices)) != len(devices):
            raise ValueError(f"MirroredStrategy got a device twice: {devices}; each replica needs "
                             "its own device (its ops run concurrently with the others')")
        super().__init__(MirroredExtended(self, devices))

    def run(self, fn: Callable[..., Any], args: Sequence[Any] = (),
            kwargs: dict[str, Any] | None = None, options: Any = None) -> Any:
        extended: MirroredExtended = self._extended  # type: ignore[assignment]
        extended.start_run()

        def per_replica(*a: Any, **kw: Any) -> Any:
            extended.next_replica()
            return fn(*a, **kw)

        return super().run(per_replica, args, kwargs, options)

    experimental_run_v2 = run
