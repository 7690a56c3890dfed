"""``@hvd.elastic.run``: keep training when ranks are lost or added.

The wrapped function gets the :class:`~flowmesh.collective.elastic.state.State` and runs
the training loop. Around it, on every rank:

1. ``state.sync()``: everyone starts from rank 0's committed state (newcomers receive it);
2. the function runs; when a collective fails because a rank died (the world engine
   reports lost or stalled ranks), ``state.restore()`` rolls back to the last commit;
   when ``state.commit()`` learns that new ranks wait, nothing is rolled back;
3. the group is re-formed: the old communicator is closed (ranks still blocked on it fail
   at once), the member joins the launcher's next rendezvous round, and a new
   torch.distributed group is created with the new rank and size
   (``hvd.rank()``/``hvd.size()`` change); ``state.on_reset()`` runs the reset
   callbacks; then back to 1.

Errors that are not collective failures (a bug, a shape mismatch) propagate unchanged;
so does a failed rendezvous (fewer than ``--min-np`` ranks left, or a deadline), which
ends the job with a clear message instead of a hang.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

from flowmesh.collective import context
from flowmesh.collective.elastic import rendezvous
from flowmesh.collective.elastic.state import HostsUpdatedInterrupt, State
from flowmesh.errors import OpError

T = TypeVar("T")


class ResetLog:
    """What the resets of this process did (for tests, benchmarks and logs).

    Attributes:
        events: one dict per reset: ``reason``, ``old`` and ``new`` ``(rank, size)``,
            ``round``, ``seconds`` (failure caught -> new group formed), and the wall
            clock (``time.time()``) at both ends, ``began`` and ``formed``.
    """

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []


reset_log = ResetLog()


def run(func: Callable[..., T]) -> Callable[..., T]:
    """Decorator: ``func(state, *args, **kwargs)`` survives lost and added ranks.

    Example:
        >>> @hvd.elastic.run
        ... def train(state):
        ...     while state.step < steps:
        ...         ...
        ...         state.commit()
        >>> train(hvd.elastic.TensorFlowState(session=sess, step=0))
    """

    @functools.wraps(func)
    def wrapper(state: State, *args: Any, **kwargs: Any) -> T:
        return run_elastic(func, state, *args, **kwargs)

    return wrapper


def run_elastic(func: Callable[..., T], state: State, *args: Any, **kwargs: Any) -> T:
    """Runs ``func(state, *args, **kwargs)`` with elastic recovery; see the module docs.

    Raises:
        OpError: from ``func`` when it is not a collective failure, from a collective
            failure outside an elastic job, or from a rendezvous that cannot complete.
    """
    context.world_engine()  # hvd.init(): joins the first round in an elastic job
    skip_sync = False
    while True:
        try:
            if not skip_sync:
                state.sync()
            return func(state, *args, **kwargs)
        except HostsUpdatedInterrupt as exc:
            skip_sync, reason = exc.skip_sync, "new ranks are waiting to join"
        except OpError as exc:
            if context.world_failure() is None or not rendezvous.is_elastic():
                raise
            state.restore()
            skip_sync, reason = False, f"{type(exc).__name__}: {exc.message}"
        reset(reason)
        state.on_reset()


def reset(reason: str) -> None:
    """Re-forms the world group through the launcher's rendezvous (a new round).

    Raises:
        OpError: the rendezvous failed (job below ``--min-np``, deadline, store lost).
    """
    start, began = time.monotonic(), time.time()
    member = rendezvous.member()
    old = context.world_info()
    _log(f"member {member.id} (rank {old.rank} of {old.size}): re-forming the group: "
         f"{_first_line(reason)}")
    context.leave_world()
    info = member.join()
    context.init(info)
    seconds = time.monotonic() - start
    result = member.result
    lost = f"; lost {', '.join(result.lost)}" if result is not None and result.lost else ""
    _log(f"member {member.id}: round {member.round}: rank {info.rank} of {info.size} "
         f"(was {old.rank} of {old.size}) after {seconds:.2f}s{lost}")
    reset_log.events.append({"reason": reason, "old": (old.rank, old.size),
                             "new": (info.rank, info.size), "round": member.round,
                             "seconds": seconds, "began": began, "formed": time.time()})


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else text
    return line[:400]


def _log(message: str) -> None:
    print(f"[flowmesh elastic] {message}", file=sys.stderr, flush=True)
