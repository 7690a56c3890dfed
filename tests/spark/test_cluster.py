"""flowmesh.spark on a real pyspark local[3] context: clusters as barrier stages."""

from __future__ import annotations

import collections
import time

import pytest

from flowmesh.spark import TaskError, TFCluster, TFParallel, run_experiments
from tests.spark import nodes

pytestmark = [pytest.mark.spark, pytest.mark.multiprocess, pytest.mark.timeout(240)]


def test_tensorflow_mode_trains_with_a_ps_that_exits(sc):
    cluster = TFCluster.run(sc, nodes.train_digits, {"steps": 300}, num_executors=3, num_ps=1)
    cluster.shutdown(timeout=180)  # returns: the ps stopped once the workers were done
    assert set(cluster.results) == {("worker", 0), ("worker", 1)}
    # Asynchronous updates land in another order every run (0.95 typical here).
    assert cluster.results[("worker", 0)] >= 0.85


def test_spark_mode_trains_from_fed_rows(sc):
    from flowmesh.datasets import load_digits

    (images, labels), _ = load_digits()
    rows = [(image, int(label)) for image, label in zip(images, labels)]
    cluster = TFCluster.run(sc, nodes.train_digits, {"steps": 10_000}, num_executors=3, num_ps=1,
                            input_mode=TFCluster.InputMode.SPARK)
    cluster.train(sc.parallelize(rows, 6), num_epochs=3, timeout=180)
    cluster.shutdown()
    assert cluster.results[("worker", 0)] >= 0.85  # asynchronous, as above


def test_spark_mode_feeds_every_row_once_per_epoch(sc):
    rows = list(range(1000))
    cluster = TFCluster.run(sc, nodes.count_rows, {"batch": 64}, num_executors=2, num_ps=0,
                            input_mode=TFCluster.InputMode.SPARK)
    cluster.train(sc.parallelize(rows, 5), num_epochs=2, timeout=120)
    outcomes = list(cluster.results.values())
    assert len(outcomes) == 2 and all(o["num_workers"] == 2 for o in outcomes)
    assert not any(o["mixed"] for o in outcomes)
    for epoch in (0, 1):
        fed = collections.Counter(r for o in outcomes for r in o["seen"].get(epoch, []))
        assert sorted(fed) == rows and set(fed.values()) == {1}, f"epoch {epoch}"
    assert all(set(o["seen"]) == {0, 1} for o in outcomes)  # both workers got rows each epoch


def test_inference_answers_each_row_in_order(sc):
    data = sc.parallelize(range(100), 4)
    cluster = TFCluster.run(sc, nodes.double_rows, {}, num_executors=2, num_ps=0,
                            input_mode=TFCluster.InputMode.SPARK)
    assert cluster.inference(data).collect() == [2 * x for x in range(100)]


def test_a_failing_node_fails_the_job_with_its_traceback(sc):
    start = time.monotonic()
    cluster = TFCluster.run(sc, nodes.fail_on_worker_one, {}, num_executors=3, num_ps=0)
    with pytest.raises(TaskError, match="(?s)worker:1.*ValueError: worker one cannot go on"):
        cluster.shutdown(timeout=120)
    assert time.monotonic() - start < 120


def test_a_killed_task_fails_the_job_without_hanging(sc):
    cluster = TFCluster.run(sc, nodes.kill_own_task, {}, num_executors=3, num_ps=0)
    with pytest.raises(TaskError):
        cluster.shutdown(timeout=120)
    # the context is still usable afterwards
    assert sc.parallelize(range(3), 3).map(lambda x: x + 1).collect() == [1, 2, 3]


def test_train_needs_spark_input_mode(sc):
    cluster = TFCluster.run(sc, nodes.whoami, {}, num_executors=1, num_ps=0)
    with pytest.raises(ValueError, match="InputMode.SPARK"):
        cluster.train(sc.parallelize([1]))
    cluster.shutdown(timeout=60)


def test_parallel_runs_independent_nodes(sc):
    assert TFParallel.run(sc, nodes.whoami, "args", num_executors=3) == [(0, "args"), (1, "args"), (2, "args")]


def test_run_experiments_covers_the_grid_in_order(sc):
    results = run_experiments(sc, nodes.trial, {"a": [1, 2], "b": [10, 20, 30]})
    assert results == [10, 20, 30, 20, 40, 60]


def test_a_failing_trial_names_its_parameters(sc):
    with pytest.raises(TaskError, match="(?s)'a': 2.*diverged"):
        run_experiments(sc, nodes.failing_trial, {"a": [1, 2, 3]})


def test_each_cluster_has_its_own_secret(sc):
    seen = []
    for _ in range(2):
        cluster = TFCluster.run(sc, nodes.secret_of_node, {}, num_executors=2, num_ps=0)
        cluster.shutdown(timeout=120)
        secrets = set(cluster.results.values())
        assert len(secrets) == 1 and len(next(iter(secrets))) == 64  # shared by its nodes
        seen.append(secrets.pop())
    assert seen[0] != seen[1]
