"""SparseTensor elements in tf.data (from_tensor_slices of a SparseTensor, batching and
unbatching sparse elements, VarLenFeature parses through a pipeline), against TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow


def _examples(lib):
    def example(i):
        feature = {"v": lib.train.Feature(int64_list=lib.train.Int64List(value=list(range(i)))),
                   "w": lib.train.Feature(bytes_list=lib.train.BytesList(value=[b"x%d" % i] * (i % 2)))}
        return lib.train.Example(features=lib.train.Features(feature=feature)).SerializeToString()

    return [example(i) for i in range(5)]




def _drain(lib, dataset):
    nxt = lib.data.make_one_shot_iterator(dataset).get_next()
    out = []
    with lib.Session() as sess:
        with pytest.raises(lib.errors.OutOfRangeError):
            while True:
                out.append(sess.run(nxt))
    return out


def _as_plain(value):
    if isinstance(value, dict):
        return {k: _as_plain(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)) and not hasattr(value, "indices"):
        return [_as_plain(v) for v in value]
    if hasattr(value, "indices"):
        return ("sparse", value.indices.tolist(), np.asarray(value.values).tolist(), value.dense_shape.tolist())
    return np.asarray(value).tolist()


def _slices(lib):
    st = lib.SparseTensor([[0, 0], [1, 2], [3, 1], [4, 0], [4, 3]], [1.0, 2.0, 3.0, 4.0, 5.0], [5, 4])
    dense = lib.constant(np.arange(5))
    ds = lib.data.Dataset.from_tensor_slices((st, dense)).skip(1).cache().repeat(2)
    return [_as_plain(v) for v in _drain(lib, ds.batch(3))]


def _parsed(lib):
    specs = {"v": lib.VarLenFeature(lib.int64), "w": lib.VarLenFeature(lib.string)}
    ds = lib.data.Dataset.from_tensor_slices(_examples(lib))
    single = ds.map(lambda s: lib.parse_single_example(s, specs)).batch(2)
    batched = ds.batch(3).map(lambda s: lib.parse_example(s, specs)).unbatch().batch(4)
    nested = ds.map(lambda s: lib.parse_single_example(s, specs)["v"]).map(lambda sp: (sp, sp.values))
    return ([_as_plain(v) for v in _drain(lib, single)], [_as_plain(v) for v in _drain(lib, batched)],
            [_as_plain(v) for v in _drain(lib, nested.take(3))])


def _specs(lib):
    st = lib.SparseTensor([[0, 1]], [1.5], [2, 3])
    ds = lib.data.Dataset.from_tensor_slices({"s": st, "d": [1, 2]}).batch(2)
    shapes = lib.data.get_output_shapes(ds)
    classes = lib.data.get_output_classes(ds)
    return ({k: v.as_list() for k, v in shapes.items()}, {k: v.__name__ for k, v in classes.items()},
            {k: v.name for k, v in lib.data.get_output_types(ds).items()})


def _reinitializable(lib):
    a = lib.data.Dataset.from_tensor_slices((lib.SparseTensor([[0, 1], [2, 0]], [1, 2], [3, 2]), [1, 2, 3]))
    b = lib.data.Dataset.from_tensor_slices((lib.SparseTensor([[1, 1]], [5], [2, 2]), [7, 8]))
    a, b = a.batch(2), b.batch(2)
    iterator = lib.data.Iterator.from_structure(lib.data.get_output_types(a), lib.data.get_output_shapes(a),
                                                output_classes=lib.data.get_output_classes(a))
    nxt = iterator.get_next()
    out = []
    with lib.Session() as sess:
        for dataset in (a, b):
            sess.run(iterator.make_initializer(dataset))
            out.append(_as_plain(sess.run(nxt)))
    return out


@pytest.mark.parametrize("script", [_slices, _parsed, _specs, _reinitializable],
                         ids=["slices", "parsed", "specs", "from_structure"])
def test_sparse_elements_match_tensorflow(script):
    tf1 = require_tensorflow()
    with tf1.Graph().as_default():
        theirs = script(tf1)
    with tf.Graph().as_default():
        ours = script(tf)
    assert ours == theirs


def test_sparse_element_errors():
    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_tensor_slices(tf.SparseTensor([[0, 0]], [1.0], [2, 2]))
        with pytest.raises(TypeError, match="padded_batch"):
            ds.padded_batch(2)
        mixed = tf.data.Dataset.range(2).map(
            lambda i: tf.SparseTensor(tf.zeros([0, 1], tf.int64) + i * 0, tf.zeros([0]), [2]))
        rank2 = tf.data.Dataset.range(1).map(
            lambda i: tf.SparseTensor(tf.zeros([0, 2], tf.int64), tf.zeros([0]), [2, 2]))
        nxt = tf.data.make_one_shot_iterator(mixed.concatenate(rank2).batch(3)).get_next()
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="different ranks"):
            sess.run(nxt)


def test_shuffled_sparse_rows_keep_their_values():
    with tf.Graph().as_default():
        st = tf.SparseTensor([[i, i % 3] for i in range(6)], [float(i) for i in range(6)], [6, 3])
        ds = tf.data.Dataset.from_tensor_slices(st).shuffle(6, seed=4).prefetch(2)
        rows = [(v.indices.tolist(), v.values.tolist(), v.dense_shape.tolist()) for v in _drain(tf, ds)]
    assert sorted(rows) == sorted(([[i % 3]], [float(i)], [3]) for i in range(6))


def test_estimator_trains_on_sparse_features_from_a_dataset(tmp_path):
    def example(i):
        feature = {"ids": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 5, (i + 1) % 5][:1 + i % 2])),
                   "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2]))}
        return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()

    records = [example(i) for i in range(64)]
    spec = {"ids": tf.VarLenFeature(tf.int64), "y": tf.FixedLenFeature([], tf.int64)}

    def input_fn():
        parsed = tf.data.Dataset.from_tensor_slices(records).map(lambda s: tf.parse_single_example(s, spec))
        return parsed.batch(8).repeat(3).map(lambda d: ({"ids": d["ids"]}, d["y"]))

    column = tf.feature_column.categorical_column_with_identity("ids", 5)
    estimator = tf.estimator.LinearClassifier([column], model_dir=str(tmp_path))
    estimator.train(input_fn)
    metrics = estimator.evaluate(input_fn, steps=8)
    assert metrics["global_step"] == 24  # 3 passes of 8 batches, then OutOfRange ends training
    assert metrics["accuracy"] >= 0.75, metrics  # 1.0 here: odd rows carry a second id
