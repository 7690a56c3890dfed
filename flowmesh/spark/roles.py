"""Which TensorFlow task each Spark task of a cluster becomes (TensorFlowOnSpark's rule).

Executors are numbered 0..N-1 (the partition id of the barrier task). The first
``num_ps`` become parameter servers, then one ``master_node`` task (``"chief"`` or
``"master"``) when asked for, then one ``evaluator`` when asked for, and every remaining
executor a ``worker``, in that order, exactly as TensorFlowOnSpark assigns them.
"""

from __future__ import annotations

from dataclasses import dataclass

SERVICE_JOBS = frozenset({"ps"})  # serve until the training tasks are done, then stop
TRAINING_JOBS = ("chief", "master", "worker")  # consume input and count as ctx.num_workers


@dataclass(frozen=True)
class Role:
    """One executor's place in the TensorFlow cluster."""

    executor_id: int
    job_name: str
    task_index: int


def cluster_template(num_executors: int, num_ps: int, master_node: str | None = None,
                     eval_node: bool = False) -> dict[str, list[int]]:
    """Maps each job name to the executor ids that run it.

    Raises:
        ValueError: when the executors cannot hold the requested tasks (at least one
            training task is always needed).
    """
    if num_ps < 0:
        raise ValueError(f"num_ps must be >= 0, got {num_ps}")
    if master_node not in (None, "chief", "master"):
        raise ValueError(f"master_node must be None, 'chief' or 'master', got {master_node!r}")
    needed = num_ps + (1 if eval_node else 0) + 1
    if num_executors < needed:
        raise ValueError(
            f"{num_executors} executors cannot hold {num_ps} ps, {'an evaluator, ' if eval_node else ''}"
            f"and at least one training task: give num_executors >= {needed}")
    executors = list(range(num_executors))
    template: dict[str, list[int]] = {}
    if num_ps:
        template["ps"], executors = executors[:num_ps], executors[num_ps:]
    if master_node:
        template[master_node], executors = executors[:1], executors[1:]
    if eval_node:
        template["evaluator"], executors = executors[:1], executors[1:]
    if executors:
        template["worker"] = executors
    return template


def role_of(template: dict[str, list[int]], executor_id: int) -> Role:
    """The role of one executor in ``template``."""
    for job, executors in template.items():
        if executor_id in executors:
            return Role(executor_id, job, executors.index(executor_id))
    raise ValueError(f"executor {executor_id} has no role in {template}")


def training_executors(template: dict[str, list[int]]) -> list[int]:
    """Executor ids that consume input (chief/master first, then workers)."""
    return [e for job in TRAINING_JOBS for e in template.get(job, [])]
