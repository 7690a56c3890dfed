"""Elastic training state kept in memory: ``commit()`` / ``restore()`` / ``sync()``.

A :class:`State` is what survives a lost rank. ``commit()`` snapshots it (a cheap local
copy, no disk) and, at this commit boundary, lets the ranks agree whether new ranks wait to
join; ``restore()`` rolls back to the last commit after a failure; ``sync()`` broadcasts
the committed state from rank 0 of the (re-formed) group, which is the lowest surviving
rank, so survivors and newcomers continue from identical values.

* :class:`ObjectState` tracks Python attributes given as keyword arguments
  (``ObjectState(step=0, epoch=0)``; ``state.step`` reads and writes them).
* :class:`~flowmesh.collective.elastic.tf_state.TensorFlowState` also tracks graph
  variables of a session.

Horovod's contract holds: attributes are committed, restored and synced together; code
between two commits is re-run after a failure, so it must derive everything it needs
(data position, learning rate) from the state.
"""

from __future__ import annotations

import abc
import copy
from collections.abc import Callable, Iterable
from typing import Any

import torch

from flowmesh.collective import context
from flowmesh.collective.elastic import codec, rendezvous
from flowmesh.collective.request import Request


class HostsUpdatedInterrupt(RuntimeError):  # noqa: N818 - Horovod's name
    """Raised by :meth:`State.commit` on every rank when new ranks wait to join; the
    :func:`~flowmesh.collective.elastic.runner.run` wrapper re-forms the group (the state
    was just committed, so nothing is rolled back) and syncs the newcomers.

    Attributes:
        skip_sync: the state need not be broadcast after the reset.
    """

    def __init__(self, skip_sync: bool = False):
        super().__init__("new ranks are waiting to join the elastic job")
        self.skip_sync = skip_sync


class State(abc.ABC):
    """Base class of elastic state: a snapshot API plus reset callbacks."""

    def __init__(self) -> None:
        self._reset_callbacks: list[Callable[[], None]] = []
        self.commits = 0

    def register_reset_callbacks(self, callbacks: Iterable[Callable[[], None]]) -> None:
        """Adds functions called after every reset (the group changed size): rescale the
        learning rate, rebuild per-rank input pipelines, ..."""
        self._reset_callbacks.extend(callbacks)

    def on_reset(self) -> None:
        """Runs the reset callbacks (the run wrapper calls this after each reset)."""
        for callback in self._reset_callbacks:
            callback()

    def commit(self) -> None:
        """Saves the state in memory, then checks for joining ranks.

        Raises:
            HostsUpdatedInterrupt: on every rank alike, when new ranks wait to join.
            OpError: the agreement collective failed (a rank was lost).
        """
        self.save()
        self.commits += 1
        self.check_host_updates()

    def check_host_updates(self) -> None:
        """Raises :class:`HostsUpdatedInterrupt` when ranks wait to join (all ranks agree:
        rank 0 asks the launcher and broadcasts the answer)."""
        if join_pending():
            raise HostsUpdatedInterrupt()

    @abc.abstractmethod
    def save(self) -> None:
        """Snapshots the current values in memory."""

    @abc.abstractmethod
    def restore(self) -> None:
        """Puts back the last snapshot."""

    @abc.abstractmethod
    def sync(self) -> None:
        """Makes every rank's snapshot and values rank 0's."""


class ObjectState(State):
    """Elastic state made of Python attributes.

    Args:
        **kwargs: the tracked attributes and their initial values (numbers, strings,
            lists, dicts, NumPy arrays: anything :mod:`~flowmesh.collective.elastic.codec`
            broadcasts).

    Example:
        >>> state = hvd.elastic.ObjectState(step=0, epoch=0)
        >>> state.step += 1; state.commit()
    """

    def __init__(self, **kwargs: Any):
        super().__init__()
        self._names = list(kwargs)
        for name, value in kwargs.items():
            setattr(self, name, value)
        self._saved: dict[str, Any] = {}
        ObjectState.save(self)

    def save(self) -> None:
        self._saved = copy.deepcopy({name: getattr(self, name) for name in self._names})

    def restore(self) -> None:
        for name, value in copy.deepcopy(self._saved).items():
            setattr(self, name, value)

    def sync(self) -> None:
        self._saved = codec.broadcast_object(self._saved, root=0, name="elastic_object_state")
        ObjectState.restore(self)

    def __repr__(self) -> str:
        values = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._names)
        return f"{type(self).__name__}({values})"


def join_pending() -> bool:
    """Whether new ranks wait to join; every rank gets rank 0's answer (one tiny broadcast
    per commit). Always False outside an elastic job."""
    if not rendezvous.is_elastic():
        return False
    engine = context.world_engine()
    flag = engine.rank == 0 and rendezvous.member().join_requested()
    if engine.size == 1:
        return flag
    request = Request("broadcast", "elastic/commit", "elastic_commit_check",
                      [torch.tensor([int(flag)], dtype=torch.int32)], root=0)
    (answer,) = engine.run(request)
    return bool(int(answer[0]))
