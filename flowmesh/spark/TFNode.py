"""TensorFlowOnSpark's ``TFNode`` module: what a ``map_fun`` calls on its node.

    from flowmesh.spark import TFNode

    def map_fun(args, ctx):
        cluster, server = TFNode.start_cluster_server(ctx)
        if ctx.job_name == "ps":
            server.join()
        ...
"""

from __future__ import annotations

import logging
from typing import Any

from flowmesh.spark.context import TFNodeContext
from flowmesh.spark.feed import DataFeed

__all__ = ["DataFeed", "hdfs_path", "release_port", "start_cluster_server"]

log = logging.getLogger("flowmesh.spark")


def start_cluster_server(ctx: TFNodeContext, num_gpus: int = 1, rdma: bool = False) -> tuple[Any, Any]:
    """Starts this node's ``tf.train.Server``; returns ``(ClusterSpec, Server)``.

    Args:
        ctx: the node's context.
        num_gpus: GPUs the node may use; without CUDA the node runs on the CPU (logged).
        rdma: accepted for compatibility; flowmesh's transport is gRPC plus its data plane.
    """
    import flowmesh as tf  # the node imports flowmesh (and torch) in its own process only

    if num_gpus and not tf.test.is_gpu_available():
        log.info("%s:%d asked for %d GPU(s); none available, running on the CPU",
                 ctx.job_name, ctx.task_index, num_gpus)
    if rdma:
        log.info("rdma=True is not used: flowmesh moves tensors over its own data plane")
    cluster = tf.train.ClusterSpec(ctx.cluster_spec)  # a non-loopback node serves other hosts
    server = tf.train.Server(cluster, job_name=ctx.job_name, task_index=ctx.task_index)
    return cluster, server


def hdfs_path(ctx: TFNodeContext, path: str) -> str:
    """``path`` made absolute on the cluster's default file system."""
    return ctx.absolute_path(path)


def release_port(ctx: TFNodeContext) -> None:
    """Compatibility no-op (see ``TFNodeContext.release_port``)."""
    ctx.release_port()
