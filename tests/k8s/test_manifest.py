"""``flowmesh k8s manifest``: objects valid against the Kubernetes 1.30 and TFJob schemas,
TF_CONFIG from stable DNS names, secrets only by reference."""

from __future__ import annotations

import json
import sys

import pytest

from flowmesh.cli.k8s import render
from flowmesh.cli.main import main
from flowmesh.k8s import JobSpec, job_manifests, tfjob_manifest
from flowmesh.k8s.dry_run import expand, pod_specs
from tests.k8s.schemas import validate_k8s, validate_tfjob

SPEC = JobSpec("mnist", "registry.example/train:1", ("python", "train.py", "--steps", "100"),
               ps=2, workers=3, chief=True, evaluator=True, namespace="ml", fqdn=True,
               restart_policy={"evaluator": "Never"})


def test_every_object_is_valid_kubernetes_1_30():
    objects = job_manifests(SPEC)
    assert [o["kind"] for o in objects] == ["Service", "Job", "Job", "Job", "Job"]
    for obj in objects:
        validate_k8s(obj)


def test_roles_start_whole_with_their_restart_policy():
    jobs = {o["metadata"]["name"]: o["spec"] for o in job_manifests(SPEC) if o["kind"] == "Job"}
    assert jobs["mnist-worker"]["completions"] == jobs["mnist-worker"]["parallelism"] == 3
    assert jobs["mnist-ps"]["completionMode"] == "Indexed"
    policies = {name: j["template"]["spec"]["restartPolicy"] for name, j in jobs.items()}
    assert policies == {"mnist-chief": "OnFailure", "mnist-worker": "OnFailure",
                        "mnist-ps": "OnFailure", "mnist-evaluator": "Never"}


def test_tf_config_names_each_pod_by_its_stable_dns_name():
    job = next(o for o in job_manifests(SPEC) if o["metadata"]["name"] == "mnist-worker")
    env = job["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e["name"] for e in env][0] == "FLOWMESH_TASK_INDEX"  # defined before TF_CONFIG uses it
    raw = next(e["value"] for e in env if e["name"] == "TF_CONFIG")
    config = json.loads(expand(raw, {"FLOWMESH_TASK_INDEX": "2"}))
    assert config["task"] == {"type": "worker", "index": 2}
    assert config["cluster"]["ps"] == ["mnist-ps-0.mnist.ml.svc.cluster.local:2222",
                                       "mnist-ps-1.mnist.ml.svc.cluster.local:2222"]
    assert "evaluator" not in config["cluster"]
    assert job["spec"]["template"]["spec"]["subdomain"] == "mnist"  # hostname.subdomain resolves


def test_the_secret_is_only_referenced():
    text = render(job_manifests(SPEC), "yaml") + render([tfjob_manifest(SPEC)], "json")
    for obj in job_manifests(SPEC)[1:] + [tfjob_manifest(SPEC)]:
        for container in _containers(obj):
            secret = next(e for e in container["env"] if e["name"] == "FLOWMESH_CLUSTER_SECRET")
            assert secret["valueFrom"]["secretKeyRef"] == {"name": "mnist-secret", "key": "secret"}
            # a pod's server listens on all interfaces by itself (its address is not loopback)
            assert not any(e["name"] == "FLOWMESH_BIND_ADDRESS" for e in container["env"])
    assert "mnist-secret" in text


def test_the_tfjob_is_valid():
    tfjob = tfjob_manifest(SPEC)
    assert validate_tfjob(tfjob) == []
    assert sorted(tfjob["spec"]["tfReplicaSpecs"]) == ["Chief", "Evaluator", "PS", "Worker"]


def test_the_tfjob_validator_catches_mistakes():
    tfjob = tfjob_manifest(SPEC)
    tfjob["spec"]["tfReplicaSpecs"]["Trainer"] = tfjob["spec"]["tfReplicaSpecs"].pop("Worker")
    tfjob["spec"]["tfReplicaSpecs"]["PS"]["replicas"] = "two"
    tfjob["spec"]["runPolicy"]["cleanupPolicy"] = "All"
    problems = "\n".join(validate_tfjob(tfjob))
    assert "Trainer" in problems and "expected int" in problems and "cleanupPolicy" in problems


def test_dry_run_pods_get_local_addresses_and_the_pod_environment():
    tasks, cluster = pod_specs(SPEC, job_manifests(SPEC))
    assert sorted((t.job, t.index) for t in tasks) == sorted(
        [("chief", 0), ("evaluator", 0), ("ps", 0), ("ps", 1), ("worker", 0), ("worker", 1), ("worker", 2)])
    worker = next(t for t in tasks if (t.job, t.index) == ("worker", 1))
    config = json.loads(worker.env["TF_CONFIG"])
    assert config["task"] == {"type": "worker", "index": 1} and config["cluster"] == cluster
    assert all(a.startswith("127.0.0.1:") for a in cluster["worker"])
    assert worker.cmd[0] == sys.executable and worker.cmd[1:] == ["train.py", "--steps", "100"]
    assert len(worker.env["FLOWMESH_CLUSTER_SECRET"]) == 64


@pytest.mark.parametrize("bad, message", [
    ({"name": "Bad_Name"}, "DNS label"), ({"command": ()}, "after `--`"),
    ({"workers": 0}, "--workers >= 1"), ({"restart_policy": {"ps": "Always"}}, "policies")])
def test_bad_specs_say_what_to_fix(bad, message):
    fields = {"name": "ok", "image": "img", "command": ("python", "t.py"), **bad}
    with pytest.raises(ValueError, match=message):
        JobSpec(**fields)


def test_the_command_line_prints_yaml_documents(capsys):
    status = main(["k8s", "manifest", "--ps", "1", "--image", "img", "--", "python", "train.py", "--lr", "0.1"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert out.count("kind: Job") == 2 and "- --lr" in out
    assert "kubectl create secret generic flowmesh-secret" in err
    assert main(["k8s", "manifest", "--image", "img", "--name", "No"]) == 2
    assert "DNS label" in capsys.readouterr().err


def _containers(obj):
    if obj["kind"] == "TFJob":
        return [c for r in obj["spec"]["tfReplicaSpecs"].values() for c in r["template"]["spec"]["containers"]]
    return obj["spec"]["template"]["spec"]["containers"]
