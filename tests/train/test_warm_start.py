"""tf.train.warm_start / VocabInfo from a checkpoint TensorFlow 2.21 wrote: the variables
flowmesh initializes equal those TensorFlow's own warm_start gives for the same graph
(row remapping with OOV buckets, column remapping, partitioned embeddings, renames)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

OLD_VOCAB = ["apple", "banana", "cherry", "date", "elder"]
NEW_VOCAB = ["cherry", "fig", "apple", "elder", "grape", "banana"]
OLD_CLASSES = ["a", "b", "c"]
NEW_CLASSES = ["c", "x", "a", "b"]
EMB = np.arange(20, dtype=np.float32).reshape(5, 4) / 10.0
OUT = np.arange(12, dtype=np.float32).reshape(4, 3) - 5.0
BIAS = np.array([0.5, -0.5], np.float32)


@pytest.fixture(scope="module")
def tf_checkpoint(tmp_path_factory):
    """A checkpoint written by TensorFlow's Saver, and the vocabulary files."""
    tf1 = require_tensorflow()
    root = tmp_path_factory.mktemp("warm")
    for name, words in (("old", OLD_VOCAB), ("new", NEW_VOCAB), ("old_cls", OLD_CLASSES),
                        ("new_cls", NEW_CLASSES)):
        (root / f"{name}.txt").write_text("\n".join(words) + "\n")
    with tf1.Graph().as_default() as g, tf1.Session(graph=g, config=session_config(tf1)) as s:
        tf1.get_variable("emb", initializer=EMB)
        tf1.get_variable("out", initializer=OUT)
        tf1.get_variable("old_bias", initializer=BIAS)
        s.run(tf1.global_variables_initializer())
        prefix = tf1.train.Saver().save(s, str(root / "model.ckpt"))
    return root, prefix


def _warm_started(t, root, prefix, partitioned):
    partitioner = t.fixed_size_partitioner(2) if partitioned else None
    emb = t.get_variable("emb", [len(NEW_VOCAB) + 2, 4], partitioner=partitioner,
                         initializer=t.ones_initializer())
    out = t.get_variable("out", [4, len(NEW_CLASSES) + 1], initializer=t.ones_initializer())
    bias = t.get_variable("bias", [2], initializer=t.zeros_initializer())
    t.train.warm_start(
        prefix, vars_to_warm_start=".*",
        var_name_to_vocab_info={
            "emb": t.train.VocabInfo(str(root / "new.txt"), len(NEW_VOCAB), 2,
                                     str(root / "old.txt"), old_vocab_size=4,
                                     backup_initializer=t.random_uniform_initializer(-1.0, -1.0)),
            "out": t.train.VocabInfo(str(root / "new_cls.txt"), len(NEW_CLASSES), 1,
                                     str(root / "old_cls.txt"), axis=1)},
        var_name_to_prev_var_name={"bias": "old_bias"})
    return [t.concat(list(emb), 0) if partitioned else emb, out, bias]


@pytest.mark.parametrize("partitioned", [False, True], ids=["plain", "partitioned"])
def test_warm_start_matches_tensorflow(tf_checkpoint, partitioned):
    tf1 = require_tensorflow()
    root, prefix = tf_checkpoint
    values = []
    for t, config in ((tf, None), (tf1, session_config(tf1))):
        with t.Graph().as_default() as g, t.Session(graph=g, config=config) as sess:
            fetch = _warm_started(t, root, prefix, partitioned)
            sess.run(t.global_variables_initializer())
            values.append(sess.run(fetch))
    for ours, theirs in zip(*values):
        np.testing.assert_array_equal(ours, theirs)
    emb = values[0][0]
    np.testing.assert_array_equal(emb[0], EMB[2])          # cherry kept its row
    np.testing.assert_array_equal(emb[3], -np.ones(4))     # elder is past old_vocab_size
    np.testing.assert_array_equal(emb[6:], -np.ones((2, 4)))  # OOV buckets: backup init


def test_warm_start_errors_name_what_to_fix(tf_checkpoint):
    root, prefix = tf_checkpoint
    with tf.Graph().as_default():
        tf.get_variable("bias", [2])
        with pytest.raises(ValueError, match=r"var_name_to_prev_var_name that were not used: "
                                             r"\['biass'\].*viable variable names: \['bias'\]"):
            tf.train.warm_start(prefix, var_name_to_prev_var_name={"bias": "old_bias",
                                                                   "biass": "x"})
        with pytest.raises(ValueError, match="only supported values for the axis"):
            tf.train.VocabInfo("a", 1, 0, "b", axis=2)
        with pytest.raises(ValueError, match="`vars_to_warm_start` must be"):
            tf.train.warm_start(prefix, vars_to_warm_start=3)
