"""PaddingFIFOQueue, RandomShuffleQueue and PriorityQueue, against TensorFlow where the
result is deterministic; blocking is checked with step deadlines, never with sleeps."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow


def _config(lib):
    return lib.ConfigProto(operation_timeout_in_ms=20000)


def _run_all(lib, fetch_lists):
    out = []
    with lib.Session(config=_config(lib)) as sess:
        for fetches in fetch_lists:
            try:
                out.append(sess.run(fetches))
            except lib.errors.OpError as exc:
                out.append(type(exc).__name__)
    return out


def _padding_script(lib):
    q = lib.PaddingFIFOQueue(10, [lib.int32, lib.string, lib.float32], shapes=[[None], [], [None, 2]])
    steps = [q.enqueue(([1, 2, 3], "a", [[1.0, 2.0]])), q.enqueue(([4], "bb", [[3.0, 4.0], [5.0, 6.0]])),
             q.enqueue(([], "c", np.zeros((0, 2), np.float32))), q.size(), q.dequeue_many(2), q.close(),
             q.dequeue_up_to(5), q.dequeue()]
    return _run_all(lib, steps)


def _priority_script(lib):
    q = lib.PriorityQueue(10, [lib.string, lib.int32], shapes=[[], [2]])
    steps = [q.enqueue_many(([5, 1, 3], ["five", "one", "three"], [[5, 5], [1, 1], [3, 3]])),
             q.enqueue((2, "two", [2, 2])), q.dequeue(), q.dequeue_many(2), q.close(), q.dequeue_many(1),
             q.dequeue()]  # (TensorFlow's PriorityQueue drops the elements of a short dequeue_up_to)
    return _run_all(lib, steps)


def _assert_same(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(b, str) or b is None:
            assert a == b
        else:
            for x, y in zip(a if isinstance(a, (list, tuple)) else [a], b if isinstance(b, (list, tuple)) else [b]):
                np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
                assert np.asarray(x).shape == np.asarray(y).shape


@pytest.mark.parametrize("script", [_padding_script, _priority_script], ids=["padding", "priority"])
def test_queue_kind_matches_tensorflow(script):
    tf1 = require_tensorflow()
    with tf1.Graph().as_default():
        theirs = script(tf1)
    with tf.Graph().as_default():
        ours = script(tf)
    _assert_same(ours, theirs)


def test_padding_queue_static_shapes_and_string_padding():
    q = tf.PaddingFIFOQueue(4, [tf.string], shapes=[[None]])
    batch = q.dequeue_many(2)
    assert batch.shape.as_list() == [2, None]
    with tf.Session() as sess:
        sess.run(q.enqueue([["x", "y"]]))
        sess.run(q.enqueue([["z"]]))
        assert sess.run(batch).tolist() == [[b"x", b"y"], [b"z", b""]]


def test_random_shuffle_queue_keeps_min_after_dequeue_until_closed():
    q = tf.RandomShuffleQueue(20, 5, [tf.int32], shapes=[[]], seed=7)
    pop2, pop = q.dequeue_many(2), q.dequeue()
    with tf.Session() as sess:
        sess.run(q.enqueue_many([list(range(8))]))
        first = sess.run(pop2).tolist()  # 8 - 2 = 6 >= 5 left
        with pytest.raises(tf.errors.DeadlineExceededError):  # only 6 > 5: one more at most
            sess.run(q.dequeue_many(2), options=tf.RunOptions(timeout_in_ms=200))
        second = [int(sess.run(pop))]
        sess.run(q.close())
        rest = sess.run(q.dequeue_up_to(10)).tolist()  # closed: drains below min_after_dequeue
        assert sorted(first + second + rest) == list(range(8))
        assert first + second + rest != list(range(8))  # shuffled (fixed seed: deterministic)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(pop)


def test_random_shuffle_queue_is_deterministic_with_a_seed():
    def run():
        with tf.Graph().as_default():
            tf.set_random_seed(3)
            q = tf.RandomShuffleQueue(50, 0, tf.int64, shapes=[[]])
            with tf.Session() as sess:
                sess.run(q.enqueue_many([np.arange(30)]))
                return sess.run(q.dequeue_many(30)).tolist()

    first, second = run(), run()
    assert first == second and sorted(first) == list(range(30))


def test_queue_kind_errors():
    with pytest.raises(ValueError, match="needs `shapes`"):
        tf.PaddingFIFOQueue(3, [tf.int32], shapes=None)
    with pytest.raises(ValueError, match="min_after_dequeue"):
        tf.RandomShuffleQueue(5, 5, [tf.int32])
    q = tf.PriorityQueue(3, [tf.string], shapes=[[]])
    with pytest.raises((TypeError, ValueError)):
        q.enqueue((1.5, "x"))  # the priority must be int64
    with pytest.raises(ValueError):
        q.enqueue(("x",))  # missing the priority
    padded = tf.PaddingFIFOQueue(3, [tf.int32], shapes=[[None]])
    with pytest.raises(ValueError, match="shape"):
        padded.enqueue([[[1, 2]]])  # rank 2 for a rank-1 component
    with tf.Session() as sess:
        sess.run(padded.close())
        with pytest.raises(tf.errors.CancelledError, match="is closed"):
            sess.run(padded.enqueue([[1]]))


def test_tf_io_and_tf_queue_aliases():
    assert tf.io.PaddingFIFOQueue is tf.queue.PaddingFIFOQueue is tf.PaddingFIFOQueue
    assert tf.io.RandomShuffleQueue is tf.RandomShuffleQueue and tf.io.PriorityQueue is tf.PriorityQueue
    assert tf.io.QueueBase is tf.QueueBase and tf.queue.FIFOQueue is tf.FIFOQueue


def test_queue_from_list_picks_a_queue_at_run_time():
    tf1 = require_tensorflow()

    def script(lib):
        a = lib.FIFOQueue(3, lib.int32, shapes=[[]])
        b = lib.RandomShuffleQueue(3, 0, lib.int32, shapes=[[]])
        which = lib.placeholder(lib.int32, [])
        chosen = lib.QueueBase.from_list(which, [a, b])
        with lib.Session() as sess:
            sess.run(a.enqueue(1))
            sess.run(chosen.enqueue(7), {which: 1})
            return [int(sess.run(chosen.dequeue(), {which: i})) for i in (1, 0)] + [int(sess.run(a.size()))]

    with tf1.Graph().as_default():
        theirs = script(tf1)
    with tf.Graph().as_default():
        ours = script(tf)
        with pytest.raises(ValueError, match="does not match"):
            tf.QueueBase.from_list(0, [tf.FIFOQueue(1, tf.int32), tf.FIFOQueue(1, tf.float32)])
    assert ours == theirs == [7, 1, 0]
