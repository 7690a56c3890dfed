"""``flowmesh.ray.run``: a ps/worker or all-reduce job as Ray actors.

1. a placement group reserves one bundle per task (``resources_per_worker`` for workers
   and ranks, ``resources_per_ps`` for ps tasks) and must be ready within
   ``start_timeout`` seconds: the gang starts whole or not at all;
2. one :class:`~flowmesh.ray.actor.TaskActor` per task, in its bundle; for a ps job each
   reports its ``host:port`` and the cluster spec is built from them; for an all-reduce
   job the driver hosts the rendezvous store (as ``flowmesh run`` does) and each rank gets
   ``FLOWMESH_RANK``/``SIZE``/``LOCAL_*``/``RENDEZVOUS`` in its runtime environment;
3. ``train_fn()`` runs on every task; a task that fails (an exception, or its actor
   process died) is replaced by a new actor with the same identity (same bundle, port and
   ``TF_CONFIG``; ``FLOWMESH_RESTART_COUNT`` counts) up to ``max_restarts`` times, after
   which ``run`` raises :class:`JobFailedError` with the task's traceback;
4. when every worker has returned, the ps actors are killed and worker 0's value returned.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

from flowmesh.launch.roles import cluster_spec
from flowmesh.ray.actor import TaskActor

log = logging.getLogger("flowmesh.ray")
STRATEGIES = ("ps", "allreduce")


class JobFailedError(RuntimeError):
    """A task failed more than ``max_restarts`` times (its traceback in the message)."""


def run(train_fn: Any, num_ps: int = 0, num_workers: int = 1, resources_per_worker: dict | None = None,
        strategy: str = "ps", max_restarts: int = 0, resources_per_ps: dict | None = None,
        start_timeout: float = 120.0, placement_strategy: str = "PACK") -> Any:
    """Runs ``train_fn`` on a job of Ray actors; returns worker 0's return value.

    Args:
        train_fn: called with no arguments on every task; reads ``TF_CONFIG`` (``"ps"``)
            or calls ``hvd.init()`` (``"allreduce"``).
        num_ps, num_workers: tasks of each kind (``num_ps`` must be 0 for all-reduce).
        resources_per_worker, resources_per_ps: Ray resources of one task
            (default ``{"CPU": 1}``).
        strategy: ``"ps"`` or ``"allreduce"``.
        max_restarts: times each task may be restarted after a failure.
        start_timeout: seconds to wait for the placement group.
        placement_strategy: Ray's placement group strategy for the tasks' bundles:
            ``"PACK"`` (as few nodes as possible), ``"SPREAD"``, ``"STRICT_PACK"`` or
            ``"STRICT_SPREAD"`` (one task per node).

    Raises:
        ValueError: bad arguments. TimeoutError: the gang could not be placed.
        JobFailedError: a task failed past ``max_restarts``.
    """
    import ray

    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    if num_workers < 1 or num_ps < 0 or (strategy == "allreduce" and num_ps):
        raise ValueError("need num_workers >= 1 and num_ps >= 0 (num_ps = 0 for allreduce)")
    if not ray.is_initialized():
        ray.init()
    job = _Job(ray, train_fn, num_ps, num_workers, strategy, max_restarts,
               dict(resources_per_worker or {"CPU": 1}), dict(resources_per_ps or {"CPU": 1}))
    try:
        job.place(start_timeout, placement_strategy)
        return job.run()
    finally:
        job.close()


class _Job:
    def __init__(self, ray: Any, train_fn: Any, num_ps: int, num_workers: int, strategy: str,
                 max_restarts: int, worker_resources: dict, ps_resources: dict):
        self.ray, self.train_fn, self.strategy, self.max_restarts = ray, train_fn, strategy, max_restarts
        self.tasks = [("ps", i) for i in range(num_ps)] + [("worker", i) for i in range(num_workers)]
        self.resources = [ps_resources if job == "ps" else worker_resources for job, _ in self.tasks]
        self.actors: dict[tuple[str, int], Any] = {}
        self.addresses: dict[tuple[str, int], str] = {}
        self.restarts = dict.fromkeys(self.tasks, 0)
        self.cluster: dict[str, list[str]] | None = None
        self.store: Any = None
        self.pg: Any = None
        self.secret = secrets.token_hex(32)  # the job's own cluster secret

    def place(self, timeout: float, strategy: str) -> None:
        from ray.util.placement_group import placement_group

        self.pg = placement_group([_bundle(r) for r in self.resources], strategy=strategy)
        ready, _ = self.ray.wait([self.pg.ready()], timeout=timeout)
        if not ready:
            raise TimeoutError(f"Ray could not place all {len(self.tasks)} tasks ({self.resources}) "
                               f"within {timeout:.0f} s: the cluster lacks the resources for the whole gang")
        self.driver_host = self.ray.util.get_node_ip_address()
        nodes = self.ray.util.placement_group_table(self.pg)["bundles_to_node_id"]
        self.node_of = [nodes[i] for i in range(len(self.tasks))]
        # tasks talk over loopback only when the whole gang shares the driver's node
        self.one_node = len(set(self.node_of)) == 1 and self.node_of[0] == self.ray.get_runtime_context().get_node_id()
        if self.strategy == "allreduce":
            from flowmesh.collective.backends.torch_dist import connect_store
            from flowmesh.distributed.auth import ClusterAuth

            self.store = connect_store(self.driver_host, 0, True, None, 30.0,
                                       auth=ClusterAuth(self.secret.encode()))
        for task in self.tasks:
            self.actors[task] = self._actor(task)
        if self.strategy == "ps":
            self.addresses = dict(zip(self.tasks, self.ray.get([a.address.remote() for a in self.actors.values()])))
            counts = {job: sum(j == job for j, _ in self.tasks) for job in ("ps", "worker")}
            self.cluster = cluster_spec(counts, lambda job, i: self.addresses[(job, i)])
            log.info("flowmesh.ray cluster: %s", self.cluster)

    def run(self) -> Any:
        pending = {self._train(task): task for task in self.tasks}
        results: dict[tuple[str, int], Any] = {}
        workers = [t for t in self.tasks if t[0] == "worker"]
        while not all(w in results for w in workers):
            done, _ = self.ray.wait(list(pending), num_returns=1)
            task = pending.pop(done[0])
            try:
                results[task] = self.ray.get(done[0])
            except Exception as error:  # noqa: BLE001 - an actor or task failure: restart or fail
                pending[self._restart(task, error)] = task
        return results[("worker", 0)]

    def close(self) -> None:
        for actor in self.actors.values():
            self.ray.kill(actor, no_restart=True)  # ps tasks serve until killed
        if self.pg is not None:
            from ray.util.placement_group import remove_placement_group

            remove_placement_group(self.pg)
        if self.store is not None:
            self.store.close()
        self.store = None

    def _actor(self, task: tuple[str, int]) -> Any:
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        index = self.tasks.index(task)
        env = {"FLOWMESH_RESTART_COUNT": str(self.restarts[task]), "PYTHONUNBUFFERED": "1",
               "FLOWMESH_CLUSTER_SECRET": self.secret}
        if self.strategy == "allreduce":
            node = self.node_of[index]
            local = [i for i, n in enumerate(self.node_of) if n == node]
            env.update(FLOWMESH_RANK=str(task[1]), FLOWMESH_SIZE=str(len(self.tasks)),
                       FLOWMESH_LOCAL_RANK=str(local.index(index)), FLOWMESH_LOCAL_SIZE=str(len(local)),
                       FLOWMESH_RENDEZVOUS=f"{self.driver_host}:{self.store.port}")
        resources = dict(self.resources[index])
        remote = self.ray.remote(TaskActor).options(
            num_cpus=resources.pop("CPU", 0), num_gpus=resources.pop("GPU", 0), resources=resources or None,
            scheduling_strategy=PlacementGroupSchedulingStrategy(self.pg, placement_group_bundle_index=index),
            runtime_env={"env_vars": env})
        return remote.remote(task[0], task[1], self.one_node)

    def _train(self, task: tuple[str, int]) -> Any:
        return self.actors[task].train.remote(self.train_fn, self.cluster)

    def _restart(self, task: tuple[str, int], error: Exception) -> Any:
        name = f"{task[0]}:{task[1]}"
        if self.restarts[task] >= self.max_restarts:
            raise JobFailedError(f"flowmesh.ray task {name} failed after {self.restarts[task]} restart(s):\n"
                                 f"{error}") from error
        self.restarts[task] += 1
        log.warning("flowmesh.ray: %s failed (%s); restart %d of %d", name, type(error).__name__,
                    self.restarts[task], self.max_restarts)
        self.ray.kill(self.actors[task], no_restart=True)
        self.actors[task] = self._actor(task)
        return self._train(task)  # same TF_CONFIG: the task serves on its old port again


def _bundle(resources: dict) -> dict:
    return {k: float(v) for k, v in resources.items() if v}
