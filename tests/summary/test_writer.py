"""Event files: written by flowmesh, read by TensorFlow and TensorBoard (and back)."""

from __future__ import annotations

import glob
import os
import socket

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.formats.tfrecord import encode_record
from flowmesh.protos.summary import Event
from flowmesh.testing.tf_oracle import require_tensorflow


def _event_files(logdir) -> list[str]:
    return sorted(glob.glob(os.path.join(str(logdir), "events.out.tfevents.*")))


def _write_training_run(logdir) -> None:
    x = tf.placeholder(tf.float32, [None], name="x")
    with tf.name_scope("train"):
        tf.summary.scalar("loss", tf.reduce_mean(tf.square(x)))
        tf.summary.histogram("x", x)
    merged = tf.summary.merge_all()
    with tf.Session() as sess, tf.summary.FileWriter(str(logdir), sess.graph, filename_suffix=".run") as writer:
        for step in range(5):
            writer.add_summary(sess.run(merged, {x: np.arange(step + 1, dtype=np.float32)}), step)
        manual = tf.Summary()
        manual.value.add(tag="eval/accuracy", simple_value=0.75)
        writer.add_summary(manual, 4)
        writer.add_session_log(tf.SessionLog(status=tf.SessionLog.STOP), 5)


def test_file_layout_and_our_own_reader(tmp_path) -> None:
    _write_training_run(tmp_path / "logs")
    (path,) = _event_files(tmp_path / "logs")
    assert os.path.basename(path).endswith(f".{socket.gethostname()}.run")
    events = list(tf.train.summary_iterator(path))
    assert events[0].file_version == "brain.Event:2"
    assert events[1].WhichOneof("what") == "graph_def"
    scalars = [(e.step, v.tag, v.simple_value) for e in events if e.summary for v in e.summary.value
               if v.HasField("simple_value")]
    expected = [(s, "train/loss", float(np.float32(np.mean(np.arange(s + 1) ** 2)))) for s in range(5)]
    assert scalars == expected + [(4, "eval/accuracy", 0.75)]
    histograms = [v.histo for e in events if e.summary for v in e.summary.value if v.HasField("histo")]
    assert [h.num for h in histograms] == [1, 2, 3, 4, 5] and histograms[-1].max == 4.0
    assert events[-1].session_log.status == tf.SessionLog.STOP and events[-1].step == 5


@pytest.mark.oracle
def test_tensorflow_and_tensorboard_read_our_event_files(tmp_path) -> None:
    tf1 = require_tensorflow()
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    _write_training_run(tmp_path)
    (path,) = _event_files(tmp_path)
    theirs = list(tf1.train.summary_iterator(path))
    assert theirs[0].file_version == "brain.Event:2" and len(theirs) == 9
    accumulator = EventAccumulator(str(tmp_path), size_guidance={"scalars": 0, "histograms": 0})
    accumulator.Reload()
    tags = accumulator.Tags()
    assert sorted(tags["scalars"]) == ["eval/accuracy", "train/loss"]
    assert tags["histograms"] == ["train/x"] and tags["graph"]
    loss = accumulator.Scalars("train/loss")
    assert [(e.step, round(e.value, 4)) for e in loss] == [(0, 0.0), (1, 0.5), (2, 1.6667), (3, 3.5), (4, 6.0)]
    assert accumulator.Histograms("train/x")[-1].histogram_value.num == 5
    graph = accumulator.Graph()
    assert {"x", "train/loss", "Merge/MergeSummary"} <= {node.name for node in graph.node}


@pytest.mark.oracle
def test_we_read_tensorflows_event_files(tmp_path) -> None:
    tf1 = require_tensorflow()
    with tf1.Graph().as_default() as graph:
        value = tf1.placeholder(tf1.float32, [None])
        merged = tf1.summary.merge([tf1.summary.scalar("mean", tf1.reduce_mean(value)),
                                    tf1.summary.histogram("values", value)])
        with tf1.Session() as sess:
            writer = tf1.summary.FileWriter(str(tmp_path), graph)
            for step in range(3):
                writer.add_summary(sess.run(merged, {value: [step, 2.0 * step]}), step)
            writer.close()
    (path,) = _event_files(tmp_path)
    events = list(tf.train.summary_iterator(path))
    means = [(e.step, e.summary.value[0].simple_value) for e in events if e.summary]
    assert means == [(0, 0.0), (1, 1.5), (2, 3.0)]
    assert [e.summary.value[1].histo.sum for e in events if e.summary] == [0.0, 3.0, 6.0]


def test_flush_close_and_reopen(tmp_path) -> None:
    writer = tf.summary.FileWriter(str(tmp_path), flush_secs=3600)
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1.0)]), 1)
    writer.flush()
    (first,) = _event_files(tmp_path)
    assert len(list(tf.train.summary_iterator(first))) == 2
    writer.close()
    writer.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed; call reopen"):
        writer.add_summary(tf.Summary(), 2)
    writer.reopen()
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="b", simple_value=2.0)]), 2)
    writer.close()
    assert len(_event_files(tmp_path)) == 2  # a new file, never the old one truncated
    tags = [v.tag for f in _event_files(tmp_path) for e in tf.train.summary_iterator(f) if e.summary
            for v in e.summary.value]
    assert sorted(tags) == ["a", "b"]
    with pytest.raises(TypeError, match="tf.Summary or its serialized bytes"):
        writer.add_summary(3.0)


def test_a_corrupted_record_is_reported_and_a_torn_tail_ends_reading(tmp_path) -> None:
    good = [encode_record(Event(step=i, file_version="v").SerializeToString()) for i in range(3)]
    torn = tmp_path / "events.out.tfevents.torn"
    torn.write_bytes(b"".join(good) + good[0][:10])
    assert [e.step for e in tf.train.summary_iterator(str(torn))] == [0, 1, 2]
    broken = bytearray(b"".join(good))
    broken[len(good[0]) + 14] ^= 0xFF  # a byte of the second record's data
    corrupt = tmp_path / "events.out.tfevents.corrupt"
    corrupt.write_bytes(bytes(broken))
    with pytest.raises(tf.errors.DataLossError, match="Corrupted record data"):
        list(tf.train.summary_iterator(str(corrupt)))


def test_proto_messages_round_trip_and_reject_garbage() -> None:
    summary = tf.Summary()
    summary.value.add(tag="zero", simple_value=0.0)  # a oneof member is written even when 0
    summary.value.add(tag="h", histo=tf.HistogramProto(min=-1, max=1, num=2, bucket_limit=[0, 1], bucket=[1, 1]))
    event = tf.Event(wall_time=1.5, step=-3, summary=summary)
    again = tf.Event.FromString(event.SerializeToString())
    assert again == event and again.summary.value[0].HasField("simple_value")
    assert again.WhichOneof("what") == "summary"
    with pytest.raises(AttributeError, match="has no field 'tags'"):
        tf.Summary.Value(tags="x")
    with pytest.raises(tf.errors.DataLossError, match="Cannot parse Summary"):
        tf.Summary.FromString(b"\x0a\xff\x01")


def _traced_step(logdir) -> tf.RunMetadata:
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        w = tf.Variable(tf.ones([3, 1]), name="w")
        loss = tf.reduce_sum(tf.matmul(x, w), name="loss")
        with tf.Session() as sess:
            sess.run(w.initializer)
            metadata = tf.RunMetadata()
            sess.run(loss, {x: np.ones([2, 3], np.float32)},
                     options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=metadata)
    writer = tf.summary.FileWriter(str(logdir))
    writer.add_run_metadata(metadata, "step7", global_step=7)
    writer.close()
    return metadata


def test_add_run_metadata_writes_a_tagged_event_with_the_step_stats(tmp_path) -> None:
    metadata = _traced_step(tmp_path)
    (path,) = _event_files(tmp_path)
    (event,) = [e for e in tf.train.summary_iterator(path) if e.WhichOneof("what") == "tagged_run_metadata"]
    assert event.step == 7 and event.tagged_run_metadata.tag == "step7"
    back = tf.RunMetadata()
    back.ParseFromString(event.tagged_run_metadata.run_metadata)
    ours = {n.node_name: n for d in metadata.step_stats.dev_stats for n in d.node_stats}
    theirs = {n.node_name: n for d in back.step_stats.dev_stats for n in d.node_stats}
    assert "loss" in theirs and set(theirs) == set(ours)
    assert theirs["loss"].op_type == ours["loss"].op_type == "Sum"
    assert theirs["loss"].all_end_rel_micros == ours["loss"].all_end_rel_micros


@pytest.mark.oracle
def test_tensorflow_and_tensorboard_read_our_run_metadata(tmp_path) -> None:
    tf1 = require_tensorflow().compat.v1
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    _traced_step(tmp_path)
    (path,) = _event_files(tmp_path)
    (event,) = [e for e in tf1.train.summary_iterator(path) if e.HasField("tagged_run_metadata")]
    theirs = tf1.RunMetadata.FromString(event.tagged_run_metadata.run_metadata)
    nodes = {n.node_name: n for d in theirs.step_stats.dev_stats for n in d.node_stats}
    assert "loss" in nodes and nodes["loss"].timeline_label.startswith("loss = Sum(")
    assert all(d.device.startswith("/job:localhost/replica:0/task:0/device:") for d in theirs.step_stats.dev_stats)
    accumulator = EventAccumulator(str(tmp_path))
    accumulator.Reload()
    assert accumulator.Tags()["run_metadata"] == ["step7"]
    assert accumulator.RunMetadata("step7").step_stats.dev_stats
