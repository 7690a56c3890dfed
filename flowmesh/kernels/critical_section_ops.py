"""Kernels of ``ops/critical_section_ops.py``: a mutex resource (``MutexV2``), taking it
(``MutexLock``, which waits) and giving it back (``ConsumeMutexLock``).

The mutex lives in the device's resource store under its shared name, so every step and
every session of the server shares it. ``MutexLock`` returns a :class:`MutexLockValue`;
the lock is released by ``ConsumeMutexLock`` or, if the step fails before that, when the
value is dropped (as TensorFlow's lock variant releases in its destructor). Waiting honours
the step's cancellation and ``RunOptions.timeout_in_ms``.
"""

from __future__ import annotations

import threading
from typing import Any

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.data_flow_ops import wait_until


class MutexState:
    """A mutex resource: held by at most one lock value at a time."""

    def __init__(self, name: str):
        self.name = name
        self.held = False
        self.cond = threading.Condition()

    def acquire(self, step: Any) -> MutexLockValue:
        with self.cond:
            wait_until(self.cond, lambda: not self.held, step, f"lock the mutex {self.name}")
            self.held = True
        return MutexLockValue(self)

    def release(self) -> None:
        with self.cond:
            self.held = False
            self.cond.notify()


class MutexLockValue:
    """The value of ``MutexLock``: owns the mutex until released (once)."""

    def __init__(self, mutex: MutexState):
        self._mutex: MutexState | None = mutex

    def release(self) -> None:
        mutex, self._mutex = self._mutex, None
        if mutex is not None:
            mutex.release()

    def __del__(self) -> None:
        self.release()


@kernel("MutexV2")
def _mutex(ctx: KernelContext):
    name = ctx.attr("shared_name") or ctx.op.name
    state = ctx.device.resources.lookup_or_create(ctx.attr("container", "") or "", name,
                                                  lambda: MutexState(name))
    return lambda: state


@kernel("MutexLock", needs_step=True)
def _lock(ctx: KernelContext):
    def run(step: Any, mutex: Any) -> MutexLockValue:
        if not isinstance(mutex, MutexState):
            raise InvalidArgumentError(f"MutexLock '{ctx.op.name}' needs a mutex handle (MutexV2), "
                                       f"got {type(mutex).__name__}")
        return mutex.acquire(step)

    return run


@kernel("ConsumeMutexLock")
def _consume(ctx: KernelContext):
    def run(lock: Any) -> None:
        if not isinstance(lock, MutexLockValue):
            raise InvalidArgumentError(f"ConsumeMutexLock '{ctx.op.name}' needs the output of "
                                       f"MutexLock, got {type(lock).__name__}")
        lock.release()

    return run
