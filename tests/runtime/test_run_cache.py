"""Session.run's per-session caches: same results, same errors, less work per call."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.runtime.run_cache import fetch_key, fits


def test_repeated_runs_reuse_the_fetch_mapper_and_feed_layout() -> None:
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    total = tf.reduce_sum(x) + tf.cast(tf.reduce_sum(y), tf.float32)
    with tf.Session() as sess:
        feed = {y: np.array([1, 2]), x: np.ones((2, 2), np.float32)}
        assert sess.run([total], feed) == [7.0]
        cache = sess._run_cache
        mapper = cache.mapper([total])
        assert cache.mapper([total]) is mapper and cache.mapper((total,)) is not mapper
        assert sess.run([total], {y: np.array([3, 3]), x: np.zeros((1, 2), np.float32)}) == [6.0]
        layout = cache.feed_layout(feed, sess._resolve_feed_key)
        assert layout.tensors == [x, y]  # canonical order, whatever the dict order


def test_values_that_miss_the_fast_path_are_converted_or_rejected() -> None:
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    doubled = x * 2.0
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(doubled, {x: np.ones((1, 2), np.float32)}),
                                      [[2, 2]])
        np.testing.assert_array_equal(sess.run(doubled, {x: [[1, 2]]}), [[2, 4]])  # a list
        np.testing.assert_array_equal(sess.run(doubled, {x: np.ones((1, 2))}), [[2, 2]])  # f64
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Cannot feed value of shape \(3,\)"):
            sess.run(doubled, {x: np.ones(3, np.float32)})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot feed value"):
            sess.run(doubled, {x: [["a", "b"]]})
        np.testing.assert_array_equal(sess.run(doubled, {"x:0": np.ones((1, 2), np.float32)}),
                                      [[2, 2]])


def test_fetchability_and_feedability_are_rechecked_on_cache_hits() -> None:
    x = tf.placeholder(tf.float32, [], name="x")
    y = x + 1.0
    with tf.Session() as sess:
        assert sess.run(y, {x: np.float32(1.0)}) == 2.0
        tf.get_default_graph().prevent_fetching(y.op)
        with pytest.raises(ValueError, match="may not be fetched"):
            sess.run(y, {x: np.float32(1.0)})
    z = x * 3.0
    with tf.Session() as sess:
        assert sess.run(z, {x: np.array(2.0, np.float32)}) == 6.0
        tf.get_default_graph().prevent_feeding(x)
        with pytest.raises(ValueError, match="may not be fed"):
            sess.run(z, {x: np.array(2.0, np.float32)})


def test_structures_that_are_not_cached_still_work() -> None:
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.Session() as sess:
        assert sess.run({"a": a, "b": [b, a]}) == {"a": 1.0, "b": [2.0, 1.0]}
        assert sess.run("a:0") == 1.0
    assert fetch_key({"a": a}) is None and fetch_key([a, [b]]) is None
    assert fetch_key(a) is a and fetch_key([a, b]) == (list, a, b)


def test_fits_checks_exact_dtype_and_static_dims() -> None:
    f32 = np.dtype(np.float32)
    assert fits(np.zeros((3, 2), np.float32), f32, (None, 2))
    assert not fits(np.zeros((3, 3), np.float32), f32, (None, 2))
    assert not fits(np.zeros((3, 2), np.float64), f32, (None, 2))
    assert not fits([[0.0, 0.0]], f32, (None, 2))
    assert fits(np.zeros(4, np.float32), f32, None)


def test_intra_op_threads_hold_per_session() -> None:
    import torch

    from flowmesh.runtime.device import default_team_size

    saved = torch.get_num_threads()
    c = tf.constant(1.0)
    try:
        one = tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1))
        two = tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=2))
        default = tf.Session()  # no setting: its own tuned count, the full team at first
        team = default_team_size()
        for sess, expected in ((one, 1), (two, 2), (one, 1), (default, team), (two, 2)):
            sess.run(c)
            assert torch.get_num_threads() == expected
        for sess in (one, two, default):
            sess.close()
    finally:
        torch.set_num_threads(saved)
