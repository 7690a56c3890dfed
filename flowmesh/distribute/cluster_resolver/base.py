"""The cluster resolvers' base class and the plain ones: :class:`TFConfigClusterResolver`
reads ``TF_CONFIG`` (through :mod:`flowmesh.distributed.tf_config`, the one module that
parses it); :class:`SimpleClusterResolver` holds explicit values; :class:`UnionResolver`
merges several."""

from __future__ import annotations

from typing import Any

from flowmesh.distributed import tf_config
from flowmesh.distributed.cluster_spec import ClusterSpec


class ClusterResolver:
    """Base class: a cluster spec plus this task's identity."""

    task_type: str | None = None
    task_id: int | None = None
    rpc_layer: str | None = "grpc"
    environment: str = ""

    def cluster_spec(self) -> ClusterSpec:
        raise NotImplementedError

    def master(self, task_type: str | None = None, task_id: int | None = None,
               rpc_layer: str | None = None) -> str:
        """``grpc://host:port`` of a task (default: this one), or ``""`` without a cluster."""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        spec = self.cluster_spec()
        if task_type is None or task_type not in spec.jobs:
            return ""
        layer = rpc_layer if rpc_layer is not None else self.rpc_layer
        address = spec.task_address(task_type, task_id or 0)
        return f"{layer}://{address}" if layer else address

    def num_accelerators(self, task_type: str | None = None, task_id: int | None = None,
                         config_proto: Any = None) -> dict[str, int]:
        """Accelerators per task type (the local CUDA devices, when there are any)."""
        from flowmesh.runtime.device import local_devices

        gpus = sum(1 for d in local_devices() if d.device_type == "GPU" and not d.simulated)
        return {"GPU": gpus} if gpus else {}


class TFConfigClusterResolver(ClusterResolver):
    """The cluster described by the ``TF_CONFIG`` environment variable.

    Args:
        task_type, task_id, rpc_layer, environment: override TF_CONFIG's values.
    """

    def __init__(self, task_type: str | None = None, task_id: int | None = None,
                 rpc_layer: str | None = None, environment: str | None = None):
        cfg = tf_config.current()
        self._cluster = cfg.cluster
        self.task_type = task_type if task_type is not None else cfg.task_type
        self.task_id = task_id if task_id is not None else cfg.task_index
        self.rpc_layer = rpc_layer if rpc_layer is not None else (cfg.rpc_layer or "grpc")
        self.environment = environment if environment is not None else cfg.environment

    def cluster_spec(self) -> ClusterSpec:
        """The cluster (an empty ClusterSpec when TF_CONFIG has none)."""
        return self._cluster if self._cluster is not None else ClusterSpec({})


class SimpleClusterResolver(ClusterResolver):
    """A resolver holding explicit values (e.g. for tests or hand-built clusters)."""

    def __init__(self, cluster_spec: Any, master: str = "", task_type: str | None = None,
                 task_id: int | None = None, environment: str = "",
                 num_accelerators: dict[str, int] | None = None, rpc_layer: str | None = None):
        self._cluster = cluster_spec if isinstance(cluster_spec, ClusterSpec) else ClusterSpec(cluster_spec)
        self._master = master
        self.task_type, self.task_id = task_type, task_id
        self.environment, self.rpc_layer = environment, rpc_layer
        self._accelerators = num_accelerators

    def cluster_spec(self) -> ClusterSpec:
        return self._cluster

    def master(self, task_type: str | None = None, task_id: int | None = None,
               rpc_layer: str | None = None) -> str:
        if task_type is None and task_id is None and self._master:
            return self._master
        return super().master(task_type, task_id, rpc_layer)

    def num_accelerators(self, task_type: str | None = None, task_id: int | None = None,
                         config_proto: Any = None) -> dict[str, int]:
        if self._accelerators is not None:
            return dict(self._accelerators)
        return super().num_accelerators(task_type, task_id, config_proto)


def format_master_url(master: str, rpc_layer: str | None = None) -> str:
    """``rpc_layer://master`` (just ``master`` without a layer)."""
    return f"{rpc_layer}://{master}" if rpc_layer else master


class UnionResolver(ClusterResolver):
    """The union of several resolvers' clusters (``tf.distribute.cluster_resolver.UnionResolver``):
    jobs with task lists are concatenated, sparse jobs (``{index: address}``) merged; this
    task's identity, rpc layer, environment and accelerators come from the first resolver
    unless given.

    Raises:
        ValueError: no resolvers, or unknown keyword arguments.
        TypeError: an argument that is not a ClusterResolver.
    """

    def __init__(self, *args: ClusterResolver, **kwargs: Any):
        self._rpc_layer = kwargs.pop("rpc_layer", None)
        self._task_type = kwargs.pop("task_type", None)
        self._task_id = kwargs.pop("task_id", None)
        if kwargs:
            raise ValueError(f"Unexpected kwargs provided {kwargs!r}")
        if not args:
            raise ValueError("At least one ClusterResolver is required.")
        if not all(isinstance(r, ClusterResolver) for r in args):
            raise TypeError("All arguments must be a sub-class of `ClusterResolver.`")
        self._resolvers = args

    def cluster_spec(self) -> ClusterSpec:
        """The merged cluster.

        Raises:
            KeyError: two sparse jobs name the same task index.
        """
        merged: dict[str, Any] = {}
        for resolver in self._resolvers:
            for job, tasks in resolver.cluster_spec().as_dict().items():
                if job not in merged:
                    merged[job] = [] if isinstance(tasks, list) else {}
                elif isinstance(tasks, dict) and isinstance(merged[job], list):
                    merged[job] = dict(enumerate(merged[job]))
        for resolver in self._resolvers:
            for job, tasks in resolver.cluster_spec().as_dict().items():
                if isinstance(merged[job], list):
                    merged[job].extend(tasks)
                    continue
                found = dict(enumerate(tasks)) if isinstance(tasks, list) else dict(tasks)
                clash = set(found) & set(merged[job])
                if clash:
                    raise KeyError(f"Duplicate keys detected when merging two ClusterSpecs: {clash!r}")
                merged[job].update(found)
        return ClusterSpec(merged)

    def master(self, task_type: str | None = None, task_id: int | None = None,
               rpc_layer: str | None = None) -> str:
        if task_type is not None and task_id is not None:
            return format_master_url(self.cluster_spec().task_address(task_type, task_id),
                                     rpc_layer or self._rpc_layer)
        return self._resolvers[0].master(rpc_layer=rpc_layer)

    @property  # type: ignore[override]
    def task_type(self) -> str | None:
        return self._task_type or self._resolvers[0].task_type

    @task_type.setter
    def task_type(self, value: str | None) -> None:
        self._task_type = value

    @property  # type: ignore[override]
    def task_id(self) -> int | None:
        return self._task_id if self._task_id is not None else self._resolvers[0].task_id

    @task_id.setter
    def task_id(self, value: int | None) -> None:
        self._task_id = value

    @property  # type: ignore[override]
    def rpc_layer(self) -> str | None:
        return self._rpc_layer or self._resolvers[0].rpc_layer

    @rpc_layer.setter
    def rpc_layer(self, value: str | None) -> None:
        self._rpc_layer = value

    @property  # type: ignore[override]
    def environment(self) -> str:
        return self._resolvers[0].environment

    def num_accelerators(self, task_type: str | None = None, task_id: int | None = None,
                         config_proto: Any = None) -> dict[str, int]:
        return self._resolvers[0].num_accelerators(task_type, task_id, config_proto)
