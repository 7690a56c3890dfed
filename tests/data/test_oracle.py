"""Every tf.data transformation's output against TensorFlow's (order where deterministic).

Each case builds the same pipeline with ``tf`` being flowmesh or ``tensorflow.compat.v1``.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

from tests.data.helpers import assert_same_elements, run_flowmesh, run_tensorflow

X = np.arange(12, dtype=np.int64)
F = np.arange(24, dtype=np.float32).reshape(12, 2)
WORDS = np.array([b"a", b"bb", b"ccc", b"dddd", b"e", b"ff"], dtype=object)
Point = collections.namedtuple("Point", ["x", "y"])


def _ds(tf):
    return tf.data.Dataset


CASES = {
    "slices_tuple_map_batch": lambda tf: _ds(tf).from_tensor_slices((X, F))
    .map(lambda a, b: (a * 2, tf.reduce_sum(b))).batch(5),
    "slices_dict": lambda tf: _ds(tf).from_tensor_slices({"a": X, "b": F}).map(
        lambda d: {"s": d["a"] + 1, "b": d["b"] * 2.0}),
    "slices_namedtuple": lambda tf: _ds(tf).from_tensor_slices(Point(X, F)).map(
        lambda p: p.x + tf.cast(p.y[0], tf.int64)),
    "slices_strings": lambda tf: _ds(tf).from_tensor_slices(WORDS).batch(4),
    "from_tensors": lambda tf: _ds(tf).from_tensors((F, X)).repeat(2),
    "range": lambda tf: _ds(tf).range(2, 20, 3),
    "range_negative_step": lambda tf: _ds(tf).range(10, 0, -2),
    "zip": lambda tf: _ds(tf).zip((_ds(tf).range(5), _ds(tf).from_tensor_slices(F))),
    "zip_nested": lambda tf: _ds(tf).zip(
        {"a": _ds(tf).range(3), "b": (_ds(tf).range(4), _ds(tf).range(10, 20))}),
    "filter": lambda tf: _ds(tf).range(20).filter(lambda x: tf.equal(x % 3, 0)),
    "batch_drop_remainder": lambda tf: _ds(tf).range(10).batch(3, drop_remainder=True),
    "padded_batch": lambda tf: _ds(tf).range(1, 7).map(lambda x: tf.range(x)).padded_batch(
        2, padded_shapes=[None]),
    "padded_batch_fixed": lambda tf: _ds(tf).range(1, 5).map(lambda x: (tf.fill(tf.expand_dims(x, 0), x), x))
    .padded_batch(3, padded_shapes=([6], []), padding_values=(np.int64(-1), np.int64(0))),
    "repeat_take_skip": lambda tf: _ds(tf).range(5).repeat(3).skip(2).take(9),
    "take_all_skip_none": lambda tf: _ds(tf).range(4).take(-1).skip(0),
    "shard": lambda tf: _ds(tf).range(17).shard(3, 1),
    "interleave": lambda tf: _ds(tf).range(1, 6).interleave(
        lambda x: _ds(tf).from_tensors(x).repeat(x), cycle_length=3, block_length=2),
    "interleave_parallel": lambda tf: _ds(tf).range(1, 6).interleave(
        lambda x: _ds(tf).range(x * 10, x * 10 + x), cycle_length=2, block_length=1,
        num_parallel_calls=2),
    "flat_map": lambda tf: _ds(tf).range(4).flat_map(lambda x: _ds(tf).range(x)),
    "map_parallel": lambda tf: _ds(tf).range(50).map(lambda x: x * x, num_parallel_calls=4),
    "map_autotune_prefetch": lambda tf: _ds(tf).from_tensor_slices(F).map(
        lambda v: tf.sqrt(v), num_parallel_calls=tf.data.experimental.AUTOTUNE).prefetch(3),
    "cache_memory": lambda tf: _ds(tf).range(4).map(lambda x: x + 1).cache().repeat(3),
    "unbatch": lambda tf: _ds(tf).from_tensor_slices(F.reshape(3, 4, 2)).unbatch(),
    "window": lambda tf: _ds(tf).range(10).window(3, shift=2).flat_map(lambda w: w.batch(3)),
    "window_stride_drop": lambda tf: _ds(tf).range(12).window(
        3, shift=4, stride=2, drop_remainder=True).flat_map(lambda w: w.batch(3)),
    "window_tuple": lambda tf: _ds(tf).from_tensor_slices((X, F)).window(5).flat_map(
        lambda a, b: _ds(tf).zip((a.batch(5), b.batch(5)))),
    "enumerate": lambda tf: _ds(tf).from_tensor_slices(WORDS).enumerate(start=3),
    "concatenate": lambda tf: _ds(tf).range(3).concatenate(_ds(tf).range(10, 12)),
    "batch_then_unbatch_map": lambda tf: _ds(tf).range(7).batch(2).map(lambda b: b * 3).unbatch(),
    "from_generator": lambda tf: _ds(tf).from_generator(
        lambda: ((i, [float(i)] * 2) for i in range(5)), (tf.int64, tf.float32),
        (tf.TensorShape([]), tf.TensorShape([2]))),
    "map_captures_constant": lambda tf: _ds(tf).range(5).map(
        lambda x: x + tf.constant(100, tf.int64)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_tensorflow(case):
    build = CASES[case]
    assert_same_elements(run_flowmesh(build), run_tensorflow(build))


def _shuffled(tf, seed, reshuffle=True):
    return _ds(tf).range(40).shuffle(10, seed=seed, reshuffle_each_iteration=reshuffle).repeat(3)


def test_shuffle_is_a_permutation_of_each_epoch():
    ours = [int(v) for v in run_flowmesh(lambda tf: _shuffled(tf, 7))]
    theirs = [int(v) for v in run_tensorflow(lambda tf: _shuffled(tf, 7))]
    for epoch in range(3):
        assert sorted(ours[epoch * 40:(epoch + 1) * 40]) == list(range(40))
        assert sorted(theirs[epoch * 40:(epoch + 1) * 40]) == list(range(40))
    assert ours[:40] != list(range(40))
    assert ours[:40] != ours[40:80], "reshuffle_each_iteration=True reuses the order"


def test_shuffle_buffer_window_and_seeds():
    ours = [int(v) for v in run_flowmesh(lambda tf: _shuffled(tf, 3, reshuffle=False))]
    # output k comes from the first k + buffer_size inputs of its epoch (TF's semantics)
    for k, value in enumerate(ours[:40]):
        assert value < k + 10
    assert ours[:40] == ours[40:80] == ours[80:], "reshuffle_each_iteration=False changes order"
    again = [int(v) for v in run_flowmesh(lambda tf: _shuffled(tf, 3, reshuffle=False))]
    assert again == ours, "the same op seed gave another order"
    other = [int(v) for v in run_flowmesh(lambda tf: _shuffled(tf, 4, reshuffle=False))]
    assert other != ours


def test_parallel_map_nondeterministic_has_same_elements():
    def build(tf):
        ds = _ds(tf).range(64).map(lambda x: x + 1, num_parallel_calls=4)
        options = tf.data.Options()
        options.experimental_deterministic = False
        return ds.with_options(options)

    assert_same_elements(run_flowmesh(build), run_tensorflow(build), ordered=False)
