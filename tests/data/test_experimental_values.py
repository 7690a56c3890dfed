"""tf.data.experimental's values computed inside a step (cardinality, get_single_element,
optionals), its errors, and the option classes, against TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


def _run(tf, build):
    """``build(tf)``'s fetches run once in a fresh graph and session of ``tf``."""
    with tf.Graph().as_default():
        fetches = build(tf)
        config = session_config(tf) if tf is not fm else None
        with tf.Session(config=config) as sess:
            sess.run(tf.tables_initializer())
            return sess.run(fetches)


def _both(build):
    return _run(fm, build), _run(require_tensorflow(), build)


CARDINALITY_PIPELINES = {
    "range": lambda ds: ds.range(10),
    "slices": lambda ds: ds.from_tensor_slices(np.zeros([7, 2])),
    "tensors": lambda ds: ds.from_tensors(1),
    "take_skip": lambda ds: ds.range(10).take(8).skip(3),
    "take_more": lambda ds: ds.range(3).take(8),
    "batch": lambda ds: ds.range(10).batch(3),
    "batch_drop": lambda ds: ds.range(10).batch(3, drop_remainder=True),
    "repeat": lambda ds: ds.range(4).repeat(3),
    "repeat_forever": lambda ds: ds.range(4).repeat(),
    "repeat_forever_take": lambda ds: ds.range(4).repeat().take(6),
    "filter": lambda ds: ds.range(4).filter(lambda x: x > 1),
    "zip": lambda ds: ds.zip((ds.range(4), ds.range(9))),
    "concatenate": lambda ds: ds.range(4).concatenate(ds.range(2)),
    "shard": lambda ds: ds.range(10).shard(3, 1),
    "map_prefetch": lambda ds: ds.range(5).map(lambda x: x * 2).prefetch(2),
    "shuffle": lambda ds: ds.range(5).shuffle(3, seed=1),
}


@pytest.mark.parametrize("case", sorted(CARDINALITY_PIPELINES))
def test_cardinality_matches_tensorflow(case):
    pipeline = CARDINALITY_PIPELINES[case]
    ours, theirs = _both(lambda tf: tf.data.experimental.cardinality(pipeline(tf.data.Dataset)))
    assert ours == theirs
    assert fm.data.experimental.INFINITE_CARDINALITY == -1 and fm.data.experimental.UNKNOWN_CARDINALITY == -2


def test_assert_cardinality_sets_cardinality_and_fails_on_a_wrong_count():
    def build(tf):
        ds = tf.data.Dataset.range(5).filter(lambda x: x < 10).apply(tf.data.experimental.assert_cardinality(5))
        return tf.data.experimental.cardinality(ds)

    assert _both(build) == (5, 5)
    for tf in (fm, require_tensorflow()):
        with tf.Graph().as_default():
            ds = tf.data.Dataset.range(5).apply(tf.data.experimental.assert_cardinality(3))
            element = tf.data.make_one_shot_iterator(ds).get_next()
            with tf.Session() as sess:
                for _ in range(3):
                    sess.run(element)
                with pytest.raises(tf.errors.FailedPreconditionError, match="expected to contain 3 elements"):
                    sess.run(element)


def test_get_single_element_values_and_errors():
    def build(tf):
        ds = tf.data.Dataset.from_tensors({"a": np.arange(3), "b": (b"x", np.float32(2.5))})
        return tf.data.experimental.get_single_element(ds)

    ours, theirs = _both(build)
    np.testing.assert_array_equal(ours["a"], theirs["a"])
    assert ours["b"] == theirs["b"]
    for tf in (fm, require_tensorflow()):
        with tf.Graph().as_default():
            empty = tf.data.experimental.get_single_element(tf.data.Dataset.range(0))
            many = tf.data.experimental.get_single_element(tf.data.Dataset.range(2))
            with tf.Session() as sess:
                with pytest.raises(tf.errors.InvalidArgumentError, match="Dataset was empty"):
                    sess.run(empty)
                with pytest.raises(tf.errors.InvalidArgumentError, match="more than one element"):
                    sess.run(many)
    with pytest.raises(TypeError, match="tf.data.Dataset"):
        fm.data.experimental.get_single_element([1])


def test_get_next_as_optional_and_optional():
    def build(tf):
        iterator = tf.data.make_one_shot_iterator(tf.data.Dataset.range(2).map(lambda x: (x, x * 10)))
        first = tf.data.experimental.get_next_as_optional(iterator)
        value = tf.data.experimental.Optional.from_value((np.float32(1.5), b"s"))
        empty = tf.data.experimental.Optional.empty(tf.TensorSpec([2], tf.int32))
        return first.has_value(), first.get_value(), value.has_value(), value.get_value(), empty.has_value()

    ours, theirs = _both(build)
    assert ours[0] == theirs[0] and ours[2] == theirs[2] and ours[4] == theirs[4]
    assert tuple(ours[1]) == tuple(theirs[1]) and tuple(ours[3]) == tuple(theirs[3])
    with fm.Graph().as_default():
        iterator = fm.data.make_one_shot_iterator(fm.data.Dataset.range(1))
        optional = fm.data.experimental.get_next_as_optional(iterator)
        has, value = optional.has_value(), optional.get_value()
        assert isinstance(optional.element_spec, fm.TensorSpec)
        with fm.Session() as sess:
            assert sess.run([has, value]) == [True, 0]
            assert not sess.run(has)
            with pytest.raises(fm.errors.InvalidArgumentError, match="does not have a value"):
                sess.run(value)


def test_options_groups_defaults_types_and_merge():
    tf1 = require_tensorflow()
    ours, theirs = fm.data.Options(), tf1.data.Options()
    assert ours.experimental_distribute.auto_shard_policy.name == theirs.experimental_distribute.auto_shard_policy.name
    assert ours.experimental_external_state_policy is theirs.experimental_external_state_policy is None
    for group in ("autotune", "experimental_optimization", "threading"):
        for option in type(getattr(ours, group))._OPTIONS:
            if hasattr(getattr(theirs, group), option):
                assert getattr(getattr(ours, group), option) == getattr(getattr(theirs, group), option), option
    assert ours.experimental_threading is ours.threading
    x = fm.data.experimental
    assert [a.name for a in x.AutotuneAlgorithm] == [a.name for a in tf1.data.experimental.AutotuneAlgorithm]
    assert [p.value for p in x.ExternalStatePolicy] == [p.value for p in tf1.data.experimental.ExternalStatePolicy]
    with pytest.raises(AttributeError, match="Cannot set the property"):
        ours.autotune.no_such_option = 1
    with pytest.raises(TypeError, match="must be of type"):
        ours.threading.private_threadpool_size = "four"
    first, second = fm.data.Options(), fm.data.Options()
    first.autotune.cpu_budget = 2
    first.threading.private_threadpool_size = 3
    second.threading.private_threadpool_size = 5
    second.experimental_deterministic = False
    merged = first.merge(second)
    assert (merged.autotune.cpu_budget, merged.threading.private_threadpool_size) == (2, 5)
    assert merged.determinism() is False
    groups = (x.AutotuneOptions(), x.DistributeOptions(), x.OptimizationOptions(), x.ServiceOptions(),
              fm.data.ThreadingOptions())
    assert all(g == type(g)() for g in groups)


def test_enable_debug_mode_builds_sequential_pipelines():
    from flowmesh.data.debug_mode import toggle_debug_mode

    def build(tf):
        return tf.data.Dataset.range(20).map(lambda x: x * 3, num_parallel_calls=4).interleave(
            lambda x: tf.data.Dataset.range(x, x + 2), cycle_length=2, num_parallel_calls=2).prefetch(4)

    try:
        fm.data.experimental.enable_debug_mode()
        with fm.Graph().as_default():
            dataset = build(fm)
            types = {op.type for op in fm.get_default_graph().get_operations()}
            assert "ParallelMapDatasetV2" not in types and "ParallelInterleaveDatasetV4" not in types
            assert "PrefetchDataset" not in types and "MapDataset" in types
            element = fm.data.make_one_shot_iterator(dataset).get_next()
            with fm.Session() as sess:
                ours = [sess.run(element) for _ in range(40)]
    finally:
        toggle_debug_mode(False)
    with fm.Graph().as_default():
        element = fm.data.make_one_shot_iterator(build(fm)).get_next()
        assert "PrefetchDataset" in {op.type for op in fm.get_default_graph().get_operations()}
        with fm.Session() as sess:
            assert ours == [sess.run(element) for _ in range(40)]  # the same elements, in the same order
