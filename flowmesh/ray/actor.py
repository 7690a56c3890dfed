"""The Ray actor that hosts one task of a job (a ps, a worker, or an all-reduce rank).

``address`` picks the task's port on the actor's node; ``train`` exports ``TF_CONFIG``
(parameter-server jobs) and calls the user's ``train_fn``. The all-reduce ranks get their
``FLOWMESH_RANK``/``SIZE``/``RENDEZVOUS`` from the actor's runtime environment instead.
"""

from __future__ import annotations

from typing import Any


class TaskActor:
    """One task; created by :mod:`flowmesh.ray.job` as ``ray.remote(TaskActor)``."""

    def __init__(self, job: str, index: int, loopback: bool):
        self.job, self.index, self._loopback = job, index, loopback

    def address(self) -> str:
        """A free ``host:port`` for this task: on loopback when the whole job runs on the
        driver's node, else on the node's address, which the other nodes reach."""
        import ray

        from flowmesh.distributed.ports import free_ports

        host = "127.0.0.1" if self._loopback else ray.util.get_node_ip_address()
        return f"{host}:{free_ports(1, host)[0]}"

    def train(self, train_fn: Any, cluster: dict[str, list[str]] | None) -> Any:
        """Runs ``train_fn()`` as this task (``TF_CONFIG`` set first when there is a cluster)."""
        if cluster is not None:
            from flowmesh.distributed import tf_config

            tf_config.export(cluster, self.job, self.index)
        return train_fn()
