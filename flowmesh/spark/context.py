"""``ctx``: what a TensorFlowOnSpark ``map_fun(args, ctx)`` learns about its node."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from flowmesh.spark.feed import DataFeed, FeedChannel


@dataclass
class TFNodeContext:
    """TensorFlowOnSpark's ``TFNodeContext``.

    Attributes:
        executor_id: the Spark task's partition id, 0..num_executors-1 (``worker_num``).
        job_name, task_index: this node's TensorFlow task.
        cluster_spec: ``{job: ["host:port", ...]}`` of the whole cluster.
        num_workers: number of training tasks (chief/master and workers).
        defaultFS: the default file system prefix (``file://`` unless Spark says otherwise).
        working_dir: the Spark task's working directory.
        mgr: the input/output channel of InputMode.SPARK (``None`` in TENSORFLOW mode).
    """

    executor_id: int
    job_name: str
    task_index: int
    cluster_spec: dict[str, list[str]]
    num_workers: int
    defaultFS: str = "file://"
    working_dir: str = field(default_factory=os.getcwd)
    mgr: FeedChannel | None = None
    tmp_socket: Any = None

    @property
    def worker_num(self) -> int:
        """TensorFlowOnSpark's name for ``executor_id``."""
        return self.executor_id

    def absolute_path(self, path: str) -> str:
        """``path`` with a file system prefix (relative paths are under ``working_dir``)."""
        if "://" in path:
            return path
        if self.defaultFS.startswith("file://"):
            return "file://" + os.path.abspath(os.path.join(self.working_dir, path))
        return self.defaultFS.rstrip("/") + "/" + path.lstrip("/")

    def get_data_feed(self, train_mode: bool = True, qname_in: str = "input",
                      qname_out: str = "output", input_mapping: dict[str, str] | None = None) -> DataFeed:
        """``DataFeed(self.mgr, ...)``."""
        return DataFeed(self.mgr, train_mode, qname_in, qname_out, input_mapping)  # type: ignore[arg-type]

    def release_port(self) -> None:
        """Compatibility no-op: flowmesh holds no reservation socket for the node's port."""
