"""``SlurmClusterResolver``: the cluster of a Slurm job step, from Slurm's step variables
(``SLURM_PROCID``, ``SLURM_STEP_NUM_TASKS``, ``SLURM_STEP_NODELIST``,
``SLURM_STEP_TASKS_PER_NODE``), as TensorFlow's resolver builds it: hosts sorted by name, the
tasks of a host on ports ``port_base``, ``port_base + 1``, ..., jobs taking consecutive
ranks in job-name order, each task its own slice of the host's GPUs."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from typing import Any

from flowmesh import config as _settings
from flowmesh.distribute.cluster_resolver.base import ClusterResolver, format_master_url
from flowmesh.distributed.cluster_spec import ClusterSpec


def _split_hostlist(hostlist: str) -> Iterator[str]:
    """``a[1-2],b`` -> ``a[1-2]``, ``b`` (commas inside brackets stay)."""
    depth, current = 0, ""
    for c in hostlist:
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        elif c == "," and depth == 0:
            if not current:
                raise ValueError("empty host name")
            yield current
            current = ""
            continue
        current += c
    if current:
        yield current


def _expand_range(expression: str) -> Iterator[str]:
    for part in expression.split(","):
        bounds = part.split("-")
        if len(bounds) > 2:
            raise ValueError(f"bad range {part!r}")
        low, high = bounds[0], bounds[-1]
        for i in range(int(low), int(high) + 1):
            yield str(i).zfill(len(low))


def expand_hostlist(hostlist: str) -> list[str]:
    """Slurm's compressed host list (``n[01-03,07],login``) as host names.

    Raises:
        ValueError: the list is malformed.
    """
    hosts: list[str] = []
    try:
        for part in _split_hostlist(hostlist):
            match = re.match(r"([^,[\]]*)(\[([^\]]+)\])?$", part)
            if match is None:
                raise ValueError(f"invalid part {part!r}")
            prefix = match.group(1) or ""
            hosts.extend([prefix] if match.group(3) is None else [prefix + i for i in _expand_range(match.group(3))])
    except ValueError as exc:
        raise ValueError(f'Invalid hostlist format "{hostlist}": {exc}') from None
    return hosts


def expand_tasks_per_node(tasks_per_node: str) -> list[int]:
    """Slurm's ``2(x3),1`` as ``[2, 2, 2, 1]``.

    Raises:
        ValueError: the list is malformed.
    """
    result: list[int] = []
    for part in tasks_per_node.split(","):
        match = re.match(r"(\d+)(\(x(\d+)\))?$", part)
        if match is None:
            raise ValueError(f'Invalid tasks-per-node list format "{tasks_per_node}"')
        result.extend([int(match.group(1))] * int(match.group(3) or 1))
    return result


def _slurm(setting: Any) -> str:
    value = setting.get()
    if not value:
        raise RuntimeError(f"{setting.name} not found in environment. Not running inside a SLURM step?")
    return value


def _gpus_on_node() -> int:
    visible = _settings.CUDA_VISIBLE_DEVICES.get()
    if visible:
        return len(visible.split(","))
    try:
        output = subprocess.check_output(["nvidia-smi", "--list-gpus"], encoding="utf-8")
    except (OSError, subprocess.CalledProcessError):
        return 0  # no NVIDIA driver: a CPU node
    return sum(line.startswith("GPU ") for line in output.strip().split("\n"))


class SlurmClusterResolver(ClusterResolver):
    """The cluster of the current Slurm step.

    Args:
        jobs: ``{job_name: num_tasks}`` (default: every task a ``worker``).
        port_base: the first port on each host.
        gpus_per_node: GPUs of a node (default: ``CUDA_VISIBLE_DEVICES``'s count, else
            ``nvidia-smi``'s, else 0).
        gpus_per_task: GPUs of a task (default: an equal share of the node's).
        tasks_per_node: an int for every host, a ``{host: count}`` dict, or None to read
            ``SLURM_STEP_TASKS_PER_NODE``.
        auto_set_gpu: set ``CUDA_VISIBLE_DEVICES`` to this task's GPUs in ``cluster_spec()``.
        rpc_layer: the protocol of :meth:`master`'s URL.

    Raises:
        RuntimeError: not inside a Slurm step, more GPUs requested than a node has, or
            ``jobs`` asking for another number of tasks than the step has.
    """

    def __init__(self, jobs: dict[str, int] | None = None, port_base: int = 8888, gpus_per_node: int | None = None,
                 gpus_per_task: int | None = None, tasks_per_node: Any = None, auto_set_gpu: bool = True,
                 rpc_layer: str = "grpc"):
        self._rank = int(_slurm(_settings.SLURM_PROCID))
        self._jobs = dict(jobs) if jobs is not None else {"worker": int(_slurm(_settings.SLURM_STEP_NUM_TASKS))}
        self._port_base = port_base
        if tasks_per_node is None:
            counts = expand_tasks_per_node(_slurm(_settings.SLURM_STEP_TASKS_PER_NODE))
            self._tasks = dict(zip(self._hostlist(), counts))
        elif isinstance(tasks_per_node, dict):
            self._tasks = dict(tasks_per_node)
        else:
            self._tasks = {host: int(tasks_per_node) for host in self._hostlist()}
        most = max(self._tasks.values())
        self._gpus_per_node = _gpus_on_node() if gpus_per_node is None else gpus_per_node
        self._gpus_per_task = self._gpus_per_node // most if gpus_per_task is None else gpus_per_task
        self._auto_set_gpu = auto_set_gpu
        self.task_type, self.task_id, self.rpc_layer = None, None, rpc_layer
        self._gpu_allocation: list[str] = []
        if most * self._gpus_per_task > self._gpus_per_node:
            raise RuntimeError("Requested more GPUs per node than available.")
        if sum(self._jobs.values()) != sum(self._tasks.values()):
            raise RuntimeError(f"Requested {sum(self._jobs.values())} tasks but only {sum(self._tasks.values())} "
                               "were assigned.")

    @staticmethod
    def _hostlist() -> list[str]:
        return expand_hostlist(_slurm(_settings.SLURM_STEP_NODELIST))

    def cluster_spec(self) -> ClusterSpec:
        """The step's cluster; also sets this task's ``task_type``/``task_id`` (and
        ``CUDA_VISIBLE_DEVICES`` with ``auto_set_gpu``)."""
        addresses: list[str] = []
        self._gpu_allocation = []
        step = max(1, self._gpus_per_task)
        for host, count in sorted(self._tasks.items()):
            gpu_starts = range(0, self._gpus_per_node, step) if self._gpus_per_task else [0] * count
            for offset, first_gpu in zip(range(count), gpu_starts):
                addresses.append(f"{host}:{self._port_base + offset}")
                self._gpu_allocation.append(",".join(str(g) for g in range(first_gpu,
                                                                           first_gpu + self._gpus_per_task)))
        cluster: dict[str, list[str]] = {}
        start = 0
        for job, count in sorted(self._jobs.items()):
            cluster[job] = addresses[start:start + count]
            if start <= self._rank < start + count:
                self.task_type, self.task_id = job, self._rank - start
            start += count
        if self._auto_set_gpu and self._rank < len(self._gpu_allocation):
            os.environ["CUDA_VISIBLE_DEVICES"] = self._gpu_allocation[self._rank]  # as TensorFlow's resolver does
        return ClusterSpec(cluster)

    def get_task_info(self) -> tuple[str | None, int | None]:
        return self.task_type, self.task_id

    def master(self, task_type: str | None = None, task_id: int | None = None,
               rpc_layer: str | None = None) -> str:
        spec = self.cluster_spec()
        task_type = task_type if task_type is not None else self.task_type
        task_id = task_id if task_id is not None else self.task_id
        if task_type is None or task_id is None:
            return ""
        return format_master_url(spec.task_address(task_type, task_id), rpc_layer or self.rpc_layer)

    def num_accelerators(self, task_type: str | None = None, task_id: int | None = None,
                         config_proto: Any = None) -> dict[str, int]:
        return {"GPU": self._gpus_per_task}
