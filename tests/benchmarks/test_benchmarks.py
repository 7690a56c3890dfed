"""The benchmarks still run (on tiny sizes); their speed is measured elsewhere, never here."""

from __future__ import annotations

import json

import pytest

from benchmarks import harness, mlp_step, tiny_ops

TINY = ["--repeats", "2", "--steps", "2", "--warmup", "1", "--threads", "1"]


def _records(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_harness_alternates_and_reports(capsys) -> None:
    calls: list[str] = []
    contenders = [harness.Contender(n, lambda s, n=n: lambda: calls.append(n)) for n in "ab"]
    settings = harness.Settings(threads=1, repeats=2, steps=3, warmup=1)
    results = harness.measure(contenders, settings)
    assert calls == ["a", "b"] + ["a"] * 3 + ["b"] * 3 + ["b"] * 3 + ["a"] * 3
    records = harness.report("unit", "two no-ops", results, settings)
    assert [r["peer"] for r in records] == ["b"] and records[0]["ratio"] > 0
    assert "threads=1" in capsys.readouterr().out


def test_parse_settings_rejects_unknown_peers() -> None:
    with pytest.raises(SystemExit):
        harness.parse_settings("x", ("torch",), ["--peers", "mxnet"])


def test_mlp_step_runs_on_a_tiny_model(capsys) -> None:
    settings = harness.parse_settings("", mlp_step.PEERS, TINY + ["--peers", "torch"])
    records = mlp_step.run(settings, layers=(12, 8, 8, 3), batch=4)
    assert [r["peer"] for r in records] == ["torch"]
    assert records[0]["flowmesh"] > 0 and records[0]["ratio"] > 0
    assert _records(capsys.readouterr().out) == records


@pytest.mark.slow
def test_mlp_step_runs_against_tensorflow(capsys) -> None:
    pytest.importorskip("tensorflow")
    settings = harness.parse_settings("", mlp_step.PEERS, TINY + ["--peers", "tensorflow"])
    records = mlp_step.run(settings, layers=(12, 8, 8, 3), batch=4)
    assert [r["peer"] for r in records] == ["tensorflow"] and records[0]["ratio"] > 0


def test_mlp_models_start_equal_and_train_alike() -> None:
    """flowmesh's and torch's contenders compute the same first loss from the same data."""
    import flowmesh as tf

    params, data = mlp_step.make_data((12, 8, 8, 3), 4, batches=1)
    ours = mlp_step.graph_contender("flowmesh", tf, params, data, (12, 8, 8, 3))
    theirs = mlp_step.torch_contender(params, data, (12, 8, 8, 3))
    ours_step, theirs_step = ours.setup(harness.Settings()), theirs.setup(harness.Settings())
    first = [ours_step()[1], theirs_step()]
    second = [ours_step()[1], theirs_step()]
    assert abs(first[0] - first[1]) < 1e-5 and abs(second[0] - second[1]) < 1e-5
    assert second[0] < first[0]


def test_tiny_ops_runs_on_a_tiny_graph(capsys) -> None:
    settings = harness.parse_settings("", tiny_ops.PEERS, TINY + ["--peers", "torch"])
    records = tiny_ops.run(settings, ops=12)
    assert [r["peer"] for r in records] == ["torch"] and records[0]["flowmesh"] > 0
    assert "tiny_ops" in capsys.readouterr().out


def test_tiny_ops_graph_computes_the_same_as_torch() -> None:
    import numpy as np

    import flowmesh as tf

    data = [np.linspace(-1, 1, tiny_ops.WIDTH, dtype=np.float32)]
    ours = tiny_ops.graph_contender("flowmesh", tf, data, 40).setup(harness.Settings())()
    theirs = tiny_ops.torch_contender(data, 40).setup(harness.Settings())()
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)


def test_estimator_overhead_benchmark_runs(capsys) -> None:
    from benchmarks import estimator_overhead

    records = estimator_overhead.main(["--repeats", "1", "--steps", "30", "--quiet"])
    assert [(r["bench"], r["peer"]) for r in records] == [("estimator_overhead", "mts_loop")] * 3
    assert all(r["flowmesh"] > 0 and r["peer_value"] > 0 for r in records)


def test_keras_fit_runs_on_a_tiny_model(capsys) -> None:
    from benchmarks import keras_fit

    settings = harness.parse_settings("", keras_fit.PEERS, TINY + ["--peers", ""])
    records = keras_fit.run(settings, layers=(12, 8, 3), batch=4, batches=2)
    assert records[0]["peer"] is None and records[0]["flowmesh"] > 0
    assert records[0]["unit"] == "samples/s"
    assert _records(capsys.readouterr().out) == records


def test_contention_mode_runs_hogs_for_the_measurement_only(capsys) -> None:
    """``--contend 1 --threads 0``: one CPU hog competes while every contender runs with
    its own default threads; the hog is gone when the benchmark returns."""
    from benchmarks import cnn_step
    from benchmarks.contention import CpuHogs

    with CpuHogs(1, max_seconds=60) as hogs:
        assert hogs.running() == 1
    assert hogs.running() == 0
    argv = ["--repeats", "2", "--steps", "2", "--warmup", "1", "--threads", "0",
            "--contend", "1", "--peers", "torch"]
    records = mlp_step.run(harness.parse_settings("", mlp_step.PEERS, argv),
                           layers=(12, 8, 8, 3), batch=4)
    records += cnn_step.run(harness.parse_settings("", cnn_step.PEERS, argv), batch=2)
    assert [(r["bench"], r["peer"], r["contend"], r["threads"]) for r in records] == [
        ("mlp_step", "torch", 1, 0), ("cnn_step", "torch", 1, 0)]
    assert all(r["flowmesh"] > 0 and r["ratio"] > 0 for r in records)
    assert "contend=1" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        harness.parse_settings("", mlp_step.PEERS, ["--contend", "-1"])
