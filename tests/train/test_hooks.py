"""The standard session hooks, each in a MonitoredSession."""

from __future__ import annotations

import logging
import os
import threading
import time
import types

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.train import basic_session_run_hooks


def _counter():
    """A global step and a train op incrementing it; returns (step, train_op, x)."""
    step = tf.train.get_or_create_global_step()
    x = tf.Variable(1.0, name="x")
    train = tf.group(step.assign_add(1), x.assign(x * 2.0))
    return step, train, x


def _run(hooks, n=None, **kwargs):
    count = 0
    with tf.train.MonitoredSession(hooks=hooks, **kwargs) as sess:
        while not sess.should_stop() and (n is None or count < n):
            sess.run(tf.get_default_graph().get_operation_by_name("group_deps"))
            count += 1
    return count


def test_stop_at_step_hook_num_steps_and_last_step():
    _counter()
    assert _run([tf.train.StopAtStepHook(num_steps=4)]) == 4
    assert _run([tf.train.StopAtStepHook(last_step=3)]) == 3  # fresh session, step starts at 0
    with pytest.raises(ValueError, match="One of num_steps or last_step"):
        tf.train.StopAtStepHook()
    with pytest.raises(ValueError, match="Only one of"):
        tf.train.StopAtStepHook(num_steps=1, last_step=2)


def test_hooks_need_a_global_step():
    tf.Variable(1.0)
    with pytest.raises(RuntimeError, match="Global step should be created to use StopAtStepHook"):
        tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(num_steps=1)])


def test_checkpoint_saver_hook_by_steps_with_listener(tmp_path):
    _counter()
    events = []

    class Listener(tf.train.CheckpointSaverListener):
        def before_save(self, session, step):
            events.append(("before", step))

        def after_save(self, session, step):
            events.append(("after", step))
            return step >= 4  # ask to stop after the checkpoint of step 4

        def end(self, session, step):
            events.append(("end", step))

    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2, listeners=[Listener()],
                                        saver=tf.train.Saver(max_to_keep=10))
    assert _run([hook]) == 4
    assert events == [("before", 0), ("after", 0), ("before", 2), ("after", 2), ("before", 4),
                      ("after", 4), ("end", 4)]
    assert [int(p.rsplit("-", 1)[1]) for p in
            tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths] == [0, 2, 4]
    assert os.path.exists(str(tmp_path / "model.ckpt-4.meta"))


def test_checkpoint_saver_hook_by_seconds_and_at_end(tmp_path):
    _counter()
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_secs=3600, checkpoint_basename="m",
                                        scaffold=tf.train.Scaffold(saver=tf.train.Saver(max_to_keep=10)))
    assert _run([hook], n=3) == 3
    kept = [int(p.rsplit("-", 1)[1]) for p in tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths]
    assert kept == [0, 3]  # at creation and at the end; an hour never passed
    with pytest.raises(ValueError, match="both saver and scaffold"):
        tf.train.CheckpointSaverHook(str(tmp_path), save_secs=1, saver=object(), scaffold=object())
    with pytest.raises(ValueError, match="Either every_steps or every_secs"):
        tf.train.CheckpointSaverHook(str(tmp_path))


def test_logging_tensor_hook(caplog):
    caplog.set_level(logging.INFO, logger="flowmesh.train")
    step, _, x = _counter()
    hook = tf.train.LoggingTensorHook({"x": x, "step": "global_step/read"}, every_n_iter=2, at_end=True)
    _run([hook], n=5)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("step =")]
    assert len(lines) == 4  # iterations 0, 2, 4 and the end
    assert lines[0] == "step = 1, x = 2.0" and lines[-1].startswith("step = 5, x = 32.0")
    caplog.clear()
    formatted = tf.train.LoggingTensorHook([x], at_end=True, formatter=lambda v: f"X is {v['x:0']}")
    _run([formatted], n=2)
    assert [r.getMessage() for r in caplog.records if "X is" in r.getMessage()] == ["X is 4.0"]
    with pytest.raises(ValueError, match="exactly one of every_n_iter and every_n_secs"):
        tf.train.LoggingTensorHook([x])
    with pytest.raises(ValueError, match="invalid every_n_iter"):
        tf.train.LoggingTensorHook([x], every_n_iter=0)


def test_nan_tensor_hook_raises_or_stops():
    step = tf.train.get_or_create_global_step()
    loss = tf.Variable(1.0, name="loss")
    train = tf.group(step.assign_add(1), loss.assign(tf.sqrt(loss - 1.5)))
    with pytest.raises(tf.train.NanLossDuringTrainingError), tf.train.MonitoredSession(
            hooks=[tf.train.NanTensorHook(loss)]) as sess:
        sess.run(train)
    with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss, fail_on_nan_loss=False)]) as sess:
        sess.run(train)
        assert sess.should_stop()


def test_step_counter_hook_measures_rate_and_warns_when_stuck(caplog):
    caplog.set_level(logging.INFO, logger="flowmesh.train")
    step, train, _ = _counter()
    hook = tf.train.StepCounterHook(every_n_steps=2)
    _run([hook], n=7)
    assert [s for s, _ in hook.steps_per_sec] == [3, 5, 7] and all(r > 0 for _, r in hook.steps_per_sec)
    assert any(r.getMessage().startswith("global_step/sec:") for r in caplog.records)
    tf.reset_default_graph()
    tf.train.get_or_create_global_step()
    stuck = tf.Variable(0.0)
    with tf.train.MonitoredSession(hooks=[tf.train.StepCounterHook(every_n_steps=1)]) as sess:
        for _ in range(3):
            sess.run(stuck)
    assert any("has not been increased" in r.getMessage() for r in caplog.records)
    with pytest.raises(ValueError, match="exactly one"):
        tf.train.StepCounterHook(every_n_steps=None)


def test_final_ops_and_feed_fn_hooks():
    step = tf.train.get_or_create_global_step()
    p = tf.placeholder(tf.float32, [], name="p")
    total = tf.Variable(0.0, name="total")
    add = tf.group(total.assign_add(p), step.assign_add(1))
    values = iter([1.0, 2.0, 3.0])
    final = tf.train.FinalOpsHook(total)
    feed = tf.train.FeedFnHook(lambda: {p: next(values)})
    with tf.train.MonitoredSession(hooks=[final, feed]) as sess:
        for _ in range(3):
            sess.run(add)
        with pytest.raises(RuntimeError, match="fed by a SessionRunHook and user"):
            sess.run(add, feed_dict={p: 5.0})
    assert final.final_ops_values == 6.0


@pytest.mark.timeout(60)
def test_global_step_waiter_hook_waits_for_the_step():
    step = tf.train.get_or_create_global_step()
    bump = step.assign_add(1)
    hook = tf.train.GlobalStepWaiterHook(wait_until_step=2, poll_secs=0.01)
    bumped = []

    class Chief(tf.train.SessionRunHook):  # plays the chief: advances the step while we wait
        def before_run(self, run_context):
            def advance():
                for _ in range(2):
                    time.sleep(0.05)
                    bumped.append(int(run_context.session.run(bump)))
            threading.Thread(target=advance).start()

    with tf.train.MonitoredSession(hooks=[Chief(), hook]) as sess:
        assert sess.run(step) == 2  # the first step ran only once the global step reached 2
    assert bumped == [1, 2]
    with tf.train.MonitoredSession(hooks=[tf.train.GlobalStepWaiterHook(wait_until_step=0)]) as sess:
        sess.run(step)


def test_second_or_step_timer(monkeypatch):
    timer = tf.train.SecondOrStepTimer(every_steps=3)
    assert timer.should_trigger_for_step(0)
    assert timer.update_last_triggered_step(0) == (None, None)
    assert not timer.should_trigger_for_step(2) and timer.should_trigger_for_step(3)
    clock = [1000.0]  # the timer's clock, advanced by the test (no sleep to race a load)
    monkeypatch.setattr(basic_session_run_hooks, "time", types.SimpleNamespace(time=lambda: clock[0]))
    timer = tf.train.SecondOrStepTimer(every_secs=0.05)
    timer.update_last_triggered_step(1)
    clock[0] += 0.049
    assert not timer.should_trigger_for_step(2)
    clock[0] += 0.002
    assert timer.should_trigger_for_step(2)
    elapsed, steps = timer.update_last_triggered_step(2)
    assert elapsed == pytest.approx(0.051) and steps == 1
    with pytest.raises(ValueError, match="Can not provide both"):
        tf.train.SecondOrStepTimer(every_secs=1, every_steps=1)


def test_two_hooks_feeding_the_same_tensor_is_an_error():
    tf.train.get_or_create_global_step()
    p = tf.placeholder(tf.float32, [])
    hooks = [tf.train.FeedFnHook(lambda: {p: 1.0}), tf.train.FeedFnHook(lambda: {p: 2.0})]
    with pytest.raises(RuntimeError, match="fed by two hooks"), tf.train.MonitoredSession(hooks=hooks) as sess:
        sess.run(p)
    assert np.isfinite(1.0)
