"""``tf.distribute``: distribution strategies for synchronous data parallelism.

* :class:`MirroredStrategy` - replicas on several devices of one process;
* :class:`MultiWorkerMirroredStrategy` - one replica per worker process (``TF_CONFIG`` or
  ``flowmesh run``), all-reduce on torch.distributed;
* :class:`ParameterServerStrategy` (also in ``experimental``) - TF1's between-graph,
  asynchronous training with variables on the ps tasks (``flowmesh launch --ps``);
* ``strategy.scope()``, ``strategy.run`` / ``experimental_run_v2``, ``strategy.reduce``,
  :class:`ReduceOp`, ``get_strategy()``, ``get_replica_context()``,
  ``cluster_resolver.TFConfigClusterResolver``.

Any ``tf.train.Optimizer`` used inside ``strategy.run`` averages its gradients across
all replicas before applying them (this package registers that hook on import).
"""

from flowmesh.distribute import cluster_resolver, experimental
from flowmesh.distribute.collective_all_reduce_strategy import (
    CollectiveCommunication,
    MultiWorkerMirroredStrategy,
)
from flowmesh.distribute.distribute_lib import (
    ReplicaContext,
    Strategy,
    StrategyExtended,
    aggregate_gradients,
    get_cross_replica_context,
    get_replica_context,
    get_strategy,
    has_strategy,
    in_cross_replica_context,
)
from flowmesh.distribute.input_context import InputContext
from flowmesh.distribute.mirrored_strategy import MirroredStrategy
from flowmesh.distribute.parameter_server_strategy import ParameterServerStrategy
from flowmesh.distribute.reduce_op import ReduceOp
from flowmesh.distribute.values import MirroredVariable, PerReplica
from flowmesh.train.optimizer import register_gradient_aggregator

register_gradient_aggregator(aggregate_gradients)

__all__ = [
    "CollectiveCommunication", "InputContext", "MirroredStrategy", "MirroredVariable", "MultiWorkerMirroredStrategy",
    "ParameterServerStrategy", "PerReplica", "ReduceOp", "ReplicaContext", "Strategy", "StrategyExtended",
    "cluster_resolver", "experimental", "get_cross_replica_context", "get_replica_context",
    "get_strategy", "has_strategy", "in_cross_replica_context",
]
