"""Fault injection for tests: kill, delay, fail and disconnect real tasks.

=====================================  ====================================================
utility                                fault
=====================================  ====================================================
``kill_process(pid)``                  SIGKILL (or another signal) a process, wait for it
``KillAtStepHook(step)``               a training process SIGKILLs itself (or a given pid)
                                       once the global step reaches ``step``
``sigkill_during_checkpoint_write()``  the process SIGKILLs itself while a checkpoint data
                                       file is half written (real crash, real files)
``InjectErrorHook(step)``              a step fails with ``UnavailableError`` (optionally
                                       after wiping the variables, like a restarted ps)
``DelayHook(seconds)``                 a straggler: sleeps before chosen steps
``TcpProxy(port)``                     a loopback proxy in front of a task that can drop
                                       every connection or add latency
=====================================  ====================================================

Everything acts only on processes and connections the caller names; nothing here kills
by name.

Example (in a training script started by a test)::

    from flowmesh.testing import faults
    faults.sigkill_during_checkpoint_write(nth_file=2, fraction=0.5)
    saver.save(sess, prefix, global_step=1)   # completes
    saver.save(sess, prefix, global_step=2)   # the process dies half-way through
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

from flowmesh.errors import UnavailableError
from flowmesh.train.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)


# --- processes -----------------------------------------------------------------------------------
def kill_process(process: int | subprocess.Popen, sig: int = signal.SIGKILL, timeout: float = 10.0) -> int | None:
    """Sends ``sig`` to one process (by pid or Popen) and waits up to ``timeout`` for it.

    Returns:
        The exit status when ``process`` is a Popen child that exited, else None.
    """
    pid = process.pid if isinstance(process, subprocess.Popen) else int(process)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
    if isinstance(process, subprocess.Popen):
        try:
            return process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.01)
    return None


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent to reap it counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def sigkill_during_checkpoint_write(nth_file: int = 1, fraction: float = 0.5,
                                    pid: int | None = None) -> Callable[[], None]:
    """SIGKILLs ``pid`` (default: this process) in the middle of a checkpoint data file.

    The kill happens after the first chunk that brings the file past ``fraction`` of its
    size (at the latest after its last chunk, still before the file is renamed into place),
    so the checkpoint being written is never committed.

    Args:
        nth_file: which checkpoint data file written from now on (1 = the next one).
        fraction: how much of that file to write before the kill (0 < fraction <= 1).
        pid: the process to kill; another process lets a test kill e.g. a server.

    Returns:
        A function disarming the fault.
    """
    from flowmesh.checkpoint.writer import add_write_observer

    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    seen: list[str] = []
    target = os.getpid() if pid is None else pid

    def observe(path: str, done: int, total: int) -> None:
        if path not in seen:
            seen.append(path)
        if len(seen) == nth_file and path == seen[-1] and done >= fraction * total:
            os.kill(target, signal.SIGKILL)
            if target == os.getpid():  # pragma: no cover - the kernel delivers it at once
                time.sleep(60)

    return add_write_observer(observe)


class _StepWatchingHook(SessionRunHook):
    """Tracks the global step after every run (hooks below act on it)."""

    def __init__(self) -> None:
        self._step_tensor: Any = None
        self.last_step: int | None = None

    def begin(self) -> None:
        from flowmesh.train.training_util import get_global_step

        step = get_global_step()
        if step is None:
            raise RuntimeError(f"Create a global step (tf.train.get_or_create_global_step()) to use "
                               f"{type(self).__name__}.")
        self._step_tensor = step.value()

    def after_create_session(self, session: Any, coord: Any) -> None:
        self.last_step = int(session.run(self._step_tensor))

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._step_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        self.last_step = int(run_values.results)


class KillAtStepHook(_StepWatchingHook):
    """Sends ``sig`` (SIGKILL) to ``pid`` (default: this process) once the global step
    reaches ``at_step``."""

    def __init__(self, at_step: int, sig: int = signal.SIGKILL, pid: int | None = None):
        super().__init__()
        self._at_step = at_step
        self._sig = sig
        self._pid = pid
        self.fired = False

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        super().after_run(run_context, run_values)
        if not self.fired and self.last_step is not None and self.last_step >= self._at_step:
            self.fired = True
            os.kill(self._pid if self._pid is not None else os.getpid(), self._sig)


def wipe_session_state(session: Any) -> None:
    """Drops every variable the session can see, as a restarted parameter server would.

    Local sessions lose their own variables; ``grpc://`` sessions reset the cluster's
    resource containers (``tf.Session.reset``).
    """
    target = getattr(session, "sess_str", "")
    if isinstance(target, str) and target.startswith("grpc://"):
        from flowmesh.runtime.session import Session

        Session.reset(target)
        return
    backend = getattr(session, "_backend", None)
    for device in getattr(backend, "devices", ()):
        device.resources.clear()


class InjectErrorHook(_StepWatchingHook):
    """Fails the run after the global step reached ``at_step`` with ``error_type``.

    The error comes from inside the monitored ``run`` call, exactly where a lost parameter
    server or peer surfaces, so ``MonitoredSession`` recovery handles it like a real one.

    Args:
        at_step: the first global step at which to fail.
        error_type: the ``OpError`` class to raise (``UnavailableError``, ``AbortedError``).
        times: how many runs fail (consecutively).
        lose_state: also wipe the variables first (a ps that restarted empty).
    """

    def __init__(self, at_step: int, error_type: type = UnavailableError, times: int = 1,
                 lose_state: bool = False):
        super().__init__()
        self._at_step = at_step
        self._error_type = error_type
        self._remaining = times
        self._lose_state = lose_state
        self.injected = 0

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        if self._remaining > 0 and self.last_step is not None and self.last_step >= self._at_step:
            self._remaining -= 1
            self.injected += 1
            if self._lose_state:
                wipe_session_state(run_context.session)
            raise self._error_type(
                None, None, f"Injected fault at global step {self.last_step}: task /job:ps/task:0 "
                "is unavailable (flowmesh.testing.faults.InjectErrorHook)")
        return super().before_run(run_context)


class DelayHook(SessionRunHook):
    """Sleeps ``seconds`` before every ``every_n``-th run (a straggler worker)."""

    def __init__(self, seconds: float, every_n: int = 1):
        self._seconds = seconds
        self._every_n = max(1, every_n)
        self._count = 0

    def before_run(self, run_context: SessionRunContext) -> None:
        self._count += 1
        if self._count % self._every_n == 0:
            time.sleep(self._seconds)
        return None


# --- connections ---------------------------------------------------------------------------------
class TcpProxy:
    """Forwards ``127.0.0.1:port`` to ``target_host:target_port`` and can break the link.

    Point a client at ``proxy.port`` instead of the task's port, then call
    :meth:`drop_connections` (every open connection is reset), :meth:`set_delay` (added
    latency per forwarded chunk) or :meth:`refuse` (new connections are closed at once).

    Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, target_port: int, target_host: str = "127.0.0.1", port: int = 0):
        self._target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", port))
        self.port = int(self._listener.getsockname()[1])
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._delay = 0.0
        self._refusing = False
        self._closed = False
        self.dropped = 0
        self._thread = threading.Thread(target=self._accept_loop, daemon=True, name="fault-proxy")
        self._thread.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def set_delay(self, seconds: float) -> None:
        self._delay = max(0.0, seconds)

    def refuse(self, refusing: bool = True) -> None:
        self._refusing = refusing

    def drop_connections(self) -> int:
        """Resets every open connection; returns how many were dropped."""
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for a, b in pairs:
            for s in (a, b):
                with contextlib.suppress(OSError):
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    s.close()
        self.dropped += len(pairs)
        return len(pairs)

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.close()
        self.drop_connections()
        self._thread.join(timeout=5)

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _accept_loop(self) -> None:
        while not self._closed:
            try:
                ready, _, _ = select.select([self._listener], [], [], 0.1)
                if not ready:
                    continue
                client, _ = self._listener.accept()
            except (OSError, ValueError):
                return
            if self._refusing:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self._target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._pairs.append((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        sockets = [a, b]
        try:
            while not self._closed:
                readable, _, _ = select.select(sockets, [], [], 0.2)
                for s in readable:
                    data = s.recv(1 << 16)
                    if not data:
                        return
                    if self._delay:
                        time.sleep(self._delay)
                    (b if s is a else a).sendall(data)
        except (OSError, ValueError):
            return
        finally:
            for s in sockets:
                with contextlib.suppress(OSError):
                    s.close()
            with self._lock:
                if (a, b) in self._pairs:
                    self._pairs.remove((a, b))
