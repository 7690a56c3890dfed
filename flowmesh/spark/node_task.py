"""The body of one barrier task: a TensorFlow node hosted by a Spark task.

Every task of the barrier stage (gang-scheduled: all start together or none does):

1. picks a free port on its host and learns everyone's address with one
   ``BarrierTaskContext.allGather`` (no reservation server), which gives the cluster spec;
2. forks its node: ``TF_CONFIG`` and the job's secret (``FLOWMESH_CLUSTER_SECRET``, made
   by the driver for this cluster) set, ``map_fun(tf_args, ctx)`` called;
3. a training node (chief/master/worker) is fed its partition (InputMode.SPARK) and
   waited for; a ps node serves;
4. all tasks meet in a second ``allGather`` once the training nodes are done, after which
   the ps nodes are stopped, so every task of the stage ends.

A node that fails makes its task raise with the node's traceback, which fails the stage
(Spark then stops the other tasks; their nodes exit with their parent).
"""

from __future__ import annotations

import json
import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from flowmesh.distributed import tf_config
from flowmesh.distributed.ports import free_ports
from flowmesh.spark.child import ChildProcess
from flowmesh.spark.context import TFNodeContext
from flowmesh.spark.feed import FeedChannel, Feeder
from flowmesh.spark.roles import SERVICE_JOBS, role_of, training_executors

FAILURE_MARKER = "flowmesh.spark node"


@dataclass(frozen=True)
class NodeSpec:
    """What every task of one cluster runs (shipped to the executors by Spark)."""

    map_fun: Callable[[Any, TFNodeContext], Any]
    tf_args: Any
    template: dict[str, list[int]]
    feed: bool = False  # InputMode.SPARK: the task's partition is fed to its node
    inference: bool = False  # the node answers every row (cluster.inference)
    num_epochs: int = 1
    feed_timeout: float = 600.0
    environment: dict[str, str] = field(default_factory=dict)  # e.g. the job's secret
    packed: bool = False  # the partition holds packed chunks (feed.pack_chunks), not rows


def run_node(spec: NodeSpec, rows: Iterable[Any]) -> Iterator[Any]:
    """``mapPartitions`` body of the barrier stage (see the module docstring).

    Yields ``(job_name, task_index, map_fun's return value)`` for a training node, or one
    result per row for inference; a ps node yields nothing.
    """
    from pyspark import BarrierTaskContext

    barrier = BarrierTaskContext.get()
    role = role_of(spec.template, barrier.partitionId())
    ctx = TFNodeContext(role.executor_id, role.job_name, role.task_index,
                        _gather_cluster(barrier, spec.template, role.executor_id),
                        num_workers=len(training_executors(spec.template)),
                        mgr=FeedChannel() if spec.feed else None)
    name = f"{FAILURE_MARKER} {role.job_name}:{role.task_index} (executor {role.executor_id})"
    node = ChildProcess(lambda: _node_main(spec, ctx), name)
    try:
        if role.job_name in SERVICE_JOBS:
            barrier.allGather("done")  # the training nodes are done: stop serving
            return
        if spec.feed:
            value = yield from _feed(spec, ctx, node, rows, name)
        else:
            value = node.wait()
        barrier.allGather("done")
        if not spec.inference:
            yield role.job_name, role.task_index, value
    finally:
        node.stop()


def _gather_cluster(barrier: Any, template: dict[str, list[int]], executor_id: int) -> dict[str, list[str]]:
    host = barrier.getTaskInfos()[executor_id].address.rsplit(":", 1)[0]
    address = f"{host}:{free_ports(1, host)[0]}"
    gathered = barrier.allGather(json.dumps({"executor": executor_id, "address": address}))
    by_executor = {m["executor"]: m["address"] for m in map(json.loads, gathered)}
    return {job: [by_executor[e] for e in executors] for job, executors in template.items()}


def _node_main(spec: NodeSpec, ctx: TFNodeContext) -> Any:
    os.environ.update(spec.environment)  # this node's process only (a forked child)
    tf_config.export(ctx.cluster_spec, ctx.job_name, ctx.task_index)
    value = spec.map_fun(spec.tf_args, ctx)
    if ctx.mgr is not None:  # results reach the task before the outcome does
        ctx.mgr.output.close()
        ctx.mgr.output.join_thread()
    return value


def _feed(spec: NodeSpec, ctx: TFNodeContext, node: ChildProcess, rows: Iterable[Any],
          name: str) -> Iterator[Any]:
    """Feeds the partition while collecting results; returns the node's value."""
    channel = ctx.mgr
    assert channel is not None
    feeder = Feeder(channel, rows, spec.num_epochs, spec.feed_timeout, node.alive, name, spec.packed)
    errors: list[BaseException] = []
    thread = threading.Thread(target=_capture, args=(feeder.run, errors), daemon=True,
                              name="flowmesh-spark-feeder")
    thread.start()
    answered = 0
    while node.alive() or thread.is_alive():
        for result in _results(channel, wait=0.2):
            answered += 1
            yield result
        if errors:
            break
    for result in _results(channel, wait=0.0):
        answered += 1
        yield result
    channel.input.cancel_join_thread()
    if errors:
        node.stop()
        raise RuntimeError(f"{name}: feeding its partition failed: {errors[0]}") from errors[0]
    value = node.wait()
    thread.join()
    if spec.inference and answered != feeder.rows_fed:
        raise RuntimeError(f"{name} answered {answered} of {feeder.rows_fed} rows: map_fun must "
                           "call DataFeed.batch_results with one result per row it took")
    return value


def _results(channel: FeedChannel, wait: float) -> Iterator[Any]:
    while True:
        try:
            batch = channel.output.get(timeout=wait) if wait else channel.output.get_nowait()
        except queue.Empty:
            return
        yield from batch
        wait = 0.0


def _capture(fn: Callable[[], None], errors: list[BaseException]) -> None:
    try:
        fn()
    except BaseException as error:  # noqa: BLE001 - handed to the task's main thread
        errors.append(error)


__all__ = ["FAILURE_MARKER", "NodeSpec", "run_node"]
