"""The chief/evaluator handshake of ``FLOWMESH_EVAL_CHECKPOINTS=chief`` (``estimator/_remote.py``)
over a real server: the chief keeps its server up until the evaluator says it is done, and
an evaluation that turns out to be the final one still gets its final export."""

from __future__ import annotations

import threading
import time

import pytest

import flowmesh as tf
from flowmesh.estimator._remote import PublishCheckpoints, RemoteCheckpoints, _ChiefState
from flowmesh.testing.cluster import cluster_dict


class _Estimator:  # what PublishCheckpoints reads of an Estimator
    class config:
        session_config = None

    @staticmethod
    def latest_checkpoint() -> str:
        return "/ckpt/model.ckpt-41"


@pytest.mark.timeout(60)
def test_chief_waits_for_an_evaluator_that_evaluated_the_last_checkpoint_before_it_was_final():
    cluster = tf.train.ClusterSpec(cluster_dict({"chief": 1}))
    server = tf.train.Server(cluster, job_name="chief", task_index=0)
    publisher = PublishCheckpoints(_Estimator(), server.target)
    evaluator = RemoteCheckpoints(server.target, [])
    publisher.after_save(None, 41)
    assert evaluator.poll() == ("/ckpt/model.ckpt-41", -1)  # not known to be final yet
    evaluator.report(41)  # the evaluator evaluates it...

    finished = threading.Event()
    chief = threading.Thread(target=lambda: (publisher.finish(41), finished.set()), daemon=True)
    chief.start()  # ...then the chief publishes 41 as final
    time.sleep(1.0)
    assert not finished.is_set(), "the chief left before the evaluator knew 41 was final"
    assert evaluator.poll() == ("/ckpt/model.ckpt-41", 41)
    evaluator.finish(41)
    assert finished.wait(10), "the chief did not see that the evaluator is done"
    chief.join(10)
    assert _ChiefState(server.target).read()[1:] == (41, 41, 41)


@pytest.mark.timeout(120)
def test_an_evaluation_that_turns_out_final_runs_the_final_exporter(tmp_path, monkeypatch):
    """The evaluator evaluated the chief's last checkpoint before the chief named it final:
    once it learns that, the FinalExporter still exports that evaluation."""
    import json
    import os

    import numpy as np

    from flowmesh.estimator.training import TrainSpec, _Executor

    x = np.random.default_rng(2).standard_normal((32, 2)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)

    def input_fn():
        return {"x": tf.constant(x)}, tf.constant(y)

    columns = [tf.feature_column.numeric_column("x", shape=(2,))]
    trained = tf.estimator.LinearClassifier(columns, model_dir=str(tmp_path / "train"))
    trained.train(input_fn, max_steps=5)

    cluster = tf.train.ClusterSpec(cluster_dict({"chief": 1}))
    server = tf.train.Server(cluster, job_name="chief", task_index=0)
    publisher = PublishCheckpoints(trained, server.target)
    publisher.after_save(None, 5)

    def chief() -> None:  # names step 5 final only after the evaluator evaluated it
        deadline = time.monotonic() + 60
        while publisher.state.read()[2] < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        publisher.finish(5)

    chief_thread = threading.Thread(target=chief, daemon=True)
    chief_thread.start()
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster.as_dict(),
                                                "task": {"type": "evaluator", "index": 0}}))
    evaluator = tf.estimator.LinearClassifier(columns, model_dir=str(tmp_path / "eval"))
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn({"x": tf.zeros([1, 2])})
    spec = tf.estimator.EvalSpec(input_fn, steps=1,
                                 exporters=[tf.estimator.FinalExporter("final", receiver)])
    result, exports = _Executor(evaluator, TrainSpec(input_fn), spec).run_remote_evaluator()
    chief_thread.join(30)
    assert result["global_step"] == 5
    assert exports[0] is None and exports[-1] is not None   # not final at first, then final
    assert len(os.listdir(tmp_path / "eval" / "export" / "final")) == 1
    assert _ChiefState(server.target).read()[1:] == (5, 5, 5)
