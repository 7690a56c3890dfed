"""``KubernetesClusterResolver``: the cluster of Running pods selected by labels, through the
Kubernetes Python client (``pip install kubernetes``), as TensorFlow's resolver reads it:
per job, the pods of each label selector sorted by name, ``host_ip:tf_server_port``."""

from __future__ import annotations

import enum
from typing import Any

from flowmesh.distribute.cluster_resolver.base import ClusterResolver, format_master_url
from flowmesh.distributed.cluster_spec import ClusterSpec


class ExecutableLocation(enum.Enum):
    """Where the program runs: inside the cluster (service-account credentials) or outside
    (``~/.kube/config``)."""

    WITHIN_CLUSTER = 0
    OFF_CLUSTER = 1


def _kubernetes() -> Any:
    try:
        import kubernetes
    except ImportError:
        raise ImportError("The Kubernetes Python client must be installed before using the Kubernetes Cluster "
                          "Resolver. To install the Kubernetes Python client, run `pip install kubernetes` on "
                          "your command line.") from None
    return kubernetes


class KubernetesClusterResolver(ClusterResolver):
    """Tasks from pods: ``job_to_label_mapping`` maps each job to label selectors (default
    ``{"worker": ["job-name=tensorflow"]}``); ``override_client`` replaces the client's
    ``CoreV1Api`` (anything with ``list_pod_for_all_namespaces(label_selector=...)``).

    Raises:
        ImportError: the Kubernetes client is missing (and no ``override_client``).
        ValueError: an unknown ``executable_location``.
    """

    def __init__(self, job_to_label_mapping: dict[str, list[str]] | None = None, tf_server_port: int = 8470,
                 rpc_layer: str = "grpc", override_client: Any = None,
                 executable_location: ExecutableLocation = ExecutableLocation.WITHIN_CLUSTER):
        if override_client is None:
            config = _kubernetes().config
            if executable_location == ExecutableLocation.OFF_CLUSTER:
                config.load_kube_config()
            elif executable_location == ExecutableLocation.WITHIN_CLUSTER:
                config.load_incluster_config()
            else:
                raise ValueError("The executable location provided is invalid.")
        self._mapping = job_to_label_mapping or {"worker": ["job-name=tensorflow"]}
        self._port = tf_server_port
        self._client = override_client
        self.task_type, self.task_id, self.rpc_layer = None, None, rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        """The pods' addresses, job by job.

        Raises:
            RuntimeError: a selected pod is not Running.
        """
        client = self._client
        if client is None:
            client = _kubernetes().client.CoreV1Api()
        cluster: dict[str, list[str]] = {}
        for job, selectors in self._mapping.items():
            addresses: list[str] = []
            for selector in selectors:
                pods = client.list_pod_for_all_namespaces(label_selector=selector).items
                for pod in sorted(pods, key=lambda p: p.metadata.name):
                    if pod.status.phase != "Running":
                        raise RuntimeError(f'Pod "{pod.metadata.name}" is not running; phase: "{pod.status.phase}"')
                    addresses.append(f"{pod.status.host_ip}:{self._port}")
            cluster[job] = addresses
        return ClusterSpec(cluster)

    def master(self, task_type: str | None = None, task_id: int | None = None,
               rpc_layer: str | None = None) -> str:
        task_type = task_type if task_type is not None else self.task_type
        task_id = task_id if task_id is not None else self.task_id
        if task_type is None or task_id is None:
            return ""
        return format_master_url(self.cluster_spec().task_address(task_type, task_id), rpc_layer or self.rpc_layer)
