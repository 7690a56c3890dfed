"""The communicator interface: one member of a group running collectives together.

A communicator moves tensors; it knows nothing about graphs, names or fusion (that is the
engine's job, :mod:`flowmesh.collective.engine`). Every method works in place on
contiguous tensors and is blocking, except :meth:`Communicator.start_allreduce_each`,
and is called from one thread at a time (a cycle's thread; a stream's channel from the
threads that submit and wait for its key, one after the other). All members must call
the same data methods in the same order with tensors of the same size: the engine
guarantees this by negotiating every collective first through
:meth:`Communicator.allgather_bytes`, which is the only call that tolerates differences,
or, for a stream, by agreeing on the sizes beforehand (``collective/streams.py``).
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


class ReduceOp(enum.StrEnum):
    """Element-wise reductions a communicator implements (``MEAN`` is SUM then divide)."""

    SUM = "sum"
    MEAN = "mean"
    MAX = "max"
    MIN = "min"
    PRODUCT = "product"

    @classmethod
    def parse(cls, value: str | ReduceOp) -> ReduceOp:
        """Accepts ``ReduceOp``, ``"sum"``, ``"Sum"``, TensorFlow's ``"Add"``/``"Mul"``.

        Raises:
            ValueError: for an unknown name, listing the valid ones.
        """
        if isinstance(value, ReduceOp):
            return value
        text = str(value).lower()
        aliases = {"add": "sum", "mul": "product", "prod": "product", "average": "mean",
                   "avg": "mean"}
        text = aliases.get(text, text)
        try:
            return cls(text)
        except ValueError:
            raise ValueError(
                f"Unknown reduction {value!r}; expected one of "
                f"{', '.join(op.value for op in cls)} (or 'Add', 'Mul')"
            ) from None


class CommunicationError(RuntimeError):
    """A collective failed below the engine: a peer died, a timeout, a broken group.

    Attributes:
        timed_out: the failure was a timeout (a peer did not take part in time), not a
            closed connection.
        missing: the members known not to have joined the call, when the backend knows.
    """

    def __init__(self, message: str, timed_out: bool = False, missing: list[int] | None = None):
        super().__init__(message)
        self.timed_out = timed_out
        self.missing = missing


@dataclass(frozen=True)
class PeerState:
    """What a member knows about another one, for stalled-rank reports.

    Attributes:
        alive: the peer's process is running (None: unknown).
        busy: the peer is inside a collective call right now (None: unknown).
        detail: a short human description.
    """

    alive: bool | None
    busy: bool | None
    detail: str


class Communicator(abc.ABC):
    """One member (``rank`` of ``size``) of a communication group.

    Implementations (one per file, chosen by name in :mod:`flowmesh.collective.backends`):

    ==========  ===========================================  ===============================
    name        transport                                    supports
    ==========  ===========================================  ===============================
    ``torch``   torch.distributed gloo (CPU tensors) and     processes on any hosts; every
                NCCL (CUDA tensors) process groups           dtype; liveness via heartbeats
    ``local``   threads of one process sharing a hub         single-process tests, in-process
                                                             replicas; no caller-run cycles
                                                             (``caller_may_block``), no
                                                             channels
    ==========  ===========================================  ===============================
    """

    name = "base"
    # Capabilities (what the engine may do with this backend):
    caller_may_block = True
    """A thread that submitted a collective may itself run the engine's cycle and block in
    :meth:`allgather_bytes` for the other members. False when members may be threads that
    one thread serves in turn (in-process replicas), which must never block for each other."""

    def __init__(self, rank: int, size: int, local_rank: int | None = None,
                 local_size: int | None = None):
        if size < 1 or not 0 <= rank < size:
            raise ValueError(f"Invalid communicator member: rank {rank} of size {size}; need "
                             "0 <= rank < size")
        self._rank = rank
        self._size = size
        self._local_rank = rank if local_rank is None else local_rank
        self._local_size = size if local_size is None else local_size

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def size(self) -> int:
        return self._size

    @property
    def local_rank(self) -> int:
        return self._local_rank

    @property
    def local_size(self) -> int:
        return self._local_size

    # --- control plane -----------------------------------------------------------------------
    @abc.abstractmethod
    def allgather_bytes(self, payload: bytes, capacity: int = 1024) -> list[bytes]:
        """Every member's ``payload`` (lengths may differ), indexed by rank.

        Args:
            payload: this member's bytes.
            capacity: bytes per member that fit in one round (every member passes the
                same value); longer payloads cost a second round.

        Raises:
            CommunicationError: a member died or did not take part within the timeout.
        """

    # --- data plane (in place, same sizes on every member) ----------------------------------
    @abc.abstractmethod
    def allreduce(self, tensor: torch.Tensor, op: ReduceOp) -> None:
        """Replaces ``tensor`` by the element-wise reduction over members (not MEAN)."""

    def allreduce_each(self, tensors: Sequence[torch.Tensor], op: ReduceOp,
                       sources: Sequence[torch.Tensor | None] | None = None) -> None:
        """All-reduces every tensor, each as its own collective (every member passes the
        same sizes in the same order). Backends that can run them concurrently do; the
        default runs them one after another.

        ``sources[i]``, when given, is what ``tensors[i]`` receives the reduction of (out
        of place: the source is left as it is, and ``tensors[i]``'s contents do not
        matter). Backends that can reduce out of place skip the copy; the default copies.
        """
        for tensor, source in zip(tensors, sources or [None] * len(tensors)):
            if source is not None:
                tensor.copy_(source.reshape(tensor.shape))
            self.allreduce(tensor, op)

    def start_allreduce_each(self, tensors: Sequence[torch.Tensor], op: ReduceOp,
                             sources: Sequence[torch.Tensor | None] | None = None,
                             ) -> Callable[[], None]:
        """Starts :meth:`allreduce_each` and returns the function that waits for it (may
        raise :class:`CommunicationError`); the tensors must not be touched until then.
        Backends with asynchronous collectives return at once; the default runs them now."""
        self.allreduce_each(tensors, op, sources)
        return lambda: None

    def channel(self, key: str) -> Communicator | None:
        """A communicator of the same members on connections of its own, whose collectives
        are ordered only among themselves: a collective that every member runs in the same
        sequence (one key of a training loop) can then run there without negotiation,
        started by whichever thread submits it. Every member must ask for the same keys in
        the same order (it is a rendezvous). None when the backend has no such channels."""
        return None

    @abc.abstractmethod
    def allgather(self, output: torch.Tensor, tensor: torch.Tensor) -> None:
        """Fills the flat ``output`` (``size * tensor.numel()``) with every member's tensor."""

    @abc.abstractmethod
    def broadcast(self, tensor: torch.Tensor, root: int) -> None:
        """Replaces ``tensor`` by member ``root``'s tensor."""

    def reduce_scatter(self, output: torch.Tensor, tensor: torch.Tensor, op: ReduceOp) -> None:
        """Reduces the flat ``tensor`` (``size * output.numel()``) and keeps chunk ``rank``.

        The default all-reduces a copy and slices it; backends with a native
        reduce-scatter override this.
        """
        work = tensor.clone()
        self.allreduce(work, op)
        n = output.numel()
        output.copy_(work.reshape(-1)[self.rank * n:(self.rank + 1) * n].reshape(output.shape))

    # --- diagnostics -------------------------------------------------------------------------
    def peer_status(self) -> dict[int, PeerState]:
        """What is known about every other member, for stalled-rank reports."""
        return {}

    def describe(self) -> str:
        return f"{self.name} communicator rank {self.rank}/{self.size}"

    def close(self) -> None:
        """Releases the group; later calls may fail."""
        self._closed = True
