"""A session survives a transient loss of a peer: the same tf.Session steps again."""

from __future__ import annotations

import os
import signal
import time

import pytest

import flowmesh as tf
from flowmesh.errors import UnavailableError
from flowmesh.testing.cluster import cluster_dict, spawn_server

pytestmark = [pytest.mark.multiprocess]


@pytest.mark.timeout(120)
def test_ps_paused_past_the_heartbeat_deadline_then_resumed_steps_again(monkeypatch):
    monkeypatch.setenv("FLOWMESH_HEARTBEAT_S", "0.2")
    monkeypatch.setenv("FLOWMESH_RPC_DEADLINE_S", "1.0")
    cluster = cluster_dict({"ps": 1, "worker": 1})
    ps = spawn_server(cluster, "ps", 0)
    worker = None
    try:
        ps.wait_for_line("ready at", 60)
        worker = tf.train.Server(cluster, job_name="worker", task_index=0)
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0, name="v")
            inc = v.assign_add(1.0)
        with tf.device("/job:worker/task:0"):
            y = v * 2.0
        with tf.Session(worker.target) as sess:
            sess.run(v.initializer)
            assert sess.run(y) == 2.0
            ps.pause()
            start = time.monotonic()
            with pytest.raises(UnavailableError, match="no heartbeat from /job:ps/replica:0/task:0"):
                sess.run(y)
            assert time.monotonic() - start < 15
            os.kill(ps.pid, signal.SIGCONT)
            # the same session: the ps kept its variable (and its old copy of the graph)
            assert sess.run(y) == 2.0
            for _ in range(5):
                sess.run(inc)
            assert sess.run(y) == 12.0
    finally:
        os.kill(ps.pid, signal.SIGCONT)
        ps.kill()
        if worker is not None:
            worker.stop()


@pytest.mark.timeout(60)
def test_session_reset_closes_the_sessions_connected_to_the_target():
    cluster = tf.train.ClusterSpec(cluster_dict({"local": 2}))
    servers = [tf.train.Server(cluster, job_name="local", task_index=i) for i in range(2)]
    try:
        with tf.device("/job:local/task:1"):
            v = tf.Variable(3.0, name="counter")
        with tf.Session(servers[0].target) as before, tf.Session(servers[1].target) as other:
            before.run(v.initializer)
            assert other.run(v) == 3.0
            tf.Session.reset(servers[0].target)
            with pytest.raises(tf.errors.AbortedError, match="closed by tf.Session.reset"):
                before.run(v)  # TensorFlow closes the sessions of the reset master
            with pytest.raises(tf.errors.FailedPreconditionError, match="counter"):
                other.run(v)  # another master's session sees the cleared variable
        with tf.Session(servers[0].target) as after:
            after.run(v.initializer)
            assert after.run(v) == 3.0
    finally:
        for server in servers:
            server.stop()
