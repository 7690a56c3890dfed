"""tf.data.experimental's file and generated sources against TensorFlow: CSV, SQLite,
TFRecord writing, tf.Example batches, lookup tables from datasets, RandomDataset and
sample_from_datasets (by distribution and determinism), NumpyIterator."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.testing.tf_oracle import require_tensorflow, session_config
from tests.data.helpers import assert_same_elements, run_flowmesh, run_tensorflow

CSV = "id,name,score\n1,ann,0.5\n2,\"bob, jr\",1.25\n3,,2\n4,dee,\n"


@pytest.fixture
def csv_file(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text(CSV)
    return str(path)


def test_csv_dataset(csv_file):
    def build(tf):
        return tf.data.experimental.CsvDataset(csv_file, [tf.int64, tf.constant(["?"]), tf.constant([-1.0])],
                                               header=True)

    assert_same_elements(run_flowmesh(build), run_tensorflow(build))

    def selected(tf):
        return tf.data.experimental.CsvDataset([csv_file, csv_file], [tf.constant([0]), tf.constant([0.0], tf.float64)], header=True,
                                               select_cols=[0, 2])

    assert_same_elements(run_flowmesh(selected), run_tensorflow(selected))

    def middle(tf, **cols):
        return tf.data.experimental.CsvDataset(csv_file, [tf.constant(["-"])], header=True, **cols)

    # exclude_cols is TensorFlow 2's (its v1 class has select_cols only)
    assert_same_elements(run_flowmesh(lambda tf: middle(tf, exclude_cols=[0, 2])),
                         run_tensorflow(lambda tf: middle(tf, select_cols=[1])))
    with pytest.raises(ValueError, match="select_cols or exclude_cols"):
        fm.data.experimental.CsvDataset(csv_file, [fm.string], select_cols=[0], exclude_cols=[1])


def test_make_csv_dataset(csv_file):
    def build(tf):
        return tf.data.experimental.make_csv_dataset(csv_file, 3, label_name="score", num_epochs=1, shuffle=False)

    ours, theirs = run_flowmesh(build), run_tensorflow(build)
    assert [list(f) for f, _ in ours] == [list(f) for f, _ in theirs] == [["id", "name"]] * 2
    assert_same_elements([(dict(f), y) for f, y in ours], [(dict(f), y) for f, y in theirs])

    def selected(tf):
        return tf.data.experimental.make_csv_dataset(csv_file, 2, select_columns=["score", "id"], num_epochs=2,
                                                     shuffle=False)

    assert_same_elements([dict(f) for f in run_flowmesh(selected)], [dict(f) for f in run_tensorflow(selected)])
    with pytest.raises(ValueError, match="label_name"):
        fm.data.experimental.make_csv_dataset(csv_file, 2, label_name="nope")

    def skipping(tf):
        return tf.data.experimental.make_csv_dataset(bad_file, 2, column_defaults=[tf.int64, tf.string],
                                                     num_epochs=1, shuffle=False, ignore_errors=True)

    bad_file = csv_file + ".bad.csv"
    with open(bad_file, "w") as f:
        f.write("id,name\n1,a\nx,b\n3,c\n4,d,extra\n5,e\n")
    assert_same_elements([dict(f) for f in run_flowmesh(skipping)], [dict(f) for f in run_tensorflow(skipping)])
    with pytest.raises(ValueError, match="No files match"):
        fm.data.experimental.make_csv_dataset(csv_file + ".missing*", 2)


def test_sql_dataset(tmp_path):
    path = str(tmp_path / "db.sqlite")
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE people (name TEXT, age INTEGER, height REAL)")
        db.executemany("INSERT INTO people VALUES (?, ?, ?)", [("ann", 31, 1.6), ("bob", 42, 1.8)])

    def build(tf):
        return tf.data.experimental.SqlDataset("sqlite", path, "SELECT name, age, height FROM people ORDER BY age",
                                               (tf.string, tf.int32, tf.float64))

    assert_same_elements(run_flowmesh(build), run_tensorflow(build))
    with pytest.raises(ValueError, match="sqlite"):
        fm.data.experimental.SqlDataset("mysql", path, "SELECT 1", (fm.int64,))


def _examples(tf, path, count):
    with tf.io.TFRecordWriter(path) as writer:
        for i in range(count):
            example = tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(int64_list=tf.train.Int64List(value=[i, i * 2])),
                "y": tf.train.Feature(float_list=tf.train.FloatList(value=[i / 2]))}))
            writer.write(example.SerializeToString())


def test_make_batched_features_dataset_and_parse_example_dataset(tmp_path):
    path = str(tmp_path / "ex.tfrecord")
    _examples(fm, path, 5)

    def build(tf):
        features = {"x": tf.FixedLenFeature([2], tf.int64), "y": tf.FixedLenFeature([], tf.float32)}
        return tf.data.experimental.make_batched_features_dataset(path, 2, features, label_key="y", num_epochs=1,
                                                                  shuffle=False)

    assert_same_elements(run_flowmesh(build), run_tensorflow(build))

    def parsed(tf):
        return tf.data.TFRecordDataset(path).batch(3).apply(
            tf.data.experimental.parse_example_dataset({"x": tf.VarLenFeature(tf.int64)}))

    ours, theirs = run_flowmesh(parsed), run_tensorflow(parsed)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a["x"].values, b["x"].values)
        np.testing.assert_array_equal(a["x"].indices, b["x"].indices)
    with pytest.raises(TypeError, match="vectors of strings"):
        fm.data.Dataset.range(3).apply(fm.data.experimental.parse_example_dataset({"x": fm.VarLenFeature(fm.int64)}))


def test_tfrecord_writer_writes_what_tensorflow_writes(tmp_path):
    def write(tf, name, compression):
        path = str(tmp_path / name)
        with tf.Graph().as_default():
            ds = tf.data.Dataset.from_tensor_slices([b"a", b"bb", b""]).map(lambda s: s + b"!")
            op = tf.data.experimental.TFRecordWriter(path, compression).write(ds)
            with tf.Session() as sess:
                sess.run(op)
        return path

    tf1 = require_tensorflow()
    for compression in (None, "GZIP"):
        ours, theirs = write(fm, f"ours{compression}", compression), write(tf1, f"tf{compression}", compression)
        assert list(fm.io.tf_record_iterator(ours, compression)) == list(tf1.io.tf_record_iterator(theirs, compression))
    assert (tmp_path / "oursNone").read_bytes() == (tmp_path / "tfNone").read_bytes()
    with pytest.raises(TypeError, match="scalar `string`"):
        fm.data.experimental.TFRecordWriter(str(tmp_path / "x")).write(fm.data.Dataset.range(2))


def test_tables_from_datasets():
    def build(tf):
        x = tf.data.experimental
        keys = tf.data.Dataset.from_tensor_slices([b"a", b"b", b"c"])
        pairs = tf.data.Dataset.zip((tf.data.Dataset.range(3), keys))
        table = tf.lookup.StaticHashTable(x.DatasetInitializer(pairs), b"?")
        index = x.index_table_from_dataset(keys, key_dtype=tf.string)
        values = x.table_from_dataset(tf.data.Dataset.zip((keys, tf.data.Dataset.range(10, 13))), default_value=-7,
                                      key_dtype=tf.string)
        oov = x.index_table_from_dataset(keys, num_oov_buckets=2, key_dtype=tf.string)
        words = tf.constant([b"c", b"zz", b"a"])
        return (table.lookup(tf.constant([2, 0, 9], tf.int64)), index.lookup(words), values.lookup(words),
                oov.lookup(words))

    ours, theirs = _run_both(build)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="two"):
        fm.data.experimental.DatasetInitializer(fm.data.Dataset.range(3))


def _run_both(build):
    out = []
    for tf in (fm, require_tensorflow()):
        with tf.Graph().as_default():
            fetches = build(tf)
            with tf.Session(config=None if tf is fm else session_config(tf)) as sess:
                sess.run(tf.tables_initializer())
                out.append(sess.run(fetches))
    return out


def test_random_dataset_range_and_determinism():
    def build(tf):
        return tf.data.experimental.RandomDataset(seed=42).take(2000)

    ours = np.array(run_flowmesh(build))
    theirs = np.array(run_tensorflow(build))
    assert ours.dtype == theirs.dtype == np.int64
    assert 0 <= ours.min() and ours.max() < 2**32 and 0 <= theirs.min() and theirs.max() < 2**32
    assert abs(ours.mean() / 2**32 - 0.5) < 0.03 and len(set(ours.tolist())) > 1990
    np.testing.assert_array_equal(ours, np.array(run_flowmesh(build)))
    other = np.array(run_flowmesh(lambda tf: tf.data.experimental.RandomDataset(seed=43).take(2000)))
    assert (ours != other).any()


def test_sample_from_datasets_follows_the_weights():
    def build(tf, seed=7):
        datasets = [tf.data.Dataset.from_tensors(np.int64(i)).repeat() for i in range(3)]
        return tf.data.experimental.sample_from_datasets(datasets, [0.5, 0.3, 0.2], seed=seed).take(1500)

    ours = np.array(run_flowmesh(build))
    theirs = np.array(run_tensorflow(build))
    for sample in (ours, theirs):
        np.testing.assert_allclose(np.bincount(sample, minlength=3) / 1500, [0.5, 0.3, 0.2], atol=0.05)
    np.testing.assert_array_equal(ours, np.array(run_flowmesh(build)))

    def until_empty(tf):
        return tf.data.experimental.sample_from_datasets(
            [tf.data.Dataset.range(5), tf.data.Dataset.range(10, 13)], seed=1)

    assert sorted(int(v) for v in run_flowmesh(until_empty)) == [0, 1, 2, 3, 4, 10, 11, 12]
    with pytest.raises(ValueError, match="same length"):
        fm.data.experimental.sample_from_datasets([fm.data.Dataset.range(2)], [0.5, 0.5])


def test_numpy_iterator():
    with fm.Graph().as_default():
        ds = fm.data.Dataset.from_tensor_slices({"a": np.arange(3), "b": [b"x", b"y", b"z"]}).map(
            lambda d: (d["a"] * 2, d["b"]))
        items = list(fm.data.NumpyIterator(ds))
    assert items == [(0, b"x"), (2, b"y"), (4, b"z")]
    assert isinstance(items[0][0], np.int64)
    with pytest.raises(TypeError, match="tf.data.Dataset"):
        fm.data.NumpyIterator([1, 2])


def test_namespaces_are_real():
    x = fm.data.experimental
    assert x.TensorStructure is fm.TensorSpec and x.DatasetStructure is fm.data.DatasetSpec
    assert x.map_and_batch_with_legacy_function is x.map_and_batch


@pytest.mark.parametrize("initial", [None, [0.8, 0.2]])
def test_rejection_resample_reaches_the_target_distribution(initial):
    def build(tf):
        classes = tf.data.Dataset.from_tensor_slices(np.array([0, 0, 0, 0, 1] * 800, np.int64))
        return classes.map(lambda c: (c, c * 10)).apply(tf.data.experimental.rejection_resample(
            lambda c, v: c, [0.5, 0.5], initial_dist=initial, seed=3)).take(600)

    for elements in (run_flowmesh(build), run_tensorflow(build)):
        labels = np.array([int(label) for label, _ in elements])
        assert all(int(v) == 10 * int(c) for c, (_, v) in ((label, e) for label, e in elements))
        assert abs(labels.mean() - 0.5) < 0.08, labels.mean()


def test_snapshot_replays_the_first_pass(tmp_path):
    def build(tf):
        noisy = tf.data.Dataset.range(6).map(lambda x: x + tf.random_uniform([], 0, 1000, dtype=tf.int64))
        return noisy.apply(tf.data.experimental.snapshot(str(tmp_path / "snap")))

    first, second = run_flowmesh(build), run_flowmesh(build)
    assert [int(v) for v in first] == [int(v) for v in second]
    assert len(list((tmp_path / "snap").iterdir())) == 1
    other = run_flowmesh(lambda tf: tf.data.Dataset.range(3).apply(tf.data.experimental.snapshot(str(tmp_path / "snap"))))
    assert [int(v) for v in other] == [0, 1, 2] and len(list((tmp_path / "snap").iterdir())) == 2
    with pytest.raises(ValueError, match="compression"):
        fm.data.experimental.snapshot(str(tmp_path), compression="LZ4")
