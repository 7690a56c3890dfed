"""TensorFlowOnSpark's ``TFParallel`` module: the same ``map_fun`` on N independent
nodes (no cluster), e.g. parallel inference over sharded files.

    from flowmesh.spark import TFParallel
    TFParallel.run(sc, map_fun, args, num_executors=4)
"""

from __future__ import annotations

from typing import Any

from flowmesh.spark.child import ChildProcess
from flowmesh.spark.context import TFNodeContext
from flowmesh.spark.TFCluster import collect_in_order


def run(sc: Any, map_fun: Any, tf_args: Any, num_executors: int, use_barrier: bool = True) -> list[Any]:
    """Runs ``map_fun(tf_args, ctx)`` on ``num_executors`` Spark tasks, each in its own
    process (``ctx.job_name == "worker"``, ``ctx.task_index`` = executor id).

    Args:
        use_barrier: gang-schedule the tasks (all start together, as TensorFlowOnSpark).

    Returns:
        *(flowmesh)* the ``map_fun`` return values, in executor order.

    Raises:
        TaskError: a node failed (its traceback in the message).
    """
    nodes = sc.parallelize(range(num_executors), num_executors)

    def node(executor_id: int) -> Any:
        ctx = TFNodeContext(executor_id, "worker", executor_id, {}, num_workers=num_executors)
        name = f"flowmesh.spark node worker:{executor_id} (executor {executor_id})"
        return executor_id, ChildProcess(lambda: map_fun(tf_args, ctx), name).wait()

    def partition(ids: Any) -> Any:
        return [node(i) for i in ids]

    stage = nodes.barrier().mapPartitions(partition) if use_barrier else nodes.mapPartitions(partition)
    return collect_in_order(stage)
