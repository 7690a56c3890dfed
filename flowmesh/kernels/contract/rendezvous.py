"""In-process rendezvous: where a Send leaves a tensor and the matching Recv picks it up.

Keys are ``(step_id, edge_key)`` where the edge key names the source device, the
destination device and the tensor. A Recv waits until the value arrives, the step is
aborted (another partition failed), or its deadline passes.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from flowmesh.errors import CancelledError, DeadlineExceededError, OpError


class Rendezvous:
    """A thread-safe mailbox for one step (or many steps, keyed by step id)."""

    def __init__(self) -> None:
        self._values: dict[Any, Any] = {}
        self._cond = threading.Condition()
        self._error: BaseException | None = None

    def send(self, key: Any, value: Any) -> None:
        with self._cond:
            if key in self._values:
                raise OpError(None, None, f"Duplicated send of tensor {key!r}")
            self._values[key] = value
            self._cond.notify_all()

    def recv(self, key: Any, timeout: float | None = None) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while key not in self._values:
                if self._error is not None:
                    raise CancelledError(
                        None, None, f"Step aborted while waiting for {key!r}: {self._error}"
                    )
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise DeadlineExceededError(None, None, f"Timed out waiting for tensor {key!r}")
                self._cond.wait(0.5 if remaining is None else min(remaining, 0.5))
            return self._values.pop(key)

    def abort(self, error: BaseException) -> None:
        """Wakes every waiting Recv with ``error``; later Recvs fail immediately."""
        with self._cond:
            if self._error is None:
                self._error = error
            self._cond.notify_all()

    @property
    def aborted(self) -> BaseException | None:
        return self._error
