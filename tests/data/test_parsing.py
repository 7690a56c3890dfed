"""Example protos (bytes equal TensorFlow's), Example parsing, decode_raw/decode_csv vs TF."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


def _example(tf, i):
    f = tf.train
    return f.Example(features=f.Features(feature={
        "image": f.Feature(float_list=f.FloatList(value=[i * 0.5, 1.0, -2.0, 3.25])),
        "label": f.Feature(int64_list=f.Int64List(value=[i])),
        "tags": f.Feature(bytes_list=f.BytesList(value=[b"t%d" % j for j in range(i % 3)])),
        "ids": f.Feature(int64_list=f.Int64List(value=list(range(i % 4)))),
    }))


def _sequence_example(tf):
    f = tf.train
    steps = [f.Feature(float_list=f.FloatList(value=[t, t + 0.5])) for t in range(3)]
    words = [f.Feature(bytes_list=f.BytesList(value=[b"w"] * t)) for t in range(3)]
    return f.SequenceExample(
        context=f.Features(feature={"length": f.Feature(int64_list=f.Int64List(value=[3]))}),
        feature_lists=f.FeatureLists(feature_list={"frames": f.FeatureList(feature=steps),
                                                   "words": f.FeatureList(feature=words)}))


SPEC = {
    "image": lambda tf: tf.FixedLenFeature([2, 2], tf.float32),
    "label": lambda tf: tf.FixedLenFeature([], tf.int64),
    "tags": lambda tf: tf.VarLenFeature(tf.string),
    "ids": lambda tf: tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True,
                                                   default_value=-1),
    "absent": lambda tf: tf.FixedLenFeature([3], tf.float32, default_value=[1.0, 2.0, 3.0]),
}


def _run(tf, build):
    with tf.Graph().as_default():
        fetches = build(tf)
        config = session_config(tf) if tf is not fm else None
        with tf.Session(config=config) as sess:
            return sess.run(fetches)


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


def test_example_bytes_equal_tensorflow():
    """Messages with one map entry serialize to identical bytes; with several, protobuf's map
    order is unspecified (it varies between runs even within TensorFlow), so those are
    compared after parsing on the other side."""
    tf1 = require_tensorflow()
    for build in (lambda tf: tf.train.Feature(float_list=tf.train.FloatList(value=[1.5, -2.0])),
                  lambda tf: tf.train.Example(features=tf.train.Features(feature={
                      "x": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2**40, -3]))})),
                  lambda tf: tf.train.BytesList(value=[b"a", b"", b"\x00\xff"])):
        assert build(fm).SerializeToString() == build(tf1).SerializeToString()
    for i in range(4):
        ours, theirs = _example(fm, i).SerializeToString(), _example(tf1, i).SerializeToString()
        assert tf1.train.Example.FromString(ours) == _example(tf1, i)
        assert fm.train.Example.FromString(theirs) == _example(fm, i)
    seq = _sequence_example(fm).SerializeToString()
    assert tf1.train.SequenceExample.FromString(seq) == _sequence_example(tf1)


def test_parse_example_matches_tensorflow():
    tf1 = require_tensorflow()

    def build(tf):
        serialized = [_example(tf, i).SerializeToString() for i in range(5)]
        parsed = tf.parse_example(tf.constant(serialized), {k: v(tf) for k, v in SPEC.items()})
        return {k: (v if not isinstance(v, tf.SparseTensor) else (v.indices, v.values, v.dense_shape))
                for k, v in parsed.items()}

    _same(_run(fm, build), _run(tf1, build))


def test_parse_single_example_and_sparse_to_dense_match_tensorflow():
    tf1 = require_tensorflow()

    def build(tf):
        parsed = tf.parse_single_example(_example(tf, 2).SerializeToString(),
                                         {k: SPEC[k](tf) for k in ("image", "label", "tags")})
        tags = parsed["tags"]
        return parsed["image"], parsed["label"], tags.indices, tags.values, tags.dense_shape, \
            tf.sparse.to_dense(tags, default_value="?")

    _same(_run(fm, build), _run(tf1, build))


def test_parse_single_sequence_example_matches_tensorflow():
    tf1 = require_tensorflow()

    def build(tf):
        context, sequences = tf.io.parse_single_sequence_example(
            _sequence_example(tf).SerializeToString(),
            context_features={"length": tf.FixedLenFeature([], tf.int64)},
            sequence_features={"frames": tf.io.FixedLenSequenceFeature([2], tf.float32),
                               "words": tf.VarLenFeature(tf.string)})
        words = sequences["words"]
        return context["length"], sequences["frames"], words.indices, words.values, \
            words.dense_shape

    _same(_run(fm, build), _run(tf1, build))


def test_parse_in_a_dataset_map():
    records = [_example(fm, i).SerializeToString() for i in range(6)]
    with fm.Graph().as_default():
        dataset = fm.data.Dataset.from_tensor_slices(np.array(records, dtype=object)).map(
            lambda s: fm.parse_single_example(s, {"image": SPEC["image"](fm),
                                                  "label": SPEC["label"](fm)})).batch(4)
        element = dataset.make_one_shot_iterator().get_next()
        assert element["image"].shape.as_list() == [None, 2, 2]
        with fm.Session() as sess:
            first = sess.run(element)
    np.testing.assert_array_equal(first["label"], [0, 1, 2, 3])
    assert first["image"].dtype == np.float32 and first["image"][3, 0, 0] == 1.5


@pytest.mark.parametrize("spec, data, message", [
    ({"label": fm.FixedLenFeature([], fm.float32)}, "label",
     r"Key: label, Index: 0\. Data types don't match\. Data type: int64 but expected type: float"),
    ({"image": fm.FixedLenFeature([3], fm.float32)}, "image",
     r"Key: image, Index: 0\. Number of float values != expected\. Values size: 4 but output "
     r"shape: \[3\]"),
    ({"nope": fm.FixedLenFeature([], fm.int64)}, "nope",
     r"Feature: nope \(data type: int64\) is required but could not be found"),
])
def test_spec_mismatch_names_feature_expected_and_found(spec, data, message):
    with fm.Graph().as_default():
        parsed = fm.parse_example([_example(fm, 1).SerializeToString()], spec)
        with fm.Session() as sess, pytest.raises(fm.errors.InvalidArgumentError, match=message):
            sess.run(parsed[data])


def test_not_an_example_is_invalid_argument():
    with fm.Graph().as_default():
        parsed = fm.parse_single_example(b"\xff\xff garbage", {"a": fm.VarLenFeature(fm.int64)})
        with fm.Session() as sess, pytest.raises(fm.errors.InvalidArgumentError, match="parse"):
            sess.run(parsed["a"].values)


def test_decode_raw_and_decode_csv_match_tensorflow():
    tf1 = require_tensorflow()
    raw = [np.arange(4, dtype=np.float32).tobytes(), np.ones(4, np.float32).tobytes()]

    def build(tf):
        decoded = tf.decode_raw(tf.constant(raw), tf.float32)
        big = tf.decode_raw(tf.constant([b"\x00\x01\x00\x02"]), tf.int16, little_endian=False)
        columns = tf.decode_csv(tf.constant(["1,2.5,a", "7,,\"b,c\"", "3,0.25,"]),
                                [[0], [9.5], ["z"]], select_cols=None)
        picked = tf.decode_csv(tf.constant(["1;2;3"]), [[0], [tf.constant(0, tf.int64)]],
                               field_delim=";", select_cols=[0, 2])
        return decoded, big, columns, picked

    _same(_run(fm, build), _run(tf1, build))


def test_decode_csv_missing_required_field():
    with fm.Graph().as_default():
        columns = fm.decode_csv(["1,"], [[0], fm.constant([], fm.float32)])
        with fm.Session() as sess, pytest.raises(fm.errors.InvalidArgumentError,
                                                 match="Field 1 is required"):
            sess.run(columns)


def _dense_example(floats, ints, ints_first=False):
    f = fm.train
    items = [("ab", f.Feature(float_list=f.FloatList(value=floats))),
             ("cd", f.Feature(int64_list=f.Int64List(value=ints)))]
    return f.Example(features=f.Features(feature=dict(items[::-1] if ints_first else items))) \
        .SerializeToString()


@pytest.mark.parametrize("records", [
    # one layout: the batch is parsed without a per-record loop
    [_dense_example([i, -i], [i, 300 * i]) for i in range(6)],
    # the same features in another order: same length, another layout
    [_dense_example([1, 2], [3, 4]), _dense_example([5, 6], [7, 8], ints_first=True)],
    # negative and large varints change the record lengths
    [_dense_example([1, 2], [-1, 2**40]), _dense_example([3, 4], [5, 6])],
])
def test_batch_parse_fast_and_general_paths_agree(records):
    from flowmesh.kernels.example_fastpath import parse_dense

    spec = {"ab": fm.FixedLenFeature([2], fm.float32), "cd": fm.FixedLenFeature([2], fm.int64)}
    with fm.Graph().as_default():
        batch = fm.parse_example(records, spec)
        singles = [fm.parse_single_example(r, spec) for r in records]
        with fm.Session() as sess:
            got, one_by_one = sess.run([batch, singles])
    for key in spec:
        np.testing.assert_array_equal(got[key], np.stack([s[key] for s in one_by_one]))
    parsed = fm.train.Example.FromString(records[1]).features.feature
    assert got["ab"][1].tolist() == list(parsed["ab"].float_list.value)
    assert got["cd"][1].tolist() == list(parsed["cd"].int64_list.value)
    if len({len(r) for r in records}) == 1 and records[0][:8] == records[-1][:8]:
        assert parse_dense(records, []) is not None
