"""tf.data.experimental's transformations and sources against TensorFlow's elements: each
case builds the same pipeline with ``tf`` being flowmesh or ``tensorflow.compat.v1``."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.testing.tf_oracle import require_tensorflow
from tests.data.helpers import assert_same_elements, run_flowmesh, run_tensorflow


def _ds(tf):
    return tf.data.Dataset


def _x(tf):
    return tf.data.experimental


def _buckets(tf, pad):
    return _ds(tf).range(1, 6 if pad else 7).map(lambda n: tf.range(n)).apply(
        _x(tf).bucket_by_sequence_length(lambda e: tf.shape(e)[0], [3, 7] if pad else [3, 6],
                                         [2, 3, 1], pad_to_bucket_boundary=pad,
                                         padding_values=np.int64(-1)))


CASES = {
    "scan_running_sum": lambda tf: _ds(tf).range(10).apply(
        _x(tf).scan(np.int64(0), lambda s, x: (s + x, s * 2))),
    "scan_tuple_state_tuple_elements": lambda tf: _ds(tf).zip((_ds(tf).range(6), _ds(tf).range(6).map(
        lambda v: tf.cast(v, tf.float32)))).apply(_x(tf).scan(
            (np.int64(1), np.float32(0.5)), lambda s, e: ((s[0] * 2, s[1] + e[1]), s[0] + e[0]))),
    "scan_growing_state": lambda tf: _ds(tf).range(4).apply(_x(tf).scan(
        tf.constant([], tf.int64), lambda s, x: (tf.concat([s, [x]], 0), tf.size(s)))),
    "take_while": lambda tf: _ds(tf).range(10).apply(_x(tf).take_while(lambda x: x < 5)),
    "take_while_none": lambda tf: _ds(tf).range(10).apply(_x(tf).take_while(lambda x: x > 5)),
    "unique_ints": lambda tf: _ds(tf).from_tensor_slices(np.array([3, 1, 3, 2, 1, 5], np.int32)).apply(
        _x(tf).unique()),
    "unique_strings": lambda tf: _ds(tf).from_tensor_slices([b"a", b"b", b"a", b"c", b"b"]).apply(
        _x(tf).unique()),
    "group_by_window": lambda tf: _ds(tf).range(24).apply(_x(tf).group_by_window(
        lambda x: x % 3, lambda key, window: window.batch(4), window_size=4)),
    "group_by_window_size_func": lambda tf: _ds(tf).range(18).apply(_x(tf).group_by_window(
        lambda x: x % 2, lambda key, window: window.map(lambda v: v + key * 100).batch(9),
        window_size_func=lambda key: key + 3)),
    "bucket_by_sequence_length": lambda tf: _buckets(tf, False),
    "bucket_pad_to_boundary": lambda tf: _buckets(tf, True),
    "choose_from_datasets": lambda tf: _x(tf).choose_from_datasets(
        [_ds(tf).range(0, 5), _ds(tf).range(10, 15)],
        _ds(tf).from_tensor_slices(np.array([0, 1, 1, 0, 0, 1, 0, 0, 0, 1], np.int64))),
    "choose_stop_on_empty": lambda tf: _x(tf).choose_from_datasets(
        [_ds(tf).range(0, 2), _ds(tf).range(10, 15)],
        _ds(tf).from_tensor_slices(np.array([0, 1, 0, 0, 1, 1], np.int64)), stop_on_empty_dataset=True),
    "from_list": lambda tf: _x(tf).from_list([(np.int64(1), b"a"), (np.int64(2), b"bb"), (np.int64(3), b"")]),
    "from_list_vectors": lambda tf: _x(tf).from_list([np.array([1.0, 2.0], np.float32),
                                                      np.array([3.0, 4.0], np.float32)]),
    "map_and_batch_with_legacy_function": lambda tf: _ds(tf).range(7).apply(
        _x(tf).map_and_batch_with_legacy_function(lambda x: x * 3, 3)),
    "assert_cardinality_ok": lambda tf: _ds(tf).range(5).filter(lambda x: x < 10).apply(
        _x(tf).assert_cardinality(5)),
    "prefetch_to_device": lambda tf: _ds(tf).range(5).apply(_x(tf).prefetch_to_device("/cpu:0", 2)),
    "copy_to_device": lambda tf: _ds(tf).range(5).apply(_x(tf).copy_to_device("/cpu:0")),
    "pad_to_cardinality": lambda tf: _ds(tf).from_tensor_slices({"a": np.arange(3), "b": np.ones([3, 2])}).apply(
        _x(tf).pad_to_cardinality(5)),
    "dense_to_sparse_batch": lambda tf: _ds(tf).range(1, 6).map(lambda n: tf.fill([n], n)).apply(
        _x(tf).dense_to_sparse_batch(2, [6])),
    "dense_to_sparse_batch_unknown_dim": lambda tf: _ds(tf).range(1, 4).map(lambda n: tf.fill([2, n], n)).apply(
        _x(tf).dense_to_sparse_batch(3, tf.TensorShape([2, None]))),
    "methods_scan_take_while_unique": lambda tf: _ds(tf).from_tensor_slices(np.array([1, 1, 2, 3, 3, 9, 4], np.int64))
    .unique().scan(np.int64(0), lambda s, x: (s + x, s + x)).take_while(lambda x: x < 10),
    "methods_group_by_window": lambda tf: _ds(tf).range(12).group_by_window(
        lambda x: x % 2, lambda key, window: window.batch(3), window_size=3),
    "methods_choose_from_datasets": lambda tf: _ds(tf).choose_from_datasets(
        [_ds(tf).range(2), _ds(tf).range(10, 13)], _ds(tf).from_tensor_slices(np.array([1, 0, 0, 0, 1], np.int64))),
    "from_variant_to_variant": lambda tf: _x(tf).from_variant(
        _x(tf).to_variant(_ds(tf).range(3)), _x(tf).get_structure(_ds(tf).range(3))),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_tensorflow(case):
    build = CASES[case]
    assert_same_elements(run_flowmesh(build), run_tensorflow(build))


def test_group_by_reducer_matches_tensorflow_per_key():
    def build(tf):
        reducer = tf.data.experimental.Reducer(init_func=lambda key: (key, np.int64(0)),
                                               reduce_func=lambda s, x: (s[0], s[1] + x),
                                               finalize_func=lambda key, total: (key, total))
        return _ds(tf).range(20).apply(tf.data.experimental.group_by_reducer(lambda x: x % 3, reducer))

    # the order of the groups at the end is a hash map's in TensorFlow
    assert_same_elements(run_flowmesh(build), run_tensorflow(build), ordered=False)


def test_group_by_window_flushes_partial_windows():
    def build(tf):
        return _ds(tf).range(10).apply(tf.data.experimental.group_by_window(
            lambda x: x % 3, lambda key, window: window.batch(5), window_size=5))

    assert_same_elements(run_flowmesh(build), run_tensorflow(build), ordered=False)


def _failing(tf, parallel):
    values = tf.constant([1.0, 2.0, 0.0, 4.0, -1.0, 8.0])

    def check(x):
        checked = tf.debugging.assert_positive(x, message="not positive")
        with tf.control_dependencies([checked]):
            return tf.identity(x) * 2

    ds = _ds(tf).from_tensor_slices(values).map(check, num_parallel_calls=2 if parallel else None)
    return ds.filter(lambda x: x < 10).prefetch(2).apply(tf.data.experimental.ignore_errors())


@pytest.mark.parametrize("parallel", [False, True])
def test_ignore_errors_drops_failing_elements(parallel):
    assert_same_elements(run_flowmesh(lambda tf: _failing(tf, parallel)),
                         run_tensorflow(lambda tf: _failing(tf, parallel)))



def test_dataset_methods_single_element_and_cardinality():
    def build(tf):
        ds = _ds(tf).range(4)
        return ds.take(1).get_single_element(), ds.cardinality(), ds.filter(lambda x: x > 0).cardinality()

    results = []
    for tf in (fm, require_tensorflow()):
        with tf.Graph().as_default():
            fetches = build(tf)
            with tf.Session() as sess:
                results.append(tuple(int(v) for v in sess.run(fetches)))
    assert results[0] == results[1] == (0, 4, -2)
    assert [int(v) for v in run_flowmesh(lambda tf: _ds(tf).random(seed=5).take(3))] == \
        [int(v) for v in run_flowmesh(lambda tf: _ds(tf).random(seed=5).take(3))]
