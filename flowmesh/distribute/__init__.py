"""``tf.distribute``: distribution strategies for synchronous data parallelism.

* :class:`MirroredStrategy` - replicas on several devices of one process;
* :class:`MultiWorkerMirroredStrategy` - one replica per worker process (``TF_CONFIG`` or
  ``flowmesh run``), all-reduce on torch.distributed;
* :class:`ParameterServerStrategy` (also in ``experimental``) - TF1's between-graph,
  asynchronous training with variables on the ps tasks (``flowmesh launch --ps``);
* :class:`OneDeviceStrategy` - one replica on one device; ``experimental.CentralStorageStrategy``
  - replicas on several devices, variables on one;
* :class:`CrossDeviceOps` (``ReductionToOneDevice``, ``NcclAllReduce``,
  ``HierarchicalCopyAllReduce``) - reduce and broadcast values across devices in the graph;
* ``strategy.scope()``, ``strategy.run`` / ``experimental_run_v2``, ``strategy.reduce``,
  :class:`ReduceOp`, ``get_strategy()``, ``get_replica_context()``,
  ``cluster_resolver.TFConfigClusterResolver``.

Any ``tf.train.Optimizer`` used inside ``strategy.run`` averages its gradients across
all replicas before applying them (this package registers that hook on import).
"""

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.distribute.distribute_lib import aggregate_gradients
from flowmesh.train.optimizer import register_gradient_aggregator

_fill_namespace(globals(), "distribute")

register_gradient_aggregator(aggregate_gradients)

__all__ = [
    "CrossDeviceOps", "HierarchicalCopyAllReduce", "InputReplicationMode", "NcclAllReduce", "OneDeviceStrategy",
    "ReductionToOneDevice", "RunOptions", "Server", "experimental_set_strategy", "get_loss_reduction",
    "CollectiveCommunication", "InputContext", "MirroredStrategy", "MirroredVariable", "MultiWorkerMirroredStrategy",
    "ParameterServerStrategy", "PerReplica", "ReduceOp", "ReplicaContext", "Strategy", "StrategyExtended",
    "cluster_resolver", "experimental", "get_cross_replica_context", "get_replica_context",
    "get_strategy", "has_strategy", "in_cross_replica_context",
]
