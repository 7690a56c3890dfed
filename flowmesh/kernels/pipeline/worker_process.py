"""An iterator's outermost ``prefetch`` runs its input stages in a forked worker process.

TensorFlow runs ``tf.data`` in native threads, beside the training step. flowmesh's stages
are Python, and a prefetch *thread* takes the interpreter lock from the step it should
hide behind (the digits MLP fed from TFRecords ran at 0.68x of the same model fed from
memory). So, as PyTorch's ``DataLoader`` workers do, the stages below the iterator's
outermost ``prefetch`` run in a child process forked when the iterator starts; the
iterator receives finished elements over a socket pair (``element_wire.py``: the tensors
are views of the received bytes).

* **Same elements, same order.** The child is a copy of the process at the moment the
  iterator starts: the same stage definitions, captured values and seeds, run by the same
  code in a fresh :class:`PipelineContext`, as a thread would run them. Only eligible
  pipelines get here (``data/worker_eligibility.py``: no generators, no stateful ops in
  functions, no nested datasets), so nothing the child does is visible to the parent.
* **Bounded run-ahead.** The child holds ``buffer_size`` credits; it spends one per element
  sent and the iterator returns one (a byte) per element taken: at most ``buffer_size``
  elements wait in the socket, as in a thread's buffer.
* **The end and errors.** The end of the data is a message (``OutOfRangeError`` follows);
  a stage's error is sent as its class, node and message (non-``OpError`` exceptions as
  ``InvalidArgumentError`` with their traceback, as on threads) and raised by that
  ``GetNext``. A child that dies is an ``InternalError`` naming its pid and exit status.
* **No leaked process.** Cancelling the pipeline (re-initialisation, an error, the session
  closing, garbage collection, interpreter exit) shuts the socket, asks the child to stop
  (``SIGTERM``: it unwinds its stages, so an unfinished ``cache`` file is removed) and
  reaps it, killing it if it has not exited within a few seconds. A child whose parent dies
  sees the socket's end at its next send or credit read and exits. The child ignores
  ``SIGINT`` (Ctrl-C stops the parent, which stops the child) and runs torch on one thread.
* **Its own CPU share.** The child starts a session of its own (``setsid``). Linux's
  autogroup scheduling shares the CPUs between sessions, so a worker in the training
  process's session would take its CPU time out of the training step's share: on a busy
  shared machine the input would then slow the step down instead of hiding behind it.

**Opt-in.** ``options.experimental_worker_process = True`` on a dataset, or
``FLOWMESH_DATA_WORKER_PROCESS=1`` for every eligible pipeline, turns it on; by default
every stage runs on threads. It was on by default until a forked child died of a
segmentation fault inside NumPy once in a full test-suite run (a process that had loaded
gRPC, Ray, h5py and run thousands of sessions), not reproduced since: forking a process
with that many native libraries and threads is not safe enough to be the default.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import sys
import threading
import time
import traceback
import warnings
import weakref
from collections.abc import Iterator
from typing import Any

from flowmesh import config, errors
from flowmesh.kernels.pipeline import element_wire as wire
from flowmesh.kernels.pipeline.base import DatasetDef, Element
from flowmesh.kernels.pipeline.context import (
    PipelineCancelled,
    PipelineContext,
    default_parallelism,
)

STOP_GRACE_S = 3.0  # a child that has not exited this long after SIGTERM is killed
MAX_SLACK = 64  # most elements waiting in the socket's buffer beyond buffer_size
SOCKET_BUFFER = 4 << 20  # asked of the socket (the kernel may grant less)
POLL_MIN_CREDITS = 8  # with at least this many credits the child polls for returned ones ...
POLL_FIRST_S, POLL_LAST_S = 0.0002, 0.001  # ... first after 0.2 ms, then every 1 ms, ...
POLL_IDLE_S, POLL_IDLE_LAST_S = 0.2, 0.02  # ... every 20 ms once nothing came for 0.2 s
_LOCK = threading.Lock()
_PARENT_ENDS: dict[int, socket.socket] = {}  # parent ends of live workers, closed in new children
_in_worker = False


def wanted(eligible: bool, setting: bool | None) -> bool:
    """Whether an eligible outermost ``prefetch`` runs its input in a worker process
    (``setting``: ``options.experimental_worker_process``)."""
    if not eligible or setting is False or _in_worker or not hasattr(os, "fork"):
        return False
    if setting:
        return True
    return bool(config.DATA_WORKER_PROCESS.get()) and default_parallelism() >= 2


class WorkerProcess:
    """The parent's side: forks the child running ``source`` and receives its elements.

    Args:
        ctx: the iterator's pipeline context (cancelling it stops the child).
        source: the stages below the ``prefetch``.
        capacity: how many elements the child may produce ahead of the consumer.
        what: a name for errors (``prefetch:<op name>``).
    """

    def __init__(self, ctx: PipelineContext, source: DatasetDef, capacity: int, what: str):
        self.ctx = ctx
        self.what = what
        self._io = threading.RLock()
        self._closed = False
        self._header = bytearray(wire.HEADER.size)
        self._taken, self._group = 0, 1  # elements taken since credits were last returned
        # whether an element is too big to wait in the socket's buffer (known at the first)
        self.large_elements: bool | None = None
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        for end in (parent, child):  # room for elements to wait in (capped by net.core.wmem_max)
            try:
                end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER)
            except OSError:
                pass
        with _LOCK:
            self.pid = _fork(child, parent, source, ctx, max(1, capacity))
            _PARENT_ENDS[parent.fileno()] = parent
        child.close()
        self._sock = parent
        self._finalizer = weakref.finalize(self, _shutdown, parent, self.pid)
        ctx.on_cancel(self.close)

    def get(self) -> Element | None:
        """The next element, or ``None`` at the end; raises the stage's error.

        Raises:
            PipelineCancelled: the pipeline was cancelled.
            OpError: a stage failed, or the child died.
        """
        with self._io:
            if self._closed:
                raise PipelineCancelled()
            kind, layout_size, body_size = self._read_header()
            data = self._receive(layout_size + body_size)
            if kind == wire.CREDITS:  # the child's credit count: return them in groups of half
                self._group = max(1, wire.decode_payload(data) // 2)
                kind, layout_size, body_size = self._read_header()
                data = self._receive(layout_size + body_size)
            if kind == wire.ELEMENT:
                if self.large_elements is None:
                    self.large_elements = wire.HEADER.size + len(data) > _socket_buffer(self._sock) // 2
                element = wire.decode(memoryview(data)[:layout_size], data, layout_size)
                self._taken += 1
                if self._taken >= self._group:
                    self._return_credits()
                return element
        self.close()
        if kind == wire.END:
            return None
        raise _error_from(wire.decode_payload(data))

    def _return_credits(self) -> None:
        try:
            self._sock.send(bytes(self._taken))
        except OSError:
            pass  # the child is gone: the next read says why
        self._taken = 0

    def _read_header(self) -> tuple[bytes, int, int]:
        self._fill(memoryview(self._header))
        return wire.HEADER.unpack(self._header)

    def _receive(self, size: int) -> Any:
        data = wire.new_body(size)  # not zero-filled: the socket overwrites every byte
        self._fill(memoryview(data))
        return data

    def _fill(self, view: memoryview) -> None:
        got, size = 0, len(view)
        while got < size:
            try:
                n = self._sock.recv_into(view[got:], size - got, socket.MSG_WAITALL)
            except OSError:  # reset by a child that died with credits unread
                n = 0
            if n == 0:
                self._lost()
            got += n

    def _lost(self) -> None:
        if self._closed or self.ctx.cancelled.is_set():
            raise PipelineCancelled()
        status = _reap(self.pid, 1.0)
        self.close()
        raise errors.InternalError(
            f"the input pipeline's worker process (pid {self.pid}, {self.what} of iterator "
            f"'{self.ctx.name}') exited unexpectedly ({_describe(status)}); set "
            "options.experimental_worker_process = False (or FLOWMESH_DATA_WORKER_PROCESS=0) "
            "to run the pipeline on threads")

    def close(self) -> None:
        """Stops and reaps the child (idempotent; safe from any thread)."""
        with _LOCK:
            if self._closed:
                return
            self._closed = True
            _PARENT_ENDS.pop(self._sock.fileno(), None)
        self._finalizer.detach()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes a get() blocked on the socket
        except OSError:
            pass
        _stop(self.pid)
        with self._io:
            self._sock.close()

    def elements(self) -> Iterator[Element]:
        """The elements until the end (see :meth:`get`)."""
        while True:
            element = self.get()
            if element is None:
                return
            yield element


# --- the parent's helpers ---------------------------------------------------------------------
def _shutdown(sock: socket.socket, pid: int) -> None:
    """Finalizer of a worker nobody closed."""
    with _LOCK:
        _PARENT_ENDS.pop(sock.fileno(), None)
    try:
        sock.close()
    finally:
        _stop(pid)


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    if _reap(pid, STOP_GRACE_S) is None:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _reap(pid, None)


def _reap(pid: int, timeout: float | None) -> int | None:
    """The child's wait status once it has exited (``None``: still running after
    ``timeout`` seconds; -1: already reaped elsewhere)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        try:
            done, status = os.waitpid(pid, 0 if timeout is None else os.WNOHANG)
        except ChildProcessError:
            return -1
        if done:
            return status
        left = deadline - time.monotonic()  # type: ignore[operator]
        if left <= 0:
            return None
        _wait_exit(pid, min(left, 0.05))


def _wait_exit(pid: int, timeout: float) -> None:
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        time.sleep(min(timeout, 0.005))
        return
    try:
        select.select([fd], [], [], timeout)
    finally:
        os.close(fd)


def _describe(status: int | None) -> str:
    if status is None or status < 0:
        return "status unknown"
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        hint = " (out of memory?)" if signum == signal.SIGKILL else ""
        return f"killed by signal {signum}{hint}"
    return f"exit code {os.WEXITSTATUS(status)}"


def _error_from(payload: Any) -> errors.OpError:
    name, node, message = payload
    cls = getattr(errors, name, None)
    if not (isinstance(cls, type) and issubclass(cls, errors.OpError)):
        cls = errors.InternalError
    return cls(node, None, message)


# --- the child ----------------------------------------------------------------------------------
def _fork(child: socket.socket, parent: socket.socket, source: DatasetDef,
          ctx: PipelineContext, capacity: int) -> int:
    for stream in (sys.stdout, sys.stderr):  # the child must not repeat buffered output
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12: fork of a threaded process
        pid = os.fork()
    if pid == 0:
        _child_main(child, parent, source, ctx, capacity)
    return pid


def _child_main(sock: socket.socket, parent_end: socket.socket, source: DatasetDef,
                ctx: PipelineContext, capacity: int) -> None:
    """Runs in the child: serves elements, then leaves with ``os._exit`` (never returns;
    no parent ``atexit`` handler or finalizer runs here)."""
    global _in_worker
    code = 1
    try:
        _in_worker = True
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, _exit_on_term)
        os.setsid()  # a scheduling group of its own (see the module docstring)
        sys.unraisablehook = _quiet  # a stage closed while SIGTERM unwinds: nothing to report
        for other in list(_PARENT_ENDS.values()):
            other.close()
        parent_end.close()
        import torch

        torch.set_num_threads(1)
        _serve(sock, source, PipelineContext(ctx.deterministic, ctx.name), capacity)
        code = 0
    except BaseException:  # noqa: BLE001 - the parent sees the socket close and reports it
        pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001, S110 - nothing left to report to
                pass
        os._exit(code)


def _quiet(unraisable: Any) -> None:
    """The child's unraisable-exception hook: errors reach the iterator as messages."""


def _exit_on_term(signum: int, frame: Any) -> None:
    raise SystemExit(0)  # unwinds the stages (their finally blocks run)


def _serve(sock: socket.socket, source: DatasetDef, ctx: PipelineContext, credits: int) -> None:
    """Sends elements while it holds credits; like a prefetch thread, it prepares the next
    element before it waits for a credit to send it. Once the first element's size is known,
    the elements that fit in the socket's own buffer are added to the credits (they wait in
    the kernel, as bytes) and the total is sent to the iterator, which then returns credits
    in groups of half of it (one wake-up of the child per group, not per element). The end
    and errors need no credit."""
    elements = source.iterate(ctx)
    sized, total = False, credits
    while True:
        try:
            message = wire.encode(next(elements))
        except StopIteration:
            sock.sendall(wire.encode_control(wire.END))
            return
        except Exception as exc:  # noqa: BLE001 - sent to the iterator, raised by its GetNext
            sock.sendall(wire.encode_control(wire.FAILURE, _error_fields(exc, ctx.name)))
            return
        if not sized:  # the first element: the child holds every credit
            sized = True
            size = sum(memoryview(part).nbytes for part in message)
            credits += min(MAX_SLACK, _socket_buffer(sock) // size)
            total = credits
            sock.sendall(wire.encode_control(wire.CREDITS, credits))
        if credits == 0:
            credits = _wait_for_credits(sock, poll=sized and total >= POLL_MIN_CREDITS)
            if not credits:
                return  # the iterator was closed
        _send_parts(sock, message)
        credits -= 1


def _send_parts(sock: socket.socket, parts: list[Any]) -> None:
    """Sends every buffer of ``parts`` in order (``sendmsg`` gathers them: no joined copy)."""
    views = [memoryview(part).cast("B") for part in parts]
    while views:
        sent = sock.sendmsg(views[:512])
        while views and sent >= len(views[0]):
            sent -= len(views[0])
            views.pop(0)
        if sent:
            views[0] = views[0][sent:]


def _wait_for_credits(sock: socket.socket, poll: bool) -> int:
    """Credits returned by the iterator (0: it closed the socket).

    With many credits the child polls on a timer instead of sleeping in ``recv``: a socket's
    wake-up is a *synchronous* one, which the scheduler serves on the waker's core, so the
    worker's burst of work would preempt the training step that returned the credits
    instead of running on the idle core. The iterator holds plenty of elements meanwhile.
    """
    delay, started = POLL_FIRST_S, time.monotonic()
    while poll:
        try:
            returned = sock.recv(4096, socket.MSG_DONTWAIT)
        except BlockingIOError:
            time.sleep(delay)
            idle = time.monotonic() - started > POLL_IDLE_S  # a consumer that paused
            delay = min(2 * delay, POLL_IDLE_LAST_S if idle else POLL_LAST_S)
            continue
        return len(returned)
    return len(sock.recv(4096))


def _socket_buffer(sock: socket.socket) -> int:
    try:
        return sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    except OSError:
        return 0


def _error_fields(exc: Exception, name: str) -> tuple[str, str | None, str]:
    if isinstance(exc, errors.OpError):
        node = exc.node_def if isinstance(exc.node_def, str) else None
        return type(exc).__name__, node, exc.message
    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])
    return ("InvalidArgumentError", None,
            f"{type(exc).__name__}: {exc} (in the input pipeline of iterator '{name}', worker "
            f"process {os.getpid()})\n{trace}")
