"""``flowmesh sweep`` with real trial processes: grid order, best, CSV/PNG, resume,
failures and early stopping."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

from flowmesh.cli.main import main
from flowmesh.sweep import space
from flowmesh.sweep.samplers import GridSampler, RandomSampler
from flowmesh.sweep.stopping import Stopper

SCRIPT = str(Path(__file__).with_name("trial_script.py"))
pytestmark = pytest.mark.timeout(180)


def _sweep(tmp_path, *extra, script_args=()):
    return main(["sweep", "--metric", "score", "--out", str(tmp_path), *extra, SCRIPT, "--", *script_args])


def _rows(tmp_path):
    with open(tmp_path / "results.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_grid_sweep_finds_the_best_and_writes_csv_and_png(tmp_path, capsys):
    assert _sweep(tmp_path, "--grid", "lr=0.1,0.2", "--grid", "batch=8,16", "--parallel", "2") == 0
    out = capsys.readouterr().out
    rows = _rows(tmp_path)
    assert sorted((r["lr"], r["batch"]) for r in rows) == [("0.1", "16"), ("0.1", "8"), ("0.2", "16"), ("0.2", "8")]
    assert {r["status"] for r in rows} == {"done"}
    assert float(next(r for r in rows if r["lr"] == "0.2" and r["batch"] == "16")["score"]) == pytest.approx(3.2)
    assert "best {'lr': 0.2, 'batch': 16}: score 3.2" in out
    assert (tmp_path / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_rerun_resumes_without_repeating_trials(tmp_path, capsys):
    assert _sweep(tmp_path, "--grid", "lr=0.1,0.2,0.3", "--trials", "2", "--parallel", "1") == 0
    assert len(_rows(tmp_path)) == 2
    capsys.readouterr()
    assert _sweep(tmp_path, "--grid", "lr=0.1,0.2,0.3", "--parallel", "1") == 0
    assert "resuming: 2 trial(s)" in capsys.readouterr().out
    assert sorted(r["lr"] for r in _rows(tmp_path)) == ["0.1", "0.2", "0.3"]  # none ran twice


def test_failed_trials_are_recorded_with_their_reason(tmp_path, capsys):
    assert _sweep(tmp_path, "--grid", "fail=0,1", "--parallel", "2") == 0
    out = capsys.readouterr().out
    assert {r["fail"]: r["status"] for r in _rows(tmp_path)} == {"0": "done", "1": "failed"}
    assert "diverged: loss is nan" in out


def test_median_rule_stops_a_bad_trial(tmp_path, capsys):
    # four good trials first (one at a time), then a bad one: stopped after its first report
    code = _sweep(tmp_path, "--grid", "lr=1,1.1,1.2,1.3,0.01", "--parallel", "1",
                  "--early-stop", "median", script_args=("--epochs", "4"))
    assert code == 0
    statuses = {r["lr"]: r["status"] for r in _rows(tmp_path)}
    assert statuses == {"1": "done", "1.1": "done", "1.2": "done", "1.3": "done", "0.01": "stopped"}
    assert "stopped" in (tmp_path / "results.csv").read_text()


def test_bad_arguments_say_what_to_give(tmp_path, capsys):
    assert _sweep(tmp_path, "--uniform", "lr=0.1") == 2
    assert "NAME=LOW:HIGH" in capsys.readouterr().err
    assert _sweep(tmp_path, "--sampler", "grid", "--uniform", "lr=0.1:0.2") == 2
    assert "random or tpe" in capsys.readouterr().err


def test_random_sampler_is_reproducible_and_within_range():
    params = [space.parse("loguniform", "lr=1e-4:1e-1"), space.parse("int", "layers=1:4"),
              space.parse("grid", "act=relu,tanh")]
    first = [RandomSampler(params, seed=7).propose(i) for i in range(20)]
    assert first == [RandomSampler(params, seed=7).propose(i) for i in range(20)]
    assert all(1e-4 <= p["lr"] <= 1e-1 and 1 <= p["layers"] <= 4 and p["act"] in ("relu", "tanh") for p in first)
    assert len({p["lr"] for p in first}) == 20


def test_tpe_proposes_within_the_space():
    pytest.importorskip("optuna")
    from flowmesh.sweep.samplers import TPESampler

    sampler = TPESampler([space.parse("uniform", "x=0:1")], seed=0, mode="min")
    for i in range(12):
        params = sampler.propose(i)
        assert 0 <= params["x"] <= 1
        sampler.tell(params, (params["x"] - 0.3) ** 2)


def test_asha_keeps_the_top_third_at_each_rung():
    stopper = Stopper("asha", "max", grace=1, eta=3)
    assert [stopper.should_stop(t, v) for t, v in [(0, 0.9), (1, 0.5)]] == [False, False]
    assert stopper.should_stop(2, 0.1) is True  # third at rung 1: not in the top third


def test_grid_sampler_order():
    sampler = GridSampler([space.parse("grid", "a=1,2"), space.parse("grid", "b=x,y")])
    assert [sampler.propose(i) for i in range(5)] == [
        {"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 2, "b": "x"}, {"a": 2, "b": "y"}, None]


def test_report_prints_parseable_lines(capsys):
    from flowmesh.sweep import report
    from flowmesh.sweep.trial import metric_pattern

    report(accuracy=0.875)
    line = capsys.readouterr().out.strip()
    assert float(metric_pattern("accuracy").match(line).group(1)) == 0.875
    assert sys.executable
