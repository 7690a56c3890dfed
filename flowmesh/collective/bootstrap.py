"""Where this process sits in the all-reduce world: rank, size, local rank, rendezvous.

Sources, first match wins:

1. ``flowmesh run`` (``FLOWMESH_RANK``, ``FLOWMESH_SIZE``, ``FLOWMESH_LOCAL_RANK``,
   ``FLOWMESH_LOCAL_SIZE``, ``FLOWMESH_RENDEZVOUS``): the launcher hosts the rendezvous
   store, so it survives the death of any rank.
2. ``TF_CONFIG`` (parsed by :mod:`flowmesh.distributed.tf_config`): the ranks are the
   ``chief`` task followed by the ``worker`` tasks; the store is hosted by rank 0 on the
   port of its own address (``FLOWMESH_RENDEZVOUS`` overrides the address).
3. Neither: a world of one process (no sockets at all).

In an elastic job (``flowmesh run --min-np/--max-np``, ``FLOWMESH_ELASTIC=1``) rank and
size are not fixed: they come from a rendezvous round closed by the launcher
(:mod:`flowmesh.collective.elastic.rendezvous`).
"""

from __future__ import annotations

from flowmesh import config as _config
from flowmesh.collective.world import WorldInfo, split_address

_TRAINING_JOBS = ("chief", "worker")


def resolve() -> WorldInfo:
    """Resolves this process's :class:`WorldInfo` from the environment.

    Raises:
        ValueError: inconsistent settings (e.g. ``FLOWMESH_RANK`` without
            ``FLOWMESH_SIZE``, a rank out of range, a malformed address).
    """
    if _config.ELASTIC.get():
        from flowmesh.collective.elastic.rendezvous import join_world  # only elastic jobs

        return join_world()
    rank, size = _config.RANK.get(), _config.SIZE.get()
    if rank >= 0 or size >= 0:
        return _from_launcher(rank, size)
    from_tf = _from_tf_config()
    if from_tf is not None:
        return from_tf
    return WorldInfo(0, 1, 0, 1)


def _from_launcher(rank: int, size: int) -> WorldInfo:
    if rank < 0 or size < 1 or rank >= size:
        raise ValueError(
            f"FLOWMESH_RANK={rank} and FLOWMESH_SIZE={size} are inconsistent: set both, with "
            "0 <= rank < size (flowmesh run sets them for you)")
    address = _config.RENDEZVOUS.get()
    if size > 1 and not address:
        raise ValueError("FLOWMESH_RENDEZVOUS (host:port of the rendezvous store) is required "
                         "when FLOWMESH_SIZE > 1; start the job with `flowmesh run -np N`")
    host, port = split_address(address, "FLOWMESH_RENDEZVOUS") if address else ("", 0)
    local_rank = _config.LOCAL_RANK.get()
    local_size = _config.LOCAL_SIZE.get()
    return WorldInfo(rank, size, rank if local_rank < 0 else local_rank,
                     size if local_size < 0 else local_size, host, port, False, "flowmesh run")


def _from_tf_config() -> WorldInfo | None:
    from flowmesh.distributed import tf_config

    cfg = tf_config.current()
    if cfg.cluster is None or cfg.task_type not in _TRAINING_JOBS:
        return None
    members = [(job, i, cfg.cluster.task_address(job, i))
               for job in _TRAINING_JOBS if job in cfg.cluster.jobs
               for i in range(cfg.cluster.num_tasks(job))]
    if len(members) <= 1:
        return None
    rank = next(r for r, (job, i, _) in enumerate(members)
                if job == cfg.task_type and i == (cfg.task_index or 0))
    my_host = split_address(members[rank][2], "TF_CONFIG address")[0]
    hosts = [split_address(addr, "TF_CONFIG address")[0] for _, _, addr in members]
    local = [r for r, h in enumerate(hosts) if h == my_host]
    override = _config.RENDEZVOUS.get()
    host, port = split_address(override or members[0][2],
                               "FLOWMESH_RENDEZVOUS" if override else "TF_CONFIG address")
    return WorldInfo(rank, len(members), local.index(rank), len(local), host, port,
                     host_store=rank == 0, source="TF_CONFIG")
