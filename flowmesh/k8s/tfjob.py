"""The job as a Kubeflow ``TFJob`` (``kubeflow.org/v1``): the training operator creates
the pods and services and sets ``TF_CONFIG`` itself; flowmesh adds the cluster secret
(``secretKeyRef``). The operator wants the container named
``tensorflow`` and its port named ``tfjob-port``.
"""

from __future__ import annotations

from typing import Any

from flowmesh.k8s.manifest import SECRET_ENV, JobSpec

REPLICA_TYPES = {"chief": "Chief", "worker": "Worker", "ps": "PS", "evaluator": "Evaluator"}


def tfjob_manifest(spec: JobSpec) -> dict[str, Any]:
    """One TFJob object for ``spec``."""
    replica_specs = {}
    for role, count in spec.replicas().items():
        container = {
            "name": "tensorflow", "image": spec.image, "command": list(spec.command),
            "ports": [{"name": "tfjob-port", "containerPort": spec.port}],
            "env": [
                {"name": SECRET_ENV, "valueFrom": {"secretKeyRef": {"name": spec.secret,
                                                                    "key": spec.secret_key}}},
                {"name": "PYTHONUNBUFFERED", "value": "1"},
            ],
        }
        replica_specs[REPLICA_TYPES[role]] = {
            "replicas": count,
            "restartPolicy": spec.restart_policy.get(role, "OnFailure"),
            "template": {"spec": {"containers": [container]}},
        }
    return {
        "apiVersion": "kubeflow.org/v1", "kind": "TFJob",
        "metadata": {"name": spec.name, "namespace": spec.namespace},
        "spec": {"runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": spec.backoff_limit},
                 "tfReplicaSpecs": replica_specs},
    }
