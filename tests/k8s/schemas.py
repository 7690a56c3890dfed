"""Offline validation of manifests: Kubernetes objects against the published 1.30 JSON
schemas (kubernetes-validate, strict: unknown fields fail), and a TFJob against the
Kubeflow training SDK's generated TFJob models (field names and types from its OpenAPI
document), with its pod templates checked by the Kubernetes schemas."""

from __future__ import annotations

import re
from typing import Any

import pytest

kubernetes_validate = pytest.importorskip("kubernetes_validate")
training_models = pytest.importorskip("kubeflow.training.models")

K8S_VERSION = "1.30.0"
# Enumerations of the TFJob API (training-operator's ReplicaType and RestartPolicy).
TFJOB_REPLICA_TYPES = {"Chief", "Master", "PS", "Worker", "Evaluator"}
RESTART_POLICIES = {"Always", "OnFailure", "Never", "ExitCode"}


def validate_k8s(obj: dict[str, Any]) -> None:
    """Raises kubernetes_validate's ValidationError when ``obj`` breaks the schema."""
    kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


def validate_tfjob(obj: dict[str, Any]) -> list[str]:
    """The problems of a TFJob object (empty when valid)."""
    problems: list[str] = []
    _walk(obj, "KubeflowOrgV1TFJob", "tfjob", problems)
    for name, replica in obj.get("spec", {}).get("tfReplicaSpecs", {}).items():
        if name not in TFJOB_REPLICA_TYPES:
            problems.append(f"tfReplicaSpecs.{name}: not one of {sorted(TFJOB_REPLICA_TYPES)}")
        if replica.get("restartPolicy") not in RESTART_POLICIES:
            problems.append(f"tfReplicaSpecs.{name}.restartPolicy: {replica.get('restartPolicy')!r}")
    return problems


def _walk(data: Any, type_name: str, path: str, problems: list[str]) -> None:
    container = re.fullmatch(r"(list)\[(.+)\]|(dict)\(str, (.+)\)", type_name)
    if container and container.group(1):
        if not isinstance(data, list):
            problems.append(f"{path}: expected a list")
            return
        for i, item in enumerate(data):
            _walk(item, container.group(2), f"{path}[{i}]", problems)
        return
    if container:
        if not isinstance(data, dict):
            problems.append(f"{path}: expected a mapping")
            return
        for key, item in data.items():
            _walk(item, container.group(4), f"{path}.{key}", problems)
        return
    primitive = {"str": str, "int": int, "bool": bool, "float": (int, float), "object": object,
                 "datetime": str}
    if type_name in primitive:
        if not isinstance(data, primitive[type_name]):
            problems.append(f"{path}: expected {type_name}, got {type(data).__name__}")
        return
    if type_name == "V1PodTemplateSpec":  # the Kubernetes schema is the authority here
        wrapper = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"}, "template": data}
        try:
            validate_k8s(wrapper)
        except Exception as error:  # noqa: BLE001 - reported as a problem
            problems.append(f"{path}: {error}")
        return
    _walk_model(data, type_name, path, problems)


def _walk_model(data: Any, type_name: str, path: str, problems: list[str]) -> None:
    import kubernetes.client.models as k8s_models

    cls = getattr(training_models, type_name, None) or getattr(k8s_models, type_name)
    if not isinstance(data, dict):
        problems.append(f"{path}: expected a {type_name} mapping")
        return
    by_json = {json_key: attr for attr, json_key in cls.attribute_map.items()}
    for key, value in data.items():
        if key not in by_json:
            problems.append(f"{path}.{key}: unknown field of {type_name}")
            continue
        _walk(value, cls.openapi_types[by_json[key]], f"{path}.{key}", problems)
    try:  # the generated constructors check required fields and enumerations
        cls(**{by_json[k]: v for k, v in data.items() if k in by_json})
    except ValueError as error:
        problems.append(f"{path}: {error}")
