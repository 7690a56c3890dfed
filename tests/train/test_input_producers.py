"""tf.train input producers, limit_epochs, match_filenames_once and the batch family,
against TensorFlow where the order is deterministic (one enqueueing thread, no shuffle)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow


def _drain(lib, fetches, max_steps=100):
    """Runs ``fetches`` under queue runners until OutOfRangeError; returns every value."""
    out = []
    with lib.Session(config=lib.ConfigProto(operation_timeout_in_ms=20000)) as sess:
        sess.run([lib.global_variables_initializer(), lib.local_variables_initializer()])
        coord = lib.train.Coordinator()
        threads = lib.train.start_queue_runners(sess, coord)
        try:
            for _ in range(max_steps):
                out.append(sess.run(fetches))
        except lib.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    assert len(out) < max_steps, "the pipeline did not end"
    return out


def _both(script):
    tf1 = require_tensorflow()
    with tf1.Graph().as_default():
        theirs = script(tf1)
    with tf.Graph().as_default():
        ours = script(tf)
    return ours, theirs


def _as_lists(values):
    def parts(x):
        if isinstance(x, dict):
            return [x[k] for k in sorted(x)]
        return x if isinstance(x, (list, tuple)) else [x]

    return [[np.asarray(v).tolist() for v in parts(x)] for x in values]


def _range_batch(lib):
    x = lib.train.range_input_producer(7, num_epochs=2, shuffle=False).dequeue()
    batch = lib.train.batch([x, lib.as_string(x)], 3, allow_smaller_final_batch=True)
    summaries = sorted(t.op.name for t in lib.get_collection(lib.GraphKeys.SUMMARIES))
    return _as_lists(_drain(lib, batch)), summaries


def _slice_batch(lib):
    images = np.arange(30, dtype=np.float32).reshape(10, 3)
    labels = np.arange(10, dtype=np.int64)
    image, label = lib.train.slice_input_producer([images, labels], num_epochs=1, shuffle=False)
    return _as_lists(_drain(lib, lib.train.batch({"image": image, "label": label}, 4)))


def _padded_batch(lib):
    n = lib.train.string_input_producer(["3", "1", "2", "4"], num_epochs=1, shuffle=False).dequeue()
    seq = lib.range(lib.strings.to_number(n, out_type=lib.int32))
    return _as_lists(_drain(lib, lib.train.batch([seq, n], 2, dynamic_pad=True)))


def _maybe_batch(lib):
    x = lib.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    kept = lib.train.maybe_batch([x], lib.equal(x % 3, 0), 2, allow_smaller_final_batch=True)
    return _as_lists(_drain(lib, kept))


def _maybe_batch_many(lib):
    rows = lib.train.limit_epochs(lib.constant([[1, 2], [3, 4], [5, 6]]), num_epochs=2)
    keep = lib.train.limit_epochs(lib.constant([True, False, True]), num_epochs=2)
    return _as_lists(_drain(lib, lib.train.maybe_batch([rows], keep, 3, enqueue_many=True)))


def _sparse_batch(lib):
    def example(i):
        feature = {"v": lib.train.Feature(int64_list=lib.train.Int64List(value=list(range(i))))}
        return lib.train.Example(features=lib.train.Features(feature=feature)).SerializeToString()

    record = lib.train.string_input_producer([example(i) for i in range(5)], num_epochs=1, shuffle=False).dequeue()
    parsed = lib.parse_single_example(record, {"v": lib.VarLenFeature(lib.int64)})
    one = lib.train.batch([parsed["v"], record], 2, allow_smaller_final_batch=True)
    return [_plain_sparse(v) for v, _ in _drain(lib, one)]


def _plain_sparse(v):
    return v.indices.tolist(), v.values.tolist(), v.dense_shape.tolist()


def _sparse_batch_many(lib):
    rows = lib.SparseTensor([[0, 0], [1, 2], [2, 1]], [1.0, 2.0, 3.0], [3, 4])
    many = lib.train.batch({"sp": rows}, 2, enqueue_many=True)
    with lib.Session(config=lib.ConfigProto(operation_timeout_in_ms=20000)) as sess:
        coord = lib.train.Coordinator()
        threads = lib.train.start_queue_runners(sess, coord)
        out = [_plain_sparse(sess.run(many)["sp"]) for _ in range(2)]
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    return out


@pytest.mark.parametrize("script", [_range_batch, _slice_batch, _padded_batch, _maybe_batch, _maybe_batch_many,
                                    _sparse_batch, _sparse_batch_many],
                         ids=["range", "slice_dict", "dynamic_pad", "maybe", "maybe_many", "sparse", "sparse_many"])
def test_pipeline_matches_tensorflow(script):
    ours, theirs = _both(script)
    assert ours == theirs


def test_range_batch_values_and_summaries():
    with tf.Graph().as_default():
        values, summaries = _range_batch(tf)
    flat = [v for batch_values in values for v in batch_values[0]]
    assert flat == list(range(7)) * 2  # exactly num_epochs passes, the last batch smaller
    assert summaries == ["batch/fraction_of_32_full", "input_producer/fraction_of_32_full"]


def _shuffled(lib):
    lib.set_random_seed(1)
    x = lib.train.range_input_producer(20, num_epochs=3, shuffle=True, seed=2).dequeue()
    batch = lib.train.shuffle_batch([x], 4, capacity=12, min_after_dequeue=5, num_threads=2,
                                    allow_smaller_final_batch=True)
    joined = lib.train.shuffle_batch_join([[lib.constant(1)], [lib.constant(2)]], 3, 10, 2)
    summaries = sorted(t.op.name for t in lib.get_collection(lib.GraphKeys.SUMMARIES))
    values = sorted(v for b in _drain(lib, batch) for v in np.asarray(b).tolist())
    return values, summaries, joined.shape.as_list()


def test_shuffle_batch_yields_every_element_num_epochs_times():
    ours, theirs = _both(_shuffled)
    assert ours == theirs
    assert ours[0] == sorted(list(range(20)) * 3)
    assert "shuffle_batch/fraction_over_5_of_7_full" in ours[1]


def test_batch_join_uses_one_thread_per_list():
    with tf.Graph().as_default():
        a = tf.train.input_producer(tf.constant([[1, 1], [2, 2]]), num_epochs=2, shuffle=False).dequeue()
        b = tf.train.input_producer(tf.constant([[10, 10]]), num_epochs=3, shuffle=False).dequeue()
        batch = tf.train.batch_join([[a], [b]], 2, allow_smaller_final_batch=True)
        runners = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        assert [len(r.enqueue_ops) for r in runners] == [1, 1, 2]
        rows = [row for values in _drain(tf, batch) for row in np.asarray(values).tolist()]
    assert sorted(rows) == [[1, 1]] * 2 + [[2, 2]] * 2 + [[10, 10]] * 3


def test_limit_epochs_counts_in_a_local_variable():
    with tf.Graph().as_default():
        value = tf.train.limit_epochs(tf.constant([1, 2]), num_epochs=2)
        assert [v.op.name for v in tf.local_variables()] == ["limit_epochs/epochs"]
        assert tf.train.limit_epochs(value) is value
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert sess.run(value).tolist() == sess.run(value).tolist() == [1, 2]
            with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
                sess.run(value)
        with pytest.raises(ValueError, match="num_epochs"):
            tf.train.limit_epochs(value, num_epochs=0)


def test_match_filenames_once(tmp_path):
    for name in ("b.tfrecord", "a.tfrecord", "c.txt"):
        (tmp_path / name).write_bytes(b"")
    with tf.Graph().as_default():
        files = tf.train.match_filenames_once(str(tmp_path / "*.tfrecord"))
        assert files in tf.local_variables()
        assert tf.io.match_filenames_once is tf.train.match_filenames_once
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert sess.run(files).tolist() == [str(tmp_path / n).encode() for n in ("a.tfrecord", "b.tfrecord")]


def test_batching_errors_say_how_to_fix_them():
    with tf.Graph().as_default():
        varlen = tf.range(tf.placeholder(tf.int32, []))
        with pytest.raises(ValueError, match="dynamic_pad=True"):
            tf.train.batch([varlen], 2)
        with pytest.raises(ValueError, match="capacity 5 must be bigger than min_after_dequeue 5"):
            tf.train.shuffle_batch([tf.constant(1)], 2, capacity=5, min_after_dequeue=5)
        with pytest.raises(TypeError, match="consistent"):
            tf.train.batch_join([[tf.constant(1)], [tf.constant(1.0)]], 2)
        with pytest.raises(ValueError, match="vector"):
            tf.train.maybe_batch([tf.constant(1)], [True], 2)
        with pytest.raises(ValueError, match="SparseTensor"):
            tf.train.maybe_batch([tf.SparseTensor([[0]], [1], [3])], tf.placeholder(tf.bool, []), 2)
        with pytest.raises(ValueError, match="non-null"):
            tf.train.string_input_producer([])
        with pytest.raises(ValueError, match="element_shape"):
            tf.train.input_producer(tf.placeholder(tf.float32, [None, None]))
