"""``tf.train.ClusterSpec``: the jobs of a cluster and the network address of each task.

Example:
    >>> cluster = tf.train.ClusterSpec({"ps": ["localhost:2222"],
    ...                                 "worker": ["localhost:2223", "localhost:2224"]})
    >>> cluster.num_tasks("worker")
    2
    >>> cluster.task_address("ps", 0)
    'localhost:2222'

A job's tasks are a list (dense: indices ``0..n-1``) or a dict ``{index: address}``
(sparse, as TensorFlow allows). Specs are immutable and validated on construction:
job names must be usable in device names (``/job:<name>``) and addresses must be
``host:port`` with a numeric port (``0`` = any free port), each used by one task only.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

_JOB_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class JobDef:
    """One job of a :class:`ClusterDef`: its name and ``{task index: address}``."""

    name: str
    tasks: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ClusterDef:
    """The portable form of a cluster (TensorFlow's ``ClusterDef`` protocol buffer)."""

    job: list[JobDef] = field(default_factory=list)

    def to_dict(self) -> dict[str, dict[int, str]]:
        """``{job: {index: address}}``, safe to encode with msgpack or JSON."""
        return {j.name: dict(j.tasks) for j in self.job}


def split_address(address: str) -> tuple[str, int]:
    """Splits ``host:port`` (IPv6 hosts in brackets: ``[::1]:2222``).

    Raises:
        ValueError: the address has no numeric port.
    """
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(
            f"Task address {address!r} is not of the form 'host:port' (e.g. 'localhost:2222'; "
            "port 0 picks a free port)"
        )
    return host.strip("[]"), int(port)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine's loopback interface (``localhost``, 127.x, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def default_bind_address(host: str) -> str:
    """Where a task listed at ``host`` listens by default: on loopback when the cluster spec
    keeps it on this machine, else on every interface (as TensorFlow's servers do)."""
    if is_loopback(host):
        return "::1" if ":" in host else "127.0.0.1"
    return "::" if ":" in host.strip("[]") else "0.0.0.0"


def join_address(host: str, port: int) -> str:
    """``host:port``, with an IPv6 host in brackets."""
    host = host.strip("[]")
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class ClusterSpec:
    """Represents a cluster as a set of jobs, each with a set of task addresses.

    Args:
        cluster: a dict mapping job names to a list of addresses or to a dict
            ``{task_index: address}``; or another ``ClusterSpec`` or a ``ClusterDef``.

    Raises:
        TypeError: ``cluster`` or one of its parts has the wrong type.
        ValueError: a job name is not valid in a device name, an address is not
            ``host:port``, or two tasks share an address.
    """

    def __init__(self, cluster: Any):
        if isinstance(cluster, ClusterSpec):
            jobs = {name: dict(tasks) for name, tasks in cluster._jobs.items()}
        elif isinstance(cluster, ClusterDef):
            jobs = {j.name: _tasks_of(j.name, j.tasks) for j in cluster.job}
        elif isinstance(cluster, Mapping):
            jobs = {_job_name(name): _tasks_of(name, tasks) for name, tasks in cluster.items()}
        else:
            raise TypeError(
                "`cluster` must be a dictionary mapping one or more job names to lists of "
                f"network addresses, a ClusterSpec or a ClusterDef; got {type(cluster).__name__}"
            )
        _check_unique_addresses(jobs)
        self._jobs: dict[str, dict[int, str]] = jobs
        self._dense = {
            name: sorted(tasks) == list(range(len(tasks))) for name, tasks in jobs.items()
        }

    # --- accessors (TensorFlow's API) ---------------------------------------------------
    @property
    def jobs(self) -> list[str]:
        """The job names, in the order they were given."""
        return list(self._jobs)

    def num_tasks(self, job_name: str) -> int:
        """The number of tasks in ``job_name``.

        Raises:
            ValueError: no such job.
        """
        return len(self._job(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        """The sorted task indices of ``job_name``."""
        return sorted(self._job(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        """The ``host:port`` of task ``task_index`` of ``job_name``.

        Raises:
            ValueError: no such job or task.
        """
        tasks = self._job(job_name)
        try:
            return tasks[int(task_index)]
        except (KeyError, ValueError, TypeError):
            raise ValueError(
                f"No task with index {task_index} in job '{job_name}' (it has tasks "
                f"{sorted(tasks)})"
            ) from None

    def job_tasks(self, job_name: str) -> list[str | None]:
        """Addresses of ``job_name``'s tasks by index, ``None`` where a sparse job has a gap."""
        tasks = self._job(job_name)
        if not tasks:
            return []
        return [tasks.get(i) for i in range(max(tasks) + 1)]

    def as_dict(self) -> dict[str, list[str] | dict[int, str]]:
        """``{job: [addresses]}`` for dense jobs, ``{job: {index: address}}`` for sparse ones."""
        out: dict[str, list[str] | dict[int, str]] = {}
        for name, tasks in self._jobs.items():
            out[name] = [tasks[i] for i in sorted(tasks)] if self._dense[name] else dict(tasks)
        return out

    def as_cluster_def(self) -> ClusterDef:
        """The :class:`ClusterDef` form (jobs sorted by name, as TensorFlow emits it)."""
        return ClusterDef([JobDef(name, dict(sorted(self._jobs[name].items())))
                           for name in sorted(self._jobs)])

    # --- flowmesh helpers ---------------------------------------------------------------
    def tasks(self) -> Iterator[tuple[str, int, str]]:
        """Yields ``(job, index, address)`` for every task, jobs in order, indices sorted."""
        for name, tasks in self._jobs.items():
            for index in sorted(tasks):
                yield name, index, tasks[index]

    def has_task(self, job_name: str, task_index: int) -> bool:
        return task_index in self._jobs.get(job_name, {})

    def _job(self, job_name: str) -> dict[int, str]:
        try:
            return self._jobs[job_name]
        except (KeyError, TypeError):
            raise ValueError(
                f"No such job in cluster: {job_name!r} (jobs: {', '.join(self._jobs) or 'none'})"
            ) from None

    # --- value semantics ----------------------------------------------------------------
    def __bool__(self) -> bool:
        return bool(self._jobs)

    __nonzero__ = __bool__

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ClusterSpec):
            return self._jobs == other._jobs
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(tuple((k, tuple(sorted(v.items()))) for k, v in sorted(self._jobs.items())))

    def __repr__(self) -> str:
        items = ", ".join(f"{name!r}: {self.as_dict()[name]!r}" for name in sorted(self._jobs))
        return f"ClusterSpec({{{items}}})"

    __str__ = __repr__


def _job_name(name: Any) -> str:
    if isinstance(name, bytes):
        name = name.decode()
    if not isinstance(name, str):
        raise TypeError(f"Job name {name!r} must be bytes or unicode")
    if not _JOB_NAME.match(name):
        raise ValueError(
            f"Job name {name!r} is not valid: it must start with a letter and contain only "
            "letters, digits and '_' (it becomes part of device names like '/job:ps')"
        )
    return name


def _tasks_of(job: Any, tasks: Any) -> dict[int, str]:
    if isinstance(tasks, Mapping):
        items = list(tasks.items())
    elif isinstance(tasks, (list, tuple)):
        items = list(enumerate(tasks))
    else:
        raise TypeError(
            f"The tasks for job {job!r} must be a list or a dictionary from integers to "
            f"strings, got {type(tasks).__name__}"
        )
    out: dict[int, str] = {}
    for index, address in items:
        try:
            index = int(index)
        except (TypeError, ValueError):
            raise ValueError(f"Task index {index!r} of job {job!r} is not an integer") from None
        if index < 0:
            raise ValueError(f"Task index {index} of job {job!r} must be >= 0")
        if isinstance(address, bytes):
            address = address.decode()
        if not isinstance(address, str):
            raise TypeError(f"Task address {address!r} must be bytes or unicode")
        split_address(address)
        out[index] = address
    return out


def _check_unique_addresses(jobs: dict[str, dict[int, str]]) -> None:
    seen: dict[str, str] = {}
    for name, tasks in jobs.items():
        for index, address in tasks.items():
            if split_address(address)[1] == 0:
                continue
            where = f"/job:{name}/task:{index}"
            if address in seen:
                raise ValueError(
                    f"Tasks {seen[address]} and {where} both use address {address!r}; every "
                    "task needs its own host:port"
                )
            seen[address] = where
