"""Estimator training under RunConfig(train_distribute=MultiWorkerMirroredStrategy()) in
real processes: `flowmesh launch --chief --ps 0 --workers 2 --evaluator` runs
tests/estimator/mwms_job.py in every task. Every task exits 0, the three workers end with
the same weights, equal to the chief's checkpoint and to one process trained on the global
batch (synchronous steps), the evaluator evaluates the final checkpoint, and a second job
resumes from the checkpoint on every worker."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.cluster import REPO, child_env

JOB = Path(__file__).with_name("mwms_job.py")
TRAINERS = ("chief:0", "worker:0", "worker:1")


def _job_module():
    spec = importlib.util.spec_from_file_location("mwms_job", JOB)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _launch(model_dir, max_steps, timeout=150):
    cmd = [sys.executable, "-m", "flowmesh.cli.main", "launch", "--chief", "--ps", "0", "--workers", "2",
           "--evaluator", "--timeout", str(timeout - 20), str(JOB), "--model_dir", str(model_dir),
           "--max_steps", str(max_steps)]
    env = child_env({"FLOWMESH_COLLECTIVE_TIMEOUT_S": "60"})
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    for task in TRAINERS + ("evaluator:0",):
        assert f"[launch] {task} exited with status 0" in out, out
    weights = {}
    for line in out.splitlines():
        for task in TRAINERS:
            if line.startswith(f"[{task}] WEIGHTS "):
                weights[task] = json.loads(line.split("WEIGHTS ", 1)[1])
    assert sorted(weights) == sorted(TRAINERS), out
    evals = [json.loads(line.split("EVAL ", 1)[1]) for line in out.splitlines()
             if line.startswith("[evaluator:0] EVAL ")]
    assert evals and evals[-1]["global_step"] == max_steps, out
    return weights, out


def _reference(tmp_path, job, max_steps):
    """One process, no strategy, fed the three workers' batches as one global batch."""
    est = tf.estimator.Estimator(job.model_fn, model_dir=str(tmp_path / "reference"),
                                 config=tf.estimator.RunConfig(log_step_count_steps=0, save_summary_steps=0))
    est.train(job.make_input_fn(3 * 8), max_steps=max_steps)
    return {name: est.get_variable_value(name) for name in ("hidden/kernel", "hidden/bias", "out/kernel",
                                                             "out/bias")}


def _check_same_model(weights, model_dir, reference):
    chief = weights["chief:0"]
    for task in TRAINERS[1:]:
        assert weights[task] == chief, f"{task} differs from the chief"     # bit-identical replicas
    est = tf.estimator.Estimator(_job_module().model_fn, model_dir=str(model_dir))
    for name, want in reference.items():
        np.testing.assert_allclose(est.get_variable_value(name).ravel(), chief[name], rtol=1e-6,
                                   atol=1e-7, err_msg=name)                    # the chief's checkpoint
        np.testing.assert_allclose(chief[name], want.ravel(), rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.multiprocess
@pytest.mark.slow
@pytest.mark.timeout(330)
def test_multi_worker_mirrored_train_and_evaluate(tmp_path):
    job = _job_module()
    model_dir = tmp_path / "model"
    weights, out = _launch(model_dir, 8)
    assert "[chief:0] Saving checkpoints for 8" in out
    assert not any(line.startswith("[worker:") and "Saving checkpoints" in line for line in out.splitlines())
    _check_same_model(weights, model_dir, _reference(tmp_path, job, 8))
    # a new job resumes: the chief restores step 8 and every worker takes its values
    weights, out = _launch(model_dir, 12)
    assert "[chief:0] Restoring parameters from" in out and "model.ckpt-8" in out, out
    _check_same_model(weights, model_dir, _reference(tmp_path, job, 12))


@pytest.mark.multiprocess
@pytest.mark.slow
@pytest.mark.timeout(150)
def test_multi_worker_mirrored_under_flowmesh_run(tmp_path):
    """No TF_CONFIG: the ranks of `flowmesh run -np 2` are the workers; rank 0 checkpoints and
    evaluates, rank 1 only trains."""
    cmd = [sys.executable, "-m", "flowmesh.cli.main", "run", "-np", "2", "--timeout", "120", str(JOB),
           "--model_dir", str(tmp_path), "--max_steps", "8"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=140, cwd=REPO,
                          env=child_env({"FLOWMESH_COLLECTIVE_TIMEOUT_S": "60"}))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    weights = [json.loads(line.split("WEIGHTS ", 1)[1]) for line in out.splitlines() if " WEIGHTS " in line]
    assert len(weights) == 2 and weights[0] == weights[1], out
    evals = [line for line in out.splitlines() if " EVAL " in line]
    assert len(evals) == 1 and evals[0].startswith("[0]"), out
    assert json.loads(evals[0].split("EVAL ", 1)[1])["global_step"] == 8
    assert not any(line.startswith("[1]") and "Saving checkpoints" in line for line in out.splitlines())


def test_multi_worker_strategy_refuses_ps_tasks(tmp_path, monkeypatch):
    cluster = {"chief": ["localhost:1"], "ps": ["localhost:2"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "chief", "index": 0}}))
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy(
        cluster_resolver=tf.distribute.cluster_resolver.SimpleClusterResolver(
            tf.train.ClusterSpec({"chief": ["localhost:1"]}), task_type="chief", task_id=0))
    est = tf.estimator.Estimator(_job_module().model_fn, model_dir=str(tmp_path),
                                 config=tf.estimator.RunConfig(train_distribute=strategy))
    with pytest.raises(tf.errors.InvalidArgumentError, match="without parameter servers"):
        tf.estimator.train_and_evaluate(est, tf.estimator.TrainSpec(lambda: None, max_steps=1),
                                        tf.estimator.EvalSpec(lambda: None))
