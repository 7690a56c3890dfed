"""tf.debugging.experimental.enable_dump_debug_info writes the graphs and per-execution output
summaries of the ops created while it is on; disable stops it and flushes."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.protos.graph import GraphDef


def records(dump_root):
    with open(os.path.join(dump_root, "graph_execution_traces.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.fixture(autouse=True)
def _disable():
    yield
    tf.debugging.experimental.disable_dump_debug_info()


def test_full_health_summaries_graph_and_filtering(tmp_path):
    root = str(tmp_path / "dump")
    with tf.Graph().as_default():
        before = tf.constant([1.0])
        writer = tf.debugging.experimental.enable_dump_debug_info(root, tensor_debug_mode="FULL_HEALTH",
                                                                  op_regex="(Const|RealDiv|Log)")
        assert tf.debugging.experimental.enable_dump_debug_info(root, "FULL_HEALTH") is writer
        x = tf.constant([1.0, 0.0, -2.0, 4.0], name="x")
        y = tf.math.log(x, name="y")
        z = tf.math.divide(x, 0.0, name="z")
        n = tf.cast(x, tf.int32, name="n")
        with tf.Session() as sess:
            sess.run([y, z, n, before])
        writer.FlushExecutionFiles()
        found = {r["op_name"]: r for r in records(root)}
    assert "n" not in found and "Const" not in found  # Cast does not match; before was created earlier
    log = found["y"]
    assert log["op_type"] == "Log" and log["dtype"] == "float32" and log["shape"] == [4]
    assert (log["size"], log["nan"], log["neg_inf"], log["pos_inf"]) == (4, 1, 1, 0)
    assert (log["negative"], log["zero"], log["positive"]) == (0, 1, 1) and log["rank"] == 1
    assert (found["z"]["pos_inf"], found["z"]["neg_inf"], found["z"]["nan"]) == (2, 1, 1)
    graph = GraphDef()
    with open(os.path.join(root, "graphs", "graph_0.pb"), "rb") as f:
        graph.ParseFromString(f.read())
    assert {"x", "y", "z"} <= {node.name for node in graph.node}
    with open(os.path.join(root, "metadata.json"), encoding="utf-8") as f:
        assert json.load(f)["tensor_debug_mode"] == "FULL_HEALTH"


def test_full_tensor_circular_buffer_and_disable(tmp_path):
    root = str(tmp_path / "dump")
    with tf.Graph().as_default():
        tf.debugging.experimental.enable_dump_debug_info(root, "FULL_TENSOR", circular_buffer_size=2,
                                                        tensor_dtypes=[tf.int32])
        counter = tf.placeholder(tf.int32, [3], name="counter")
        doubled = tf.multiply(counter, 2, name="doubled")
        ignored = tf.constant(1.5, name="ignored")
        with tf.Session() as sess:
            for step in range(3):
                sess.run([doubled, ignored], {counter: np.arange(3, dtype=np.int32) + step})
        assert records(root) == []  # buffered until flushed
        tf.debugging.experimental.disable_dump_debug_info()
        kept = records(root)
        assert len(kept) == 2 and all(r["dtype"] == "int32" for r in kept)
        assert kept[-1]["op_name"] == "doubled" and kept[-1]["value"] == [4, 6, 8]
        assert kept[0]["seq"] + 1 == kept[1]["seq"]
        after = tf.multiply(counter, 3, name="after")
        assert not after.op.attrs.get("_debug_dump")


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(ValueError, match="Valid options are: NO_TENSOR"):
        tf.debugging.experimental.enable_dump_debug_info(str(tmp_path), "SOME")
    with pytest.raises(ValueError, match="Empty or None dump root"):
        tf.debugging.experimental.enable_dump_debug_info("")
    with pytest.raises(TypeError, match="tensor_dtypes"):
        tf.debugging.experimental.enable_dump_debug_info(str(tmp_path), tensor_dtypes=3)
    tf.debugging.experimental.enable_dump_debug_info(str(tmp_path / "a"))
    with pytest.raises(ValueError, match="disable_dump_debug_info"):
        tf.debugging.experimental.enable_dump_debug_info(str(tmp_path / "b"))
