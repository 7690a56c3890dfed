"""``tf.estimator.RunConfig``: where and how an Estimator runs (frozen, reads TF_CONFIG).

The cluster, this task's role and the master target come from ``TF_CONFIG`` (parsed by
``flowmesh/distributed/tf_config.py``): ``task_type`` ``chief``/``worker``/``ps``/
``evaluator``, ``is_chief`` for the chief (or worker 0 without a chief job).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from flowmesh.distributed import tf_config
from flowmesh.errors import InvalidArgumentError

_UNSET = object()


@dataclass(frozen=True)
class RunConfig:
    """Settings of an Estimator run. Use :meth:`replace` to change a field.

    Attributes (beyond the arguments): ``cluster_spec``, ``task_type``, ``task_id``,
    ``is_chief``, ``master``, ``num_ps_replicas``, ``num_worker_replicas``,
    ``global_id_in_cluster``, ``evaluation_master``.
    """

    model_dir: str | None = None
    tf_random_seed: int | None = None
    save_summary_steps: int = 100
    save_checkpoints_steps: int | None = None
    save_checkpoints_secs: float | None = None
    session_config: Any = None
    keep_checkpoint_max: int = 5
    keep_checkpoint_every_n_hours: float = 10000
    log_step_count_steps: int = 100
    train_distribute: Any = None
    eval_distribute: Any = None
    protocol: str | None = None
    cluster_spec: Any = field(init=False, default=None)
    task_type: str | None = field(init=False, default=None)
    task_id: int = field(init=False, default=0)
    is_chief: bool = field(init=False, default=True)
    master: str = field(init=False, default="")
    num_ps_replicas: int = field(init=False, default=0)
    num_worker_replicas: int = field(init=False, default=1)
    global_id_in_cluster: int | None = field(init=False, default=0)
    evaluation_master: str = field(init=False, default="")

    def __post_init__(self) -> None:
        if self.save_checkpoints_steps is not None and self.save_checkpoints_secs is not None:
            raise InvalidArgumentError(
                "RunConfig: give save_checkpoints_steps or save_checkpoints_secs, not both")
        if self.save_checkpoints_steps is None and self.save_checkpoints_secs is None:
            object.__setattr__(self, "save_checkpoints_secs", 600)
        for name in ("save_summary_steps", "log_step_count_steps", "keep_checkpoint_max"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise InvalidArgumentError(f"RunConfig: {name} must be >= 0, got {value}")
        self._read_tf_config()

    def _read_tf_config(self) -> None:
        cfg = tf_config.current()
        cluster = cfg.cluster
        jobs = cluster.jobs if cluster is not None else []
        task_type = cfg.task_type or ("worker" if cluster is not None else None)
        values: dict[str, Any] = {
            "cluster_spec": cluster, "task_type": task_type, "task_id": cfg.task_index or 0,
            "is_chief": cfg.is_chief if cluster is not None else True,
            "master": cfg.master_target() if cluster is not None else "",
            "num_ps_replicas": cluster.num_tasks("ps") if "ps" in jobs else 0,
            "num_worker_replicas": cfg.num_workers,
        }
        if task_type == "worker" and "chief" in jobs:
            values["global_id_in_cluster"] = 1 + values["task_id"]
        elif task_type == "worker":
            values["global_id_in_cluster"] = values["task_id"]
        if task_type == "evaluator":
            # Not part of the training cluster (TensorFlow's numbers). Unlike TensorFlow the
            # cluster spec is kept: the evaluator may read checkpoints through the chief.
            values.update(is_chief=False, master="", num_ps_replicas=0, num_worker_replicas=0,
                          global_id_in_cluster=None)
        for key, value in values.items():
            object.__setattr__(self, key, value)

    def replace(self, **kwargs: Any) -> RunConfig:
        """A copy with the given constructor fields changed (TF_CONFIG is read again)."""
        allowed = {f.name for f in dataclasses.fields(self) if f.init}
        bad = sorted(set(kwargs) - allowed)
        if bad:
            raise InvalidArgumentError(f"RunConfig.replace: unknown or read-only fields {bad}")
        current = {name: getattr(self, name) for name in allowed}
        if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" not in kwargs:
            current["save_checkpoints_secs"] = None
        if "save_checkpoints_secs" in kwargs and "save_checkpoints_steps" not in kwargs:
            current["save_checkpoints_steps"] = None
        current.update(kwargs)
        return RunConfig(**current)
