"""TensorFlow's checkpoint format (tensor bundle): TensorFlow writes, flowmesh restores and
reads; flowmesh writes (``Saver(write_version=SaverDef.V2)``), TensorFlow restores. Sharded
saves and partitioned variables both ways; corrupted files raise DataLossError by name."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.checkpoint import sstable
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

VALUES = {
    "dense/kernel": np.arange(12, dtype=np.float32).reshape(3, 4) / 7,
    "dense/bias": np.array([1.5, -2.0, 0.25, 3.0], np.float64),
    "step": np.int64(41),
    "counts": np.array([[1, -2], [3, 4]], np.int32),
    "mask": np.array([True, False, True]),
    "half": np.array([0.5, 1.25], np.float16),
    "words": np.array([b"alpha", b"", b"\xff\x00gamma"], dtype=object),
}
EMBEDDING = np.arange(40, dtype=np.float32).reshape(10, 4)


def _build(lib, two_devices: bool):
    """The same variables in flowmesh or TensorFlow: plain ones, a 3-way partitioned one,
    placed on two CPU devices when ``two_devices`` (so a sharded save has two shards)."""
    made = {}
    for i, (name, value) in enumerate(VALUES.items()):
        dtype = lib.string if value.dtype == object else lib.as_dtype(value.dtype)
        with lib.device(f"/cpu:{i % 2 if two_devices else 0}"):
            made[name] = lib.get_variable(name, initializer=lib.constant(value, dtype=dtype), dtype=dtype)
    with lib.variable_scope("emb", partitioner=lib.fixed_size_partitioner(3)):
        made["emb/table"] = lib.get_variable("table", shape=EMBEDDING.shape, initializer=_embedding_part)
    return made


def _embedding_part(shape, dtype=None, partition_info=None):
    """Initializer giving each partition its rows of EMBEDDING (flowmesh and TensorFlow)."""
    start = partition_info.var_offset[0] if partition_info is not None else 0
    return EMBEDDING[start:start + shape[0]]


def _check(values: dict, embedding: np.ndarray) -> None:
    for name, expected in VALUES.items():
        got = values[name]
        if expected.dtype == object:
            assert list(got) == list(expected), name
        else:
            np.testing.assert_array_equal(got, expected, err_msg=name)
    np.testing.assert_array_equal(embedding, EMBEDDING)


def _run_values(sess, made) -> tuple[dict, np.ndarray]:
    plain = {n: v for n, v in made.items() if n in VALUES}
    values = sess.run(plain)
    table = made["emb/table"]
    embedding = sess.run(tf.concat(list(table), 0))
    return values, embedding


def _tf_session(tf1, graph):
    config = session_config(tf1)
    config.device_count["CPU"] = 2
    return tf1.Session(graph=graph, config=config)


@pytest.mark.parametrize("sharded", [False, True])
def test_flowmesh_restores_and_reads_tensorflow_checkpoints(tmp_path, sharded):
    tf1 = require_tensorflow()
    (tmp_path / "tf").mkdir()
    prefix = str(tmp_path / "tf" / "model.ckpt")
    with tf1.Graph().as_default() as g:
        _build(tf1, two_devices=sharded)
        saver = tf1.train.Saver(sharded=sharded)
        with _tf_session(tf1, g) as sess:
            sess.run(tf1.global_variables_initializer())
            path = saver.save(sess, prefix, global_step=7)
    assert sstable.is_table(open(path + ".index", "rb").read())
    if sharded:
        assert len(glob.glob(path + ".data-*")) > 1
    tf_listing = tf1.train.list_variables(path)
    assert tf.train.list_variables(path) == [(n, list(s)) for n, s in tf_listing]
    reader = tf.train.NewCheckpointReader(path)
    assert reader.get_tensor("dense/kernel").dtype == np.float32
    assert list(reader.get_tensor("words")) == list(VALUES["words"])
    np.testing.assert_array_equal(reader.get_tensor("emb/table"), EMBEDDING)
    assert reader.get_variable_to_dtype_map()["step"] == tf.int64
    with tf.Graph().as_default():
        made = _build(tf, two_devices=False)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.assign(made["dense/kernel"], tf.zeros([3, 4])))
            tf.train.Saver().restore(sess, path)
            _check(*_run_values(sess, made))


@pytest.mark.parametrize("sharded", [False, True])
def test_tensorflow_restores_flowmesh_checkpoints_written_as_v2(tmp_path, sharded):
    tf1 = require_tensorflow()
    prefix = str(tmp_path / "fm" / "model.ckpt")
    with tf.Graph().as_default():
        _build(tf, two_devices=sharded)
        saver = tf.train.Saver(sharded=sharded, write_version=tf.train.SaverDef.V2)
        config = tf.ConfigProto(device_count={"CPU": 2})
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, prefix, global_step=3)
    assert sstable.is_table(open(path + ".index", "rb").read())
    files = set(os.listdir(tmp_path / "fm"))  # no temporary shard directories left
    shards = 3 if sharded else 1  # cpu:0, cpu:1 and the partitioned variable's default device
    data = {f"model.ckpt-3.data-{k:05d}-of-{shards:05d}" for k in range(shards)}
    assert files == {"checkpoint", "model.ckpt-3.index", "model.ckpt-3.meta", *data}
    assert [(n, list(s)) for n, s in tf1.train.list_variables(path)] == tf.train.list_variables(path)
    with tf1.Graph().as_default() as g:
        made = _build(tf1, two_devices=False)
        with _tf_session(tf1, g) as sess:
            sess.run(tf1.global_variables_initializer())
            sess.run(tf1.assign(made["dense/kernel"], tf1.zeros([3, 4])))
            tf1.train.Saver().restore(sess, path)
            values = sess.run({n: v for n, v in made.items() if n in VALUES})
            embedding = sess.run(made["emb/table"].as_tensor())
    _check(values, embedding)


def _tf_checkpoint(tmp_path) -> str:
    tf1 = require_tensorflow()
    with tf1.Graph().as_default() as g:
        v = tf1.get_variable("v", initializer=tf1.constant(np.arange(6, dtype=np.float32)))
        tf1.get_variable("w", initializer=tf1.constant(np.ones(3, np.float64)))
        with _tf_session(tf1, g) as sess:
            sess.run(v.initializer)
            sess.run(tf1.global_variables_initializer())
            return tf1.train.Saver().save(sess, str(tmp_path / "m.ckpt"))


def test_corrupted_data_file_is_data_loss_naming_the_file(tmp_path):
    path = _tf_checkpoint(tmp_path)
    data = path + ".data-00000-of-00001"
    raw = bytearray(open(data, "rb").read())
    raw[2] ^= 0x40
    open(data, "wb").write(bytes(raw))
    reader = tf.train.NewCheckpointReader(path)
    with pytest.raises(tf.errors.DataLossError, match=f"{data}.*tensor 'v'"):
        reader.get_tensor("v")
    np.testing.assert_array_equal(reader.get_tensor("w"), np.ones(3))


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_corrupted_index_is_data_loss_naming_the_file(tmp_path, damage):
    path = _tf_checkpoint(tmp_path)
    index = path + ".index"
    raw = bytearray(open(index, "rb").read())
    if damage == "truncate":
        raw = raw[:-10]
    else:
        raw[5] ^= 0x01
    open(index, "wb").write(bytes(raw))
    with pytest.raises(tf.errors.DataLossError, match=index):
        tf.train.NewCheckpointReader(path)


def test_truncated_data_file_is_data_loss(tmp_path):
    path = _tf_checkpoint(tmp_path)
    data = path + ".data-00000-of-00001"
    raw = open(data, "rb").read()
    open(data, "wb").write(raw[:-4])
    with pytest.raises(tf.errors.DataLossError, match=data):
        tf.train.NewCheckpointReader(path).get_tensor("w")
