"""Hooks that write event files: SummarySaverHook, StepCounterHook, CheckpointSaverHook,
and what MonitoredTrainingSession adds for the chief."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import flowmesh as tf


@pytest.fixture(autouse=True)
def fresh_writers():
    tf.summary.FileWriterCache.clear()
    yield
    tf.summary.FileWriterCache.clear()


def _events(logdir) -> list:
    files = sorted(glob.glob(os.path.join(str(logdir), "events.out.tfevents.*")))
    return [e for f in files for e in tf.train.summary_iterator(f)]


def _scalars(events, tag: str) -> list[tuple[int, float]]:
    return [(e.step, v.simple_value) for e in events if e.summary for v in e.summary.value if v.tag == tag]


def _model():
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(4.0, name="w")
    loss = tf.square(w)
    tf.summary.scalar("loss", loss)
    tf.summary.histogram("weights", w)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return loss, train


def test_monitored_training_session_writes_summaries_rate_graph_and_checkpoints(tmp_path) -> None:
    loss, train = _model()
    hooks = [tf.train.StopAtStepHook(last_step=10)]
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=hooks, save_summaries_steps=3,
                                           log_step_count_steps=4, save_checkpoint_steps=5) as sess:
        while not sess.should_stop():
            sess.run(train)
    events = _events(tmp_path)
    # The summary op (every summary of the graph) ran at the first step and every 3rd after.
    losses = _scalars(events, "loss")
    assert [s for s, _ in losses] == [1, 4, 7, 10]
    np.testing.assert_allclose([v for _, v in losses], [16 * 0.64 ** (s - 1) for s in (1, 4, 7, 10)], rtol=1e-5)
    assert {v.tag for e in events if e.summary for v in e.summary.value if v.HasField("histo")} == {"weights"}
    # The step rate, a START at the first step, the graph, a CHECKPOINT after each save.
    assert [s for s, _ in _scalars(events, "global_step/sec")] == [5, 9]  # timed from step 1
    logs = [(e.step, e.session_log.status) for e in events if e.session_log is not None]
    assert [s for s, status in logs if status == tf.SessionLog.START] == [1]
    assert [s for s, status in logs if status == tf.SessionLog.CHECKPOINT] == [0, 5, 10]
    assert any(e.WhichOneof("what") == "graph_def" for e in events)


def test_no_summary_dir_or_zero_periods_write_nothing(tmp_path) -> None:
    _, train = _model()
    with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
        while not sess.should_stop():
            sess.run(train)
    with tf.train.MonitoredTrainingSession(summary_dir=str(tmp_path), save_summaries_steps=0,
                                           log_step_count_steps=0,
                                           hooks=[tf.train.StopAtStepHook(last_step=6)]) as sess:
        while not sess.should_stop():
            sess.run(train)
    assert _events(tmp_path) == []


def test_summary_saver_hook_with_its_own_op_and_writer(tmp_path) -> None:
    loss, train = _model()
    only_loss = tf.summary.scalar("only_loss", loss, collections=[])
    writer = tf.summary.FileWriter(str(tmp_path))
    hook = tf.train.SummarySaverHook(save_steps=2, summary_writer=writer, summary_op=only_loss)
    with tf.train.SingularMonitoredSession(hooks=[hook, tf.train.StopAtStepHook(last_step=5)]) as sess:
        while not sess.should_stop():
            sess.run(train)
    writer.close()
    events = _events(tmp_path)
    assert [s for s, _ in _scalars(events, "only_loss")] == [1, 3, 5]
    assert _scalars(events, "loss") == []


def test_summary_saver_hook_arguments() -> None:
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        tf.train.SummarySaverHook(save_steps=1)
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        tf.train.SummarySaverHook(save_steps=1, scaffold=tf.train.Scaffold(), summary_op=tf.constant(""))
    with pytest.raises(ValueError, match="Either every_steps or every_secs"):
        tf.train.SummarySaverHook(summary_op=tf.constant(""))


def test_supervisor_writes_summaries_step_rate_and_a_stop_log(tmp_path) -> None:
    import time

    loss, train = _model()
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_summaries_secs=0.05, save_model_secs=0)
    with sv.managed_session() as sess:
        deadline = time.monotonic() + 20
        # The summary and step-rate threads run every 50 ms each; the rate needs two passes.
        while (len(_scalars(_events(tmp_path), "loss")) < 2
               or not _scalars(_events(tmp_path), "global_step/sec")):
            assert time.monotonic() < deadline, "the supervisor wrote no summaries or step rate"
            sess.run(train)
            sv.summary_writer.flush()
            time.sleep(0.01)
        sv.summary_computed(sess, tf.Summary(value=[tf.Summary.Value(tag="manual", simple_value=1.0)]))
    events = _events(tmp_path)
    assert any(e.WhichOneof("what") == "graph_def" for e in events)
    assert _scalars(events, "global_step/sec") and _scalars(events, "manual")
    assert events[-1].session_log.status == tf.SessionLog.STOP
    worker = tf.train.Supervisor(logdir=str(tmp_path), is_chief=False, summary_op=None, graph=tf.Graph())
    assert worker.summary_writer is None
    with pytest.raises(RuntimeError, match="requires a summary writer"):
        worker.summary_computed(None, tf.Summary())
