"""The lone-process harness and the model-scale set still run; their speed is measured
elsewhere, never here."""

from __future__ import annotations

import json

import pytest

from benchmarks import lone, model_scale, models
from benchmarks.harness import Settings


def test_rounds_alternate_and_each_worker_is_a_fresh_process(monkeypatch) -> None:
    calls: list[tuple[str, str]] = []

    def fake_worker(module, model, system, settings, timeout=900.0):
        calls.append((model, system))
        return {"rate": 2.0 if system == "flowmesh" else 1.0, "ops": 3, "flops": 0.0}

    monkeypatch.setattr(lone, "run_worker", fake_worker)
    results, records = lone.measure_lone("m", "mlp", ["flowmesh", "tensorflow"], Settings(repeats=3))
    assert [s for _, s in calls] == ["flowmesh", "tensorflow", "tensorflow", "flowmesh", "flowmesh",
                                     "tensorflow"]
    assert results[0].rates == [2.0] * 3 and len(records[1]) == 3


def test_worker_builds_and_times_the_models_in_flowmesh(capsys) -> None:
    for name in ("resnet20", "graph_build", "transformer", "lstm_lm"):
        build = models.MODELS[name][0]
        record = lone.worker(build, "flowmesh", steps=1, warmup=0, threads=1)
        assert record["rate"] > 0 and record["ops"] > 100 and record["first_run_s"] > 0
        printed = json.loads(capsys.readouterr().out.splitlines()[-1][len(lone.MARK):])
        assert printed["ops"] == record["ops"] and (name != "graph_build" or printed["builds_per_s"] > 0)


@pytest.mark.slow
def test_model_scale_runs_a_worker_process(capsys) -> None:
    records = model_scale.main(["--models", "mlp", "--repeats", "1", "--steps", "1", "--warmup", "0",
                                "--peers", "", "--threads", "1"])
    assert records[0]["bench"] == "model_scale/mlp" and records[0]["flowmesh"] > 0
    assert "lone processes" in capsys.readouterr().out
