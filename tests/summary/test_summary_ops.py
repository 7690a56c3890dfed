"""tf.summary ops against TensorFlow: names, tags and the serialized bytes themselves."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

VALUES = {
    "normal": np.random.RandomState(0).randn(1000).astype(np.float32),
    "ints": np.array([[0, 1, 1, 2], [3, 5, 8, -13]], np.int32),
    "one": np.array(7.5, np.float64),
    "zeros": np.zeros([3, 2], np.float32),
    "empty": np.zeros([0], np.float32),
    "tiny and huge": np.array([1e-15, -1e-13, 3e19, -2e25, 0.5], np.float64),
}


def _build(lib: Any, values: dict[str, np.ndarray]) -> tuple[dict[str, Any], Any]:
    """The same summaries in flowmesh or TensorFlow: name scopes, a family, a duplicate name."""
    out = {}
    with lib.name_scope("train"):
        out["loss"] = lib.summary.scalar("loss", lib.constant(0.25))
        out["loss again"] = lib.summary.scalar("loss", lib.constant(-3, dtype=lib.int64))
        out["odd name"] = lib.summary.scalar("a b:c", lib.constant(1.0))
    out["family"] = lib.summary.scalar("rate", lib.constant(2.0), family="opt")
    for name, v in values.items():
        out[f"histogram {name}"] = lib.summary.histogram(name.replace(" ", "_"), lib.constant(v))
    merged = lib.summary.merge_all()
    return out, merged


@pytest.mark.oracle
def test_summaries_match_tensorflow_byte_for_byte() -> None:
    tf1 = require_tensorflow()
    ours, our_merged = _build(tf, VALUES)
    with tf.Session() as sess:
        mine = sess.run({**ours, "merged": our_merged})
    with tf1.Graph().as_default():
        theirs, their_merged = _build(tf1, VALUES)
        with tf1.Session(config=session_config(tf1)) as sess:
            ref = sess.run({**theirs, "merged": their_merged})
    assert {k: t.op.name for k, t in ours.items()} == {k: t.op.name for k, t in theirs.items()}
    for key, expected in ref.items():
        assert mine[key] == expected, (key, tf.Summary.FromString(mine[key]), tf1.Summary.FromString(expected))


def test_tags_follow_name_scopes_and_families() -> None:
    with tf.name_scope("eval"):
        s = tf.summary.scalar("accuracy", tf.constant(0.5), family="metrics")
    assert s.op.name == "eval/metrics/accuracy"
    with tf.Session() as sess:
        value = tf.Summary.FromString(sess.run(s)).value[0]
    assert (value.tag, value.simple_value) == ("metrics/eval/metrics/accuracy", 0.5)
    assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [s]


def test_merge_all_without_summaries_is_none_and_collections_are_honoured() -> None:
    assert tf.summary.merge_all() is None
    s = tf.summary.scalar("x", tf.constant(1.0), collections=["mine"])
    assert tf.summary.merge_all() is None and tf.summary.merge_all("mine") is not None
    assert tf.get_collection("mine") == [s]


def test_bad_values_fail_clearly() -> None:
    with pytest.raises(ValueError, match="needs a scalar, got shape"):
        tf.summary.scalar("v", tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="real-valued"):
        tf.summary.histogram("s", tf.constant(["a"]))
    x = tf.placeholder(tf.float32)
    scalar = tf.summary.scalar("fed", x)
    hist = tf.summary.histogram("weights", x)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"tags and values are not the same shape: \[\] != \[2\]"):
            sess.run(scalar, {x: [1.0, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Nan in summary histogram for: weights"):
            sess.run(hist, {x: [1.0, np.nan]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Infinity in summary histogram for: weights"):
            sess.run(hist, {x: [np.inf]})
        assert sess.run(scalar, {x: 3.0})  # the session keeps working


def test_merging_a_tag_twice_is_an_error() -> None:
    a = tf.summary.scalar("same", tf.constant(1.0))
    b = tf.summary.scalar("same", tf.constant(2.0), family="f")
    c = tf.summary.merge([a, a])
    with tf.Session() as sess:
        merged = tf.Summary.FromString(sess.run(tf.summary.merge([a, b])))
        assert [v.tag for v in merged.value] == ["same", "f/f/same"]
        with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate tag same found in summary inputs"):
            sess.run(c)
    with pytest.raises(ValueError, match="at least one"):
        tf.summary.merge([])


def test_summaries_run_in_a_distributed_session() -> None:
    """Summary ops on a ps/worker cluster (in-process servers): values come from the ps."""
    from flowmesh.testing.cluster import cluster_dict

    spec = cluster_dict({"ps": 1, "worker": 1})
    servers = [tf.train.Server(spec, job_name=job, task_index=0) for job in ("ps", "worker")]
    try:
        with tf.device(tf.train.replica_device_setter(cluster=spec)):
            w = tf.Variable([1.0, -2.0, 3.0], name="w")
            merged = tf.summary.merge([tf.summary.scalar("norm", tf.norm(w)), tf.summary.histogram("w", w)])
        with tf.Session(servers[1].target) as sess:
            sess.run(w.initializer)
            values = tf.Summary.FromString(sess.run(merged)).value
        assert values[0].simple_value == pytest.approx(np.sqrt(14.0))
        assert (values[1].histo.num, values[1].histo.sum) == (3.0, 2.0)
    finally:
        for server in servers:
            server.stop()
