"""The strategy machinery: ``Strategy``, ``ReplicaContext`` and the current contexts.

Inside ``with strategy.scope():`` the strategy is current and variable creation goes
through it (mirrored variables). ``strategy.run(fn, args)`` calls ``fn`` once per local
replica, under that replica's device and a :class:`ReplicaContext`; values that differ
per replica travel as :class:`~flowmesh.distribute.values.PerReplica`. Replicas
communicate through collective ops, built per replica in the graph (so the functions can
be traced one replica after the other; there is no ``merge_call``): gradients applied by
any ``tf.train.Optimizer`` inside ``run`` are averaged across replicas, and
``ReplicaContext.all_reduce`` reduces any value.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from flowmesh.core import dtypes
from flowmesh.distribute import values as values_lib
from flowmesh.distribute.reduce_op import ReduceOp


@dataclass
class _Context:
    strategy: Strategy
    replica: ReplicaContext | None


_local = threading.local()


def _stack() -> list[_Context]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


@contextlib.contextmanager
def _entered(context: _Context) -> Iterator[None]:
    stack = _stack()
    stack.append(context)
    try:
        yield
    finally:
        stack.pop()


def get_strategy() -> Strategy:
    """The current strategy, or the default one-replica strategy outside any scope."""
    stack = _stack()
    return stack[-1].strategy if stack else _default_strategy()


def has_strategy() -> bool:
    """True inside a (non-default) strategy's scope."""
    return bool(_stack())


def get_replica_context() -> ReplicaContext | None:
    """The replica context inside ``strategy.run``; None in a strategy's cross-replica
    context; a default one-replica context outside any strategy."""
    stack = _stack()
    if not stack:
        return _default_strategy().default_replica_context()
    return stack[-1].replica


def in_cross_replica_context() -> bool:
    """True inside a strategy's scope but outside ``strategy.run``."""
    stack = _stack()
    return bool(stack) and stack[-1].replica is None


def get_cross_replica_context() -> Strategy | None:
    """The strategy when in its cross-replica context, else None."""
    return get_strategy() if in_cross_replica_context() else None


class ReplicaContext:
    """What code running for one replica can ask: its id, and collectives with the others.

    Args:
        strategy: the strategy running the replica.
        replica_id_in_sync_group: this replica's index among all replicas in sync.
    """

    def __init__(self, strategy: Strategy, replica_id_in_sync_group: int):
        self._strategy = strategy
        self._replica_id = replica_id_in_sync_group

    @property
    def strategy(self) -> Strategy:
        return self._strategy

    @property
    def num_replicas_in_sync(self) -> int:
        return self._strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self) -> Any:
        """This replica's index, as an int32 scalar tensor (as in TensorFlow)."""
        from flowmesh.ops.constant_op import constant

        return constant(self._replica_id, dtypes.int32, name="replica_id_in_sync_group")

    @property
    def replica_id(self) -> int:
        """*(flowmesh)* the index as a Python int."""
        return self._replica_id

    @property
    def devices(self) -> tuple[str, ...]:
        return (self._strategy.extended.replica_device(self._replica_id),)

    def all_reduce(self, reduce_op: ReduceOp | str, value: Any) -> Any:
        """``value`` (a tensor or nested structure of them) reduced over all replicas."""
        op = reduce_op if isinstance(reduce_op, ReduceOp) else ReduceOp[str(reduce_op).upper()]
        return self._strategy.extended.all_reduce_in_replica(self, op, value)

    def merge_call(self, merge_fn: Callable[..., Any], args: Sequence[Any] = (),
                   kwargs: dict[str, Any] | None = None) -> Any:
        """Not supported: flowmesh builds replicas one after the other.

        Raises:
            NotImplementedError: always, saying what to use instead.
        """
        raise NotImplementedError(
            "ReplicaContext.merge_call is not supported by flowmesh: replica functions are "
            "traced one replica at a time and communicate through collective ops. Use "
            "ReplicaContext.all_reduce(...) inside strategy.run, or strategy.reduce(...) on "
            "its PerReplica results.")


class StrategyExtended:
    """Strategy internals shared by the concrete strategies (``strategy.extended``)."""

    def __init__(self, strategy: Strategy, devices: Sequence[str]):
        self._strategy = strategy
        self._devices = tuple(devices)

    @property
    def worker_devices(self) -> tuple[str, ...]:
        """The devices this process runs replicas on."""
        return self._devices

    @property
    def parameter_devices(self) -> tuple[str, ...]:
        return self._devices

    @property
    def experimental_between_graph(self) -> bool:
        return False

    @property
    def should_checkpoint(self) -> bool:
        return True

    @property
    def should_init(self) -> bool:
        return True

    @property
    def experimental_should_init(self) -> bool:
        return self.should_init

    def replica_device(self, replica_id: int) -> str:
        return self._devices[replica_id % len(self._devices)]

    def local_replica_ids(self) -> list[int]:
        """Global replica ids of the replicas this process runs."""
        return list(range(len(self._devices)))

    def all_reduce_in_replica(self, replica: ReplicaContext, op: ReduceOp, value: Any) -> Any:
        return value  # one replica: nothing to combine

    def reduce_gradients(self, replica: ReplicaContext,
                         grads_and_vars: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        return grads_and_vars

    def reduce_across(self, op: ReduceOp, values: list[Any], axis: int | None) -> Any:
        """Combines this process's per-replica values (cross-replica context); strategies
        spanning several processes also combine across processes."""
        total, count = self.local_sum_and_count(values, axis)
        return total / count if op is ReduceOp.MEAN else total

    def local_sum_and_count(self, values: list[Any], axis: int | None) -> tuple[Any, Any]:
        """The sum of this process's replica values (over ``axis`` too) and how many
        elements it adds up, as a float tensor of the values' dtype."""
        from flowmesh.core.convert import convert_to_tensor
        from flowmesh.ops import array_ops, cast_ops, math_ops, reduction_ops

        tensors = [convert_to_tensor(v) for v in values]
        if axis is None:
            total = tensors[0] if len(tensors) == 1 else math_ops.add_n(tensors)
            return total, cast_ops.cast(len(tensors), total.dtype)
        sums = [reduction_ops.reduce_sum(t, axis) for t in tensors]
        total = sums[0] if len(sums) == 1 else math_ops.add_n(sums)
        counts = [cast_ops.cast(array_ops.shape(t)[axis], total.dtype) for t in tensors]
        return total, counts[0] if len(counts) == 1 else math_ops.add_n(counts)

    def create_variable(self, next_creator: Callable[..., Any], **kwargs: Any) -> Any:
        return next_creator(**kwargs)


class Strategy:
    """Base class of distribution strategies (``tf.distribute.Strategy``)."""

    def __init__(self, extended: StrategyExtended):
        self._extended = extended

    @property
    def extended(self) -> StrategyExtended:
        return self._extended

    @property
    def num_replicas_in_sync(self) -> int:
        """Replicas whose gradients are combined at every step (all processes)."""
        return len(self._extended.worker_devices)

    # --- contexts ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def scope(self) -> Iterator[Strategy]:
        """Makes this the current strategy; variables created inside are distributed.

        Scopes of the same strategy nest (``strategy.run`` enters it again): the
        strategy's variable creator is registered once per graph, so a variable created
        in a nested scope is distributed once, not once per level.
        """
        from flowmesh.ops.variable_creator import active_creators, variable_creator_scope

        creator = self._extended.create_variable
        registered = any(c == creator for c in active_creators())
        with _entered(_Context(self, None)), \
                (contextlib.nullcontext() if registered else variable_creator_scope(creator)):
            yield self

    def default_replica_context(self) -> ReplicaContext:
        return ReplicaContext(self, 0)

    # --- running ----------------------------------------------------------------------------
    def run(self, fn: Callable[..., Any], args: Sequence[Any] = (),
            kwargs: dict[str, Any] | None = None, options: Any = None) -> Any:
        """Calls ``fn(*args, **kwargs)`` once per local replica, each under its device and
        replica context; PerReplica arguments give each replica its own value.

        Returns:
            The results, as PerReplica values where replicas differ (a plain value when
            this process runs one replica).
        """
        kwargs = dict(kwargs or {})
        results = []
        with self.scope():
            for local_index, replica_id in enumerate(self._extended.local_replica_ids()):
                with self._replica_scope(local_index, replica_id):
                    results.append(fn(*values_lib.select(args, local_index),
                                      **values_lib.select(kwargs, local_index)))
        return values_lib.regroup(results)

    experimental_run_v2 = run

    @contextlib.contextmanager
    def _replica_scope(self, local_index: int, replica_id: int) -> Iterator[None]:
        from flowmesh.core.graph import get_default_graph
        from flowmesh.ops import variable_scope as vs

        graph = get_default_graph()
        device = self._extended.replica_device(replica_id)
        scope_name = f"replica_{local_index}" if local_index else None
        reuse = vs.AUTO_REUSE if local_index else None
        with graph.device(device), graph.name_scope(scope_name), \
                vs.variable_scope(vs.get_variable_scope(), reuse=reuse), \
                _entered(_Context(self, ReplicaContext(self, replica_id))):
            yield

    def reduce(self, reduce_op: ReduceOp | str, value: Any, axis: int | None = None) -> Any:
        """Combines a per-replica ``value`` into one tensor (cross-replica context).

        Args:
            reduce_op: ``ReduceOp.SUM`` or ``ReduceOp.MEAN``.
            value: a PerReplica value (or a plain tensor: the same on every replica).
            axis: also reduce along this dimension of each replica's value (MEAN is then
                the mean over all elements of all replicas).
        """
        op = reduce_op if isinstance(reduce_op, ReduceOp) else ReduceOp[str(reduce_op).upper()]
        locals_ = list(self.experimental_local_results(value))
        return self._extended.reduce_across(op, locals_, axis)

    def experimental_local_results(self, value: Any) -> tuple[Any, ...]:
        """The values of this process's replicas, as a tuple."""
        if isinstance(value, values_lib.PerReplica):
            return value.values
        return (value,)

    unwrap = experimental_local_results

    def experimental_distribute_dataset(self, dataset: Any, options: Any = None) -> Any:
        """Not available yet: shard the input per replica yourself (e.g. with
        ``flowmesh.collective.ShardedBatches``) and pass PerReplica arguments to run."""
        raise NotImplementedError(
            "experimental_distribute_dataset is not implemented yet; feed each replica its "
            "own batch through PerReplica arguments (see flowmesh.distribute.values.PerReplica)")

    def update_config_proto(self, config_proto: Any) -> Any:
        return config_proto


class _DefaultStrategy(Strategy):
    """The strategy in effect outside any scope: one replica, no communication."""

    def __init__(self) -> None:
        super().__init__(StrategyExtended(self, ("",)))


_DEFAULT: list[Strategy] = []


def _default_strategy() -> Strategy:
    if not _DEFAULT:
        _DEFAULT.append(_DefaultStrategy())
    return _DEFAULT[0]


def aggregate_gradients(grads_and_vars: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """The hook ``tf.train.Optimizer.apply_gradients`` runs: inside ``strategy.run`` the
    gradients are averaged across all replicas; elsewhere they pass unchanged."""
    stack = _stack()
    if not stack or stack[-1].replica is None:
        return grads_and_vars
    context = stack[-1]
    if context.strategy.num_replicas_in_sync == 1:
        return grads_and_vars
    return context.strategy.extended.reduce_gradients(context.replica, grads_and_vars)


_GLOBAL_SCOPE: list[Any] = []  # the scope entered by experimental_set_strategy


def experimental_set_strategy(strategy: Strategy | None) -> None:
    """Makes ``strategy`` current in this thread until replaced (``None``: back to the
    default), as if its ``scope()`` were entered here and stayed open.

    Raises:
        RuntimeError: called inside another strategy's ``scope()``.
    """
    stack = _stack()
    if len(stack) > len(_GLOBAL_SCOPE):
        raise RuntimeError("Must not be called inside a `tf.distribute.Strategy` scope.")
    while _GLOBAL_SCOPE:
        _GLOBAL_SCOPE.pop().__exit__(None, None, None)
    if strategy is not None:
        scope = strategy.scope()
        scope.__enter__()
        _GLOBAL_SCOPE.append(scope)


def get_loss_reduction() -> ReduceOp:
    """How a replica's loss combines with the others': ``SUM`` after the last ``tf.losses``
    loss of the default graph was reduced with ``SUM`` or ``NONE``, else ``MEAN``."""
    from flowmesh.core.graph import get_default_graph

    last = getattr(get_default_graph(), "last_loss_reduction", None)
    return ReduceOp.SUM if last in ("weighted_sum", "none") else ReduceOp.MEAN
