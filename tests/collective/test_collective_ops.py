"""Graph collective ops and their gradients, with in-process members (one thread and one
graph per member, like one process per rank)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.collective import context
from flowmesh.errors import FailedPreconditionError
from flowmesh.ops import collective_ops as C

_keys = itertools.count(100)


def run_members(size: int, build: Callable[[int, int], Any], options: Any = None,
                metadata: list | None = None) -> list[Any]:
    """Builds ``build(member, group_key)`` in a fresh graph per member thread and runs it."""
    group_key = next(_keys)
    context.register_local_group(group_key, size)
    results: list[Any] = [None] * size

    def body(member: int) -> None:
        try:
            with tf.Graph().as_default():
                fetches = build(member, group_key)
                run_metadata = tf.RunMetadata()
                with tf.Session() as sess:
                    results[member] = sess.run(fetches, options=options, run_metadata=run_metadata)
                if metadata is not None:
                    metadata.append(run_metadata)
        except Exception as exc:  # noqa: BLE001 - returned to the test
            results[member] = exc

    threads = [threading.Thread(target=body, args=(m,)) for m in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    for r in results:
        if isinstance(r, Exception):
            raise r
    return results


def test_forward_values_of_every_collective():
    def build(m: int, key: int) -> dict[str, Any]:
        x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3) + m)
        return {
            "sum": C.all_reduce(x, group_key=key, member=m),
            "mean": C.all_reduce(x, group_key=key, member=m, merge_op="Add", final_op="Div"),
            "max": C.all_reduce(x, group_key=key, member=m, merge_op="Max"),
            "gather": C.all_gather(tf.fill([m + 1, 2], float(m)), group_key=key, member=m),
            "bcast": C.broadcast(tf.constant([m, m], tf.int64), root=2, group_key=key, member=m),
            "scatter": C.reduce_scatter(tf.range(7.0), group_key=key, member=m),
            "rank": C.group_rank(group_key=key, member=m),
            "size": C.group_size(group_key=key, member=m),
        }

    out = run_members(3, build)
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    for m, res in enumerate(out):
        np.testing.assert_allclose(res["sum"], 3 * base + 3)
        np.testing.assert_allclose(res["mean"], base + 1)
        np.testing.assert_allclose(res["max"], base + 2)
        assert res["gather"].tolist() == [[0, 0], [1, 1], [1, 1], [2, 2], [2, 2], [2, 2]]
        assert res["bcast"].tolist() == [2, 2]
        assert res["scatter"].tolist() == [[0.0, 3.0, 6.0], [9.0, 12.0], [15.0, 18.0]][m]
        assert (res["rank"], res["size"]) == (m, 3)


def test_static_shapes():
    x = tf.placeholder(tf.float32, [None, 3])
    assert C.all_reduce(x).shape.as_list() == [None, 3]
    assert C.all_gather(tf.zeros([4, 3])).shape.as_list() == [None, 3]
    assert C.reduce_scatter(tf.zeros([4, 3])).shape.as_list() == [None, 3]
    assert C.group_rank().dtype == tf.int32
    with pytest.raises(ValueError, match="rank >= 1"):
        C.all_gather(tf.constant(1.0))
    with pytest.raises(ValueError, match="Unknown merge_op"):
        C.all_reduce(x, merge_op="Median")
    with pytest.raises(TypeError):
        C.all_reduce(tf.constant(["a"]))


def test_gradients_of_collectives():
    """Total loss = sum over members of each member's loss; each member's gradient is the
    derivative of that total with respect to its own input."""
    def build(m: int, key: int) -> list[Any]:
        x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3) + m)
        y = C.all_reduce(x, group_key=key, member=m)
        mx = C.all_reduce(x, group_key=key, member=m, merge_op="Max")
        b = C.broadcast(x, root=1, group_key=key, member=m)
        loss = tf.reduce_sum(y * y) + tf.reduce_sum(mx) + tf.reduce_sum(b * float(m + 1))
        rows = tf.ones([m + 1, 2]) * float(m + 1)
        gathered = C.all_gather(rows, group_key=key, member=m)
        scattered_in = tf.range(6.0) * float(m + 1)
        scattered = C.reduce_scatter(scattered_in, group_key=key, member=m)
        return [tf.gradients(loss, x)[0], tf.gradients(tf.reduce_sum(gathered * gathered), rows)[0],
                tf.gradients(tf.reduce_sum(scattered * float(m + 1)), scattered_in)[0]]

    out = run_members(3, build)
    y = 3 * np.arange(6, dtype=np.float32).reshape(2, 3) + 3
    extra = {0: 0.0, 1: 1.0 + 2.0 + 3.0, 2: 3.0}  # broadcast root 1 gets sum_k (k+1); max is on 2
    for m, (gx, grows, gscatter) in enumerate(out):
        np.testing.assert_allclose(gx, 6 * y + extra[m])
        np.testing.assert_allclose(grows, np.full((m + 1, 2), 6.0 * (m + 1)))
        np.testing.assert_allclose(gscatter, [1.0, 1.0, 2.0, 2.0, 3.0, 3.0])


def test_mean_gradient_is_a_mean_and_finite_differences_agree():
    def build(m: int, key: int) -> list[Any]:
        x = tf.constant(np.array([1.0, 2.0], np.float64) * (m + 1))
        y = C.all_reduce(x, group_key=key, member=m, merge_op="Add", final_op="Div")
        loss = tf.reduce_sum(tf.square(y) * float(m + 1))
        return [loss, tf.gradients(loss, x)[0]]

    out = run_members(2, build)
    # total = sum_m (m+1) * sum(y^2), y = mean_m x_m: dtotal/dx_m = (1+2) * 2y / 2 = 3y
    y = np.array([1.5, 3.0])
    for _, grad in out:
        np.testing.assert_allclose(grad, 3 * y)
    eps = 1e-6
    total = lambda xs: sum((k + 1) * np.sum(np.mean(xs, 0) ** 2) for k in range(2))  # noqa: E731
    xs = np.array([[1.0, 2.0], [2.0, 4.0]])
    for m in range(2):
        for i in range(2):
            plus, minus = xs.copy(), xs.copy()
            plus[m, i] += eps
            minus[m, i] -= eps
            np.testing.assert_allclose(out[m][1][i], (total(plus) - total(minus)) / (2 * eps), rtol=1e-5)


def test_start_and_wait_match_the_blocking_op_and_are_traced():
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    metadata: list[Any] = []

    def build(m: int, key: int) -> list[Any]:
        a, b = tf.constant([1.0, 2.0]) * (m + 1), tf.constant([[3]], tf.int32) * (m + 1)
        handle = C.all_reduce_start([a, b], group_key=key, member=m)
        return C.all_reduce_wait(handle) + [C.all_reduce(a, group_key=key, member=m)]

    out = run_members(2, build, options, metadata)
    for started_a, started_b, blocking in out:
        np.testing.assert_allclose(started_a, [3.0, 6.0])
        assert started_b.tolist() == [[9]]
        np.testing.assert_allclose(blocking, started_a)
    lanes = [s for md in metadata for s in md.step_stats.dev_stats if "collective" in s.device]
    assert len(lanes) == 2
    kinds = {n.op_type for n in lanes[0].node_stats}
    assert {"Collective:negotiate", "Collective:allreduce"} <= kinds


def test_group_errors_say_how_to_fix():
    with tf.Graph().as_default():
        y = C.all_reduce(tf.constant([1.0]), group_key=999_999)
        with tf.Session() as sess, pytest.raises(FailedPreconditionError, match="not set up"):
            sess.run(y)
    with tf.Graph().as_default():
        y = C.all_reduce(tf.constant([1.0]), group_size=4)
        with tf.Session() as sess, pytest.raises(FailedPreconditionError, match="flowmesh run -np 4"):
            sess.run(y)


def test_world_of_one_process_is_the_identity():
    x = tf.constant([[1.0, 2.0]])
    with tf.Session() as sess:
        out = sess.run([C.all_reduce(x), C.all_gather(x), C.broadcast(x), C.group_size()])
    assert out[0].tolist() == [[1.0, 2.0]] and out[1].tolist() == [[1.0, 2.0]]
    assert out[2].tolist() == [[1.0, 2.0]] and out[3] == 1


def test_dead_fresh_inputs_are_donated_and_live_ones_are_not():
    """The forwarding pass lets an all-reduce take over an input nobody else reads (a
    MatMul's fresh result), never a variable's value or a value that is also fetched."""
    engines: dict[int, Any] = {}

    def build(m: int, key: int) -> dict[str, Any]:
        engines[m] = lambda: context.engine_for(key, 2, m)
        a = tf.constant(np.full((200, 100), m + 1.0, np.float32))
        b = tf.constant(np.ones((100, 200), np.float32))
        v = tf.Variable(np.full((200, 200), m + 1.0, np.float32))
        fetched = tf.matmul(b, a)  # 100x100, also fetched: must stay intact
        fresh, kept = tf.matmul(a, b) * 2.0, tf.identity(v.initialized_value())
        return {"init": v.initializer,
                "mixed": C.grouped_all_reduce([fresh, kept], group_key=key, member=m),
                "dead": C.all_reduce(tf.matmul(a, b), group_key=key, member=m),
                "var": C.all_reduce(v.initialized_value(), group_key=key, member=m),
                "fetched": fetched,
                "fetched_sum": C.all_reduce(fetched, group_key=key, member=m)}

    out = run_members(2, build)
    for m, res in enumerate(out):
        np.testing.assert_allclose(res["dead"], np.full((200, 200), 300.0))  # 100 * (1 + 2)
        np.testing.assert_allclose(res["var"], np.full((200, 200), 3.0))
        np.testing.assert_allclose(res["fetched"], np.full((100, 100), 200.0 * (m + 1)))
        np.testing.assert_allclose(res["fetched_sum"], np.full((100, 100), 600.0))
        np.testing.assert_allclose(res["mixed"][0], np.full((200, 200), 600.0))
        np.testing.assert_allclose(res["mixed"][1], np.full((200, 200), 3.0))
    assert [engines[m]().stats.in_place for m in range(2)] == [1, 1]
