"""``TF_CONFIG``: TensorFlow's JSON description of a cluster and of this process's task.

This module is the only place in flowmesh that reads the ``TF_CONFIG`` environment
variable. The format is TensorFlow's::

    {"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"],
                 "ps": ["host3:2222"]},
     "task": {"type": "worker", "index": 1},
     "environment": "cloud", "rpc_layer": "grpc"}

Example:
    >>> cfg = tf_config.current()
    >>> if cfg.cluster:
    ...     server = tf.train.Server(cfg.cluster, job_name=cfg.task_type,
    ...                              task_index=cfg.task_index)
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flowmesh.distributed.cluster_spec import ClusterSpec

ENV_VAR = "TF_CONFIG"


@dataclass(frozen=True)
class TFConfig:
    """The parsed ``TF_CONFIG`` (every field empty when the variable is unset).

    Attributes:
        cluster: the cluster, or ``None`` when TF_CONFIG has no ``cluster``.
        task_type: this process's job (``"worker"``, ``"ps"``, ``"chief"``,
            ``"evaluator"``), or ``None``.
        task_index: this process's index within its job, or ``None``.
        environment: TF_CONFIG's ``environment`` field (``""`` if absent).
        rpc_layer: TF_CONFIG's ``rpc_layer`` field, or ``None``.
    """

    cluster: ClusterSpec | None = None
    task_type: str | None = None
    task_index: int | None = None
    environment: str = ""
    rpc_layer: str | None = None

    @property
    def is_chief(self) -> bool:
        """True for the chief task, or worker 0 when the cluster has no chief job."""
        if self.task_type == "chief":
            return True
        has_chief = self.cluster is not None and "chief" in self.cluster.jobs
        return self.task_type in ("worker", None) and not has_chief and (self.task_index or 0) == 0

    @property
    def num_workers(self) -> int:
        """Workers plus chief (the replicas that train), 1 without a cluster."""
        if self.cluster is None:
            return 1
        jobs = self.cluster.jobs
        return sum(self.cluster.num_tasks(j) for j in ("chief", "worker") if j in jobs) or 1

    def master_target(self) -> str:
        """``grpc://address`` of this task's own server, or ``""`` without a cluster."""
        if self.cluster is None or self.task_type is None or self.task_type == "evaluator":
            return ""
        return "grpc://" + self.cluster.task_address(self.task_type, self.task_index or 0)


def parse(text: str | None) -> TFConfig:
    """Parses a TF_CONFIG JSON string (``None`` or ``""`` gives an empty config).

    Raises:
        ValueError: the text is not JSON, or its fields have the wrong types; the
            message quotes what was wrong and shows the expected shape.
    """
    if not text:
        return TFConfig()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"TF_CONFIG is not valid JSON ({exc}); expected e.g. {_EXAMPLE}") from None
    if not isinstance(data, Mapping):
        raise ValueError(f"TF_CONFIG must be a JSON object, got {type(data).__name__}; e.g. {_EXAMPLE}")
    cluster_data = data.get("cluster") or None
    try:
        cluster = ClusterSpec(cluster_data) if cluster_data else None
    except (TypeError, ValueError) as exc:
        raise ValueError(f"TF_CONFIG 'cluster' is invalid: {exc}") from None
    task = data.get("task") or {}
    if not isinstance(task, Mapping):
        raise ValueError(f"TF_CONFIG 'task' must be an object like {{\"type\": \"worker\", \"index\": 0}}, got {task!r}")
    task_type = task.get("type")
    if task_type is not None and not isinstance(task_type, str):
        raise ValueError(f"TF_CONFIG task type must be a string, got {task_type!r}")
    task_index = _index(task.get("index"), task_type)
    if cluster is not None and task_type not in (None, "evaluator"):
        if task_type not in cluster.jobs:
            raise ValueError(
                f"TF_CONFIG task type {task_type!r} is not a job of its cluster ({cluster.jobs})"
            )
        if not cluster.has_task(task_type, task_index or 0):
            raise ValueError(
                f"TF_CONFIG task index {task_index} is out of range for job {task_type!r} "
                f"with {cluster.num_tasks(task_type)} tasks"
            )
    return TFConfig(cluster, task_type, task_index, str(data.get("environment") or ""),
                    data.get("rpc_layer"))


def _index(value: Any, task_type: Any) -> int | None:
    if value is None:
        return 0 if task_type is not None else None
    try:
        index = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"TF_CONFIG task index must be an integer, got {value!r}") from None
    if index < 0:
        raise ValueError(f"TF_CONFIG task index must be >= 0, got {index}")
    return index


def current() -> TFConfig:
    """Parses this process's ``TF_CONFIG`` environment variable (read on every call)."""
    return parse(os.environ.get(ENV_VAR))


def dumps(cluster: ClusterSpec | Mapping[str, Any], task_type: str, task_index: int,
          environment: str | None = None) -> str:
    """The TF_CONFIG JSON for one task of ``cluster`` (used by ``flowmesh launch``)."""
    spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
    data: dict[str, Any] = {
        "cluster": spec.as_dict(),
        "task": {"type": task_type, "index": int(task_index)},
    }
    if environment:
        data["environment"] = environment
    return json.dumps(data)


_EXAMPLE = '{"cluster": {"worker": ["localhost:2222"]}, "task": {"type": "worker", "index": 0}}'


def export(cluster: ClusterSpec | Mapping[str, Any], task_type: str, task_index: int) -> None:
    """Sets this process's ``TF_CONFIG`` to one task of ``cluster`` (for launchers that
    start the task's code in-process, such as ``flowmesh.spark``)."""
    os.environ[ENV_VAR] = dumps(cluster, task_type, task_index)
