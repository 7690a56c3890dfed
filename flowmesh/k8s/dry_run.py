"""``flowmesh k8s manifest --dry-run``: the manifests' pods, run as local processes.

Each Job of the generated manifest becomes ``completions`` local tasks. A task gets the
environment Kubernetes would give its container: the downward-API completion index, the
secret (a fresh random one stands in for the Secret), and ``$(VAR)`` references expanded
in order, as the kubelet does. Only the addresses change: each pod's stable DNS name in
``TF_CONFIG`` becomes a free loopback port. With ``hosts`` (``--hosts``, root on Linux)
nothing changes: each pod runs on a host of its own (a network namespace with its own
address and hostname, :mod:`flowmesh.testing.hosts`) whose ``/etc/hosts`` resolves
every pod's DNS name, so the pods find each other by name on the declared port, as in a
cluster. A leading ``python``/``python3`` in the pod's
command runs as this interpreter. The tasks then run under ``flowmesh launch``'s
supervisor: output prefixed per task, ps stopped once the trainers are done, the chief's
(or first worker's) status returned.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sys
from collections.abc import Mapping
from typing import Any

from flowmesh import config
from flowmesh.distributed.ports import free_ports
from flowmesh.k8s.manifest import JobSpec
from flowmesh.launch.supervisor import Launcher, LaunchOptions, TaskSpec

_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def expand(value: str, defined: Mapping[str, str]) -> str:
    """Kubernetes' expansion of ``$(VAR)`` in an env value or command (``$$`` escapes;
    a reference to an undefined variable stays as written)."""

    def substitute(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return defined.get(match.group(1), match.group(0))

    return _REFERENCE.sub(substitute, value)


def pods_of(manifests: list[dict[str, Any]]) -> list[tuple[dict[str, Any], int]]:
    """``(Job, completion index)`` of every pod the manifests' Jobs create."""
    jobs = [m for m in manifests if m["kind"] == "Job"]
    return [(job, i) for job in jobs for i in range(job["spec"]["completions"])]


def pod_specs(spec: JobSpec, manifests: list[dict[str, Any]], bed: Any = None,
              ) -> tuple[list[TaskSpec], dict[str, list[str]]]:
    """One ``TaskSpec`` per pod of ``manifests``' Jobs, and the cluster they form: on
    loopback ports, or with ``bed`` (a :class:`~flowmesh.testing.hosts.HostBed` whose
    host ``h<n>`` is the n-th pod) on the pods' own names and port."""
    pods = pods_of(manifests)
    names = [f"{spec.host(_role(job), i)}:{spec.port}" for job, i in pods]
    if bed is None:
        local = dict(zip(names, (f"127.0.0.1:{port}" for port in free_ports(len(pods)))))
    else:
        local = {name: name for name in names}
    secret = secrets.token_hex(32)
    tasks = []
    for n, (job, index) in enumerate(pods, start=1):
        container = job["spec"]["template"]["spec"]["containers"][0]
        env = _container_env(container["env"], index, secret, local)
        command = [expand(part, env) for part in container["command"]]
        if os.path.basename(command[0]) in ("python", "python3"):
            command[0] = sys.executable
        if bed is not None:
            command = bed.argv(f"h{n}", command)
        inherited = config.process_environment()  # the local process keeps PATH, PYTHONPATH, ...
        inherited.pop("TF_CONFIG", None)
        tasks.append(TaskSpec(_role(job), index, command, {**inherited, **env}))
    cluster = {role: [local[a] for a in addresses] for role, addresses in spec.cluster().items()}
    return tasks, cluster


def run(spec: JobSpec, manifests: list[dict[str, Any]], timeout: float = 0.0,
        hosts: bool = False) -> int:
    """Runs the pods of ``manifests`` locally (``hosts``: each on a host of its own);
    returns the job's exit status.

    Raises:
        RuntimeError: ``hosts`` on a machine that cannot make network namespaces.
    """
    bed = None
    if hosts:
        from flowmesh.testing.hosts import HostBed

        pods = pods_of(manifests)
        bed = HostBed(len(pods), aliases={f"h{n}": [spec.host(_role(job), i)]
                                          for n, (job, i) in enumerate(pods, start=1)})
    try:
        tasks, cluster = pod_specs(spec, manifests, bed)
        launcher = Launcher(cluster, LaunchOptions(timeout=timeout, standby=False))
        launcher.start(tasks)
        where = (lambda n: f"@{bed.ip(f'h{n}')}") if bed is not None else (lambda n: "")
        launcher.say("dry run: " + " ".join(f"{t.name}={t.proc.pid}{where(n)}"
                                            for n, t in enumerate(launcher.tasks, start=1)))
        try:
            return launcher.wait()
        finally:
            launcher.stop_all()
    finally:
        if bed is not None:
            bed.close()


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
    return env


def _role(job: Mapping[str, Any]) -> str:
    return job["metadata"]["labels"]["flowmesh.io/role"]
