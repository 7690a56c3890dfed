"""One ``flowmesh run`` job over several hosts, as torchrun does it: the same command on
each host, told how many nodes there are, which one this is and where to meet.

    hostA$ flowmesh run --nnodes 2 --node-rank 0 --rdzv-endpoint hostA:29400 --nproc-per-node 2 train.py
    hostB$ flowmesh run --nnodes 2 --node-rank 1 --rdzv-endpoint hostA:29400 --nproc-per-node 2 train.py

Node 0's launcher hosts the job's rendezvous store at the endpoint (listening on every
interface unless the endpoint is a loopback address); the other launchers and every rank
dial it there, so the endpoint's host must be node 0's address as the other hosts see it.
Node ``r`` runs ranks ``r*K ... r*K+K-1`` (K ranks per node, local ranks ``0 ... K-1``).
Launchers may start in any order: they wait up to ``--rdzv-timeout`` seconds for node 0.

A launcher whose rank fails writes that into the store; the other launchers stop their
ranks at once and exit non-zero too, so no node keeps training alone. Node 0 keeps the
store up until every node's ranks have ended (at most ``--rdzv-timeout`` after its own).

Every launcher of a job must share the job's secret: put the same secret file on each host
and set ``FLOWMESH_CLUSTER_SECRET_FILE`` (or ``FLOWMESH_CLUSTER_SECRET``) there. Without
one the job runs unauthenticated, as torchrun does, and says so once.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from flowmesh.collective.world import split_address
from flowmesh.distributed.auth import ClusterAuth

log = logging.getLogger("flowmesh.cli")

_FAILED_KEY = "launch/failed"
_DONE_KEY = "launch/done/{node}"


@dataclass(frozen=True)
class NodePlan:
    """Where this launcher's ranks sit in a multi-node job.

    Attributes:
        nnodes, node_rank: the job's nodes and this one's index.
        endpoint: the rendezvous store's ``host:port``.
        per_node: ranks on this node.
        first_rank: the global rank of this node's local rank 0.
        size: ranks in the whole job.
        timeout_s: how long to wait for node 0 (and node 0 for the others to finish).
        host_store: node 0 hosts the store (False: a ``-H`` launcher hosts it).

    Raises:
        ValueError: inconsistent numbers, or an endpoint that is not ``host:port``.
    """

    nnodes: int
    node_rank: int
    endpoint: str
    per_node: int
    first_rank: int
    size: int
    timeout_s: float = 300.0
    host_store: bool = True

    def __post_init__(self) -> None:
        if self.nnodes < 1 or not 0 <= self.node_rank < self.nnodes:
            raise ValueError(f"--node-rank must lie in [0, --nnodes {self.nnodes}), got {self.node_rank}")
        if self.per_node < 1:
            raise ValueError(f"each node needs at least one rank, got {self.per_node}")
        if not 0 <= self.first_rank <= self.size - self.per_node:
            raise ValueError(f"ranks {self.first_rank}.. of this node do not fit a job of {self.size}")
        split_address(self.endpoint, "--rdzv-endpoint")

    @property
    def hosts_store(self) -> bool:
        """Whether this launcher hosts the rendezvous store."""
        return self.host_store and self.node_rank == 0


def plan_from_args(nnodes: int, node_rank: int, endpoint: str | None, np: int | None,
                   nproc_per_node: int | None, timeout_s: float, first_rank: int | None = None,
                   ) -> NodePlan:
    """The plan ``flowmesh run``'s flags describe (``-np`` is the whole job's rank count,
    as with horovodrun; ``--nproc-per-node`` this node's, as with torchrun). Every node
    has the same number of ranks, unless ``first_rank`` (a ``-H`` launcher's) says where
    this node's start; the store is then the launcher's.

    Raises:
        ValueError: a missing endpoint or numbers that do not fit.
    """
    if not endpoint:
        raise ValueError("--nnodes > 1 needs --rdzv-endpoint HOST:PORT (node 0's address and a "
                         "free port, the same on every node)")
    if first_rank is not None:
        if np is None or nproc_per_node is None:
            raise ValueError("--first-rank needs -np and --nproc-per-node")
        return NodePlan(nnodes, node_rank, endpoint, nproc_per_node, first_rank, np, timeout_s,
                        host_store=False)
    if nproc_per_node is None:
        if np is None or np % nnodes:
            raise ValueError(f"give --nproc-per-node, or an -np that --nnodes {nnodes} divides "
                             f"(got -np {np})")
        nproc_per_node = np // nnodes
    elif np is not None and np != nproc_per_node * nnodes:
        raise ValueError(f"-np {np} disagrees with --nnodes {nnodes} x --nproc-per-node "
                         f"{nproc_per_node}; give one of them")
    return NodePlan(nnodes, node_rank, endpoint, nproc_per_node, node_rank * nproc_per_node,
                    nnodes * nproc_per_node, timeout_s)


class NodeLink:
    """This launcher's link to the other nodes of its job, through the rendezvous store
    (hosted here on node 0).

    Raises:
        CommunicationError: the store could not be hosted, or reached within the plan's
            timeout.
    """

    def __init__(self, plan: NodePlan, auth: ClusterAuth):
        from flowmesh.collective.backends.torch_dist import connect_store

        self.plan = plan
        host, port = split_address(plan.endpoint, "--rdzv-endpoint")
        if not auth.enabled:
            log.warning("flowmesh run: node %d joins %s without a cluster secret: anyone who can "
                        "reach that port can join the job. Put the same secret file on every host "
                        "and set FLOWMESH_CLUSTER_SECRET_FILE", plan.node_rank, plan.endpoint)
        self.store: Any = connect_store(host, port, plan.hosts_store, None, plan.timeout_s, auth=auth)

    def report_failure(self, message: str) -> None:
        """Tells every node that this one's ranks failed (the first report is kept)."""
        try:
            self.store.compare_set(_FAILED_KEY, "", f"node {self.plan.node_rank}: {message}")
        except Exception:  # noqa: BLE001 - node 0 (the store) may be the one that is gone
            pass

    def failure(self) -> str | None:
        """Another node's failure report, if any (also when node 0's store is gone)."""
        try:
            if self.store.check([_FAILED_KEY]):
                return self.store.get(_FAILED_KEY).decode()
        except Exception as exc:  # noqa: BLE001 - the store went away with node 0
            return f"lost the rendezvous store at {self.plan.endpoint} ({exc})"
        return None

    def finish(self) -> None:
        """Marks this node done; node 0 then waits (bounded) for the others before its
        store, which their ranks may still use, goes away."""
        try:
            self.store.set(_DONE_KEY.format(node=self.plan.node_rank), "1")
            if not self.plan.hosts_store:
                return
            keys = [_DONE_KEY.format(node=n) for n in range(self.plan.nnodes)]
            deadline = time.monotonic() + self.plan.timeout_s
            while not self.store.check(keys) and not self.store.check([_FAILED_KEY]):
                if time.monotonic() > deadline:
                    log.warning("flowmesh run: not every node finished within %g s; closing the "
                                "rendezvous store", self.plan.timeout_s)
                    return
                time.sleep(0.1)
        except Exception:  # noqa: BLE001 - finishing is best effort
            pass

    def close(self) -> None:
        self.store.close()
