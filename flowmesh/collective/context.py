"""Process-wide collective state: the world group and in-process (local) groups.

Collective ops name their group by ``group_key``. Key 0 (:data:`WORLD_GROUP_KEY`) is the
world of all processes, set up by :func:`init` (``hvd.init()``) on torch.distributed, or
a world of one when the process was not launched for all-reduce. Other keys are
registered with :func:`register_local_group`: ``size`` members that live in this
process (replicas on several local devices), each with its own engine.
"""

from __future__ import annotations

import atexit
import threading
from dataclasses import dataclass, field

from flowmesh import config as _config
from flowmesh.collective.backends import create_communicator
from flowmesh.collective.backends.base import CommunicationError
from flowmesh.collective.backends.local import LocalHub
from flowmesh.collective.bootstrap import resolve
from flowmesh.collective.engine import CollectiveEngine
from flowmesh.collective.world import WorldInfo
from flowmesh.errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    OpError,
    UnavailableError,
)

WORLD_GROUP_KEY = 0


@dataclass
class _LocalGroup:
    hub: LocalHub
    engines: dict[int, CollectiveEngine] = field(default_factory=dict)


@dataclass
class _State:
    lock: threading.RLock = field(default_factory=threading.RLock)
    info: WorldInfo | None = None
    world: CollectiveEngine | None = None
    local_groups: dict[int, _LocalGroup] = field(default_factory=dict)
    generation: int = 0


_state = _State()


def init(info: WorldInfo | None = None) -> WorldInfo:
    """Joins the all-reduce world (idempotent): ``hvd.init()``.

    Args:
        info: explicit membership; default: resolved from ``flowmesh run``'s environment,
            then ``TF_CONFIG``, else a world of one process.

    Returns:
        This process's :class:`WorldInfo`.

    Raises:
        UnavailableError: the rendezvous store or the other ranks could not be reached
            within ``FLOWMESH_CONNECT_TIMEOUT_S`` / ``FLOWMESH_COLLECTIVE_TIMEOUT_S``.
        ValueError: inconsistent environment settings.
    """
    with _state.lock:
        if _state.world is not None:
            return _state.info  # type: ignore[return-value]
        info = info or resolve()
        _state.generation += 1
        if info.size == 1:
            comm = create_communicator("local", LocalHub(1), 0)
        else:
            try:
                comm = create_communicator(
                    "torch", info.host, info.port, info.rank, info.size, info.local_rank,
                    info.local_size, host_store=info.host_store,
                    prefix=info.prefix or f"flowmesh/{_state.generation}",
                    backend=_config.COLLECTIVE_BACKEND.get())
            except CommunicationError as exc:
                raise UnavailableError(None, None, f"flowmesh.collective.init() failed on rank "
                                       f"{info.rank} of {info.size} ({info.source}): {exc}") from None
        _state.info = info
        _state.world = CollectiveEngine(comm, "world")
        _config.debug(1, f"collective world: rank {info.rank}/{info.size} "
                         f"(local {info.local_rank}/{info.local_size}) from {info.source}")
        return info


def is_initialized() -> bool:
    return _state.world is not None


def shutdown() -> None:
    """Leaves the world and drops every local group (``hvd.shutdown()``)."""
    with _state.lock:
        world, _state.world, _state.info = _state.world, None, None
        groups, _state.local_groups = _state.local_groups, {}
    if world is not None:
        world.close()
        world.comm.close()
    for group in groups.values():
        for engine in group.engines.values():
            engine.close()


atexit.register(shutdown)


def world_failure() -> OpError | None:
    """The error that broke the world engine (a lost or stalled rank), or None."""
    world = _state.world
    return None if world is None else world.failure


def leave_world() -> None:
    """Leaves the world group but keeps the local groups (an elastic job re-forming its
    group calls this, then :func:`init` with the new round's membership).

    Closing the communicator destroys its groups, so ranks still blocked on this one fail
    at once instead of waiting for their timeout.
    """
    with _state.lock:
        world, _state.world, _state.info = _state.world, None, None
    if world is not None:
        world.close()
        world.comm.close()


def world_info() -> WorldInfo:
    """The world membership, initializing on first use."""
    if _state.info is None:
        init()
    return _state.info  # type: ignore[return-value]


def world_engine() -> CollectiveEngine:
    if _state.world is None:
        init()
    return _state.world  # type: ignore[return-value]


def register_local_group(group_key: int, size: int) -> None:
    """Declares ``group_key`` as ``size`` members living in this process (idempotent).

    Raises:
        InvalidArgumentError: the key is the world's, or already registered with
            another size.
    """
    if group_key == WORLD_GROUP_KEY:
        raise InvalidArgumentError(None, None, f"group_key {WORLD_GROUP_KEY} is the world "
                                   "group; choose another key for a local group")
    with _state.lock:
        group = _state.local_groups.get(group_key)
        if group is None:
            _state.local_groups[group_key] = _LocalGroup(LocalHub(size))
        elif group.hub.size != size:
            raise InvalidArgumentError(
                None, None, f"group_key {group_key} is already a local group of size "
                f"{group.hub.size}, not {size}; use a new key")


def engine_for(group_key: int, group_size: int, member: int = -1) -> CollectiveEngine:
    """The engine that runs a collective of ``group_key`` for ``member``.

    Args:
        group_key: 0 for the world, or a key from :func:`register_local_group`.
        group_size: the size the op expects (checked; -1 accepts the group's size).
        member: the member index inside a local group (ignored for the world).

    Raises:
        FailedPreconditionError: unknown group, wrong size or member.
    """
    group = _state.local_groups.get(group_key)
    if group is None:
        if group_key != WORLD_GROUP_KEY:
            raise FailedPreconditionError(
                None, None, f"Collective group_key {group_key} is not set up in this process: "
                f"use group_key={WORLD_GROUP_KEY} (all processes) or create the group with "
                "flowmesh.collective.context.register_local_group")
        engine = world_engine()
        if group_size not in (-1, engine.size):
            raise FailedPreconditionError(
                None, None, f"Collective expects group_size={group_size} but the world has "
                f"{engine.size} rank(s); launch with `flowmesh run -np {group_size}` or build "
                f"the op with group_size={engine.size} (flowmesh.collective.size())")
        return engine
    if group_size not in (-1, group.hub.size) or not 0 <= member < group.hub.size:
        raise FailedPreconditionError(
            None, None, f"Local collective group {group_key} has {group.hub.size} members; the "
            f"op asks for group_size={group_size}, member={member}")
    with _state.lock:
        engine = group.engines.get(member)
        if engine is None:
            comm = create_communicator("local", group.hub, member)
            engine = group.engines[member] = CollectiveEngine(comm, f"group{group_key}")
        return engine
