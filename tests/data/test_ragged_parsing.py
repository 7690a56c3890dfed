"""tf.io.RaggedFeature in parse_example / parse_single_example, checked against TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


def _examples(tf):
    f = tf.train

    def example(values, lengths, words):
        return f.Example(features=f.Features(feature={
            "v": f.Feature(int64_list=f.Int64List(value=values)),
            "len": f.Feature(int64_list=f.Int64List(value=lengths)),
            "w": f.Feature(bytes_list=f.BytesList(value=words)),
        })).SerializeToString()

    return [example([1, 2, 3, 4, 5], [2, 0, 3], [b"a", b"b"]), example([7], [1], []),
            example([], [], [b"c"])]


def _specs(tf):
    rf = tf.io.RaggedFeature
    return {"v": rf(tf.int64),
            "w": rf(tf.string, value_key="w", row_splits_dtype=tf.int64),
            "nested": rf(tf.int64, value_key="v", partitions=[rf.RowLengths("len")])}


def _parts(tf, parsed):
    return {k: (v.flat_values, v.nested_row_splits) if isinstance(v, tf.RaggedTensor) else v
            for k, v in parsed.items()}


def _run(tf, build):
    with tf.Graph().as_default():
        config = session_config(tf) if tf is not fm else None
        with tf.Session(config=config) as sess:
            return sess.run(build(tf))


def _same(a, b):
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        x, y = np.asarray(a), np.asarray(b)
        assert x.shape == y.shape and x.dtype == y.dtype, (x, y)
        np.testing.assert_array_equal(x, y)


def test_parse_example_ragged_features_match_tensorflow():
    tf1 = require_tensorflow()

    def build(tf):
        return _parts(tf, tf.io.parse_example(tf.constant(_examples(tf)), _specs(tf)))

    ours = _run(fm, build)
    _same(ours, _run(tf1, build))
    assert ours["nested"][1][0].dtype == np.int32  # RaggedFeature's default row_splits_dtype


def test_parse_single_example_ragged_features_match_tensorflow():
    tf1 = require_tensorflow()
    rf_specs = {
        "splits": lambda rf: rf(fm.int64, value_key="v", partitions=[rf.RowSplits("s")]),
        "uniform": lambda rf: rf(fm.int64, value_key="v", partitions=[rf.UniformRowLength(2)]),
    }

    def build(tf):
        parsed = tf.io.parse_single_example(_examples(tf)[0], _specs(tf))
        assert not isinstance(parsed["v"], tf.RaggedTensor)  # no partitions: a dense vector
        return _parts(tf, parsed)

    _same(_run(fm, build), _run(tf1, build))
    with fm.Graph().as_default():
        f = fm.train
        ex = f.Example(features=f.Features(feature={
            "v": f.Feature(int64_list=f.Int64List(value=[1, 2, 3, 4])),
            "s": f.Feature(int64_list=f.Int64List(value=[0, 1, 4]))})).SerializeToString()
        specs = {k: make(fm.io.RaggedFeature) for k, make in rf_specs.items()}
        parsed = fm.io.parse_single_example(ex, specs)
        with fm.Session() as sess:
            got = sess.run(parsed)
    assert isinstance(got["splits"], fm.ragged.RaggedTensorValue)
    assert got["splits"].to_list() == [[1], [2, 3, 4]]
    assert got["uniform"].to_list() == [[1, 2], [3, 4]]


def test_ragged_feature_validates_like_tensorflow():
    rf = fm.io.RaggedFeature
    assert rf(fm.int64) == (fm.int64, None, (), fm.int32, False)
    for bad in (dict(dtype=fm.int32), dict(dtype=fm.int64, value_key=""),
                dict(dtype=fm.int64, partitions=["x"]), dict(dtype=fm.int64, row_splits_dtype=fm.int8)):
        with pytest.raises(ValueError):
            rf(**bad)
    with fm.Graph().as_default(), pytest.raises(NotImplementedError, match="RowLengths partitions only"):
        fm.io.parse_example(["x"], {"r": rf(fm.int64, partitions=[rf.RowSplits("s")])})
