"""Running user code in a child process of the Spark task that hosts it.

Every TensorFlow node (and every experiment trial) runs in a process forked from the
Spark Python worker, for three reasons:

* isolation: flowmesh's default graph, servers and torch threads never leak into a
  Python worker that Spark reuses for its next task;
* control: a parameter server blocked in ``server.join()`` is stopped when the workers
  are done, and a task that times out is killed, which a thread could not be;
* no orphans: the child watches its parent and exits when Spark kills the task.

The parent receives the child's return value, or its traceback, over a queue. After
reporting, the child stays until the parent ``stop``s it, so the servers it started keep
serving the rest of the cluster (a TensorFlow node finished early is still a task of its
cluster: the others' sessions reach every task).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import queue
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

_FORK = mp.get_context("fork")
_ORPHAN_POLL_S = 0.5
_ORPHAN_EXIT_CODE = 70


class ChildFailedError(RuntimeError):
    """The child raised (the message carries its traceback) or died."""


class ChildProcess:
    """``target()`` running in a forked child; ``wait`` returns its value or raises."""

    def __init__(self, target: Callable[[], Any], name: str):
        self.name = name
        self._status: Any = _FORK.Queue()
        self._release: Any = _FORK.Event()
        self._outcome: tuple[str, Any] | None = None
        parent = os.getpid()
        self._process = _FORK.Process(target=_child_main,
                                      args=(target, self._status, self._release, parent),
                                      name=name, daemon=False)
        self._process.start()

    @property
    def pid(self) -> int | None:
        return self._process.pid

    def alive(self) -> bool:
        """True while the child runs and has not reported its outcome yet."""
        return self._poll() is None and self._process.is_alive()

    def wait(self, timeout: float | None = None) -> Any:
        """Blocks until the child ends; returns its value.

        Raises:
            ChildFailedError: the child raised or died without reporting.
            TimeoutError: still running after ``timeout`` seconds (the child is killed).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._poll(0.2) is None:
            if not self._process.is_alive() and self._poll(0.5) is None:
                raise ChildFailedError(f"{self.name} died with exit code {self._process.exitcode} "
                                  "before reporting a result (killed, or out of memory?)")
            if deadline is not None and time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"{self.name} still running after {timeout:.0f} s; it was killed")
        kind, value = self._outcome  # type: ignore[misc]
        if kind == "error":
            raise ChildFailedError(f"{self.name} failed:\n{value}")
        return value

    def stop(self, grace_s: float = 3.0) -> None:
        """Ends the child: released when it has reported (it exits by itself), else
        SIGTERM; SIGKILL if it is still there after ``grace_s``. Returns once it is gone."""
        self._release.set()
        if self._poll() is None and self._process.is_alive():
            self._process.terminate()  # still running (a ps in server.join(), say)
        self._process.join(grace_s)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(5)

    def _poll(self, timeout: float = 0.0) -> tuple[str, Any] | None:
        if self._outcome is None:
            try:
                self._outcome = self._status.get(timeout=timeout) if timeout else self._status.get_nowait()
            except queue.Empty:
                pass
        return self._outcome


def _child_main(target: Callable[[], Any], status: Any, release: Any, parent: int) -> None:
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True,
                     name="flowmesh-orphan-watch").start()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    code = 0
    try:
        status.put(("ok", _picklable(target())))
    except BaseException:  # noqa: BLE001 - every failure goes back to the parent
        status.put(("error", traceback.format_exc()))
        code = 1
    status.close()
    status.join_thread()
    release.wait()
    sys.stdout.flush()
    sys.stderr.flush()
    # Not a normal return: multiprocessing would wait for every non-daemon thread that the
    # user code left behind (a server's, say) before the process could end.
    os._exit(code)


def _picklable(value: Any) -> Any:
    try:
        pickle.dumps(value)
    except Exception:  # noqa: BLE001 - any value that cannot travel is described instead
        return repr(value)
    return value


def _exit_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_ORPHAN_POLL_S)
    os._exit(_ORPHAN_EXIT_CODE)
