"""``flowmesh k8s manifest --dry-run``: the manifests' pods, run as local processes.

Each Job of the generated manifest becomes ``completions`` local tasks. A task gets the
environment Kubernetes would give its container: the downward-API completion index, the
secret (a fresh random one stands in for the Secret), and ``$(VAR)`` references expanded
in order, as the kubelet does. Only the addresses change: each pod's stable DNS name in
``TF_CONFIG`` becomes a free loopback port. A leading ``python``/``python3`` in the pod's
command runs as this interpreter. The tasks then run under ``flowmesh launch``'s
supervisor: output prefixed per task, ps stopped once the trainers are done, the chief's
(or first worker's) status returned.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import sys
from collections.abc import Mapping
from typing import Any

from flowmesh.cli.launch import Launcher, TaskSpec
from flowmesh.cli.ports import free_ports
from flowmesh.k8s.manifest import JobSpec

_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def expand(value: str, defined: Mapping[str, str]) -> str:
    """Kubernetes' expansion of ``$(VAR)`` in an env value or command (``$$`` escapes;
    a reference to an undefined variable stays as written)."""

    def substitute(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return defined.get(match.group(1), match.group(0))

    return _REFERENCE.sub(substitute, value)


def pod_specs(spec: JobSpec, manifests: list[dict[str, Any]]) -> tuple[list[TaskSpec], dict[str, list[str]]]:
    """One ``TaskSpec`` per pod of ``manifests``' Jobs, and the local cluster they form."""
    jobs = [m for m in manifests if m["kind"] == "Job"]
    pods = [(job, i) for job in jobs for i in range(job["spec"]["completions"])]
    ports = iter(free_ports(len(pods)))
    local = {f"{spec.host(_role(job), i)}:{spec.port}": f"127.0.0.1:{next(ports)}" for job, i in pods}
    secret = secrets.token_hex(32)
    tasks = []
    for job, index in pods:
        container = job["spec"]["template"]["spec"]["containers"][0]
        env = _container_env(container["env"], index, secret, local)
        command = [expand(part, env) for part in container["command"]]
        if os.path.basename(command[0]) in ("python", "python3"):
            command[0] = sys.executable
        inherited = dict(os.environ)  # the local process keeps PATH, PYTHONPATH, ...
        inherited.pop("TF_CONFIG", None)
        tasks.append(TaskSpec(_role(job), index, command, {**inherited, **env}))
    cluster = {role: [local[a] for a in addresses] for role, addresses in spec.cluster().items()}
    return tasks, cluster


def run(spec: JobSpec, manifests: list[dict[str, Any]], timeout: float = 0.0) -> int:
    """Runs the pods of ``manifests`` locally; returns the job's exit status."""
    tasks, cluster = pod_specs(spec, manifests)
    options = argparse.Namespace(timeout=timeout, grace=5.0, max_restarts=None, standby=False)
    launcher = Launcher(options, specs=tasks, cluster=cluster)
    launcher.say("dry run: " + " ".join(f"{t.name}={t.proc.pid}" for t in launcher.tasks))
    try:
        return launcher.wait()
    finally:
        launcher.stop_all()


def _container_env(entries: list[dict[str, Any]], index: int, secret: str,
                   local: Mapping[str, str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for entry in entries:
        source = entry.get("valueFrom", {})
        if "fieldRef" in source:
            value = str(index)  # the only field the manifests use: the completion index
        elif "secretKeyRef" in source:
            value = secret
        else:
            value = expand(entry.get("value", ""), env)
        env[entry["name"]] = value
    if "TF_CONFIG" in env:
        config = json.loads(env["TF_CONFIG"])
        config["cluster"] = {role: [local[a] for a in addresses]
                             for role, addresses in config["cluster"].items()}
        env["TF_CONFIG"] = json.dumps(config)
    env.pop("FLOWMESH_BIND_ADDRESS", None)  # local tasks stay on loopback
    return env


def _role(job: Mapping[str, Any]) -> str:
    return job["metadata"]["labels"]["flowmesh.io/role"]
