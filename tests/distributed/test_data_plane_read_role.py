"""Who reads a connection: a caller blocked on a reply reads it itself; the connection's
reader thread takes whatever arrives while nobody waits (real sockets, one process)."""

from __future__ import annotations

import random
import threading
import time

import pytest
import torch

from flowmesh.distributed import connection
from flowmesh.distributed.data_plane import DataPlane, wait
from flowmesh.errors import DeadlineExceededError, UnavailableError


class SlowEcho:
    """Echoes each request after a delay of ``args["ms"]`` milliseconds, from a timer
    thread, so that replies to concurrent calls come back out of order; a request with
    ``args["gated"]`` is answered once ``release`` is released for it."""

    def __init__(self) -> None:
        self.tensors: list = []
        self.got = threading.Event()
        self.release = threading.Semaphore(0)
        self.plane = DataPlane("/job:echo/replica:0/task:0", on_request=self._request,
                               on_tensor=self._tensor)

    def _request(self, conn, call_id, method, args, tensors):
        if method == "never":
            return  # a request that is never answered
        if args.get("gated"):
            threading.Thread(target=lambda: (self.release.acquire(timeout=10), conn.reply(call_id, args, tensors))).start()
            return
        delay = args.get("ms", 0) / 1000
        threading.Timer(delay, conn.reply, (call_id, args, tensors)).start()

    def _tensor(self, step, key, value):
        self.tensors.append(value)
        self.got.set()


@pytest.fixture
def planes():
    server = SlowEcho()
    client = DataPlane("client:test", listen=False)
    yield server, client
    client.close()
    server.plane.close()


def _release_once_waiting(server: SlowEcho, conn: connection.Connection) -> None:
    """Lets the server answer one gated call once a thread waits on ``conn``."""
    def release() -> None:
        deadline = time.monotonic() + 10
        while not conn._callers and time.monotonic() < deadline:
            time.sleep(0.001)
        server.release.release()

    threading.Thread(target=release, daemon=True).start()


def test_the_waiting_thread_reads_its_own_reply(planes):
    server, client = planes
    conn = client.connection(server.plane.address)
    # Until a caller first waits on a connection, its reader thread blocks in recv (the
    # first reply is handed over); from then on callers read their own replies. Both
    # replies come only once this thread waits for them (a first reply read before any
    # caller waited would leave the reader blocked in recv for one more frame).
    _release_once_waiting(server, conn)
    wait(conn.call("echo", {"gated": True}), 10, "first echo")
    future = conn.call("echo", {"gated": True})
    resolved_in = []
    future.add_done_callback(lambda f: resolved_in.append(threading.current_thread()))
    _release_once_waiting(server, conn)
    result, _ = wait(future, 10, "echo")
    assert result == {"gated": True}
    # The reply was read (and the future resolved) by this thread, not handed over by the
    # connection's reader thread: one wake-up per reply instead of two.
    assert resolved_in == [threading.current_thread()]


def test_replies_reach_the_right_callers_when_many_threads_share_a_connection(planes):
    server, client = planes
    errors: list[BaseException] = []

    def caller(index: int) -> None:
        rng = random.Random(index)
        try:
            for i in range(30):
                value = torch.full((3,), float(index * 1000 + i))
                result, values = client.call(server.plane.address, "echo",
                                             {"ms": rng.choice([0, 0, 1, 5]), "who": [index, i]}, [value],
                                             timeout=20)
                assert result["who"] == [index, i]
                assert torch.equal(values[0], value)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=caller, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "a caller hung"
    assert errors == []


def test_a_timed_out_wait_gives_the_connection_back(planes):
    server, client = planes
    with pytest.raises(DeadlineExceededError, match="never"):
        client.call(server.plane.address, "never", None, timeout=0.3)
    # The same connection still serves calls, and a late reply to an abandoned call is dropped.
    late = client.connection(server.plane.address).call("echo", {"ms": 300})
    result, _ = client.call(server.plane.address, "echo", {"ms": 0}, timeout=10)
    assert result == {"ms": 0}
    assert wait(late, 10, "late echo")[0] == {"ms": 300}


def test_frames_that_arrive_while_nobody_waits_are_read_by_the_reader_thread(planes):
    server, client = planes
    conn = client.connection(server.plane.address)
    future = conn.call("echo", {"ms": 0})  # nobody waits on it: the reader thread reads the reply
    deadline = time.monotonic() + 10
    while not future.done() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert future.result(0)[0] == {"ms": 0}


def test_the_reader_thread_resumes_after_callers_leave(planes):
    server, client = planes
    client.call(server.plane.address, "echo", {"ms": 0}, timeout=10)  # parks the reader thread
    time.sleep(connection._LINGER_S * 3)
    future = client.connection(server.plane.address).call("echo", {"ms": 0})
    deadline = time.monotonic() + 10
    while not future.done() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert future.done()


def test_a_connection_lost_while_the_caller_reads_fails_the_call(planes):
    server, client = planes
    conn = client.connection(server.plane.address)
    wait(conn.call("echo", {"ms": 0}), 10, "first echo")  # from now on callers read
    future = conn.call("never", None)
    threading.Timer(0.2, server.plane.close).start()
    with pytest.raises(UnavailableError, match="lost"):
        wait(future, 10, "never")
    assert conn.closed
