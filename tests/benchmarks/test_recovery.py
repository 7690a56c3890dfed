"""benchmarks/recovery.py: the phase arithmetic on task records (the real runs are timed by
`python -m benchmarks.recovery`; tests/fault_tolerance runs the same jobs for correctness)."""

from __future__ import annotations

from benchmarks import recovery


class Records:
    """What ``LaunchedJob`` reads from the tasks' JSON-lines logs, given directly."""

    def __init__(self, records: list[dict]):
        self._records = records

    def records(self, task=None, kind=None):
        return [r for r in self._records if (task is None or r["task"] == task)
                and (kind is None or r["kind"] == kind)]

    def steps(self, task=None):
        return self.records(task, "step")


def _rec(task, kind, t, restart=0, **fields):
    return {"task": task, "kind": kind, "t": t, "restart": restart, **fields}


def test_worker_phases_add_up_to_the_rejoin_time():
    job = Records([
        _rec("worker:1", "step", 99.0), _rec("worker:1", "start", 100.3, restart=1, began=100.2),
        _rec("worker:1", "session", 100.6, restart=1), _rec("worker:1", "step", 100.7, restart=1),
        _rec("worker:1", "step", 100.8, restart=1)])
    phases = recovery.worker_phases(job, killed=100.0, restart=1)
    expected = {"spawn": 0.2, "imports": 0.1, "session": 0.3, "step": 0.1, "total": 0.7}
    assert all(abs(phases[k] - v) < 1e-9 for k, v in expected.items()), phases
    assert abs(sum(phases[k] for k in recovery.PHASES["worker"]) - phases["total"]) < 1e-9


def test_ps_phases_count_from_the_kill_to_the_first_step_after_the_restore():
    job = Records([
        _rec("worker:0", "step", 9.9), _rec("worker:1", "step", 9.95),
        _rec("worker:0", "log", 10.05, message="An error was raised while running a step. ..."),
        _rec("ps:0", "start", 10.5, restart=1, began=10.1), _rec("ps:0", "serving", 10.6, restart=1),
        _rec("worker:0", "session", 11.0), _rec("worker:0", "step", 11.1), _rec("worker:1", "step", 11.4)])
    phases = recovery.ps_phases(job, killed=10.0, restart=1)
    expected = {"detect": 0.05, "spawn": 0.1, "imports": 0.4, "server": 0.1, "session": 0.4, "step": 0.1,
                "total": 1.1, "all": 1.4}
    assert all(abs(phases[k] - v) < 1e-9 for k, v in expected.items()), phases
    summary = recovery.summarize("standby", "ps", [phases, dict(phases, total=2.0)])
    assert summary["total"] == 1.55 and summary["min_total"] == 1.1 and summary["totals"] == [1.1, 2.0]


def test_tensorflow_peers_failed_step_message_marks_the_detection():
    job = Records([
        _rec("worker:0", "log", 10.2, message="An error was raised. This may be due to a preemption "
             "in a connected worker or parameter server. The current session will be recreated."),
        _rec("ps:0", "start", 10.5, restart=1, began=10.1), _rec("ps:0", "serving", 10.6, restart=1),
        _rec("worker:0", "session", 11.0), _rec("worker:0", "step", 11.1), _rec("worker:1", "step", 11.2)])
    assert abs(recovery.ps_phases(job, killed=10.0, restart=1)["detect"] - 0.2) < 1e-9


def test_report_compares_the_standby_with_tensorflow_and_keeps_the_cold_restart(capsys):
    def summary(mode, total):
        phases = {k: 0.0 for k in recovery.PHASES["worker"]}
        return recovery.summarize(mode, "worker", [dict(phases, total=total)])

    lines = recovery.report([summary("standby", 0.25), summary("cold", 3.0), summary("tf", 6.0)],
                            {"worker": 5.0})
    assert lines == [{
        "bench": "recovery", "config": lines[0]["config"], "flowmesh": 0.25, "mode": "standby",
        "goal_s": 5.0, "meets_goal": True, "peer": "tensorflow ps runtime (cold restart)",
        "peer_value": 6.0, "ratio": 24.0, "cold_restart": 3.0}]
    assert "worker kill, tf" in capsys.readouterr().out
