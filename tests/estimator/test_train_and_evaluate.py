"""train_and_evaluate locally and on a local cluster under `flowmesh launch` (real
processes): every task exits 0, the evaluator logs metrics of the final checkpoint, and a
chief killed mid-training is restarted and finishes from the last checkpoint."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.cluster import REPO, child_env

JOB = Path(__file__).with_name("tae_job.py")


def test_local_train_and_evaluate(tmp_path):
    x = np.random.default_rng(0).standard_normal((100, 2)).astype(np.float32)
    y = (x.sum(1) > 0).astype(np.int64)

    def input_fn():
        return {"x": tf.constant(x)}, tf.constant(y)

    est = tf.estimator.LinearClassifier([tf.feature_column.numeric_column("x", shape=(2,))],
                                        model_dir=str(tmp_path), optimizer="Adam",
                                        config=tf.estimator.RunConfig(save_checkpoints_steps=20,
                                                                      log_step_count_steps=0))
    result, exports = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(input_fn, max_steps=50),
        tf.estimator.EvalSpec(input_fn, steps=None, throttle_secs=0))
    assert result["global_step"] == 50 and result["accuracy"] > 0.9 and exports == []
    events = [p.name for p in (tmp_path / "eval").iterdir()]
    assert events, "evaluation summaries were written"


def _launch(tmp_path, launch_args, script_args, timeout=200, env=None):
    cmd = [sys.executable, "-m", "flowmesh.cli.main", "launch", "--chief", "--ps", "1", "--workers", "2",
           "--evaluator", "--timeout", str(timeout - 20), *launch_args, str(JOB), "--model_dir",
           str(tmp_path), *script_args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env=dict(child_env(), **(env or {})))
    return proc.returncode, proc.stdout + proc.stderr


def _eval_line(out):
    lines = [line for line in out.splitlines() if line.startswith("[evaluator:0] EVAL ")]
    assert lines, out
    return json.loads(lines[-1].split("EVAL ", 1)[1])


@pytest.mark.multiprocess
@pytest.mark.slow
@pytest.mark.timeout(220)
def test_distributed_every_task_exits_zero(tmp_path):
    code, out = _launch(tmp_path, [], ["--max_steps", "40"])
    assert code == 0, out
    for task in ("chief:0", "worker:0", "worker:1", "ps:0", "evaluator:0"):
        assert f"[launch] {task} exited with status 0" in out, out
    result = _eval_line(out)
    assert result["global_step"] >= 40 and result["accuracy"] > 0.8, result
    assert "Restoring parameters from" in out    # the evaluator reads the chief's checkpoints


@pytest.mark.multiprocess
@pytest.mark.slow
@pytest.mark.timeout(220)
def test_killed_chief_finishes_from_the_last_checkpoint(tmp_path):
    code, out = _launch(tmp_path, ["--max-restarts", "chief=1"],
                        ["--max_steps", "60", "--kill_chief_at", "25"])
    assert code == 0, out
    assert "[chief:0] KILLING chief at step" in out
    assert re.search(r"\[launch\] chief:0 .*restart", out), out
    restored = re.findall(r"\[chief:0\] Restoring parameters from .*model\.ckpt-(\d+)", out)
    assert restored and int(restored[-1]) >= 20, out          # resumed from a checkpoint, not step 0
    assert (tmp_path / "model.ckpt-60.index").exists() or _eval_line(out)["global_step"] >= 60
    assert _eval_line(out)["global_step"] >= 60
    for task in ("worker:0", "worker:1", "ps:0", "evaluator:0"):
        assert f"[launch] {task} exited with status 0" in out, out


def test_exporters_run_after_evaluations(tmp_path):
    x = np.random.default_rng(1).standard_normal((64, 2)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    columns = [tf.feature_column.numeric_column("x", shape=(2,))]
    est = tf.estimator.LinearClassifier(columns, model_dir=str(tmp_path), optimizer="Adam",
                                        config=tf.estimator.RunConfig(save_checkpoints_steps=10,
                                                                      log_step_count_steps=0))
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn({"x": tf.zeros([1, 2])})
    exporters = [tf.estimator.LatestExporter("latest", receiver, exports_to_keep=2),
                 tf.estimator.FinalExporter("final", receiver)]
    _, exports = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(lambda: ({"x": tf.constant(x)}, tf.constant(y)), max_steps=30),
        tf.estimator.EvalSpec(lambda: ({"x": tf.constant(x)}, tf.constant(y)), steps=None,
                              exporters=exporters, throttle_secs=0))
    latest = sorted(os.listdir(tmp_path / "export" / "latest"))
    assert len(latest) == 2 and all(d.isdigit() for d in latest)          # older ones collected
    assert len(os.listdir(tmp_path / "export" / "final")) == 1              # only the last evaluation
    assert sum(e is not None for e in exports) == 4                         # 3 latest + 1 final
    assert tf.saved_model.loader.maybe_saved_model_directory(exports[-1].decode())


@pytest.mark.multiprocess
@pytest.mark.slow
@pytest.mark.timeout(220)
def test_evaluator_reads_checkpoints_through_the_chief(tmp_path):
    train_dir, eval_dir = tmp_path / "train", tmp_path / "eval_only"
    code, out = _launch(train_dir, [], ["--max_steps", "40", "--eval_model_dir", str(eval_dir), "--export"],
                        env={"FLOWMESH_EVAL_CHECKPOINTS": "chief"})
    assert code == 0, out
    for task in ("chief:0", "worker:0", "worker:1", "ps:0", "evaluator:0"):
        assert f"[launch] {task} exited with status 0" in out, out
    assert _eval_line(out)["global_step"] >= 40
    assert sorted(p.name for p in eval_dir.iterdir()) == ["eval", "export"]   # never a checkpoint
    assert not (train_dir / "eval").exists() and not (train_dir / "export").exists()
    exports = {name: sorted((eval_dir / "export" / name).iterdir()) for name in ("latest", "best", "final")}
    assert 1 <= len(exports["latest"]) <= 2 and len(exports["best"]) == 1 and len(exports["final"]) == 1
    _check_export(exports["final"][0], train_dir)


def _check_export(export_dir, train_dir):
    """The SavedModel serves the chief's final checkpoint: its predictions equal the
    Estimator's on the chief's model_dir."""
    x = np.random.default_rng(4).standard_normal((6, 4)).astype(np.float32)
    est = tf.estimator.LinearClassifier([tf.feature_column.numeric_column("x", shape=(4,))],
                                        model_dir=str(train_dir))
    want = np.stack([p["probabilities"] for p in est.predict(lambda: {"x": tf.constant(x)})])
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(export_dir))
        signature = meta.signature_def["serving_default"]
        got = sess.run(signature.outputs["probabilities"].name, {signature.inputs["x"].name: x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_best_exporter_exports_improvements_and_remembers_earlier_ones(tmp_path):
    x = np.random.default_rng(2).standard_normal((64, 2)).astype(np.float32)
    y = (x[:, 0] - x[:, 1] > 0).astype(np.int64)
    est = tf.estimator.LinearClassifier([tf.feature_column.numeric_column("x", shape=(2,))],
                                        model_dir=str(tmp_path), optimizer="Adam",
                                        config=tf.estimator.RunConfig(save_checkpoints_steps=10,
                                                                      log_step_count_steps=0))
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn({"x": tf.zeros([1, 2])})

    def input_fn():
        return {"x": tf.constant(x)}, tf.constant(y)

    best = tf.estimator.BestExporter("best", receiver, exports_to_keep=None)
    result, exports = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(input_fn, max_steps=30),
        tf.estimator.EvalSpec(input_fn, steps=None, exporters=[best], throttle_secs=0))
    assert exports[0] is not None                                   # the first evaluation is the best yet
    assert len(os.listdir(tmp_path / "export" / "best")) == sum(e is not None for e in exports)
    # a new exporter (a restarted evaluator) reads the best loss from the eval event files
    again = tf.estimator.BestExporter("best", receiver)
    base = str(tmp_path / "export" / "best")
    worse = dict(result, loss=float(result["loss"]) + 1.0, global_step=99)
    assert again.export(est, base, est.latest_checkpoint(), worse, False) is None
    better = dict(result, loss=float(result["loss"]) / 2, global_step=100)
    assert again.export(est, base, est.latest_checkpoint(), better, False) is not None
    by_accuracy = tf.estimator.BestExporter("acc", receiver, compare_fn=lambda b, c: c["accuracy"] > b["accuracy"])
    assert by_accuracy.export(est, str(tmp_path / "export" / "acc"), est.latest_checkpoint(),
                              dict(result, accuracy=0.0, global_step=101), False) is None
