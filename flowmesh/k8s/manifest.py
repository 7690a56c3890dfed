"""A ps/worker job as Kubernetes objects: a headless Service and one Indexed Job per role.

Every pod of role R gets the hostname ``<job>-R-<i>`` and the Service as its subdomain,
so its stable DNS name is ``<job>-R-<i>.<job>`` (``.<ns>.svc.cluster.local`` with
``fqdn``). ``TF_CONFIG`` lists those names; the pod's own index comes from the Job's
completion index through the downward API and Kubernetes' ``$(VAR)`` expansion::

    FLOWMESH_TASK_INDEX  <- metadata.annotations['batch.kubernetes.io/job-completion-index']
    TF_CONFIG            =  {"cluster": {...}, "task": {"type": "worker", "index": $(FLOWMESH_TASK_INDEX)}}

All replicas of a role start together (``parallelism == completions``). Each role has
a restart policy (``OnFailure`` by default: a failed task restarts in place, with the same
name). The cluster secret comes from one Secret through ``secretKeyRef`` (never a literal
in the manifest). A server listed at a pod's DNS name listens on all of the pod's
interfaces by itself, on the one port the container declares (gRPC and tensors share it).
Indexed Jobs serve every role, ps included, so a job
whose tasks all exit when training is done (``train_and_evaluate``) completes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from flowmesh.launch.roles import cluster_spec

ROLES = ("chief", "worker", "ps", "evaluator")  # evaluator: not in the cluster spec
RESTART_POLICIES = ("OnFailure", "Never")
INDEX_ENV = "FLOWMESH_TASK_INDEX"
SECRET_ENV = "FLOWMESH_CLUSTER_SECRET"
_COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


@dataclass(frozen=True)
class JobSpec:
    """What to run: the command on ``image``, how many tasks of each role, and where.

    Raises:
        ValueError: a name Kubernetes would refuse, no worker, or an unknown policy.
    """

    name: str
    image: str
    command: tuple[str, ...]
    ps: int = 0
    workers: int = 1
    chief: bool = False
    evaluator: bool = False
    namespace: str = "default"
    port: int = 2222
    fqdn: bool = False
    secret_name: str = ""  # default: "<name>-secret"
    secret_key: str = "secret"
    restart_policy: dict[str, str] = field(default_factory=dict)
    backoff_limit: int = 6

    def __post_init__(self) -> None:
        _check_dns_label(self.name, "--name")
        if self.workers < 1 and not self.chief:
            raise ValueError("a job needs --workers >= 1 or --chief")
        if self.ps < 0 or self.workers < 0:
            raise ValueError("--ps and --workers must be >= 0")
        if not self.command:
            raise ValueError("give the command to run after `--`, e.g. -- python train.py")
        for role, policy in self.restart_policy.items():
            if role not in ROLES or policy not in RESTART_POLICIES:
                raise ValueError(f"restart policy {role}={policy}: roles are {ROLES}, "
                                 f"policies {RESTART_POLICIES}")

    @property
    def secret(self) -> str:
        return self.secret_name or f"{self.name}-secret"

    def replicas(self) -> dict[str, int]:
        """Tasks per role, roles with none left out."""
        counts = {"chief": int(self.chief), "worker": self.workers, "ps": self.ps,
                  "evaluator": int(self.evaluator)}
        return {role: n for role, n in counts.items() if n}

    def host(self, role: str, index: int) -> str:
        """The stable DNS name of one task's pod."""
        suffix = f".{self.namespace}.svc.cluster.local" if self.fqdn else ""
        return f"{self.name}-{role}-{index}.{self.name}{suffix}"

    def cluster(self) -> dict[str, list[str]]:
        """The cluster spec every task sees (the evaluator is not part of it)."""
        return cluster_spec(self.replicas(), lambda role, i: f"{self.host(role, i)}:{self.port}")


def job_manifests(spec: JobSpec) -> list[dict[str, Any]]:
    """The Service and the Jobs, in the order to apply them."""
    return [_service(spec)] + [_job(spec, role, n) for role, n in spec.replicas().items()]


def task_env(spec: JobSpec, role: str, index_source: dict[str, Any]) -> list[dict[str, Any]]:
    """A container's environment: index, secret, then TF_CONFIG (last: it expands
    ``$(FLOWMESH_TASK_INDEX)``, defined before it)."""
    tf_config = json.dumps({"cluster": spec.cluster(), "task": {"type": role, "index": 0}})
    tf_config = tf_config.replace('"index": 0}', f'"index": $({INDEX_ENV})}}')
    return [
        {"name": INDEX_ENV, "valueFrom": index_source},
        {"name": SECRET_ENV, "valueFrom": {"secretKeyRef": {"name": spec.secret, "key": spec.secret_key}}},
        {"name": "PYTHONUNBUFFERED", "value": "1"},
        {"name": "TF_CONFIG", "value": tf_config},
    ]


def labels(spec: JobSpec, role: str | None = None) -> dict[str, str]:
    out = {"app.kubernetes.io/name": "flowmesh", "flowmesh.io/job": spec.name}
    if role:
        out["flowmesh.io/role"] = role
    return out


def _service(spec: JobSpec) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": spec.name, "namespace": spec.namespace, "labels": labels(spec)},
        "spec": {"clusterIP": "None", "selector": labels(spec), "publishNotReadyAddresses": True,
                 "ports": [{"name": "grpc", "port": spec.port, "targetPort": spec.port}]},
    }


def _job(spec: JobSpec, role: str, count: int) -> dict[str, Any]:
    container = {
        "name": "flowmesh", "image": spec.image, "command": list(spec.command),
        "ports": [{"name": "grpc", "containerPort": spec.port}],
        "env": task_env(spec, role, {"fieldRef": {"fieldPath": _COMPLETION_INDEX}}),
    }
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": f"{spec.name}-{role}", "namespace": spec.namespace,
                     "labels": labels(spec, role)},
        "spec": {
            "completionMode": "Indexed", "completions": count, "parallelism": count,
            "backoffLimit": spec.backoff_limit,
            "template": {
                "metadata": {"labels": labels(spec, role)},
                "spec": {"subdomain": spec.name, "containers": [container],
                         "restartPolicy": spec.restart_policy.get(role, "OnFailure")},
            },
        },
    }


def _check_dns_label(value: str, what: str) -> None:
    import re

    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?", value):
        raise ValueError(f"{what} {value!r} must be a DNS label: lower-case letters, digits and '-', "
                         "starting and ending with a letter or digit, at most 42 characters "
                         "(pod names add '-<role>-<index>')")
