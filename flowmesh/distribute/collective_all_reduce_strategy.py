"""``tf.distribute.MultiWorkerMirroredStrategy``: one replica per worker process.

Every worker (the ``chief`` and ``worker`` tasks of ``TF_CONFIG``, or the ranks of
``flowmesh run``) builds the same graph (between-graph replication) and runs it in its
own local session. Variables are ordinary variables on the worker's device whose initial
value is broadcast from worker 0, so every worker starts from the same weights;
gradients applied inside ``strategy.run`` are averaged over all workers with fused,
overlapped all-reduces on torch.distributed (gloo on CPU, NCCL on GPU), and
``strategy.reduce`` combines values across workers the same way.

Example (each worker, started with its TF_CONFIG)::

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        w = tf.get_variable("w", [784, 10])
        loss = strategy.run(step_fn, args=(x, y))
        mean_loss = strategy.reduce(tf.distribute.ReduceOp.MEAN, loss)
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from flowmesh.collective import context as collective_context
from flowmesh.collective.backends.base import ReduceOp as CollectiveOp
from flowmesh.collective.gradients import ReduceConfig, allreduce_gradients
from flowmesh.collective.world import WorldInfo, split_address
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import get_default_graph
from flowmesh.distribute import distribute_lib
from flowmesh.distribute.cluster_resolver.base import ClusterResolver, TFConfigClusterResolver
from flowmesh.distribute.reduce_op import ReduceOp
from flowmesh.ops import collective_ops

_TRAINING_JOBS = ("chief", "worker")


class CollectiveCommunication(enum.Enum):
    """Accepted for compatibility: flowmesh picks gloo (CPU) or NCCL (CUDA) by tensor."""

    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


CommunicationImplementation = CollectiveCommunication


def world_from_resolver(resolver: ClusterResolver) -> WorldInfo | None:
    """This worker's rank among the chief and workers of the resolver's cluster (None when
    the cluster has no training tasks or this task is not one of them)."""
    spec = resolver.cluster_spec()
    members = [(job, i, spec.task_address(job, i)) for job in _TRAINING_JOBS
               if job in spec.jobs for i in range(spec.num_tasks(job))]
    if not members or resolver.task_type not in _TRAINING_JOBS:
        return None
    rank = next((r for r, (job, i, _) in enumerate(members)
                 if job == resolver.task_type and i == (resolver.task_id or 0)), None)
    if rank is None:
        raise ValueError(f"Task {resolver.task_type}:{resolver.task_id} is not in the cluster "
                         f"{spec.as_dict()}")
    hosts = [split_address(addr, "cluster address")[0] for _, _, addr in members]
    local = [r for r, h in enumerate(hosts) if h == hosts[rank]]
    host, port = split_address(members[0][2], "cluster address")
    return WorldInfo(rank, len(members), local.index(rank), len(local), host, port,
                     host_store=rank == 0, source="cluster resolver")


class CollectiveExtended(distribute_lib.StrategyExtended):
    """One replica per process, reduced over every process with world collectives."""

    def __init__(self, strategy: distribute_lib.Strategy, device: str, info: WorldInfo):
        super().__init__(strategy, (device,))
        self.info = info

    @property
    def experimental_between_graph(self) -> bool:
        return True

    @property
    def should_checkpoint(self) -> bool:
        return self.info.rank == 0

    def local_replica_ids(self) -> list[int]:
        return [self.info.rank]

    def replica_device(self, replica_id: int) -> str:
        return self._devices[0]

    def create_variable(self, next_creator: Callable[..., Any], **kwargs: Any) -> Any:
        if self.info.size == 1 or get_default_graph()._colocation_stack:
            return next_creator(**kwargs)
        initial = kwargs.get("initial_value")
        dtype = kwargs.get("dtype")

        def from_worker_0() -> Any:
            value = initial() if callable(initial) else initial
            value = convert_to_tensor(value, dtype=dtype)
            return collective_ops.broadcast(value, root=0, name="InitialValueBroadcast")

        with get_default_graph().device(self._devices[0]):
            return next_creator(**dict(kwargs, initial_value=from_worker_0))

    def sync_op(self) -> Any:
        """An op overwriting every global variable of the default graph with worker 0's
        value (run it on every worker after worker 0 restored a checkpoint)."""
        from flowmesh.core.graph import GraphKeys
        from flowmesh.ops.control_flow_ops import group

        graph = get_default_graph()
        variables = list(graph.get_collection(GraphKeys.GLOBAL_VARIABLES))
        if self.info.size == 1 or not variables:
            return group(name="sync_worker_variables")
        with graph.device(self._devices[0]):
            values = collective_ops.grouped_broadcast([v.read_value() for v in variables], root=0,
                                                      name="SyncFromWorker0")
            writes = [v.assign(value, read_value=False) for v, value in zip(variables, values)]
        return group(*writes, name="sync_worker_variables")

    def all_reduce_in_replica(self, replica: distribute_lib.ReplicaContext, op: ReduceOp,
                              value: Any) -> Any:
        if self.info.size == 1:
            return value
        from flowmesh.ops import _structure as nest

        flat = nest.flatten(value)
        reduced = collective_ops.grouped_all_reduce(flat, merge_op=op.collective_name,
                                                    name="ReplicaAllReduce")
        return nest.pack_sequence_as(value, reduced)

    def reduce_gradients(self, replica: distribute_lib.ReplicaContext,
                         grads_and_vars: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        config = ReduceConfig(op=CollectiveOp.MEAN, group_size=self.info.size)
        return allreduce_gradients(grads_and_vars, config, name="WorkerGradients")

    def reduce_across(self, op: ReduceOp, values: list[Any], axis: int | None) -> Any:
        total, count = self.local_sum_and_count(values, axis)
        if self.info.size > 1:
            total, count = collective_ops.grouped_all_reduce([total, count], name="CrossWorkerReduce")
        return total / count if op is ReduceOp.MEAN else total


class MultiWorkerMirroredStrategy(distribute_lib.Strategy):
    """Synchronous data parallelism with one replica per worker process.

    Args:
        communication: accepted for compatibility (see :class:`CollectiveCommunication`).
        cluster_resolver: where the workers are (default: ``TF_CONFIG``; without it, the
            ranks of ``flowmesh run``, or a single worker).

    Raises:
        UnavailableError: the other workers could not be reached.
        ValueError: the collective world was already set up with another size.
    """

    def __init__(self, communication: Any = CollectiveCommunication.AUTO,
                 cluster_resolver: ClusterResolver | None = None):
        resolver = cluster_resolver or TFConfigClusterResolver()
        info = world_from_resolver(resolver)
        if collective_context.is_initialized():
            current = collective_context.world_info()
            if info is not None and (info.rank, info.size) != (current.rank, current.size):
                raise ValueError(
                    f"The collective world is already rank {current.rank} of {current.size}, but "
                    f"the cluster resolver says rank {info.rank} of {info.size}; create the "
                    "strategy before calling flowmesh.collective.init(), or use the same cluster")
            info = current
        else:
            info = collective_context.init(info)
        self._cluster_resolver = resolver
        super().__init__(CollectiveExtended(self, _worker_device(info), info))

    @property
    def num_replicas_in_sync(self) -> int:
        return self._extended.info.size  # type: ignore[attr-defined]

    @property
    def cluster_resolver(self) -> ClusterResolver:
        return self._cluster_resolver


def _worker_device(info: WorldInfo) -> str:
    from flowmesh.runtime.device import local_devices

    gpus = [d for d in local_devices() if d.device_type == "GPU" and not d.simulated]
    if gpus:
        return f"/device:GPU:{info.local_rank % len(gpus)}"
    return "/device:CPU:0"
