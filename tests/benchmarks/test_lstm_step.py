"""benchmarks.lstm_step still runs, and its contenders start from the same model."""

from __future__ import annotations

import json

import numpy as np

from benchmarks import harness, lstm_step

TINY = ["--repeats", "2", "--steps", "2", "--warmup", "1", "--threads", "1"]


def test_lstm_step_runs_on_a_tiny_model(capsys) -> None:
    settings = harness.parse_settings("", lstm_step.PEERS, TINY + ["--peers", "flowmesh_loop,torch"])
    records = lstm_step.run(settings, batch=4, hidden=8)
    assert [r["peer"] for r in records] == ["flowmesh_loop", "torch"]
    assert all(r["flowmesh"] > 0 and r["ratio"] > 0 for r in records)
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert lines == records


def test_contenders_compute_the_same_first_loss() -> None:
    import flowmesh as tf

    params, data = lstm_step.make_data(4, hidden=8, batches=1)
    fused = lstm_step.graph_contender("flowmesh", tf, params, data, hidden=8).setup(harness.Settings())
    loop = lstm_step.graph_contender("loop", tf, params, data, hidden=8, fused=False).setup(
        harness.Settings())
    eager = lstm_step.torch_contender(params, data, hidden=8).setup(harness.Settings())
    first = [fused()[1], loop()[1], eager()]
    np.testing.assert_allclose(first, [first[0]] * 3, rtol=1e-4)
    second = [fused()[1], loop()[1], eager()]
    np.testing.assert_allclose(second, [second[0]] * 3, rtol=1e-4)
    assert second[0] != first[0]
