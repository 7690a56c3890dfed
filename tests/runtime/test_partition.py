"""Partitioning: Send/Recv on cut edges, control edges, feeds/fetches, concurrency."""

from __future__ import annotations

import time

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.runtime.device import DeviceSet, local_devices
from flowmesh.runtime.partition import OpItem, RecvItem, SendItem, cut_edges, partition
from flowmesh.runtime.placer import place
from flowmesh.runtime.plan import prune

TWO_CPUS = tf.ConfigProto(device_count={"CPU": 2, "GPU": 0})


def _partitions(fetches, feeds=(), device_count=None):
    devices = DeviceSet(local_devices(device_count=device_count or {"CPU": 3, "GPU": 0}))
    tensors = [f for f in fetches if isinstance(f, tf.Tensor)]
    targets = [f for f in fetches if isinstance(f, tf.Operation)]
    ops = prune(tensors, targets, list(feeds))
    placement = place(ops, devices, default_job="localhost", default_task=0)
    parts = partition(ops, placement, list(feeds), tensors)
    return {p.device.name.split("device:")[1]: p for p in parts.values()}, ops


def _describe(p):
    out = []
    for item in p.items:
        if isinstance(item, OpItem):
            out.append(item.op.name)
        elif isinstance(item, SendItem):
            out.append(f"send {item.key.tensor_name}->{item.key.dst_device[-1]}"
                       + (" ^" if item.key.control else ""))
        else:
            out.append(f"recv {item.key.tensor_name}" + (" ^" if item.key.control else ""))
    return out


def test_one_transfer_per_tensor_per_destination():
    with tf.device("/cpu:0"):
        x = tf.constant([1.0, 2.0], name="x")
    with tf.device("/cpu:1"):
        a = tf.square(x, name="a")
        b = tf.negative(x, name="b")
        c = tf.add(a, x, name="c")
    with tf.device("/cpu:2"):
        d = tf.add_n([x, b, c], name="d")
    parts, _ = _partitions([d])
    assert _describe(parts["CPU:0"]) == ["x", "send x:0->1", "send x:0->2"]
    assert _describe(parts["CPU:1"]) == [
        "recv x:0", "a", "b", "send b:0->2", "c", "send c:0->2"]
    assert _describe(parts["CPU:2"]) == ["recv x:0", "recv b:0", "recv c:0", "d"]
    assert len(cut_edges({p.device: p for p in parts.values()})) == 4
    assert parts["CPU:2"].fetches == [d]


def test_control_edges_cross_devices_once():
    with tf.device("/cpu:0"):
        first = tf.constant(1.0, name="first")
        gate = tf.identity(first, name="gate")
    with tf.device("/cpu:1"), tf.control_dependencies([gate]):
        after = tf.constant(2.0, name="after")
        also = tf.constant(3.0, name="also")
    with tf.device("/cpu:1"):
        total = tf.add(after, also, name="total")
    parts, _ = _partitions([total])
    assert _describe(parts["CPU:0"]) == ["first", "gate", "send gate->1 ^"]
    assert _describe(parts["CPU:1"]) == ["recv gate ^", "after", "also", "total"]
    recv = parts["CPU:1"].items[0]
    assert isinstance(recv, RecvItem) and recv.key.control


def test_feeds_go_straight_to_each_consumer():
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:0"):
        a = tf.square(x, name="a")
    with tf.device("/cpu:1"):
        b = tf.negative(x, name="b")
    parts, ops = _partitions([a, b], feeds=[x])
    assert [op.name for op in ops] == ["a", "b"]
    assert parts["CPU:0"].feeds == [x] and parts["CPU:1"].feeds == [x]
    assert not any(isinstance(i, (SendItem, RecvItem)) for p in parts.values() for i in p.items)
    with tf.Session(config=TWO_CPUS) as sess:
        out = sess.run([a, b, x], {x: [2.0, 3.0]})
    np.testing.assert_allclose(out[0], [4, 9])
    np.testing.assert_allclose(out[1], [-2, -3])
    np.testing.assert_allclose(out[2], [2, 3])


def test_ping_pong_needs_concurrent_partitions():
    """Each partition waits for the other several times: this only finishes when the
    partitions run at the same time (run one after the other it would never end)."""
    value = tf.constant(1.0, name="v0")
    for i in range(6):
        with tf.device(f"/cpu:{i % 2}"):
            value = tf.add(value, float(i), name=f"hop{i}")
    options = tf.RunOptions(timeout_in_ms=10_000)
    with tf.Session(config=TWO_CPUS) as sess:
        assert sess.run(value, options=options) == 1.0 + sum(range(6))


def _slow_chain(n: int, name: str):
    m = tf.constant(np.eye(192, dtype=np.float32) * 0.5, name=f"{name}_m")
    x = tf.constant(np.ones((192, 192), np.float32), name=f"{name}_x")
    for i in range(n):
        x = tf.matmul(x, m, name=f"{name}_{i}")
    return x


def _traced(sess, fetches):
    metadata = tf.RunMetadata()
    sess.run(fetches, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=metadata)
    return {ns.node_name: (ns.all_start_micros, ns.all_start_micros + ns.all_end_rel_micros)
            for dev in metadata.step_stats.dev_stats for ns in dev.node_stats}


def test_cross_device_control_edge_orders_execution():
    with tf.device("/cpu:0"):
        slow = _slow_chain(25, "slow")
    with tf.device("/cpu:1"), tf.control_dependencies([slow.op]):
        quick = tf.constant(1.0, name="quick")
    with tf.Session(config=TWO_CPUS) as sess:
        times = _traced(sess, [quick, slow])
    assert times["quick"][0] >= times[slow.op.name][1]


def test_partitions_run_at_the_same_time():
    with tf.device("/cpu:0"):
        left = tf.reduce_sum(_slow_chain(60, "left"))
    with tf.device("/cpu:1"):
        right = tf.reduce_sum(_slow_chain(60, "right"))
    with tf.Session(config=TWO_CPUS) as sess:
        sess.run([left, right])  # build the plan
        times = _traced(sess, [left, right])
    spans = []
    for prefix in ("left_", "right_"):
        mine = [t for name, t in times.items() if name.startswith(prefix)]
        spans.append((min(s for s, _ in mine), max(e for _, e in mine)))
    assert max(s for s, _ in spans) < min(e for _, e in spans), spans  # the spans overlap


@pytest.mark.timeout(30)
@pytest.mark.parametrize("failing_first", [True, False], ids=["failing-in-caller", "failing-in-pool"])
def test_a_failing_partition_cancels_the_step_promptly(failing_first):
    x = tf.placeholder(tf.float32, [None], name="x")

    def failing():
        with tf.device("/cpu:1"):
            bad = tf.reshape(x, [-1, 7], name="bad")
            return tf.reduce_sum(bad, name="late")

    def waiting(late):
        with tf.device("/cpu:0"):
            return tf.add(late, 1.0, name="out")

    if failing_first:
        out = waiting(failing())
    else:
        with tf.device("/cpu:0"):
            start = tf.constant(0.0, name="start")  # makes CPU:0 the first partition
        out = waiting(failing()) + start
    with tf.Session(config=TWO_CPUS) as sess:
        sess.run(out, {x: np.ones(14)})  # plan built, both partitions work
        began = time.perf_counter()
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(out, {x: np.ones(10)})  # no timeout: only the abort can end the wait
        elapsed = time.perf_counter() - began
        assert elapsed < 10.0, f"step took {elapsed:.2f}s to fail"  # a missed abort hangs (30 s timeout)
        assert "bad" in str(info.value) and info.value.node_def == "bad"
        assert sess.run(out, {x: np.ones(7)}) == 8.0  # the session still works
