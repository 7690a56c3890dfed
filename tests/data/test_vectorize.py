"""Map vectorization (map...batch -> vectorized maps over blocks, or batch...vectorized
map): same elements, same order."""

from __future__ import annotations

import numpy as np

import flowmesh as tf
from tests.data.helpers import assert_same_elements, drain

SPEC = {"image": tf.FixedLenFeature([4], tf.float32), "label": tf.FixedLenFeature([], tf.int64)}


def _records():
    out = []
    for i in range(23):
        ex = tf.train.Example(features=tf.train.Features(feature={
            "image": tf.train.Feature(float_list=tf.train.FloatList(value=np.arange(4) + i)),
            "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10]))}))
        out.append(ex.SerializeToString())
    return np.array(out, dtype=object)


def _pipeline(vectorize: bool, extra=None):
    dataset = tf.data.Dataset.from_tensor_slices(_records()) \
        .map(lambda s: tf.parse_single_example(s, SPEC), num_parallel_calls=2) \
        .map(lambda d: (tf.reshape(d["image"] * 2.0 - 1.0, [2, 2]), tf.one_hot(d["label"], 10),
                        tf.cast(d["label"], tf.float32) / tf.constant(3.0)))
    if extra is not None:
        dataset = dataset.map(extra)
    dataset = dataset.shuffle(7, seed=3).repeat(2)
    options = tf.data.Options()
    options.experimental_optimization.map_vectorization = vectorize
    return dataset.with_options(options) if not vectorize else dataset


def _route(batched) -> str:
    """How ``batch`` was built: "blocks" (vectorized maps, unbatch, passes, batch),
    "batch-first" (batch, then vectorized maps) or "plain" (maps, passes, batch)."""
    chain, op = [], batched._variant_tensor.op
    while op.inputs and op.type.endswith("Dataset") or op.type.endswith("DatasetV2"):
        chain.append(op.type)
        op = op.inputs[0].op
    if chain[0] != "BatchDatasetV2":
        return "batch-first"
    return "blocks" if "UnbatchDataset" in chain else "plain"


def _run(vectorize: bool, extra=None, batch_size=5):
    with tf.Graph().as_default():
        dataset = _pipeline(vectorize, extra)
        batched = dataset.batch(batch_size)
        element = batched.make_one_shot_iterator().get_next()
        shapes = [t.shape.as_list() for t in element]
        with tf.Session() as sess:
            return drain(tf, sess, element), _route(batched), shapes


def test_vectorized_pipeline_gives_the_same_batches():
    plain, plain_route, plain_shapes = _run(False)
    fast, fast_route, fast_shapes = _run(True)
    assert plain_route == "plain"
    assert fast_route == "blocks", "the maps were not vectorized"
    assert fast_shapes == plain_shapes == [[None, 2, 2], [None, 10], [None]]
    assert_same_elements(fast, plain)


def test_blocks_give_the_same_batches_at_every_size():
    # batches smaller than, equal to and larger than the whole input; blocks of 1024 rows
    for size in (1, 23, 24, 1500):
        plain, _, _ = _run(False, batch_size=size)
        fast, route, _ = _run(True, batch_size=size)
        assert route == "blocks"
        assert_same_elements(fast, plain)


def test_maps_of_unknown_element_shape_batch_first():
    # a depth not known statically: each block's rows could differ from another's
    def deep(image, label, scale):
        return image, tf.one_hot(tf.cast(scale, tf.int64), tf.placeholder_with_default(12, [])), scale

    plain, _, _ = _run(False, deep)
    fast, route, shapes = _run(True, deep)
    assert route == "batch-first"
    assert shapes[1] == [None, None]
    assert_same_elements(fast, plain)


def test_functions_without_batch_rules_keep_the_order_of_stages():
    def noisy(image, label, scale):
        return image + tf.random_uniform([2, 2]), label, scale

    _, route, _ = _run(True, noisy)
    assert route == "plain"


def test_inputs_of_unknown_shape_are_not_batched_first():
    """Elements [2, 3] and [3, 2] reshaped to [6] batch fine; batching them first would not."""
    def gen():
        yield np.zeros((2, 3), np.float32)
        yield np.ones((3, 2), np.float32)

    with tf.Graph().as_default():
        batched = tf.data.Dataset.from_generator(gen, tf.float32, [None, None]) \
            .map(lambda x: tf.reshape(x, [6])).batch(2)
        assert batched._variant_tensor.op.type == "BatchDatasetV2"
        with tf.Session() as sess:
            got = sess.run(batched.make_one_shot_iterator().get_next())
    np.testing.assert_array_equal(got, [[0] * 6, [1] * 6])


def _block_size(batched):
    """The batch size of the block stage (``batch(rows)`` before the vectorized maps)."""
    op = batched._variant_tensor.op
    while op.type != "UnbatchDataset":
        op = op.inputs[0].op
    while op.type != "BatchDatasetV2":
        op = op.inputs[0].op
    return int(tf.get_static_value(op.inputs[1]))


def test_blocks_of_large_elements_hold_fewer_rows():
    # a block's results stay near 4 MiB; elements that fit fewer than 64 rows batch first
    for side, expected in [(8, 1024), (64, 256), (256, None)]:
        images = np.arange(20 * side * side, dtype=np.float32).reshape(20, side, side)
        with tf.Graph().as_default():
            batched = tf.data.Dataset.from_tensor_slices(images).map(lambda x: x * 2.0) \
                .shuffle(5, seed=1).batch(6)
            route = _route(batched)
            assert route == ("blocks" if expected else "batch-first")
            if expected:
                assert _block_size(batched) == expected
            with tf.Session() as sess:
                got = drain(tf, sess, batched.make_one_shot_iterator().get_next())
        assert sorted(float(b[0, 0]) for batch in got for b in batch) == \
            sorted(float(v) * 2 for v in images[:, 0, 0])
