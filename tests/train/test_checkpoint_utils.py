"""``tf.train.init_from_checkpoint`` with TensorFlow's checkpoints and flowmesh's, compared
with TensorFlow's own ``init_from_checkpoint`` on the same files."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

W = np.arange(6, dtype=np.float32).reshape(2, 3)
TABLE = np.arange(24, dtype=np.float32).reshape(8, 3)


def _rows(shape, dtype=None, partition_info=None):
    start = partition_info.var_offset[0] if partition_info is not None else 0
    return TABLE[start:start + shape[0]]


def _write(lib, path: str, **saver_kwargs) -> str:
    with lib.Graph().as_default() as g:
        with lib.variable_scope("old"):
            lib.get_variable("w", initializer=lib.constant(W))
            with lib.variable_scope("emb", partitioner=lib.fixed_size_partitioner(2)):
                lib.get_variable("table", shape=[8, 3], initializer=_rows)
        lib.get_variable("step", initializer=lib.constant(5, lib.int64), dtype=lib.int64)
        with lib.Session(graph=g) as sess:
            sess.run(lib.global_variables_initializer())
            return lib.train.Saver(**saver_kwargs).save(sess, path)


def _load(lib, ckpt: str, assignment_map_fn):
    with lib.Graph().as_default() as g:
        with lib.variable_scope("new"):
            w = lib.get_variable("w", shape=[2, 3], initializer=lib.zeros_initializer())
            with lib.variable_scope("emb", partitioner=lib.fixed_size_partitioner(4)):
                table = lib.get_variable("table", shape=[8, 3], initializer=lib.zeros_initializer())
        step = lib.get_variable("count", shape=[], dtype=lib.int64, initializer=lib.zeros_initializer())
        lib.train.init_from_checkpoint(ckpt, assignment_map_fn(step))
        config = session_config(lib) if lib is not tf else None
        with lib.Session(graph=g, config=config) as sess:
            sess.run(lib.global_variables_initializer())
            return sess.run([w, lib.concat(list(table), 0), step])


@pytest.mark.parametrize("writer", ["tensorflow", "flowmesh-v2", "flowmesh"])
def test_init_from_checkpoint_matches_tensorflow(tmp_path, writer):
    tf1 = require_tensorflow()
    path = str(tmp_path / "ckpt" / "m")
    if writer == "tensorflow":
        (tmp_path / "ckpt").mkdir()
        ckpt = _write(tf1, path)
    else:
        ckpt = _write(tf, path, **({"write_version": tf.train.SaverDef.V2} if writer == "flowmesh-v2" else {}))
    mapping = lambda step: {"old/": "new/", "step": step}  # noqa: E731
    ours = _load(tf, ckpt, mapping)
    np.testing.assert_array_equal(ours[0], W)
    np.testing.assert_array_equal(ours[1], TABLE)
    assert ours[2] == 5
    if writer != "flowmesh":  # TensorFlow reads only its own format
        theirs = _load(tf1, ckpt, mapping)
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(a, b)


def test_init_from_checkpoint_reports_missing_tensors(tmp_path):
    ckpt = _write(tf, str(tmp_path / "m"))
    with tf.Graph().as_default():
        tf.get_variable("v", shape=[2], initializer=tf.zeros_initializer())
        with pytest.raises(ValueError, match="Tensor nope is not found"):
            tf.train.init_from_checkpoint(ckpt, {"nope": "v"})
        with pytest.raises(ValueError, match="doesn't match"):
            tf.train.init_from_checkpoint(str(tmp_path), {"old/w": "v"})
