"""The in-process rendezvous: blocking Recv, abort, deadlines, duplicate sends."""

from __future__ import annotations

import threading
import time

import pytest

from flowmesh.errors import CancelledError, DeadlineExceededError, InvalidArgumentError, OpError
from flowmesh.kernels.contract.rendezvous import Rendezvous
from flowmesh.runtime.partition import EdgeKey

KEY = EdgeKey("x:0", "/job:localhost/replica:0/task:0/device:CPU:0",
              "/job:localhost/replica:0/task:0/device:CPU:1")


def _later(delay, fn, *args):
    thread = threading.Thread(target=lambda: (time.sleep(delay), fn(*args)), daemon=True)
    thread.start()
    return thread


def test_recv_waits_for_the_send():
    rendezvous = Rendezvous()
    thread = _later(0.05, rendezvous.send, KEY, 42)
    assert rendezvous.recv(KEY, timeout=5) == 42
    thread.join()
    assert str(KEY).startswith("/job:localhost") and ";x:0;" in str(KEY)


def test_send_before_recv_and_values_are_consumed_once():
    rendezvous = Rendezvous()
    rendezvous.send(KEY, "value")
    assert rendezvous.recv(KEY, timeout=1) == "value"
    with pytest.raises(DeadlineExceededError, match="Timed out waiting"):
        rendezvous.recv(KEY, timeout=0.05)


def test_duplicate_send_is_an_error():
    rendezvous = Rendezvous()
    rendezvous.send(KEY, 1)
    with pytest.raises(OpError, match="Duplicated send"):
        rendezvous.send(KEY, 2)


@pytest.mark.timeout(10)
def test_abort_wakes_a_waiting_recv_at_once():
    rendezvous = Rendezvous()
    aborted_at = []
    _later(0.05, lambda: (aborted_at.append(time.perf_counter()),
                          rendezvous.abort(InvalidArgumentError("kernel 'bad' failed"))))
    with pytest.raises(CancelledError, match="kernel 'bad' failed"):
        rendezvous.recv(KEY)  # no deadline: only the abort ends the wait
    assert time.perf_counter() - aborted_at[0] < 1.0  # woken by the abort, not by a poll
    assert isinstance(rendezvous.aborted, InvalidArgumentError)
    with pytest.raises(CancelledError):  # later receives fail immediately
        rendezvous.recv(EdgeKey("y:0", KEY.src_device, KEY.dst_device), timeout=5)


def test_control_keys_differ_from_tensor_keys():
    control = EdgeKey("x", KEY.src_device, KEY.dst_device, control=True)
    assert control != EdgeKey("x", KEY.src_device, KEY.dst_device) and ";^x;" in str(control)
