"""A task other hosts cannot reach: the error names the task, the address dialled and the
likely cause; MonitoredTrainingSession warns at each attempt and gives up in bounded time."""

from __future__ import annotations

import sys
import time

import pytest

pytestmark = [pytest.mark.multiprocess, pytest.mark.timeout(120)]

_CLIENT = """
import sys, time
import flowmesh as tf
cluster = tf.train.ClusterSpec({"ps": [sys.argv[1]], "worker": [sys.argv[2]]})
server = tf.train.Server(cluster, job_name="worker", task_index=0)
started = time.monotonic()
try:
    if sys.argv[3] == "session":
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0)
        with tf.Session(server.target) as sess:
            sess.run(v.initializer)
    else:
        with tf.device(tf.train.replica_device_setter(cluster=cluster)):
            step = tf.train.get_or_create_global_step()
            train = tf.assign_add(step, 1)
        with tf.train.MonitoredTrainingSession(master=server.target, is_chief=True) as sess:
            sess.run(train)
except tf.errors.UnavailableError as exc:
    print(f"UNAVAILABLE after {time.monotonic() - started:.1f} s: {exc.message}", flush=True)
"""

_PS = """
import sys, flowmesh as tf
cluster = tf.train.ClusterSpec({"ps": [sys.argv[1]], "worker": [sys.argv[2]]})
tf.train.Server(cluster, job_name="ps", task_index=0)
print("ps up", flush=True)
import time; time.sleep(600)
"""


def _client(bed, ps: str, mode: str, **env: str):
    worker = f"{bed.ip('h2')}:2222"
    return bed.spawn("h2", [sys.executable, "-c", _CLIENT, ps, worker, mode], env=env, label="client")


def test_a_task_listening_on_loopback_only_is_named_with_the_cause(host_bed):
    bed = host_bed(2)
    ps = f"{bed.ip('h1')}:2222"
    server = bed.spawn("h1", [sys.executable, "-c", _PS, ps, f"{bed.ip('h2')}:2222"],
                       env={"FLOWMESH_BIND_ADDRESS": "127.0.0.1"}, label="ps")
    server.wait_for_line("ps up", 60)
    assert "listens on 127.0.0.1 only, so other hosts cannot reach it" in server.output()
    client = _client(bed, ps, "session", FLOWMESH_CONNECT_TIMEOUT_S="3")
    line = client.wait_for_line("UNAVAILABLE", 60)
    assert "/job:ps/replica:0/task:0" in line and ps in line, line
    assert "connection refused" in line and "listens on loopback only" in line, line


def test_a_host_cut_off_times_out_and_monitored_sessions_warn_then_give_up(host_bed):
    bed = host_bed(2)
    ps = f"{bed.ip('h1')}:2222"
    bed.cut("h1")
    started = time.monotonic()
    client = _client(bed, ps, "monitored", FLOWMESH_CONNECT_TIMEOUT_S="2",
                     FLOWMESH_RECOVERY_TIMEOUT_S="8")
    line = client.wait_for_line("UNAVAILABLE", 90)
    assert client.wait(30) == 0
    assert time.monotonic() - started < 60
    # the cut host's address no longer resolves on the link (ARP): "no route to host"; a
    # host whose address was still cached would time out instead
    assert ps in line and ("does not answer" in line or "timed out" in line), line
    assert "firewall" in line, line
    warnings = [ln for ln in client.lines if "giving up after 8 s" in ln]
    assert len(warnings) >= 2, client.output()
