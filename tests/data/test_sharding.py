"""Auto-sharding across workers: FILE policy with enough files, DATA otherwise, logged."""

from __future__ import annotations

import json
import logging

import pytest

import flowmesh as tf
from tests.data.helpers import drain


def _shards(tmp_path, count, per_file=3):
    paths = []
    for f in range(count):
        path = tmp_path / f"part-{f}.tfrecord"
        with tf.io.TFRecordWriter(str(path)) as writer:
            for i in range(per_file):
                writer.write(f"{f}:{i}".encode())
        paths.append(str(path))
    return paths


def _elements(dataset):
    element = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        return [e.decode() if isinstance(e, bytes) else e for e in drain(tf, sess, element)]


def _records(values):
    return sorted({v.split(":")[0] for v in values})


def test_file_policy_shards_the_file_list(tmp_path, caplog):
    _shards(tmp_path, 4)
    caplog.set_level(logging.INFO, logger="flowmesh")  # whatever verbosity an earlier test left
    with tf.Graph().as_default():
        files = tf.data.Dataset.list_files(str(tmp_path / "part-*.tfrecord"), shuffle=True, seed=3)
        dataset = files.interleave(tf.data.TFRecordDataset, cycle_length=2).map(lambda s: s)
        mine = tf.data.experimental.auto_shard(dataset, num_workers=2, index=1)
        assert _records(_elements(mine)) == ["1", "3"]
    assert "auto-shard: FILE policy: worker 1 of 2 reads 2 of 4 files" in caplog.text


def test_file_policy_on_a_reader_with_its_own_list(tmp_path, caplog):
    paths = _shards(tmp_path, 3)
    caplog.set_level(logging.INFO, logger="flowmesh")  # whatever verbosity an earlier test left
    with tf.Graph().as_default():
        dataset = tf.data.TFRecordDataset(paths).batch(2)
        mine = tf.data.experimental.auto_shard(dataset, num_workers=2, index=0)
        values = [v.decode() for batch in _elements(mine) for v in batch]
    assert _records(values) == ["0", "2"] and len(values) == 6
    assert "FILE policy: worker 0 of 2 reads 2 of 3 files" in caplog.text


def test_data_policy_with_fewer_files_than_workers(tmp_path, caplog, monkeypatch):
    paths = _shards(tmp_path, 1, per_file=7)
    config = {"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 1}}
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))
    caplog.set_level(logging.INFO, logger="flowmesh")  # whatever verbosity an earlier test left
    with tf.Graph().as_default():
        mine = tf.data.experimental.auto_shard(tf.data.TFRecordDataset(paths))
        assert _elements(mine) == ["0:1", "0:3", "0:5"]
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = \
            tf.data.experimental.AutoShardPolicy.FILE
        with pytest.raises(tf.errors.InvalidArgumentError, match="at least 2 input files"):
            tf.data.experimental.auto_shard(tf.data.TFRecordDataset(paths).with_options(options))
    assert "auto-shard: DATA policy (1 files for 2 workers): worker 1 of 2" in caplog.text


def test_hint_policy_fills_in_shard_hints():
    x = tf.data.experimental
    with tf.Graph().as_default():
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = x.AutoShardPolicy.HINT
        hinted = tf.data.Dataset.range(10).shard(x.SHARD_HINT, x.SHARD_HINT).map(lambda v: v * 2)
        mine = x.auto_shard(hinted.with_options(options), num_workers=3, index=1)
        unfilled = tf.data.make_one_shot_iterator(hinted).get_next()
        element = tf.data.make_one_shot_iterator(mine).get_next()
        with tf.Session() as sess:
            assert drain(tf, sess, element) == [2, 8, 14]
            with pytest.raises(tf.errors.InvalidArgumentError, match="AutoShardPolicy.HINT"):
                sess.run(unfilled)
