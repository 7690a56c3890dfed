"""`flowmesh launch --max-restarts`: the policy, and the launcher applying it to real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from flowmesh.cli import main as cli_main
from flowmesh.launch.restart_policy import RestartPolicy, RestartTracker, describe_exit, shell_status
from flowmesh.launch.supervisor import standby_argv
from flowmesh.testing.cluster import REPO, child_env


def test_policy_parses_default_and_per_job_budgets():
    policy = RestartPolicy.parse(["2", "ps=5,evaluator=0"])
    assert (policy.limit("ps"), policy.limit("worker"), policy.limit("evaluator")) == (5, 2, 0)
    assert policy.enabled and policy.allows_restarts
    only_ps = RestartPolicy.parse(["ps=1"])
    assert only_ps.limit("worker") is None and only_ps.limit("ps") == 1
    off = RestartPolicy.parse(None)
    assert not off.enabled and not off.allows_restarts
    assert RestartPolicy.parse(["0"]).enabled and not RestartPolicy.parse(["0"]).allows_restarts
    for bad in (["x"], ["ps=x"], ["=3"], ["-1"]):
        with pytest.raises(ValueError, match="max-restarts"):
            RestartPolicy.parse(bad)


def test_tracker_restarts_up_to_the_budget_then_fails():
    tracker = RestartTracker(RestartPolicy.parse(["worker=2"]))
    assert tracker.decide("worker", "worker:1", 0).action == "done"
    first = tracker.decide("worker", "worker:1", -signal.SIGKILL)
    assert first.action == "restart" and "was killed by SIGKILL" in first.message and "restart 1 of 2" in first.message
    assert tracker.decide("worker", "worker:1", 3).action == "restart"
    final = tracker.decide("worker", "worker:1", 3)
    assert final.action == "fail"
    assert "exited with status 3 after being restarted 2 times" in final.message
    assert "stopping every task" in final.message
    assert tracker.decide("worker", "worker:2", 1).action == "restart"  # budgets are per task
    assert tracker.decide("ps", "ps:0", -9).action == "ignore"  # not covered: legacy behaviour


def test_exit_descriptions_and_shell_status():
    assert describe_exit(0) == "exited with status 0"
    assert describe_exit(-signal.SIGTERM) == "was killed by SIGTERM"
    assert shell_status(-signal.SIGKILL) == 137 and shell_status(4) == 4 and shell_status(0) == 1


def test_standby_takes_plain_scripts_and_modules_only(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("")
    assert standby_argv([sys.executable, str(script), "--lr", "1"]) == [str(script), "--lr", "1"]
    assert standby_argv([sys.executable, "-m", "pkg.mod", "x"]) == ["-m", "pkg.mod", "x"]
    assert standby_argv([sys.executable, "-c", "print(1)"]) is None
    assert standby_argv(["/other/python", str(script)]) is None


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_standby_runs_an_assignment_like_python_would(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(textwrap.dedent("""
        import json, os, sys
        print(json.dumps({"argv": sys.argv, "name": __name__, "path0": sys.path[0],
                          "tf_config": os.environ.get("TF_CONFIG"), "stdin": sys.stdin.read()}))
        sys.exit(7)
    """))
    proc = subprocess.Popen([sys.executable, "-m", "flowmesh.cli.standby"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO,
                            env=child_env())
    env = dict(child_env(), TF_CONFIG="{}")
    out, _ = proc.communicate(json.dumps({"argv": [str(script), "--x", "1"], "env": env}) + "\n", timeout=50)
    report = json.loads(out.strip().splitlines()[-1])
    assert proc.returncode == 7
    assert report == {"argv": [str(script), "--x", "1"], "name": "__main__", "path0": str(tmp_path),
                      "tf_config": "{}", "stdin": ""}


# A task that fails the first N times it runs (counted by FLOWMESH_RESTART_COUNT), then
# reports its identity; ps tasks block like `server.join()`. Workers start once the ps has
# reported (PS_REPORTED names a file it creates), so a job that fails fast still has its
# ps's report on a loaded machine.
FLAKY = textwrap.dedent("""
    import json, os, sys, time
    config = json.loads(os.environ["TF_CONFIG"])
    role = config["task"]["type"]
    restarts = int(os.environ["FLOWMESH_RESTART_COUNT"])
    print(json.dumps({"role": role, "restarts": restarts, "pid": os.getpid(), "task": config["task"],
                      "cluster": config["cluster"], "argv": sys.argv[1:]}), flush=True)
    if role == "ps":
        open(os.environ["PS_REPORTED"], "w").close()
        time.sleep(600)
    deadline = time.monotonic() + 60
    while not os.path.exists(os.environ["PS_REPORTED"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    if restarts < int(os.environ.get("FAIL_" + role.upper(), "0")):
        os.kill(os.getpid(), 9)
    sys.exit(0)
""")


@pytest.fixture
def launch(tmp_path, capsys, monkeypatch):
    def run(*launch_args, env=None):
        script = tmp_path / "flaky.py"
        script.write_text(FLAKY)
        monkeypatch.setenv("PS_REPORTED", str(tmp_path / "ps_reported"))
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        code = cli_main.main(["launch", "--flags", "never", "--grace", "1", "--timeout", "100",
                              *launch_args, str(script), "--lr", "0.1"])
        out = capsys.readouterr().out
        reports = [json.loads(line.partition("] ")[2]) for line in out.splitlines()
                   if line.partition("] ")[2].startswith("{")]
        return code, out, reports

    return run


@pytest.mark.multiprocess
@pytest.mark.timeout(120)
def test_failed_worker_restarts_with_the_same_identity(launch):
    code, out, reports = launch("--ps", "1", "--workers", "2", "--max-restarts", "2", "--no-standby",
                                env={"FAIL_WORKER": "2"})
    assert code == 0, out
    runs = [r for r in reports if r["task"] == {"type": "worker", "index": 1}]
    assert [r["restarts"] for r in runs] == [0, 1, 2]
    assert len({r["pid"] for r in runs}) == 3
    assert all(r["cluster"] == runs[0]["cluster"] and r["argv"] == ["--lr", "0.1"] for r in runs)
    assert "[launch] worker:1 was killed by SIGKILL; restarting it with the same identity (restart 2 of 2)" in out
    assert "(pid " in out and "new process" in out


@pytest.mark.multiprocess
@pytest.mark.timeout(120)
def test_job_fails_cleanly_after_the_budget(launch):
    started = time.monotonic()
    code, out, reports = launch("--ps", "1", "--workers", "2", "--max-restarts", "1", "--no-standby",
                                env={"FAIL_WORKER": "5"})
    assert code == 128 + signal.SIGKILL, out
    assert "after being restarted 1 time (--max-restarts allows 1 for job 'worker'); stopping every task" in out
    assert "new process" in out and "warm standby" not in out
    ps_pid = next(r["pid"] for r in reports if r["role"] == "ps")
    with pytest.raises(ProcessLookupError):  # the ps (sleeping 600 s) was stopped with the job
        os.kill(ps_pid, 0)
    assert time.monotonic() - started < 60
