"""The high-level APIs between hosts, driven by TF_CONFIG as TensorFlow's are:
``train_and_evaluate`` with a chief, a ps, two workers and an evaluator on five hosts, and
Keras ``fit`` under ``MultiWorkerMirroredStrategy`` on two."""

from __future__ import annotations

import json
import re
import sys

import pytest

from flowmesh.testing.hosts import HostBed

pytestmark = [pytest.mark.multiprocess, pytest.mark.timeout(300)]


def _tf_config(cluster: dict, role: str, index: int) -> dict[str, str]:
    return {"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": role, "index": index}})}


def test_train_and_evaluate_on_five_hosts_every_role_exits_zero(host_bed, tmp_path):
    bed: HostBed = host_bed(5)
    cluster = {"chief": [f"{bed.ip('h1')}:2222"], "ps": [f"{bed.ip('h2')}:2222"],
               "worker": [f"{bed.ip('h3')}:2222", f"{bed.ip('h4')}:2222"]}
    roles = [("h1", "chief", 0), ("h2", "ps", 0), ("h3", "worker", 0), ("h4", "worker", 1),
             ("h5", "evaluator", 0)]
    script = [sys.executable, "examples/estimator_train_and_evaluate.py", "--model_dir",
              str(tmp_path / "model"), "--max_steps", "200"]  # model_dir: storage every host shares
    tasks = {role: bed.spawn(host, script, env=_tf_config(cluster, role, index), label=f"{role}{index}")
             for host, role, index in roles}
    for role, task in tasks.items():
        assert task.wait(240) == 0, f"{role}:\n{task.output()[-3000:]}"
    evaluated = [json.loads(line[5:]) for line in tasks["evaluator"].lines if line.startswith("EVAL ")]
    assert evaluated and evaluated[-1]["global_step"] >= 200, tasks["evaluator"].output()[-2000:]
    # The accuracy is not held to a bar here: 200 asynchronous steps reached 0.84-0.92 in
    # most runs, but one loaded run's evaluator saw 0.16 at step 201 (open: see the stop
    # note of 2026-11-29); the single-host train_and_evaluate tests hold the learning bar.
    assert evaluated[-1]["loss"] == evaluated[-1]["loss"], evaluated  # a number, not NaN


def test_keras_multi_worker_fit_across_two_hosts_ends_with_equal_weights(host_bed):
    bed = host_bed(2)
    cluster = {"chief": [f"{bed.ip('h1')}:2222"], "worker": [f"{bed.ip('h2')}:2222"]}
    script = [sys.executable, "examples/keras_multiworker_digits.py", "--epochs", "3"]
    tasks = [bed.spawn("h1", script, env=_tf_config(cluster, "chief", 0), label="chief"),
             bed.spawn("h2", script, env=_tf_config(cluster, "worker", 0), label="worker")]
    for task in tasks:
        assert task.wait(240) == 0, task.output()[-3000:]
    losses = [re.search(r"final training loss ([0-9.]+)", task.output()) for task in tasks]
    assert all(losses), [t.output()[-500:] for t in tasks]
    assert losses[0].group(1) == losses[1].group(1)  # the same model on both hosts
    accuracy = float(re.search(r"test accuracy ([0-9.]+) on 2 workers", tasks[0].output()).group(1))
    assert accuracy >= 0.8
