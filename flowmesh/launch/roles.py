"""A job's roles, the cluster spec they form, and what each task is told about it.

TensorFlow's jobs: ``chief`` (or TensorFlowOnSpark's ``master``) and ``worker`` train,
``ps`` serves variables, ``evaluator`` evaluates checkpoints and is not part of the
cluster spec. Every launcher turns "how many tasks of each role" into a cluster spec
(addresses per role, in the order given) and gives each task ``TF_CONFIG`` and, for
scripts written for them, the classic ``--ps_hosts/--worker_hosts/--job_name/--task_index``
flags; only where the addresses come from differs (free loopback ports, pod DNS names,
the ports Ray actors or Spark tasks report).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from flowmesh.distributed.ports import free_ports

TRAINING_JOBS = ("chief", "master", "worker")  # consume input; the first one leads
OUTSIDE_CLUSTER = ("evaluator",)  # tasks of a job that its cluster spec does not list
ROLE_ORDER = ("chief", "worker", "ps", "evaluator")  # how launchers list a job's tasks


def cluster_spec(counts: Mapping[str, int], address: Callable[[str, int], str]) -> dict[str, list[str]]:
    """``{role: [address(role, i) for each task]}`` for the roles of ``counts`` with tasks,
    in ``counts``' order, the evaluator left out."""
    return {role: [address(role, i) for i in range(n)] for role, n in counts.items()
            if n and role not in OUTSIDE_CLUSTER}


def local_cluster(counts: Mapping[str, int], host: str = "localhost") -> dict[str, list[str]]:
    """A cluster spec on free ports of this machine (``{"ps": 2, "worker": 3}``)."""
    ports = iter(free_ports(sum(n for role, n in counts.items() if role not in OUTSIDE_CLUSTER)))
    return cluster_spec(counts, lambda role, i: f"{host}:{next(ports)}")


def tasks(cluster: Mapping[str, list[str]], evaluators: int = 0) -> list[tuple[str, int]]:
    """Every task of a job, ``(role, index)``, in :data:`ROLE_ORDER` (roles it does not
    know last), with ``evaluators`` evaluator tasks at the end."""
    known = [role for role in ROLE_ORDER if role in cluster]
    roles = known + [role for role in cluster if role not in known]
    return [(role, i) for role in roles for i in range(len(cluster[role]))] + \
        [("evaluator", i) for i in range(evaluators)]


def classic_flags(cluster: Mapping[str, list[str]], job: str, index: int) -> list[str]:
    """The seeds' command-line flags for one task (``--chief_hosts`` with a chief)."""
    flags = [f"--ps_hosts={','.join(cluster.get('ps', []))}",
             f"--worker_hosts={','.join(cluster.get('worker', []))}",
             f"--job_name={job}", f"--task_index={index}"]
    if "chief" in cluster:
        flags.insert(2, f"--chief_hosts={','.join(cluster['chief'])}")
    return flags
